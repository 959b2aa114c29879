//! Shared by the GPU test binaries: find the GPU, serialise, set the granularity.
#![allow(dead_code)]

use std::io::Write;
use std::sync::{Mutex, MutexGuard};

use nosync::gpu::{Gpu, Granularity};

/// Prints past the test harness's capture, so that a skip shows in every run.
pub(crate) fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The first GPU. The GPU tests are `#[ignore = "needs an NVIDIA GPU: .."]`: libtest has no
/// run-time skip, and a test that returned early without a GPU would be counted as passed. CI (no
/// GPU) lists them as ignored, with that reason; on a GPU machine run them with `--include-ignored`. These tests run only when asked for (`--ignored`/`--include-ignored`), so a
/// missing GPU is a failure that says why, never a silent pass.
pub(crate) fn gpu(test: &str) -> Gpu {
    early_hook();
    match nosync::gpu::probe() {
        Ok(_) => match Gpu::new(0) {
            Ok(gpu) => gpu,
            Err(e) => panic!("{test}: a device is present but Gpu::new failed: {e}"),
        },
        Err(why) => panic!(
            "{test}: asked to run a GPU test, but there is no GPU ({why}); \
             without --ignored/--include-ignored these tests are skipped as ignored"
        ),
    }
}

/// `NOSYNC_TEST_HOOK=interpose|cupti`: the GPU tests' hook takes this backend, installed before
/// the first CUDA call of the process (`Auto`, what `install()` uses, takes the interposer only
/// then; the tests set up the GPU first). The handle stays here until [`take_early_hook`].
pub(crate) const HOOK_BACKEND_ENV: &str = "NOSYNC_TEST_HOOK";

static EARLY: Mutex<Option<nosync::hook::Hook>> = Mutex::new(None);

fn early_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let backend = match std::env::var(HOOK_BACKEND_ENV).as_deref() {
            Ok("interpose") => nosync::hook::Backend::Interpose,
            Ok("cupti") => nosync::hook::Backend::Cupti,
            _ => return,
        };
        let hook = nosync::hook::install_with(backend)
            .unwrap_or_else(|e| panic!("{HOOK_BACKEND_ENV}: the hook must install: {e}"));
        say(&format!(
            "hook: {:?}, installed before the first CUDA call",
            hook.backend()
        ));
        *EARLY.lock().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    });
}

/// The hook installed by `NOSYNC_TEST_HOOK`, for a test that uninstalls.
pub(crate) fn take_early_hook() -> Option<nosync::hook::Hook> {
    EARLY.lock().unwrap_or_else(|e| e.into_inner()).take()
}

static GLOBAL: Mutex<()> = Mutex::new(());

/// Serialises tests that change the process-wide granularity or measure time.
pub(crate) fn exclusive() -> MutexGuard<'static, ()> {
    GLOBAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` under `g`, restoring `Actual` afterwards.
pub(crate) fn with_granularity<R>(g: Granularity, f: impl FnOnce() -> R) -> R {
    nosync::gpu::set_granularity(g);
    let r = f();
    nosync::gpu::set_granularity(Granularity::Actual);
    r
}
