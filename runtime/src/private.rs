//! Entry points for the expansions of `nosync-macros`. Not a public API.

use std::panic::Location;

use crate::{AllowGuard, ForbidGuard, NoSync};

pub use crate::{SyncKind, SyncSite, SyncViolation, declare_sync};
pub use core::convert::From;
pub use core::future::Future;
pub use core::result::Result;

/// A forbid scope that names the `#[no_sync]` function it belongs to.
#[track_caller]
#[inline]
pub fn forbid_fn(function: &'static str) -> ForbidGuard {
    crate::guard::scope::forbid_at(Location::caller(), Some(function))
}

/// A `capture_safe` scope that names the `#[no_sync(capture_safe)]` function it belongs to.
#[track_caller]
#[inline]
pub fn capture_safe_fn(function: &'static str) -> crate::CaptureSafeGuard {
    crate::guard::scope::capture_safe_at(Location::caller(), Some(function))
}

/// An allow scope for an `#[allow_sync(reason = "..")]` function. The reason is for readers and
/// the lint; the runtime does not keep it.
#[track_caller]
#[inline]
pub fn allow_fn(function: &'static str, _reason: &'static str) -> AllowGuard {
    crate::guard::scope::allow_at(Location::caller(), Some(function))
}

/// The body of an `async fn` marked `#[no_sync]`.
#[track_caller]
pub fn no_sync_future<F: Future>(fut: F, function: &'static str) -> NoSync<F> {
    NoSync::new(fut, Location::caller(), Some(function))
}

/// For `#[synchronizes]` on functions that cannot return the error: panics in `Mode::Error` too.
#[track_caller]
#[inline]
pub fn declare_sync_or_panic(site: &'static SyncSite) {
    crate::guard::check::declare_sync_or_panic(site);
}

/// Runs a `#[no_sync]` fn's body (the expansion's closure). `FnOnce`, so the body may return
/// borrows of what it captured by move.
#[inline(always)]
pub fn call_once<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// The end of a `#[no_sync]` fn returning `Result<T, E>`: a violation the CUPTI hook kept for
/// this scope becomes the `Err` when `E: From<SyncViolation>` ([`ReturnViolation`]), and otherwise
/// stays for the guard's `Drop`, which panics with it ([`KeepViolation`]).
pub struct Finish<T, E>(core::marker::PhantomData<fn() -> (T, E)>);

impl<T, E> Finish<T, E> {
    /// The finisher for this result's type.
    #[inline(always)]
    pub fn of(_: &Result<T, E>) -> Self {
        Finish(core::marker::PhantomData)
    }
}

impl<T, E> core::fmt::Debug for Finish<T, E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Finish")
    }
}

/// Found first (on `Finish` itself) when the error can take the violation.
pub trait ReturnViolation<T, E> {
    /// The result, or the kept violation as `Err`.
    fn finish(&self, result: Result<T, E>) -> Result<T, E>;
}

impl<T, E: From<SyncViolation>> ReturnViolation<T, E> for Finish<T, E> {
    #[inline]
    fn finish(&self, result: Result<T, E>) -> Result<T, E> {
        #[cfg(not(nosync_off))]
        if let Some(violation) = crate::guard::deferred::take_returnable() {
            return match result {
                Ok(_) => Err(E::from(violation)),
                Err(e) => {
                    crate::guard::deferred::log_unreturned(&violation);
                    Err(e)
                }
            };
        }
        result
    }
}

/// The fallback (on `&Finish`): the error cannot take it; the guard's `Drop` panics with it.
pub trait KeepViolation<T, E> {
    /// The result, unchanged.
    fn finish(&self, result: Result<T, E>) -> Result<T, E>;
}

impl<T, E> KeepViolation<T, E> for &Finish<T, E> {
    #[inline(always)]
    fn finish(&self, result: Result<T, E>) -> Result<T, E> {
        result
    }
}
