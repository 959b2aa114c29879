//! Bounded output on hostile input: roots calling roots.

use crate::test_support::*;

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
