//! The hook's cost, on a GPU (the interposer, or CUPTI with `NOSYNC_HOOK_BENCH_BACKEND=cupti`): loops of raw cudarc (and, with `--step`, another program's
//! step) without and with the hook, measured in turns so that the pairs see the same machine.
//!
//! The bench starts three long-lived children of the same program, each set up and warmed up:
//! `off` (no hook), `on` (the hook installed first) and a control, without the hook for the
//! first half of the rounds and with it, installed in the same process, for the second. Then it
//! asks them in turn for one short block of every loop (a few ms each), round after round, in
//! the order ABCCBA (all six orders in turn): each child's two blocks of a round have the same
//! mean position, so a linear drift adds the same to all three. Pin the bench to one core
//! (`taskset`): the children, waiting on their stdin while another measures, share it. A figure
//! is the median over rounds of the paired difference or ratio, with a distribution-free 95 %
//! interval:
//!
//! - across processes: `on` against `off`, every round;
//! - the A/A control: the control against `off` before its install (two processes without the
//!   hook): the method's resolution, and what two processes differ by without any hook;
//! - within a process: how much the control's ratio to `off` changed when it installed the hook
//!   (after minus before, percentile-bootstrap interval). The hook cannot be uninstalled to
//!   alternate within one process: after `cuptiUnsubscribe` CUPTI stays attached (the C probe:
//!   idle `cuStreamSynchronize` 1321 ns before, 1542 ns after unsubscribing). The callbacks can:
//!   the last row is the callbacks' cost within one block of one process, on against off.
//!
//! `cargo bench -p nosync --bench hook [-- ROUNDS [--step PROGRAM ARGS..]]` (ROUNDS: 100, at least
//! 12; or a time for the whole run, setup included, such as `300s`: as many rounds as fit, from
//! the time of the first six); without a GPU it says so and exits 0. With
//! `NOSYNC_REPORT=summary` (or `trace:PATH`, `json:PATH`), the children with the hook have the
//! report on: it times every hooked call, the callbacks stay on, and the first row is the cost
//! of a hooked call with the report.
//! `--step PROGRAM ARGS..` adds the rows of another program that speaks the same protocol (see
//! `hook/pingpong.rs`): a step of a library this workspace does not build (burn:
//! `runtime/probes/burn`), measured in the same rounds.

mod pingpong;
mod stats;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use pingpong::{CHILD, CHILD_REPORT, Program};

const ROWS: usize = 7;
const NAMES: [&str; ROWS] = [
    "idle cuStreamSynchronize (hooked), no scope open in the process: callbacks off, ns/call",
    "cuStreamQuery (not hooked), no scope open, ns/call",
    "launch-bound loop: 2 000 launches until done, no scope open, ns/launch",
    "a forbid scope opened after an idle period (switches the callbacks on), ns",
    "idle cuStreamSynchronize (hooked) outside a scope, another thread in one: callbacks on, ns/call",
    "inference-style step: 8 launches in #[no_sync] + a 4 B read outside, ns/step",
    "difference: callbacks on minus off (rows 5 and 1), same block, ns/call",
];

/// Calls per block of the idle-call loops, launches per block of the launch loop, steps per block
/// of the inference-style loop: a block takes about 45 ms.
const CALLS: usize = 5_000;
const LAUNCHES: usize = 2_000;
const STEPS: usize = 300;

/// Whether this child runs the report (`NOSYNC_REPORT`): it times every hooked call, so the
/// callbacks stay on.
static REPORT: AtomicBool = AtomicBool::new(false);

/// Waits until the hook's idle watcher has switched the callbacks off (as in a program that
/// left its hot loop); without a hook they are off. With the report they stay on: the rows
/// "callbacks off" then measure the report's cost of a hooked call.
fn settle() {
    if REPORT.load(Relaxed) {
        return;
    }
    let t0 = Instant::now();
    while nosync::hook::callbacks_on() && t0.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!nosync::hook::callbacks_on(), "the callbacks stayed on");
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

    /// One block of every loop, in `NAMES`' order. The loops outside every scope come first,
    /// after the callbacks are off; the scope switches them on for the rest.
    fn block(&mut self) -> [f64; ROWS] {
        let s = self.stream.clone();
        s.synchronize().expect("sync");
        settle();
        let sync = per_call(CALLS, || s.synchronize().expect("sync"));
        let query = per_call(CALLS, || {
            // SAFETY: a live stream.
            let _ = unsafe { cudarc::driver::sys::cuStreamQuery(s.cu_stream()) };
        });
        let launches = per_call(1, || {
            for _ in 0..LAUNCHES {
                self.launch();
            }
            s.synchronize().expect("sync");
        }) / LAUNCHES as f64;
        let switch = per_call(1, || drop(nosync::forbid()));
        let sync_on = with_scope_elsewhere(|| per_call(CALLS, || s.synchronize().expect("sync")));
        let step = per_call(STEPS, || {
            self.step();
            s.clone_dtoh(&self.buf).expect("read");
        });
        [sync, query, launches, switch, sync_on, step, sync_on - sync]
    }
}

