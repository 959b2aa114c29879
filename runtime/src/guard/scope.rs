//! Forbid and allow scopes: RAII guards, their closure forms, and the process-wide switch.

use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, Ordering};

use super::seam;
#[cfg(not(nosync_off))]
use super::state;

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Switches every check on or off, process-wide (for example off during warm-up). While off,
/// `declare_sync` never reports a violation; [`count_syncs`](crate::count_syncs) still counts.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether checks are on (see [`set_enabled`]).
#[inline]
pub fn is_enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether a sync declared here would be a violation: the innermost live scope of this thread
/// forbids, and checks are enabled. Always `false` with `--cfg nosync_off`.
#[inline]
pub fn is_forbidden() -> bool {
    #[cfg(not(nosync_off))]
    {
        state::flags() & state::FORBID != 0 && is_enabled()
    }
    #[cfg(nosync_off)]
    {
        false
    }
}

/// One open scope on the current thread. `!Send` and `!Sync`: it belongs to the thread's state.
struct Scope {
    #[cfg(not(nosync_off))]
    opened: state::Opened,
    _not_send: PhantomData<*const ()>,
}

impl Scope {
    #[inline]
    #[cfg_attr(nosync_off, allow(unused_variables))]
    fn open(
        forbid: bool,
        location: &'static Location<'static>,
        function: Option<&'static str>,
    ) -> Scope {
        #[cfg(not(nosync_off))]
        seam::scope_span(true, forbid, Some(location), function);
        Scope {
            #[cfg(not(nosync_off))]
            opened: state::push(forbid, location, function),
            _not_send: PhantomData,
        }
    }
}

impl Drop for Scope {
    #[inline]
    fn drop(&mut self) {
        #[cfg(not(nosync_off))]
        {
            seam::scope_span(false, self.opened.forbids(), None, None);
            state::pop(&self.opened);
            // Violations the CUPTI hook could not act on inside the driver surface here.
            if self.opened.forbids() && state::flags() & state::PENDING != 0 {
                super::deferred::surface_at_scope_end();
            }
        }
    }
}

/// While alive, syncs declared on this thread are violations (unless an inner [`AllowGuard`] is
/// alive). Dropping it, also by unwinding, ends the scope. Created by [`forbid`]. Leaking it
/// (`mem::forget`) leaves the scope open on this thread until a guard opened before it is dropped.
#[must_use = "the scope ends when the guard is dropped; bind it with `let _guard = ..`"]
pub struct ForbidGuard {
    scope: Scope,
    /// Keeps the observer's demand (the hook's callbacks on) while the scope is open.
    #[cfg(not(nosync_off))]
    _demand: seam::Demand,
}

/// While alive, syncs declared on this thread are allowed (unless an inner [`ForbidGuard`] is
/// alive). Dropping it, also by unwinding, ends the scope. Created by [`allow`].
#[must_use = "the scope ends when the guard is dropped; bind it with `let _guard = ..`"]
pub struct AllowGuard {
    scope: Scope,
}

impl fmt::Debug for ForbidGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_scope(f, "ForbidGuard", &self.scope)
    }
}

impl fmt::Debug for AllowGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_scope(f, "AllowGuard", &self.scope)
    }
}

fn debug_scope(f: &mut fmt::Formatter<'_>, name: &str, scope: &Scope) -> fmt::Result {
    let mut s = f.debug_struct(name);
    #[cfg(not(nosync_off))]
    s.field("opened", &scope.opened);
    #[cfg(nosync_off)]
    let _ = scope;
    s.finish()
}

#[inline]
pub(crate) fn forbid_at(
    loc: &'static Location<'static>,
    function: Option<&'static str>,
) -> ForbidGuard {
    seam::forbid_opening();
    ForbidGuard {
        #[cfg(not(nosync_off))]
        _demand: seam::demand(),
        scope: Scope::open(true, loc, function),
    }
}

#[inline]
pub(crate) fn allow_at(
    loc: &'static Location<'static>,
    function: Option<&'static str>,
) -> AllowGuard {
    AllowGuard {
        scope: Scope::open(false, loc, function),
    }
}

