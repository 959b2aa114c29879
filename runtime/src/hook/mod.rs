//! The runtime hook (feature `cupti`): every blocking CUDA call in the process, from any library,
//! checked against the calling thread's scope.
//!
//! `nosync::gpu` checks the calls it makes; code that calls cudarc or the driver directly
//! (candle, cubecl, burn, C++ libraries) is not seen by it. The hook sees those calls on the
//! calling thread, whoever made them, in one of two ways ([`Backend`]): its own wrappers of the
//! driver's calls, put in the program's import slots and handed out by its `dlsym` (the
//! interposer, Linux, installed before the first CUDA call), or CUPTI's callback API, which calls
//! nosync at the entry and exit of each enabled driver- and runtime-API function. Each hooked call is decided from its arguments by the rules of
//! [`HOOKED`] (a copy into page-locked memory does not wait, into pageable memory it does) and,
//! when the host waits, checked like any declared site: the same modes, `allow_sync`,
//! `allow_sync_once`, `set_enabled`, `count_syncs`/`assert_no_sync`, `NoSync<F>`, and the same
//! granularity as `nosync::gpu` (`Declared` also reports every "may").
//!
//! ```no_run
//! let _hook = nosync::hook::install()?; // or NOSYNC_HOOK=1 in the environment
//! # Ok::<(), nosync::hook::HookError>(())
//! ```
//!
//! Where a violation goes: the callback runs inside the driver, so it can neither panic nor
//! return an error to the caller. `Log` and `Warn` report at once; `Error` and `Panic` keep the
//! violation and surface it when the innermost forbid scope ends (a `#[no_sync]` fn returning
//! `Result<_, E: From<SyncViolation>>` returns it in `Mode::Error`; every other scope end panics
//! with it, or logs it while the thread is already panicking). The call itself has run: the hook
//! reports waits, it cannot prevent them. A violation carries the first stack frames outside
//! cudarc and nosync ([`SyncViolation::frames`](crate::SyncViolation::frames)), captured only on
//! a violation. Calls made by `nosync::gpu` operations are left to their own check.
//!
//! A wait on a device-runner thread (cubecl's, or one marked with [`runner_thread`]), which makes
//! the CUDA calls for threads that wait for it on a channel, counts in the forbid scopes open on
//! other threads meanwhile (see [`runner_thread`] and `SyncViolation::runner_thread`).
//!
//! Failure is explicit: without the driver, without libcupti for CUPTI, when another CUPTI
//! subscriber holds the callback API (Nsight, a profiler: CUPTI before 13.2 allows one), or
//! when the interposer is asked for where it cannot see every call, [`install`] returns a
//! [`HookError`] naming the cause and where it looked; nothing else changes.

mod check;
mod common;
mod cupti;
mod from_env;
#[cfg(target_os = "linux")]
mod interpose;
mod observe;
mod report;

use std::sync::{Mutex, PoisonError};

use check::demand;
use cupti::{load, subscribe};
use report::summary;

pub use crate::guard::env::{CUPTI_ENV, REPORT_ENV};
pub use crate::guard::granularity::{GRANULARITY_ENV, Granularity, granularity, set_granularity};
pub use check::frame::MAX_FRAMES;
pub use check::runner::{is_runner_name, runner_thread};
pub use check::table::{Domain, HOOKED, Hooked, Params, Rule};
pub use check::waits::{WaitScope, WaitSite, Waited};
pub use common::coverage::{Coverage, PatchedObject, Skipped};
pub use common::{Backend, HookError};
use common::{Subscription, env_backend};
pub use demand::{IDLE, callbacks_on, keep_enabled};
pub(crate) use observe::Observed;

/// CUDA-graph capture: what breaks one ([`Break`](crate::hook::capture::Break)), as a violation
/// names it.
pub mod capture {
    pub use super::check::capture::Break;

    /// The calls the hook watches for capture safety, by name, and whether each is enabled only
    /// while a capture or a `capture_safe` scope is live: for the GPU tests.
    #[doc(hidden)]
    pub fn watched() -> impl Iterator<Item = (&'static str, bool)> {
        super::check::capture::WATCHED
            .iter()
            .map(|w| (w.site.api, w.while_capturing()))
    }
}
pub use summary::{start_report, waits};

