//! GPU benchmarks (a bench binary that prints tables; run on a machine with a GPU):
//! (a) nosync's ops against raw cudarc in a launch-bound loop of 10 000 small launches;
//! (b) the train_loop demo's iterations per second, hidden sync against fixed.
//!
//! `cargo bench -p nosync --bench gpu` (skips, saying why, without a GPU).

#[path = "../examples/train_loop/model.rs"]
mod model;

use std::time::{Duration, Instant};

use cudarc::driver::{LaunchConfig, PushKernelArg};
use nosync::gpu::{Error, Gpu, Module};

const LAUNCHES: usize = 10_000;
/// Below the launch queue's depth (about 1000 measured), so the host never waits for room.
const SUBMITS: usize = 500;
const ROUNDS: usize = 61;
const SCALE_SRC: &str = r#"
extern "C" __global__ void scale(float* x, float a, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"#;
const NAMES: [&str; 3] = [
    "raw cudarc launch_builder",
    "nosync Stream::launch (in #[no_sync] scope)",
    "nosync Kernels::scale (in #[no_sync] scope)",
];

struct Bench {
    s: nosync::gpu::Stream,
    k: std::sync::Arc<nosync::gpu::Kernels>,
    kernel: nosync::gpu::Kernel,
    x: nosync::gpu::DeviceBuffer<f32>,
    _module: Module,
}

impl Bench {
    /// `count` launches of one variant; returns the host time to enqueue them and the time
    /// until the stream has run them.
    fn round(&mut self, variant: usize, count: usize) -> Result<(Duration, Duration), Error> {
        let n: u32 = 256;
        let (a, cfg) = (1.0f32, LaunchConfig::for_num_elems(n));
        let (s, k, kernel, x) = (&self.s, &self.k, &self.kernel, &mut self.x);
        s.synchronize()?;
        let t0 = Instant::now();
        match variant {
            0 => {
                let raw = s.cuda_stream();
                for _ in 0..count {
                    let mut b = raw.launch_builder(kernel.cuda_function());
                    b.arg(x.cuda_slice()).arg(&a).arg(&n);
                    // SAFETY: matches scale(float*, float, unsigned).
                    unsafe { b.launch(cfg) }?;
                }
            }
            1 => nosync::no_sync(|| -> Result<(), Error> {
                for _ in 0..count {
                    // SAFETY: matches scale(float*, float, unsigned).
                    unsafe { s.launch(kernel).arg(&mut *x).arg(&a).arg(&n).launch(cfg)? };
                }
                Ok(())
            })?,
            _ => nosync::no_sync(|| -> Result<(), Error> {
                for _ in 0..count {
                    k.scale(s, x, a)?;
                }
                Ok(())
            })?,
        }
        let submitted = t0.elapsed();
        s.synchronize()?;
        Ok((submitted, t0.elapsed()))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Prints one table: the median time per launch of each variant, and the median over rounds of
/// each variant's time relative to raw cudarc's in the same round (paired, so drift cancels).
fn report(title: &str, per_launch: &[Vec<f64>; 3]) {
    println!("{title}");
    println!("| variant | median µs per launch | vs raw cudarc (median of paired ratios) |");
    println!("| --- | --- | --- |");
    for (i, name) in NAMES.iter().enumerate() {
        let ratios = per_launch[i]
            .iter()
            .zip(&per_launch[0])
            .map(|(v, r)| v / r - 1.0)
            .collect();
        let us = median(per_launch[i].clone()) * 1e6;
        println!("| {name} | {us:.3} | {:+.2} % |", median(ratios) * 100.0);
    }
}

/// (a): rounds of each variant in a rotating order (so that no variant always runs first):
/// 10 000 launches until the stream has run them (launch-bound, past the queue's depth), and
/// 500 launches' host enqueue time (where nosync's own cost would show).
fn launch_overhead(gpu: &Gpu) -> Result<(), Error> {
    let s = gpu.default_stream();
    let module = Module::compile(gpu, "bench", SCALE_SRC)?;
    let mut b = Bench {
        k: gpu.kernels()?,
        kernel: module.kernel("scale")?,
        x: s.alloc_zeros::<f32>(256)?,
        s,
        _module: module,
    };
    let mut wall: [Vec<f64>; 3] = Default::default();
    let mut submit: [Vec<f64>; 3] = Default::default();
    for round in 0..=ROUNDS {
        for variant in (0..3).map(|i| (i + round) % 3) {
            let (_, w) = b.round(variant, LAUNCHES)?;
            let (h, _) = b.round(variant, SUBMITS)?;
            if round > 0 {
                // round 0 warms up
                wall[variant].push(w.as_secs_f64() / LAUNCHES as f64);
                submit[variant].push(h.as_secs_f64() / SUBMITS as f64);
            }
        }
    }
    report(
        &format!("(a) {LAUNCHES} launches of a 256-element kernel until done, {ROUNDS} rounds"),
        &wall,
    );
    report(
        &format!("(a) host time to enqueue {SUBMITS} launches, {ROUNDS} rounds"),
        &submit,
    );
    Ok(())
}

/// (b): the demo's loop, hidden sync (mode Allow so that it runs) against fixed.
fn demo_ratio(gpu: &Gpu, rows: usize, cols: usize) -> Result<(), Error> {
    let mut m = model::Model::new(gpu, rows, cols)?;
    let iters = 2000;
    let mut rates = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        for (i, v) in [model::Variant::Hidden, model::Variant::Fixed]
            .into_iter()
            .enumerate()
        {
            let (_, t) = nosync::with_mode(nosync::Mode::Allow, || {
                model::run(&mut m, v, iters, 50, |_, _| {})
            })?;
            rates[i].push(iters as f64 / t.as_secs_f64());
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (hidden, fixed) = (med(&mut rates[0]), med(&mut rates[1]));
    println!("(b) train_loop ({rows} x {cols} least squares), {iters} iterations, median of 5");
    println!("| step | iterations/s |");
    println!("| --- | --- |");
    println!("| hidden sync (to_vec every step) | {hidden:.0} |");
    println!("| fixed (loss on device, pinned read every 50) | {fixed:.0} |");
    println!("fixed / hidden = {:.2}x", fixed / hidden);
    Ok(())
}

fn main() -> Result<(), Error> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(()); // `cargo bench -- --list` and `cargo test --benches`
    }
    let gpu = match nosync::gpu::probe() {
        Ok(_) => Gpu::new(0)?,
        Err(why) => {
            eprintln!("skipped: gpu benchmarks: no GPU ({why})");
            return Ok(());
        }
    };
    println!("device: {}", gpu.name()?);
    launch_overhead(&gpu)?;
    demo_ratio(&gpu, 4096, 128)?; // the demo's size
    demo_ratio(&gpu, 16384, 1024) // a step of more GPU work: the ratio shrinks
}
