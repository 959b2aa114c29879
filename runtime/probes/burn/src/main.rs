//! nosync's CUPTI hook on burn-cuda 0.21 (cubecl 0.10, cudarc 0.19 with `fallback-dynamic-loading`,
//! kernels compiled at run time, fusion and autotune on: the defaults). Checks, each one an
//! assertion (the program exits 1 when one fails, 2 when the hook does not install):
//!
//! 1. after warm-up (outside any scope: compilation, autotune), a `#[no_sync]` step of matmul,
//!    add and softmax, 100 times: nothing is reported;
//! 2. `into_data` and `Backend::sync` inside a `#[no_sync]` step: each is reported, with a frame
//!    inside burn or cubecl. With fusion (burn-cuda's default) `Backend::sync` waits on cubecl's
//!    device-runner thread while this thread waits on a channel: it is reported as a wait of that
//!    runner (`SyncViolation::runner_thread`), in the step's scope.
//!
//! With `NOSYNC_HOOK_BENCH_CHILD=off|on` it is a step for the hook bench
//! (`cargo bench -p nosync --bench hook -- ROUNDS --step nosync-probe-burn`): the step after
//! warm-up and a read outside it, timed in blocks the bench asks for, without or with the hook.

use std::process::ExitCode;
use std::time::Instant;

use burn_cuda::{Cuda, CudaDevice};
use burn_tensor::backend::Backend;
use burn_tensor::{Distribution, Tensor, activation};
use nosync::{Mode, SyncViolation};

type B = Cuda;
const N: usize = 512;

struct Model {
    device: CudaDevice,
    w: Tensor<B, 2>,
    bias: Tensor<B, 2>,
    x: Tensor<B, 2>,
}

impl Model {
    fn new() -> Model {
        let device = CudaDevice::new(0);
        let normal = Distribution::Normal(0.0, 0.05);
        Model {
            w: Tensor::random([N, N], normal, &device),
            bias: Tensor::random([1, N], normal, &device),
            x: Tensor::random([64, N], Distribution::Normal(0.0, 1.0), &device),
            device,
        }
    }

    /// The inference-style work: matmul, add, softmax. Stays on the device.
    fn forward(&self) -> Tensor<B, 2> {
        let h = self.x.clone().matmul(self.w.clone()) + self.bias.clone();
        activation::softmax(h, 1)
    }
}

#[nosync::no_sync]
fn step(model: &Model) -> Result<Tensor<B, 2>, SyncViolation> {
    Ok(model.forward())
}

#[nosync::no_sync]
fn step_into_data(model: &Model) -> Result<usize, SyncViolation> {
    Ok(model.forward().into_data().num_elements())
}

#[nosync::no_sync]
fn step_sync(model: &Model) -> Result<(), SyncViolation> {
    let out = model.forward();
    B::sync(&model.device).expect("sync");
    drop(out);
    Ok(())
}

/// A burn or cubecl frame among the violation's frames.
fn library_frame(e: &SyncViolation) -> Option<String> {
    e.frames()
        .iter()
        .find(|f| {
            let file = f.file.as_deref().unwrap_or_default();
            let function = f.function.trim_start_matches('<');
            ["burn_", "cubecl_"].iter().any(|p| function.starts_with(p))
                || ["/burn-", "/cubecl-"].iter().any(|p| file.contains(p))
        })
        .map(ToString::to_string)
}

fn expect(failed: &mut usize, ok: bool, what: &str) {
    println!("{} {what}", if ok { "ok:" } else { "FAILED:" });
    *failed += usize::from(!ok);
}

fn reported<T: std::fmt::Debug>(failed: &mut usize, what: &str, r: Result<T, SyncViolation>) {
    match r {
        Ok(v) => expect(
            failed,
            false,
            &format!("{what}: not reported (returned {v:?})"),
        ),
        Err(e) => {
            println!("{what}: error: {e}");
            if let Some(runner) = e.runner_thread() {
                println!("  (waited on device-runner thread `{runner}`)");
            }
            for (i, frame) in e.frames().iter().enumerate() {
                println!("  frame {i}: {frame}");
            }
            let frame = library_frame(&e);
            let at = frame.as_deref().unwrap_or("no burn or cubecl frame");
            expect(failed, frame.is_some(), &format!("{what} reported at {at}"));
        }
    }
}

