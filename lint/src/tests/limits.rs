//! Bounded work on hostile input: broken files, and one regression test per robustness bug.

use super::*;

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
        // A panic would be caught by the nets and reported: none may be.
        let out = check(src);
        assert!(!out.contains("internal-error"), "{src:.80}\n{out}");
    }
}

#[test]
fn truncated_files_never_panic_and_report_a_parse_error() {
    let text = include_str!("../../../fixtures/demo/src/model.rs");
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

/// Guards against exponential name lookup: a mesh of modules that glob each other (and a
/// crate that does not exist) made every failed lookup re-search the mesh with a fresh
/// visited set at each level (12 modules: minutes). Each member search is done once per query.
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
    insta::assert_snapshot!(chains(&src), @"
    16:25 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `deep_sink`
      = this call reaches `t::m12::deep_sink`, which blocks the host
      t::r -> t::m12::deep_sink (Blocks, exact, Deny)
      via 16:25 t::r (exact)
    ");
}

/// Guards against a stack overflow on configured paths: given to syn unchecked, 20 000
/// levels of `&` or `Vec<` overflowed the stack. They are located `config-error`s of the
/// config stage (which checks path syntax), and the analysis gets no entry for them.
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
    let (cfg, sources, diags) = config_from_toml(&text);
    assert!(cfg.roots.is_empty(), "{:?}", cfg.roots);
    let a = analyze_src("pub struct Dev;\n", &cfg, sources);
    assert!(
        a.diagnostics
            .iter()
            .all(|d| d.code != crate::diagnostics::Code::ConfigError)
    );
    let errors: Vec<_> = diags
        .iter()
        .filter(|d| d.code == crate::diagnostics::Code::ConfigError)
        .collect();
    let tails: Vec<&str> = errors
        .iter()
        .map(|d| &d.message[d.message.len().saturating_sub(60)..])
        .collect();
    assert_eq!((errors.len(), diags.len()), (3, 3), "{tails:?}");
    assert!(
        errors
            .iter()
            .all(|d| d.primary.file.ends_with("nosync.toml"))
    );
    assert!(tails[0].contains("too long"), "{tails:?}");
    assert!(tails[1].contains("too deeply nested"), "{tails:?}");
    assert!(tails[2].contains("too long"), "{tails:?}");
}

/// Guards against quadratic output: roots calling roots in a line reported every (root,
/// sink) pair, n² / 2 hops in all (10 000 roots exhausted memory). A chain stops at another root: the sink is
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
    insta::assert_snapshot!(chains(&src), @"
    55:23 sync-in-no-sync: `f49` is #[no_sync] but reaches a host-blocking call: `sink`
      = this call reaches `t::sink`, which blocks the host
      t::f49 -> t::sink (Blocks, exact, Deny)
      via 55:23 t::f49 (exact)
    57:31 sync-in-no-sync: `outer` is #[no_sync] but reaches a host-blocking call: `other`
      = this call reaches `t::other`, which blocks the host
      t::outer -> t::other (Blocks, exact, Deny)
      via 57:31 t::outer (exact)
      via 56:14 t::plain (exact)
    ");
}

/// Locals are indexed by name (guards against quadratic lookup: a scan of every local per lookup);
/// shadowing still follows scopes: an inner `let` hides the outer binding until its
/// block ends, a match arm's binding lives in that arm only.
#[test]
fn indexed_locals_follow_shadowing() {
    let out = chains(&with_prelude(
        "#[synchronizes] fn wait() {}\n\
         struct A; impl A { fn go(&self) { wait(); } }\n\
         struct B; impl B { fn go(&self) {} }\n\
         #[no_sync] fn r(x: A, o: Option<B>) {\n\
         { let x = B; x.go(); let x = B; x.go(); }\n\
         match o { Some(x) => x.go(), None => {} }\n\
         x.go();\n\
         }\n",
    ));
    insta::assert_snapshot!(out, @"
    10:3 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 10:3 t::r (exact)
      via 5:35 t::A::go (exact)
    ");
}

/// Guards against quadratic output on repeated config entries: a path that matches nothing,
/// listed many times, is one `config-error` (with a note saying how many times), not one
/// per copy (each rendering the whole line).
#[test]
fn repeated_unmatched_config_paths_are_one_error() {
    let text = format!(
        "sinks = [{}]\nroots = [\"t::nope\"]\n",
        vec!["\"t::nope\""; 2000].join(", ")
    );
    let (cfg, sources, _) = config_from_toml(&text);
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
