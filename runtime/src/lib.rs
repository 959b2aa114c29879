//! nosync: catch hidden host-device synchronisations in GPU hot paths.
//!
//! GPU code is fast only while the host never waits for the device. A hot path marked
//! [`#[no_sync]`](macro@no_sync) runs inside a *forbid scope*; every API that blocks the host is
//! marked [`#[synchronizes]`](macro@synchronizes) (or calls [`declare_sync`] first, as the
//! `gpu` operations do). A blocking call inside a forbid scope is a violation, reported according
//! to the current [`Mode`]:
//!
//! ```
//! use nosync::{Mode, SyncViolation, no_sync, synchronizes};
//!
//! #[synchronizes(reason = "waits for all work on the stream")]
//! fn synchronize() -> Result<(), SyncViolation> {
//!     Ok(()) // the real wait
//! }
//!
//! #[no_sync]
//! fn train_step() -> Result<(), SyncViolation> {
//!     // ... launch kernels ...
//!     synchronize()?; // a hidden host wait in the hot path
//!     Ok(())
//! }
//!
//! # if nosync::COMPILED_OUT { return; } // built with --cfg nosync_off: nothing to catch
//! // Mode::Error returns the violation (the debug default, Mode::Panic, panics with it).
//! let err = nosync::with_mode(Mode::Error, train_step).unwrap_err();
//! assert_eq!((err.site().api, err.scope_function()), ("synchronize", Some("train_step")));
//! assert!(err.to_string().starts_with(
//!     "`synchronize` blocks the host (waits for all work on the stream) \
//!      inside #[no_sync] `train_step` ("
//! ));
//! assert!(err.to_string().ends_with("wrap it in nosync::allow_sync(..) if this wait is intended"));
//!
//! // An intended wait is allowed explicitly; outside the hot path nothing is checked.
//! nosync::with_mode(Mode::Error, || nosync::no_sync(|| nosync::allow_sync(synchronize))).unwrap();
//! synchronize().unwrap();
//! ```
//!
//! # Scopes
//!
//! [`forbid()`] and [`allow()`] return RAII guards ([`ForbidGuard`], [`AllowGuard`]); the closure
//! forms [`no_sync()`](fn@no_sync) and [`allow_sync()`](fn@allow_sync) wrap them, and
//! [`allow_sync_expr!`] is the expression-level escape that keeps `?` and `return`. The innermost
//! live scope wins in both directions: an allow scope inside a forbid scope allows, a forbid scope
//! inside an allow scope forbids. Guards are `#[must_use]` and `!Send`, remember where the scope
//! began (`#[track_caller]`; `#[no_sync]` scopes also name their function), and restore the
//! previous state when dropped, also when a panic unwinds through them. Dropping guards out of
//! order does not corrupt the state: the innermost guard still alive decides. [`is_forbidden`]
//! says whether a sync declared here would be a violation.
//!
//! # Modes
//!
//! | [`Mode`] | a sync inside a forbid scope |
//! |---|---|
//! | `Allow` | nothing |
//! | `Log` | one [`log`](https://docs.rs/log) record (target `nosync`, level `warn`) per site |
//! | `Warn` | one line on stderr per site |
//! | `Error` | [`declare_sync`] returns `Err(`[`SyncViolation`]`)`; `#[synchronizes]` functions that do not return a `Result` panic |
//! | `Panic` | panics with the violation's message |
//!
//! The default is `Panic` when `nosync` is built with `debug_assertions` and `Log` without. The
//! environment variable `NOSYNC_MODE=allow|log|warn|error|panic` (read once, case-insensitive)
//! replaces it; an invalid value prints one message naming the valid values to stderr and keeps
//! the default. [`set_mode`] sets the process-wide mode, [`with_mode`] overrides it on the current
//! thread for a closure. Every `NOSYNC_*` variable takes that policy: an unknown value is one
//! line on stderr naming what it takes, and the default stands. Stderr is written in two places,
//! both on purpose: a `Mode::Warn` report, and one line where a logger may not be installed yet
//! (an unknown `NOSYNC_*` value; with the hook, a hook the environment asked for and could not
//! install, the interposer's note of what it left alone, the `NOSYNC_REPORT` summary). Both use
//! `io::stderr` directly and ignore write errors, so they never panic.
//!
//! A [`SyncViolation`] carries the site, its reason, where the forbid scope began (and the
//! function, for `#[no_sync]`), where the sync was declared and the thread's name; its `Display`
//! is one actionable line.
//!
//! # Panics, `Drop`, warm-up
//!
//! `declare_sync` never panics while the thread is already panicking: it logs (`log::error!`, once
//! per site) instead. `Drop` implementations call [`declare_sync_in_drop`], which never panics in
//! any mode and logs the same way. Both kinds still show in [`count_syncs`] reports.
//!
//! [`set_enabled(false)`](set_enabled) switches every check off process-wide (for example during
//! warm-up) and [`allow_sync_once`] allows the first execution from each call site (lazy
//! initialisation) and checks the later ones.
//!
//! # Tests
//!
//! [`count_syncs`] returns a [`SyncReport`] of every site declared on this thread inside a closure
//! (counts, may/does, violation or not; nested calls work) and [`assert_no_sync`] panics with that
//! report if anything declared a sync at all.
//!
//! # The hook
//!
//! With the feature `cupti`, `hook::install` (or `NOSYNC_HOOK=1`) checks every blocking CUDA
//! call in the process, from any library (cudarc, candle, cubecl, C++), against the calling
//! thread's scope: through nosync's own wrappers of the driver's calls when it is installed
//! before the first CUDA call (Linux), else through CUPTI's callback API; see the `hook` module.
//! Its violations carry the first stack frames outside cudarc and nosync
//! ([`SyncViolation::frames`]); in `Mode::Error` and `Mode::Panic` they surface when the forbid
//! scope ends (the check runs inside the driver call, where nothing may panic).
//!
//! # Async
//!
//! A guard held across `.await` would be wrong: the executor may resume the task on another
//! thread, and the old thread runs other tasks under a flag that is not theirs. [`NoSync`]
//! ([`FutureExt::no_sync`], or `#[no_sync]` on an `async fn`) opens the forbid scope inside each
//! `poll` and closes it before `poll` returns, so the scope follows the task from thread to thread
//! and never leaks to other tasks.
//!
//! # Threads
//!
//! The state is per thread. A spawned thread (`std::thread::spawn`, scoped threads, thread pools)
//! starts outside any scope, whatever the spawning thread's scope: wrap the thread's work in
//! [`no_sync()`](fn@no_sync) if it is a hot path too. [`set_mode`] and [`set_enabled`] are
//! process-wide; [`with_mode`] is per thread.
//!
//! # Cost, and compiling the checks out
//!
//! Outside a forbid scope, [`declare_sync`] is one read of a thread-local `Cell<u32>` (below a
//! nanosecond, cheaper than an empty non-inlined call); a guard's enter and exit copy one small
//! frame in and out of the thread-local state without allocating. `runtime/benches/guard.rs`
//! measures both.
//!
//! Building with `RUSTFLAGS="--cfg nosync_off"` compiles every check out while keeping the API
//! identical: `declare_sync` is an `#[inline(always)]` `Ok(())`, the guards are zero-sized and do
//! nothing, `is_forbidden` is `false` and `count_syncs` reports nothing. The attributes keep
//! compiling (they expand to the same calls, which then vanish). Modes and `set_enabled` keep
//! their values but have nothing to act on.

