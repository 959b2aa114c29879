//! A cheap name for the calling stack: a hash of its return addresses, taken without resolving
//! a symbol. Two calls from the same line of code through the same path hash alike, so the
//! wait table can tell its sites apart at the cost of a walk; the frames' names are resolved
//! once per new site (`frame::capture`).
//!
//! Two walkers. On Linux x86-64, `fast`: the loaded objects' unwind tables (`.eh_frame`) read
//! once, and each address's unwind rule cached per thread (framehop), about 20 ns a frame once
//! the addresses have been seen. Elsewhere, or where `fast` cannot walk (no stack bounds, a
//! stack it does not know, a walk already under way on the thread), the platform's unwinder
//! (`unwind`), which decodes every frame's rule anew: about 200 ns a frame.

// With `--cfg nosync_off` the callback does nothing and this goes unused.
#![cfg_attr(nosync_off, allow(dead_code))]

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod fast;
mod mix;
mod unwind;

/// The hash of this thread's stack (0 where no walker can walk it).
#[inline(never)]
pub(crate) fn hash() -> u64 {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    if let Some(hash) = fast::hash() {
        return hash;
    }
    unwind::hash()
}

#[cfg(test)]
mod tests {
    use super::mix::DEPTH;
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

    /// Both walkers from the same caller: from their first common return address on, the same
    /// frames to the stack's end.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn the_fast_walk_finds_the_frames_the_platforms_unwinder_finds() {
        #[inline(never)]
        fn both() -> (Vec<u64>, Vec<u64>) {
            let fast = fast::addresses().expect("a walk on a test thread");
            let mut slow = Vec::new();
            // The platform's unwinder also reports the end of the stack, a zero.
            unwind::walk(|address| slow.extend((address != 0).then_some(address)));
            (fast, slow)
        }
        let (fast, slow) = both();
        assert!(
            slow.len() < DEPTH,
            "a test thread's stack is shallow: {slow:x?}"
        );
        let from = slow.iter().position(|a| fast.contains(a)).unwrap();
        let at = fast.iter().position(|a| *a == slow[from]).unwrap();
        assert_eq!(fast[at..], slow[from..], "{fast:x?}\n{slow:x?}");
        assert!(slow.len() - from >= 5, "{fast:x?}\n{slow:x?}");
    }

    #[test]
    fn one_line_hashes_alike_on_another_thread() {
        let here = from_a();
        let there: Vec<u64> = std::thread::spawn(|| (0..2).map(|_| from_a()).collect())
            .join()
            .unwrap();
        assert_eq!(there[0], there[1]);
        // Different stacks below (this test's thread, a spawned one): different sites.
        if cfg!(unix) {
            assert_ne!(here, there[0]);
        }
    }
}
