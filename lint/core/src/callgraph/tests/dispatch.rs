//! Calls through `dyn Trait` and trait bounds: narrowed to the impl of the concrete type
//! a caller passes (the callee specialised to it), every impl only when it is unknown.

use crate::config::Config;
use crate::source::SourceMap;
use crate::test_support::*;
use std::path::Path;

/// A trait with a clean impl (`Soft`) and a syncing one (`Quant`).
const OPS: &str = "use nosync::{no_sync, synchronizes};\nuse std::sync::Arc;\n\
    pub trait Op { fn fwd(&self) -> u32; }\n\
    pub struct Soft;\nimpl Op for Soft { fn fwd(&self) -> u32 { 1 } }\n\
    pub struct Quant;\nimpl Op for Quant { fn fwd(&self) -> u32 { wait() } }\n\
    #[synchronizes] fn wait() -> u32 { 0 }\n\
    pub struct T;\n\
    impl T {\n\
        pub fn by_dyn(&self, c: &dyn Op) -> u32 { storage(c) }\n\
        pub fn by_generic<C: Op>(&self, c: &C) -> u32 { self.by_dyn(c) }\n\
        pub fn by_impl(&self, c: impl Op) -> u32 { c.fwd() }\n\
        pub fn by_arc(&self, c: Arc<Box<dyn Op>>) -> u32 { storage(c.as_ref().as_ref()) }\n\
        pub fn by_value<C: Op + 'static>(&self, c: C) -> u32 { self.by_arc(Arc::new(Box::new(c))) }\n\
    }\n\
    fn storage(c: &dyn Op) -> u32 { c.fwd() }\n";

fn lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.contains("sync-in-no-sync"))
        .collect()
}

#[test]
fn a_concrete_argument_narrows_dispatch_to_its_impl_along_the_chain() {
    let mut found = String::new();
    for call in [
        "t.by_dyn(&Soft)",
        "t.by_generic(&Soft)",
        "t.by_impl(Soft)",
        "t.by_value(Soft)",
        "T::by_dyn(&t, &Soft)",
        "storage(&Soft)",
    ] {
        let clean = check(&format!(
            "{OPS}#[no_sync] pub fn r(t: &T) -> u32 {{ {call} }}\n"
        ));
        assert_eq!(lines(&clean), Vec::<&str>::new(), "{call}: {clean}");
        let call = call.replace("Soft", "Quant");
        let sync = chains(&format!(
            "{OPS}#[no_sync] pub fn r(t: &T) -> u32 {{ {call} }}\n"
        ));
        found += &format!("{call}:\n{sync}");
    }
    insta::assert_snapshot!(found, @"
    t.by_dyn(&Quant):
    18:39 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 18:39 t::r (exact)
      via 11:43 t::T::by_dyn (exact)
      via 17:35 t::storage (exact)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    t.by_generic(&Quant):
    18:39 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 18:39 t::r (exact)
      via 12:54 t::T::by_generic (exact)
      via 11:43 t::T::by_dyn (exact)
      via 17:35 t::storage (exact)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    t.by_impl(Quant):
    18:39 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 18:39 t::r (exact)
      via 13:46 t::T::by_impl (exact)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    t.by_value(Quant):
    18:39 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 18:39 t::r (exact)
      via 15:61 t::T::by_value (exact)
      via 14:52 t::T::by_arc (exact)
      via 17:35 t::storage (inferred)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    T::by_dyn(&t, &Quant):
    18:37 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 18:37 t::r (exact)
      via 11:43 t::T::by_dyn (exact)
      via 17:35 t::storage (exact)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    storage(&Quant):
    18:37 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, exact, Deny)
      via 18:37 t::r (exact)
      via 17:35 t::storage (exact)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    ");
}

#[test]
fn an_unknown_argument_dispatches_to_every_impl_and_the_hop_says_so() {
    let src = format!("{OPS}#[no_sync] pub fn r(t: &T, c: &dyn Op) -> u32 {{ t.by_dyn(c) }}\n");
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let d = a
        .diagnostics
        .iter()
        .find(|d| d.finding.is_some())
        .expect("a finding through the dispatch");
    let notes: Vec<&str> = d.notes.iter().map(|n| n.message.as_str()).collect();
    assert!(
        notes.iter().any(|n| n.contains(
            "dispatched through `t::Op` to one of its 2 impls: the concrete type is not known here"
        )),
        "{notes:#?}"
    );
}

