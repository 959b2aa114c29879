//! Whole-pipeline behaviour: targets sharing files, drop hops, config levels, metadata.

use super::*;

#[test]
fn a_file_included_by_two_targets_is_one_file_and_reports_once() {
    let model = "use nosync::no_sync;\nuse cudarc::driver::CudaStream;\n\
                 #[no_sync] pub fn step(s: &CudaStream) { s.synchronize(); }\n";
    let out = chains_tree(
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
        &[],
    );
    // One parse error and one finding, not one per crate; the kept copy is the first
    // crate's (the one the file's diagnostics belong to).
    insta::assert_snapshot!(out, @"
    examples/e/broken.rs:1:7 parse-error: syntax error: cannot parse string into token stream
    examples/e/model.rs:3:44 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      e::model::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 3:44 e::model::step (exact)
    ");
}

/// A supertrait bound naming a trait of a crate collected later: resolving it while
/// the first crate was collected indexed a crate list that did not hold it yet (a panic
/// on the cubecl workspace). Supertraits are resolved once every crate is known.
#[test]
fn a_supertrait_from_a_crate_collected_later_resolves() {
    let app = "use nosync::no_sync;\npub trait Step: base::Base {}\n\
               #[no_sync] pub fn run<T: Step>(t: &T) { t.wait(); }\n";
    let base = "pub trait Base {\n    #[nosync::synchronizes(reason = \"waits\")]\n    fn wait(&self);\n}\n";
    let out = check_tree_deps(
        &[("app/lib.rs", app), ("base/lib.rs", base)],
        &[("app", "app/lib.rs"), ("base", "base/lib.rs")],
        &[(0, 1)],
    );
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "app/lib.rs:3:43 sync-in-no-sync: `run` is #[no_sync] but reaches a host-blocking call: `Base::wait`"
        ],
        "{out}"
    );
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
    let conf = Path::new("/mem/conf/lint.conf");
    let files = MemLoader::new().with(
        conf,
        "roots = []\nlevels = { \"sync-in-no-sync\" = \"warn\" }\n",
    );
    let (mut cfg, mut sources, mut diags) = (
        Config::default(),
        SourceMap::new(Path::new(ROOT)),
        Vec::new(),
    );
    crate::config::load_file(conf, &mut cfg, &files, &mut sources, &mut diags).unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    let src = with_prelude("#[no_sync] fn r(s: &CudaStream) { s.synchronize(); }\n");
    let mut a = analyze_src(&src, &cfg, sources);
    let [(code, level, at)] = &a.config_levels[..] else {
        panic!("{:?}", a.config_levels)
    };
    assert_eq!(
        (code.to_string(), *level, at.line_start, at.column_start),
        (
            "sync-in-no-sync".to_owned(),
            crate::diagnostics::Level::Warn,
            2,
            12
        )
    );
    let out = crate::cli::finish(&Default::default(), &mut a, &mut Vec::new()).unwrap();
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
    let workspace = crate::report::Context {
        manifest_path: Path::new("/mem/t/Cargo.toml"),
        metadata: a.metadata.as_ref(),
        srcroot: None,
    };
    let report = crate::report::Report::new(&a.diagnostics, &a.sources, &workspace);
    let format = crate::render::Format::Json {
        ansi: false,
        short: false,
    };
    let mut out = Vec::new();
    crate::render::render(format, &report, &mut out).unwrap();
    let first: serde_json::Value =
        serde_json::from_slice(out.split(|&b| b == b'\n').next().unwrap()).unwrap();
    assert_eq!(first["target"]["edition"], "2018", "{first}");
    assert_eq!(first["target"]["doctest"], false, "{first}");
}

/// A module file that is not UTF-8 is reported at the `mod` item that names it (as
/// rustc does), not at 1:1 of a file with no text.
#[test]
fn an_unreadable_module_file_is_reported_at_its_mod_item() {
    let dir = PathBuf::from("/mem/utf8");
    let files = MemLoader::new()
        .with(dir.join("lib.rs"), "pub mod fine {}\nmod bad;\n")
        .with(dir.join("bad.rs"), &b"fn f() {}\n\xff\xfe\n"[..]);
    let a = analyze_crates(
        dir.clone(),
        vec![spec("t", dir.join("lib.rs"))],
        &Config::default(),
        &files,
        SourceMap::new(&dir),
    );
    let out = render(&a, true);
    assert_eq!(
        out,
        "lib.rs:2:1 parse-error: cannot read `bad.rs`: stream did not contain valid UTF-8\n  = the module's file is declared here\n  stats: 0 edges, 0 unresolved\n"
    );
}

/// The core reads only through its loader: the lint's own `src/engine/mod.rs` is on the disk,
/// but `mod engine;` names it only once the loader has it.
#[test]
fn the_core_reads_files_only_through_its_loader() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let lib = root.join("src/lib.rs");
    let analyse = |files: &MemLoader| {
        let crates = vec![spec("t", lib.clone())];
        let a = analyze_crates(
            root.clone(),
            crates,
            &Config::default(),
            files,
            SourceMap::new(&root),
        );
        render(&a, true)
    };
    let files = MemLoader::new().with(&lib, "mod engine;\n");
    assert_eq!(
        analyse(&files),
        "src/lib.rs:1:1 missing-module: file not found for module `engine`\n  = declared here\n  stats: 0 edges, 0 unresolved\n"
    );
    let files = files.with(root.join("src/engine/mod.rs"), "");
    assert_eq!(analyse(&files), "  stats: 0 edges, 0 unresolved\n");
}
