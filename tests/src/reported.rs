//! What the lint reported, reduced to `(file, line, code)` keys for the annotation test.
//!
//! Two readers of the same diagnostics, which must agree:
//! - [`parse_json`]: the `--message-format json` stream (cargo's shape), the lint's public
//!   machine interface: level, code and primary span of each message, and the finding
//!   contract carried by its `nosync` object.
//! - [`parse_human`]: the rustc-style text: every `error[CODE]: ...` or
//!   `warning[CODE]: ...` header, and the first `--> file:line:col` after it, which is the
//!   primary span. `note`/`help` headers start no diagnostic.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::annotations::{Key, relative};

/// The level a rendered header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
}

/// One reported diagnostic with a code, and its primary location if one was printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub level: Level,
    pub code: String,
    pub message: String,
    /// `(file as printed, line)`.
    pub location: Option<(String, usize)>,
}

/// What a `--message-format json` stream says.
#[derive(Debug, Default)]
pub struct JsonReport {
    pub diagnostics: Vec<Rendered>,
    /// Broken promises of the finding contract, one line each.
    pub violations: Vec<String>,
    /// `build-finished.success`, if the stream ended with it.
    pub success: Option<bool>,
}

/// Parses the JSON stream; `Err` when a line is not a JSON object.
pub fn parse_json(output: &str) -> Result<JsonReport, String> {
    let mut report = JsonReport::default();
    for (index, line) in output
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let value: Value = serde_json::from_str(line)
            .map_err(|e| format!("line {} of the JSON output is not JSON: {e}", index + 1))?;
        match value["reason"].as_str() {
            Some("build-finished") => report.success = value["success"].as_bool(),
            Some("compiler-message") => {
                let (diagnostic, violation) = json_message(&value)?;
                report.violations.extend(violation);
                report.diagnostics.push(diagnostic);
            }
            _ => {}
        }
    }
    Ok(report)
}

/// One `compiler-message`, and what is wrong with its finding, if anything.
fn json_message(value: &Value) -> Result<(Rendered, Option<String>), String> {
    let message = &value["message"];
    let level = match message["level"].as_str() {
        Some("error") => Level::Error,
        Some("warning") => Level::Warning,
        other => return Err(format!("a JSON message with level {other:?}")),
    };
    let primary = message["spans"]
        .as_array()
        .and_then(|spans| spans.iter().find(|s| s["is_primary"] == Value::Bool(true)));
    let location = primary.and_then(|s| Some((s["file_name"].as_str()?.to_owned(), line_of(s)?)));
    let rendered = Rendered {
        level,
        code: message["code"]["code"]
            .as_str()
            .unwrap_or("(no code)")
            .to_owned(),
        message: message["message"].as_str().unwrap_or_default().to_owned(),
        location,
    };
    let violation = finding_contract(&rendered, primary, &value["nosync"]).map(|v| {
        let (file, line) = rendered.location.clone().unwrap_or_default();
        format!("{file}:{line}: {}: {v}", rendered.code)
    });
    Ok((rendered, violation))
}

fn line_of(span: &Value) -> Option<usize> {
    usize::try_from(span["line_start"].as_u64()?).ok()
}

