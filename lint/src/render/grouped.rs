//! The human report of one call in a root: when the call reaches several waits, or reaches
//! one through dependencies, one diagnostic titled by the function the root calls (the API
//! the user wrote, `into_scalar`), with the waits it reaches listed under it, each with its
//! sink and kind, and the hops inside dependencies folded to the crates they cross. `-v`
//! prints every finding with its whole chain ([`super::human::render`]); JSON and SARIF
//! always do (each finding stays a diagnostic of its own: this is rendering only).

use crate::diagnostics::{Code, Diagnostic, Finding, Hop, Level};
use crate::source::SourceMap;
use annotate_snippets::{AnnotationKind, Group, Level as ALevel, Renderer};

/// The diagnostics in report order, those of one call in a root (same level, root and
/// primary span) together, at the place of the first.
pub(crate) fn sites<'d>(
    diagnostics: impl Iterator<Item = &'d Diagnostic>,
) -> Vec<Vec<&'d Diagnostic>> {
    let mut sites: Vec<Vec<&Diagnostic>> = Vec::new();
    let mut index: std::collections::HashMap<SiteKey<'d>, usize> = Default::default();
    for d in diagnostics {
        let Some(key) = site_key(d) else {
            sites.push(vec![d]);
            continue;
        };
        match index.get(&key) {
            Some(&i) => sites[i].push(d),
            None => {
                index.insert(key, sites.len());
                sites.push(vec![d]);
            }
        }
    }
    sites
}

type SiteKey<'d> = (Level, &'d str, &'d std::path::Path, usize, usize);

fn site_key(d: &Diagnostic) -> Option<SiteKey<'_>> {
    let f = d.finding.as_ref()?;
    let p = &d.primary;
    Some((
        d.level,
        f.root.as_str(),
        p.file.as_path(),
        p.byte_start,
        p.byte_end,
    ))
}

/// Whether a site is rendered folded: several findings, or one with a hop in a dependency.
pub(crate) fn folds(site: &[&Diagnostic]) -> bool {
    let findings = || site.iter().filter_map(|d| d.finding.as_ref());
    site.len() > 1 || findings().any(|f| f.chain.iter().any(in_dependency))
}

/// A hop whose call is in a file outside the workspace (printed as an absolute path).
fn in_dependency(hop: &Hop) -> bool {
    hop.call_site.file.is_absolute()
}

/// The folded rendering of `site` (ending with a blank line).
pub(crate) fn render(site: &[&Diagnostic], sources: &SourceMap, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let first = site[0];
    let findings: Vec<&Finding> = site.iter().filter_map(|d| d.finding.as_ref()).collect();
    let (title, label) = headline(first, &findings);
    let level = super::human::level(first.level);
    let mut head = Group::with_title(level.primary_title(title.as_str()).id(first.code.as_str()));
    if let Some(s) = super::human::snippet(
        sources,
        &first.primary,
        Some(&label),
        AnnotationKind::Primary,
    ) {
        head = head.element(s);
    }
    let waits = numbered_waits(site);
    let mut groups = vec![head];
    groups.extend(waits.iter().map(|(title, lines)| wait_group(title, lines)));
    let helps = helps(site);
    if let Some(last) = groups.pop() {
        let last = last.element(ALevel::NOTE.message(
            "hops inside dependencies are folded; `-v` (or `--format json`) shows every chain whole",
        ));
        groups.push(
            helps
                .iter()
                .fold(last, |g, h| g.element(ALevel::HELP.message(h.as_str()))),
        );
    }
    let mut out = renderer.render(&groups);
    out.push_str("\n\n");
    out
}

/// Each wait's title (numbered when there are several) and lines.
fn numbered_waits(site: &[&Diagnostic]) -> Vec<(String, Vec<String>)> {
    let waits: Vec<(String, Vec<String>)> = site.iter().filter_map(|d| wait_lines(d)).collect();
    let n = waits.len();
    let number = |(i, (title, lines)): (usize, (String, Vec<String>))| match n {
        1 => (title, lines),
        n => (format!("wait {} of {n}: {title}", i + 1), lines),
    };
    waits.into_iter().enumerate().map(number).collect()
}

