//! Renderer speed: JSON and SARIF of 10,000 findings of four hops each over one 20,000-line
//! file, plus the baseline and level passes over the same list. Nothing here should grow
//! faster than the output (the JSON span text is found from byte offsets, not by scanning the
//! file).
//!
//! `cargo bench -p cargo-nosync-lint --bench formats`

use criterion::{Criterion, criterion_group, criterion_main};
use nosync_lint::baseline::{self, Baseline};
use nosync_lint::diagnostics::{Code, Confidence, Diagnostic, Finding, Hop, Level, Span};
use nosync_lint::levels::{LevelOverrides, Target};
use nosync_lint::render::{json, sarif};
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
                sink_kind: nosync_lint::diagnostics::SinkKind::Blocks,
                chain,
                confidence: Confidence::Exact,
            });
            d
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let text = LINE.repeat(LINES);
    let diagnostics = findings();
    let workspace = json::workspace_origin(None, Path::new("/w/Cargo.toml"));
    let source = |p: &Path| (p == Path::new("src/model.rs")).then_some(text.as_str());
    let rendered = |d: &Diagnostic| d.message.clone();
    let cx = json::JsonContext {
        source: &source,
        rendered: &rendered,
        workspace: &workspace,
        metadata: None,
    };
    let mut group = c.benchmark_group("formats-10k-findings");
    group.sample_size(10);
    group.bench_function("json", |b| {
        b.iter(|| json::render(black_box(&diagnostics), &cx))
    });
    group.bench_function("sarif", |b| {
        b.iter(|| sarif::render(black_box(&diagnostics), &sarif::SarifContext::default()))
    });
    let written = baseline::write(&diagnostics);
    group.bench_function("baseline-write", |b| {
        b.iter(|| baseline::write(black_box(&diagnostics)))
    });
    let parsed = Baseline::parse(Path::new("b.toml"), written).expect("baseline parses");
    group.bench_function("baseline-apply", |b| {
        b.iter(|| parsed.apply(black_box(diagnostics.clone())))
    });
    let mut overrides = LevelOverrides::default();
    overrides.push(Target::Warnings, Level::Deny);
    overrides.push(Target::Code(Code::SyncInNoSync), Level::Warn);
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
