//! The seam: what the guard tells the layer above it, without knowing who listens.
//!
//! The guard emits a few events (a forbid scope opening, a scope's span, a capture-safe scope,
//! a scope change that must catch up with device runners). An [`Observer`] answers them. The
//! crate root wires one in at compile time (`lib.rs`, `type Wired`): the hook with the
//! feature `hook`, else [`Unobserved`], whose answers are empty and inline to nothing. Static
//! dispatch keeps a scope's entry and exit as cheap as a direct call into the hook.

use std::panic::Location;

use crate::Wired;

/// What the layer above the guard does at the guard's events. Every method has an empty
/// default, so an observer overrides only what it needs.
pub(crate) trait Observer {
    /// Whether the observer watches device-runner threads (see [`Observer::runner_latest`]).
    /// `false` compiles the runner check out of every scope change.
    const RUNNERS: bool = false;

    /// What a forbid scope or a `count_syncs` holds while open; dropping it ends the demand.
    type Demand: std::fmt::Debug;

    /// A forbid scope is about to open (also with `--cfg nosync_off`): the hook installs
    /// itself here when the environment asks for it.
    #[inline(always)]
    fn forbid_opening() {}

    /// A forbid scope or a `count_syncs` opens: the hook's callbacks must be on while it lives.
    fn demand() -> Self::Demand;

    /// A scope opens (`begin`) or the innermost one closes, for the hook's trace.
    #[inline(always)]
    fn scope_span(
        _begin: bool,
        _forbid: bool,
        _location: Option<&'static Location<'static>>,
        _function: Option<&'static str>,
    ) {
    }

    /// A `capture_safe` scope opens (`true`) or closes.
    #[inline(always)]
    fn capture_safe(_open: bool) {}

    /// The number of the last wait a device-runner thread recorded (0: none yet).
    #[inline(always)]
    fn runner_latest() -> u64 {
        0
    }

    /// Checks, in the thread's current scope, the runner waits numbered `seen + 1 ..= now`.
    #[inline(always)]
    fn runner_check_since(_seen: u64, _now: u64) {}
}

/// No one listens: the build without the hook.
#[derive(Debug)]
#[cfg_attr(feature = "hook", allow(dead_code))]
pub(crate) struct Unobserved;

impl Observer for Unobserved {
    type Demand = ();

    #[inline(always)]
    fn demand() {}
}

/// The demand a forbid scope or a `count_syncs` holds.
pub(crate) type Demand = <Wired as Observer>::Demand;

#[inline(always)]
pub(crate) fn forbid_opening() {
    <Wired as Observer>::forbid_opening();
}

#[inline(always)]
#[cfg_attr(nosync_off, allow(dead_code))]
pub(crate) fn demand() -> Demand {
    <Wired as Observer>::demand()
}

#[inline(always)]
#[cfg_attr(nosync_off, allow(dead_code))]
pub(crate) fn scope_span(
    begin: bool,
    forbid: bool,
    location: Option<&'static Location<'static>>,
    function: Option<&'static str>,
) {
    <Wired as Observer>::scope_span(begin, forbid, location, function);
}

#[inline(always)]
#[cfg_attr(nosync_off, allow(dead_code))]
pub(crate) fn capture_safe(open: bool) {
    <Wired as Observer>::capture_safe(open);
}

/// Whether the runner check runs at all in this build.
#[cfg_attr(nosync_off, allow(dead_code))]
pub(crate) const RUNNERS: bool = <Wired as Observer>::RUNNERS;

#[inline(always)]
#[cfg_attr(nosync_off, allow(dead_code))]
pub(crate) fn runner_latest() -> u64 {
    <Wired as Observer>::runner_latest()
}

#[inline(always)]
#[cfg_attr(nosync_off, allow(dead_code))]
pub(crate) fn runner_check_since(seen: u64, now: u64) {
    <Wired as Observer>::runner_check_since(seen, now);
}