fn wait_group<'a>(title: &'a str, lines: &'a [String]) -> Group<'a> {
    let g = Group::with_title(ALevel::NOTE.secondary_title(title));
    lines
        .iter()
        .fold(g, |g, l| g.element(ALevel::NOTE.message(l.as_str())))
}

/// The title and the primary label: the root and the function its call names.
fn headline(first: &Diagnostic, findings: &[&Finding]) -> (String, String) {
    let f = findings[0];
    let root = last_segment(&f.root);
    let api = f
        .chain
        .get(1)
        .map_or(f.sink.as_str(), |h| h.function.as_str());
    let api = last_segment(api);
    if findings.len() == 1 {
        let sink = last_segments(&f.sink, 2);
        let what = match first.code {
            Code::SyncInNoSync => "reaches a host-blocking call",
            Code::SetupSyncInNoSync => "reaches one-time setup that blocks the host",
            _ => "reaches a call that may block the host",
        };
        let title = format!("`{root}` is #[no_sync] but its call of `{api}` {what}: `{sink}`");
        let label = first.label.clone().unwrap_or_default();
        return (title, label);
    }
    let n = findings.len();
    let title = format!("`{root}` is #[no_sync] but its call of `{api}` reaches {n} waits");
    let sinks: Vec<String> = findings
        .iter()
        .map(|f| format!("`{}`", last_segments(&f.sink, 2)))
        .collect();
    (title, format!("this call reaches {}", sinks.join(", ")))
}

/// A wait's title (its sink, kind and reason) and lines: the chain, dependency hops folded,
/// what the lint could not decide, and what a wait report observed of it.
fn wait_lines(d: &Diagnostic) -> Option<(String, Vec<String>)> {
    let f = d.finding.as_ref()?;
    let kind = match d.code {
        Code::SyncInNoSync => "blocks",
        Code::SetupSyncInNoSync => "one-time setup",
        _ => "may block",
    };
    let title = format!("`{}` ({kind}): {}", f.sink, f.sink_reason);
    let mut lines = vec![format!("via {}", folded_chain(f))];
    lines.extend(f.undecided.iter().map(|u| format!("undecided: {u}")));
    lines.extend(f.runtime.as_ref().map(crate::runtime_report::words));
    Some((title, lines))
}

/// `helper (src/lib.rs:12) → into_scalar and 14 more calls in burn_fusion, cubecl_cuda →
/// sink`, after the root's call: the hops in the workspace by name and line, each run of
/// hops in dependencies by its first function and the crates it crosses.
fn folded_chain(f: &Finding) -> String {
    let mut parts: Vec<String> = Vec::new();
    // The root's own call is the snippet above.
    let mut i = 1;
    while i < f.chain.len() {
        let hop = &f.chain[i];
        if !in_dependency(hop) {
            let at = &hop.call_site;
            parts.push(format!(
                "`{}` ({}:{})",
                last_segments(&hop.function, 2),
                at.file.display(),
                at.line_start
            ));
            i += 1;
            continue;
        }
        let run: Vec<&Hop> = f.chain[i..]
            .iter()
            .take_while(|h| in_dependency(h))
            .collect();
        parts.push(dependency_run(&run));
        i += run.len();
    }
    parts.push(format!("`{}`", last_segments(&f.sink, 2)));
    parts.join(" → ")
}

/// A run of hops in dependencies: its first function and the crates it crosses.
fn dependency_run(run: &[&Hop]) -> String {
    let mut crates: Vec<&str> = Vec::new();
    for h in run {
        let c = crate_of(&h.function);
        if !crates.contains(&c) {
            crates.push(c);
        }
    }
    let named: Vec<String> = crates.iter().map(|c| format!("`{c}`")).collect();
    let (first, named) = (last_segments(&run[0].function, 2), named.join(", "));
    match run.len() {
        1 => format!("`{first}` (in {named})"),
        2 => format!("`{first}` and 1 more call in {named}"),
        n => format!("`{first}` and {} more calls in {named}", n - 1),
    }
}

/// The `help:` lines of the site's diagnostics, once each.
fn helps(site: &[&Diagnostic]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in site {
        for h in d.notes.iter().filter_map(|n| n.help_text()) {
            if !out.iter().any(|o| o == h) {
                out.push(h.to_owned());
            }
        }
    }
    out
}

/// The crate a function path starts with (`<a::T as b::Tr>::f`: `a`).
fn crate_of(path: &str) -> &str {
    let path = path.trim_start_matches('<');
    path.split("::").next().unwrap_or(path)
}

