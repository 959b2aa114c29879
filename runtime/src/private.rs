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
    crate::scope::forbid_at(Location::caller(), Some(function))
}

/// An allow scope for an `#[allow_sync(reason = "..")]` function. The reason is for readers and
/// the lint; the runtime does not keep it.
#[track_caller]
#[inline]
pub fn allow_fn(function: &'static str, _reason: &'static str) -> AllowGuard {
    crate::scope::allow_at(Location::caller(), Some(function))
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
    crate::check::declare_sync_or_panic(site);
}
