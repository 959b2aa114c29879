//! The third demo: a program over raw cudarc (no `nosync::gpu`), checked by the CUPTI hook.
//!
//! Gradient descent pulls a vector towards a target, every step on the device through cudarc's
//! own API: NVRTC kernels, `launch_builder`, `memcpy_dtov`. Nothing in it calls nosync except
//! `#[no_sync]` on the step and `nosync::hook::install()` in `main`: the hook sees the driver
//! calls cudarc makes.
//!
//! `cargo run --release --example raw_cudarc` stops at the step's hidden read of the loss
//! (`memcpy_dtov`, a device→host copy into pageable memory), naming the driver call, the step
//! and the line that made the call. `-- --fixed` copies the loss into page-locked memory with an
//! async copy every N steps (`--every`, 50) and reads it outside the step: it runs clean.

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice,
    PushKernelArg,
};
use nosync::{Mode, SyncViolation};

const N: usize = 1 << 16;
const SRC: &str = r#"
extern "C" __global__ void update(float* w, const float* t, float lr, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] -= lr * 2.0f * (w[i] - t[i]);
}
extern "C" __global__ void loss(const float* w, const float* t, float* out, int n) {
    __shared__ float s[256];
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) { float d = w[i] - t[i]; acc += d * d; }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = s[0] / n;
}
"#;

type Res<T> = Result<T, Box<dyn Error>>;

struct Trainer {
    stream: Arc<CudaStream>,
    update: CudaFunction,
    loss_fn: CudaFunction,
    w: CudaSlice<f32>,
    target: CudaSlice<f32>,
    loss: CudaSlice<f32>,
    host: PinnedHostSlice<f32>,
    copied: Option<CudaEvent>,
}

impl Trainer {
    /// Setup, outside any scope: context, NVRTC, module load, uploads, page-locked memory.
    fn new() -> Res<Trainer> {
        let ctx = CudaContext::new(0)?;
        let stream = ctx.default_stream();
        let module = ctx.load_module(cudarc::nvrtc::compile_ptx(SRC)?)?;
        let target: Vec<f32> = (0..N).map(|i| (i % 7) as f32).collect();
        Ok(Trainer {
            update: module.load_function("update")?,
            loss_fn: module.load_function("loss")?,
            w: stream.alloc_zeros(N)?,
            target: stream.clone_htod(&target)?,
            loss: stream.alloc_zeros(1)?,
            // SAFETY: written by the device before it is read.
            host: unsafe { ctx.alloc_pinned(1)? },
            copied: None,
            stream,
        })
    }

    fn launch(&mut self) -> Res<()> {
        let n = N as i32;
        let lr = 0.05f32;
        let grid = LaunchConfig::for_num_elems(N as u32);
        let one_block = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut update = self.stream.launch_builder(&self.update);
        update.arg(&mut self.w).arg(&self.target).arg(&lr).arg(&n);
        // SAFETY: the kernel's parameters, in order; every index is bounds-checked.
        unsafe { update.launch(grid) }?;
        let mut loss = self.stream.launch_builder(&self.loss_fn);
        loss.arg(&self.w)
            .arg(&self.target)
            .arg(&mut self.loss)
            .arg(&n);
        // SAFETY: as above.
        unsafe { loss.launch(one_block) }?;
        Ok(())
    }
}

/// The hot step. Hidden: reads the loss back every step (`memcpy_dtov` waits for the stream).
/// Fixed: every `every` steps, an async copy into page-locked memory and an event, never a wait.
/// The return type is spelled `Result<_, E>` (not an alias) with `E: From<SyncViolation>`, so
/// that in `Mode::Error` the hook's violation comes back as this fn's `Err`.
#[nosync::no_sync]
fn train_step(
    t: &mut Trainer,
    step: usize,
    fixed: Option<usize>,
) -> Result<Option<f32>, Box<dyn Error>> {
    t.launch()?;
    match fixed {
        None => {
            #[allow(deprecated)] // `memcpy_dtov` is `clone_dtoh`'s old name, still common
            let loss = t.stream.memcpy_dtov(&t.loss)?;
            Ok(Some(loss[0]))
        }
        Some(every) if step.is_multiple_of(every) => {
            t.stream.memcpy_dtoh(&t.loss, &mut t.host)?;
            t.copied = Some(t.stream.record_event(None)?);
            Ok(None)
        }
        Some(_) => Ok(None),
    }
}

/// Outside the step: the copy issued `every` steps ago has long landed.
fn read_previous(t: &mut Trainer) -> Res<Option<f32>> {
    let Some(event) = t.copied.take() else {
        return Ok(None);
    };
    event.synchronize()?;
    Ok(Some(t.host.as_slice()?[0]))
}

fn run(fixed: Option<usize>, steps: usize) -> Res<()> {
    let mut t = Trainer::new()?;
    println!("raw cudarc, {N} weights, {steps} steps, fixed: {fixed:?}");
    for step in 0..steps {
        if fixed.is_some_and(|every| step.is_multiple_of(every))
            && let Some(loss) = read_previous(&mut t)?
        {
            println!(
                "step {step:4}: loss {loss:.4} (copied {} steps ago)",
                fixed.unwrap_or(0)
            );
        }
        if let Some(loss) = train_step(&mut t, step, fixed)?
            && step.is_multiple_of(50)
        {
            println!("step {step:4}: loss {loss:.4}");
        }
    }
    t.stream.synchronize()?;
    println!("done: {steps} steps, no hidden sync");
    Ok(())
}

fn parse() -> Result<(Option<usize>, usize), String> {
    let (mut fixed, mut every, mut steps) = (false, 50, 200);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let v = it.next().ok_or(format!("{name} needs a number"))?;
            v.parse()
                .map_err(|_| format!("{name}: `{v}` is not a number"))
        };
        match a.as_str() {
            "--fixed" => fixed = true,
            "--every" => every = number("--every")?.max(1),
            "--steps" => steps = number("--steps")?,
            other => {
                return Err(format!(
                    "unknown argument `{other}` (--fixed, --every N, --steps N)"
                ));
            }
        }
    }
    Ok((fixed.then_some(every), steps))
}

fn main() -> ExitCode {
    let (fixed, steps) = match parse() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if std::env::var_os(nosync::MODE_ENV).is_none() {
        nosync::set_mode(Mode::Error);
    }
    let _hook = match nosync::hook::install() {
        Ok(hook) => hook,
        Err(e) => {
            eprintln!("error: the hook was not installed: {e}");
            return ExitCode::from(2);
        }
    };
    match run(fixed, steps) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            if let Some(v) = e.downcast_ref::<SyncViolation>() {
                for frame in v.frames() {
                    eprintln!("  at {frame}");
                }
            }
            ExitCode::FAILURE
        }
    }
}
