//! Violations that cannot be acted on where they are seen, kept until their forbid scope ends.
//!
//! The CUPTI hook (`hook/`) sees a blocking CUDA call inside the driver, in an `extern "C"`
//! callback: it can neither panic there (nothing may unwind into C) nor return an error to the
//! code that made the call. In `Mode::Error` and `Mode::Panic` it records the violation here; the
//! violation surfaces when the innermost forbid scope ends:
//! - a `#[no_sync]` fn returning `Result<_, E>` with `E: From<SyncViolation>` returns it as
//!   `Err` (`Mode::Error` only; [`finish`]);
//! - every other scope end (the guard's `Drop`: `no_sync(|| ..)`, `forbid()`, `NoSync` futures,
//!   `#[no_sync]` fns that cannot return it) panics with the first one; while the thread is
//!   already panicking it logs instead (`log::error!`).
//!
//! None is lost: when several are pending, the first is returned or panicked with and each other
//! one is logged (`log::error!`, target `nosync`).

use std::cell::Cell;

use crate::SyncViolation;
use crate::guard::state::{self, PENDING};

/// A violation seen by the hook, and whether it was seen in `Mode::Panic`.
#[derive(Debug)]
struct Pending {
    violation: SyncViolation,
    panic: bool,
}

thread_local! {
    static PENDING_LIST: Cell<Vec<Pending>> = const { Cell::new(Vec::new()) };
}

fn with_list<R>(f: impl FnOnce(&mut Vec<Pending>) -> R) -> Option<R> {
    PENDING_LIST
        .try_with(|cell| {
            let mut list = cell.take();
            let r = f(&mut list);
            state::set_flag(PENDING, !list.is_empty());
            cell.set(list);
            r
        })
        .ok()
}

/// Keeps a violation for the end of the innermost forbid scope. Never panics.
#[cfg_attr(not(feature = "hook"), allow(dead_code))]
pub(crate) fn push(violation: SyncViolation, panic: bool) {
    let kept = with_list(|list| list.push(Pending { violation, panic }));
    if kept.is_none() {
        // The thread is being torn down: its thread-locals are gone. Say so rather than lose it.
        log::error!(target: "nosync", "a violation seen while the thread exits was not kept");
    }
}

/// Takes every pending violation, first seen first.
fn take_all() -> Vec<Pending> {
    with_list(std::mem::take).unwrap_or_default()
}

/// Logs every violation but the first, and returns the first.
fn keep_first(list: Vec<Pending>) -> Option<Pending> {
    let mut list = list.into_iter();
    let first = list.next();
    for other in list {
        log::error!(target: "nosync", "{} (also seen in this scope)", other.violation);
    }
    first
}

/// Called when a forbid scope ends with violations pending (the `PENDING` bit is set).
#[cold]
#[inline(never)]
pub(crate) fn surface_at_scope_end() {
    let Some(first) = keep_first(take_all()) else {
        return;
    };
    if std::thread::panicking() {
        log::error!(target: "nosync", "{} (while panicking)", first.violation);
    } else {
        panic!("{}", first.violation);
    }
}

/// For a `#[no_sync]` fn returning `Result<_, E: From<SyncViolation>>`, before its scope ends:
/// the pending violations, unless one was seen in `Mode::Panic` (those stay for the guard's
/// `Drop`, which panics).
pub(crate) fn take_returnable() -> Option<SyncViolation> {
    state::catch_up();
    if state::flags() & PENDING == 0 {
        return None;
    }
    let list = with_list(|list| {
        if list.iter().any(|p| p.panic) {
            Vec::new()
        } else {
            std::mem::take(list)
        }
    })?;
    keep_first(list).map(|p| p.violation)
}

/// Logs a violation that a failed `#[no_sync]` fn cannot return next to its own error.
pub(crate) fn log_unreturned(violation: &SyncViolation) {
    log::error!(target: "nosync", "{violation} (the function returned its own error)");
}
