//! The wait report's format, version 1 (`docs/wait-report.md`): what the runtime hook writes
//! with `NOSYNC_REPORT=json:PATH`, read and checked here. Malformed JSON, another `format` or
//! another `version` is an error located in the file (line and column of the JSON), never an
//! empty report.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The value of the report's `format` field.
pub(crate) const FORMAT: &str = "nosync-wait-report";
/// The only version this lint reads.
pub(crate) const VERSION: u64 = 1;

/// A wait report.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitReport {
    /// Checked before the rest is read ([`parse`]).
    #[serde(rename = "format")]
    _format: String,
    #[serde(rename = "version")]
    _version: u64,
    pub program: Program,
    /// Whether the binary had line tables: without them, frames have no file or line.
    pub line_tables: bool,
    pub sites: Vec<Site>,
}

/// The program that ran.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Program {
    pub exe: String,
    pub pid: u64,
    pub backend: String,
}

/// One place the hook saw waits: an API called from one stack.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Site {
    pub api: String,
    pub why: String,
    pub in_scope: bool,
    pub scope: Option<Scope>,
    /// Innermost first, without the driver's, cudarc's, nosync's and std's frames.
    pub frames: Vec<Frame>,
    pub count: u64,
    pub total_ns: u64,
    pub max_ns: u64,
}

/// The scope a site's waits were in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scope {
    pub kind: ScopeKind,
    /// For `no_sync`, the fn's path; `None` for a `forbid` block.
    pub function: Option<String>,
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ScopeKind {
    NoSync,
    Forbid,
}

/// One frame: a demangled Rust path, and where (when the binary has line tables).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Frame {
    pub function: String,
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
}

/// Why a report cannot be read; its `Display` names the file and, for the JSON, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FormatError {
    pub message: String,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Parses the text of the report at `path`, checking its format and version first (so a
/// report of another format or version says so, rather than which field it lacks).
pub(crate) fn parse(path: &Path, text: &str) -> Result<WaitReport, FormatError> {
    let at = |line: usize, column: usize, what: String| FormatError {
        message: format!("{}:{line}:{column}: {what}", path.display()),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        at(
            e.line(),
            e.column(),
            format!("malformed wait report: {}", unplaced(&e)),
        )
    })?;
    let format = value.get("format").and_then(|f| f.as_str());
    if format != Some(FORMAT) {
        let (line, column) = key_at(text, "format");
        let found = format.map_or("none".to_owned(), |f| format!("`{f}`"));
        let what = format!("not a nosync wait report: `format` is {found}, expected `{FORMAT}`");
        return Err(at(line, column, what));
    }
    let version = value.get("version").and_then(|v| v.as_u64());
    if version != Some(VERSION) {
        let (line, column) = key_at(text, "version");
        let found = value
            .get("version")
            .map_or("none".to_owned(), |v| v.to_string());
        let what = format!(
            "wait report version {found} is not supported: this lint reads version {VERSION}"
        );
        return Err(at(line, column, what));
    }
    serde_json::from_str(text).map_err(|e| {
        at(
            e.line(),
            e.column(),
            format!("malformed wait report: {}", unplaced(&e)),
        )
    })
}

/// Line and column (1-based) of the first `"key"` in `text`; 1:1 when it is not there.
fn key_at(text: &str, key: &str) -> (usize, usize) {
    let Some(at) = text.find(&format!("\"{key}\"")) else {
        return (1, 1);
    };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// serde_json's message without its ` at line L column C` (the error is located already).
fn unplaced(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
