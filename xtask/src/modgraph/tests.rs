//! `modgraph`'s unit tests: the lint's layers as they stand, and the reading of paths,
//! `use` trees and macro tokens.

use super::*;

#[test]
fn the_lint_s_layers_are_one_way_and_its_core_does_no_io() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let g = graph(&root).expect("the lint's sources parse");
    assert!(
        g.uses.contains_key("parse") && g.uses.contains_key("engine"),
        "{g:?}"
    );
    assert_eq!(violations(&g), Vec::<String>::new(), "\n{}", render(&g));
}

/// ARCHITECTURE.md shows the graph as this command prints it: the picture stays true.
#[test]
fn architecture_md_shows_the_graph_as_it_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let g = graph(&root).expect("the lint's sources parse");
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let shown = doc
        .split_once("not what it prints now:\n\n```\n")
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .map_or("", |(block, _)| block);
    assert_eq!(
        shown,
        render(&g),
        "paste the output of `cargo run -p xtask -- modgraph` into ARCHITECTURE.md's graph"
    );
}

/// A stage's unit tests run the whole pipeline: they, and what they share, are no stage.
#[test]
fn unit_tests_are_left_out() {
    let m = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert!(left_out(&m("parse::tests::lazy")));
    assert!(left_out(&m("engine::tests")));
    assert!(left_out(&m("test_support::pipeline")));
    assert!(!left_out(&m("parse::lazy")));
    assert!(!left_out(&m("resolve::testsuite")));
}

#[test]
fn paths_name_top_level_modules() {
    let m = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
    let (core, ws, bin) = (&CRATES[0], &CRATES[1], &CRATES[2]);
    let here = m("resolve::macros::scope");
    assert_eq!(
        top_module(core, &here, &m("crate::parse::ir")),
        Some("parse".into())
    );
    assert_eq!(
        top_module(core, &here, &m("super::rules")),
        Some("resolve".into())
    );
    assert_eq!(
        top_module(core, &here, &m("super::super::super::source")),
        Some("source".into())
    );
    assert_eq!(
        top_module(core, &m("config"), &m("super::source::SpanIr")),
        Some("source".into())
    );
    assert_eq!(top_module(core, &here, &m("std::fs")), None);
    let cache = m("workspace::cache");
    assert_eq!(
        top_module(ws, &cache, &m("crate::disk::Disk")),
        Some("workspace".into())
    );
    assert_eq!(
        top_module(ws, &cache, &m("nosync_lint_core::paths::normalize")),
        Some("paths".into())
    );
    assert_eq!(
        top_module(bin, &m("engine"), &m("nosync_lint_workspace::load")),
        Some("workspace".into())
    );
    assert_eq!(module_path(ws, Path::new("lib.rs")), Some(m("workspace")));
    assert_eq!(
        module_path(ws, Path::new("offline/start.rs")),
        Some(m("workspace::offline::start"))
    );
    assert_eq!(module_path(bin, Path::new("lib.rs")), None);
}

#[test]
fn a_backward_use_and_io_in_the_core_are_violations() {
    let mut g = Graph::default();
    g.uses.insert("source".into(), ["parse".to_owned()].into());
    g.uses.insert("parse".into(), ["source".to_owned()].into());
    g.uses.insert("newstage".into(), BTreeSet::new());
    g.io.push((
        "parse".into(),
        "lint/core/src/parse/x.rs".into(),
        "std::fs::read".into(),
    ));
    g.io.push((
        "source".into(),
        "lint/core/src/source/loader.rs".into(),
        "std::fs::read".into(),
    ));
    assert_eq!(
        violations(&g),
        [
            "`newstage` has no layer: add it to xtask/src/modgraph.rs LAYERS",
            "`source` uses `parse`, a later stage",
            "`parse` does IO (`std::fs::read` in lint/core/src/parse/x.rs)",
        ]
    );
}

#[test]
fn macro_tokens_and_use_groups_are_read() {
    let file: syn::File = syn::parse_str(
        "use crate::{a::X, b::{self, Y}};\nfn f() { format!(\"{}\", crate::c::g()); let _ = std::fs::read(\"x\"); }\n#[cfg(test)] mod tests { fn t() { std::fs::read(\"y\"); } }",
    )
    .unwrap();
    let module = vec!["m".to_owned()];
    let mut v = Uses {
        krate: &CRATES[0],
        module: &module,
        found: BTreeSet::new(),
        io: Vec::new(),
        in_test: 0,
    };
    v.visit_file(&file);
    let found: Vec<&str> = v.found.iter().map(String::as_str).collect();
    assert_eq!(found, ["a", "b", "c"]);
    assert_eq!(v.io, ["std::fs::read"]);
}