/// Opens a forbid scope that lasts until the guard is dropped; it remembers where it began.
///
/// ```
/// # if nosync::COMPILED_OUT { return; }
/// let _hot = nosync::forbid();
/// assert!(nosync::is_forbidden());
/// {
///     let _wait_ok = nosync::allow();
///     assert!(!nosync::is_forbidden());
/// }
/// assert!(nosync::is_forbidden());
/// ```
#[track_caller]
#[inline]
pub fn forbid() -> ForbidGuard {
    forbid_at(Location::caller(), None)
}

/// Opens an allow scope that lasts until the guard is dropped.
#[track_caller]
#[inline]
pub fn allow() -> AllowGuard {
    allow_at(Location::caller(), None)
}

/// Runs `f` inside a forbid scope.
#[track_caller]
pub fn no_sync<R>(f: impl FnOnce() -> R) -> R {
    let _guard = forbid();
    f()
}

/// Runs `f` inside an allow scope: the escape hatch for a wait that is intended.
#[track_caller]
pub fn allow_sync<R>(f: impl FnOnce() -> R) -> R {
    let _guard = allow();
    f()
}

/// Runs `f` inside an allow scope the first time this call site executes (in the whole process),
/// and under the enclosing scope every later time. For one-off syncs such as lazy initialisation.
#[track_caller]
pub fn allow_sync_once<R>(f: impl FnOnce() -> R) -> R {
    let site = Location::caller();
    if cfg!(not(nosync_off)) && super::once::first_time(site) {
        let _guard = allow_at(site, None);
        f()
    } else {
        f()
    }
}

/// While alive: a forbid scope that also demands CUDA-graph capture safety. With the CUPTI
/// hook installed, every call that would break a capture (see [`capture_safe`]) is reported as
/// if the thread were capturing a stream. Created by [`capture_safe_scope`].
#[must_use = "the scope ends when the guard is dropped; bind it with `let _guard = ..`"]
pub struct CaptureSafeGuard {
    // Dropped after `Drop::drop` below: the capture demand ends first, then the forbid scope
    // (which surfaces the violations kept for it).
    _forbid: ForbidGuard,
}

impl fmt::Debug for CaptureSafeGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureSafeGuard")
            .field("forbid", &self._forbid)
            .finish()
    }
}

impl Drop for CaptureSafeGuard {
    #[inline]
    fn drop(&mut self) {
        #[cfg(not(nosync_off))]
        {
            state::capture_safe(false);
            seam::capture_safe(false);
        }
    }
}

#[inline]
pub(crate) fn capture_safe_at(
    loc: &'static Location<'static>,
    function: Option<&'static str>,
) -> CaptureSafeGuard {
    let forbid = forbid_at(loc, function);
    #[cfg(not(nosync_off))]
    {
        state::capture_safe(true);
        seam::capture_safe(true);
    }
    CaptureSafeGuard { _forbid: forbid }
}

/// Opens a `capture_safe` scope that lasts until the guard is dropped (see [`capture_safe`]).
#[track_caller]
#[inline]
pub fn capture_safe_scope() -> CaptureSafeGuard {
    capture_safe_at(Location::caller(), None)
}

/// Runs `f` inside a forbid scope that also demands CUDA-graph capture safety: besides every
/// sync (a forbid scope's check), the CUPTI hook reports each call that would break a capture
/// of mode global, as if the thread were capturing a stream: synchronous allocation and free,
/// module loads and unloads, any use of the legacy default stream, async copies of pageable
/// memory. For tests of code that runs under capture elsewhere. An allow scope inside does not
/// allow these: the driver rejects them in a capture whatever the scope. Without the hook, it is
/// a forbid scope.
///
/// ```
/// # if nosync::COMPILED_OUT { return; }
/// nosync::capture_safe(|| assert!(nosync::is_forbidden()));
/// ```
#[track_caller]
pub fn capture_safe<R>(f: impl FnOnce() -> R) -> R {
    let _guard = capture_safe_scope();
    f()
}
