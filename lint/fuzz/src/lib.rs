//! The harness behind the fuzz targets: inputs go through the lint's library exactly as
//! `cargo nosync-lint` runs it after `cargo metadata` (config loading, parse → macro
//! expansion → resolve → call graph → analysis, level overrides, every renderer), and the
//! result is checked. A broken invariant panics, which libFuzzer reports as a crash.
//!
//! What counts as a crash: any panic (libfuzzer-sys aborts on a panic in any thread, so a
//! panic the lint catches and reports is a crash too), an `internal-error` diagnostic, a
//! span that does not lie inside its file on char boundaries, a diagnostic that renders
//! empty, machine output that is not valid JSON, two runs of one input that disagree
//! (`pipeline_twice`) and a lost sentinel finding (`pipeline_files`). Hangs and memory blow-ups are libFuzzer's `-timeout` and
//! `-rss_limit_mb`.

use nosync_lint::{
    Analysis, Baseline, Format, Report, ReportContext, analyze_crates, render, render_human,
    write_baseline,
};
use nosync_lint_core::config::Config;
use nosync_lint_core::diagnostics::{Code, Diagnostic, Level, Span};
use nosync_lint_core::levels::LevelOverrides;
use nosync_lint_core::source::{MemLoader, SourceMap};
/// A library crate with `cudarc` and `nosync` as external dependencies, as the unit tests build it.
pub use nosync_lint_core::test_support::spec;
use std::path::{Path, PathBuf};

/// The in-memory crate of the one-file and config targets: `/mem/t/src/lib.rs`.
const MEM_ROOT: &str = "/mem/t";

/// The analysis of `text` as the root file of crate `t`, in memory.
fn analyze_one(text: &str) -> Analysis {
    let root = PathBuf::from(MEM_ROOT);
    let file = root.join("src/lib.rs");
    let files = MemLoader::new().with(&file, text);
    let sources = SourceMap::new(&root);
    analyze_crates(
        root,
        vec![spec("t", file)],
        &Config::default(),
        &files,
        sources,
    )
}

/// Target `pipeline_twice`: `text` analysed twice in one process must give the same
/// diagnostics and call graph. Every `HashMap` of a process hashes with its own random
/// keys, so an order that leaks from one into the output shows up here (and would make a
/// baseline or a golden flaky).
pub fn one_file_twice(text: &str) {
    let (first, second) = (analyze_one(text), analyze_one(text));
    assert_eq!(first.diagnostics, second.diagnostics, "diagnostics differ");
    let graph = |a: &Analysis| {
        let s = &a.stats;
        (
            s.fns,
            s.edges_exact,
            s.edges_inferred,
            s.edges_name_only,
            s.unresolved,
            s.roots,
        )
    };
    assert_eq!(graph(&first), graph(&second), "call graph figures differ");
}

/// Target `pipeline`: `text` is the root file of crate `t`, in memory.
pub fn one_file(text: &str) {
    let a = analyze_one(text);
    check(
        &a,
        Expect {
            sarif: true,
            ..Expect::default()
        },
    );
}

/// What a target knows must be in the analysis besides the general invariants.
#[derive(Debug, Default, Clone, Copy)]
pub struct Expect {
    /// A `sync-in-no-sync` finding whose message names both of these.
    pub finding: Option<(&'static str, &'static str)>,
    /// Whether to render SARIF too (when there is a finding). Most of a SARIF log is the
    /// constant rules table, two thirds of an execution's time on small inputs; the parts
    /// that depend on the input beyond the JSON renderer's are the findings' code flows and
    /// fingerprints. Only `pipeline`, whose findings come from the input, renders it: the
    /// other targets always have a finding and would spend most of their time there.
    pub sarif: bool,
}

/// Every invariant of an analysis; panics with the first one broken.
pub fn check(a: &Analysis, expect: Expect) {
    let mut diagnostics = a.diagnostics.clone();
    let mut overrides = LevelOverrides::default();
    for &(target, level, _) in &a.config_levels {
        // Validated when the configuration was read: a bad entry is a `config-error` there.
        overrides.push(target, level);
    }
    overrides.apply(&mut diagnostics);
    for d in &diagnostics {
        assert!(
            d.code != Code::InternalError,
            "internal-error: {} at {:?}",
            d.message,
            d.primary
        );
        for s in spans(d) {
            if let Err(e) = check_span(&a.sources, s) {
                panic!("{e} in `{}: {}`", d.code.as_str(), d.message);
            }
        }
        let text = render_human(d, &a.sources, false);
        assert!(!text.is_empty(), "empty rendering of `{}`", d.message);
    }
    render_machine(a, &diagnostics, expect.sarif);
    baseline_round_trip(&diagnostics);
    if let Some((root, sink)) = expect.finding {
        let found = diagnostics.iter().any(|d| {
            d.code == Code::SyncInNoSync && d.message.contains(root) && d.message.contains(sink)
        });
        assert!(found, "the finding {root} → {sink} is missing");
    }
}

