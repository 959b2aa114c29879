//! Shared by the GPU test binaries: find a GPU or skip visibly.
#![allow(dead_code)]

use std::io::Write;
use std::sync::{Mutex, MutexGuard};

use nosync::gpu::{Gpu, Granularity};

/// Prints past the test harness's capture, so that a skip shows in every run.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The first GPU, or `None` after printing why the test is skipped. A skipped test is not a
/// passed one: the line says so.
pub fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match nosync::gpu::probe() {
        Ok(_) => match Gpu::new(0) {
            Ok(gpu) => Some(gpu),
            Err(e) => panic!("{test}: a device is present but Gpu::new failed: {e}"),
        },
        Err(why) => {
            say(&format!(
                "skipped: {test}: no GPU ({why}); not counted as passed"
            ));
            None
        }
    }
}

static GLOBAL: Mutex<()> = Mutex::new(());

/// Serialises tests that change the process-wide granularity or measure time.
pub fn exclusive() -> MutexGuard<'static, ()> {
    GLOBAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` under `g`, restoring `Actual` afterwards.
pub fn with_granularity<R>(g: Granularity, f: impl FnOnce() -> R) -> R {
    nosync::gpu::set_granularity(g);
    let r = f();
    nosync::gpu::set_granularity(Granularity::Actual);
    r
}
