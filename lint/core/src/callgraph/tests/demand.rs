//! Demand-driven walking: the call graph walks only the bodies the search from the roots
//! reads, and reports what walking every fn reports ([`both_walks`], which every
//! analysis of [`check`] and its siblings goes through, asserts that).

use crate::config::Config;
use crate::test_support::*;

/// The analysis of `src` walking from the roots only (`both_walks` returns the other).
fn demand(src: &str) -> Analysis {
    let fx = Fixture::src(src);
    let config = Config::default();
    analyze_crates_with(fx.input(&config), Options::default(), &fx.files)
}

/// (fns walked, fns, specialised nodes walked, edges, unresolved calls).
fn walked(a: &Analysis) -> (usize, usize, usize, usize, usize) {
    let s = &a.stats;
    let edges = s.edges_exact + s.edges_inferred + s.edges_name_only;
    (
        s.fns_walked,
        s.fns,
        s.specialised_walked,
        edges,
        s.unresolved,
    )
}

/// Only the root and what it reaches are walked: not an `#[allow_sync]` fn it calls, nor
/// what only that fn calls, nor a fn no root reaches.
#[test]
fn only_the_fns_a_root_reaches_are_walked() {
    let src = with_prelude(
        "#[no_sync] pub fn step(s: &CudaStream) { helper(s); quiet(s); }\n\
         fn helper(s: &CudaStream) { s.synchronize(); }\n\
         #[nosync::allow_sync(reason = \"warm-up\")] fn quiet(s: &CudaStream) { s.synchronize(); cold(); }\n\
         fn cold() { far(); }\n\
         fn far() {}\n\
         pub fn unused(s: &CudaStream) { s.synchronize(); far(); }\n",
    );
    let a = demand(&src);
    // step, helper (quiet, cold, far, unused are not walked; the built-in sink has no body).
    assert_eq!(walked(&a), (2, 6, 0, 3, 0));
    assert_eq!(
        chains(&src),
        "4:42 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`\n  = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host\n  t::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)\n  via 4:42 t::step (exact)\n  via 5:31 t::helper (exact)\n"
    );
}

/// A name-only edge is followed too (the search's second pass): its callee is walked and
/// so is what that callee calls, and a reached sink is walked for its unresolved calls,
/// but not beyond.
#[test]
fn name_only_callees_and_the_unresolved_calls_of_sinks_are_walked() {
    let src = with_prelude(
        "pub struct Dev;\n\
         impl Dev { pub fn flush(&self) { inner(); } }\n\
         fn inner() { wait(); }\n\
         #[synchronizes] fn wait() { mystery(); beyond(); }\n\
         fn beyond() { deeper(); }\n\
         fn deeper() {}\n\
         #[no_sync] pub fn step(d: &Unknown) { d.flush(); }\n",
    );
    let a = demand(&src);
    // step, Dev::flush, inner, wait (not beyond, deeper).
    assert_eq!(walked(&a), (4, 6, 0, 4, 1));
    assert_eq!(
        check(&src),
        "7:29 unresolved-call-in-no-sync: `step` is #[no_sync] but reaches a call the lint cannot follow: cannot resolve `mystery`\n  = not followed by the static analysis\n10:41 possible-sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 10:41 t::step (name-only)\n  via 5:34 t::Dev::flush (exact)\n  via 6:14 t::inner (exact)\n  stats: 5 edges, 1 unresolved\n"
    );
}

/// A body no root reaches is not walked: a panic there cannot happen (with every fn
/// walked it is an `internal-error`, see `panics.rs`).
#[test]
fn a_body_no_root_reaches_is_not_walked() {
    let src = with_prelude(
        "#[no_sync] pub fn step(s: &CudaStream) { s.synchronize(); }\n\
         pub fn nosync_lint_test_panic_in_walk() {}\n",
    );
    let a = demand(&src);
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["sync-in-no-sync"]);
    assert_eq!(walked(&a), (1, 2, 0, 1, 0));
}

/// Specialised nodes are created in the order the walk reaches their calls, which is not
/// the order of walking every fn (here `early`, declared first, asks for `Q::run` with
/// `A` before the root asks for `P::run` and `Q::run` with `A`). The edges of one call
/// site are ordered by what their callees are, not by when their node was created, so
/// that the shortest chain kept among equals (through `P::run`) is the same either way.
#[test]
fn the_order_of_specialised_nodes_changes_no_chain() {
    let src = with_prelude(
        "pub trait Op { fn wait(&self); }\n\
         pub struct A;\n\
         impl Op for A { #[synchronizes] fn wait(&self) {} }\n\
         pub struct P;\n\
         impl P { pub fn run(&self, o: &dyn Op) { o.wait(); } }\n\
         pub struct Q;\n\
         impl Q { pub fn run(&self, o: &dyn Op) { o.wait(); } }\n\
         pub fn early(q: &Q) { q.run(&A); }\n\
         #[no_sync] pub fn step(x: &Unknown) { x.run(&A); }\n",
    );
    assert_eq!(walked(&demand(&src)), (2, 6, 2, 4, 0));
    assert_eq!(
        chains(&src),
        "12:41 possible-sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `A::wait`\n  = this call reaches `<t::A as t::Op>::wait`, which blocks the host\n  t::step -> <t::A as t::Op>::wait (Blocks, name-only, Warn)\n  via 12:41 t::step (name-only)\n  via 8:44 t::P::run (exact)\n"
    );
}
