//! The demo: gradient descent on least squares, entirely on the GPU, with a hidden sync.
//!
//! `cargo run --example train_loop` stops at the hidden device→host read of the loss in the
//! `#[no_sync]` step, naming the step and the call. `-- --fixed` keeps the loss on the device and
//! reads it every N steps through a pinned buffer. `NOSYNC_MODE=allow` runs the hidden version
//! to the end (for timing it).

mod model;

use std::process::ExitCode;

use model::{Model, Variant};
use nosync::gpu::Gpu;

/// The problem's size: small enough that one step is a few tens of microseconds of GPU work,
/// as in a training loop of a small model, so that a per-step host wait shows.
const ROWS: usize = 4096;
const COLS: usize = 128;

struct Args {
    variant: Variant,
    iters: usize,
    every: usize,
}

fn parse() -> Result<Args, String> {
    let mut args = Args {
        variant: Variant::Hidden,
        iters: 500,
        every: 50,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let v = it.next().ok_or(format!("{name} needs a number"))?;
            v.parse()
                .map_err(|_| format!("{name}: `{v}` is not a number"))
        };
        match a.as_str() {
            "--fixed" => args.variant = Variant::Fixed,
            "--iters" => args.iters = number("--iters")?,
            "--every" => args.every = number("--every")?.max(1),
            other => {
                return Err(format!(
                    "unknown argument `{other}` (expected --fixed, --iters N, --every N)"
                ));
            }
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if std::env::var_os(nosync::MODE_ENV).is_none() {
        nosync::set_mode(nosync::Mode::Error); // the violation comes back as an error
    }
    if let Err(why) = nosync::gpu::probe() {
        eprintln!("train_loop needs a CUDA GPU: {why}");
        return ExitCode::from(2);
    }
    match train(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn train(args: &Args) -> Result<(), nosync::Error> {
    let gpu = Gpu::new(0)?;
    let mut model = Model::new(&gpu, ROWS, COLS)?;
    println!(
        "{} | {:?} step, {} iterations, every {}",
        gpu.name()?,
        args.variant,
        args.iters,
        args.every
    );
    let (loss, time) = model::run(
        &mut model,
        args.variant,
        args.iters,
        args.every,
        |it, loss| {
            if it.is_multiple_of(args.every) {
                println!("iteration {it:>6}: loss {loss:.3e}");
            }
        },
    )?;
    let rate = args.iters as f64 / time.as_secs_f64();
    println!("final loss {loss:.3e}; {rate:.0} iterations/s");
    Ok(())
}