/// `--write-baseline` then `--baseline` on the same diagnostics: the written file parses,
/// accepts every reported finding and has no stale entry.
fn baseline_round_trip(diagnostics: &[Diagnostic]) {
    if !diagnostics.iter().any(|d| d.finding.is_some()) {
        return;
    }
    let text = write_baseline(diagnostics);
    let written = match Baseline::parse(Path::new("nosync-baseline.toml"), text.clone()) {
        Ok(b) => b,
        Err(e) => panic!("a written baseline does not parse ({e:#}):\n{text}"),
    };
    let applied = written.apply(diagnostics.to_vec());
    for d in &applied.diagnostics {
        let reported_finding = d.finding.is_some() && d.level != Level::Allow;
        assert!(
            !reported_finding && d.code != Code::StaleBaselineEntry,
            "the baseline written for these diagnostics leaves `{}: {}`:\n{text}",
            d.code.as_str(),
            d.message
        );
    }
}

/// The short, cargo-JSON and (see [`Expect::sarif`]) SARIF renderings: each written in
/// full, the JSON ones valid.
fn render_machine(a: &Analysis, diagnostics: &[Diagnostic], sarif: bool) {
    let mut formats = vec![
        Format::Short,
        Format::Json {
            ansi: false,
            short: false,
        },
        Format::Json {
            ansi: true,
            short: true,
        },
    ];
    if sarif && diagnostics.iter().any(|d| d.finding.is_some()) {
        formats.push(Format::Sarif);
    }
    let manifest_path = a.root.join("Cargo.toml");
    let workspace = ReportContext {
        manifest_path: &manifest_path,
        metadata: a.metadata.as_ref(),
        srcroot: Some(&a.root),
    };
    let report = Report::new(diagnostics, &a.sources, &workspace);
    for format in formats {
        let mut out = Vec::new();
        let rendered = render(format, &report, &mut out).expect("writing to a Vec");
        assert!(rendered.complete, "a diagnostic's human rendering panicked");
        let text = String::from_utf8(out).expect("machine output is UTF-8");
        match format {
            Format::Json { .. } => {
                for line in text.lines() {
                    if let Err(e) = serde_json::from_str::<serde_json::Value>(line) {
                        panic!("invalid JSON line ({e}): {line}");
                    }
                }
            }
            Format::Sarif => {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&text) {
                    panic!("invalid SARIF ({e})");
                }
            }
            _ => {}
        }
    }
}

fn spans(d: &Diagnostic) -> impl Iterator<Item = &Span> {
    let notes = d.notes.iter().filter_map(|n| n.span.as_ref());
    let hops = d
        .finding
        .iter()
        .flat_map(|f| f.chain.iter().map(|h| &h.call_site));
    std::iter::once(&d.primary).chain(notes).chain(hops)
}

pub(crate) fn check_span(sources: &SourceMap, s: &Span) -> Result<(), String> {
    let Some(text) = sources.text(&s.file) else {
        return Err(format!("span into an unknown file {:?}", s.file));
    };
    let ok = s.byte_start <= s.byte_end
        && s.byte_end <= text.len()
        && text.is_char_boundary(s.byte_start)
        && text.is_char_boundary(s.byte_end)
        && s.line_start >= 1
        && s.column_start >= 1
        && (s.line_start, s.column_start) <= (s.line_end, s.column_end);
    if ok {
        Ok(())
    } else {
        Err(format!("bad span {s:?} (file has {} bytes)", text.len()))
    }
}

mod files;
pub use files::{split, two_files};

mod configs;
pub use configs::config_file;

mod baselines;
pub use baselines::baseline_file;

/// `data` as source text: libFuzzer's bytes when they are UTF-8 (the lint reads files with
/// `read_to_string`, so non-UTF-8 text never reaches the parser).
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}