/// A finding's chain starts in its root, at the primary span, and its code follows from the
/// sink's kind and the chain: `setup-sync-in-no-sync` for a setup sink, else
/// `possible-sync-in-no-sync` exactly for a name-only chain, a chain with an undecided
/// condition (`undecided`) or a sink that only may block.
fn finding_contract(d: &Rendered, primary: Option<&Value>, nosync: &Value) -> Option<String> {
    let is_finding = matches!(
        d.code.as_str(),
        "sync-in-no-sync" | "possible-sync-in-no-sync" | "setup-sync-in-no-sync"
    );
    if nosync.is_null() {
        return is_finding.then(|| "a finding without its `nosync` object".to_owned());
    }
    let first = &nosync["chain"][0];
    let primary = primary?;
    let same_place = first["file"] == primary["file_name"]
        && first["line"] == primary["line_start"]
        && first["column"] == primary["column_start"];
    let name_only = nosync["confidence"].as_str() == Some("name-only");
    let undecided = nosync["undecided"]
        .as_array()
        .is_some_and(|u| !u.is_empty());
    let expected = match nosync["sink_kind"].as_str() {
        Some("setup") => "setup-sync-in-no-sync",
        Some("may") => "possible-sync-in-no-sync",
        _ if name_only || undecided => "possible-sync-in-no-sync",
        _ => "sync-in-no-sync",
    };
    if first.is_null() || first["function"] != nosync["root"] {
        Some(format!(
            "the chain does not start in the root {}",
            nosync["root"]
        ))
    } else if !same_place {
        Some("the primary span is not where the chain starts".to_owned())
    } else if d.code != expected {
        Some(format!(
            "code for a {} chain to a {} sink",
            nosync["confidence"], nosync["sink_kind"]
        ))
    } else {
        None
    }
}

/// Parses every coded error and warning of a human-format output.
pub fn parse_human(output: &str) -> Vec<Rendered> {
    let mut found: Vec<Rendered> = Vec::new();
    let mut open = false;
    for line in output.lines() {
        if let Some(diagnostic) = header(line) {
            found.push(diagnostic);
            open = true;
        } else if is_other_header(line) {
            // `note:`/`help:` lines belong to the open diagnostic; a bare `error:` ends it.
            open = open && !line.starts_with("error:") && !line.starts_with("warning:");
        } else if let Some(location) = arrow(line) {
            let last = found.last_mut().filter(|d| open && d.location.is_none());
            if let Some(diagnostic) = last {
                diagnostic.location = Some(location);
            }
        }
    }
    found
}

/// `error[code]: message` / `warning[code]: message`.
fn header(line: &str) -> Option<Rendered> {
    let (level, rest) = if let Some(rest) = line.strip_prefix("error[") {
        (Level::Error, rest)
    } else {
        (Level::Warning, line.strip_prefix("warning[")?)
    };
    let (code, message) = rest.split_once("]: ")?;
    Some(Rendered {
        level,
        code: code.to_owned(),
        message: message.to_owned(),
        location: None,
    })
}

fn is_other_header(line: &str) -> bool {
    ["error:", "warning:", "note:", "help:"]
        .iter()
        .any(|p| line.starts_with(p))
}

/// ` --> file:line:col` (any indentation), split from the right so that paths may hold `:`.
fn arrow(line: &str) -> Option<(String, usize)> {
    let rest = line.trim_start().strip_prefix("--> ")?;
    let mut parts = rest.trim_end().rsplitn(3, ':');
    let _column: usize = parts.next()?.parse().ok()?;
    let line_no: usize = parts.next()?.parse().ok()?;
    Some((parts.next()?.to_owned(), line_no))
}

