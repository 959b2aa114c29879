//! The hook's side of the guard's seam (`guard/seam.rs`): what it does when a scope opens or
//! closes, a `capture_safe` scope changes, or a thread must catch up with device runners.

use std::panic::Location;

use super::check::demand;
use super::check::runner;
use super::from_env;
use super::report::summary;
use crate::guard::seam::Observer;

/// The hook, as the guard's observer (wired in at the crate root).
#[derive(Debug)]
pub(crate) struct Observed;

impl Observer for Observed {
    const RUNNERS: bool = true;

    type Demand = demand::Demand;

    #[inline]
    fn forbid_opening() {
        from_env::install_from_env_once();
    }

    #[inline]
    fn demand() -> demand::Demand {
        demand::demand()
    }

    #[inline(always)]
    fn scope_span(
        begin: bool,
        forbid: bool,
        location: Option<&'static Location<'static>>,
        function: Option<&'static str>,
    ) {
        if super::check::sink::tracing() {
            summary::scope_span(begin, forbid, location, function);
        }
    }

    #[inline]
    fn capture_safe(open: bool) {
        super::watch(open);
    }

    #[inline(always)]
    fn runner_latest() -> u64 {
        runner::latest()
    }

    #[inline]
    fn runner_check_since(seen: u64, now: u64) {
        #[cfg(not(nosync_off))]
        runner::check_since(seen, now);
        #[cfg(nosync_off)]
        let _ = (seen, now);
    }
}
