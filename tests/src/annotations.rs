//! Expected diagnostics, written compiletest-style in the fixtures' sources.
//!
//! In Rust files, `//~ CODE` on a line means "one diagnostic with code `CODE` whose
//! primary span starts on this line"; `//~^ CODE` points one line up (one `^` per
//! line). Several codes may follow one marker, one diagnostic each; the first word
//! that is not kebab-case starts a free-form remark (`//~ sync-in-no-sync (the drop)`).
//! A kebab-case word that is no known code is an error, so typos cannot hide. In TOML files
//! (Cargo.toml, config files) the marker is `#~` (or `# ~`).

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::Path;

use crate::fixture;

/// One expected or reported diagnostic: where its primary span starts, and its code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// Path relative to the fixture directory, `/`-separated (or as reported, when the
    /// lint points outside the fixture).
    pub file: String,
    pub line: usize,
    pub code: String,
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.code)
    }
}

/// Parses the markers of one file. `is_code` says whether a word is a known code;
/// anything else after a marker is reported as a malformed annotation.
pub fn parse(
    file: &str,
    text: &str,
    toml: bool,
    is_code: &dyn Fn(&str) -> bool,
) -> Result<Vec<Key>, Vec<String>> {
    let mut keys = Vec::new();
    let mut errors = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let Some(rest) = marker(line, toml) else {
            continue;
        };
        let carets = rest.chars().take_while(|&c| c == '^').count();
        let here = index + 1;
        let words: Vec<&str> = rest[carets..]
            .split_whitespace()
            .take_while(|w| looks_like_code(w))
            .collect();
        let bad: Vec<&str> = words.iter().copied().filter(|w| !is_code(w)).collect();
        if words.is_empty() || !bad.is_empty() || carets >= here {
            errors.push(format!(
                "{file}:{here}: malformed annotation `{}` (want `~ CODE...` with known codes and a line inside the file)",
                line.trim()
            ));
            continue;
        }
        keys.extend(words.iter().map(|code| Key {
            file: file.to_owned(),
            line: here - carets,
            code: (*code).to_owned(),
        }));
    }
    if errors.is_empty() {
        Ok(keys)
    } else {
        Err(errors)
    }
}

/// Codes are kebab-case words; the first other word starts a free-form remark.
fn looks_like_code(word: &str) -> bool {
    word.contains('-')
        && word
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The text after the marker (`//~` in Rust, `#~` or `# ~` in TOML), if the line has one.
fn marker(line: &str, toml: bool) -> Option<&str> {
    if !toml {
        return line.find("//~").map(|at| &line[at + 3..]);
    }
    let hash = line.find('#')?;
    let after = line[hash + 1..].trim_start_matches(' ');
    after.strip_prefix('~')
}

/// Every expectation in a fixture's `.rs` and `.toml` files, sorted.
pub fn collect(dir: &Path, is_code: &dyn Fn(&str) -> bool) -> Result<Vec<Key>, Vec<String>> {
    let files = fixture::source_files(dir, &["rs", "toml"]).map_err(|e| vec![e])?;
    let mut keys = Vec::new();
    let mut errors = Vec::new();
    for path in files {
        let rel = relative(dir, &path);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                errors.push(format!("cannot read {}: {e}", path.display()));
                continue;
            }
        };
        let toml = path.extension().is_some_and(|e| e == "toml");
        match parse(&rel, &text, toml, is_code) {
            Ok(found) => keys.extend(found),
            Err(found) => errors.extend(found),
        }
    }
    keys.sort();
    if errors.is_empty() {
        Ok(keys)
    } else {
        Err(errors)
    }
}

/// `path` relative to `dir`, `/`-separated; the path as displayed when it is outside `dir`.
pub fn relative(dir: &Path, path: &Path) -> String {
    let Ok(rel) = path.strip_prefix(dir) else {
        return path.display().to_string();
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Compares expectations with reports as multisets. `None` when they agree, else a
/// message listing the missing and the unexpected diagnostics.
pub fn compare(expected: &[Key], reported: &[Key]) -> Option<String> {
    let mut balance: BTreeMap<&Key, i64> = BTreeMap::new();
    for key in expected {
        *balance.entry(key).or_default() += 1;
    }
    for key in reported {
        *balance.entry(key).or_default() -= 1;
    }
    let mut missing = Vec::new();
    let mut unexpected = Vec::new();
    for (key, count) in balance {
        let list = if count > 0 {
            &mut missing
        } else {
            &mut unexpected
        };
        for _ in 0..count.unsigned_abs() {
            list.push(format!("    {key}"));
        }
    }
    if missing.is_empty() && unexpected.is_empty() {
        return None;
    }
    let mut message = String::new();
    if !missing.is_empty() {
        message += &format!(
            "  missing (annotated, not reported):\n{}\n",
            missing.join("\n")
        );
    }
    if !unexpected.is_empty() {
        message += &format!(
            "  unexpected (reported, not annotated):\n{}\n",
            unexpected.join("\n")
        );
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(word: &str) -> bool {
        matches!(word, "sync-in-no-sync" | "parse-error" | "config-error")
    }

    fn key(line: usize, code: &str) -> Key {
        Key {
            file: "src/lib.rs".into(),
            line,
            code: code.into(),
        }
    }

    #[test]
    fn rust_markers_with_carets_and_several_codes() {
        let text = "fn a() {\n    b(); //~ sync-in-no-sync\n    c();\n    //~^ parse-error sync-in-no-sync (a remark)\n}\n";
        let keys = parse("src/lib.rs", text, false, &known).expect("valid");
        assert_eq!(
            keys,
            [
                key(2, "sync-in-no-sync"),
                key(3, "parse-error"),
                key(3, "sync-in-no-sync")
            ]
        );
    }

    #[test]
    fn toml_markers_both_spellings() {
        let text = "roots = [\n  \"a::b\", #~ config-error\n  \"c\", # ~ config-error\n]\n# a plain comment\n";
        let keys = parse("x.toml", text, true, &known).expect("valid");
        let lines: Vec<usize> = keys.iter().map(|k| k.line).collect();
        assert_eq!(lines, [2, 3]);
    }

    #[test]
    fn unknown_code_empty_marker_and_caret_before_line_one_are_errors() {
        for text in [
            "x(); //~ sync-in-nosync",
            "x(); //~",
            "x(); //~ why",
            "//~^ parse-error",
        ] {
            let errors = parse("src/lib.rs", text, false, &known).expect_err(text);
            assert!(errors[0].contains("malformed annotation"), "{errors:?}");
        }
    }

    #[test]
    fn compare_is_a_multiset_difference() {
        let expected = [
            key(2, "sync-in-no-sync"),
            key(2, "sync-in-no-sync"),
            key(5, "parse-error"),
        ];
        let reported = [
            key(2, "sync-in-no-sync"),
            key(7, "sync-in-no-sync"),
            key(5, "parse-error"),
        ];
        let message = compare(&expected, &reported).expect("differs");
        assert!(
            message.contains(
                "missing (annotated, not reported):\n    src/lib.rs:2: sync-in-no-sync\n"
            ),
            "{message}"
        );
        assert!(
            message.contains(
                "unexpected (reported, not annotated):\n    src/lib.rs:7: sync-in-no-sync\n"
            ),
            "{message}"
        );
        assert_eq!(compare(&expected[..1], &reported[..1]), None);
    }
}
