//! `--explain CODE`: the code's section of `lint/core/docs/diagnostics.md`, compiled in.
//!
//! The documentation file is the single source: `--explain`, the JSON `code.explanation` and the
//! SARIF rules' help all slice it here. A section starts at a level-2 heading that is exactly
//! ``## `code` `` and runs to the next level-2 heading.

use super::Code;

/// The whole of `lint/core/docs/diagnostics.md` (inside the package, so that it ships with it).
pub const DOCS: &str = include_str!("../../docs/diagnostics.md");

/// The heading that starts `code`'s section.
fn heading(name: &str) -> String {
    format!("## `{name}`")
}

/// Every level-2 section of `docs`, as `(name between backticks, section text)`; the text
/// starts at the heading line and ends before the next level-2 heading, trailing blank lines
/// removed. A level-2 heading not in the ``## `name` `` shape yields the name `None`.
pub fn sections(docs: &str) -> Vec<(Option<&str>, &str)> {
    let mut starts: Vec<usize> = Vec::new();
    let mut offset = 0;
    let mut in_fence = false;
    for line in docs.split_inclusive('\n') {
        if line.starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with("## ") {
            starts.push(offset);
        }
        offset += line.len();
    }
    let ends = starts.iter().skip(1).copied().chain([docs.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&start, end)| {
            let text = docs[start..end].trim_end();
            let title = text.lines().next().unwrap_or_default();
            let name = title
                .strip_prefix("## `")
                .and_then(|rest| rest.strip_suffix('`'))
                .filter(|name| !name.contains('`'));
            (name, text)
        })
        .collect()
}

/// The documentation of `code`: its section of `lint/core/docs/diagnostics.md`, heading included.
pub fn explain(code: Code) -> Option<&'static str> {
    explain_name(code.as_str())
}

/// The documentation of the code named `name`, if it is a documented code.
pub fn explain_name(name: &str) -> Option<&'static str> {
    let wanted = heading(name);
    sections(DOCS)
        .into_iter()
        .find(|(_, text)| text.lines().next() == Some(wanted.as_str()))
        .map(|(_, text)| text)
}

/// The `### heading` subsection of `code`'s section, without its heading (for SARIF's
/// `fullDescription`: the "What it does" part).
pub fn subsection(code: Code, heading: &str) -> Option<&'static str> {
    let section = explain(code)?;
    let marker = format!("\n### {heading}\n");
    let start = section.find(&marker)? + marker.len();
    let rest = &section[start..];
    let end = rest.find("\n### ").unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// The page `docs/diagnostics.md` of the repository: an index of every code (its default
/// level and summary, from the registry), then each code's section as `--explain` prints it.
/// A test compares the page with this text, so the two never disagree.
pub fn reference() -> String {
    let mut page = String::from(REFERENCE_HEAD);
    page.push_str("| code | default level | what it reports |\n|---|---|---|\n");
    for code in Code::ALL {
        let level = match code.default_level() {
            super::Level::Allow => "allow",
            super::Level::Warn => "warn",
            super::Level::Deny => "deny",
        };
        let name = code.as_str();
        page.push_str(&format!(
            "| [`{name}`](#{name}) | {level} | {} |\n",
            code.summary()
        ));
    }
    for code in Code::ALL {
        page.push('\n');
        page.push_str(explain(*code).unwrap_or_default());
        page.push('\n');
    }
    page
}

/// The start of [`reference`]'s page.
const REFERENCE_HEAD: &str = "\
<!-- Generated from the lint's registry of codes (lint/core/src/diagnostics/code.rs) and their
documentation (lint/core/docs/diagnostics.md, which `--explain` prints): edit those, then run
`NOSYNC_UPDATE_DOCS=1 cargo test -p cargo-nosync-lint --test docs`. -->

# Diagnostics

Every diagnostic of `cargo nosync-lint` has a stable kebab-case code, which never changes meaning
once released. Each section below is what `cargo nosync-lint --explain CODE` prints, and what the
SARIF output ships as the rule's help.

Levels work as in rustc and clippy: `deny` fails the run (exit status 1), `warn` is reported and
does not change the exit status, `allow` is not reported. Change them with `-D CODE`, `-W CODE`,
`-A CODE` (`-D warnings` turns every warning into an error) or with `levels` in the
[configuration](configuration.md); the command line wins.

";

/// The text `--explain` prints for `name`: the section, or an error listing the known codes.
pub fn explain_or_list(name: &str) -> Result<&'static str, String> {
    let name = name.trim();
    match Code::from_name(name).and_then(explain) {
        Some(text) => Ok(text),
        None => {
            let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
            let mut message = format!(
                "no diagnostic code named `{name}`; known codes: {}",
                known.join(", ")
            );
            if let Some(near) = super::suggest::closest_code(name, &[]) {
                message.push_str(&format!("\n  = help: did you mean `{near}`?"));
            }
            Err(message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn every_code_has_exactly_one_section_and_no_section_is_unknown() {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (name, text) in sections(DOCS) {
            let name = name.unwrap_or_else(|| panic!("section not named by a code: {text:.60}"));
            *seen.entry(name).or_default() += 1;
        }
        for code in Code::ALL {
            assert_eq!(
                seen.get(code.as_str()),
                Some(&1),
                "sections for `{}`",
                code.as_str()
            );
        }
        for name in seen.keys() {
            assert!(
                Code::from_name(name).is_some(),
                "section for unknown code `{name}`"
            );
        }
    }

    #[test]
    fn codes_are_unique_kebab_case() {
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        for name in &names {
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "`{name}` is not kebab-case"
            );
        }
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate code names");
    }

    #[test]
    fn every_section_has_the_clippy_subsections_and_its_default_level() {
        for &code in Code::ALL {
            for heading in [
                "What it does",
                "Why is this bad",
                "Example",
                "What to do instead",
                "How to silence it",
            ] {
                let text = subsection(code, heading);
                assert!(
                    text.is_some_and(|t| !t.is_empty()),
                    "`{}` lacks `### {heading}`",
                    code.as_str()
                );
            }
            let level = format!("{:?}", code.default_level()).to_lowercase();
            let section = explain(code).unwrap_or_default();
            assert!(
                section.contains(&format!("**Default level:** {level}")),
                "`{}` documents a default level other than {level}",
                code.as_str()
            );
        }
    }

    #[test]
    fn the_docs_are_a_file_of_the_package() {
        // `cargo package` ships only the package's directory: the text `--explain` compiles
        // in must come from there (a path outside it breaks `cargo publish`).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(dir.join("docs/diagnostics.md"));
        assert_eq!(text.ok().as_deref(), Some(DOCS));
    }

    #[test]
    fn explain_slices_one_section() {
        let text = explain(Code::SyncInNoSync).unwrap_or_default();
        assert!(text.starts_with("## `sync-in-no-sync`\n"));
        assert!(!text.contains("## `possible-sync-in-no-sync`"));
        assert!(explain_name("no-such-code").is_none());
        let err = explain_or_list("sync-in-nosync").unwrap_err();
        assert!(err.contains("sync-in-no-sync"), "{err}");
    }

    #[test]
    fn headings_inside_code_fences_do_not_split_sections() {
        let docs = "## `a`\ntext\n```md\n## `b`\n```\n## `c`\nmore\n";
        let names: Vec<_> = sections(docs).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, [Some("a"), Some("c")]);
    }
}