// A library never prints to stdout. Stderr is written in two functions only: `Mode::Warn`'s
// report (`guard/check.rs`) and `guard/env.rs`'s `say` (the lines no logger may see yet), with
// `writeln!` to a locked stderr, which cannot panic.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub use nosync_macros::{allow_sync, no_sync, synchronizes};

// The unit tests use the attributes, which name the crate `::nosync`.
#[cfg(test)]
extern crate self as nosync;

mod guard;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

#[cfg(feature = "cuda")]
pub mod gpu;
#[cfg(feature = "hook")]
pub mod hook;
/// The error of the GPU operations ([`gpu::Error`]).
#[cfg(feature = "cuda")]
pub use gpu::Error;

/// The observer of the guard's seam (`guard/seam.rs`), wired here, at the crate root: the hook
/// with the feature `hook`, else no one.
#[cfg(feature = "hook")]
type Wired = hook::Observed;
#[cfg(not(feature = "hook"))]
type Wired = guard::seam::Unobserved;

/// `true` when this build compiled every check out (`--cfg nosync_off`), for tests that must
/// pass either way.
pub const COMPILED_OUT: bool = cfg!(nosync_off);

pub use guard::check::{declare_sync, declare_sync_in_drop};
pub use guard::future::{FutureExt, NoSync};
pub use guard::mode::{MODE_ENV, Mode, ParseModeError, mode, set_mode, with_mode};
pub use guard::report::{SiteCount, SyncReport, assert_no_sync, count_syncs};
pub use guard::scope::{
    AllowGuard, CaptureSafeGuard, ForbidGuard, allow, allow_sync, allow_sync_once, capture_safe,
    capture_safe_scope, forbid, is_enabled, is_forbidden, no_sync, set_enabled,
};
pub use guard::site::{SyncKind, SyncSite};
pub use guard::violation::{Frame, SyncViolation};

/// The expression-level escape: evaluates `expr` inside an allow scope. Unlike the closure form
/// [`allow_sync()`](fn@allow_sync), `?`, `return` and `break` inside `expr` keep their meaning.
///
/// ```
/// static WAIT: nosync::SyncSite = nosync::SyncSite::does("wait", "blocks");
/// fn step() -> Result<u32, nosync::SyncViolation> {
///     let _hot = nosync::forbid();
///     nosync::allow_sync_expr!(nosync::declare_sync(&WAIT)?);
///     Ok(1)
/// }
/// assert_eq!(step().unwrap(), 1);
/// ```
#[macro_export]
macro_rules! allow_sync_expr {
    ($e:expr) => {{
        let __nosync_allow_guard = $crate::allow();
        $e
    }};
}
