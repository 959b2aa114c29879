//! `declare_sync`: the check every blocking operation runs first.

use crate::{SyncSite, SyncViolation};

/// Checks a blocking operation against the current thread's scope. Call it first thing in every
/// function that can block the host.
///
/// Outside any forbid scope (or inside an allow scope) this is one thread-local read. Inside a
/// forbid scope the current [`Mode`](crate::Mode) decides: nothing, a log record or a stderr line
/// (once per site), `Err`, or a panic. It never panics while the thread is already panicking:
/// it logs instead. Inside `count_syncs` the site is recorded in every mode.
#[cfg(not(nosync_off))]
#[track_caller]
#[inline]
pub fn declare_sync(site: &'static SyncSite) -> Result<(), SyncViolation> {
    if crate::state::flags() == 0 {
        return Ok(());
    }
    imp::slow(site, std::panic::Location::caller(), imp::Context::Returns)
}

/// Like [`declare_sync`] but for `Drop` implementations: never panics and returns nothing. A
/// violation is recorded (it shows in [`count_syncs`](crate::count_syncs)) and logged once per
/// site (`log::error!`, or the stderr line in `Mode::Warn`, nothing in `Mode::Allow`).
#[cfg(not(nosync_off))]
#[track_caller]
#[inline]
pub fn declare_sync_in_drop(site: &'static SyncSite) {
    if crate::state::flags() != 0 {
        let _ = imp::slow(site, std::panic::Location::caller(), imp::Context::InDrop);
    }
}

/// For `#[synchronizes]` functions that cannot return the error: panics in `Mode::Error` too.
#[cfg(not(nosync_off))]
#[track_caller]
#[inline]
pub(crate) fn declare_sync_or_panic(site: &'static SyncSite) {
    if crate::state::flags() != 0 {
        let _ = imp::slow(
            site,
            std::panic::Location::caller(),
            imp::Context::MustPanic,
        );
    }
}

/// Compiled out (`--cfg nosync_off`): always `Ok(())`.
#[cfg(nosync_off)]
#[track_caller]
#[inline(always)]
pub fn declare_sync(_site: &'static SyncSite) -> Result<(), SyncViolation> {
    Ok(())
}

/// Compiled out (`--cfg nosync_off`): does nothing.
#[cfg(nosync_off)]
#[track_caller]
#[inline(always)]
pub fn declare_sync_in_drop(_site: &'static SyncSite) {}

#[cfg(nosync_off)]
#[track_caller]
#[inline(always)]
pub(crate) fn declare_sync_or_panic(_site: &'static SyncSite) {}

#[cfg(not(nosync_off))]
mod imp {
    use std::io::Write;
    use std::panic::Location;

    use crate::once::{Channel, first_report};
    use crate::state::{self, FORBID, RECORD};
    use crate::{Mode, SyncSite, SyncViolation};

    /// How the caller can take a violation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) enum Context {
        /// `declare_sync`: `Mode::Error` returns the error.
        Returns,
        /// `declare_sync_or_panic`: `Mode::Error` panics like `Mode::Panic`.
        MustPanic,
        /// `declare_sync_in_drop`: never panics, logs.
        InDrop,
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    pub(super) fn slow(
        site: &'static SyncSite,
        location: &'static Location<'static>,
        context: Context,
    ) -> Result<(), SyncViolation> {
        let flags = state::flags();
        let forbidden = flags & FORBID != 0 && crate::is_enabled();
        if flags & RECORD != 0 {
            crate::report::record(site, forbidden);
        }
        if !forbidden {
            return Ok(());
        }
        let scope = state::innermost();
        let (Some(scope_location), mode) = (scope.location, crate::mode()) else {
            return Ok(()); // unreachable: FORBID is only set by a scope's frame
        };
        if mode == Mode::Allow {
            return Ok(());
        }
        let violation = SyncViolation::new(site, location, scope_location, scope.function);
        act(violation, mode, context)
    }

    #[track_caller]
    fn act(v: SyncViolation, mode: Mode, context: Context) -> Result<(), SyncViolation> {
        match (mode, context) {
            (Mode::Allow, _) => {}
            (Mode::Log, _) => log_once(&v, Channel::Log, log::Level::Warn, ""),
            (Mode::Warn, _) => warn_once(&v),
            (_, Context::InDrop) => log_once(&v, Channel::DropLog, log::Level::Error, " (in Drop)"),
            (Mode::Error, Context::Returns) => return Err(v),
            _ if std::thread::panicking() => {
                log_once(
                    &v,
                    Channel::DropLog,
                    log::Level::Error,
                    " (while panicking)",
                );
            }
            (Mode::Error | Mode::Panic, _) => panic!("{v}"),
        }
        Ok(())
    }

    fn log_once(v: &SyncViolation, channel: Channel, level: log::Level, note: &str) {
        if first_report(v.site(), channel) {
            log::log!(target: "nosync", level, "{v}{note}");
        }
    }

    /// `Mode::Warn` prints, deliberately: that is what the user asked for. Written with
    /// `io::stderr` rather than `eprintln!`, which panics when stderr fails.
    fn warn_once(v: &SyncViolation) {
        if first_report(v.site(), Channel::Warn) {
            let _ = writeln!(std::io::stderr().lock(), "nosync: warning: {v}");
        }
    }
}
