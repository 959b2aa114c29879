//! A cheap name for the calling stack: a hash of its return addresses, taken with the
//! platform's unwinder (`_Unwind_Backtrace`, which `std` links on every Unix target) without
//! resolving a symbol. Two calls from the same line of code through the same path hash alike,
//! so the wait table can tell its sites apart at the cost of a walk (about a microsecond); the
//! frames' names are resolved once per new site (`frame::capture`).

// With `--cfg nosync_off` the callback does nothing and this goes unused.
#![cfg_attr(nosync_off, allow(dead_code))]

/// Frames hashed at most: deep enough to tell call sites apart, bounded in cost.
const DEPTH: usize = 48;

/// The hash of this thread's stack (0 where the platform has no unwinder).
#[cfg(unix)]
pub(crate) fn hash() -> u64 {
    use std::ffi::{c_int, c_void};

    unsafe extern "C" {
        fn _Unwind_Backtrace(
            trace: extern "C" fn(*mut c_void, *mut c_void) -> c_int,
            arg: *mut c_void,
        ) -> c_int;
        fn _Unwind_GetIP(context: *mut c_void) -> usize;
    }

    struct Walk {
        hash: u64,
        depth: usize,
    }

    /// One frame: `_URC_NO_REASON` (0) to go on, `_URC_NORMAL_STOP` (4) to stop.
    extern "C" fn step(context: *mut c_void, arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is the `Walk` below, alive for the whole walk; `context` is the
        // unwinder's, valid during this call.
        let (walk, ip) = unsafe { (&mut *arg.cast::<Walk>(), _Unwind_GetIP(context)) };
        walk.hash = mix(walk.hash, ip as u64);
        walk.depth += 1;
        if walk.depth >= DEPTH { 4 } else { 0 }
    }

    let mut walk = Walk {
        hash: 0xcbf2_9ce4_8422_2325,
        depth: 0,
    };
    // SAFETY: the unwinder only reads this thread's stack and calls `step`, which cannot unwind.
    unsafe { _Unwind_Backtrace(step, (&raw mut walk).cast()) };
    walk.hash
}

/// Without an unwinder every stack hashes alike: one site per call.
#[cfg(not(unix))]
pub(crate) fn hash() -> u64 {
    0
}

/// FNV-1a over the address's bytes, one word at a time.
fn mix(hash: u64, word: u64) -> u64 {
    (hash ^ word).wrapping_mul(0x0000_0100_0000_01b3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn from_a() -> u64 {
        std::hint::black_box(hash())
    }

    #[inline(never)]
    fn from_b() -> u64 {
        std::hint::black_box(hash())
    }

    #[test]
    fn one_line_hashes_alike_and_two_lines_apart() {
        let a: Vec<u64> = (0..3).map(|_| from_a()).collect();
        assert!(a.iter().all(|&h| h == a[0]), "{a:?}");
        if cfg!(unix) {
            assert_ne!(from_a(), from_b());
        }
    }
}
