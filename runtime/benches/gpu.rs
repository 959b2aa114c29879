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
const ROUNDS: usize = 31;
const SCALE_SRC: &str = r#"
extern "C" __global__ void scale(float* x, float a, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"#;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// (a): each round times 10 000 launches then a stream synchronize; the variants alternate
/// round by round so that clock drift hits all of them alike.
fn launch_overhead(gpu: &Gpu) -> Result<(), Error> {
    let s = gpu.default_stream();
    let k = gpu.kernels()?;
    let module = Module::compile(gpu, "bench", SCALE_SRC)?;
    let kernel = module.kernel("scale")?;
    let n: u32 = 256;
    let mut x = s.alloc_zeros::<f32>(n as usize)?;
    let cfg = LaunchConfig::for_num_elems(n);
    let (a, raw_stream) = (1.0f32, s.cuda_stream().clone());
    let names = [
        "raw cudarc launch_builder",
        "nosync Stream::launch (in #[no_sync] scope)",
        "nosync Kernels::scale (in #[no_sync] scope)",
    ];
    let mut times: [Vec<Duration>; 3] = Default::default();
    for round in 0..ROUNDS + 1 {
        for (variant, out) in times.iter_mut().enumerate() {
            s.synchronize()?;
            let t0 = Instant::now();
            match variant {
                0 => {
                    for _ in 0..LAUNCHES {
                        let mut b = raw_stream.launch_builder(kernel.cuda_function());
                        b.arg(x.cuda_slice()).arg(&a).arg(&n);
                        // SAFETY: matches scale(float*, float, unsigned).
                        unsafe { b.launch(cfg) }?;
                    }
                }
                1 => nosync::no_sync(|| -> Result<(), Error> {
                    for _ in 0..LAUNCHES {
                        // SAFETY: matches scale(float*, float, unsigned).
                        unsafe { s.launch(&kernel).arg(&mut x).arg(&a).arg(&n).launch(cfg)? };
                    }
                    Ok(())
                })?,
                _ => nosync::no_sync(|| -> Result<(), Error> {
                    for _ in 0..LAUNCHES {
                        k.scale(&s, &mut x, a)?;
                    }
                    Ok(())
                })?,
            }
            s.synchronize()?;
            if round > 0 {
                out.push(t0.elapsed()); // round 0 warms up
            }
        }
    }
    let base = median(times[0].clone());
    println!("(a) {LAUNCHES} launches of a 256-element kernel, median of {ROUNDS} rounds");
    println!("| variant | median ms | per launch µs | vs raw cudarc |");
    println!("| --- | --- | --- | --- |");
    for (name, t) in names.iter().zip(times) {
        let m = median(t);
        let ratio = (m.as_secs_f64() / base.as_secs_f64() - 1.0) * 100.0;
        let per = m.as_secs_f64() * 1e6 / LAUNCHES as f64;
        println!(
            "| {name} | {:.3} | {per:.3} | {ratio:+.2} % |",
            m.as_secs_f64() * 1e3
        );
    }
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
