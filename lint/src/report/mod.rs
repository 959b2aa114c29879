//! The step between the final diagnostics and the renderers: everything a renderer shows
//! that is not in a [`Diagnostic`] is computed here, once, so that `render/` only formats.
//!
//! The input is the list the run ends with (baseline applied, levels set); a [`Report`]
//! keeps the reported ones (level above `allow`), errors before warnings and otherwise in
//! the order given (by file and place; with a wait report, the costliest observed wait
//! first, whatever its level), each as an [`Item`] with its
//! cargo package and target ([`cargo`]: cargo's metadata looked up, or cargo's defaults)
//! and its line-free [`fingerprint`], next to the text of every file the spans point into.

pub(crate) mod cargo;
pub(crate) mod fingerprint;
pub(crate) mod uri;

use crate::diagnostics::{Diagnostic, Level};
use crate::source::SourceMap;
use std::path::{Path, PathBuf};

/// What the report needs to know of the workspace.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The workspace's `Cargo.toml`: the package of diagnostics without an origin when
    /// there is no metadata (see [`cargo::workspace_origin`]).
    pub manifest_path: &'a Path,
    /// `cargo metadata`, for each target's edition and doc/test flags; `None` gives
    /// cargo's defaults.
    pub metadata: Option<&'a cargo_metadata::Metadata>,
    /// The workspace root, SARIF's `%SRCROOT%`; `None` leaves the base to the consumer.
    pub srcroot: Option<&'a Path>,
}

/// The reported diagnostics with what the renderers show of them.
#[derive(Debug)]
pub struct Report<'a> {
    /// The diagnostics above `allow`, in output order.
    pub items: Vec<Item<'a>>,
    /// The text of the files the spans point into (sources, and the baseline file for
    /// stale entries).
    pub sources: &'a SourceMap,
    /// The workspace root, SARIF's `%SRCROOT%`.
    pub srcroot: Option<PathBuf>,
}

/// One reported diagnostic.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    pub diagnostic: &'a Diagnostic,
    /// The cargo package and target the diagnostic is attributed to.
    pub package: cargo::Package,
    /// [`fingerprint::of`] the diagnostic; the second and later items with the same one get
    /// `:2`, `:3`, .. after it, in output order, so that code scanning keeps them apart.
    pub fingerprint: String,
}

impl<'a> Report<'a> {
    /// The report of `diagnostics` (the allowed ones left out), whose spans point into
    /// `sources`.
    pub fn new(
        diagnostics: &'a [Diagnostic],
        sources: &'a SourceMap,
        workspace: &Context<'_>,
    ) -> Report<'a> {
        let fallback = cargo::workspace_origin(workspace.metadata, workspace.manifest_path);
        let mut shown = crate::levels::reported(diagnostics);
        // Errors first, then warnings, each in the order the run gave them (by place); joined
        // with a wait report, the order it gave (the costliest observed wait first).
        let ranked =
            (shown.iter()).any(|d| d.finding.as_ref().is_some_and(|f| f.runtime.is_some()));
        if !ranked {
            shown.sort_by_key(|d| std::cmp::Reverse(d.level));
        }
        let fingerprints = fingerprint::numbered(&shown);
        let items = shown
            .into_iter()
            .zip(fingerprints)
            .map(|(diagnostic, fingerprint)| Item {
                diagnostic,
                package: cargo::package(
                    diagnostic.origin.as_ref().unwrap_or(&fallback),
                    workspace.metadata,
                ),
                fingerprint,
            })
            .collect();
        Report {
            items,
            sources,
            srcroot: workspace.srcroot.map(Path::to_path_buf),
        }
    }

    /// The reported diagnostics, in order.
    pub fn diagnostics(&self) -> impl Iterator<Item = &'a Diagnostic> + '_ {
        self.items.iter().map(|item| item.diagnostic)
    }

    /// How many reported diagnostics have `level`.
    pub fn count(&self, level: Level) -> usize {
        self.diagnostics().filter(|d| d.level == level).count()
    }

    /// Whether a reported diagnostic is denied (the run fails).
    pub fn denied(&self) -> bool {
        crate::levels::denied(self.diagnostics())
    }

    /// Whether the run did not check everything it was asked to: an `internal-error`,
    /// `no-roots` or `unparsed-root` at deny level ([`crate::diagnostics::Code::incomplete`]).
    pub fn incomplete(&self) -> bool {
        self.diagnostics()
            .any(|d| d.code.incomplete() && d.level == Level::Deny)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{Code, Span};

    /// Errors come first, then warnings, each kept in the order given; allowed ones are
    /// left out.
    #[test]
    fn errors_before_warnings() {
        let levels = [
            Level::Warn,
            Level::Deny,
            Level::Allow,
            Level::Warn,
            Level::Deny,
        ];
        let diags: Vec<Diagnostic> = levels
            .iter()
            .enumerate()
            .map(|(i, &level)| {
                let mut at = Span::start_of(PathBuf::from("src/lib.rs"));
                at.line_start = i + 1;
                let mut d = Diagnostic::new(Code::SyncInNoSync, format!("d{i}"), at);
                d.level = level;
                d
            })
            .collect();
        let sources = SourceMap::new(Path::new("/w"));
        let workspace = Context {
            manifest_path: Path::new("/w/Cargo.toml"),
            metadata: None,
            srcroot: None,
        };
        let report = Report::new(&diags, &sources, &workspace);
        let order: Vec<&str> = report.diagnostics().map(|d| d.message.as_str()).collect();
        assert_eq!(order, ["d1", "d4", "d0", "d3"]);
    }
}
