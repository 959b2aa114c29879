//! Diagnostics: the plain data every stage produces and every renderer consumes.
//!
//! Nothing here renders or prints. Analysis stages return `(T, Vec<Diagnostic>)`;
//! `render::{human, json, sarif}` turn the final list into text. A diagnostic always
//! has a primary span (editors drop span-less messages), and a finding (a chain from a
//! `#[no_sync]` root to a blocking sink) carries its machine-readable form in
//! [`Finding`] so that no renderer has to re-derive it from prose.

mod code;
pub mod explain;
mod order;
pub mod suggest;

pub use code::{Code, Level};
pub use order::sort;

use line_index::{LineIndex, TextSize, WideEncoding};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A region of one source file. Lines and columns are 1-based; columns count
/// `char`s, as rustc's JSON does; byte offsets are 0-based into the file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    /// The file as the lint read it (absolute, or relative to the working directory).
    pub file: PathBuf,
    pub byte_start: usize,
    pub byte_end: usize,
    pub line_start: usize,
    pub column_start: usize,
    pub line_end: usize,
    pub column_end: usize,
}

impl Span {
    /// The span of bytes `range` of `text`, a file read outside the source map (the
    /// baseline, a lock file), lines and columns counted as the source map counts them.
    pub fn in_text(file: PathBuf, text: &str, range: std::ops::Range<usize>) -> Self {
        let index = LineIndex::new(text);
        let (line_start, column_start) = line_col(&index, text, range.start);
        let (line_end, column_end) = line_col(&index, text, range.end);
        Span {
            file,
            byte_start: range.start,
            byte_end: range.end,
            line_start,
            column_start,
            line_end,
            column_end,
        }
    }

    /// Line 1, column 1 of `file`: where a diagnostic about a whole file points.
    pub fn start_of(file: PathBuf) -> Self {
        Span {
            file,
            byte_start: 0,
            byte_end: 0,
            line_start: 1,
            column_start: 1,
            line_end: 1,
            column_end: 1,
        }
    }
}

/// 1-based line and 1-based column (in chars, as rustc counts them) of byte `byte` of `text`,
/// which `index` indexes (to `u32::MAX` bytes): one past the end, or inside a char, counts as
/// the end, or the start of that char.
pub fn line_col(index: &LineIndex, text: &str, byte: usize) -> (usize, usize) {
    let mut byte = byte.min(text.len()).min(u32::MAX as usize);
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    let at = index.line_col(TextSize::new(byte as u32));
    let wide = index.to_wide(WideEncoding::Utf32, at);
    let (line, col) = wide.map_or((at.line, at.col), |w| (w.line, w.col));
    (line as usize + 1, col as usize + 1)
}

/// A secondary message attached to a diagnostic, optionally pointing at code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    pub message: String,
    pub span: Option<Span>,
}

/// How sure the lint is of a chain: the weakest edge on it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// Every call on the chain was resolved by path or by a known receiver type.
    Exact,
    /// At least one receiver type was inferred (return types, fields, `let` bindings).
    Inferred,
    /// At least one method call was matched by its name alone.
    NameOnly,
}

/// One hop of a chain: `function` calls the next hop at `call_site`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hop {
    /// The calling function as a Rust path (`demo::train::step`).
    pub function: String,
    /// Where, inside `function`, the call to the next hop is.
    pub call_site: Span,
    /// How this particular call was resolved.
    pub confidence: Confidence,
}

/// What kind of wait a sink is; it decides the code of a finding that reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkKind {
    /// Blocks the host on every call: `sync-in-no-sync`.
    #[default]
    Blocks,
    /// May block (`#[synchronizes(maybe)]`): `possible-sync-in-no-sync`.
    May,
    /// One-time setup (a module load, a compile, a context or stream creation), typically
    /// behind a cache that serves every later call: `setup-sync-in-no-sync`.
    Setup,
}

