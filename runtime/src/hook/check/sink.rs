//! Where the check sends the waits it timed and the capture spans it saw: to the report, a
//! room above it (`report/summary.rs`). The report plugs its two receivers in when it starts
//! ([`start`]); until then, and once it has finished, [`on`] is false and the check sends
//! nothing. The check knows the receivers only as fn pointers, like the guard knows its seam.

// With `--cfg nosync_off` the check sends nothing.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::borrow::Cow;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use super::waits::Wait;

/// The switch's bit for the summary.
pub(in crate::hook) const SUMMARY: u8 = 1;
/// The switch's bit for the trace.
pub(in crate::hook) const TRACE: u8 = 2;
/// The switch's bit for the wait report (`json:PATH`).
pub(in crate::hook) const JSON: u8 = 4;

/// The switch's bits; 0 while off.
static ON: AtomicU8 = AtomicU8::new(0);

/// The report's receivers, plugged in by [`start`].
#[derive(Debug, Clone, Copy)]
pub(in crate::hook) struct Sink {
    /// A finished wait, reached through the stack hashed to the `u64`.
    pub wait: fn(&Wait, u64),
    /// A span of the trace opens (`true`) or closes on this thread: its category and name.
    pub span: fn(bool, &'static str, Cow<'static, str>),
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Whether waits are collected (the summary, the trace or the wait report is on).
#[inline(always)]
pub(in crate::hook) fn on() -> bool {
    ON.load(Ordering::Relaxed) != 0
}

/// Whether the trace is on (scopes then record their spans).
#[inline(always)]
pub(in crate::hook) fn tracing() -> bool {
    ON.load(Ordering::Relaxed) & TRACE != 0
}

/// The report starts with the switch's `bits` and its receivers (the first ones stay: the
/// report has one pair).
pub(in crate::hook) fn start(bits: u8, sink: Sink) {
    let _ = SINK.set(sink);
    ON.store(bits, Ordering::Relaxed);
}

/// The report finished: nothing more is sent. Returns the bits it ran with.
pub(in crate::hook) fn stop() -> u8 {
    ON.swap(0, Ordering::Relaxed)
}

/// The clock of every wait and event: nanoseconds since its first reading.
pub(in crate::hook) fn now_ns() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    let origin = *ORIGIN.get_or_init(Instant::now);
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Sends a finished wait to the report, reached through the stack `stack`.
pub(in crate::hook) fn add_wait(wait: &Wait, stack: u64) {
    if let Some(sink) = SINK.get() {
        (sink.wait)(wait, stack);
    }
}

/// Sends a span's begin (`begin`) or end to the report's trace.
pub(in crate::hook) fn span(begin: bool, cat: &'static str, name: Cow<'static, str>) {
    if let Some(sink) = SINK.get() {
        (sink.span)(begin, cat, name);
    }
}
