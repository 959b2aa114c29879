//! `-v`: the run's figures on stderr, as a few short lines and two tables (the call
//! sites by crate and how they were resolved; the time of each phase, with what came
//! from the caches beside the phase that used them), and between them the roots whose
//! search reaches unresolved calls, with how many in which crates. With a JSON output format, a last
//! line holds the same figures as one JSON object (`"reason": "nosync-statistics"`).

use crate::engine::{Analysis, CrateCalls, RootUnseen, Speculation, Stats};
use std::io::Write;

/// Writes the statistics of a run; `json`: the JSON object too.
pub(super) fn write(a: &Analysis, json: bool, err: &mut dyn Write) -> std::io::Result<()> {
    let s = &a.stats;
    writeln!(err, "nosync-lint statistics:")?;
    writeln!(
        err,
        "  crates: {}, files: {}, lines: {}, fns: {}, roots: {}",
        s.crates, s.files, s.lines, s.fns, s.roots
    )?;
    writeln!(
        err,
        "  fns walked: {} of {} (and {} specialised nodes)",
        s.fns_walked, s.fns, s.specialised_walked
    )?;
    writeln!(
        err,
        "  edges: {} exact, {} inferred, {} name-only; unresolved calls: {}",
        s.edges_exact, s.edges_inferred, s.edges_name_only, s.unresolved
    )?;
    writeln!(
        err,
        "  macro_rules! expansions: {} ({} invocations not expanded)",
        s.macro_expansions, s.macro_failures
    )?;
    if let Some(kib) = peak_rss_kib() {
        let mib = kib as f64 / 1024.0;
        writeln!(
            err,
            "  memory: peak RSS {mib:.1} MiB (this process; cargo's own is not counted)"
        )?;
    }
    err.write_all(calls_table(&s.calls).as_bytes())?;
    err.write_all(unseen_lines(&s.unseen, s.roots).as_bytes())?;
    err.write_all(phases_table(s, a.speculation.as_ref()).as_bytes())?;
    if json {
        writeln!(err, "{}", json_line(s))?;
    }
    Ok(())
}

/// The call sites of the walked fns per crate: exact, inferred, name-only, unresolved,
/// and the share resolved (exact or inferred).
fn calls_table(calls: &[CrateCalls]) -> String {
    let width = calls
        .iter()
        .map(|c| c.krate.len())
        .max()
        .unwrap_or(0)
        .max(10);
    let mut out = format!(
        "  {:<width$}  {:>7}  {:>8}  {:>9}  {:>10}  {:>8}\n",
        "call sites", "exact", "inferred", "name-only", "unresolved", "resolved"
    );
    for c in calls {
        let rate = c
            .resolved_percent()
            .map_or_else(|| "-".to_owned(), |p| format!("{p:.1} %"));
        out += &format!(
            "  {:<width$}  {:>7}  {:>8}  {:>9}  {:>10}  {:>8}\n",
            c.krate, c.exact, c.inferred, c.name_only, c.unresolved, rate
        );
    }
    out
}

/// Most roots listed by [`unseen_lines`] (the JSON line has them all).
const MAX_UNSEEN: usize = 20;

/// The roots whose search reaches unresolved calls, most first: a root without findings
/// is one the lint saw all of only when it is not among them.
fn unseen_lines(unseen: &[RootUnseen], roots: usize) -> String {
    let mut out = format!(
        "  roots that reach unresolved calls: {} of {roots}\n",
        unseen.len()
    );
    let mut sorted: Vec<&RootUnseen> = unseen.iter().collect();
    sorted.sort_by(|a, b| b.unresolved.cmp(&a.unresolved).then(a.root.cmp(&b.root)));
    for u in sorted.iter().take(MAX_UNSEEN) {
        let crates: Vec<String> = (u.crates.iter()).map(|(c, n)| format!("{c} {n}")).collect();
        out += &format!("    {}: {} ({})\n", u.root, u.unresolved, crates.join(", "));
    }
    if sorted.len() > MAX_UNSEEN {
        out += &format!("    and {} more\n", sorted.len() - MAX_UNSEEN);
    }
    out
}

/// One row per phase, `NAME  TIME ms  NOTES`: what came from the caches beside the phase
/// that read them, and what became of the speculative analysis beside `metadata`.
fn phases_table(s: &Stats, speculated: Option<&Speculation>) -> String {
    let mut notes = phase_notes(s, speculated);
    // A fixed width: the header reads the same whichever phases ran (a run from the
    // caches prints `metadata (cache hit)`).
    let width = 20;
    let mut out = format!("  {:<width$}  {:>10}\n", "phase", "time");
    for (i, (name, time)) in s.phases.iter().enumerate() {
        let last = i + 1 == s.phases.len();
        let base = name.split(" (").next().unwrap_or(name);
        let mine: Vec<String> = notes
            .iter_mut()
            .filter(|(phase, _)| last || *phase == base)
            .map(|(_, note)| std::mem::take(note))
            .filter(|n| !n.is_empty())
            .collect();
        let ms = time.as_secs_f64() * 1e3;
        let row = format!("  {name:<width$}  {ms:>7.1} ms");
        out += &match mine.is_empty() {
            true => format!("{row}\n"),
            false => format!("{row}  {}\n", mine.join(", ")),
        };
    }
    out
}

