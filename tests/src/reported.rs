//! What the lint reported, reduced to `(file, line, code)` keys for the annotation test.
//!
//! Read from the human output (rustc style, rendered by annotate-snippets): every
//! `error[CODE]: ...` or `warning[CODE]: ...` header, and the first `--> file:line:col`
//! after it, which is the primary span. `note`/`help` headers start no diagnostic.
//! Reading the output keeps this test independent of the library's internal data; it
//! is also what users see.

use std::path::{Path, PathBuf};

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
