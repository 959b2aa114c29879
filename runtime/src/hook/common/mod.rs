//! What the hook's backends and its front share: the install's error ([`HookError`]), the
//! backend chosen ([`Backend`]) and how `NOSYNC_HOOK` names it, the installation
//! ([`Subscription`]), and what the installed hook sees ([`coverage`]). The front re-exports
//! the public ones.

pub(in crate::hook) mod coverage;

use std::path::PathBuf;

use super::check::ffi;
use super::check::table::Hooked;
use crate::guard::env::{self, CUPTI_ENV, EnvError, HOOK_ENV};

/// Why the hook could not be installed. Nothing else changed: the rest of nosync works as before.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// No CUDA driver library.
    #[error(
        "the CUDA driver library was not found (looked for {looked_for:?} on the loader's search path)"
    )]
    NoDriver {
        /// The library names asked for.
        looked_for: Vec<String>,
    },
    /// The driver is there but does not start (no device, no permission).
    #[error(
        "the CUDA driver did not start: `{call}` returned {code} (driver API version {version})"
    )]
    Driver {
        /// The failing call.
        call: &'static str,
        /// Its result.
        code: String,
        /// `cuDriverGetVersion`, 0 if unknown.
        version: i32,
    },
    /// No libcupti.
    #[error(
        "libcupti was not found: looked for {looked_for:?} on the loader's search path and for libcupti.so* in {searched:?}; set {CUPTI_ENV} to the library or add its directory to LD_LIBRARY_PATH"
    )]
    NoCupti {
        /// The library names asked for.
        looked_for: Vec<String>,
        /// The directories searched.
        searched: Vec<PathBuf>,
    },
    /// A library was found but lacks an entry point the hook calls (a driver or CUPTI too old).
    #[error("{library} has no `{symbol}` (a driver or CUPTI older than CUDA 11?)")]
    MissingSymbol {
        /// The library: its name on the loader's path, or the file loaded.
        library: String,
        /// The missing entry point.
        symbol: &'static str,
    },
    /// Another subscriber holds CUPTI's callback API.
    #[error(
        "another CUPTI subscriber is registered (a profiler such as Nsight Systems or PyTorch's; CUPTI before 13.2 allows only one)"
    )]
    OtherSubscriber,
    /// A CUPTI call failed.
    #[error("`{call}` of {library} failed: {code} (driver API version {version})")]
    Cupti {
        /// The failing call.
        call: &'static str,
        /// CUPTI's text for its result, and the number.
        code: String,
        /// Where libcupti was loaded from.
        library: String,
        /// `cuDriverGetVersion`.
        version: i32,
    },
    /// [`Backend::Interpose`] was asked for where it cannot see every call.
    #[error("the interposer cannot serve here: {reason}")]
    Interpose {
        /// Why (the platform, or the driver already initialized).
        reason: String,
    },
    /// `NOSYNC_HOOK` holds a value nosync does not know.
    #[error("{}", env_error(value))]
    Env {
        /// The variable's value.
        value: String,
    },
    /// Built with `--cfg nosync_off`: there is no check to run.
    #[error("nosync was built with --cfg nosync_off: every check is compiled out")]
    CompiledOut,
}

/// How the hook sees the driver calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backend {
    /// [`Interpose`](Backend::Interpose) where it sees every call: the driver is not initialized
    /// yet (no code of the process has called `cuInit`, so none holds a driver function it did
    /// not look up since), or the interposer was installed before it was; else
    /// [`Cupti`](Backend::Cupti). What [`install`](super::install) uses.
    Auto,
    /// CUPTI's callback API: every driver and runtime call of the process, from any library and
    /// any time, also the calls CUDA's own libraries make; attached, CUPTI adds about 35 ns to
    /// every driver call (measured in `docs/gpu.md`), and it admits one subscriber (no profiler
    /// beside it).
    Cupti,
    /// nosync's wrappers in the program's import slots and in what its `dlsym` and `dlopen`
    /// return (Linux, x86-64 and AArch64): the calls of code that links or loads the driver
    /// itself (cudarc in either linking mode: candle, cubecl, burn), resolved after the install;
    /// not the driver calls the CUDA runtime makes itself. A call outside every scope costs a
    /// thread-local read. It must be installed before the first CUDA call of the process (or
    /// have been, earlier): else it is an error, as it would miss what was looked up before.
    Interpose,
}

/// What `NOSYNC_HOOK` takes, for its error.
const TAKES: &str = "0, 1, auto, cupti, interpose";

/// The error of a `NOSYNC_HOOK` value nosync does not know.
fn env_error(value: &str) -> EnvError {
    EnvError {
        var: HOOK_ENV,
        value: value.to_owned(),
        takes: TAKES,
    }
}

/// What `NOSYNC_HOOK` says: `None` for "do not install on the first scope" (unset, empty, `0`),
/// else the backend it asks for.
pub(in crate::hook) fn env_backend() -> Result<Option<Backend>, HookError> {
    match env::var(HOOK_ENV).as_deref() {
        None | Some("0") => Ok(None),
        Some("1" | "auto") => Ok(Some(Backend::Auto)),
        Some("cupti") => Ok(Some(Backend::Cupti)),
        Some("interpose") => Ok(Some(Backend::Interpose)),
        Some(value) => Err(HookError::Env {
            value: value.to_owned(),
        }),
    }
}

/// The installation, shared by every live [`Hook`](super::Hook).
pub(in crate::hook) struct Subscription {
    /// CUPTI's subscriber; `None` for the interposer.
    pub(in crate::hook) handle: Option<ffi::Subscriber>,
    pub(in crate::hook) hooks: usize,
    pub(in crate::hook) enabled: Vec<&'static Hooked>,
    /// How many captures and `capture_safe` scopes want the watched queries and launches.
    #[cfg_attr(nosync_off, allow(dead_code))]
    pub(in crate::hook) watching: usize,
}

impl Subscription {
    pub(in crate::hook) fn backend(&self) -> Backend {
        if self.handle.is_some() {
            Backend::Cupti
        } else {
            Backend::Interpose
        }
    }
}

// SAFETY: the handle is an opaque token CUPTI accepts from any thread.
unsafe impl Send for Subscription {}
