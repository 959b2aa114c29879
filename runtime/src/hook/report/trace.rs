//! The Chrome trace event format, as Perfetto and `chrome://tracing` read it: a JSON object whose
//! `traceEvents` array holds one object per event. nosync writes three kinds: a complete event
//! (`"ph": "X"`, with `dur`) per timed wait, a begin/end pair (`"B"`/`"E"`) per scope or capture,
//! and one metadata event (`"M"`, `thread_name`) per thread. Times are microseconds (`ts`, `dur`)
//! since the process's first timed event; `pid` is the process id, `tid` nosync's number for the
//! thread (1 for the first thread seen), so that each thread gets its own track.
//!
//! Pure: events in, text out. The hook collects the events (`summary.rs`).

use std::borrow::Cow;
use std::fmt::Write;

/// What an event marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Phase {
    /// A wait: from the call's entry, `dur_ns` long.
    Complete {
        /// How long the host waited.
        dur_ns: u64,
    },
    /// A scope or capture opens on this thread.
    Begin,
    /// The innermost open scope or capture of this thread ends.
    End,
}

/// One argument shown in the event's details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Arg {
    /// A string.
    Text(Cow<'static, str>),
    /// A flag.
    Flag(bool),
}

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// What is shown on the span: the CUDA call, or the scope.
    pub(crate) name: Cow<'static, str>,
    /// `wait`, `scope` or `capture`.
    pub(crate) cat: &'static str,
    pub(crate) phase: Phase,
    /// Nanoseconds since the trace's origin.
    pub(crate) ts_ns: u64,
    /// nosync's number for the thread.
    pub(crate) tid: u64,
    pub(crate) args: Vec<(&'static str, Arg)>,
}

/// The whole file: every event in the order given, then one `thread_name` record per thread.
pub(crate) fn render(pid: u32, events: &[Event], threads: &[(u64, String)]) -> String {
    let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push('\n');
    };
    for event in events {
        sep(&mut out);
        write_event(&mut out, pid, event);
    }
    for (tid, name) in threads {
        sep(&mut out);
        out.push_str("{\"name\":\"thread_name\",\"ph\":\"M\",");
        let _ = write!(out, "\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":");
        string(&mut out, name);
        out.push_str("}}");
    }
    out.push_str("\n]}\n");
    out
}

fn write_event(out: &mut String, pid: u32, e: &Event) {
    out.push_str("{\"name\":");
    string(out, &e.name);
    let _ = write!(out, ",\"cat\":\"{}\",\"ph\":", e.cat);
    out.push_str(match e.phase {
        Phase::Complete { .. } => "\"X\"",
        Phase::Begin => "\"B\"",
        Phase::End => "\"E\"",
    });
    let _ = write!(out, ",\"ts\":{}", Micros(e.ts_ns));
    if let Phase::Complete { dur_ns } = e.phase {
        let _ = write!(out, ",\"dur\":{}", Micros(dur_ns));
    }
    let _ = write!(out, ",\"pid\":{pid},\"tid\":{}", e.tid);
    if !e.args.is_empty() {
        out.push_str(",\"args\":{");
        for (i, (key, value)) in e.args.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            string(out, key);
            out.push(':');
            match value {
                Arg::Text(text) => string(out, text),
                Arg::Flag(flag) => out.push_str(if *flag { "true" } else { "false" }),
            }
        }
        out.push('}');
    }
    out.push('}');
}

/// Nanoseconds as microseconds with three decimals: exact, and a JSON number.
struct Micros(u64);

impl std::fmt::Display for Micros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// A JSON string literal (RFC 8259: quote, backslash and control characters escaped).
pub(super) fn string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_scopes_and_threads_in_chromes_format() {
        let wait = Event {
            name: Cow::Borrowed("cuMemcpyDtoHAsync_v2"),
            cat: "wait",
            phase: Phase::Complete { dur_ns: 1_234_567 },
            ts_ns: 2_000_001,
            tid: 1,
            args: vec![
                ("forbidden", Arg::Flag(true)),
                ("frame", Arg::Text("`app::step` (src/main.rs:4)".into())),
            ],
        };
        let scope = |phase, ts_ns| Event {
            name: Cow::Borrowed("#[no_sync] step"),
            cat: "scope",
            phase,
            ts_ns,
            tid: 1,
            args: Vec::new(),
        };
        let events = [
            scope(Phase::Begin, 1_000),
            wait,
            scope(Phase::End, 4_000_000),
        ];
        let text = render(7, &events, &[(1, "main \"0\"".into())]);
        let expected = concat!(
            "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n",
            "{\"name\":\"#[no_sync] step\",\"cat\":\"scope\",\"ph\":\"B\",\"ts\":1.000,\"pid\":7,\"tid\":1},\n",
            "{\"name\":\"cuMemcpyDtoHAsync_v2\",\"cat\":\"wait\",\"ph\":\"X\",\"ts\":2000.001,\"dur\":1234.567,",
            "\"pid\":7,\"tid\":1,\"args\":{\"forbidden\":true,\"frame\":\"`app::step` (src/main.rs:4)\"}},\n",
            "{\"name\":\"#[no_sync] step\",\"cat\":\"scope\",\"ph\":\"E\",\"ts\":4000.000,\"pid\":7,\"tid\":1},\n",
            "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":7,\"tid\":1,\"args\":{\"name\":\"main \\\"0\\\"\"}}\n",
            "]}\n"
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn strings_escape_what_json_requires() {
        let mut out = String::new();
        string(&mut out, "a\\b\"c\nd\u{1}é");
        assert_eq!(out, "\"a\\\\b\\\"c\\nd\\u0001é\"");
        assert_eq!(
            render(1, &[], &[]),
            "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n]}\n"
        );
    }
}