pub use crate::guard::env::HOOK_ENV;

/// The installed hook. `install` is process-wide and idempotent: every `Hook` shares one
/// installation, which ends when the last one is dropped or [`uninstall`](Hook::uninstall)ed.
#[derive(Debug)]
#[must_use = "the hook is uninstalled when the last `Hook` is dropped"]
pub struct Hook {
    _shared: (),
}

static SUBSCRIPTION: Mutex<Option<Subscription>> = Mutex::new(None);

fn subscription() -> std::sync::MutexGuard<'static, Option<Subscription>> {
    SUBSCRIPTION.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Installs the hook (or shares the installed one) with the backend `NOSYNC_HOOK` names
/// (`cupti`, `interpose`), else [`Backend::Auto`]. Looks for what it needs first (the driver;
/// libcupti for CUPTI): without it, it returns the error and changes nothing.
pub fn install() -> Result<Hook, HookError> {
    install_with(env_backend()?.unwrap_or(Backend::Auto))
}

/// Installs the hook with a chosen backend (or shares the installed one, whatever its backend).
pub fn install_with(backend: Backend) -> Result<Hook, HookError> {
    if cfg!(nosync_off) {
        return Err(HookError::CompiledOut);
    }
    let driver = load::driver_lib()?;
    summary::start_from_env();
    let mut sub = subscription();
    if let Some(sub) = sub.as_mut() {
        sub.hooks += 1;
        return Ok(Hook { _shared: () });
    }
    let initialized = driver.driver.initialized();
    let started = match choose(backend, initialized) {
        Backend::Interpose => match start_interposer(driver, initialized) {
            // Auto falls back to CUPTI where the interposer cannot serve.
            Err(HookError::Interpose { .. }) if backend == Backend::Auto => {
                subscribe::start(&driver.driver, load::cupti_lib()?)?
            }
            started => started?,
        },
        _ => subscribe::start(&driver.driver, load::cupti_lib()?)?,
    };
    report::json::installed(match started.backend() {
        Backend::Cupti => "cupti",
        _ => "interpose",
    });
    *sub = Some(started);
    drop(sub);
    demand::installed(SWITCHES);
    Ok(Hook { _shared: () })
}

/// The backend `Auto` stands for now: the interposer where it sees every call (installed before
/// the driver was initialized, now or earlier in the process), else CUPTI.
fn choose(backend: Backend, initialized: bool) -> Backend {
    match backend {
        Backend::Auto if interposer_unsupported().is_none() && interposer_complete(initialized) => {
            Backend::Interpose
        }
        Backend::Auto => Backend::Cupti,
        chosen => chosen,
    }
}

fn interposer_complete(initialized: bool) -> bool {
    #[cfg(target_os = "linux")]
    return interpose::complete(initialized);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = initialized;
        false
    }
}

fn interposer_unsupported() -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    return interpose::unsupported();
    #[cfg(not(target_os = "linux"))]
    return Some("the interposer rewrites ELF import slots: Linux only");
}

