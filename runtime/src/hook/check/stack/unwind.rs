//! The walk of the platform's unwinder (`_Unwind_Backtrace`, which `std` links on every Unix
//! target): each frame's unwind rule decoded anew, about 200 ns a frame.

use super::mix::{DEPTH, SEED, mix};

/// The hash of this thread's stack.
#[cfg(unix)]
pub(super) fn hash() -> u64 {
    let mut hash = SEED;
    walk(|ip| hash = mix(hash, ip));
    hash
}

/// Without an unwinder every stack hashes alike: one site per call.
#[cfg(not(unix))]
pub(super) fn hash() -> u64 {
    0
}

/// Calls `each` with the address of every frame, this one's first, [`DEPTH`] at most.
#[cfg(unix)]
pub(super) fn walk(mut each: impl FnMut(u64)) {
    use std::ffi::{c_int, c_void};

    unsafe extern "C" {
        fn _Unwind_Backtrace(
            trace: extern "C" fn(*mut c_void, *mut c_void) -> c_int,
            arg: *mut c_void,
        ) -> c_int;
        fn _Unwind_GetIP(context: *mut c_void) -> usize;
    }

    struct Walk<'e> {
        each: &'e mut dyn FnMut(u64),
        depth: usize,
    }

    /// One frame: `_URC_NO_REASON` (0) to go on, `_URC_NORMAL_STOP` (4) to stop.
    extern "C" fn step(context: *mut c_void, arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is the `Walk` below, alive for the whole walk; `context` is the
        // unwinder's, valid during this call.
        let (walk, ip) = unsafe { (&mut *arg.cast::<Walk<'_>>(), _Unwind_GetIP(context)) };
        (walk.each)(ip as u64);
        walk.depth += 1;
        if walk.depth >= DEPTH { 4 } else { 0 }
    }

    let mut walk = Walk {
        each: &mut each,
        depth: 0,
    };
    // SAFETY: the unwinder only reads this thread's stack and calls `step`, which cannot unwind
    // (`each` only mixes or pushes a word).
    unsafe { _Unwind_Backtrace(step, (&raw mut walk).cast()) };
}
