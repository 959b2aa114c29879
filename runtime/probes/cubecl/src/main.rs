//! nosync's CUPTI hook on code nobody here wrote: cubecl 0.9's CUDA runtime (cudarc 0.18 inside,
//! kernels compiled at run time with NVRTC). A `#[no_sync]` step launches cubecl kernels; one
//! variant also reads the result back with `client.read_one`. With the hook, the read is
//! reported with the frame inside cubecl that waited; the launches and cubecl's pinned async
//! copy are not.
//!
//! `nosync-probe-cubecl [check|bench N [noscope]]`: `check` (the default) runs the clean step and
//! the step with the read and exits 0 when the hook reported exactly the read; `bench N` times N
//! inference-style iterations (launches in a `#[no_sync]` step, one read outside it) and prints
//! `ns_per_iter`, with the hook when `NOSYNC_HOOK=1`; `noscope` makes the same launches outside
//! any scope (and installs the hook itself under `NOSYNC_HOOK=1`), which separates CUPTI's own
//! cost from nosync's decisions inside the scope.

use std::process::ExitCode;
use std::time::Instant;

use cubecl::cuda::{CudaDevice, CudaRuntime};
use cubecl::prelude::*;
use cubecl::server::Handle;
use nosync::{Mode, SyncViolation};

type R = CudaRuntime;
const N: usize = 1 << 16;
const LAUNCHES: usize = 8;

#[cube(launch_unchecked)]
fn axpy(x: &Array<f32>, y: &mut Array<f32>, a: f32) {
    if ABSOLUTE_POS < y.len() {
        y[ABSOLUTE_POS] += a * x[ABSOLUTE_POS];
    }
}

struct Model {
    client: ComputeClient<R>,
    x: Handle,
    y: Handle,
}

impl Model {
    fn new() -> Model {
        let client = R::client(&CudaDevice::new(0));
        let x = client.create_from_slice(f32::as_bytes(&vec![1.0f32; N]));
        let y = client.create_from_slice(f32::as_bytes(&vec![0.0f32; N]));
        Model { client, x, y }
    }

    fn launch(&self) {
        let cube_dim = CubeDim::new_1d(256);
        let cubes = (N as u32).div_ceil(256);
        // SAFETY: both arrays hold N f32s, the kernel checks the bound.
        unsafe {
            axpy::launch_unchecked::<R>(
                &self.client,
                CubeCount::Static(cubes, 1, 1),
                cube_dim,
                ArrayArg::from_raw_parts::<f32>(&self.x, N, 1),
                ArrayArg::from_raw_parts::<f32>(&self.y, N, 1),
                ScalarArg::new(0.5f32),
            )
            .expect("launch");
        }
    }

    fn read(&self) -> f32 {
        let bytes = self.client.read_one(self.y.clone());
        f32::from_bytes(&bytes)[0]
    }
}

/// The hot step: launches only, or launches and a read of the result.
#[nosync::no_sync]
fn step(model: &Model, read: bool) -> Result<Option<f32>, SyncViolation> {
    for _ in 0..LAUNCHES {
        model.launch();
    }
    Ok(read.then(|| model.read()))
}

fn check(model: &Model) -> ExitCode {
    // Warm-up outside any scope: cubecl compiles the kernel (NVRTC) and loads it on first use.
    model.launch();
    let before = model.read();
    let clean = (0..100).map(|_| step(model, false)).find_map(Result::err);
    println!(
        "clean step ({LAUNCHES} cubecl launches) x100: {}",
        clean.as_ref().map_or("no violation".into(), ToString::to_string)
    );
    let after = model.read();
    println!("y[0] went from {before} to {after} (outside the scope: not checked)");
    let read = step(model, true);
    match &read {
        Ok(v) => println!("step with read_one: NOT reported (returned {v:?})"),
        Err(e) => report(e),
    }
    let reported = read.is_err_and(|e| e.site().api == "cuEventSynchronize");
    if clean.is_none() && reported {
        println!("ok: the read was reported, the launches and the pinned async copy were not");
        ExitCode::SUCCESS
    } else {
        println!("FAILED: expected a clean run and one reported cuEventSynchronize");
        ExitCode::FAILURE
    }
}

fn report(e: &SyncViolation) {
    println!("step with read_one: error: {e}");
    for (i, frame) in e.frames().iter().enumerate() {
        println!("  frame {i}: {frame}");
    }
}

fn bench(model: &Model, iters: usize, scoped: bool) -> ExitCode {
    let _hook = (!scoped && std::env::var(nosync::hook::HOOK_ENV).is_ok_and(|v| v == "1"))
        .then(|| nosync::hook::install().expect("install"));
    model.launch();
    model.read();
    let start = Instant::now();
    for _ in 0..iters {
        if !scoped {
            (0..LAUNCHES).for_each(|_| model.launch());
        } else if let Err(e) = step(model, false) {
            println!("unexpected: {e}");
            return ExitCode::FAILURE;
        }
        model.read(); // the token read, outside the hot step
    }
    let ns = start.elapsed().as_nanos() as f64 / iters as f64;
    let hook = nosync::hook::is_installed();
    println!("ns_per_iter {ns:.1} hook {hook} scoped {scoped}");
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if std::env::var_os(nosync::MODE_ENV).is_none() {
        nosync::set_mode(Mode::Error);
    }
    let bench_iters = match args.first().map(String::as_str) {
        Some("bench") => Some(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(2000)),
        _ => None,
    };
    let hook = match bench_iters {
        // The bench compares runs with and without NOSYNC_HOOK=1 (installed at the first scope).
        Some(_) => None,
        None => match nosync::hook::install() {
            Ok(hook) => Some(hook),
            Err(e) => {
                println!("error: the hook was not installed: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let model = Model::new();
    let code = match bench_iters {
        Some(iters) => bench(&model, iters, args.get(2).is_none_or(|a| a != "noscope")),
        None => check(&model),
    };
    drop(hook);
    code
}