/// The machine-readable form of a `sync-in-no-sync`-like finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The `#[no_sync]` (or configured) root, as a Rust path.
    pub root: String,
    /// The blocking API reached, as a Rust path (`cudarc::driver::CudaStream::synchronize`).
    pub sink: String,
    /// Why the sink blocks the host.
    pub sink_reason: String,
    /// Whether the sink always blocks, may block, or is one-time setup.
    pub sink_kind: SinkKind,
    /// The chain from the root to the sink, one hop per call; `chain[0].function == root`.
    pub chain: Vec<Hop>,
    /// The weakest confidence along the chain.
    pub confidence: Confidence,
    /// The conditions of the chain's waits that the lint could not decide (an argument of a
    /// modelled call, a failing path below the root), in words: a `blocks` sink reached so
    /// is a `possible-sync-in-no-sync`.
    pub undecided: Vec<String>,
    /// What a run's wait report says of the finding (`--runtime-report`); `None` without one.
    pub runtime: Option<Runtime>,
    /// How many other chains lead from the same call in the root to the same sink, each
    /// joining the shown chain by a call of its own (see [`OtherChain`]).
    pub other_chain_count: usize,
    /// The first [`OTHER_CHAINS_LISTED`] of them, nearest the root first.
    pub other_chains: Vec<OtherChain>,
}

/// How many of a finding's other chains it lists.
pub const OTHER_CHAINS_LISTED: usize = 16;

/// Another chain from a finding's call to its sink: it joins the shown chain where
/// `function` calls `joins` (a fn of the shown chain, or the sink) at `call_site`, and goes
/// on along the shown chain from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherChain {
    pub function: String,
    pub call_site: Span,
    /// How that call was resolved.
    pub confidence: Confidence,
    pub joins: String,
    /// Whether that call is in a branch the lint does not know is taken.
    pub branch: bool,
    /// The chain's length in calls, from the root to the sink.
    pub hops: usize,
}

/// What a wait report says of a finding: the waits it observed on the finding's chain, or
/// none (the run did not cover it, or the arm never runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Runtime {
    Observed {
        /// How many waits.
        count: u64,
        /// Their total and longest time, in nanoseconds.
        total_ns: u64,
        max_ns: u64,
        /// The finding's share of the time of every confirmed finding, 0 to 100.
        rank: u8,
    },
    NotObserved,
}

/// The Cargo target a diagnostic belongs to, for cargo-shaped JSON output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    pub package_id: String,
    pub package_name: String,
    pub manifest_path: PathBuf,
    pub target_name: String,
    /// Cargo's target kinds (`lib`, `bin`, `example`, ...).
    pub target_kind: Vec<String>,
    pub target_src_path: PathBuf,
}

/// One diagnostic: what every stage reports and every renderer consumes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub code: Code,
    /// The level after command-line and config overrides (starts as `code.default_level()`).
    pub level: Level,
    /// One line, rustc style: lower case, no trailing period.
    pub message: String,
    pub primary: Span,
    /// The label under the primary span.
    pub label: Option<String>,
    /// Notes in order: for a finding, one per hop, then any help.
    pub notes: Vec<Note>,
    pub finding: Option<Finding>,
    pub origin: Option<Origin>,
}

impl Diagnostic {
    /// A diagnostic at `primary` with the code's default level.
    pub fn new(code: Code, message: impl Into<String>, primary: Span) -> Self {
        Diagnostic {
            code,
            level: code.default_level(),
            message: message.into(),
            primary,
            label: None,
            notes: Vec::new(),
            finding: None,
            origin: None,
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn with_note(mut self, message: impl Into<String>, span: Option<Span>) -> Self {
        self.notes.push(Note {
            message: message.into(),
            span,
        });
        self
    }
}

/// Prefix of a note that is a suggestion (`help:` in rustc's output).
pub const HELP_PREFIX: &str = "help: ";

impl Note {
    /// The text of a help note (`help: ..`), without the prefix.
    pub fn help_text(&self) -> Option<&str> {
        self.message.strip_prefix(HELP_PREFIX)
    }
}

impl Diagnostic {
    /// Adds a `help:` note.
    pub fn with_help(self, message: impl std::fmt::Display) -> Self {
        self.with_note(format!("{HELP_PREFIX}{message}"), None)
    }
}