fn last_segment(path: &str) -> std::borrow::Cow<'_, str> {
    last_segments(path, 1)
}

/// The last `n` segments of a path; of a qualified path (`<a::T as b::Tr>::f`), its type's
/// and trait's last segments (`<T as Tr>::f`).
fn last_segments(path: &str, n: usize) -> std::borrow::Cow<'_, str> {
    if let Some(inner) = path.strip_prefix('<')
        && let Some((qself, rest)) = inner.split_once(" as ")
        && let Some((tr, method)) = rest.rsplit_once(">::")
    {
        let short = |p: &str| p.rsplit("::").next().unwrap_or(p).to_owned();
        return format!("<{} as {}>::{method}", short(qself), short(tr)).into();
    }
    let mut cut = path.len();
    for _ in 0..n {
        match path[..cut].rfind("::") {
            Some(i) => cut = i,
            None => return path.into(),
        }
    }
    path[cut + 2..].into()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::diagnostics::{Confidence, Span};

    /// A four-byte span on `line` of `file` (shared with the baseline's tests).
    pub(crate) fn at(file: &str, line: usize) -> Span {
        Span {
            file: file.into(),
            byte_start: line * 10,
            byte_end: line * 10 + 4,
            line_start: line,
            column_start: 5,
            line_end: line,
            column_end: 9,
        }
    }

    /// A finding of `app::step` through `hops` (function, file) to `sink`, at line 3 (shared
    /// with the join's tests).
    pub(crate) fn finding(hops: &[(&str, &str)], sink: &str) -> Diagnostic {
        let chain = hops
            .iter()
            .enumerate()
            .map(|(i, (f, file))| Hop {
                function: (*f).to_owned(),
                call_site: at(file, 3 + i),
                confidence: Confidence::Exact,
            })
            .collect();
        let mut d = Diagnostic::new(Code::SyncInNoSync, "m", at("src/lib.rs", 3));
        d.finding = Some(Finding {
            root: "app::step".into(),
            sink: sink.into(),
            sink_reason: "waits".into(),
            sink_kind: crate::diagnostics::SinkKind::Blocks,
            chain,
            confidence: Confidence::Exact,
            undecided: Vec::new(),
            runtime: None,
            other_chain_count: 0,
            other_chains: Vec::new(),
        });
        d
    }

    #[test]
    fn the_waits_of_one_call_are_one_site_and_dependency_hops_fold() {
        let dep = "/registry/burn/src/x.rs";
        let hops = [
            ("app::step", "src/lib.rs"),
            ("app::helper", "src/lib.rs"),
            ("burn_tensor::Tensor::into_data", dep),
            ("burn_cubecl::ops::read", dep),
            ("cubecl_cuda::Stream::read", dep),
        ];
        let a = finding(&hops, "cudarc::driver::result::event::synchronize");
        let b = finding(&hops, "cudarc::driver::result::free_sync");
        let local = finding(&hops[..2], "app::wait");
        let sites = sites([&a, &b].into_iter());
        assert_eq!(sites.len(), 1);
        assert!(folds(&sites[0]));
        assert!(!folds(&[&local]), "a local chain is shown whole");
        let chain = folded_chain(a.finding.as_ref().unwrap());
        assert_eq!(
            chain,
            "`app::helper` (src/lib.rs:4) → `Tensor::into_data` and 2 more calls in \
             `burn_tensor`, `burn_cubecl`, `cubecl_cuda` → `event::synchronize`"
        );
        let (title, label) = headline(
            &a,
            &[a.finding.as_ref().unwrap(), b.finding.as_ref().unwrap()],
        );
        assert_eq!(
            title,
            "`step` is #[no_sync] but its call of `helper` reaches 2 waits"
        );
        assert_eq!(
            label,
            "this call reaches `event::synchronize`, `result::free_sync`"
        );
    }

    #[test]
    fn qualified_paths_keep_their_type_and_trait() {
        let path = "<candle_core::tensor::Tensor as std::fmt::Debug>::fmt";
        assert_eq!(last_segment(path), "<Tensor as Debug>::fmt");
        assert_eq!(last_segments("a::b::c::d", 2), "c::d");
        assert_eq!(last_segments("d", 2), "d");
    }
}
