//! nosync: catch hidden host-device synchronisations in GPU hot paths.
//!
//! (Crate documentation: see the sections below.)

pub use nosync_macros::{allow_sync, no_sync, synchronizes};

mod check;
mod future;
mod mode;
mod once;
mod report;
mod scope;
mod site;
#[cfg(not(nosync_off))]
mod state;
mod violation;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

#[cfg(feature = "cuda")]
pub mod gpu;

pub use check::{declare_sync, declare_sync_in_drop};
pub use future::{FutureExt, NoSync};
pub use mode::{MODE_ENV, Mode, ParseModeError, mode, set_mode, with_mode};
pub use report::{SiteCount, SyncReport, assert_no_sync, count_syncs};
pub use scope::{
    AllowGuard, ForbidGuard, allow, allow_sync, allow_sync_once, forbid, is_enabled, is_forbidden,
    no_sync, set_enabled,
};
pub use site::{SyncKind, SyncSite};
pub use violation::SyncViolation;

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
