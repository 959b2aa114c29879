use super::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn file(module: &str, src: &str) -> File {
    let module = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    read(module, &syn::parse_str(src).expect("test source parses"))
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_runtime_s_layers_are_one_way_and_its_files_form_no_circle() {
    let g = graph(&repo()).expect("the runtime's sources parse");
    assert!(
        g.rooms.contains_key("guard") && g.rooms.contains_key("hook::interpose"),
        "{g:?}"
    );
    assert_eq!(violations(&g), Vec::<String>::new(), "\n{}", render(&g));
}

/// ARCHITECTURE.md shows the runtime's graph as this command prints it.
#[test]
fn architecture_md_shows_the_runtime_s_graph_as_it_is() {
    let g = graph(&repo()).expect("the runtime's sources parse");
    let doc = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let shown = doc
        .split_once("the runtime's rooms as it prints them:\n\n```\n")
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .map_or("", |(block, _)| block);
    assert_eq!(
        shown,
        render(&g),
        "paste the runtime's part of `cargo run -p xtask -- modgraph` into ARCHITECTURE.md"
    );
}

/// The guard naming the hook, and a room nobody placed, fail the check.
#[test]
fn a_use_against_the_layers_is_a_violation() {
    let mut g = Graph::default();
    g.rooms.insert("guard".into(), set(&["hook::cupti"]));
    g.rooms.insert("hook::cupti".into(), set(&["guard"]));
    g.rooms.insert("newroom".into(), BTreeSet::new());
    assert_eq!(
        violations(&g),
        [
            "runtime: `guard` uses `hook::cupti`, a later layer",
            "runtime: `newroom` has no layer: add it to xtask/src/runtime_graph.rs LAYERS",
        ]
    );
}

#[test]
fn a_circle_of_files_is_a_violation() {
    let mut g = Graph::default();
    g.files.insert("a".into(), set(&["b"]));
    g.files.insert("b".into(), set(&["c"]));
    g.files.insert("c".into(), set(&["a", "d"]));
    g.files.insert("d".into(), BTreeSet::new());
    g.files.insert("e".into(), set(&["a"]));
    assert_eq!(
        violations(&g),
        ["runtime: a circle of files: a -> b -> c -> a"]
    );
}

/// A circle inside one room fails as one across rooms does.
#[test]
fn a_circle_inside_one_room_is_a_violation_too() {
    let mut g = Graph::default();
    g.files
        .insert("hook::interpose::a".into(), set(&["hook::interpose::b"]));
    g.files
        .insert("hook::interpose::b".into(), set(&["hook::interpose::a"]));
    assert_eq!(
        violations(&g),
        [
            "runtime: a circle of files: hook::interpose::a -> hook::interpose::b -> hook::interpose::a"
        ]
    );
}

/// Paths are followed to the file that defines the item: through `super::`, a child module,
/// a `use` alias, and the re-exports of the crate root and of a `mod.rs`.
#[test]
fn paths_are_resolved_to_the_defining_file() {
    let files = [
        file(
            "",
            "mod guard; mod hook; pub use guard::site::Site; type Wired = hook::O;",
        ),
        file("guard", "pub(crate) mod site; pub(crate) mod scope;"),
        file("guard::site", "pub struct Site;"),
        file(
            "guard::scope",
            "use crate::Site; fn f(_: Site) { let _ = crate::Wired::new(); }",
        ),
        file(
            "hook",
            "mod table; mod calls; pub use table::Row; use calls::g; pub fn say() {}",
        ),
        file("hook::table", "pub struct Row;"),
        file(
            "hook::calls",
            "use super::Row; fn f(_: Row) { super::say(); format!(\"{}\", crate::guard::site::Site); }",
        ),
    ];
    let g = link(&files);
    assert_eq!(g.files["guard::scope"], set(&["guard::site"]));
    assert_eq!(
        g.files["hook::calls"],
        set(&["guard::site", "hook", "hook::table"])
    );
    assert_eq!(
        g.files["hook"],
        BTreeSet::new(),
        "a `mod` line or a re-export is no use"
    );
    assert_eq!(g.rooms["hook"], set(&["guard"]));
}

/// A visibility inside a macro names where an item is seen, not what it uses: only the call
/// counts.
#[test]
fn a_visibility_in_a_macro_is_no_use() {
    let files = [
        file("hook", "mod interpose; pub fn f() {}"),
        file("hook::interpose", "mod wrappers; pub(super) fn around() {}"),
        file(
            "hook::interpose::wrappers",
            "m! { pub(in crate::hook) static E: u8 = 0; fn g() { crate::hook::interpose::around() } }",
        ),
    ];
    let g = link(&files);
    assert_eq!(
        g.files["hook::interpose::wrappers"],
        set(&["hook::interpose"])
    );
}