#[test]
fn the_specialised_hop_names_the_concrete_type() {
    let src = format!("{OPS}#[no_sync] pub fn r(t: &T) -> u32 {{ t.by_generic(&Quant) }}\n");
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let d = a.diagnostics.iter().find(|d| d.finding.is_some()).unwrap();
    let notes: Vec<&str> = d.notes.iter().map(|n| n.message.as_str()).collect();
    for want in [
        "`t::r` calls `t::T::by_generic` (exact, specialised to `c: Quant`)",
        "`t::T::by_generic` calls `t::T::by_dyn` (exact, specialised to `c: Quant`)",
        "`t::storage` calls `<t::Quant as t::Op>::fwd` (exact)",
    ] {
        assert!(
            notes.iter().any(|n| n.starts_with(want)),
            "{want}\n{notes:#?}"
        );
    }
}

/// One specialisation per (fn, argument types), at most 16 per fn: a fn called with
/// more concrete types dispatches to every impl.
#[test]
fn specialisations_are_bounded_per_fn() {
    let mut src = String::from(OPS);
    let mut body = String::new();
    for i in 0..20 {
        src +=
            &format!("pub struct S{i};\nimpl Op for S{i} {{ fn fwd(&self) -> u32 {{ {i} }} }}\n");
        body += &format!("storage(&S{i}); ");
    }
    src += &format!("#[no_sync] pub fn r() {{ {body}storage(&Quant); }}\n");
    let out = chains(&src);
    // The first 16 calls are narrowed (clean); past the bound a call goes to the
    // unspecialised `storage`, which may reach `Quant`'s impl: 4 over-approximations,
    // and `storage(&Quant)` is found either way.
    insta::assert_snapshot!(out, @"
    58:255 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 58:255 t::r (exact)
      via 17:35 t::storage (inferred)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    58:270 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 58:270 t::r (exact)
      via 17:35 t::storage (inferred)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    58:285 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 58:285 t::r (exact)
      via 17:35 t::storage (inferred)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    58:300 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 58:300 t::r (exact)
      via 17:35 t::storage (inferred)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    58:315 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::r -> t::wait (Blocks, inferred, Deny)
      via 58:315 t::r (exact)
      via 17:35 t::storage (inferred)
      via 7:44 <t::Quant as t::Op>::fwd (exact)
    ");
}

/// burn's shape: `Tensor::<B, K>::from_data` calls `K::from_data`, whose impl
/// `impl<B: Backend> BasicOps<B> for Int` calls `B::int_from_data`. The turbofish (or an
/// argument written `Vec<Self>`) binds the impl's `B` and `K`, and the bound `K: BasicOps<B>`
/// carries `B` into `Int`'s impl: only the backend named is reached.
#[test]
fn a_bounds_trait_arguments_bind_the_impl_it_reaches() {
    let src = with_prelude(
        "pub trait Backend { fn int_from_data(d: u8) -> u8; }\n\
         pub trait BasicOps<B: Backend> { fn from_data(d: u8) -> u8; }\n\
         pub struct Int;\n\
         impl<B: Backend> BasicOps<B> for Int { fn from_data(d: u8) -> u8 { B::int_from_data(d) } }\n\
         pub struct Tensor<B: Backend, K: BasicOps<B> = Int> { b: B, k: K }\n\
         impl<B: Backend, K: BasicOps<B>> Tensor<B, K> { pub fn from_data(d: u8) -> u8 { K::from_data(d) } pub fn cat(ts: Vec<Self>) -> u8 { K::from_data(0) } }\n\
         pub struct Cpu; impl Backend for Cpu { fn int_from_data(d: u8) -> u8 { d } }\n\
         pub struct Gpu; impl Backend for Gpu { #[synchronizes] fn int_from_data(d: u8) -> u8 { d } }\n\
         #[no_sync] fn on_cpu() { Tensor::<Cpu, Int>::from_data(1); }\n\
         #[no_sync] fn on_gpu() { Tensor::<Gpu, Int>::from_data(1); }\n\
         #[no_sync] fn cat_cpu(ts: Vec<Tensor<Cpu, Int>>) { Tensor::cat(ts); }\n\
         #[no_sync] fn cat_gpu(ts: Vec<Tensor<Gpu, Int>>) { Tensor::cat(ts); }\n",
    );
    let found: Vec<String> = check(&src)
        .lines()
        .filter(|l| l.contains("sync-in-no-sync"))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        found,
        [
            "13:26 sync-in-no-sync: `on_gpu` is #[no_sync] but reaches a host-blocking call: `Gpu::int_from_data`",
            "15:52 sync-in-no-sync: `cat_gpu` is #[no_sync] but reaches a host-blocking call: `Gpu::int_from_data`",
        ]
    );
}
