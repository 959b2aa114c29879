//! Unit tests of the engine over in-memory sources, through one [`check`] helper.

use crate::config::Config;
use crate::diagnostics::Origin;
use crate::engine::analyze_crates;
use crate::source::SourceMap;
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
fn analyze_src(src: &str, cfg: &Config, mut sources: SourceMap) -> crate::Analysis {
    let root = PathBuf::from(ROOT);
    let file = root.join("src/lib.rs");
    sources.add(file.clone(), src.to_owned());
    analyze_crates(root, vec![spec("t", file)], cfg, sources)
}

/// Analyses crates on disk: `files` (path, text) are written under a fresh directory,
/// `crates` are (name, root file) there. Lines start with the file (relative path).
fn check_tree(files: &[(&str, &str)], crates: &[(&str, &str)]) -> String {
    let dir = std::env::temp_dir().join(format!(
        "nosync-lint-unit-{}-{}",
        std::process::id(),
        crates.iter().map(|c| c.0).collect::<Vec<_>>().join("-")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let specs = crates.iter().map(|(n, r)| spec(n, dir.join(r))).collect();
    let a = analyze_crates(dir.clone(), specs, &Config::default(), SourceMap::new(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    render(&a, true)
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
        is_lib: true,
        origin,
    }
}

/// One line per diagnostic (`[FILE:]LINE:COL code: message`), then its label
/// (`  = label`) and its chain (`  via LINE:COL fn (tag)`); last, the call graph's
/// size (`  stats: N edges, M unresolved`).
fn render(a: &crate::Analysis, with_file: bool) -> String {
    let mut out = String::new();
    for d in &a.diagnostics {
        let p = &d.primary;
        if with_file {
            out += &format!("{}:", p.file.display());
        }
        out += &format!(
            "{}:{} {}: {}\n",
            p.line_start,
            p.column_start,
            d.code.as_str(),
            d.message
        );
        if let Some(label) = &d.label {
            out += &format!("  = {label}\n");
        }
        for h in d.finding.iter().flat_map(|f| &f.chain) {
            let tag = crate::analysis::tag_name(h.confidence);
            out += &format!(
                "  via {}:{} {} ({tag})\n",
                h.call_site.line_start, h.call_site.column_start, h.function
            );
        }
    }
    let st = &a.stats;
    let edges = st.edges_exact + st.edges_inferred + st.edges_name_only;
    out += &format!("  stats: {edges} edges, {} unresolved\n", st.unresolved);
    out
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

#[test]
fn direct_and_transitive() {
    let out = check(&with_prelude(
        "#[synchronizes] fn wait() {}\nfn mid() { wait() }\n#[no_sync] fn step() { mid(); }\n",
    ));
    assert!(
        out.contains(
            "6:24 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`"
        ),
        "{out}"
    );
    assert!(
        out.contains("via 6:24 t::step (exact)") && out.contains("via 5:12 t::mid (exact)"),
        "{out}"
    );
}

#[test]
fn attribute_spellings() {
    let src = "use nosync::synchronizes as blocks;\n#[blocks] fn a() {}\n#[nosync::synchronizes] fn b() {}\n#[nosync::no_sync] fn r() { a(); b(); }\n";
    assert_eq!(findings(src).len(), 2, "{}", check(src));
}

#[test]
fn receiver_typing_through_fields_returns_and_question_mark() {
    let src = with_prelude(
        "struct Dev { stream: Arc<CudaStream> }\n\
         impl Dev { fn new() -> Result<Self, ()> { todo() } fn stream(&self) -> &Arc<CudaStream> { &self.stream } }\n\
         #[no_sync] fn a(d: &Dev) { d.stream.synchronize(); }\n\
         #[no_sync] fn b() -> Result<(), ()> { let d = Dev::new()?; d.stream().synchronize(); Ok(()) }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 2, "{}", check(&src));
    assert!(check(&src).contains("(inferred)"));
}

#[test]
fn name_collision_uses_the_receiver_type() {
    let src = with_prelude(
        "struct Queue; impl Queue { fn synchronize(&self) {} }\n\
         #[no_sync] fn a(q: &Queue, s: &CudaStream) { q.synchronize(); s.synchronize(); }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 1, "{}", check(&src));
    assert!(f[0].contains("CudaStream::synchronize"));
}

#[test]
fn unknown_receiver_is_name_only_and_a_warning() {
    let src = with_prelude("#[no_sync] fn a(x: Unknown) { x.synchronize(); }\n");
    let f = findings(&src);
    // Every known `synchronize` is a candidate: one warning per (root, sink).
    assert_eq!(f.len(), 3, "{}", check(&src));
    assert!(
        f.iter().all(|l| l.contains("possible-sync-in-no-sync")),
        "{}",
        check(&src)
    );
}

#[test]
fn pageable_vs_pinned_memcpy_dtoh() {
    let src = with_prelude(
        "use cudarc::driver::PinnedHostSlice;\n\
         #[no_sync] fn pageable(s: &CudaStream, d: &u8, v: &mut Vec<f32>) { s.memcpy_dtoh(d, v); }\n\
         #[no_sync] fn pinned(s: &CudaStream, d: &u8, p: &mut PinnedHostSlice<f32>) { s.memcpy_dtoh(d, p); }\n\
         #[no_sync] fn unknown(s: &CudaStream, d: &u8, p: &mut Q) { s.memcpy_dtoh(d, p); }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 2, "{}", check(&src));
    assert!(f[0].contains("sync-in-no-sync") && f[0].contains("`pageable`"));
    assert!(f[1].contains("possible-sync-in-no-sync") && f[1].contains("`unknown`"));
}

#[test]
fn escapes_are_not_followed() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\n#[nosync::allow_sync] fn ok() { w() }\n\
         #[no_sync] fn a() { nosync::allow_sync(|| w()); nosync::allow_sync_expr!(w()); ok(); }\n",
    );
    assert!(findings(&src).is_empty(), "{}", check(&src));
}

#[test]
fn cycles_terminate_and_cfg_is_evaluated() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\nfn a(n: u32) { if n > 0 { b(n - 1) } }\nfn b(n: u32) { a(n); }\n\
         #[cfg(test)] fn t() { w() }\n#[cfg(not(feature = \"on\"))] fn t() {}\n\
         #[cfg(feature = \"on\")] fn on() { w() }\n#[no_sync] fn r() { a(3); on(); }\n",
    );
    let f = findings(&src);
    assert!(f.len() == 1 && f[0].contains("`w`"), "{}", check(&src));
}

#[test]
fn generic_bounds_dispatch_to_every_impl() {
    let src = with_prelude(
        "trait Dev { fn wait(&self); }\nstruct A; struct B;\n\
         impl Dev for A { #[synchronizes] fn wait(&self) {} }\nimpl Dev for B { fn wait(&self) {} }\n\
         #[no_sync] fn g<D: Dev>(d: &D) { d.wait(); }\n#[no_sync] fn h(d: &dyn Dev) { d.wait(); }\n",
    );
    let out = check(&src);
    assert_eq!(findings(&src).len(), 2, "{out}");
    assert!(out.contains("(inferred)"), "{out}");
}

#[test]
fn macro_rules_fns_and_macro_arguments() {
    let src = with_prelude(
        "#[synchronizes] fn w() -> u32 { 0 }\nmacro_rules! mk { ($n:ident) => { fn $n() { w(); } }; }\nmk!(gen_wait);\n\
         #[no_sync] fn a() { gen_wait(); }\n#[no_sync] fn b() { let _s = format!(\"{}\", w()); }\n",
    );
    assert_eq!(findings(&src).len(), 2, "{}", check(&src));
}

#[test]
fn drop_at_scope_end() {
    let src = with_prelude(
        "struct G; impl Drop for G { #[synchronizes] fn drop(&mut self) {} }\n\
         #[no_sync] fn a() { let _g = G; }\n#[no_sync] fn b() -> G { let g = G; g }\n\
         #[no_sync] fn c() { let _ = G; }\n",
    );
    let f = findings(&src);
    assert!(
        f.len() == 2 && f[0].contains("`a`") && f[1].contains("`c`"),
        "{}",
        check(&src)
    );
}

#[test]
fn config_roots_sinks_and_errors() {
    let root = PathBuf::from("/mem/t");
    let mut sources = SourceMap::new(&root);
    let text = "roots = [\"t::hot\", \"t::nope\"]\nsinks = [\"t::Dev::flush\"]\n";
    let id = sources.add(root.join("nosync.toml"), text.to_owned());
    let mut cfg = Config::default();
    let value: toml::Table = toml::from_str(text).unwrap();
    let mut diags = Vec::new();
    cfg.add_table(
        &serde_json::to_value(value).unwrap(),
        id,
        &sources,
        &mut diags,
    );
    assert!(diags.is_empty());
    let out = check_with(
        "struct Dev; impl Dev { fn flush(&self) {} }\nfn hot(d: &Dev) { d.flush() }\n",
        &cfg,
    );
    assert!(out.contains("sync-in-no-sync"), "{out}");
}

#[test]
fn broken_input_never_panics() {
    let deep_parens = format!("fn f() {{ {}1{} }}", "(".repeat(5000), ")".repeat(5000));
    let deep_unary = format!("fn f() {{ let x = {}1; }}", "!".repeat(100_000));
    let long_chain = format!("fn f() {{ x{} ; }}", ".a()".repeat(20_000));
    let deep_blocks = format!("fn f() {{ {}{} }}", "{".repeat(3000), "}".repeat(3000));
    let garbage: String = (0..5000u32)
        .map(|i| char::from_u32(32 + (i * 7919) % 90).unwrap_or(' '))
        .collect();
    let cases = [
        deep_parens,
        deep_unary,
        long_chain,
        deep_blocks,
        garbage,
        "fn f( {".to_owned(),
        "\u{feff}#!/bin/x\nfn f() {}".to_owned(),
        "impl<T> X for T where T: {} mod m { fn".to_owned(),
        "macro_rules! m { ($($x:tt)*) => { m!($($x)*); } } m!(a);".to_owned(),
        "mod a { pub use super::b::*; } mod b { pub use super::a::*; } use a::Z; #[no_sync] fn r() { Z::f(); }".to_owned(),
        "pub type A = A;\npub type B = C;\npub type C = B;\npub type D = Vec<D>;\n\
         pub fn f(a: A, b: B, d: D) { a.m(); b.m(); d.m(); }"
            .to_owned(),
        format!(
            "macro_rules! id {{ ($($t:tt)*) => {{ $($t)* }}; }}\nid! {{ {} }}",
            (0..3000).map(|i| format!("fn m{i}() {{}} ")).collect::<String>()
        ),
        String::new(),
    ];
    for src in &cases {
        let _ = check(src);
    }
}

#[test]
fn truncated_files_never_panic_and_report_a_parse_error() {
    let text = include_str!("../../fixtures/demo/src/model.rs");
    let cuts: Vec<usize> = (1..text.len())
        .step_by(97)
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    let mut errors = 0;
    for cut in cuts {
        let out = check(&text[..cut]);
        errors += usize::from(out.contains("parse-error"));
    }
    assert!(
        errors > 0,
        "truncating a real file must produce parse errors"
    );
}

#[test]
fn generic_struct_fields_take_the_receivers_arguments() {
    let src = with_prelude(
        "trait Backend { fn flush(&self); }\nstruct Cuda; struct Cpu;\n\
         impl Backend for Cuda { #[synchronizes] fn flush(&self) {} }\nimpl Backend for Cpu { fn flush(&self) {} }\n\
         struct Trainer<B: Backend> { backend: B }\n\
         impl<B: Backend> Trainer<B> { #[no_sync] fn generic(&self) { self.backend.flush(); } }\n\
         #[no_sync] fn on_cpu(t: &Trainer<Cpu>) { t.backend.flush(); }\n\
         #[no_sync] fn on_cuda(t: &Trainer<Cuda>) { t.backend.flush(); }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 2, "{}", check(&src));
    assert!(
        f.iter().any(|l| l.contains("`generic`")) && f.iter().any(|l| l.contains("`on_cuda`")),
        "{}",
        check(&src)
    );
}

#[test]
fn statics_and_external_globs_are_typed() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::*;\nuse std::sync::atomic::*;\n\
               struct Loader; impl Loader { fn load(&self) {} fn synchronize(&self) {} }\n\
               static FLAG: AtomicBool = AtomicBool::new(false);\n\
               #[no_sync] fn a(s: &CudaStream) { FLAG.load(Ordering::Relaxed); s.synchronize(); }\n";
    let f = findings(src);
    assert_eq!(f.len(), 1, "{}", check(src));
    assert!(
        f[0].contains("sync-in-no-sync") && f[0].contains("CudaStream::synchronize"),
        "{}",
        check(src)
    );
}

#[test]
fn external_globs_come_after_local_globs_and_crate_names() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::*;\nuse inner::*;\n\
               mod inner { #[nosync::synchronizes] pub fn w() {} }\n\
               #[no_sync] fn r(s: u64) { w(); unsafe { cudarc::driver::result::stream::synchronize(s) }; }\n";
    let f = findings(src);
    assert_eq!(f.len(), 2, "{}", check(src));
}

#[test]
fn if_let_bindings_do_not_escape() {
    let src = with_prelude(
        "struct Idx; impl Idx { fn index(&self) -> usize { 0 } }\n\
         struct Other; impl Other { #[synchronizes] fn index(&self) -> usize { 0 } }\n\
         #[no_sync] fn a(m: &Idx, v: Vec<u8>) { if let Some(m) = v.first() { let _ = m; } m.index(); }\n",
    );
    assert!(findings(&src).is_empty(), "{}", check(&src));
}

#[test]
fn provided_methods_are_specialised_to_the_receiver() {
    let src = with_prelude(
        "trait Op { fn f(&self); fn map(&self) { self.f() } }\nstruct Fast; struct Slow;\n\
         impl Op for Fast { fn f(&self) {} }\nimpl Op for Slow { #[synchronizes] fn f(&self) {} }\n\
         #[no_sync] fn fast() { Fast.map(); }\n#[no_sync] fn slow() { Slow.map(); }\n",
    );
    let f = findings(&src);
    assert!(f.len() == 1 && f[0].contains("`slow`"), "{}", check(&src));
    assert!(
        check(&src).contains("<t::Slow as t::Op>::map"),
        "{}",
        check(&src)
    );
}

#[test]
fn nested_fns_shadow_module_fns() {
    let src = with_prelude(
        "#[synchronizes] fn helper() {}\n\
         #[no_sync] fn a() { fn helper() {} helper(); }\n#[no_sync] fn b() { helper(); }\n",
    );
    let f = findings(&src);
    assert!(f.len() == 1 && f[0].contains("`b`"), "{}", check(&src));
}

#[test]
fn a_file_included_by_two_targets_is_one_file_and_reports_once() {
    let model = "use nosync::no_sync;\nuse cudarc::driver::CudaStream;\n\
                 #[no_sync] pub fn step(s: &CudaStream) { s.synchronize(); }\n";
    let out = check_tree(
        &[
            (
                "examples/e/main.rs",
                "mod model;\nmod broken;\nfn main() {}\n",
            ),
            ("examples/e/model.rs", model),
            ("examples/e/broken.rs", "fn f( {\n"),
            (
                "benches/b.rs",
                "#[path = \"../examples/e/model.rs\"]\nmod model;\n\
                 #[path = \"./../examples/e/broken.rs\"]\nmod broken;\nfn main() {}\n",
            ),
        ],
        &[("e", "examples/e/main.rs"), ("b", "benches/b.rs")],
    );
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("examples/e/broken.rs:1:") && lines[0].contains("parse-error"),
        "{out}"
    );
    assert!(
        lines[1].starts_with("examples/e/model.rs:3:") && lines[1].contains("sync-in-no-sync"),
        "{out}"
    );
    // The kept copy is the first crate's (the one the file's diagnostics belong to).
    assert!(out.contains("via 3:44 e::model::step (exact)"), "{out}");
}

#[test]
fn drop_hops_name_what_is_dropped() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\nstruct G; impl Drop for G { fn drop(&mut self) { w(); } }\n\
         struct S; impl Drop for S { #[synchronizes] fn drop(&mut self) {} }\n\
         #[no_sync] fn a() { let _timer = G; }\n#[no_sync] fn c() { let _ = G; }\n\
         #[no_sync] fn d() { let s = S; }\n",
    );
    let out = check(&src);
    for label in [
        "7:37 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `w`\n  \
         = `_timer` is dropped here, and its `Drop` reaches `t::w`, which blocks the host\n",
        "8:21 sync-in-no-sync: `c` is #[no_sync] but reaches a host-blocking call: `w`\n  \
         = the value is dropped here, and its `Drop` reaches `t::w`, which blocks the host\n",
        "= `s` is dropped here, and its `Drop` (`<t::S as Drop>::drop`) blocks the host\n",
    ] {
        assert!(out.contains(label), "{out}");
    }
    assert!(!out.contains("this call reaches"), "{out}");
}

#[test]
fn mem_drop_drops_its_argument_there() {
    let defs = "#[synchronizes] fn w() {}\nstruct G; impl Drop for G { fn drop(&mut self) { w(); } }\n\
                struct P;\n";
    // Each body is the only root; the call graph has G::drop -> w plus the root's edges.
    let cases = [
        // (body of the root, label expected (None: no finding), edges in the graph)
        (
            "let g = G; drop(g); let _p = P;",
            Some("`g` is dropped here"),
            2,
        ),
        (
            "let g = G; std::mem::drop(g);",
            Some("`g` is dropped here"),
            2,
        ),
        (
            "let g = G; core::mem::drop(g);",
            Some("`g` is dropped here"),
            2,
        ),
        ("let g = G; mem::drop(g);", Some("`g` is dropped here"), 2),
        ("drop(G);", Some("the value is dropped here"), 2),
        // A borrow is not a move: `g` is still dropped at the closing brace.
        ("let g = G; drop(&g);", Some("`g` is dropped here"), 2),
        ("let p = P; drop(p);", None, 1),
        (
            "let g = &G; let _ = g; let _ = &G;",
            Some("`g` is dropped here"),
            2,
        ),
    ];
    for (body, label, edges) in cases {
        let src = with_prelude(&format!(
            "use std::mem;\n{defs}#[no_sync] fn r() {{ {body} }}\n"
        ));
        let out = check(&src);
        assert!(
            !out.contains("`drop`"),
            "{body}: drop is not unresolved\n{out}"
        );
        assert!(
            out.contains(&format!("  stats: {edges} edges, 0 unresolved")),
            "{body}\n{out}"
        );
        match label {
            Some(l) => assert!(
                findings(&src).len() == 1
                    && out.contains(&format!("= {l}, and its `Drop` reaches `t::w`")),
                "{body}\n{out}"
            ),
            None => assert!(findings(&src).is_empty(), "{body}\n{out}"),
        }
    }
    // Where it is dropped: at `drop(g)`, not at the closing brace.
    let src = with_prelude(&format!(
        "{defs}#[no_sync] fn r() {{ let g = G; drop(g); }}\n"
    ));
    assert!(
        check(&src).contains("7:32 sync-in-no-sync"),
        "{}",
        check(&src)
    );
}

#[test]
fn config_levels_are_carried_from_the_config_stage_whatever_the_file_is_called() {
    let dir = std::env::temp_dir().join(format!("nosync-lint-unit-levels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("lint.conf");
    std::fs::write(
        &conf,
        "roots = []\nlevels = { \"sync-in-no-sync\" = \"warn\" }\n",
    )
    .unwrap();
    let (mut cfg, mut sources, mut diags) = (
        Config::default(),
        SourceMap::new(Path::new(ROOT)),
        Vec::new(),
    );
    crate::config::load_file(&conf, &mut cfg, &mut sources, &mut diags).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(diags.is_empty(), "{diags:?}");
    let src = with_prelude("#[no_sync] fn r(s: &CudaStream) { s.synchronize(); }\n");
    let a = analyze_src(&src, &cfg, sources);
    let [(code, level, at)] = &a.config_levels[..] else {
        panic!("{:?}", a.config_levels)
    };
    assert_eq!(
        (
            code.as_str(),
            level.as_str(),
            at.line_start,
            at.column_start
        ),
        ("sync-in-no-sync", "warn", 2, 12)
    );
    let args = crate::cli_output::OutputArgs::default();
    let (out, _) = crate::cli_output::finish(&args, &a, &mut Vec::new()).unwrap();
    let levels: Vec<_> = out.iter().map(|d| (d.code, d.level)).collect();
    assert_eq!(
        levels,
        [(
            crate::diagnostics::Code::SyncInNoSync,
            crate::diagnostics::Level::Warn
        )]
    );
}

#[test]
fn json_targets_come_from_the_workspace_stage_metadata() {
    let src = with_prelude("#[no_sync] fn r(s: &CudaStream) { s.synchronize(); }\n");
    let mut a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let metadata = serde_json::json!({
        "packages": [{
            "name": "t", "version": "0.1.0", "id": "t", "source": null, "dependencies": [],
            "license": null, "license_file": null, "description": null, "features": {},
            "manifest_path": "/mem/t/Cargo.toml", "edition": "2018",
            "targets": [{
                "name": "t", "kind": ["lib"], "crate_types": ["lib"], "src_path": "/mem/t/src/lib.rs",
                "edition": "2018", "doctest": false, "test": true, "doc": true
            }]
        }],
        "workspace_members": ["t"], "resolve": null, "workspace_root": "/mem/t",
        "target_directory": "/mem/t/target", "version": 1
    });
    a.metadata = Some(serde_json::from_value(metadata).unwrap());
    let style = crate::cli_output::Style::Json {
        ansi: false,
        short: false,
    };
    let mut out = Vec::new();
    crate::cli_output::write_machine(style, &a.diagnostics, &a, None, &mut out).unwrap();
    let first: serde_json::Value =
        serde_json::from_slice(out.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(first["target"]["edition"], "2018", "{first}");
    assert_eq!(first["target"]["doctest"], false, "{first}");
}

/// B9: a mesh of modules that glob each other (and a crate that does not exist) made
/// every failed lookup re-search the mesh with a fresh visited set at each level:
/// exponential (12 modules: minutes). Each member search is now done once per query.
#[test]
fn glob_meshes_resolve_in_linear_time() {
    let k = 12;
    let mut src = String::from("use nosync::{no_sync, synchronizes};\n");
    for i in 0..k {
        let (a, b) = ((i + 1) % k, (i + 2) % k);
        src.push_str(&format!(
            "pub mod m{i} {{ pub use super::*; pub use crate::m{a}::*; pub use m{b}::*; use nowhere{i}::*; }}\n"
        ));
    }
    src.push_str(&format!(
        "pub mod m{k} {{ #[synchronizes] pub fn deep_sink() {{}} }}\npub use m{k}::*;\n"
    ));
    src.push_str("#[no_sync] pub fn r() { m5::deep_sink(); missing(); ");
    for i in 0..24 {
        // Each distinct unresolvable multi-segment path searched the whole mesh anew.
        src.push_str(&format!("Missing{i}::f(); m{}::missing{i}(); ", i % k));
    }
    src.push_str("}\n");
    let out = check(&src);
    let findings: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("sync-in-no-sync"))
        .collect();
    assert_eq!(findings.len(), 1, "{out}");
    assert!(findings[0].contains("`deep_sink`"), "{out}");
}

/// B8: configured paths went to syn unchecked; 20 000 levels of `&` or `Vec<`
/// overflowed the stack. They are now located `config-error`s.
#[test]
fn deeply_nested_configured_paths_are_config_errors() {
    let n = 20_000;
    let roots = [
        format!("<{}t::Dev as X>::m", "&".repeat(n)),
        // Short, but still deeper than any real path.
        format!("t::Dev::<{}u8{}>::m", "Vec<".repeat(100), ">".repeat(100)),
        format!("t::{}m", "a::".repeat(n)),
    ];
    let text = format!("roots = {roots:?}\n");
    let root = PathBuf::from(ROOT);
    let mut sources = SourceMap::new(&root);
    let id = sources.add(root.join("nosync.toml"), text.clone());
    let mut cfg = Config::default();
    let value: toml::Table = toml::from_str(&text).unwrap();
    let mut diags = Vec::new();
    cfg.add_table(
        &serde_json::to_value(value).unwrap(),
        id,
        &sources,
        &mut diags,
    );
    assert!(diags.is_empty());
    let a = analyze_src("pub struct Dev;\n", &cfg, sources);
    let errors: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.code == crate::diagnostics::Code::ConfigError)
        .collect();
    let tails: Vec<&str> = errors
        .iter()
        .map(|d| &d.message[d.message.len().saturating_sub(60)..])
        .collect();
    assert_eq!(errors.len(), 3, "{tails:?}");
    assert!(
        errors
            .iter()
            .all(|d| d.primary.file.ends_with("nosync.toml"))
    );
    assert!(tails[0].contains("too long"), "{tails:?}");
    assert!(tails[1].contains("too deeply nested"), "{tails:?}");
    assert!(tails[2].contains("too long"), "{tails:?}");
}

/// B7: roots calling roots in a line reported every (root, sink) pair, n² / 2 hops in
/// all (10 000 roots exhausted memory). A chain now stops at another root: the sink is
/// reported once, at the innermost root, and an outer root still reports what it
/// reaches without going through another root.
#[test]
fn nested_roots_report_at_the_inner_root_only() {
    let mut src = with_prelude("#[synchronizes] fn sink() {}\n#[synchronizes] fn other() {}\n");
    let n = 50;
    for i in 0..n - 1 {
        src.push_str(&format!("#[no_sync] fn f{i}() {{ f{}(); }}\n", i + 1));
    }
    src.push_str(&format!("#[no_sync] fn f{}() {{ sink(); }}\n", n - 1));
    src.push_str("fn plain() { other(); f3(); }\n#[no_sync] fn outer() { f0(); plain(); }\n");
    let out = check(&src);
    let findings: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("sync-in-no-sync"))
        .collect();
    assert_eq!(findings.len(), 2, "{out}");
    assert!(
        findings
            .iter()
            .any(|l| l.contains(&format!("`f{}` is", n - 1)) && l.contains("`sink`")),
        "{out}"
    );
    assert!(
        findings
            .iter()
            .any(|l| l.contains("`outer` is") && l.contains("`other`")),
        "{out}"
    );
}

/// B6: locals are indexed by name (a scan of every local per lookup was quadratic);
/// shadowing still follows scopes: an inner `let` hides the outer binding until its
/// block ends, a match arm's binding lives in that arm only.
#[test]
fn indexed_locals_follow_shadowing() {
    let out = check(&with_prelude(
        "#[synchronizes] fn wait() {}\n\
         struct A; impl A { fn go(&self) { wait(); } }\n\
         struct B; impl B { fn go(&self) {} }\n\
         #[no_sync] fn r(x: A, o: Option<B>) {\n\
         { let x = B; x.go(); let x = B; x.go(); }\n\
         match o { Some(x) => x.go(), None => {} }\n\
         x.go();\n\
         }\n",
    ));
    let findings: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("sync-in-no-sync"))
        .collect();
    assert_eq!(findings.len(), 1, "{out}");
    assert!(findings[0].starts_with("10:"), "{out}");
}

