//! `macro_rules!` in item, impl and trait position: the items generated are items of the
//! def map, callable, usable as roots, with their spans at the invocation.

use crate::config::Config;
use crate::source::SourceMap;
use crate::test_support::*;
use std::path::Path;

/// candle's shape: ops generated inside `impl Tensor { .. }` by a macro, called as
/// methods and as associated fns; a generated op that does not wait is clean.
#[test]
fn impl_position_ops_are_methods() {
    let src = with_prelude(
        "pub struct Tensor;\n\
         impl Tensor { #[synchronizes] fn to_vec(&self) -> u32 { 0 } fn shape(&self) {} }\n\
         macro_rules! unary_op { ($n:ident, $op:ident) => { pub fn $n(&self) -> Tensor { self.to_vec(); Tensor } }; }\n\
         macro_rules! lazy_op { ($n:ident) => { pub fn $n(&self) -> Tensor { self.shape(); Tensor } }; }\n\
         impl Tensor {\n    unary_op!(exp, Exp);\n    unary_op!(relu, Relu);\n    lazy_op!(t);\n}\n\
         #[no_sync] fn hot(t: &Tensor) { t.exp(); }\n\
         #[no_sync] fn assoc(t: &Tensor) -> Tensor { Tensor::relu(t) }\n\
         #[no_sync] fn clean(t: &Tensor) -> Tensor { t.t().t() }\n",
    );
    assert_eq!(
        check(&src),
        "13:35 sync-in-no-sync: `hot` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec`\n  = this call reaches `t::Tensor::to_vec`, which blocks the host\n  via 13:35 t::hot (exact)\n  via 9:5 t::Tensor::exp (exact)\n14:45 sync-in-no-sync: `assoc` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec`\n  = this call reaches `t::Tensor::to_vec`, which blocks the host\n  via 14:45 t::assoc (exact)\n  via 10:5 t::Tensor::relu (exact)\n  stats: 7 edges, 0 unresolved\n"
    );
}

/// Repetitions nested in the matcher and the transcriber: one impl per type, one method
/// per inner name; only the method that waits reaches the sink.
#[test]
fn nested_repetitions_generate_each_method() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\nfn idle() {}\n\
         macro_rules! methods { ($($ty:ident { $($m:ident => $f:ident),* });* $(;)?) => {\n\
         $( pub struct $ty; impl $ty { $( pub fn $m(&self) { $f() } )* } )* }; }\n\
         methods! { A { go => idle, sync => wait }; B { flush => wait } }\n\
         #[no_sync] fn a(x: &A) { x.go(); x.sync(); }\n\
         #[no_sync] fn b(y: &B) { y.flush(); }\n\
         #[no_sync] fn c(x: &A) { x.go(); }\n",
    );
    assert_eq!(
        check(&src),
        "9:36 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 9:36 t::a (exact)\n  via 8:1 t::A::sync (exact)\n10:28 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 10:28 t::b (exact)\n  via 8:1 t::B::flush (exact)\n  stats: 7 edges, 0 unresolved\n"
    );
}

/// A macro whose expansion invokes another macro, at module level and in an impl.
#[test]
fn a_macro_generating_a_macro_invocation() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\npub struct T;\n\
         macro_rules! leaf { ($n:ident) => { pub fn $n() { wait() } }; }\n\
         macro_rules! leaf_m { ($n:ident) => { pub fn $n(&self) { wait() } }; }\n\
         macro_rules! outer { ($($n:ident),*) => { $( leaf!($n); )* }; }\n\
         macro_rules! outer_m { ($n:ident) => { leaf_m!($n); }; }\n\
         outer!(one, two);\nimpl T { outer_m!(three); }\n\
         #[no_sync] fn a() { two(); }\n#[no_sync] fn b(t: &T) { t.three(); }\n",
    );
    assert_eq!(
        check(&src),
        "12:21 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 12:21 t::a (exact)\n  via 10:1 t::two (exact)\n13:28 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 13:28 t::b (exact)\n  via 11:10 t::T::three (exact)\n  stats: 5 edges, 0 unresolved\n"
    );
}

