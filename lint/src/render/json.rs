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
//! Diagnostics without an [`Origin`] (configuration, baseline and workspace-level ones) are
//! attributed to the workspace's root package, or, in a virtual workspace, to its first member
//! (see [`workspace_origin`]): consumers need a package id, and the workspace manifest is where
//! such problems are fixed.

use crate::diagnostics::{Diagnostic, Finding, Level, Note, Origin, Span, explain};
use serde::Serialize;
use std::path::Path;

/// What the JSON renderer needs besides the diagnostics. Everything here is looked up, never
/// computed: the renderer only formats.
pub struct JsonContext<'a, 's> {
    /// The text of a file, by the path its spans carry (for the spans' `text` lines).
    pub source: &'a dyn Fn(&Path) -> Option<&'s str>,
    /// The human rendering of one diagnostic (cargo's `rendered` field).
    pub rendered: &'a dyn Fn(&Diagnostic) -> String,
    /// The origin of diagnostics that have none (see [`workspace_origin`]).
    pub workspace: &'a Origin,
    /// cargo's metadata, for each target's edition and doc/test flags.
    pub metadata: Option<&'a cargo_metadata::Metadata>,
}

impl std::fmt::Debug for JsonContext<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonContext")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct CompilerMessage<'a> {
    reason: &'static str,
    package_id: &'a str,
    manifest_path: &'a Path,
    target: TargetJson,
    message: MessageJson<'a>,
    nosync: Option<FindingJson<'a>>,
}

/// cargo's `target` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetJson {
    pub kind: Vec<String>,
    pub crate_types: Vec<String>,
    pub name: String,
    pub src_path: String,
    pub edition: String,
    pub doc: bool,
    pub doctest: bool,
    pub test: bool,
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
}

#[derive(Serialize)]
struct HopJson<'a> {
    function: &'a str,
    file: String,
    line: usize,
    column: usize,
}

/// Renders every reported diagnostic as one `compiler-message` line, then the
/// `build-finished` line.
pub fn render(diagnostics: &[Diagnostic], cx: &JsonContext<'_, '_>) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics.iter().filter(|d| d.level != Level::Allow) {
        out.push_str(&message_line(diagnostic, cx));
        out.push('\n');
    }
    let success = !diagnostics.iter().any(|d| d.level == Level::Deny);
    out.push_str(&build_finished(success));
    out.push('\n');
    out
}

/// The final line of the stream.
pub fn build_finished(success: bool) -> String {
    serde_json::json!({ "reason": "build-finished", "success": success }).to_string()
}

/// One `compiler-message` line (no newline).
pub fn message_line(diagnostic: &Diagnostic, cx: &JsonContext<'_, '_>) -> String {
    let origin = diagnostic.origin.as_ref().unwrap_or(cx.workspace);
    let message = CompilerMessage {
        reason: "compiler-message",
        package_id: &origin.package_id,
        manifest_path: &origin.manifest_path,
        target: target_json(origin, cx.metadata),
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
                cx,
            )],
            children: diagnostic.notes.iter().map(|n| child(n, cx)).collect(),
            rendered: Some((cx.rendered)(diagnostic)),
        },
        nosync: diagnostic.finding.as_ref().map(finding_json),
    };
    // Strings, numbers and paths always serialise.
    serde_json::to_string(&message).unwrap_or_default()
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
fn child<'a>(note: &'a Note, cx: &JsonContext<'_, '_>) -> MessageJson<'a> {
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
            .map(|span| span_json(span, true, None, cx))
            .collect(),
        children: Vec::new(),
        rendered: None,
    }
}

fn span_json<'a>(
    span: &Span,
    is_primary: bool,
    label: Option<&'a str>,
    cx: &JsonContext<'_, '_>,
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
        text: (cx.source)(&span.file).map_or_else(Vec::new, |text| span_lines(text, span)),
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
    }
}

