//! Engine speed: the whole analysis of a workspace (after `cargo metadata`) against
//! the floor, a bare `syn::parse_file` of every file the analysis reads.
//!
//! `cargo bench -p cargo-nosync-lint --bench engine` measures `fixtures/demo`; set
//! `NOSYNC_BENCH_MANIFEST=/path/to/Cargo.toml` (and optionally `NOSYNC_BENCH_CONFIG`)
//! to measure another workspace, e.g. a crate depending on candle-core with `cuda`.

use criterion::{Criterion, criterion_group, criterion_main};
use nosync_lint::config::{self, Config};
use nosync_lint::engine::analyze_crates;
use nosync_lint::source::SourceMap;
use nosync_lint::workspace::{self, WorkspaceOptions};
use std::path::PathBuf;

fn manifest() -> PathBuf {
    std::env::var_os("NOSYNC_BENCH_MANIFEST").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/Cargo.toml"),
        PathBuf::from,
    )
}

fn bench(c: &mut Criterion) {
    let opts = WorkspaceOptions {
        manifest_path: Some(manifest()),
        ..WorkspaceOptions::default()
    };
    let (ws, _) = workspace::load(&opts).expect("cargo metadata on the bench workspace");
    let mut cfg = Config::default();
    let mut scratch = SourceMap::new(&ws.root);
    if let Some(path) = std::env::var_os("NOSYNC_BENCH_CONFIG") {
        config::load_file(
            PathBuf::from(path).as_path(),
            &mut cfg,
            &mut scratch,
            &mut Vec::new(),
        )
        .expect("bench config");
    }
    let files: Vec<String> = {
        let a = analyze_crates(
            ws.root.clone(),
            ws.crates.clone(),
            &cfg,
            SourceMap::new(&ws.root),
        );
        a.sources.files().iter().map(|f| f.text.clone()).collect()
    };
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    g.bench_function("syn_parse_floor", |b| {
        b.iter(|| files.iter().filter(|t| syn::parse_file(t).is_ok()).count())
    });
    g.bench_function("analyze", |b| {
        b.iter(|| {
            analyze_crates(
                ws.root.clone(),
                ws.crates.clone(),
                &cfg,
                SourceMap::new(&ws.root),
            )
            .diagnostics
            .len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
