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
    if crate::guard::state::flags() == 0 {
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
    if crate::guard::state::flags() != 0 {
        let _ = imp::slow(site, std::panic::Location::caller(), imp::Context::InDrop);
    }
}

/// For `#[synchronizes]` functions that cannot return the error: panics in `Mode::Error` too.
#[cfg(not(nosync_off))]
#[track_caller]
#[inline]
pub(crate) fn declare_sync_or_panic(site: &'static SyncSite) {
    if crate::guard::state::flags() != 0 {
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

/// The CUPTI hook's check, made inside the driver's callback: never panics. `Log` and `Warn`
/// report at once (once per site); `Error` and `Panic` keep the violation for the end of the
/// forbid scope (`deferred.rs`). `frames` is called only for a violation that is kept or reported.
#[cfg(all(feature = "hook", not(nosync_off)))]
pub(crate) fn from_hook(site: &'static SyncSite, frames: impl FnOnce() -> Vec<crate::Frame>) {
    imp::from_hook(site, frames);
}

/// A wait a device-runner thread made while this thread was in its current scope
/// (seen by the hook): checked as if this thread had made the call, the violation naming the
/// runner. Never panics (kept for the scope's end in `Error`/`Panic`).
#[cfg(all(feature = "hook", not(nosync_off)))]
pub(crate) fn from_runner(site: &'static SyncSite, runner: String, frames: Vec<crate::Frame>) {
    imp::hooked(site, || frames, Some(runner));
}

/// The CUPTI hook's report of a call that breaks a CUDA-graph capture (`why`), seen while the
/// thread captures or inside a `capture_safe` scope, whatever the scope's kind: the driver
/// rejects the call in an allow scope too. Recorded like a violation; with checks disabled or in
/// `Mode::Allow`, nothing more. In `Error`/`Panic` it is kept for the end of the forbid scope
/// when one is open, and reported on stderr at once when the thread captures outside every
/// forbid scope (no scope end could surface it).
#[cfg(all(feature = "hook", not(nosync_off)))]
pub(crate) fn from_hook_capture(
    site: &'static SyncSite,
    why: &'static str,
    frames: impl FnOnce() -> Vec<crate::Frame>,
) {
    imp::from_hook_capture(site, why, frames);
}

#[cfg(not(nosync_off))]
mod imp {
    use std::io::Write;
    use std::panic::Location;

    use crate::guard::once::{Channel, first_report};
    use crate::guard::state::{self, FORBID, RECORD};
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

    /// What a violation turns into.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Action {
        /// Report once per site on this channel, then carry on.
        Report(Channel),
        /// Return `Err(SyncViolation)`.
        Fail,
        /// Panic with the violation's message.
        Panic,
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    pub(super) fn slow(
        site: &'static SyncSite,
        location: &'static Location<'static>,
        context: Context,
    ) -> Result<(), SyncViolation> {
        let Some((scope, scope_location)) = forbidding_scope(site) else {
            return Ok(());
        };
        let Some(action) = decide(crate::mode(), context) else {
            return Ok(());
        };
        // Reported sites cost a set lookup, not a message: the hot loop stays cheap in Log mode.
        if let Action::Report(channel) = action
            && !first_report(site, channel)
        {
            return Ok(());
        }
        let violation = SyncViolation::new(site, location, scope_location, scope.function);
        match action {
            Action::Report(channel) => report(&violation, channel),
            Action::Fail => return Err(violation),
            Action::Panic => panic!("{violation}"),
        }
        Ok(())
    }

    #[cfg(feature = "hook")]
    pub(super) fn from_hook(site: &'static SyncSite, frames: impl FnOnce() -> Vec<crate::Frame>) {
        hooked(site, frames, None);
    }

    /// A hooked call's wait, made on this thread (`runner: None`) or on a device runner.
    #[cfg(feature = "hook")]
    pub(super) fn hooked(
        site: &'static SyncSite,
        frames: impl FnOnce() -> Vec<crate::Frame>,
        runner: Option<String>,
    ) {
        let Some((scope, scope_location)) = forbidding_scope(site) else {
            return;
        };
        let mode = crate::mode();
        let channel = match mode {
            Mode::Allow => return,
            Mode::Log => Some(Channel::Log),
            Mode::Warn => Some(Channel::Warn),
            Mode::Error | Mode::Panic if std::thread::panicking() => Some(Channel::Unwinding),
            Mode::Error | Mode::Panic => None,
        };
        if let Some(channel) = channel
            && !first_report(site, channel)
        {
            return;
        }
        let here = Location::caller();
        let violation = SyncViolation::new(site, here, scope_location, scope.function)
            .with_frames(frames())
            .on_runner(runner);
        match channel {
            Some(channel) => report(&violation, channel),
            None => crate::guard::deferred::push(violation, mode == Mode::Panic),
        }
    }

    #[cfg(feature = "hook")]
    pub(super) fn from_hook_capture(
        site: &'static SyncSite,
        why: &'static str,
        frames: impl FnOnce() -> Vec<crate::Frame>,
    ) {
        let flags = state::flags();
        if flags & RECORD != 0 {
            crate::guard::report::record(site, true);
        }
        let mode = crate::mode();
        if mode == Mode::Allow || !crate::is_enabled() {
            return;
        }
        let scope = state::innermost();
        let scoped = flags & (FORBID | state::CAPTURE_SAFE) != 0;
        // `None`: kept for the end of the forbid scope.
        let channel = match mode {
            Mode::Error | Mode::Panic if scoped && !std::thread::panicking() => None,
            Mode::Error | Mode::Panic if scoped => Some(Channel::Unwinding),
            Mode::Log => Some(Channel::Log),
            _ => Some(Channel::Warn),
        };
        if let Some(channel) = channel
            && !first_report(site, channel)
        {
            return;
        }
        let here = Location::caller();
        let violation =
            SyncViolation::new(site, here, scope.location.unwrap_or(here), scope.function)
                .with_frames(frames())
                .breaking_capture(why, scoped);
        match channel {
            Some(channel) => report(&violation, channel),
            None => crate::guard::deferred::push(violation, mode == Mode::Panic),
        }
    }

    /// Records `site` for `count_syncs` when asked; the innermost scope and where it was
    /// opened when that scope forbids syncs here (and checks are enabled), else `None`.
    fn forbidding_scope(
        site: &'static SyncSite,
    ) -> Option<(state::Frame, &'static Location<'static>)> {
        let flags = state::flags();
        let forbidden = flags & FORBID != 0 && crate::is_enabled();
        if flags & RECORD != 0 {
            crate::guard::report::record(site, forbidden);
        }
        let scope = state::innermost();
        match (forbidden, scope.location) {
            (true, Some(at)) => Some((scope, at)),
            _ => None,
        }
    }

    /// `None`: ignore the violation.
    fn decide(mode: Mode, context: Context) -> Option<Action> {
        Some(match (mode, context) {
            (Mode::Allow, _) => return None,
            (Mode::Log, _) => Action::Report(Channel::Log),
            (Mode::Warn, _) => Action::Report(Channel::Warn),
            (_, Context::InDrop) => Action::Report(Channel::InDrop),
            (Mode::Error, Context::Returns) => Action::Fail,
            _ if std::thread::panicking() => Action::Report(Channel::Unwinding),
            (Mode::Error | Mode::Panic, _) => Action::Panic,
        })
    }

    /// `Mode::Warn` prints, deliberately: that is what the user asked for. Written with
    /// `io::stderr` rather than `eprintln!`, which panics when stderr fails.
    fn report(v: &SyncViolation, channel: Channel) {
        match channel {
            Channel::Log => log::warn!(target: "nosync", "{v}"),
            Channel::Warn => {
                let _ = writeln!(std::io::stderr().lock(), "nosync: warning: {v}");
            }
            Channel::InDrop => log::error!(target: "nosync", "{v} (in Drop)"),
            Channel::Unwinding => log::error!(target: "nosync", "{v} (while panicking)"),
        }
    }
}
