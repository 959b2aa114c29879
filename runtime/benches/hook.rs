//! The CUPTI hook's cost, on a GPU. Each round runs this binary twice as a child process, once
//! without the hook and once with it installed (rotating which goes first); every child measures
//! the same four loops over raw cudarc (five times, keeping each loop's median). The overhead is the median over rounds of each round's
//! with/without difference or ratio (paired: drift between rounds cancels). Children, not
//! install/uninstall in one process: after `cuptiUnsubscribe` CUPTI stays attached (measured by
//! the C probe: idle `cuStreamSynchronize` 1321 ns before, 1542 ns after unsubscribing).
//!
//! `cargo bench -p nosync --bench hook [-- ROUNDS]`; without a GPU it says so and exits 0.

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

const CHILD: &str = "NOSYNC_HOOK_BENCH_CHILD";
const NAMES: [&str; 4] = [
    "idle cuStreamSynchronize outside any scope (hooked), ns/call",
    "cuStreamQuery (not hooked), ns/call",
    "launch-bound loop: 10 000 launches until done, ns/launch",
    "inference-style step: 8 launches in #[no_sync] + a 4 B read outside, ns/step",
];

fn per_call(n: usize, mut f: impl FnMut()) -> f64 {
    let t0 = Instant::now();
    for _ in 0..n {
        f();
    }
    t0.elapsed().as_nanos() as f64 / n as f64
}

struct Loops {
    stream: Arc<CudaStream>,
    kernel: CudaFunction,
    buf: cudarc::driver::CudaSlice<f32>,
}

impl Loops {
    fn new() -> Result<Loops, Box<dyn std::error::Error>> {
        let ctx = CudaContext::new(0)?;
        let src =
            "extern \"C\" __global__ void touch(float* x) { if (threadIdx.x == 0) x[0] += 1.0f; }";
        let module = ctx.load_module(cudarc::nvrtc::compile_ptx(src)?)?;
        let stream = ctx.default_stream();
        Ok(Loops {
            kernel: module.load_function("touch")?,
            buf: stream.alloc_zeros(1)?,
            stream,
        })
    }

    fn launch(&mut self) {
        let mut b = self.stream.launch_builder(&self.kernel);
        b.arg(&mut self.buf);
        // SAFETY: one float, written by thread 0.
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }.expect("launch");
    }

    #[nosync::no_sync]
    fn step(&mut self) {
        for _ in 0..8 {
            self.launch();
        }
    }

    fn run(&mut self) -> [f64; 4] {
        let s = self.stream.clone();
        s.synchronize().expect("sync");
        let sync = per_call(100_000, || s.synchronize().expect("sync"));
        let query = per_call(100_000, || {
            // SAFETY: a live stream.
            let _ = unsafe { cudarc::driver::sys::cuStreamQuery(s.cu_stream()) };
        });
        let launches = per_call(1, || {
            for _ in 0..10_000 {
                self.launch();
            }
            s.synchronize().expect("sync");
        }) / 10_000.0;
        let step = per_call(10_000, || {
            self.step();
            s.clone_dtoh(&self.buf).expect("read");
        });
        [sync, query, launches, step]
    }
}

fn child(with_hook: bool) -> ExitCode {
    let _hook = with_hook.then(|| nosync::hook::install().expect("install the hook"));
    nosync::set_mode(nosync::Mode::Panic);
    let mut loops = Loops::new().expect("GPU setup");
    loops.run(); // warm-up
    let runs: Vec<[f64; 4]> = (0..5).map(|_| loops.run()).collect();
    let r: Vec<f64> = (0..4)
        .map(|i| median(runs.iter().map(|r| r[i]).collect()))
        .collect();
    println!("RESULT {} {} {} {}", r[0], r[1], r[2], r[3]);
    ExitCode::SUCCESS
}

fn spawn(with_hook: bool) -> [f64; 4] {
    let exe = std::env::current_exe().expect("exe");
    let out = Command::new(exe)
        .env(CHILD, if with_hook { "on" } else { "off" })
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find_map(|l| l.strip_prefix("RESULT "));
    let line = line.unwrap_or_else(|| {
        panic!(
            "child failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let v: Vec<f64> = line
        .split(' ')
        .map(|x| x.parse().expect("number"))
        .collect();
    [v[0], v[1], v[2], v[3]]
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> ExitCode {
    if let Ok(v) = std::env::var(CHILD) {
        return child(v == "on");
    }
    if let Err(why) = nosync::gpu::probe() {
        println!("no GPU ({why}): nothing to measure");
        return ExitCode::SUCCESS;
    }
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(11);
    let mut pairs = Vec::new();
    for round in 0..rounds {
        let (off, on) = if round % 2 == 0 {
            let off = spawn(false);
            (off, spawn(true))
        } else {
            let on = spawn(true);
            (spawn(false), on)
        };
        pairs.push((off, on));
    }
    println!("{rounds} rounds, each: one process without the hook, one with it (rotating order)");
    println!("| loop | without | with | median paired difference | median paired ratio |");
    println!("| --- | --- | --- | --- | --- |");
    for (i, name) in NAMES.iter().enumerate() {
        let off = median(pairs.iter().map(|p| p.0[i]).collect());
        let on = median(pairs.iter().map(|p| p.1[i]).collect());
        let diff = median(pairs.iter().map(|p| p.1[i] - p.0[i]).collect());
        let ratio = median(pairs.iter().map(|p| p.1[i] / p.0[i] - 1.0).collect());
        println!(
            "| {name} | {off:.1} | {on:.1} | {diff:+.1} ns | {:+.2} % |",
            ratio * 100.0
        );
    }
    ExitCode::SUCCESS
}