fn start_interposer(
    driver: &'static load::DriverLib,
    initialized: bool,
) -> Result<Subscription, HookError> {
    #[cfg(target_os = "linux")]
    {
        // Decided before `cuInit` below: whether some code had initialized the driver.
        let installed = interpose::install(&driver.library, initialized)
            .map_err(|reason| HookError::Interpose { reason })?;
        if let Err(e) = subscribe::start_driver(&driver.driver) {
            interpose::abort();
            return Err(e);
        }
        interpose::commit(initialized);
        log::debug!(
            target: "nosync",
            "hook: interposer installed, {} import slots rewritten, {} calls found",
            installed.slots,
            installed.resolved.len()
        );
        Ok(Subscription {
            handle: None,
            hooks: 1,
            enabled: Vec::new(),
            watching: 0,
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (driver, initialized);
        Err(HookError::Interpose {
            reason: interposer_unsupported().unwrap_or_default().to_owned(),
        })
    }
}

/// Whether a hook is installed in this process.
pub fn is_installed() -> bool {
    subscription().is_some()
}

/// The backend of the installed hook, if one is.
pub fn backend() -> Option<Backend> {
    subscription().as_ref().map(Subscription::backend)
}

impl Hook {
    /// The rows it sees: those whose callbacks this CUPTI enabled, or whose functions the
    /// interposer knows now (found in the driver, or bound in a patched object; a runtime row
    /// only once a CUDA runtime is loaded). A row they do not know is left out.
    pub fn hooked(&self) -> Vec<&'static Hooked> {
        let sub = subscription();
        match sub.as_ref() {
            Some(s) if s.handle.is_some() => s.enabled.clone(),
            #[cfg(target_os = "linux")]
            Some(_) => interpose::hooked(),
            _ => Vec::new(),
        }
    }

    /// What it sees and what it does not: for the interposer, the objects and slots it patched,
    /// what it left alone and why, and the calls it cannot see (print it: its `Display` is
    /// written for users).
    pub fn coverage(&self) -> Coverage {
        match self.backend() {
            #[cfg(target_os = "linux")]
            Backend::Interpose => interpose::coverage(),
            backend => Coverage {
                backend,
                objects: Vec::new(),
                skipped: Vec::new(),
                unseen: Vec::new(),
            },
        }
    }

    /// How it sees the calls: [`Backend::Cupti`] or [`Backend::Interpose`].
    pub fn backend(&self) -> Backend {
        backend().unwrap_or(Backend::Cupti)
    }

    /// Drops this handle; the last one unsubscribes.
    pub fn uninstall(self) {
        drop(self);
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        let mut sub = subscription();
        let last = sub.as_mut().is_some_and(|s| {
            s.hooks -= 1;
            s.hooks == 0
        });
        if last && let Some(s) = sub.take() {
            match s.handle {
                Some(handle) => subscribe::stop(handle),
                #[cfg(target_os = "linux")]
                None => interpose::uninstall(),
                #[cfg(not(target_os = "linux"))]
                None => {}
            }
        }
    }
}

/// A capture began or a `capture_safe` scope opened (`true`), or one of them ended: the watched
/// calls that are frequent (stream queries, launches) are checked only while one is live, and
/// the hooked calls are kept on (a capture is checked outside forbid scopes too).
#[cfg_attr(nosync_off, allow(dead_code))]
pub(crate) fn watch(on: bool) {
    let mut sub = subscription();
    let Some(s) = sub.as_mut() else {
        return;
    };
    let before = s.watching;
    s.watching = if on {
        before + 1
    } else {
        before.saturating_sub(1)
    };
    let switched = (before == 0) != (s.watching == 0);
    if switched {
        match (s.handle, load::cupti()) {
            (Some(handle), Some(cupti)) => subscribe::set_watched(cupti, handle, s.watching > 0),
            #[cfg(target_os = "linux")]
            (None, _) => interpose::watch(s.watching > 0),
            _ => {}
        }
    }
    drop(sub); // `demand` takes its own lock, then this one
    if switched {
        demand::hold(on);
    }
}

/// The switches the check's demand (`check/demand.rs`) calls down from the front.
const SWITCHES: demand::Switches = demand::Switches {
    callbacks: set_callbacks,
    watched: watch,
};

/// Enables (or disables) every hooked callback this CUPTI knows; nothing without a subscription
/// (the interposer's wrappers check the scopes themselves).
fn set_callbacks(on: bool) {
    let sub = subscription();
    if let (Some(s), Some(cupti)) = (sub.as_ref(), load::cupti())
        && let Some(handle) = s.handle
    {
        for row in &s.enabled {
            subscribe::enable(cupti, handle, row.domain, row.cbid, on);
        }
    }
}

/// Runs the `#[ignore]`d test `path` of this test binary alone in a child process, and fails
/// unless it passed: for tests whose process-wide state (an installed hook, open scopes) the
/// other tests of the binary would disturb.
#[cfg(test)]
fn run_test_alone(path: &str) {
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args(["--ignored", "--exact", path, "--test-threads=1"])
        .output()
        .expect("re-run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{stderr}"
    );
}
