//! Baselines: accept today's findings, fail only on new ones.
//!
//! `--write-baseline FILE` records every reported finding as an [`Entry`]: its code, its root,
//! the functions on its chain and its sink, and no line numbers, so unrelated edits keep the
//! entries valid. `--baseline FILE` removes the findings it lists and reports each entry that no
//! longer matches a finding as `stale-baseline-entry`, located at the entry in the file.
//!
//! An entry matches a finding by its [key](Entry::key): the code, the root, the function the
//! root calls first on the chain, and the sink, the identity of a finding (one per call of
//! the root and sink it reaches). The rest of `via` is recorded for the reader: while the
//! root's call still reaches the sink, through whatever path, the entry stays valid.
//!
//! The file is TOML, sorted and deduplicated, with a `version`:
//!
//! ```toml
//! version = 1
//!
//! [[finding]]
//! code = "sync-in-no-sync"
//! root = "demo::train::train_step"
//! via = ["demo::metrics::log_progress"]
//! sink = "demo::metrics::read_loss"
//! ```
//!
//! Diagnostics without a [`Finding`](crate::diagnostics::Finding) (parse errors, config errors)
//! are never baselined: they are problems with the input, not accepted debt.
//! Apply the baseline before the level overrides, so stale entries get levels like the rest.

use crate::diagnostics::{Code, Diagnostic, Level, Span};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The format version this lint reads and writes.
pub(crate) const VERSION: u32 = 1;

/// What identifies a violation: code, root, first callee, sink (see [`Entry::key`]).
pub(crate) type Key = (String, String, String, String);

/// One accepted finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The diagnostic code (`sync-in-no-sync`).
    pub code: String,
    /// The root, as a Rust path.
    pub root: String,
    /// The functions between the root and the sink, in call order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// The blocking API reached, as a Rust path.
    pub sink: String,
}

impl Entry {
    /// The entry of a diagnostic that carries a finding.
    pub fn of(diagnostic: &Diagnostic) -> Option<Entry> {
        let finding = diagnostic.finding.as_ref()?;
        Some(Entry {
            code: diagnostic.code.as_str().to_owned(),
            root: finding.root.clone(),
            via: finding
                .chain
                .iter()
                .skip(1)
                .map(|hop| hop.function.clone())
                .collect(),
            sink: finding.sink.clone(),
        })
    }

    /// What identifies the violation: code, root, the function the root calls first on
    /// the chain (the sink itself for a direct call), sink.
    pub fn key(&self) -> Key {
        let first = self.via.first().unwrap_or(&self.sink);
        let parts = [&self.code, &self.root, first, &self.sink];
        parts.map(String::clone).into()
    }

    /// `root → via… → sink`, for messages.
    pub fn chain_text(&self) -> String {
        let mut parts = vec![self.root.as_str()];
        parts.extend(self.via.iter().map(String::as_str));
        parts.push(&self.sink);
        parts.join(" → ")
    }
}

#[derive(Serialize)]
struct FileOut<'a> {
    version: u32,
    finding: &'a [Entry],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileIn {
    version: u32,
    #[serde(default)]
    finding: Vec<toml::Spanned<Entry>>,
}

const HEADER: &str = "\
# Findings accepted by `cargo nosync-lint --baseline`: only findings not listed here fail.
# Regenerate with `cargo nosync-lint --write-baseline <this file>`.
";

/// The baseline text for the reported (not allowed) findings among `diagnostics`.
pub fn write(diagnostics: &[Diagnostic]) -> String {
    let entries: BTreeSet<Entry> = diagnostics
        .iter()
        .filter(|d| d.level != Level::Allow)
        .filter_map(Entry::of)
        .collect();
    let entries: Vec<Entry> = entries.into_iter().collect();
    let file = FileOut {
        version: VERSION,
        finding: &entries,
    };
    // Serialising plain strings and lists into TOML cannot fail.
    let body = toml::to_string(&file).unwrap_or_default();
    format!("{HEADER}\n{body}")
}

