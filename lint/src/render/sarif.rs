//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and SARIF viewers.
//!
//! One run; the driver lists one rule per [`Code`] (help text from `lint/docs/diagnostics.md`), each
//! reported diagnostic is a result located at its primary span, with the chain of a finding as a
//! code flow (one thread-flow location per hop). Paths inside the workspace are relative URIs
//! against `%SRCROOT%`, the workspace root; others are `file://` URIs.
//!
//! `partialFingerprints["nosyncChain/v1"]` identifies a result across unrelated edits: a 64-bit
//! FNV-1a hash of the code, root, functions on the chain and sink (the baseline's key), or, for
//! diagnostics that are not findings, of the code, file and message. Line numbers never enter it.

use crate::baseline::Entry;
use crate::diagnostics::{Code, Diagnostic, Level, Span, explain};
use serde::Serialize;
use std::path::Path;

/// The schema URI written in `$schema`.
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
/// Where the rules' help lives.
const DOCS_URI: &str = concat!(
    env!("CARGO_PKG_REPOSITORY"),
    "/blob/main/lint/docs/diagnostics.md"
);
/// The fingerprint's key in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "nosyncChain/v1";

/// What the SARIF renderer needs besides the diagnostics.
#[derive(Debug, Clone, Copy, Default)]
pub struct SarifContext<'a> {
    /// The workspace root, recorded as `%SRCROOT%` so that viewers can resolve relative URIs;
    /// `None` leaves the base to the consumer (GitHub resolves it to the checkout).
    pub srcroot: Option<&'a Path>,
}

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
    information_uri: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: String,
    short_description: Text,
    full_description: Text,
    help: Help,
    help_uri: String,
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

/// The SARIF log (pretty-printed JSON, newline-terminated) for the reported diagnostics.
pub fn render(diagnostics: &[Diagnostic], cx: &SarifContext<'_>) -> String {
    let log = Log {
        schema: SCHEMA_URI,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "cargo-nosync-lint",
                    version: crate::VERSION,
                    semantic_version: crate::VERSION,
                    information_uri: env!("CARGO_PKG_REPOSITORY"),
                    rules: Code::ALL.iter().map(|&code| rule(code)).collect(),
                },
            },
            original_uri_base_ids: cx
                .srcroot
                .map(|root| serde_json::json!({ "%SRCROOT%": { "uri": directory_uri(root) } })),
            column_kind: "unicodeCodePoints",
            results: results(diagnostics),
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
        help_uri: format!("{DOCS_URI}#{}", code.as_str()),
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

/// The results of the reported diagnostics. Two findings can share a chain (a root that
/// calls the same helper twice): the second and later get `:2`, `:3`, .. after the
/// fingerprint, in output order, so that code scanning keeps them apart.
fn results(diagnostics: &[Diagnostic]) -> Vec<SarifResult> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    diagnostics
        .iter()
        .filter(|d| d.level != Level::Allow)
        .map(|d| {
            let base = fingerprint(d);
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            match *n {
                1 => result(d, base),
                n => result(d, format!("{base}:{n}")),
            }
        })
        .collect()
}

fn result(diagnostic: &Diagnostic, fingerprint: String) -> SarifResult {
    let mut text = diagnostic.message.clone();
    for note in &diagnostic.notes {
        text.push('\n');
        if note.help_text().is_none() {
            text.push_str("note: ");
        }
        text.push_str(&note.message);
    }
    let mut fingerprints = serde_json::Map::new();
    fingerprints.insert(FINGERPRINT_KEY.to_owned(), fingerprint.into());
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

/// The fingerprint of a diagnostic: stable across edits that do not change the chain.
pub fn fingerprint(diagnostic: &Diagnostic) -> String {
    let fields: Vec<String> = match Entry::of(diagnostic) {
        Some(entry) => [entry.code, entry.root]
            .into_iter()
            .chain(entry.via)
            .chain([entry.sink])
            .collect(),
        None => vec![
            diagnostic.code.as_str().to_owned(),
            file_uri(&diagnostic.primary.file).0,
            diagnostic.message.clone(),
        ],
    };
    format!("{:016x}", fnv1a64(&fields))
}

/// 64-bit FNV-1a over the fields, each followed by a unit separator (so that `["ab", "c"]` and
/// `["a", "bc"]` differ).
fn fnv1a64(fields: &[String]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for field in fields {
        for &byte in field.as_bytes().iter().chain(&[0x1f]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    hash
}

/// A relative path becomes a relative URI against `%SRCROOT%`; an absolute one a `file://` URI.
fn file_uri(path: &Path) -> (String, Option<&'static str>) {
    let text = path.to_string_lossy().replace('\\', "/");
    if path.is_absolute() {
        let text = if text.starts_with('/') {
            text
        } else {
            format!("/{text}")
        };
        (format!("file://{}", percent_encode(&text)), None)
    } else {
        let text = text.strip_prefix("./").unwrap_or(&text);
        (percent_encode(text), Some("%SRCROOT%"))
    }
}

fn directory_uri(path: &Path) -> String {
    let (mut uri, _) = file_uri(path);
    if !path.is_absolute() {
        uri = format!("file:///{uri}");
    }
    if !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// Percent-encodes every byte outside RFC 3986's unreserved set and `/`.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `sync-in-no-sync` → `SyncInNoSync`, SARIF's rule `name`.
fn camel_case(code: &str) -> String {
    code.split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        // FNV-1a 64 of "" and "a" (without our separator) from the reference implementation.
        let plain = |s: &str| {
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for &b in s.as_bytes() {
                hash ^= u64::from(b);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            hash
        };
        assert_eq!(plain(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(plain("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(plain("foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv1a64(&["a".into()]), plain("a\u{1f}"));
        assert_ne!(
            fnv1a64(&["ab".into(), "c".into()]),
            fnv1a64(&["a".into(), "bc".into()])
        );
    }

    #[test]
    fn uris_are_relative_to_srcroot_or_file_uris() {
        assert_eq!(
            file_uri(Path::new("src/my file.rs")),
            ("src/my%20file.rs".to_owned(), Some("%SRCROOT%"))
        );
        assert_eq!(
            file_uri(Path::new("/home/u/.cargo/x.rs")),
            ("file:///home/u/.cargo/x.rs".to_owned(), None)
        );
        assert_eq!(directory_uri(Path::new("/w/repo")), "file:///w/repo/");
        assert_eq!(camel_case("sync-in-no-sync"), "SyncInNoSync");
    }
}
