//! Unit tests of the engine over in-memory sources, through one [`check`] helper: every
//! file is read through a [`MemLoader`], so no unit test of the engine touches the disk.

use crate::config::Config;
use crate::diagnostics::Origin;
use crate::engine::{Core, analyze_crates, analyze_crates_with};
use crate::source::{MemLoader, SourceMap};
use crate::workspace::{CrateSpec, DepTarget};
use std::path::{Path, PathBuf};

/// Analyses `src` as the root file of a crate `t` (with `cudarc` and `nosync` as
/// external dependencies) and returns one line per diagnostic (see [`render`]).
fn check(src: &str) -> String {
    check_with(src, &Config::default())
}

fn check_with(src: &str, cfg: &Config) -> String {
    render(
        &analyze_src(src, cfg, SourceMap::new(Path::new(ROOT))),
        false,
    )
}

/// The in-memory crate `t` of [`check`]: `/mem/t/src/lib.rs`.
const ROOT: &str = "/mem/t";

/// The analysis of `src` as `/mem/t/src/lib.rs`, with `sources` (e.g. config files) added.
fn analyze_src(src: &str, cfg: &Config, sources: SourceMap) -> crate::Analysis {
    let root = PathBuf::from(ROOT);
    let file = root.join("src/lib.rs");
    let files = MemLoader::new().with(&file, src);
    both_walks(cfg, |core| {
        let spec = vec![spec("t", file.clone())];
        analyze_crates_with(root.clone(), spec, core, &files, sources.clone())
    })
}