/// A baseline read from a file.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The file, as given on the command line (stale entries point into it).
    pub path: PathBuf,
    text: String,
    entries: Vec<(Entry, std::ops::Range<usize>)>,
}

/// The result of [`Baseline::apply`].
#[derive(Debug, Clone)]
pub struct Applied {
    /// The diagnostics not in the baseline, then one per stale entry.
    pub diagnostics: Vec<Diagnostic>,
    /// How many diagnostics the baseline removed.
    pub suppressed: usize,
}

impl Baseline {
    /// Parses baseline `text`; `path` is where stale entries will point.
    pub fn parse(path: &Path, text: String) -> anyhow::Result<Baseline> {
        let file: FileIn = toml::from_str(&text)
            .with_context(|| format!("invalid baseline `{}`", path.display()))?;
        if file.version != VERSION {
            bail!(
                "baseline `{}` has version {}; this lint reads version {VERSION} (regenerate it with --write-baseline)",
                path.display(),
                file.version
            );
        }
        let entries = file
            .finding
            .into_iter()
            .map(|spanned| {
                let span = spanned.span();
                (spanned.into_inner(), span)
            })
            .collect();
        Ok(Baseline {
            path: path.to_owned(),
            text,
            entries,
        })
    }

    /// The file's text (for snippets of stale entries).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The entries, in file order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().map(|(entry, _)| entry)
    }

    /// Removes the diagnostics the baseline lists and adds one `stale-baseline-entry` per entry
    /// that matches none of them.
    pub fn apply(&self, diagnostics: Vec<Diagnostic>) -> Applied {
        let accepted: BTreeSet<Key> = self.entries().map(Entry::key).collect();
        let mut seen: BTreeSet<Key> = BTreeSet::new();
        let mut kept = Vec::with_capacity(diagnostics.len());
        let mut suppressed = 0;
        for diagnostic in diagnostics {
            match Entry::of(&diagnostic).map(|e| e.key()) {
                Some(key) if accepted.contains(&key) => {
                    suppressed += 1;
                    seen.insert(key);
                }
                _ => kept.push(diagnostic),
            }
        }
        for (entry, range) in &self.entries {
            if !seen.contains(&entry.key()) {
                kept.push(self.stale(entry, range.clone()));
            }
        }
        Applied {
            diagnostics: kept,
            suppressed,
        }
    }

    fn stale(&self, entry: &Entry, range: std::ops::Range<usize>) -> Diagnostic {
        let span = span_of(&self.path, &self.text, range);
        Diagnostic::new(
            Code::StaleBaselineEntry,
            format!(
                "baseline entry matches no finding: `{}` no longer reaches `{}` this way",
                entry.root, entry.sink
            ),
            span,
        )
        .with_label("stale entry")
        .with_note(format!("the entry records `{}`", entry.chain_text()), None)
        .with_help(format_args!(
            "remove it, or regenerate the file with `--write-baseline {}`",
            self.path.display()
        ))
    }
}

