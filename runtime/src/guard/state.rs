//! The per-thread state every check reads (compiled out with `--cfg nosync_off`).
//!
//! All thread-locals are `const`-initialised and `Cell`-based (no `RefCell`, so no borrow panics):
//! - `FAST.flags`: the only thing `declare_sync` reads on its fast path. Bit 0: the innermost
//!   live scope forbids. Bit 1: a `count_syncs` is recording on this thread. Bit 2: violations
//!   seen by the CUPTI hook wait to be surfaced at the end of the forbid scope (`deferred.rs`).
//!   Bit 3: a `nosync::gpu` operation is making its driver call, which it has checked itself
//!   (the hook stays quiet). Bit 4: a hooked runtime-API call is running; it was checked itself,
//!   and the driver calls it makes are not checked again. Bit 5: a `capture_safe` scope is open
//!   (`FAST.capture_safe` counts them). Bit 6: the thread is capturing a stream into a CUDA graph
//!   (the hook's `capture.rs` keeps which).
//! - `FAST.top`: the innermost live scope. Opening a scope swaps a new frame in and the guard keeps the
//!   previous one; closing it in order swaps the previous one back (restore-previous-value).
//! - `DEAD`: scopes closed out of order (their guard dropped while an inner guard was alive), with
//!   the frame each one replaced. When an in-order close would restore a dead frame, it restores
//!   that frame's predecessor instead, so the innermost *live* scope always decides and the state
//!   is exact again once the inner guards are gone. Only this rare path allocates.

use std::cell::Cell;
use std::panic::Location;

use super::seam;

pub(crate) const FORBID: u32 = 1;
pub(crate) const RECORD: u32 = 2;
pub(crate) const PENDING: u32 = 4;
#[cfg_attr(not(feature = "hook"), allow(dead_code))]
pub(crate) const QUIET: u32 = 8;
#[cfg_attr(not(feature = "hook"), allow(dead_code))]
pub(crate) const IN_RUNTIME: u32 = 16;
pub(crate) const CAPTURE_SAFE: u32 = 32;
#[cfg_attr(not(feature = "hook"), allow(dead_code))]
pub(crate) const CAPTURING: u32 = 64;

/// One scope. Token 0 is the thread's root, outside any scope. Bit 0 of the token says whether
/// the scope forbids (the frame is all words: copying it never splits a store).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    token: u64,
    pub(crate) location: Option<&'static Location<'static>>,
    pub(crate) function: Option<&'static str>,
}

impl Frame {
    pub(crate) fn forbids(&self) -> bool {
        self.token & 1 != 0
    }
}

const ROOT: Frame = Frame {
    token: 0,
    location: None,
    function: None,
};

/// The allocation-free part of the state, in one thread-local so each access computes one address.
struct Fast {
    flags: Cell<u32>,
    top: Cell<Frame>,
    next_token: Cell<u64>,
    /// `DEAD.len()`, readable without touching the `Vec` (and its destructor registration).
    dead_len: Cell<usize>,
    /// How many `capture_safe` scopes are open on this thread.
    capture_safe: Cell<u32>,
    /// The last wait on a device-runner thread this thread has checked (see `seam.rs`).
    runner_seen: Cell<u64>,
}

thread_local! {
    static FAST: Fast = const {
        Fast {
            flags: Cell::new(0),
            top: Cell::new(ROOT),
            next_token: Cell::new(2),
            dead_len: Cell::new(0),
            capture_safe: Cell::new(0),
            runner_seen: Cell::new(0),
        }
    };
    static DEAD: Cell<Vec<(u64, Frame)>> = const { Cell::new(Vec::new()) };
}

/// The fast-path flags of this thread.
#[inline(always)]
pub(crate) fn flags() -> u32 {
    FAST.with(|s| s.flags.get())
}

#[inline]
pub(crate) fn set_flag(bit: u32, on: bool) {
    FAST.with(|s| set_bit(&s.flags, bit, on));
}

#[inline(always)]
fn set_bit(flags: &Cell<u32>, bit: u32, on: bool) {
    flags.set(if on {
        flags.get() | bit
    } else {
        flags.get() & !bit
    });
}

#[inline(always)]
fn set_forbid(flags: &Cell<u32>, top: Frame) {
    flags.set(flags.get() & !FORBID | u32::from(top.forbids()));
}

/// What a guard needs to close its scope.
#[derive(Debug)]
pub(crate) struct Opened {
    token: u64,
    previous: Frame,
}

impl Opened {
    /// Whether the scope this guard opened forbids.
    #[inline]
    pub(crate) fn forbids(&self) -> bool {
        self.token & 1 != 0
    }
}

