//! Bounded work on hostile input: locals looked up by name, scopes still followed.

use crate::test_support::*;

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