/// The [`Span`] of `range` in `text` (the first line of it when it spans several, so that
/// editors underline the entry's header, not the whole table).
fn span_of(path: &Path, text: &str, range: std::ops::Range<usize>) -> Span {
    let start = range.start.min(text.len());
    let line_end_byte = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let end = range.end.clamp(start, line_end_byte);
    Span::in_text(path.to_owned(), text, start..end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{Confidence, Finding, Hop};

    fn span(line: usize) -> Span {
        Span {
            file: "src/lib.rs".into(),
            byte_start: line * 10,
            byte_end: line * 10 + 4,
            line_start: line,
            column_start: 5,
            line_end: line,
            column_end: 9,
        }
    }

    /// A finding of `code` along `functions` (root first) to `sink`, whose calls are on `line`,
    /// `line + 1`, ...
    fn finding(code: Code, functions: &[&str], sink: &str, line: usize) -> Diagnostic {
        let chain = functions
            .iter()
            .enumerate()
            .map(|(i, f)| Hop {
                function: (*f).to_owned(),
                call_site: span(line + i),
                confidence: Confidence::Exact,
            })
            .collect();
        let mut d = Diagnostic::new(
            code,
            format!("`{}` reaches `{sink}`", functions[0]),
            span(line),
        );
        d.finding = Some(Finding {
            root: functions[0].to_owned(),
            sink: sink.to_owned(),
            sink_reason: "blocks".into(),
            sink_kind: crate::diagnostics::SinkKind::Blocks,
            chain,
            confidence: Confidence::Exact,
            undecided: Vec::new(),
        });
        d
    }

    /// Writes a baseline of `old`, applies it to `new`, returns the kept messages and codes.
    fn check(old: &[Diagnostic], new: Vec<Diagnostic>) -> (Vec<(Code, String)>, usize, String) {
        let text = write(old);
        let baseline = Baseline::parse(Path::new("nosync-baseline.toml"), text.clone())
            .expect("written baseline parses");
        let applied = baseline.apply(new);
        let kept = applied
            .diagnostics
            .iter()
            .map(|d| (d.code, d.message.clone()))
            .collect();
        (kept, applied.suppressed, text)
    }

    #[test]
    fn written_file_is_sorted_versioned_and_readable() {
        let old = [
            finding(Code::SyncInNoSync, &["c::z", "c::y"], "c::sink", 3),
            finding(Code::SyncInNoSync, &["c::a"], "c::sink", 9),
            finding(Code::SyncInNoSync, &["c::a"], "c::sink", 20),
        ];
        let text = write(&old);
        assert!(text.contains("version = 1\n"), "{text}");
        let a = text.find("root = \"c::a\"").expect("entry a");
        let z = text.find("root = \"c::z\"").expect("entry z");
        assert!(a < z, "sorted: {text}");
        assert_eq!(
            text.matches("[[finding]]").count(),
            2,
            "deduplicated: {text}"
        );
        assert!(text.contains("via = [\"c::y\"]"), "{text}");
        let keys: BTreeSet<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with('[') && !l.is_empty())
            .filter_map(|l| l.split(" = ").next())
            .collect();
        let expected = BTreeSet::from(["version", "code", "root", "via", "sink"]);
        assert_eq!(keys, expected, "only keys, no line numbers: {text}");
        assert!(!text.contains("via = []"), "empty `via` left out: {text}");
    }

    #[test]
    fn moved_findings_stay_suppressed() {
        let old = [finding(
            Code::SyncInNoSync,
            &["c::root", "c::mid"],
            "c::sink",
            3,
        )];
        let new = vec![finding(
            Code::SyncInNoSync,
            &["c::root", "c::mid"],
            "c::sink",
            40,
        )];
        let (kept, suppressed, _) = check(&old, new);
        assert_eq!((kept, suppressed), (vec![], 1));
    }

    #[test]
    fn new_findings_are_kept_and_old_ones_reported_stale() {
        let old = [finding(
            Code::SyncInNoSync,
            &["c::root", "c::mid"],
            "c::sink",
            3,
        )];
        let new = vec![
            finding(Code::SyncInNoSync, &["c::root", "c::other"], "c::sink", 3),
            finding(
                Code::PossibleSyncInNoSync,
                &["c::root", "c::mid"],
                "c::sink",
                3,
            ),
        ];
        let (kept, suppressed, _) = check(&old, new);
        assert_eq!(suppressed, 0);
        let codes: Vec<Code> = kept.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            codes,
            [
                Code::SyncInNoSync,
                Code::PossibleSyncInNoSync,
                Code::StaleBaselineEntry
            ]
        );
    }

    /// The root's call still reaches the sink, through another path further down: the
    /// same violation, so the entry still matches and is not stale.
    #[test]
    fn a_violation_rerouted_below_the_roots_call_stays_suppressed() {
        let old = [finding(
            Code::SyncInNoSync,
            &["c::root", "c::helper", "c::x"],
            "c::sink",
            3,
        )];
        let new = vec![finding(
            Code::SyncInNoSync,
            &["c::root", "c::helper", "c::y", "c::z"],
            "c::sink",
            3,
        )];
        let (kept, suppressed, _) = check(&old, new);
        assert_eq!((kept, suppressed), (vec![], 1));
    }

    /// Two calls of the root reach the sink: fixing one leaves the other's entry valid and
    /// makes the fixed one's stale.
    #[test]
    fn each_call_of_the_root_is_its_own_entry() {
        let old = [
            finding(Code::SyncInNoSync, &["c::root", "c::a"], "c::sink", 3),
            finding(Code::SyncInNoSync, &["c::root", "c::b"], "c::sink", 5),
        ];
        let new = vec![finding(
            Code::SyncInNoSync,
            &["c::root", "c::b"],
            "c::sink",
            5,
        )];
        let (kept, suppressed, text) = check(&old, new);
        assert_eq!(text.matches("[[finding]]").count(), 2, "{text}");
        assert_eq!(suppressed, 1);
        let codes: Vec<Code> = kept.iter().map(|(c, _)| *c).collect();
        assert_eq!(codes, [Code::StaleBaselineEntry], "{kept:?}");
    }

    #[test]
    fn stale_entries_point_at_their_entry() {
        let old = [
            finding(Code::SyncInNoSync, &["c::a"], "c::sink", 1),
            finding(Code::SyncInNoSync, &["c::b"], "c::sink", 1),
        ];
        let text = write(&old);
        let baseline =
            Baseline::parse(Path::new("b.toml"), text.clone()).expect("written baseline parses");
        let applied = baseline.apply(vec![finding(Code::SyncInNoSync, &["c::a"], "c::sink", 1)]);
        let [stale] = applied.diagnostics.as_slice() else {
            panic!("one stale entry expected: {:?}", applied.diagnostics);
        };
        let line = text
            .lines()
            .nth(stale.primary.line_start - 1)
            .unwrap_or_default();
        let entry_start = text.find("root = \"c::b\"").expect("entry b");
        assert!(stale.primary.byte_start <= entry_start, "{stale:?}\n{text}");
        assert!(
            line.starts_with("[[finding]]") || line.starts_with("code"),
            "points at `{line}`"
        );
        assert!(stale.message.contains("`c::b`"), "{}", stale.message);
    }

    #[test]
    fn allowed_and_finding_less_diagnostics_are_not_recorded() {
        let mut allowed = finding(Code::SyncInNoSync, &["c::a"], "c::sink", 1);
        allowed.level = Level::Allow;
        let parse = Diagnostic::new(Code::ParseError, "expected `;`", span(2));
        let text = write(&[allowed, parse.clone()]);
        assert!(!text.contains("[[finding]]"), "{text}");
        let (kept, _, _) = check(&[], vec![parse]);
        assert_eq!(kept, [(Code::ParseError, "expected `;`".to_owned())]);
    }

    #[test]
    fn bad_files_are_located_errors() {
        let err = Baseline::parse(Path::new("b.toml"), "version = 2\n".into()).unwrap_err();
        assert!(format!("{err:#}").contains("version 2"), "{err:#}");
        let err = Baseline::parse(
            Path::new("b.toml"),
            "version = 1\n[[finding]]\ncode = 1\n".into(),
        )
        .unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("b.toml") && text.contains("line 3"), "{text}");
        let err =
            Baseline::parse(Path::new("b.toml"), "version = 1\nextra = 1\n".into()).unwrap_err();
        assert!(format!("{err:#}").contains("extra"), "{err:#}");
    }
}
