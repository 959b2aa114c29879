//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and SARIF viewers.
//!
//! One run; the driver lists one rule per [`Code`] (help text from `lint/core/docs/diagnostics.md`), each
//! reported diagnostic is a result located at its primary span, with the chain of a finding as a
//! code flow (one thread-flow location per hop). Paths inside the workspace are relative URIs
//! against `%SRCROOT%`, the workspace root; others are `file://` URIs.
//!
//! `partialFingerprints["nosyncChain/v1"]` identifies a result across unrelated edits: the
//! report's [fingerprint](crate::report::fingerprint), which no line number enters.

use crate::diagnostics::{Code, Diagnostic, Level, Span, explain};
use crate::report::uri::{directory_uri, file_uri};
use crate::report::{Item, Report};
use heck::ToUpperCamelCase;
use serde::Serialize;

/// The schema URI written in `$schema`.
pub(crate) const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
/// The fingerprint's key in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "nosyncChain/v1";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    #[serde(skip_serializing_if = "Option::is_none")]
    original_uri_base_ids: Option<serde_json::Value>,
    column_kind: &'static str,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: String,
    short_description: Text,
    full_description: Text,
    /// The code's `--explain` text (no help URI: the text is the documentation).
    help: Help,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    enabled: bool,
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: [&'static str; 2],
    precision: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: [Location; 1],
    partial_fingerprints: serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    /// With `--runtime-report`: an observed finding's share of the waited time, 0 to 100.
    #[serde(skip_serializing_if = "Option::is_none")]
    rank: Option<f64>,
    /// With `--runtime-report`: what the wait report says of the finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<ResultProperties>,
}

#[derive(Serialize)]
struct ResultProperties {
    observed: crate::diagnostics::Runtime,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeFlow {
    thread_flows: [ThreadFlow; 1],
}

#[derive(Serialize)]
struct ThreadFlow {
    locations: Vec<ThreadFlowLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThreadFlowLocation {
    location: Location,
    nesting_level: usize,
}

/// The SARIF log (pretty-printed JSON, newline-terminated) of the report. Its `srcroot` is
/// recorded as `%SRCROOT%` so that viewers can resolve relative URIs; without one the base is
/// left to the consumer (GitHub resolves it to the checkout).
pub(crate) fn render(report: &Report<'_>) -> String {
    let log = Log {
        schema: SCHEMA_URI,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "cargo-nosync-lint",
                    version: crate::VERSION,
                    semantic_version: crate::VERSION,
                    rules: Code::ALL.iter().map(|&code| rule(code)).collect(),
                },
            },
            original_uri_base_ids: report
                .srcroot
                .as_deref()
                .map(|root| serde_json::json!({ "%SRCROOT%": { "uri": directory_uri(root) } })),
            column_kind: "unicodeCodePoints",
            results: report.items.iter().map(result).collect(),
        }],
    };
    // Strings, numbers and maps always serialise.
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}

fn rule(code: Code) -> Rule {
    let help = explain::explain(code).unwrap_or(code.summary());
    Rule {
        id: code.as_str(),
        name: camel_case(code.as_str()),
        short_description: Text {
            text: code.summary().to_owned(),
        },
        full_description: Text {
            text: explain::subsection(code, "What it does")
                .unwrap_or(code.summary())
                .to_owned(),
        },
        help: Help {
            text: help.to_owned(),
            markdown: help.to_owned(),
        },
        default_configuration: Configuration {
            enabled: code.default_level() != Level::Allow,
            level: level_name(code.default_level()),
        },
        properties: RuleProperties {
            tags: ["nosync", "performance"],
            precision: match code {
                Code::SyncInNoSync => "high",
                Code::PossibleSyncInNoSync => "medium",
                Code::UnresolvedCallInNoSync => "low",
                _ => "very-high",
            },
        },
    }
}

/// SARIF's level names.
fn level_name(level: Level) -> &'static str {
    match level {
        Level::Deny => "error",
        Level::Warn => "warning",
        Level::Allow => "none",
    }
}

fn result(item: &Item<'_>) -> SarifResult {
    let diagnostic = item.diagnostic;
    let mut text = diagnostic.message.clone();
    for note in &diagnostic.notes {
        text.push('\n');
        if note.help_text().is_none() {
            text.push_str("note: ");
        }
        text.push_str(&note.message);
    }
    let runtime = diagnostic.finding.as_ref().and_then(|f| f.runtime);
    let mut fingerprints = serde_json::Map::new();
    fingerprints.insert(FINGERPRINT_KEY.to_owned(), item.fingerprint.clone().into());
    SarifResult {
        rule_id: diagnostic.code.as_str(),
        rule_index: Code::ALL
            .iter()
            .position(|&c| c == diagnostic.code)
            .unwrap_or_default(),
        level: level_name(diagnostic.level),
        message: Text { text },
        locations: [location(&diagnostic.primary, diagnostic.label.clone())],
        partial_fingerprints: fingerprints,
        code_flows: code_flows(diagnostic),
        rank: runtime.and_then(|r| match r {
            crate::diagnostics::Runtime::Observed { rank, .. } => Some(f64::from(rank)),
            crate::diagnostics::Runtime::NotObserved => None,
        }),
        properties: runtime.map(|observed| ResultProperties { observed }),
    }
}

fn code_flows(diagnostic: &Diagnostic) -> Vec<CodeFlow> {
    let Some(finding) = &diagnostic.finding else {
        return Vec::new();
    };
    let last = finding.chain.len().saturating_sub(1);
    let locations = finding
        .chain
        .iter()
        .enumerate()
        .map(|(i, hop)| {
            let text = if i == last {
                format!(
                    "in `{}`: calls `{}`, which {}",
                    hop.function, finding.sink, finding.sink_reason
                )
            } else {
                format!("in `{}`", hop.function)
            };
            ThreadFlowLocation {
                location: location(&hop.call_site, Some(text)),
                nesting_level: i,
            }
        })
        .collect();
    vec![CodeFlow {
        thread_flows: [ThreadFlow { locations }],
    }]
}

fn location(span: &Span, message: Option<String>) -> Location {
    let (uri, uri_base_id) = file_uri(&span.file);
    Location {
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation { uri, uri_base_id },
            region: Region {
                start_line: span.line_start.max(1),
                start_column: span.column_start.max(1),
                end_line: span.line_end.max(span.line_start).max(1),
                end_column: span.column_end.max(1),
            },
        },
        message: message.map(|text| Text { text }),
    }
}

/// `sync-in-no-sync` → `SyncInNoSync`, SARIF's rule `name`.
fn camel_case(code: &str) -> String {
    code.to_upper_camel_case()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_camel_case_codes() {
        assert_eq!(camel_case("sync-in-no-sync"), "SyncInNoSync");
    }
}
