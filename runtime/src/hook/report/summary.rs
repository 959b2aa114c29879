//! `NOSYNC_REPORT`: the process-wide account of host waits, printed and written at exit.
//!
//! - `summary`: at exit, stderr gets the table of sync sites ranked by the total time the host
//!   waited in them, inside and outside forbid scopes, each with its calling frames.
//! - `trace:PATH`: at exit, `PATH` gets the waits as a Chrome trace (`report/trace.rs`): one
//!   track per thread, each wait a span, scopes and graph captures as spans around them.
//! - `json:PATH`: at exit, `PATH` gets the wait report (`report/json.rs`, `docs/wait-report.md`):
//!   every site with its scope, frames, count and times, for `cargo nosync-lint --runtime-report`.
//! - any of them together: `summary,json:PATH`. Empty, `0` or `off`: nothing (the default).
//!
//! Read when the hook is installed. Off, the only cost is one relaxed atomic load in the
//! callback of a hooked call made outside every scope, and one in each scope's entry and exit.

// With `--cfg nosync_off` the callback does nothing, and what it would use goes unused.
#![cfg_attr(nosync_off, allow(dead_code, unused_imports))]

use std::borrow::Cow;
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once, PoisonError};

use super::json;
use super::trace::{self, Arg, Event, Phase};
use crate::guard::env::{self, EnvError, REPORT_ENV, say};
use crate::hook::check::sink::{self, JSON, SUMMARY, Sink, TRACE, now_ns};
use crate::hook::check::waits::{Wait, WaitScope, WaitSite, WaitTable};

/// Sites printed in the summary.
const TOP: usize = 20;
/// Events kept for the trace; later ones are counted, not kept.
const MAX_EVENTS: usize = 1 << 20;

/// What `NOSYNC_REPORT` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Switch {
    pub(crate) summary: bool,
    pub(crate) trace: Option<PathBuf>,
    pub(crate) json: Option<PathBuf>,
}

/// Parses `NOSYNC_REPORT`'s value.
pub(crate) fn parse(value: &str) -> Result<Switch, EnvError> {
    let mut switch = Switch::default();
    for part in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part {
            "0" | "off" => {}
            "summary" => switch.summary = true,
            _ => match (part.strip_prefix("trace:"), part.strip_prefix("json:")) {
                (Some(path), _) if !path.is_empty() => switch.trace = Some(PathBuf::from(path)),
                (_, Some(path)) if !path.is_empty() => switch.json = Some(PathBuf::from(path)),
                _ => {
                    return Err(EnvError {
                        var: REPORT_ENV,
                        value: part.to_owned(),
                        takes: "summary, trace:PATH, json:PATH, off",
                    });
                }
            },
        }
    }
    Ok(switch)
}

/// What the process collected.
#[derive(Debug, Default)]
struct Collected {
    table: WaitTable,
    events: Vec<Event>,
    dropped: usize,
    threads: Vec<(u64, String)>,
    trace: Option<PathBuf>,
    json: Option<PathBuf>,
}

static COLLECTED: Mutex<Option<Collected>> = Mutex::new(None);

fn with_collected<R>(f: impl FnOnce(&mut Collected) -> R) -> Option<R> {
    let mut guard = COLLECTED.lock().unwrap_or_else(PoisonError::into_inner);
    guard.as_mut().map(f)
}

/// Reads `NOSYNC_REPORT` once (at the hook's installation) and turns the report on; an invalid
/// value is one line on stderr, like an invalid `NOSYNC_MODE`.
pub(crate) fn start_from_env() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        start(env::read(REPORT_ENV, parse, Switch::default(), "no report"));
    });
}

/// Turns the report on from code, with a value as `NOSYNC_REPORT` takes it (`summary`,
/// `trace:PATH`, `json:PATH`, together): for programs that decide at run time. It takes effect while the hook is
/// installed. An invalid value, or a report already on, is an error and changes nothing.
pub fn start_report(value: &str) -> Result<(), String> {
    let switch = parse(value).map_err(|e| e.to_string())?;
    if !start(switch) {
        return Err(String::from(
            "the report is already on, or the value asks for nothing",
        ));
    }
    Ok(())
}

/// Starts collecting; `false` when the switch asks for nothing or a report is already on.
fn start(switch: Switch) -> bool {
    let bits = u8::from(switch.summary) * SUMMARY
        + u8::from(switch.trace.is_some()) * TRACE
        + u8::from(switch.json.is_some()) * JSON;
    let mut collected = COLLECTED.lock().unwrap_or_else(PoisonError::into_inner);
    if bits == 0 || collected.is_some() {
        return false;
    }
    let _ = now_ns(); // the origin
    *collected = Some(Collected {
        trace: switch.trace,
        json: switch.json,
        ..Collected::default()
    });
    sink::start(
        bits,
        Sink {
            wait: add_wait,
            span,
        },
    );
    // Every wait is recorded, also outside scopes: the callbacks stay on.
    crate::hook::check::demand::keep_enabled();
    at_exit::register(finish);
    true
}

/// nosync's number for this thread in the trace (1 for the first thread seen).
fn tid(collected: &mut Collected) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TID: Cell<u64> = const { Cell::new(0) };
    }
    let known = TID.try_with(Cell::get).unwrap_or(0);
    if known != 0 {
        return known;
    }
    let tid = NEXT.fetch_add(1, Ordering::Relaxed);
    let _ = TID.try_with(|t| t.set(tid));
    let name = std::thread::current()
        .name()
        .map_or_else(|| format!("thread {tid}"), str::to_owned);
    collected.threads.push((tid, name));
    tid
}

fn push(collected: &mut Collected, event: Event) {
    if collected.events.len() < MAX_EVENTS {
        collected.events.push(event);
    } else {
        collected.dropped += 1;
    }
}

