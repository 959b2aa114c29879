//! The CUPTI hook's cost, on a GPU, measured two ways over the same loops of raw cudarc
//! (each loop run five times, its median kept). Across processes: each round runs this binary
//! as two children, without and with the hook (rotating which goes first). Within a process: a
//! child measures without the hook, installs it, measures again (never the other way round:
//! after `cuptiUnsubscribe` CUPTI stays attached, measured by the C probe: idle
//! `cuStreamSynchronize` 1321 ns before, 1542 ns after unsubscribing). The overhead is the
//! median over rounds of each pair's difference or ratio (paired: drift between rounds cancels).
//!
//! `cargo bench -p nosync --bench hook [-- ROUNDS [--step PROGRAM ARGS..]]`; without a GPU it
//! says so and exits 0. With `NOSYNC_REPORT=summary` (or `trace:PATH`), the measurements with the
//! hook have the report on; those without have neither.
//!
//! `--step PROGRAM ARGS..` adds a row measured by another program in the same rounds, the same
//! two ways: a step of a library this workspace does not build (burn, cubecl: their own
//! workspaces under `runtime/probes`). It is run with `NOSYNC_HOOK_BENCH_CHILD` set to `off`,
//! `on` or `both`, as this binary's children are, and prints `RESULT <ns per step>` once per
//! measurement (twice for `both`: without, then with the hook); `STEP <name>` names the row.

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

/// Calls per run of the idle-call loops, and steps per run of the inference-style loop (each run
/// is repeated five times and its median kept; a child takes about 7 s).
const CALLS: usize = 100_000;
const STEPS: usize = 10_000;

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
        let sync = per_call(CALLS, || s.synchronize().expect("sync"));
        let sync_on = with_scope_elsewhere(|| per_call(CALLS, || s.synchronize().expect("sync")));
        settle();
        let query = per_call(CALLS, || {
            // SAFETY: a live stream.
            let _ = unsafe { cudarc::driver::sys::cuStreamQuery(s.cu_stream()) };
        });
        let launches = per_call(1, || {
            for _ in 0..10_000 {
                self.launch();
            }
            s.synchronize().expect("sync");
        }) / 10_000.0;
        let step = per_call(STEPS, || {
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

/// A child: this binary (`step: None`) or the `--step` program. Its `RESULT` lines, and the
/// name a `STEP` line gives.
fn spawn(step: Option<&[String]>, mode: &str) -> (Vec<Vec<f64>>, Option<String>) {
    let exe = std::env::current_exe().expect("exe");
    let mut command = match step {
        Some([program, args @ ..]) => {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
        _ => Command::new(exe),
    };
    // `NOSYNC_REPORT` applies to the measurements with the hook only: the child starts the
    // report when it installs the hook (set, it would install the hook at the first forbid scope).
    let report = std::env::var(REPORT_ENV).unwrap_or_default();
    let out = command
        .env(CHILD, mode)
        .env_remove(REPORT_ENV)
        .env(CHILD_REPORT, report)
        .output()
        .expect("run child");
    let text = String::from_utf8_lossy(&out.stdout);
    let results: Vec<Vec<f64>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .map(|l| l.split(' ').map(|x| x.parse().expect("number")).collect())
        .collect();
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("STEP "))
        .map(str::to_owned);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !results.is_empty(),
        "child failed: {text}{stderr}"
    );
    (results, name)
}

/// One round's measurement without and with the hook: this binary's rows, then the step's.
type Pair = (Vec<f64>, Vec<f64>);

fn table(title: &str, names: &[String], pairs: &[Pair]) {
    println!("{title}");
    println!("| loop | without | with | median paired difference | median paired ratio |");
    println!("| --- | --- | --- | --- | --- |");
    for (i, name) in names.iter().enumerate() {
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (ours, step) = match args.iter().position(|a| a == "--step") {
        Some(i) => (&args[..i], Some(&args[i + 1..])),
        None => (&args[..], None),
    };
    let rounds: usize = ours.iter().find_map(|a| a.parse().ok()).unwrap_or(9);
    let mut names: Vec<String> = NAMES.iter().map(|n| (*n).to_owned()).collect();
    let (mut across, mut within) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (mut a, mut w, _) = pair(None, round);
        if let Some(step) = step {
            let (sa, sw, name) = pair(Some(step), round);
            for (all, one) in [(&mut a, sa), (&mut w, sw)] {
                all.0.extend(one.0);
                all.1.extend(one.1);
            }
            if round == 0 {
                names.extend(name);
            }
        }
        let text = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.1}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        println!("round {round} across: {} | {}", text(&a.0), text(&a.1));
        println!("round {round} within: {} | {}", text(&w.0), text(&w.1));
        across.push(a);
        within.push(w);
    }
    let title = format!("{rounds} rounds across processes: one without the hook, one with it");
    table(&title, &names, &across);
    let title = format!("{rounds} rounds within a process: without, then with the hook installed");
    table(&title, &names, &within);
    ExitCode::SUCCESS
}

/// One round of one program: across processes (rotating which goes first), then within one;
/// and the step's name (`step` only).
fn pair(step: Option<&[String]>, round: usize) -> (Pair, Pair, Option<String>) {
    let first = |mode| spawn(step, mode);
    let (off, on) = if round.is_multiple_of(2) {
        let off = first("off");
        (off, first("on"))
    } else {
        let on = first("on");
        (first("off"), on)
    };
    let (both, name) = first("both");
    let within = (both[0].clone(), both.get(1).cloned().expect("two results"));
    let name = step.map(|s| name.unwrap_or_else(|| s.join(" ")));
    ((off.0[0].clone(), on.0[0].clone()), within, name)
}
