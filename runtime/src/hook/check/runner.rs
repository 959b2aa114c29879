//! Waits on device-runner threads: threads that make the CUDA calls for other threads.
//!
//! cubecl 0.10 (under burn 0.21) runs every device operation on one thread per device and stage
//! (`DSU-0-0`, `DSD-0-0`): the calling thread sends it closures and, for `Backend::sync` or a
//! tensor read, blocks on a channel until the runner is done. A forbid scope on the calling thread
//! sees no CUDA call at all: the wait happens on the runner, outside every scope. So a hooked call
//! that waits on a runner thread (a thread with a known runner name, or one that called
//! [`runner_thread`]) outside its own scopes, while a forbid scope is open on another thread, is
//! *recorded*; each thread then checks the records made since its last scope change, at its next
//! scope change (a scope opening or ending, a `#[no_sync]` fn returning), as if the call had been
//! its own: its innermost scope at that point is the one that was open during the wait (it has not
//! changed since), with its mode, `allow_sync` and `count_syncs`. The violation names the runner
//! thread ([`SyncViolation::runner_thread`](crate::SyncViolation::runner_thread)).
//!
//! The wait is attributed to every forbid scope open during it, on any thread: a runner serves all
//! of them, and while it waits, none of their device work is issued. A runner outside every
//! forbid period costs one load in the callback; scope changes compare one counter.

// With `--cfg nosync_off` the callback does nothing and these go unused.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

use crate::{Frame, SyncSite};

/// Names of threads known to run device work for others: cubecl 0.10's device runners,
/// `DS{U,D}-{device type}-{device index}` (upstream: burn-fusion's queue; downstream: cubecl's
/// compute server).
pub fn is_runner_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("DSU-").or(name.strip_prefix("DSD-")) else {
        return false;
    };
    let mut parts = rest.split('-');
    let number =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    number(parts.next()) && number(parts.next()) && parts.next().is_none()
}

const UNKNOWN: u8 = 0;
const NOT_RUNNER: u8 = 1;
const RUNNER: u8 = 2;

thread_local! {
    static ROLE: Cell<u8> = const { Cell::new(UNKNOWN) };
}

/// Marks the current thread as a device runner: a thread that makes CUDA calls for other
/// threads, which wait for it. Its waits outside its own scopes count in the forbid scopes open on
/// other threads meanwhile (cubecl's runner threads are recognised by name).
pub fn runner_thread() {
    let _ = ROLE.try_with(|r| r.set(RUNNER));
}

/// Whether this thread is a runner (its name is read once).
#[inline]
pub(crate) fn is_runner() -> bool {
    ROLE.try_with(|r| match r.get() {
        UNKNOWN => {
            let runner = std::thread::current().name().is_some_and(is_runner_name);
            r.set(if runner { RUNNER } else { NOT_RUNNER });
            runner
        }
        role => role == RUNNER,
    })
    .unwrap_or(false)
}

/// A wait on a runner thread.
#[derive(Debug, Clone)]
struct Record {
    seq: u64,
    site: &'static SyncSite,
    runner: String,
    frames: Vec<Frame>,
}

/// The last record's number (0: none yet).
static SEQ: AtomicU64 = AtomicU64::new(0);
/// The latest records, oldest first.
static RECORDS: Mutex<VecDeque<Record>> = Mutex::new(VecDeque::new());
/// How many records are kept for threads that have not caught up yet.
pub(in crate::hook) const KEPT: usize = 256;

fn records() -> std::sync::MutexGuard<'static, VecDeque<Record>> {
    RECORDS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The last record's number: a thread whose own count differs has records to check.
#[inline(always)]
pub(crate) fn latest() -> u64 {
    SEQ.load(Relaxed)
}

/// Records a wait `site` seen on this runner thread (outside its own scopes) while some forbid
/// scope was open.
pub(crate) fn record(site: &'static SyncSite, frames: Vec<Frame>) {
    let runner = std::thread::current().name().map_or_else(
        || format!("{:?}", std::thread::current().id()),
        str::to_owned,
    );
    let mut list = records();
    let seq = SEQ.load(Relaxed) + 1;
    if list.len() == KEPT {
        list.pop_front();
    }
    list.push_back(Record {
        seq,
        site,
        runner,
        frames,
    });
    SEQ.store(seq, Relaxed);
}

/// Checks, in this thread's current scope, the records after `seen` up to `now`.
#[cfg(not(nosync_off))]
#[cold]
#[inline(never)]
pub(crate) fn check_since(seen: u64, now: u64) {
    let (missed, new): (u64, Vec<Record>) = {
        let list = records();
        let new: Vec<Record> = list
            .iter()
            .filter(|r| r.seq > seen && r.seq <= now)
            .cloned()
            .collect();
        let first = new.first().map_or(now + 1, |r| r.seq);
        (first.saturating_sub(seen + 1).min(now - seen), new)
    };
    if missed > 0 && crate::is_forbidden() {
        log::error!(target: "nosync", "{missed} wait(s) on device-runner threads during this scope were not kept (more than {KEPT} since the scope's last check)");
    }
    for r in new {
        crate::guard::check::from_runner(r.site, r.runner, r.frames);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubecl_runner_names_are_recognised() {
        for name in ["DSU-0-0", "DSD-3-12"] {
            assert!(is_runner_name(name), "{name}");
        }
        for name in ["DSU-0", "DSU-0-0-1", "DSX-0-0", "DSU-a-0", "main", "DSU--0"] {
            assert!(!is_runner_name(name), "{name}");
        }
    }
}
