//! Renderer speed: JSON and SARIF of 10,000 findings of four hops each over one 20,000-line
//! file, plus the baseline and level passes over the same list. Nothing here should grow
//! faster than the output (the JSON span text is found from byte offsets, not by scanning the
//! file).
//!
//! `cargo bench -p cargo-nosync-lint --bench formats`

use criterion::{Criterion, criterion_group, criterion_main};
use nosync_lint::{
    Baseline, Code, Confidence, Diagnostic, Finding, Hop, JsonContext, Level, LevelOverrides,
    LevelTarget, SarifContext, SinkKind, Span, render_json, render_sarif, workspace_origin,
    write_baseline,
};
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
            });
            d
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let text = LINE.repeat(LINES);
    let diagnostics = findings();
    let workspace = workspace_origin(None, Path::new("/w/Cargo.toml"));
    let source = |p: &Path| (p == Path::new("src/model.rs")).then_some(text.as_str());
    let rendered = |d: &Diagnostic| d.message.clone();
    let cx = JsonContext {
        source: &source,
        rendered: &rendered,
        workspace: &workspace,
        metadata: None,
    };
    let mut group = c.benchmark_group("formats-10k-findings");
    group.sample_size(10);
    group.bench_function("json", |b| {
        b.iter(|| render_json(black_box(&diagnostics), &cx))
    });
    group.bench_function("sarif", |b| {
        b.iter(|| render_sarif(black_box(&diagnostics), &SarifContext::default()))
    });
    let written = write_baseline(&diagnostics);
    group.bench_function("baseline-write", |b| {
        b.iter(|| write_baseline(black_box(&diagnostics)))
    });
    let parsed = Baseline::parse(Path::new("b.toml"), written).expect("baseline parses");
    group.bench_function("baseline-apply", |b| {
        b.iter(|| parsed.apply(black_box(diagnostics.clone())))
    });
    let mut overrides = LevelOverrides::default();
    overrides.push(LevelTarget::Warnings, Level::Deny);
    overrides.push(LevelTarget::Code(Code::SyncInNoSync), Level::Warn);
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
