//! `--format json` / `--message-format json`: one JSON object per line, in the shape of
//! `cargo check --message-format=json`, so that rust-analyzer and other cargo-message consumers
//! read it unchanged.
//!
//! Each diagnostic becomes a `compiler-message` whose `message` is a rustc diagnostic (primary span
//! with its source lines, one child note per hop with its span, `rendered` = the human text) plus a
//! `nosync` object with the finding in machine form (`null` for diagnostics that are not
//! findings). The stream ends with `{"reason":"build-finished","success":...}`, where `success`
//! means no diagnostic is denied. Allowed diagnostics are not rendered.
//!
//! The package and target of each message are the report's ([`crate::report::cargo`]).

use crate::diagnostics::{Finding, Level, Note, Span, explain};
use crate::report::cargo::{Target, path_text};
use crate::report::{Item, Report};
use crate::source::SourceMap;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// What goes in each message's `rendered` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rendering {
    /// With ANSI colours (`json-diagnostic-rendered-ansi`).
    pub ansi: bool,
    /// The short one-line form (`json-diagnostic-short`) instead of the human text.
    pub short: bool,
}

#[derive(Serialize)]
struct CompilerMessage<'a> {
    reason: &'static str,
    package_id: &'a str,
    manifest_path: &'a Path,
    target: &'a Target,
    message: MessageJson<'a>,
    nosync: Option<FindingJson<'a>>,
}

#[derive(Serialize)]
struct MessageJson<'a> {
    #[serde(rename = "$message_type")]
    message_type: &'static str,
    message: &'a str,
    code: Option<CodeJson>,
    level: &'static str,
    spans: Vec<SpanJson<'a>>,
    children: Vec<MessageJson<'a>>,
    rendered: Option<String>,
}

#[derive(Serialize)]
struct CodeJson {
    code: &'static str,
    explanation: Option<&'static str>,
}

#[derive(Serialize)]
struct SpanJson<'a> {
    file_name: String,
    byte_start: usize,
    byte_end: usize,
    line_start: usize,
    line_end: usize,
    column_start: usize,
    column_end: usize,
    is_primary: bool,
    text: Vec<SpanLine>,
    label: Option<&'a str>,
    suggested_replacement: Option<String>,
    suggestion_applicability: Option<String>,
    expansion: Option<()>,
}

#[derive(Serialize)]
struct SpanLine {
    text: String,
    highlight_start: usize,
    highlight_end: usize,
}

#[derive(Serialize)]
struct FindingJson<'a> {
    root: &'a str,
    sink: &'a str,
    chain: Vec<HopJson<'a>>,
    confidence: crate::diagnostics::Confidence,
    sink_reason: &'a str,
    sink_kind: crate::diagnostics::SinkKind,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    undecided: &'a [String],
    /// What a wait report says of it (`--runtime-report`).
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime: Option<crate::diagnostics::Runtime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    other_chains: Option<OtherChainsJson<'a>>,
}

/// A finding's other chains: how many, and where the first ones join the shown chain.
#[derive(Serialize)]
struct OtherChainsJson<'a> {
    count: usize,
    joins: Vec<JoinJson<'a>>,
}

#[derive(Serialize)]
struct JoinJson<'a> {
    function: &'a str,
    file: String,
    line: usize,
    column: usize,
    joins: &'a str,
    confidence: crate::diagnostics::Confidence,
    branch: bool,
    hops: usize,
}

#[derive(Serialize)]
struct HopJson<'a> {
    function: &'a str,
    file: String,
    line: usize,
    column: usize,
}

/// Writes every reported diagnostic as one `compiler-message` line, then the
/// `build-finished` line. Returns `false` when a `rendered` field could only hold the
/// diagnostic's short form (see [`super::human::render_or_short`]).
pub(crate) fn write(
    report: &Report<'_>,
    rendering: Rendering,
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    let mut complete = true;
    for item in &report.items {
        let (line, ok) = message_line(item, report.sources, rendering);
        complete &= ok;
        writeln!(out, "{line}")?;
    }
    writeln!(out, "{}", build_finished(!report.denied()))?;
    Ok(complete)
}

/// The final line of the stream.
fn build_finished(success: bool) -> String {
    serde_json::json!({ "reason": "build-finished", "success": success }).to_string()
}

