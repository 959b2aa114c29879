//! Running every input and the Markdown table of the results.

use crate::list::{self, Input};
use crate::run::{self, Outcome};
use crate::{Args, fetch};
use std::fmt::Write;
use std::path::Path;

/// One input's result.
#[derive(Debug)]
pub(crate) struct Row {
    pub key: String,
    pub version: String,
    /// `None` when the input could not be located or the lint not started.
    pub outcome: Option<Outcome>,
    /// Why there is no outcome.
    pub error: Option<String>,
    /// The untimed `cargo metadata --all-features` failed (the lint then falls back).
    pub metadata_error: Option<String>,
    /// The list's `known=` entries of this input.
    pub known: Vec<String>,
}

impl Row {
    /// A panic, timeout, signal, tool error (exit 2), a bug code the list does not expect,
    /// or a `known=` entry that was not reported (the list is out of date).
    pub(crate) fn failed(&self) -> bool {
        let Some(o) = &self.outcome else {
            return true;
        };
        o.timed_out
            || o.panic.is_some()
            || o.signal.is_some()
            || !matches!(o.code, Some(0 | 1))
            || !self.unexpected().is_empty()
            || !self.stale().is_empty()
    }

    /// The bug-code diagnostics that no `known=` entry names.
    fn unexpected(&self) -> Vec<&run::Bug> {
        let bugs = self.outcome.iter().flat_map(|o| &o.bugs);
        bugs.filter(|b| !self.known.contains(&b.key())).collect()
    }

    /// The `known=` entries that no diagnostic matched.
    fn stale(&self) -> Vec<&str> {
        let bugs: Vec<String> = self
            .outcome
            .iter()
            .flat_map(|o| &o.bugs)
            .map(run::Bug::key)
            .collect();
        self.known
            .iter()
            .filter(|k| !bugs.contains(k))
            .map(String::as_str)
            .collect()
    }

    fn result(&self) -> String {
        let Some(o) = &self.outcome else {
            return "**not run**".to_owned();
        };
        let mut bad: Vec<String> = Vec::new();
        if o.timed_out {
            bad.push("TIMEOUT".to_owned());
        }
        if o.panic.is_some() || o.code == Some(101) {
            bad.push("PANIC".to_owned());
        }
        if let Some(sig) = &o.signal {
            bad.push(format!("signal {sig}"));
        }
        let unexpected = self.unexpected();
        for code in run::BUG_CODES {
            let n = unexpected.iter().filter(|b| b.code == code).count();
            if n > 0 {
                bad.push(format!("{code} {n}"));
            }
        }
        let stale = self.stale().len();
        if stale > 0 {
            bad.push(format!("{stale} known not seen"));
        }
        let known = o.bugs.len() - unexpected.len();
        match (bad.is_empty(), o.code) {
            (true, Some(c @ (0 | 1))) if known > 0 => format!("ok (exit {c}; {known} known)"),
            (true, Some(c @ (0 | 1))) => format!("ok (exit {c})"),
            (true, Some(c)) => format!("**exit {c}**"),
            (true, None) => "**killed**".to_owned(),
            (false, _) => format!("**{}**", bad.join(", ")),
        }
    }
}

pub(crate) fn run_all(inputs: &[&Input], lint: &Path, args: &Args) -> Vec<Row> {
    let host = fetch::host_triple();
    let logs = args.scratch.join("out");
    if let Err(e) = std::fs::create_dir_all(&logs) {
        eprintln!("error: cannot create {}: {e}", logs.display());
        return Vec::new();
    }
    let mut rows = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let key = list::key(input);
        eprintln!("[{}/{}] {key}", i + 1, inputs.len());
        let row = run_one(input, &key, lint, args, host.as_deref());
        if let Some(o) = &row.outcome {
            eprintln!("        {} in {:.1} s", row.result(), o.wall.as_secs_f64());
        } else {
            eprintln!("        {}", row.error.as_deref().unwrap_or(""));
        }
        rows.push(row);
    }
    rows
}

fn run_one(input: &Input, key: &str, lint: &Path, args: &Args, host: Option<&str>) -> Row {
    let mut row = Row {
        key: key.to_owned(),
        version: String::new(),
        outcome: None,
        error: None,
        metadata_error: None,
        known: input.known.clone(),
    };
    let located = match fetch::locate(input, &args.scratch) {
        Ok(l) => l,
        Err(e) => {
            row.error = Some(e);
            return row;
        }
    };
    row.version = located.version;
    row.metadata_error = fetch::warm(&located.manifest, host).err();
    let r = run::Run {
        lint,
        manifest: &located.manifest,
        args: &input.args,
        timeout: args.timeout,
        logs: args.scratch.join("out").join(key.replace(['/', '@'], "-")),
    };
    match run::run(&r) {
        Ok(o) => row.outcome = Some(o),
        Err(e) => row.error = Some(format!("cannot run the lint: {e}")),
    }
    row
}