/// The hook bench's step: the step (matmul, add, softmax) in `#[no_sync]`, then a read of its
/// result outside the scope, as an inference loop reads a token. ns/step over `steps` steps.
fn bench_time(model: &Model, steps: usize) -> f64 {
    let t0 = Instant::now();
    for _ in 0..steps {
        let out = step(model).expect("the warm step is clean");
        let _ = out.into_data();
    }
    t0.elapsed().as_nanos() as f64 / steps as f64
}

/// Steps per block of the hook bench (about 25 ms on an H200).
const BLOCK: usize = 40;

/// A child of the hook bench (its protocol: `runtime/benches/hook/pingpong.rs`): set up and warm
/// up, then one block per `BLOCK` line, the hook installed at `INSTALL`.
fn bench_child(mode: &str) -> ExitCode {
    // The bench's backend (`NOSYNC_HOOK_BENCH_BACKEND`): the interposer unless `cupti`.
    let backend = match std::env::var("NOSYNC_HOOK_BENCH_BACKEND").as_deref() {
        Ok("cupti") => nosync::hook::Backend::Cupti,
        _ => nosync::hook::Backend::Interpose,
    };
    let install = || nosync::hook::install_with(backend).expect("install the hook");
    let mut hook = (mode == "on").then(install);
    if mode == "control" && backend == nosync::hook::Backend::Interpose {
        // Slots rewritten before the first CUDA call, wrappers off until INSTALL.
        drop(install());
    }
    nosync::set_mode(Mode::Panic);
    let model = Model::new();
    for _ in 0..20 {
        let _ = model.forward().into_data();
    }
    bench_time(&model, 10 * BLOCK);
    println!(
        "STEP burn-cuda 0.21 step: matmul, add, softmax in #[no_sync] + into_data outside, ns/step"
    );
    println!("READY");
    for line in std::io::stdin().lines() {
        match line.expect("read stdin").as_str() {
            "BLOCK" => {
                // The steady state of a loop: the first step after the pause between blocks
                // switches the hook's callbacks on again (once per idle period), untimed.
                bench_time(&model, 1);
                println!("RESULT {}", bench_time(&model, BLOCK));
            }
            "INSTALL" => {
                hook.get_or_insert_with(install);
                bench_time(&model, BLOCK);
                println!("OK");
            }
            other => panic!("unknown command `{other}`"),
        }
    }
    drop(hook);
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    if let Ok(mode) = std::env::var("NOSYNC_HOOK_BENCH_CHILD") {
        return bench_child(&mode);
    }
    nosync::set_mode(Mode::Error);
    let _hook = match nosync::hook::install() {
        Ok(hook) => hook,
        Err(e) => {
            println!("error: the hook was not installed: {e}");
            return ExitCode::from(2);
        }
    };
    println!("hook backend: {:?} (installed before the first CUDA call)", _hook.backend());
    let model = Model::new();
    // Warm-up outside any scope: kernels compile (NVRTC) and autotune on first use.
    for _ in 0..3 {
        let _ = model.forward().into_data();
    }
    print!("{}", _hook.coverage());
    let mut failed = 0;
    let clean = (0..100).map(|_| step(&model)).find_map(Result::err);
    let what = clean
        .as_ref()
        .map_or("no violation".into(), ToString::to_string);
    println!("step after warm-up (matmul, add, softmax) x100: {what}");
    expect(
        &mut failed,
        clean.is_none(),
        "the launches are not reported",
    );
    reported(&mut failed, "into_data", step_into_data(&model));
    reported(&mut failed, "Backend::sync", step_sync(&model));
    let data = model.forward().into_data();
    let row: f32 = data.to_vec::<f32>().expect("f32")[..N].iter().sum();
    println!(
        "outside the scope: read {} values (a softmax row sums to {row:.3})",
        data.num_elements()
    );
    expect(
        &mut failed,
        (row - 1.0).abs() < 1e-3,
        "the computation is right",
    );
    if failed == 0 {
        println!("ok: burn's read and sync were reported, its launches were not");
        ExitCode::SUCCESS
    } else {
        println!("FAILED: {failed} check(s)");
        ExitCode::FAILURE
    }
}
