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
//! Several findings can share a key (the root calls `to_scalar` twice, each call reaching the
//! same sink): an entry records how many (`count`). A run with more findings of a key than its
//! entries record reports the extra ones as new; one with fewer reports the entry stale. An
//! entry without `count` (written before counts were recorded) accepts any number.
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
//! count = 1
//! ```
//!
//! Diagnostics without a [`Finding`](crate::diagnostics::Finding) (parse errors, config errors)
//! are never baselined: they are problems with the input, not accepted debt.
//! Apply the baseline before the level overrides, so stale entries get levels like the rest.

use crate::diagnostics::{Code, Diagnostic, Level, Span};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
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
    /// How many findings of this chain are accepted; `None` (a file written before counts
    /// were recorded): any number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
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
            count: Some(1),
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

/// The baseline text for the reported (not allowed) findings among `diagnostics`: one entry
/// per chain, with how many findings follow it.
pub fn write(diagnostics: &[Diagnostic]) -> String {
    let mut counted: BTreeMap<Entry, usize> = BTreeMap::new();
    let found = diagnostics.iter().filter(|d| d.level != Level::Allow);
    for entry in found.filter_map(Entry::of) {
        *counted.entry(entry).or_default() += 1;
    }
    let entries: Vec<Entry> = counted
        .into_iter()
        .map(|(entry, n)| Entry {
            count: Some(n),
            ..entry
        })
        .collect();
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

    /// Removes the diagnostics the baseline lists, as many of each key as its entries count
    /// (a finding past that count is kept, as new), and adds a `stale-baseline-entry` per entry
    /// that matches none of them, or whose key has fewer findings than its entries count.
    pub fn apply(&self, diagnostics: Vec<Diagnostic>) -> Applied {
        let accepted = self.accepted();
        let mut used: BTreeMap<Key, usize> = BTreeMap::new();
        let mut kept = Vec::with_capacity(diagnostics.len());
        let mut suppressed = 0;
        for diagnostic in diagnostics {
            let Some(key) = Entry::of(&diagnostic).map(|e| e.key()) else {
                kept.push(diagnostic);
                continue;
            };
            let Some(&limit) = accepted.get(&key) else {
                kept.push(diagnostic);
                continue;
            };
            let n = used.entry(key).or_default();
            if limit.is_none_or(|limit| *n < limit) {
                *n += 1;
                suppressed += 1;
            } else {
                kept.push(one_more(diagnostic, *n));
            }
        }
        kept.extend(self.stale_entries(&accepted, &used));
        Applied {
            diagnostics: kept,
            suppressed,
        }
    }

    /// How many findings of each key the entries accept (`None`: any number).
    fn accepted(&self) -> BTreeMap<Key, Option<usize>> {
        let mut accepted: BTreeMap<Key, Option<usize>> = BTreeMap::new();
        for entry in self.entries() {
            let total = accepted.entry(entry.key()).or_insert(Some(0));
            *total = total.zip(entry.count).map(|(a, b)| a + b);
        }
        accepted
    }

    /// A `stale-baseline-entry` per entry whose key no finding has, and one at the first
    /// entry of a key with fewer findings than its entries count.
    fn stale_entries(
        &self,
        accepted: &BTreeMap<Key, Option<usize>>,
        used: &BTreeMap<Key, usize>,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut told = BTreeSet::new();
        for (entry, range) in &self.entries {
            let key = entry.key();
            let n = used.get(&key).copied().unwrap_or(0);
            let limit = accepted.get(&key).copied().flatten();
            if n == 0 {
                out.push(self.stale(entry, range.clone()));
            } else if let Some(limit) = limit.filter(|&l| n < l)
                && told.insert(key)
            {
                out.push(self.fewer(entry, range.clone(), n, limit));
            }
        }
        out
    }

    /// The entry of a key with `n` findings where the baseline accepts `limit`.
    fn fewer(
        &self,
        entry: &Entry,
        range: std::ops::Range<usize>,
        n: usize,
        limit: usize,
    ) -> Diagnostic {
        let span = span_of(&self.path, &self.text, range);
        Diagnostic::new(
            Code::StaleBaselineEntry,
            format!(
                "baseline accepts {limit} findings of `{}` reaching `{}` this way; the run has {n}",
                entry.root, entry.sink
            ),
            span,
        )
        .with_label("count higher than the findings")
        .with_help(format_args!(
            "lower its `count` to {n}, or regenerate the file with `--write-baseline {}`",
            self.path.display()
        ))
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

/// A finding of a key whose baseline entries are used up: kept, with a note saying so.
fn one_more(diagnostic: Diagnostic, accepted: usize) -> Diagnostic {
    let note = format!(
        "the baseline accepts {accepted} finding{} of this chain; this one is new",
        if accepted == 1 { "" } else { "s" }
    );
    diagnostic.with_note(note, None)
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
mod tests;
