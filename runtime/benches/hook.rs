//! The CUPTI hook's cost, on a GPU, measured two ways over the same loops of raw cudarc
//! (each loop run five times, its median kept). Across processes: each round runs this binary
//! as two children, without and with the hook (rotating which goes first). Within a process: a
//! child measures without the hook, installs it, measures again (never the other way round:
//! after `cuptiUnsubscribe` CUPTI stays attached, measured by the C probe: idle
//! `cuStreamSynchronize` 1321 ns before, 1542 ns after unsubscribing). The overhead is the
//! median over rounds of each pair's difference or ratio (paired: drift between rounds cancels).
//!
//! `cargo bench -p nosync --bench hook [-- ROUNDS]`; without a GPU it says so and exits 0.
//! With `NOSYNC_REPORT=summary` (or `trace:PATH`), the measurements with the hook have the
//! report on; those without have neither.

use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

const CHILD: &str = "NOSYNC_HOOK_BENCH_CHILD";
const CHILD_REPORT: &str = "NOSYNC_HOOK_BENCH_REPORT";
use nosync::hook::REPORT_ENV;
const ROWS: usize = 6;
const NAMES: [&str; ROWS] = [
    "idle cuStreamSynchronize (hooked), no scope open in the process, ns/call",
    "idle cuStreamSynchronize (hooked) outside a scope, another thread in one, ns/call",
    "cuStreamQuery (not hooked), no scope open, ns/call",
    "launch-bound loop: 10 000 launches until done, no scope open, ns/launch",
    "inference-style step: 8 launches in #[no_sync] + a 4 B read outside, ns/step",
    "a forbid scope opened after an idle period (switches the callbacks on), ns",
];

/// Waits until the hook's idle watcher has switched the callbacks off (as in a program that
/// left its hot loop); without a hook, the same wait.
fn settle() {
    std::thread::sleep(nosync::hook::IDLE * 3);
}

/// Runs `f` while another thread is inside a forbid scope (the callbacks are on).
fn with_scope_elsewhere<R>(f: impl FnOnce() -> R) -> R {
    let (opened, open) = std::sync::mpsc::channel();
    let (close, closed) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let _hot = nosync::forbid();
        opened.send(()).expect("main waits");
        let _ = closed.recv();
    });
    open.recv().expect("the scope opened");
    let r = f();
    drop(close);
    holder.join().expect("holder");
    r
}

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

    fn run(&mut self) -> [f64; ROWS] {
        let s = self.stream.clone();
        s.synchronize().expect("sync");
        settle();
        let sync = per_call(100_000, || s.synchronize().expect("sync"));
        let sync_on = with_scope_elsewhere(|| per_call(100_000, || s.synchronize().expect("sync")));
        settle();
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
        settle();
        let switch = per_call(1, || drop(nosync::forbid()));
        [sync, sync_on, query, launches, step, switch]
    }
}

/// Each loop's median over five runs.
fn measure(loops: &mut Loops) -> Vec<f64> {
    let runs: Vec<[f64; ROWS]> = (0..5).map(|_| loops.run()).collect();
    (0..ROWS)
        .map(|i| median(runs.iter().map(|r| r[i]).collect()))
        .collect()
}

/// `on`/`off`: one measurement, with or without the hook. `both`: without, then with the hook
/// installed in the same process (an in-process pair; CUPTI cannot be detached again).
/// Installs the hook, with the report the parent was asked for (`NOSYNC_REPORT`).
fn install() -> nosync::hook::Hook {
    let hook = nosync::hook::install().expect("install the hook");
    let report = std::env::var(CHILD_REPORT).unwrap_or_default();
    if !report.is_empty() {
        nosync::hook::start_report(&report).expect("a valid NOSYNC_REPORT");
    }
    hook
}

fn child(mode: &str) -> ExitCode {
    let _hook = (mode == "on").then(install);
    nosync::set_mode(nosync::Mode::Panic);
    let mut loops = Loops::new().expect("GPU setup");
    loops.run(); // warm-up
    let text = |r: &[f64]| r.iter().map(f64::to_string).collect::<Vec<_>>().join(" ");
    println!("RESULT {}", text(&measure(&mut loops)));
    if mode == "both" {
        let _hook = install();
        loops.run();
        println!("RESULT {}", text(&measure(&mut loops)));
    }
    ExitCode::SUCCESS
}

fn spawn(mode: &str) -> Vec<[f64; ROWS]> {
    let exe = std::env::current_exe().expect("exe");
    // `NOSYNC_REPORT` applies to the measurements with the hook only: the child starts the
    // report when it installs the hook (set, it would install the hook at the first forbid scope).
    let report = std::env::var(REPORT_ENV).unwrap_or_default();
    let out = Command::new(exe)
        .env(CHILD, mode)
        .env_remove(REPORT_ENV)
        .env(CHILD_REPORT, report)
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    let results: Vec<[f64; ROWS]> = text
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .map(|l| {
            let v: Vec<f64> = l.split(' ').map(|x| x.parse().expect("number")).collect();
            v.try_into().expect("one number per row")
        })
        .collect();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!results.is_empty(), "child failed: {text}{stderr}");
    results
}

fn table(title: &str, pairs: &[([f64; ROWS], [f64; ROWS])]) {
    println!("{title}");
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
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> ExitCode {
    if let Ok(v) = std::env::var(CHILD) {
        return child(&v);
    }
    if let Err(why) = nosync::gpu::probe() {
        println!("no GPU ({why}): nothing to measure");
        return ExitCode::SUCCESS;
    }
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(9);
    let (mut across, mut within) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (off, on) = if round % 2 == 0 {
            let off = spawn("off")[0];
            (off, spawn("on")[0])
        } else {
            let on = spawn("on")[0];
            (spawn("off")[0], on)
        };
        across.push((off, on));
        let both = spawn("both");
        within.push((both[0], both[1]));
    }
    let title = format!("{rounds} rounds across processes: one without the hook, one with it");
    table(&title, &across);
    let title = format!("{rounds} rounds within a process: without, then with the hook installed");
    table(&title, &within);
    ExitCode::SUCCESS
}