/// Opens a scope on this thread.
#[inline]
pub(crate) fn push(
    forbid: bool,
    location: &'static Location<'static>,
    function: Option<&'static str>,
) -> Opened {
    FAST.with(|s| {
        catch_up_in(s);
        let token = s.next_token.replace(s.next_token.get().wrapping_add(2)) | u64::from(forbid);
        let frame = Frame {
            token,
            location: Some(location),
            function,
        };
        let previous = s.top.replace(frame);
        set_forbid(&s.flags, frame);
        Opened { token, previous }
    })
}

/// Closes a scope, in order or not.
#[inline]
pub(crate) fn pop(opened: &Opened) {
    let done = FAST.with(|s| {
        catch_up_in(s);
        let simple = s.top.get().token == opened.token && s.dead_len.get() == 0;
        if simple {
            s.top.set(opened.previous);
            set_forbid(&s.flags, opened.previous);
        }
        simple
    });
    if !done {
        pop_slow(opened);
    }
}

/// Checks the waits device-runner threads made since this thread last looked, in the scope that
/// is still the innermost (called before every scope change). One load without such waits;
/// nothing without an observer of runners.
#[inline(always)]
fn catch_up_in(s: &Fast) {
    if !seam::RUNNERS {
        return;
    }
    let now = seam::runner_latest();
    let seen = s.runner_seen.get();
    if now != seen {
        s.runner_seen.set(now);
        seam::runner_check_since(seen, now);
    }
}

/// [`catch_up_in`], for the ends that are no scope change (a `#[no_sync]` fn about to return,
/// a `count_syncs` closing).
#[inline]
pub(crate) fn catch_up() {
    FAST.with(catch_up_in);
}

/// Closing out of order, or in order while some scope below was closed out of order.
#[cold]
#[inline(never)]
fn pop_slow(opened: &Opened) {
    FAST.with(|s| {
        if s.top.get().token != opened.token {
            with_dead(|dead| dead.push((opened.token, opened.previous)));
            return;
        }
        let frame = skip_dead(opened.previous);
        s.top.set(frame);
        set_forbid(&s.flags, frame);
    });
}

/// Follows dead frames down to the first live one, forgetting them.
fn skip_dead(mut frame: Frame) -> Frame {
    with_dead(|dead| {
        while let Some(i) = dead.iter().position(|(token, _)| *token == frame.token) {
            frame = dead.swap_remove(i).1;
        }
    });
    frame
}

fn with_dead(f: impl FnOnce(&mut Vec<(u64, Frame)>)) {
    // `f` never calls user code, so taking the list out of its cell cannot be observed.
    let _ = DEAD.try_with(|cell| {
        let mut dead = cell.take();
        f(&mut dead);
        FAST.with(|s| s.dead_len.set(dead.len()));
        cell.set(dead);
    });
}

/// Opens (`true`) or closes a `capture_safe` scope: while one is open, calls that would break a
/// CUDA-graph capture are reported as if the thread were capturing.
#[inline]
pub(crate) fn capture_safe(open: bool) {
    FAST.with(|s| {
        let depth = s.capture_safe.get();
        let depth = if open {
            depth.saturating_add(1)
        } else {
            depth.saturating_sub(1)
        };
        s.capture_safe.set(depth);
        set_bit(&s.flags, CAPTURE_SAFE, depth > 0);
    });
}

/// The innermost live scope of this thread (the root frame outside any scope).
pub(crate) fn innermost() -> Frame {
    FAST.with(|s| s.top.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead() -> usize {
        FAST.with(|s| s.dead_len.get())
    }

    #[test]
    fn out_of_order_closes_are_repaired_and_forgotten() {
        let here = Location::caller();
        let a = push(true, here, Some("a"));
        let b = push(false, here, Some("b"));
        let c = push(true, here, Some("c"));
        pop(&a);
        pop(&b);
        assert_eq!(dead(), 2);
        assert_eq!(innermost().function, Some("c"));
        assert_eq!(flags() & FORBID, FORBID);
        pop(&c);
        assert_eq!(dead(), 0, "the dead frames were skipped and dropped");
        assert_eq!((innermost().token, innermost().function), (0, None));
        assert_eq!(flags() & FORBID, 0);
    }

    #[test]
    fn tokens_carry_the_kind_and_stay_unique() {
        let here = Location::caller();
        let f = push(true, here, None);
        let a = push(false, here, None);
        assert_ne!(f.token, a.token);
        assert!(innermost().token == a.token && !innermost().forbids());
        pop(&a);
        assert!(innermost().token == f.token && innermost().forbids());
        pop(&f);
        assert!(!innermost().forbids());
    }
}