/// Self-invoking macros stop at the expansion depth and budget, in any position.
#[test]
fn recursive_macros_are_bounded() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\npub struct T;\n\
         macro_rules! again { () => { again!(); pub fn f() { wait() } }; }\n\
         macro_rules! again_m { () => { again_m!(); again_m!(); pub fn g(&self) { wait() } }; }\n\
         again!();\nimpl T { again_m!(); }\n\
         #[no_sync] fn a() { f(); }\n#[no_sync] fn b(t: &T) { t.g(); }\n",
    );
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    // `again!` nests 33 deep (the depth bound); `again_m!` doubles until the run's
    // 10 000 expansions are made, and the 24 invocations still pending fail.
    assert_eq!(
        (a.stats.macro_expansions, a.stats.macro_failures),
        (10_000, 24)
    );
    assert_eq!(
        render(&a, false),
        "10:21 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 10:21 t::a (exact)\n  via 8:1 t::f (exact)\n11:28 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 11:28 t::b (exact)\n  via 9:10 t::T::g (exact)\n  stats: 19968 edges, 0 unresolved\n"
    );
}

/// A config root may name a generated method; it is found and checked.
#[test]
fn a_config_root_names_a_generated_method() {
    let (cfg, _, diags) = config_from_toml("roots = [\"t::Tensor::exp\"]\n");
    assert!(diags.is_empty());
    let src = with_prelude(
        "pub struct Tensor;\nimpl Tensor { #[synchronizes] fn to_vec(&self) {} }\n\
         macro_rules! unary_op { ($n:ident) => { pub fn $n(&self) { self.to_vec() } }; }\n\
         impl Tensor { unary_op!(exp); }\n",
    );
    assert_eq!(
        check_with(&src, &cfg),
        "7:15 sync-in-no-sync: `exp` is a configured no-sync root but reaches a host-blocking call: `Tensor::to_vec`\n  = this call reaches `t::Tensor::to_vec`, which blocks the host\n  via 7:15 t::Tensor::exp (exact)\n  stats: 1 edges, 0 unresolved\n"
    );
}

/// Methods declared and provided by a macro in a trait body.
#[test]
fn trait_position_methods() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         macro_rules! provided { ($n:ident) => { fn $n(&self) { wait() } }; }\n\
         trait Op { provided!(run); }\nstruct K; impl Op for K {}\n\
         #[no_sync] fn a(k: &K) { k.run(); }\n",
    );
    assert_eq!(
        check(&src),
        "8:28 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 8:28 t::a (exact)\n  via 6:12 <t::K as t::Op>::run (exact)\n  stats: 3 edges, 0 unresolved\n"
    );
}

/// A `#[macro_export]` macro of another analysed crate, invoked by path in an impl: its
/// `$crate::` paths resolve in the crate that defines it.
#[test]
fn exported_macros_of_other_crates_and_dollar_crate() {
    let gpu = "#[nosync::synchronizes] pub fn wait() {}\n\
               #[macro_export] macro_rules! ops { ($($n:ident),*) => { $( pub fn $n(&self) { $crate::wait() } )* }; }\n\
               #[macro_export] macro_rules! free { ($n:ident) => { pub fn $n() { $crate::wait() } }; }\n";
    let app = "pub struct Dev;\nimpl Dev { gpu::ops!(sync_a, sync_b); }\nfree!(helper);\n\
               #[nosync::no_sync] fn a(d: &Dev) { d.sync_b(); }\n\
               #[nosync::no_sync] fn b() { helper(); }\n";
    let out = check_tree_deps(
        &[("gpu/src/lib.rs", gpu), ("app/src/lib.rs", app)],
        &[("gpu", "gpu/src/lib.rs"), ("app", "app/src/lib.rs")],
        &[(1, 0)],
    );
    assert_eq!(
        out,
        "app/src/lib.rs:4:38 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `gpu::wait`, which blocks the host\n  via 4:38 app::a (exact)\n  via 2:12 app::Dev::sync_b (exact)\napp/src/lib.rs:5:29 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `gpu::wait`, which blocks the host\n  via 5:29 app::b (exact)\n  via 3:1 app::helper (exact)\n  stats: 5 edges, 0 unresolved\n"
    );
}

