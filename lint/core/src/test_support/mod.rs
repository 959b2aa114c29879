//! What the stages' unit tests share: in-memory crates ([`Fixture`]), the pipeline over
//! them ([`pipeline`]: [`crate::pipeline::run`], the engine's own, with no caches, no
//! cancellation and no last safety net), and one compact rendering of its
//! diagnostics ([`render`]) that the tests compare exactly or snapshot with insta.
//!
//! Each stage's tests sit beside it (`parse/tests`, `resolve/tests`, `callgraph/tests`,
//! `analysis/tests`, `config/tests`); the engine's tests (`cargo-nosync-lint`, which turns on
//! the `test-support` feature for them) render its analyses with the same functions.

mod pipeline;

pub use pipeline::*;

use crate::config::{Config, Section};
use crate::crate_graph::{CrateSpec, DepTarget};
use crate::diagnostics::{Code, Diagnostic, Origin};
use crate::source::{MemLoader, SourceMap};
use std::path::PathBuf;

/// The directory of the in-memory crate `t` of [`check`]: its root file is
/// `/mem/t/src/lib.rs`.
pub const ROOT: &str = "/mem/t";

/// The `use`s most tests start with (3 lines: a test's own text starts on line 4).
pub const PRELUDE: &str = "use nosync::{no_sync, synchronizes};\nuse cudarc::driver::{CudaStream, CudaContext};\nuse std::sync::Arc;\n";

/// `body` after the [`PRELUDE`].
pub fn with_prelude(body: &str) -> String {
    format!("{PRELUDE}{body}")
}

/// Crates in memory: their files (behind a [`MemLoader`]), the crates and the directory
/// the printed paths are relative to.
#[derive(Debug)]
pub struct Fixture {
    pub root: PathBuf,
    pub files: MemLoader,
    pub crates: Vec<CrateSpec>,
}

impl Fixture {
    /// `src` as the root file of a crate `t` (`/mem/t/src/lib.rs`).
    pub fn src(src: &str) -> Fixture {
        let root = PathBuf::from(ROOT);
        let file = root.join("src/lib.rs");
        let files = MemLoader::new().with(&file, src);
        let crates = vec![spec("t", file)];
        Fixture {
            root,
            files,
            crates,
        }
    }

    /// `files` (path, text) under one directory, `crates` (name, root file) there, crate
    /// `a` depending on analysed crate `b` for each `(a, b)` of `deps` (indexes into
    /// `crates`; the dependency is named as its crate).
    pub fn tree(
        files: &[(&str, &str)],
        crates: &[(&str, &str)],
        deps: &[(usize, usize)],
    ) -> Fixture {
        let root = PathBuf::from("/mem/tree");
        let mut mem = MemLoader::new();
        for (path, text) in files {
            mem.insert(root.join(path), *text);
        }
        let mut specs: Vec<CrateSpec> = crates.iter().map(|(n, r)| spec(n, root.join(r))).collect();
        for &(a, b) in deps {
            let name = specs[b].name.clone();
            specs[a].deps.push((name, DepTarget::Analysed(b)));
        }
        Fixture {
            root,
            files: mem,
            crates: specs,
        }
    }

    /// An empty source map for the fixture's directory.
    pub fn sources(&self) -> SourceMap {
        SourceMap::new(&self.root)
    }

    /// The pipeline's input: the fixture's crates under its root, with `config`, an empty
    /// source map and an unknown target.
    pub fn input<'c>(&self, config: &'c Config) -> Input<'c> {
        Input::new(
            self.root.clone(),
            self.crates.clone(),
            self.sources(),
            config,
        )
    }
}

/// A library crate `name` rooted at `file`, with `cudarc`, `nosync` and the lock crates
/// `parking_lot` and `spin` as external dependencies and the feature `on` enabled.
pub fn spec(name: &str, file: PathBuf) -> CrateSpec {
    let origin = Origin {
        package_id: name.into(),
        package_name: name.into(),
        manifest_path: file.with_file_name("Cargo.toml"),
        target_name: name.into(),
        target_kind: vec!["lib".into()],
        target_src_path: file.clone(),
    };
    CrateSpec {
        name: name.into(),
        root: file,
        features: ["on".to_owned()].into_iter().collect(),
        deps: ["cudarc", "nosync", "parking_lot", "spin"]
            .iter()
            .map(|d| (d.to_string(), DepTarget::External(d.to_string())))
            .collect(),
        check_roots: true,
        origin,
        versions: Default::default(),
    }
}