/// `analyze` walking only what the search from the roots reads, then walking every fn:
/// the diagnostics must be the same (else the test fails, showing both). Returns the
/// second analysis, whose figures are those of the whole call graph.
fn both_walks(cfg: &Config, analyze: impl Fn(Core<'_>) -> crate::Analysis) -> crate::Analysis {
    let core = |walk_every_fn| Core {
        config: cfg,
        eager_bodies: false,
        walk_every_fn,
        exiting: false,
        unresolved_calls: true,
        target: crate::parse::cfg::TargetCfg::unknown(),
    };
    let (demand, every) = (analyze(core(false)), analyze(core(true)));
    assert_eq!(
        render(&demand, true),
        render(&every, true).replace(&stats_line(&every), &stats_line(&demand)),
        "walking from the roots changed the diagnostics (left) of walking every fn (right)"
    );
    assert_eq!(demand.diagnostics, every.diagnostics);
    every
}

/// Analyses crates of several files: `files` (path, text) are put in memory under one
/// directory, `crates` are (name, root file) there. Lines start with the file (relative path).
fn check_tree(files: &[(&str, &str)], crates: &[(&str, &str)]) -> String {
    check_tree_deps(files, crates, &[])
}

/// [`check_tree`] where crate `a` depends on analysed crate `b` for each `(a, b)` of
/// `deps` (indexes into `crates`; the dependency is named as its crate).
fn check_tree_deps(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
) -> String {
    render(&analyze_tree(files, crates, deps), true)
}

/// The analysis of [`check_tree_deps`].
fn analyze_tree(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
) -> crate::Analysis {
    analyze_tree_with(files, crates, deps, &Config::default())
}

/// [`analyze_tree`] with a configuration.
fn analyze_tree_with(
    files: &[(&str, &str)],
    crates: &[(&str, &str)],
    deps: &[(usize, usize)],
    cfg: &Config,
) -> crate::Analysis {
    let dir = PathBuf::from("/mem/tree");
    let mut mem = MemLoader::new();
    for (path, text) in files {
        mem.insert(dir.join(path), *text);
    }
    let mut specs: Vec<CrateSpec> = crates.iter().map(|(n, r)| spec(n, dir.join(r))).collect();
    for &(a, b) in deps {
        let name = specs[b].name.clone();
        specs[a].deps.push((name, DepTarget::Analysed(b)));
    }
    both_walks(cfg, |core| {
        let (root, specs) = (dir.clone(), specs.clone());
        analyze_crates_with(root, specs, core, &mem, SourceMap::new(&dir))
    })
}

/// A library crate `name` rooted at `file`, with `cudarc` and `nosync` as external
/// dependencies and the feature `on` enabled.
fn spec(name: &str, file: PathBuf) -> CrateSpec {
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
        deps: ["cudarc", "nosync"]
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
fn config_from_toml(text: &str) -> (Config, SourceMap, Vec<crate::diagnostics::Diagnostic>) {
    let root = PathBuf::from(ROOT);
    let mut sources = SourceMap::new(&root);
    let id = sources.add(root.join("nosync.toml"), text.to_owned());
    let (cfg, diags) = crate::config::read(id, crate::config::Section::File, &sources);
    (cfg, sources, diags)
}

/// One line per diagnostic (`[FILE:]LINE:COL code: message`), then its label
/// (`  = label`) and its chain (`  via LINE:COL fn (tag)`); last, the call graph's
/// size (`  stats: N edges, M unresolved`; of the whole graph, every fn walked, in the
/// analyses of [`check`] and its siblings, see [`both_walks`]).
fn render(a: &crate::Analysis, with_file: bool) -> String {
    let mut out: String = a
        .diagnostics
        .iter()
        .map(|d| render_one(d, with_file, false))
        .collect();
    out += &stats_line(a);
    out
}

/// The call graph's size: `  stats: N edges, M unresolved`.
fn stats_line(a: &crate::Analysis) -> String {
    let st = &a.stats;
    let edges = st.edges_exact + st.edges_inferred + st.edges_name_only;
    format!("  stats: {edges} edges, {} unresolved\n", st.unresolved)
}

/// One diagnostic as [`render`] prints it; with `summary`, a finding also gets the line
/// `  root -> sink (Kind, confidence, Level)` before its chain.
fn render_one(d: &crate::diagnostics::Diagnostic, with_file: bool, summary: bool) -> String {
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
fn chains_of(a: &crate::Analysis, with_file: bool) -> String {
    a.diagnostics
        .iter()
        .filter(|d| d.code != crate::diagnostics::Code::UnresolvedCallInNoSync)
        .map(|d| render_one(d, with_file, true))
        .collect()
}

/// [`chains_of`] the analysis of `src` as [`check`] analyses it.
fn chains(src: &str) -> String {
    chains_with(src, &Config::default())
}

/// [`chains`] with a config.
fn chains_with(src: &str, cfg: &Config) -> String {
    chains_of(
        &analyze_src(src, cfg, SourceMap::new(Path::new(ROOT))),
        false,
    )
}

/// [`chains_of`] the crates of [`check_tree_deps`] (lines start with the file).
fn chains_tree(files: &[(&str, &str)], crates: &[(&str, &str)], deps: &[(usize, usize)]) -> String {
    chains_of(&analyze_tree(files, crates, deps), true)
}

fn findings(src: &str) -> Vec<String> {
    check(src)
        .lines()
        .filter(|l| !l.starts_with("  ") && !l.contains("unresolved-call"))
        .map(str::to_owned)
        .collect()
}

const PRELUDE: &str = "use nosync::{no_sync, synchronizes};\nuse cudarc::driver::{CudaStream, CudaContext};\nuse std::sync::Arc;\n";

fn with_prelude(body: &str) -> String {
    format!("{PRELUDE}{body}")
}

mod annotations;
mod assoc;
mod called_off;
mod calls;
mod cfg;
mod config;
mod demand;
mod derives;
mod dispatch;
mod external;
mod findings;
mod flags;
mod formatting;
mod lazy;
mod limits;
mod macros;
mod models;
mod modules;
mod panics;
mod pipeline;
mod reach;
mod resolution;
mod roots;
mod scopes;
mod stamps;
mod std_paths;
mod std_types;
mod suggestions;
mod types;
mod values;
