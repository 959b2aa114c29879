//! Renderer speed: the report step, then JSON (with each message's `rendered` field: the
//! human text, or the short line in `json-short`) and SARIF of 10,000 findings of four hops
//! each over one 20,000-line file, plus the baseline and level passes over the same list.
//! Nothing here should grow faster than the output (the JSON span text and the snippets are
//! found from byte offsets, not by scanning the file).
//!
//! `cargo bench -p cargo-nosync-lint --bench formats`

use criterion::{Criterion, criterion_group, criterion_main};
use nosync_lint::{Baseline, Format, Report, ReportContext, render, write_baseline};
use nosync_lint_core::diagnostics::{
    Code, Confidence, Diagnostic, Finding, Hop, Level, SinkKind, Span,
};
use nosync_lint_core::levels::{LevelOverrides, Subject};
use nosync_lint_core::source::SourceMap;
use std::hint::black_box;
use std::path::Path;

const LINE: &str = "    metrics::log_loss(&self.stream, &self.loss, step)?; // a line of code\n";
const LINES: usize = 20_000;
const FINDINGS: usize = 10_000;

fn span(line: usize) -> Span {
    let start = (line - 1) * LINE.len() + 4;
    Span {
        file: "src/model.rs".into(),
        byte_start: start,
        byte_end: start + 46,
        line_start: line,
        column_start: 5,
        line_end: line,
        column_end: 51,
    }
}

fn findings() -> Vec<Diagnostic> {
    (1..=FINDINGS)
        .map(|i| {
            let chain: Vec<Hop> = (0..4)
                .map(|h| Hop {
                    function: format!("demo::m{h}::f{i}"),
                    call_site: span(i + h),
                    confidence: Confidence::Exact,
                })
                .collect();
            let mut d = Diagnostic::new(Code::SyncInNoSync, format!("`f{i}` blocks"), span(i))
                .with_label("this call blocks the host");
            for hop in &chain {
                d = d.with_note(
                    format!("`{}` calls", hop.function),
                    Some(hop.call_site.clone()),
                );
            }
            d.finding = Some(Finding {
                root: chain[0].function.clone(),
                sink: "cudarc::driver::CudaStream::synchronize".into(),
                sink_reason: "waits for all work queued on the stream".into(),
                sink_kind: SinkKind::Blocks,
                chain,
                confidence: Confidence::Exact,
                undecided: Vec::new(),
                runtime: None,
                other_chain_count: 0,
                other_chains: Vec::new(),
            });
            d
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let text = LINE.repeat(LINES);
    let diagnostics = findings();
    let mut sources = SourceMap::new(Path::new("/w"));
    sources.add("/w/src/model.rs".into(), text);
    let workspace = ReportContext {
        manifest_path: Path::new("/w/Cargo.toml"),
        metadata: None,
        srcroot: Some(Path::new("/w")),
    };
    let render_in = |format: Format| {
        let report = Report::new(black_box(&diagnostics), &sources, &workspace);
        let mut out = Vec::new();
        render(format, &report, &mut out).expect("writing to a Vec");
        out
    };
    let mut group = c.benchmark_group("formats-10k-findings");
    group.sample_size(10);
    group.bench_function("report", |b| {
        b.iter(|| {
            Report::new(black_box(&diagnostics), &sources, &workspace)
                .items
                .len()
        })
    });
    group.bench_function("json", |b| {
        b.iter(|| {
            render_in(Format::Json {
                ansi: false,
                short: false,
            })
        })
    });
    group.bench_function("json-short", |b| {
        b.iter(|| {
            render_in(Format::Json {
                ansi: false,
                short: true,
            })
        })
    });
    group.bench_function("sarif", |b| b.iter(|| render_in(Format::Sarif)));
    let written = write_baseline(&diagnostics);
    group.bench_function("baseline-write", |b| {
        b.iter(|| write_baseline(black_box(&diagnostics)))
    });
    let parsed = Baseline::parse(Path::new("b.toml"), written).expect("baseline parses");
    group.bench_function("baseline-apply", |b| {
        b.iter(|| parsed.apply(black_box(diagnostics.clone())))
    });
    let mut overrides = LevelOverrides::default();
    overrides.push(Subject::Warnings, Level::Deny);
    overrides.push(Subject::Code(Code::SyncInNoSync), Level::Warn);
    group.bench_function("levels", |b| {
        b.iter(|| {
            let mut list = diagnostics.clone();
            overrides.apply(&mut list);
            list
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