/// Adds a finished wait, reached through the stack `stack`.
fn add_wait(wait: &Wait, stack: u64) {
    let tracing = sink::tracing();
    // The scope is the innermost one, still open at the call's exit (read only when it forbids).
    let scope = wait.forbidden.then(|| {
        let top = crate::guard::state::innermost();
        WaitScope {
            function: top.function,
            location: top.location,
        }
    });
    with_collected(|c| {
        c.table.add(
            wait,
            stack,
            scope,
            crate::hook::check::frame::capture_for_report,
        );
        if tracing {
            let frame = c
                .table
                .frame_of(wait.site, stack)
                .map(|f| Arg::Text(Cow::Owned(f.to_string())));
            let mut args = vec![("forbidden", Arg::Flag(wait.forbidden))];
            args.extend(frame.map(|f| ("frame", f)));
            let event = Event {
                name: Cow::Borrowed(wait.site.api),
                cat: "wait",
                phase: Phase::Complete {
                    dur_ns: u64::try_from(wait.waited.as_nanos()).unwrap_or(u64::MAX),
                },
                ts_ns: wait.start_ns,
                tid: tid(c),
                args,
            };
            push(c, event);
        }
    });
}

/// A span of the trace opens (`begin`) or closes on this thread: a scope (`cat` `scope`) or a
/// graph capture (`capture`).
fn span(begin: bool, cat: &'static str, name: Cow<'static, str>) {
    let ts_ns = now_ns();
    with_collected(|c| {
        let event = Event {
            name,
            cat,
            phase: if begin { Phase::Begin } else { Phase::End },
            ts_ns,
            tid: tid(c),
            args: Vec::new(),
        };
        push(c, event);
    });
}

/// A scope's span: named after its `#[no_sync]`/`#[allow_sync]` fn, or where it was opened.
pub(crate) fn scope_span(
    begin: bool,
    forbid: bool,
    location: Option<&'static std::panic::Location<'static>>,
    function: Option<&'static str>,
) {
    let name = match (begin, function, location) {
        (false, ..) => String::new(),
        (true, Some(function), _) if forbid => format!("#[no_sync] {function}"),
        (true, Some(function), _) => format!("#[allow_sync] {function}"),
        (true, None, Some(at)) if forbid => format!("forbid {}:{}", at.file(), at.line()),
        (true, None, Some(at)) => format!("allow {}:{}", at.file(), at.line()),
        (true, None, None) => String::from("scope"),
    };
    span(begin, "scope", Cow::Owned(name));
}

/// The sites seen so far, the longest total wait first (empty while the report is off).
pub fn waits() -> Vec<WaitSite> {
    with_collected(|c| c.table.ranked().into_iter().cloned().collect()).unwrap_or_default()
}

/// At exit: the summary on stderr, the trace and the wait report into their files.
fn finish() {
    let Some(c) = COLLECTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    else {
        return;
    };
    let bits = sink::stop();
    if bits & SUMMARY != 0 {
        say(c.table.render(TOP).trim_start_matches("nosync: "));
    }
    if let Some(path) = &c.trace {
        let text = trace::render(std::process::id(), &c.events, &c.threads);
        let dropped = match c.dropped {
            0 => String::new(),
            n => format!(" ({n} later events were not kept)"),
        };
        match std::fs::write(path, text) {
            Ok(()) => say(&format!(
                "trace of {} events written to {}{dropped}",
                c.events.len(),
                path.display()
            )),
            Err(e) => say(&format!(
                "the trace was not written to {}: {e}",
                path.display()
            )),
        }
    }
    if let Some(path) = &c.json {
        json::write(path, &c.table.ranked());
    }
}

mod at_exit {
    use std::ffi::c_int;
    use std::sync::OnceLock;

    static HANDLER: OnceLock<fn()> = OnceLock::new();

    unsafe extern "C" {
        /// The C library's: runs `f` when the process exits normally (`main` returns,
        /// `std::process::exit`).
        fn atexit(f: extern "C" fn()) -> c_int;
    }

    extern "C" fn run() {
        if let Some(handler) = HANDLER.get() {
            // Nothing may unwind into the C library.
            let _ = std::panic::catch_unwind(handler);
        }
    }

    /// Runs `handler` at exit (once, whatever the calls).
    pub(in crate::hook) fn register(handler: fn()) {
        if HANDLER.set(handler).is_ok() {
            // SAFETY: `run` is a plain function that never unwinds.
            let _ = unsafe { atexit(run) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_reads_summary_trace_both_and_off() {
        let trace = |p: &str| Some(PathBuf::from(p));
        assert_eq!(parse(""), Ok(Switch::default()));
        assert_eq!(parse(" off "), Ok(Switch::default()));
        assert_eq!(
            parse("summary"),
            Ok(Switch {
                summary: true,
                ..Switch::default()
            })
        );
        assert_eq!(
            parse("trace:/tmp/w.json"),
            Ok(Switch {
                trace: trace("/tmp/w.json"),
                ..Switch::default()
            })
        );
        assert_eq!(
            parse("summary, trace:out/w.json"),
            Ok(Switch {
                summary: true,
                trace: trace("out/w.json"),
                json: None
            })
        );
        assert_eq!(
            parse("summary,trace:t.json,json:w.json"),
            Ok(Switch {
                summary: true,
                trace: trace("t.json"),
                json: trace("w.json")
            })
        );
        let e = parse("sumary").unwrap_err().to_string();
        assert_eq!(
            e,
            "NOSYNC_REPORT: `sumary` is none of summary, trace:PATH, json:PATH, off"
        );
        assert!(parse("trace:").is_err());
        assert!(parse("json:").is_err());
    }
}