/// One `compiler-message` line (no newline), and whether its `rendered` field is complete.
fn message_line(item: &Item<'_>, sources: &SourceMap, rendering: Rendering) -> (String, bool) {
    let diagnostic = item.diagnostic;
    let (rendered, complete) = if rendering.short {
        (format!("{}\n", super::short::line(diagnostic)), true)
    } else {
        super::human::render_or_short(diagnostic, sources, rendering.ansi)
    };
    let message = CompilerMessage {
        reason: "compiler-message",
        package_id: &item.package.package_id,
        manifest_path: &item.package.manifest_path,
        target: &item.package.target,
        message: MessageJson {
            message_type: "diagnostic",
            message: &diagnostic.message,
            code: Some(CodeJson {
                code: diagnostic.code.as_str(),
                explanation: explain::explain(diagnostic.code),
            }),
            level: level_name(diagnostic.level),
            spans: vec![span_json(
                &diagnostic.primary,
                true,
                diagnostic.label.as_deref(),
                sources,
            )],
            children: diagnostic.notes.iter().map(|n| child(n, sources)).collect(),
            rendered: Some(rendered),
        },
        nosync: diagnostic.finding.as_ref().map(finding_json),
    };
    // Strings, numbers and paths always serialise.
    (
        serde_json::to_string(&message).unwrap_or_default(),
        complete,
    )
}

/// rustc's level names.
fn level_name(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn => "warning",
        Level::Allow => "note",
    }
}

/// A note as a rustc child: `help: ...` notes become `help` children, the rest `note`.
fn child<'a>(note: &'a Note, sources: &SourceMap) -> MessageJson<'a> {
    let (level, message) = match note.help_text() {
        Some(rest) => ("help", rest),
        None => ("note", note.message.as_str()),
    };
    MessageJson {
        message_type: "diagnostic",
        message,
        code: None,
        level,
        spans: note
            .span
            .iter()
            .map(|span| span_json(span, true, None, sources))
            .collect(),
        children: Vec::new(),
        rendered: None,
    }
}

fn span_json<'a>(
    span: &Span,
    is_primary: bool,
    label: Option<&'a str>,
    sources: &SourceMap,
) -> SpanJson<'a> {
    SpanJson {
        file_name: path_text(&span.file),
        byte_start: span.byte_start,
        byte_end: span.byte_end,
        line_start: span.line_start,
        line_end: span.line_end,
        column_start: span.column_start,
        column_end: span.column_end,
        is_primary,
        text: sources
            .text(&span.file)
            .map_or_else(Vec::new, |text| span_lines(text, span)),
        label,
        suggested_replacement: None,
        suggestion_applicability: None,
        expansion: None,
    }
}

/// rustc's `text`: each source line the span covers, with the highlighted columns (1-based,
/// end exclusive; whole lines in the middle of a multi-line span). The lines are found from the
/// span's byte offset, so the cost is the span's length, not the file's; a span that does not
/// fit the text gets no lines.
fn span_lines(text: &str, span: &Span) -> Vec<SpanLine> {
    let start = span.byte_start;
    let Some(before) = text.get(..start) else {
        return Vec::new();
    };
    let begin = before.rfind('\n').map_or(0, |i| i + 1);
    let count = span.line_end.saturating_sub(span.line_start) + 1;
    text[begin..]
        .lines()
        .take(count)
        .enumerate()
        .map(|(index, line)| {
            let width = line.chars().count() + 1;
            let start = if index == 0 { span.column_start } else { 1 };
            let end = if index + 1 == count {
                span.column_end
            } else {
                width
            };
            SpanLine {
                text: line.to_owned(),
                highlight_start: start,
                highlight_end: end,
            }
        })
        .collect()
}

fn finding_json(finding: &Finding) -> FindingJson<'_> {
    FindingJson {
        root: &finding.root,
        sink: &finding.sink,
        chain: finding
            .chain
            .iter()
            .map(|hop| HopJson {
                function: &hop.function,
                file: path_text(&hop.call_site.file),
                line: hop.call_site.line_start,
                column: hop.call_site.column_start,
            })
            .collect(),
        confidence: finding.confidence,
        sink_reason: &finding.sink_reason,
        sink_kind: finding.sink_kind,
        undecided: &finding.undecided,
        runtime: finding.runtime,
        other_chains: (finding.other_chain_count > 0).then(|| OtherChainsJson {
            count: finding.other_chain_count,
            joins: (finding.other_chains.iter())
                .map(|o| JoinJson {
                    function: &o.function,
                    file: path_text(&o.call_site.file),
                    line: o.call_site.line_start,
                    column: o.call_site.column_start,
                    joins: &o.joins,
                    confidence: o.confidence,
                    branch: o.branch,
                    hops: o.hops,
                })
                .collect(),
        }),
    }
}