/// A path as the JSON carries it: with `/` separators on every platform for relative paths.
fn path_text(path: &Path) -> String {
    let text = path.to_string_lossy();
    if path.is_relative() && std::path::MAIN_SEPARATOR != '/' {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    } else {
        text.into_owned()
    }
}

/// cargo's `target` object for `origin`: cargo's own values when the metadata has the target,
/// else cargo's defaults for the target's kind (edition: the package's, or 2015, cargo's default
/// when a manifest names none).
pub fn target_json(origin: &Origin, metadata: Option<&cargo_metadata::Metadata>) -> TargetJson {
    let package = metadata.and_then(|m| m.packages.iter().find(|p| p.id.repr == origin.package_id));
    let target = package.and_then(|p| {
        p.targets
            .iter()
            .find(|t| t.name == origin.target_name && kinds(t) == origin.target_kind)
    });
    match target {
        Some(t) => TargetJson {
            kind: kinds(t),
            crate_types: t.crate_types.iter().map(ToString::to_string).collect(),
            name: t.name.clone(),
            src_path: t.src_path.to_string(),
            edition: t.edition.to_string(),
            doc: t.doc,
            doctest: t.doctest,
            test: t.test,
        },
        None => target_defaults(origin, package.map(|p| p.edition.to_string())),
    }
}

/// cargo's defaults for a target of `origin`'s kind.
fn target_defaults(origin: &Origin, edition: Option<String>) -> TargetJson {
    let kind = origin.target_kind.first().map_or("lib", String::as_str);
    let (doc, doctest, test) = match kind {
        "lib" | "rlib" | "dylib" | "proc-macro" => (true, true, true),
        "bin" => (true, false, true),
        "test" => (false, false, true),
        _ => (false, false, false),
    };
    let crate_types = match kind {
        "bin" | "test" | "bench" | "example" | "custom-build" => vec!["bin".to_owned()],
        _ => origin.target_kind.clone(),
    };
    TargetJson {
        kind: origin.target_kind.clone(),
        crate_types,
        name: origin.target_name.clone(),
        src_path: path_text(&origin.target_src_path),
        edition: edition.unwrap_or_else(|| "2015".to_owned()),
        doc,
        doctest,
        test,
    }
}

fn kinds(target: &cargo_metadata::Target) -> Vec<String> {
    target.kind.iter().map(ToString::to_string).collect()
}

/// The origin given to diagnostics that have none: the root package of the workspace (its
/// library, else its first target), else its first member; without metadata, a package id
/// naming the manifest's directory.
pub fn workspace_origin(
    metadata: Option<&cargo_metadata::Metadata>,
    manifest_path: &Path,
) -> Origin {
    // The package of the workspace's root manifest (whichever manifest `cargo metadata`
    // was given), else the first member.
    let package = metadata.and_then(|m| {
        let root_manifest = m.workspace_root.join("Cargo.toml");
        let members = m.workspace_packages();
        members
            .iter()
            .find(|p| p.manifest_path == root_manifest)
            .or_else(|| members.first())
            .copied()
    });
    let Some(package) = package else {
        let dir = manifest_path.parent().unwrap_or(Path::new("."));
        return Origin {
            package_id: format!("path+file://{}#workspace", path_text(dir)),
            package_name: "workspace".to_owned(),
            manifest_path: manifest_path.to_owned(),
            target_name: "workspace".to_owned(),
            target_kind: vec!["lib".to_owned()],
            target_src_path: manifest_path.to_owned(),
        };
    };
    let target = package
        .targets
        .iter()
        .find(|t| t.is_lib())
        .or_else(|| package.targets.first());
    Origin {
        package_id: package.id.repr.clone(),
        package_name: package.name.to_string(),
        manifest_path: package.manifest_path.clone().into_std_path_buf(),
        target_name: target.map_or_else(|| package.name.to_string(), |t| t.name.clone()),
        target_kind: target.map_or_else(|| vec!["lib".to_owned()], kinds),
        target_src_path: target.map_or_else(
            || package.manifest_path.clone().into_std_path_buf(),
            |t| t.src_path.clone().into_std_path_buf(),
        ),
    }
}