/// What each phase read from a cache, by phase (the last phase shows those whose phase did
/// not run, such as a run called off).
fn phase_notes(s: &Stats, speculated: Option<&Speculation>) -> Vec<(&'static str, String)> {
    let mut notes = Vec::new();
    let mut from_cache = |phase, counts: Option<(usize, usize)>, what: &str| {
        if let Some((hits, all)) = counts {
            notes.push((phase, format!("{hits} of {all} {what}")));
        }
    };
    from_cache("parse", s.lowered_cached, "lowered files from the cache");
    from_cache("parse", s.texts_read, "files read (the others unchanged)");
    from_cache(
        "resolve",
        s.expansions_cached,
        "macro expansions from the cache",
    );
    from_cache(
        "callgraph",
        s.bodies_cached,
        "lazy fn bodies from the cache",
    );
    from_cache("callgraph", s.walks_cached, "walked nodes from the cache");
    if let Some(verdict) = speculated {
        notes.insert(0, ("metadata", speculation(verdict)));
    }
    notes
}

/// The statistics as one JSON object, `reason` first (as cargo's messages).
fn json_line(s: &Stats) -> String {
    #[derive(serde::Serialize)]
    struct Calls<'a> {
        #[serde(rename = "crate")]
        krate: &'a str,
        exact: usize,
        inferred: usize,
        name_only: usize,
        unresolved: usize,
        resolved_percent: Option<f64>,
    }
    #[derive(serde::Serialize)]
    struct Phase<'a> {
        phase: &'a str,
        ms: f64,
    }
    let calls: Vec<Calls<'_>> = (s.calls.iter())
        .map(|c| Calls {
            krate: &c.krate,
            exact: c.exact,
            inferred: c.inferred,
            name_only: c.name_only,
            unresolved: c.unresolved,
            resolved_percent: c.resolved_percent(),
        })
        .collect();
    let phases: Vec<Phase<'_>> = (s.phases.iter())
        .map(|(phase, t)| Phase {
            phase,
            ms: t.as_secs_f64() * 1e3,
        })
        .collect();
    let unseen: Vec<serde_json::Value> = (s.unseen.iter())
        .map(|u| {
            let crates: Vec<serde_json::Value> = (u.crates.iter())
                .map(|(c, n)| serde_json::json!({ "crate": c, "unresolved": n }))
                .collect();
            serde_json::json!({ "root": u.root, "unresolved": u.unresolved, "crates": crates })
        })
        .collect();
    let edges = serde_json::json!({
        "exact": s.edges_exact, "inferred": s.edges_inferred, "name_only": s.edges_name_only
    });
    let fields: Vec<(&str, serde_json::Value)> = vec![
        ("reason", "nosync-statistics".into()),
        ("crates", s.crates.into()),
        ("files", s.files.into()),
        ("lines", s.lines.into()),
        ("fns", s.fns.into()),
        ("fns_walked", s.fns_walked.into()),
        ("specialised_walked", s.specialised_walked.into()),
        ("roots", s.roots.into()),
        ("edges", edges),
        ("unresolved", s.unresolved.into()),
        ("calls", serde_json::to_value(calls).unwrap_or_default()),
        ("roots_unresolved", unseen.into()),
        ("phases", serde_json::to_value(phases).unwrap_or_default()),
    ];
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", serde_json::Value::from(*k)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// This process' peak resident set so far (`VmHWM`), where the system says it (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What became of the speculative analysis (the phases before it overlapped `cargo
/// metadata`).
fn speculation(verdict: &Speculation) -> String {
    match verdict {
        Speculation::Confirmed => {
            "speculation confirmed (analysed while cargo metadata ran)".to_owned()
        }
        Speculation::Rejected(what) => {
            format!(
                "speculation rejected (the guess differed from cargo: {what}; its run called off, analysed again)"
            )
        }
        Speculation::Late => {
            "speculation dropped (cargo answered before the guess was made)".to_owned()
        }
        Speculation::Unavailable(why) => format!("speculation unavailable ({why})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn stats() -> Stats {
        let calls = |krate: &str, e, i, n, u| CrateCalls {
            krate: krate.to_owned(),
            exact: e,
            inferred: i,
            name_only: n,
            unresolved: u,
        };
        Stats {
            calls: vec![
                calls("app", 6, 2, 0, 2),
                calls("candle_core", 300, 150, 100, 50),
                calls("all", 306, 152, 100, 52),
            ],
            phases: vec![
                ("metadata (cache hit)", Duration::from_micros(3100)),
                ("parse", Duration::from_micros(95_250)),
                ("callgraph", Duration::from_millis(30)),
            ],
            lowered_cached: Some((12, 97)),
            walks_cached: Some((50, 60)),
            expansions_cached: Some((3, 4)),
            ..Stats::default()
        }
    }

    /// The tables as a user reads them; the expansions' note, whose phase did not run,
    /// goes to the last row.
    #[test]
    fn the_tables() {
        let s = stats();
        let text = calls_table(&s.calls) + &phases_table(&s, None);
        insta::assert_snapshot!(text, @"
          call sites     exact  inferred  name-only  unresolved  resolved
          app                6         2          0           2    80.0 %
          candle_core      300       150        100          50    75.0 %
          all              306       152        100          52    75.1 %
          phase                       time
          metadata (cache hit)      3.1 ms
          parse                    95.2 ms  12 of 97 lowered files from the cache
          callgraph                30.0 ms  3 of 4 macro expansions from the cache, 50 of 60 walked nodes from the cache
        ");
    }

    #[test]
    fn the_json_object() {
        let line = json_line(&stats());
        assert!(
            line.starts_with("{\"reason\":\"nosync-statistics\","),
            "{line}"
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["calls"][0]["crate"], "app");
        assert_eq!(v["calls"][0]["resolved_percent"], 80.0);
        assert_eq!(v["calls"][2]["unresolved"], 52);
        assert_eq!(v["phases"][1]["phase"], "parse");
    }
}
