//! nosync's CUPTI hook on candle-core 0.11's CUDA backend (cudarc 0.19, `dynamic-linking`,
//! kernels built by nvcc into PTX and loaded on first use). Checks, each one an assertion (the
//! program exits 1 when one fails, 2 when the hook does not install):
//!
//! 1. the first step of matmul, add, softmax and an `i(..)` index loads candle's kernel modules:
//!    every call the hook reports there is a module load (setup), with a candle frame;
//! 2. the same step after that, 100 times in a `#[no_sync]` fn: nothing is reported;
//! 3. `to_vec1`, `to_scalar`, `{:?}` of a rank-0 tensor and `Device::synchronize`, each inside a
//!    `#[no_sync]` fn: each is reported, with a frame inside candle.

use std::process::ExitCode;

use candle_core::{D, DType, Device, IndexOp, Tensor};
use nosync::hook::Rule;
use nosync::{Mode, SyncViolation};

const N: usize = 512;

struct Model {
    device: Device,
    w: Tensor,
    bias: Tensor,
    x: Tensor,
}

impl Model {
    fn new() -> candle_core::Result<Model> {
        let device = Device::new_cuda(0)?;
        Ok(Model {
            w: Tensor::randn(0f32, 0.05, (N, N), &device)?,
            bias: Tensor::randn(0f32, 1.0, (1, N), &device)?,
            x: Tensor::randn(0f32, 1.0, (64, N), &device)?,
            device,
        })
    }

    /// The inference-style work: matmul, add, softmax, an index. Stays on the device.
    fn forward(&self) -> candle_core::Result<Tensor> {
        let h = self.x.matmul(&self.w)?.broadcast_add(&self.bias)?;
        let p = candle_nn::ops::softmax_last_dim(&h)?;
        p.i((0, ..))
    }
}

#[nosync::no_sync]
fn step(model: &Model) -> Result<Tensor, SyncViolation> {
    Ok(model.forward().expect("forward"))
}

#[nosync::no_sync]
fn read_vec(row: &Tensor) -> Result<usize, SyncViolation> {
    Ok(row.to_vec1::<f32>().expect("to_vec1").len())
}

#[nosync::no_sync]
fn read_scalar(row: &Tensor) -> Result<f32, SyncViolation> {
    Ok(row
        .sum_all()
        .and_then(|s| s.to_scalar::<f32>())
        .expect("to_scalar"))
}

#[nosync::no_sync]
fn debug_scalar(row: &Tensor) -> Result<String, SyncViolation> {
    let total = row.max(D::Minus1).expect("max");
    Ok(format!("{total:?}"))
}

#[nosync::no_sync]
fn synchronize(device: &Device) -> Result<(), SyncViolation> {
    device.synchronize().expect("synchronize");
    Ok(())
}

/// A candle frame among the violation's frames.
fn candle_frame(e: &SyncViolation) -> Option<String> {
    e.frames()
        .iter()
        .find(|f| {
            let file = f.file.as_deref().unwrap_or_default();
            f.function.starts_with("candle_")
                || f.function.starts_with("<candle_")
                || file.contains("/candle-core-")
                || file.contains("/candle-nn-")
        })
        .map(ToString::to_string)
}

struct Checks {
    failed: usize,
}

impl Checks {
    fn expect(&mut self, ok: bool, what: &str) {
        println!("{} {what}", if ok { "ok:" } else { "FAILED:" });
        self.failed += usize::from(!ok);
    }

    /// A read inside a `#[no_sync]` fn: reported, with a candle frame.
    fn reported<T: std::fmt::Debug>(&mut self, what: &str, r: Result<T, SyncViolation>) {
        match r {
            Ok(v) => self.expect(false, &format!("{what}: not reported (returned {v:?})")),
            Err(e) => {
                println!("{what}: error: {e}");
                for (i, frame) in e.frames().iter().enumerate() {
                    println!("  frame {i}: {frame}");
                }
                let frame = candle_frame(&e);
                let at = frame.as_deref().unwrap_or("no candle frame");
                self.expect(frame.is_some(), &format!("{what} reported at {at}"));
            }
        }
    }
}

/// The first step: what the hook sees, counted in `Log` mode.
fn first_use(model: &Model, checks: &mut Checks) {
    let (row, report) = nosync::count_syncs(|| nosync::with_mode(Mode::Log, || step(model)));
    let row = row.expect("Log mode returns the value");
    println!(
        "first step (kernels loaded on first use): {} hooked call(s)",
        report.total()
    );
    let mut setup_only = report.total() > 0;
    for site in report.sites() {
        let api = site.site().api;
        let rule = nosync::hook::HOOKED
            .iter()
            .find(|h| h.does.api == api)
            .map(|h| h.rule);
        println!(
            "  {api} x{} ({:?}): {}",
            site.count(),
            rule,
            site.site().reason
        );
        setup_only &= rule == Some(Rule::Setup);
    }
    checks.expect(
        setup_only,
        "the first step's hooked calls are all module loads (setup)",
    );
    drop(row);
}

fn main() -> ExitCode {
    nosync::set_mode(Mode::Error);
    let _hook = match nosync::hook::install() {
        Ok(hook) => hook,
        Err(e) => {
            println!("error: the hook was not installed: {e}");
            return ExitCode::from(2);
        }
    };
    println!("hook backend: {:?} (installed before the first CUDA call)", _hook.backend());
    let model = Model::new().expect("candle CUDA device");
    print!("{}", _hook.coverage());
    let mut checks = Checks { failed: 0 };
    first_use(&model, &mut checks);
    let clean = (0..100).map(|_| step(&model)).find_map(Result::err);
    let what = clean
        .as_ref()
        .map_or("no violation".into(), ToString::to_string);
    println!("step after warm-up (matmul, add, softmax, i(..)) x100: {what}");
    checks.expect(clean.is_none(), "the warm step is not reported");
    let row = step(&model).expect("warm step");
    assert_eq!(row.dtype(), DType::F32);
    checks.reported("to_vec1", read_vec(&row));
    checks.reported("to_scalar", read_scalar(&row));
    checks.reported("{:?} of a rank-0 tensor", debug_scalar(&row));
    checks.reported("Device::synchronize", synchronize(&model.device));
    // Outside any scope nothing is checked.
    let values = row.to_vec1::<f32>().expect("read outside");
    let sum: f32 = values.iter().sum();
    println!(
        "outside the scope: read {} values (softmax row sums to {sum:.3})",
        values.len()
    );
    checks.expect((sum - 1.0).abs() < 1e-3, "the computation is right");
    if checks.failed == 0 {
        println!("ok: candle's reads and synchronize were reported, its launches were not");
        ExitCode::SUCCESS
    } else {
        println!("FAILED: {} check(s)", checks.failed);
        ExitCode::FAILURE
    }
}