/// B10: a path that matches nothing, listed many times, is one `config-error` (with a
/// note saying how many times), not one per copy (each rendering the whole line).
#[test]
fn repeated_unmatched_config_paths_are_one_error() {
    let text = format!(
        "sinks = [{}]\nroots = [\"t::nope\"]\n",
        vec!["\"t::nope\""; 2000].join(", ")
    );
    let root = PathBuf::from(ROOT);
    let mut sources = SourceMap::new(&root);
    let id = sources.add(root.join("nosync.toml"), text.clone());
    let mut cfg = Config::default();
    let value: toml::Table = toml::from_str(&text).unwrap();
    let mut diags = Vec::new();
    cfg.add_table(
        &serde_json::to_value(value).unwrap(),
        id,
        &sources,
        &mut diags,
    );
    let a = analyze_src("pub struct Dev;\n", &cfg, sources);
    let errors: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.code == crate::diagnostics::Code::ConfigError)
        .collect();
    // One for the 2 000 sinks, one for the root (another list: its own error).
    assert_eq!(errors.len(), 2, "{errors:?}");
    let noted: Vec<_> = errors.iter().flat_map(|d| &d.notes).collect();
    assert_eq!(noted.len(), 1, "{noted:?}");
    assert!(noted[0].message.contains("listed 2000 times"), "{noted:?}");
}