/// A generated inherent method shadows generated trait impls' methods of the same name
/// (candle's `binary_op!(add, Add)` in `impl Tensor` next to `bin_trait!(Add, add)`):
/// `t.add(u)` and `Tensor::add(t, u)` call the inherent one, which does not wait;
/// `<Tensor as Add<f64>>::add` names the trait impl, which does.
#[test]
fn generated_inherent_methods_shadow_generated_trait_methods() {
    let src = with_prelude(
        "pub struct Tensor;\nimpl Tensor { #[synchronizes] fn affine(&self) -> Tensor { Tensor } }\n\
         macro_rules! binary_op { ($n:ident) => { pub fn $n(&self, rhs: &Tensor) -> Tensor { Tensor } }; }\n\
         macro_rules! bin_trait { ($tr:ident, $n:ident) => {\n\
         impl std::ops::$tr<f64> for Tensor { type Output = Tensor; fn $n(self, rhs: f64) -> Tensor { self.affine() } } }; }\n\
         impl Tensor { binary_op!(add); }\nbin_trait!(Add, add);\n\
         #[no_sync] fn m(t: &Tensor, u: &Tensor) -> Tensor { t.add(u) }\n\
         #[no_sync] fn p(t: &Tensor, u: &Tensor) -> Tensor { Tensor::add(t, u) }\n\
         #[no_sync] fn q(t: Tensor) -> Tensor { <Tensor as std::ops::Add<f64>>::add(t, 1.0) }\n",
    );
    assert_eq!(
        check(&src),
        "13:40 sync-in-no-sync: `q` is #[no_sync] but reaches a host-blocking call: `Tensor::affine`\n  = this call reaches `t::Tensor::affine`, which blocks the host\n  via 13:40 t::q (exact)\n  via 10:1 <t::Tensor as Add>::add (exact)\n  stats: 4 edges, 0 unresolved\n"
    );
}

/// Invocations among a fn body's statements that generate items: the items are the
/// body's, callable there (a macro defined at module level, or in the body before it);
/// an expression macro generates nothing and stays an expression.
#[test]
fn body_position_invocations_generate_local_items() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         macro_rules! reader { ($n:ident) => { fn $n() { wait() } }; }\n\
         macro_rules! twice { ($e:expr) => { $e; $e; }; }\n\
         #[no_sync] fn a() { reader!(read); read(); }\n\
         #[no_sync] fn b() {\n    macro_rules! local { () => { fn inner() { wait() } }; }\n    \
         if true { local!(); }\n    inner();\n}\n\
         #[no_sync] fn c() { twice!(1); }\n",
    );
    assert_eq!(
        check(&src),
        "7:36 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 7:36 t::a (exact)\n  via 7:21 t::read (exact)\n\
         11:5 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `wait`\n  = this call reaches `t::wait`, which blocks the host\n  via 11:5 t::b (exact)\n  via 10:15 t::inner (exact)\n  stats: 4 edges, 0 unresolved\n"
    );
}

/// In a fn body only the invocations that may generate items are expanded: of a macro
/// whose rules declare an item, or invoke one that does (`outer!`), or one named by a
/// metavariable (`call!(reader, three)`), or given tokens that invoke one
/// (`wrap! { reader!(..); }`); `bail!`, whose rules declare nothing, is not expanded (nor
/// counted). A statement macro's tokens are still walked as the call graph walks them
/// (`wrap!(wait())`).
#[test]
fn body_invocations_that_cannot_generate_items_are_not_expanded() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         macro_rules! reader { ($n:ident) => { fn $n() { wait() } }; }\n\
         macro_rules! outer { ($n:ident) => { reader!($n); }; }\n\
         macro_rules! wrap { ($($t:tt)*) => { $($t)* }; }\n\
         macro_rules! call { ($m:ident, $n:ident) => { $m!($n); }; }\n\
         macro_rules! bail { ($e:expr) => { return Err($e) }; }\n\
         #[no_sync] fn a() { outer!(one); one(); }\n\
         #[no_sync] fn b() { wrap! { reader!(two); } two(); }\n\
         #[no_sync] fn c() -> Result<(), u8> { bail!(1); wrap!(wait()); Ok(()) }\n\
         #[no_sync] fn d() { call!(reader, three); three(); }\n",
    );
    let found: Vec<String> = chains(&src)
        .lines()
        .filter(|l| l.contains("  via") || !l.starts_with("  "))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        found,
        [
            "10:34 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`",
            "  via 10:34 t::a (exact)",
            "  via 10:21 t::one (exact)",
            "11:45 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `wait`",
            "  via 11:45 t::b (exact)",
            "  via 11:21 t::two (exact)",
            "12:55 sync-in-no-sync: `c` is #[no_sync] but reaches a host-blocking call: `wait`",
            "  via 12:55 t::c (exact)",
            "13:43 sync-in-no-sync: `d` is #[no_sync] but reaches a host-blocking call: `wait`",
            "  via 13:43 t::d (exact)",
            "  via 13:21 t::three (exact)",
        ]
    );
    // outer! and the reader! it generates, wrap! and the reader! in its tokens, call! and
    // its reader!; not bail!, nor wrap!(wait()).
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    assert_eq!((a.stats.macro_expansions, a.stats.macro_failures), (6, 0));
}