/// A config read from TOML `text` as `/mem/t/nosync.toml`: the config, the source map that
/// holds the file (for located config errors), and the diagnostics reading it produced.
pub fn config_from_toml(text: &str) -> (Config, SourceMap, Vec<Diagnostic>) {
    let root = PathBuf::from(ROOT);
    let mut sources = SourceMap::new(&root);
    let id = sources.add(root.join("nosync.toml"), text.to_owned());
    let (cfg, diags) = crate::config::read(id, Section::File, &sources);
    (cfg, sources, diags)
}

/// What [`render`] prints of an analysis: its diagnostics and its call graph's size.
pub trait Analysed {
    fn diagnostics(&self) -> &[Diagnostic];
    /// (edges, unresolved calls) of the call graph.
    fn graph_size(&self) -> (usize, usize);
}

/// The analysis walking only what the search from the roots reads (`demand`) and the one
/// walking every fn (`every`) must report the same (else the test fails, showing both).
/// Returns `every`, whose figures are those of the whole call graph.
pub fn same_either_walk<A: Analysed>(demand: A, every: A) -> A {
    assert_eq!(
        render(&demand, true),
        render(&every, true).replace(&stats_line(&every), &stats_line(&demand)),
        "walking from the roots changed the diagnostics (left) of walking every fn (right)"
    );
    assert_eq!(demand.diagnostics(), every.diagnostics());
    every
}

/// One line per diagnostic (`[FILE:]LINE:COL code: message`), then its label
/// (`  = label`) and its chain (`  via LINE:COL fn (tag)`); last, the call graph's
/// size (`  stats: N edges, M unresolved`; of the whole graph, every fn walked, in the
/// analyses of [`check`] and its siblings, see [`both_walks`]).
pub fn render(a: &impl Analysed, with_file: bool) -> String {
    let mut out: String = a
        .diagnostics()
        .iter()
        .map(|d| render_one(d, with_file, false))
        .collect();
    out += &stats_line(a);
    out
}

/// The call graph's size: `  stats: N edges, M unresolved`.
pub fn stats_line(a: &impl Analysed) -> String {
    let (edges, unresolved) = a.graph_size();
    format!("  stats: {edges} edges, {unresolved} unresolved\n")
}

/// One diagnostic as [`render`] prints it; with `summary`, a finding also gets the line
/// `  root -> sink (Kind, confidence, Level)` before its chain.
pub fn render_one(d: &Diagnostic, with_file: bool, summary: bool) -> String {
    let p = &d.primary;
    let mut out = String::new();
    if with_file {
        out += &format!("{}:", p.file.display());
    }
    let (line, column, code) = (p.line_start, p.column_start, d.code.as_str());
    out += &format!("{line}:{column} {code}: {}\n", d.message);
    if let Some(label) = &d.label {
        out += &format!("  = {label}\n");
    }
    if let Some(f) = d.finding.as_ref().filter(|_| summary) {
        let tag = crate::analysis::tag_name(f.confidence);
        let (kind, level) = (f.sink_kind, d.level);
        out += &format!("  {} -> {} ({kind:?}, {tag}, {level:?})\n", f.root, f.sink);
    }
    for h in d.finding.iter().flat_map(|f| &f.chain) {
        let tag = crate::analysis::tag_name(h.confidence);
        let (line, column) = (h.call_site.line_start, h.call_site.column_start);
        out += &format!("  via {line}:{column} {} ({tag})\n", h.function);
    }
    out
}

/// The diagnostics of `a` but `unresolved-call-in-no-sync`, exactly: each finding with its
/// label, root, sink, kind, confidence, level and chain (see [`render_one`]); no graph size.
/// Tests compare this whole text, so that a wrong chain fails.
pub fn chains_of(a: &impl Analysed, with_file: bool) -> String {
    a.diagnostics()
        .iter()
        .filter(|d| d.code != Code::UnresolvedCallInNoSync)
        .map(|d| render_one(d, with_file, true))
        .collect()
}

/// The first lines of the diagnostics in `rendered` ([`render`]) but the unresolved calls'.
pub fn finding_lines(rendered: &str) -> Vec<String> {
    rendered
        .lines()
        .filter(|l| !l.starts_with("  ") && !l.contains("unresolved-call"))
        .map(str::to_owned)
        .collect()
}