/// Installs the hook with the bench's backend, with the report the parent was asked for
/// (`NOSYNC_REPORT`).
fn install() -> nosync::hook::Hook {
    let hook = nosync::hook::install_with(pingpong::backend()).expect("install the hook");
    let report = std::env::var(CHILD_REPORT).unwrap_or_default();
    if !report.is_empty() {
        nosync::hook::start_report(&report).expect("a valid NOSYNC_REPORT");
        REPORT.store(true, Relaxed);
    }
    hook
}

/// A child: sets up, warms up, then answers the parent's commands (`hook/pingpong.rs`).
fn child(mode: &str) -> ExitCode {
    // NOSYNC_HOOK_BENCH_LATE=1: `on` installs (interposer) before the first CUDA call, leaves
    // the wrappers off through the setup and the warm-up, and turns them on before READY.
    let late = std::env::var_os("NOSYNC_HOOK_BENCH_LATE").is_some();
    let mut hook = (mode == "on" && !late).then(install);
    if (mode == "control" || (mode == "on" && late))
        && pingpong::backend() == nosync::hook::Backend::Interpose
    {
        // The interposer sees what is looked up after its install: rewrite the slots before the
        // first CUDA call, and leave the wrappers off (calling straight through) until INSTALL.
        drop(install());
    }
    nosync::set_mode(nosync::Mode::Panic);
    let mut loops = Loops::new().expect("GPU setup");
    for _ in 0..3 {
        loops.block();
    }
    if mode == "on" && late {
        hook = Some(install());
    }
    for name in NAMES {
        println!("STEP {name}");
    }
    println!("READY");
    for line in std::io::stdin().lines() {
        match line.expect("read stdin").as_str() {
            "BLOCK" => {
                let block = loops.block().map(|x| x.to_string());
                println!("RESULT {}", block.join(" "));
            }
            "INSTALL" => {
                hook.get_or_insert_with(install);
                loops.block();
                println!("OK");
            }
            other => panic!("unknown command `{other}`"),
        }
    }
    drop(hook);
    ExitCode::SUCCESS
}

/// The six orders of the three roles, taken in turn.
const ORDERS: [[usize; 3]; 6] = [
    [0, 1, 2],
    [1, 2, 0],
    [2, 0, 1],
    [0, 2, 1],
    [2, 1, 0],
    [1, 0, 2],
];

/// How many rounds: a count, or a time for the whole run (`300s`, setup included): as many
/// rounds as fit, from the time of the first six (one of each order).
#[derive(Clone, Copy)]
enum Length {
    Rounds(usize),
    Seconds(f64),
}

impl Length {
    fn parse(args: &[String]) -> Length {
        let seconds = |a: &String| a.strip_suffix('s').and_then(|n| n.parse().ok());
        match args.iter().find_map(seconds) {
            Some(s) => Length::Seconds(s),
            None => Length::Rounds(args.iter().find_map(|a| a.parse().ok()).unwrap_or(100)),
        }
    }

    /// The number of rounds, known at once for a count, after six rounds for a time (`start`:
    /// when the run started, `first`: when its first round did).
    fn rounds(self, done: usize, start: Instant, first: Instant) -> Option<usize> {
        match self {
            Length::Rounds(n) => Some(n.max(12)),
            Length::Seconds(_) if done < ORDERS.len() => None,
            Length::Seconds(s) => {
                let per_round = first.elapsed().as_secs_f64() / done as f64;
                let left = s - start.elapsed().as_secs_f64();
                Some((done + (left / per_round).max(0.0) as usize).max(12))
            }
        }
    }
}

fn main() -> ExitCode {
    if let Ok(mode) = std::env::var(CHILD) {
        return child(&mode);
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
    let length = Length::parse(ours);
    let t0 = Instant::now();
    let mut programs = vec![Program::start(None)];
    programs.extend(step.map(|s| Program::start(Some(s))));
    eprintln!("children ready after {:.1} s", t0.elapsed().as_secs_f64());
    let first = Instant::now();
    let mut rounds = None;
    let mut round = 0;
    while rounds.is_none_or(|n| round < n) {
        if rounds.is_none() {
            rounds = length.rounds(round, t0, first);
            if let Some(n) = rounds {
                eprintln!("{n} rounds");
            }
        }
        if rounds.is_some_and(|n| round == n / 2) {
            programs.iter_mut().for_each(Program::install_control);
        }
        for p in &mut programs {
            p.round(ORDERS[round % ORDERS.len()]);
        }
        round += 1;
        if round % 50 == 0 {
            eprintln!("{round} rounds after {:.1} s", t0.elapsed().as_secs_f64());
        }
    }
    pingpong::dump(&programs);
    println!(
        "{round} rounds; backend {:?}; medians over rounds with 95 % intervals; the control has \
         the hook from round {}",
        pingpong::backend(),
        round / 2
    );
    pingpong::table(&programs);
    ExitCode::SUCCESS
}