pub(crate) fn render(rows: &[Row], header: &str) -> String {
    let mut s = String::from(header);
    s.push_str("| input | version | crates | files | lines | roots | findings | wall | CPU | peak RSS | result |\n");
    s.push_str("|---|---|--:|--:|--:|--:|---|--:|--:|--:|---|\n");
    let mut total = [0u64; 4];
    for row in rows {
        let stat = |k: &str| row.outcome.as_ref().and_then(|o| o.stats.get(k).copied());
        let figures = ["crates", "files", "lines", "roots"].map(stat);
        for (t, f) in total.iter_mut().zip(figures) {
            *t += f.unwrap_or(0);
        }
        let shown = figures.map(|f| f.map_or_else(|| "–".to_owned(), |n| n.to_string()));
        let (findings, wall, cpu, rss) = row.outcome.as_ref().map_or_else(
            || {
                (
                    "–".to_owned(),
                    "–".to_owned(),
                    "–".to_owned(),
                    "–".to_owned(),
                )
            },
            |o| {
                let secs = |d: std::time::Duration| format!("{:.1} s", d.as_secs_f64());
                let cpu = o.cpu.map_or_else(|| "?".to_owned(), secs);
                (findings(o), secs(o.wall), cpu, rss(o))
            },
        );
        let _ = writeln!(
            s,
            "| {} | {} | {} | {findings} | {wall} | {cpu} | {rss} | {} |",
            row.key,
            row.version,
            shown.join(" | "),
            row.result()
        );
    }
    let failed = rows.iter().filter(|r| r.failed()).count();
    let _ = writeln!(
        s,
        "\n{} inputs, {} crates, {} files, {} lines, {} roots; {failed} with a panic, timeout, \
         tool error or bug code.",
        rows.len(),
        total[0],
        total[1],
        total[2],
        total[3]
    );
    s.push_str(&details(rows));
    s
}

fn findings(o: &Outcome) -> String {
    if o.codes.is_empty() {
        return "none".to_owned();
    }
    let parts: Vec<String> = o.codes.iter().map(|(c, n)| format!("{c} {n}")).collect();
    parts.join(", ")
}

fn rss(o: &Outcome) -> String {
    o.peak_rss_kib
        .map_or_else(|| "?".to_owned(), |k| format!("{} MiB", k.div_ceil(1024)))
}

/// Everything worth a look, per row: bug codes with their locations, panics, fallbacks.
fn details(rows: &[Row]) -> String {
    let mut s = String::new();
    for row in rows {
        let mut lines: Vec<String> = Vec::new();
        if let Some(e) = &row.error {
            lines.push(e.clone());
        }
        if let Some(e) = &row.metadata_error {
            lines.push(format!("cargo metadata --all-features failed: {e}"));
        }
        lines.extend(
            row.stale()
                .iter()
                .map(|k| format!("known={k} was not reported")),
        );
        if let Some(o) = &row.outcome {
            lines.extend(o.panic.iter().cloned());
            for b in &o.bugs {
                let tag = if row.known.contains(&b.key()) {
                    "known: "
                } else {
                    ""
                };
                lines.push(format!("{tag}{b}"));
            }
        }
        if !lines.is_empty() {
            let _ = writeln!(s, "\n{}:", row.key);
            for l in lines {
                let _ = writeln!(s, "- {l}");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(known: &[&str], bugs: &[(&str, &str, u64)]) -> Row {
        let bugs = bugs.iter().map(|&(code, file, line)| run::Bug {
            code: code.into(),
            file: file.into(),
            line,
            message: "m".into(),
        });
        Row {
            key: "k".into(),
            version: "1".into(),
            outcome: Some(Outcome {
                code: Some(0),
                bugs: bugs.collect(),
                ..Outcome::default()
            }),
            error: None,
            metadata_error: None,
            known: known.iter().map(|k| (*k).to_owned()).collect(),
        }
    }

    #[test]
    fn known_diagnostics_pass_unexpected_and_stale_ones_fail() {
        let ok = row(
            &["missing-module@tests/lib.rs:3"],
            &[("missing-module", "tests/lib.rs", 3)],
        );
        assert!(!ok.failed());
        assert_eq!(ok.result(), "ok (exit 0; 1 known)");
        let new = row(&[], &[("parse-error", "src/a.rs", 9)]);
        assert!(new.failed());
        assert_eq!(new.result(), "**parse-error 1**");
        let stale = row(&["parse-error@src/a.rs:9"], &[]);
        assert!(stale.failed());
        assert_eq!(stale.result(), "**1 known not seen**");
        assert!(details(&[stale]).contains("known=parse-error@src/a.rs:9 was not reported"));
    }
}
