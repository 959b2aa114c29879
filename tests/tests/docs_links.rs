//! Every relative link of the repository's Markdown pages (README, docs/, CONTRIBUTING, ...)
//! names a file that exists, and a `#fragment` names a heading of that page (GitHub's slugs:
//! lower case, punctuation dropped, spaces as dashes). Fenced code blocks are not read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use nosync_tests::fixture::repo_root;

/// The Markdown files of the repository, outside build and fuzzing directories.
fn pages(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            let skipped = [
                "target",
                "targets",
                ".git",
                "corpus",
                "artifacts",
                "node_modules",
            ];
            if !skipped.contains(&name.as_str()) && !name.starts_with('.') {
                pages(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The text of `page` outside fenced code blocks.
fn prose(page: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// GitHub's anchors of `page`'s headings.
fn anchors(page: &str) -> HashSet<String> {
    prose(page)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| l.trim_start_matches('#').trim().to_lowercase())
        .map(|t| {
            t.chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

/// The targets of `[text](target)` links in `page`.
fn links(page: &str) -> Vec<String> {
    let text = prose(page);
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find([')', ' ']).unwrap_or(rest.len());
        out.push(rest[..end].to_owned());
    }
    out
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let root = repo_root();
    let mut files = Vec::new();
    pages(&root, &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = match path {
                "" => file.clone(),
                p => file.parent().unwrap_or(&root).join(p),
            };
            let shown = file
                .strip_prefix(&root)
                .unwrap_or(file)
                .display()
                .to_string();
            if !target.exists() {
                broken.push(format!("{shown}: `{link}`: no such file"));
            } else if !fragment.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let page = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&page).contains(fragment) {
                    broken.push(format!("{shown}: `{link}`: no such heading"));
                }
            }
        }
    }
    assert!(files.len() > 10, "{} Markdown files found", files.len());
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