/// Keys for the annotation test: `file` made relative to the fixture directory. A
/// relative path is resolved against `base` (the lint prints paths relative to the
/// analysed workspace's root, as cargo does).
pub fn keys(found: &[Rendered], fixture_dir: &Path, base: &Path) -> Result<Vec<Key>, String> {
    let mut keys = Vec::new();
    for diagnostic in found {
        let Some((file, line)) = &diagnostic.location else {
            return Err(format!(
                "`{}[{}]: {}` has no `-->` location (every diagnostic needs a primary span)",
                level_name(diagnostic.level),
                diagnostic.code,
                diagnostic.message
            ));
        };
        let path = PathBuf::from(file);
        let absolute = if path.is_absolute() {
            path
        } else {
            base.join(path)
        };
        let absolute = absolute.canonicalize().unwrap_or(absolute);
        keys.push(Key {
            file: relative(fixture_dir, &absolute),
            line: *line,
            code: diagnostic.code.clone(),
        });
    }
    keys.sort();
    Ok(keys)
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Error => "error",
        Level::Warning => "warning",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_line(code: &str, line: u64, nosync: &str) -> String {
        format!(
            r#"{{"reason":"compiler-message","message":{{"level":"error","message":"m","code":{{"code":"{code}"}},"spans":[{{"file_name":"src/a.rs","line_start":{line},"column_start":5,"is_primary":true}}]}},"nosync":{nosync}}}"#
        )
    }

    const CHAIN: &str = r#"{"root":"a::f","confidence":"exact","chain":[{"function":"a::f","file":"src/a.rs","line":3,"column":5}]}"#;

    #[test]
    fn the_code_follows_the_sink_kind() {
        let chain = |kind: &str| {
            CHAIN.replace(
                "\"confidence\"",
                &format!("\"sink_kind\":\"{kind}\",\"confidence\""),
            )
        };
        let stream = [
            json_line("setup-sync-in-no-sync", 3, &chain("setup")),
            json_line("possible-sync-in-no-sync", 3, &chain("may")),
            json_line("sync-in-no-sync", 3, &chain("blocks")),
            json_line("sync-in-no-sync", 3, &chain("setup")),
            json_line("sync-in-no-sync", 3, &chain("may")),
        ]
        .join("\n");
        let report = parse_json(&format!("{stream}\n")).expect("valid JSON");
        assert_eq!(report.violations.len(), 2, "{:?}", report.violations);
        assert!(report.violations[0].ends_with("code for a \"exact\" chain to a \"setup\" sink"));
        assert!(report.violations[1].ends_with("code for a \"exact\" chain to a \"may\" sink"));
    }

    #[test]
    fn json_messages_and_the_finding_contract() {
        let stream = format!(
            "{}\n{}\n{}\n{{\"reason\":\"build-finished\",\"success\":false}}\n",
            json_line("sync-in-no-sync", 3, CHAIN),
            json_line("sync-in-no-sync", 4, CHAIN),
            json_line("possible-sync-in-no-sync", 3, CHAIN),
        );
        let report = parse_json(&stream).expect("valid JSON");
        assert_eq!(report.success, Some(false));
        assert_eq!(report.diagnostics.len(), 3);
        assert_eq!(report.diagnostics[0].location, Some(("src/a.rs".into(), 3)));
        assert_eq!(report.violations.len(), 2, "{:?}", report.violations);
        assert!(report.violations[0].contains("src/a.rs:4: sync-in-no-sync: the primary span"));
        assert!(report.violations[1].contains("code for a \"exact\" chain"));
        let missing = parse_json(&json_line("sync-in-no-sync", 3, "null")).expect("valid");
        assert!(missing.violations[0].contains("without its `nosync` object"));
        assert!(parse_json("not json\n").is_err());
    }

    const OUTPUT: &str = "\
error[sync-in-no-sync]: `step` may block the host
  --> src/lib.rs:10:5
   |
10 |     wait_idle();
   |     ^^^^^^^^^^^
   |
note: `wait_idle` is #[synchronizes]
  --> src/lib.rs:4:1
warning[parse-error]: expected expression
 --> /abs/C:dir/src/broken.rs:5:16
error: aborting: 1 finding
  --> src/other.rs:1:1
";

    #[test]
    fn headers_take_the_first_arrow_and_ignore_notes() {
        let found = parse_human(OUTPUT);
        assert_eq!(found.len(), 2);
        assert_eq!(
            (found[0].level, found[0].code.as_str()),
            (Level::Error, "sync-in-no-sync")
        );
        assert_eq!(found[0].location, Some(("src/lib.rs".into(), 10)));
        assert_eq!(
            found[1].location,
            Some(("/abs/C:dir/src/broken.rs".into(), 5))
        );
    }

    #[test]
    fn keys_are_relative_to_the_fixture() {
        let found = parse_human(OUTPUT);
        let keys = keys(&found[..1], Path::new("/fx"), Path::new("/fx")).expect("located");
        assert_eq!(keys[0].to_string(), "src/lib.rs:10: sync-in-no-sync");
    }

    #[test]
    fn a_diagnostic_without_location_is_an_error() {
        let found = parse_human("warning[config-error]: bad\n");
        assert!(keys(&found, Path::new("/fx"), Path::new("/fx")).is_err());
    }
}
