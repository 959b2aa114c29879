//! The bit that keeps the CUPTI hook quiet while a `nosync::gpu` operation makes a driver call
//! it has checked itself.

/// Returned by the checks: while it is alive, the CUPTI hook (`nosync::hook`) ignores this
/// thread's CUDA calls, which the operation has just checked itself with its own site (no double
/// report, and the operation's decision stands). Keep it until the driver call is made.
#[must_use = "keep it alive until the driver call returns"]
#[derive(Debug)]
pub(crate) struct Checked {
    #[cfg(all(feature = "hook", not(nosync_off)))]
    was_quiet: bool,
}

impl Checked {
    #[inline]
    pub(crate) fn new() -> Checked {
        #[cfg(all(feature = "hook", not(nosync_off)))]
        {
            use super::state::{self, QUIET};
            let was_quiet = state::flags() & QUIET != 0;
            state::set_flag(QUIET, true);
            Checked { was_quiet }
        }
        #[cfg(not(all(feature = "hook", not(nosync_off))))]
        Checked {}
    }
}

impl Drop for Checked {
    #[inline]
    fn drop(&mut self) {
        #[cfg(all(feature = "hook", not(nosync_off)))]
        if !self.was_quiet {
            crate::guard::state::set_flag(crate::guard::state::QUIET, false);
        }
    }
}
