//! Types through `type` aliases (generic, with defaults, re-exported, across crates, of
//! crates not analysed) and through `?`, hop by hop along method chains.

use crate::config::Config;
use crate::crate_graph::DepTarget;
use crate::test_support::*;

/// A candle-style tensor whose methods return the crate's own `Result` alias, and a
/// blocking `to_scalar`. `{alias}` declares `Result`.
fn tensor_crate(alias: &str) -> String {
    format!(
        "use nosync::{{no_sync, synchronizes}};\n\
         pub struct Error;\n\
         {alias}\n\
         pub struct Tensor;\n\
         impl Tensor {{\n\
         \x20   pub fn sqrt(&self) -> Result<Tensor> {{ Ok(Tensor) }}\n\
         \x20   pub fn sum_all(&self) -> Result<Self> {{ Ok(Tensor) }}\n\
         \x20   #[synchronizes(reason = \"copies to the host\")]\n\
         \x20   pub fn to_scalar<T: Default>(&self) -> Result<T> {{ Ok(T::default()) }}\n\
         }}\n"
    )
}

const LOSS: &str = "#[no_sync] pub fn loss(t: &Tensor) -> Result<f32> { let l = t.sum_all()?; l.to_scalar::<f32>() }\n";

fn sink_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| !l.starts_with("  ") && !l.contains("unresolved-call"))
        .collect()
}

#[test]
fn question_mark_on_a_one_parameter_result_alias() {
    let src = tensor_crate("pub type Result<T> = std::result::Result<T, Error>;") + LOSS;
    let out = check(&src);
    assert_eq!(
        sink_lines(&out),
        [
            "11:77 sync-in-no-sync: `loss` is #[no_sync] but reaches a host-blocking call: `Tensor::to_scalar`"
        ],
        "{out}"
    );
    assert!(out.contains("via 11:77 t::loss (inferred)"), "{out}");
}

#[test]
fn generic_alias_with_a_default_parameter() {
    let src = tensor_crate("pub type Result<T, E = Error> = core::result::Result<T, E>;") + LOSS;
    insta::assert_snapshot!(chains(&src), @"
    11:77 sync-in-no-sync: `loss` is #[no_sync] but reaches a host-blocking call: `Tensor::to_scalar`
      = this call reaches `t::Tensor::to_scalar`, which blocks the host
      t::loss -> t::Tensor::to_scalar (Blocks, inferred, Deny)
      via 11:77 t::loss (inferred)
    ");
}

#[test]
fn default_naming_an_earlier_parameter_and_an_alias_of_an_alias() {
    let src = tensor_crate(
        "pub struct Wrap<T>(T);\npub type Base<T, E = Wrap<T>> = std::result::Result<T, E>;\npub type Result<T> = Base<T>;",
    ) + LOSS;
    insta::assert_snapshot!(chains(&src), @"
    13:77 sync-in-no-sync: `loss` is #[no_sync] but reaches a host-blocking call: `Tensor::to_scalar`
      = this call reaches `t::Tensor::to_scalar`, which blocks the host
      t::loss -> t::Tensor::to_scalar (Blocks, inferred, Deny)
      via 13:77 t::loss (inferred)
    ");
}

#[test]
fn chained_question_marks_keep_the_type_hop_by_hop() {
    let src = tensor_crate("pub type Result<T> = std::result::Result<T, Error>;")
        + "#[no_sync] pub fn norm(t: &Tensor) -> Result<f32> { t.sqrt()?.sum_all()?.to_scalar::<f32>() }\n";
    let out = check(&src);
    assert_eq!(
        sink_lines(&out),
        [
            "11:74 sync-in-no-sync: `norm` is #[no_sync] but reaches a host-blocking call: `Tensor::to_scalar`"
        ],
        "{out}"
    );
}

#[test]
fn alias_re_exported_from_another_module() {
    let src = "use nosync::{no_sync, synchronizes};\n\
               mod error { pub struct Error; pub type Result<T> = std::result::Result<T, Error>; }\n\
               pub use error::{Error, Result};\n\
               pub mod tensor {\n\
               \x20   use crate::Result;\n\
               \x20   pub struct Tensor;\n\
               \x20   impl Tensor {\n\
               \x20       pub fn sum_all(&self) -> Result<Tensor> { Ok(Tensor) }\n\
               \x20       #[nosync::synchronizes] pub fn to_vec(&self) -> Result<Vec<f32>> { Ok(vec![]) }\n\
               \x20   }\n\
               }\n\
               pub mod train {\n\
               \x20   use super::tensor::Tensor;\n\
               \x20   #[nosync::no_sync] pub fn step(t: &Tensor) -> crate::error::Result<usize> {\n\
               \x20       let s = t.sum_all()?;\n\
               \x20       Ok(s.to_vec()?.len())\n\
               \x20   }\n\
               }\n";
    let out = check(src);
    assert_eq!(
        sink_lines(&out),
        [
            "16:14 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `Tensor::to_vec`"
        ],
        "{out}"
    );
}

#[test]
fn alias_across_two_crates() {
    let core = tensor_crate("pub type Result<T> = std::result::Result<T, Error>;");
    let app = "use nosync::no_sync;\nuse core_t::{Result, Tensor};\n\
               #[no_sync] pub fn loss(t: &Tensor) -> Result<f32> {\n    let l = t.sum_all()?;\n    l.to_scalar::<f32>()\n}\n\
               #[no_sync] pub fn spelled(t: &Tensor) -> core_t::Result<f32> { t.sqrt()?.sum_all()?.to_scalar() }\n";
    let out = check_tree_deps(
        &[("app/lib.rs", app), ("core_t/lib.rs", &core)],
        &[("app", "app/lib.rs"), ("core_t", "core_t/lib.rs")],
        &[(0, 1)],
    );
    assert_eq!(
        sink_lines(&out),
        [
            "app/lib.rs:5:7 sync-in-no-sync: `loss` is #[no_sync] but reaches a host-blocking call: `Tensor::to_scalar`",
            "app/lib.rs:7:85 sync-in-no-sync: `spelled` is #[no_sync] but reaches a host-blocking call: `Tensor::to_scalar`",
        ],
        "{out}"
    );
    assert!(out.contains("via 5:7 app::loss (inferred)"), "{out}");
}

#[test]
fn option_alias() {
    let src = with_prelude(
        "pub type Maybe<T> = Option<T>;\n\
         pub struct Pool; pub struct Buf;\n\
         impl Pool { pub fn first(&self) -> Maybe<&Buf> { None } }\n\
         impl Buf { #[synchronizes] pub fn read(&self) {} }\n\
         #[no_sync] fn a(p: &Pool) -> Option<()> { p.first()?.read(); Some(()) }\n",
    );
    let out = check(&src);
    assert_eq!(
        sink_lines(&out),
        ["8:54 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `Buf::read`"],
        "{out}"
    );
}

/// `anyhow::Result<T>` (anyhow is not analysed) is `std::Result<T, anyhow::Error>`, also
/// through `.context(..)?` and when imported as `Result`.
#[test]
fn anyhow_result_of_a_crate_not_analysed() {
    let src = with_prelude(
        "use anyhow::{Context, Result};\n\
         pub struct Dev { s: Arc<CudaStream> }\n\
         pub fn open() -> Result<Dev> { todo!() }\n\
         pub fn open2() -> anyhow::Result<Dev> { todo!() }\n\
         #[no_sync] fn a() -> Result<()> { let d = open()?; d.s.synchronize(); Ok(()) }\n\
         #[no_sync] fn b() -> Result<()> { open2().context(\"no device\")?.s.synchronize(); Ok(()) }\n",
    );
    let mut fx = Fixture::src(&src);
    fx.crates[0]
        .deps
        .push(("anyhow".into(), DepTarget::External("anyhow".into())));
    let a = analyze_fixture(&fx, &Config::default(), fx.sources());
    let out = render(&a, false);
    assert_eq!(
        sink_lines(&out),
        [
            "8:56 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
            "9:67 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
        ],
        "{out}"
    );
}

/// Aliases that expand to themselves many times over stay bounded: with a depth cap
/// alone, a 64-wide tuple of itself is 64^depth resolutions (it hung); a budget of type
/// nodes per written type ends it.
#[test]
fn self_multiplying_aliases_are_bounded() {
    let wide = vec!["W<T>"; 64].join(", ");
    let src = with_prelude(&format!(
        "pub type W<T> = ({wide});\npub type B = (B, B, B, B);\n\
         pub type C<T> = std::result::Result<C<C<T>>, C<C<T>>>;\n\
         #[no_sync] fn a(x: W<u8>, y: B, z: C<u8>) -> C<B> {{ x.go(); y.go(); z.go(); todo!() }}\n",
    ));
    let out = check(&src);
    assert!(out.ends_with("  stats: 0 edges, 0 unresolved\n"), "{out}");
}

/// Values built through an alias (`Dev { .. }`, `Pair(..)`, `Dev::open()`) have the aliased type.
#[test]
fn constructors_through_an_alias() {
    let src = with_prelude(
        "pub struct Device { s: Arc<CudaStream> }\n\
         impl Device { pub fn open() -> Self { todo!() } pub fn wait(&self) { self.s.synchronize() } }\n\
         pub struct Wrap(Device);\nimpl Wrap { pub fn wait(&self) { self.0.wait() } }\n\
         pub type Dev = Device;\npub type Pair = Wrap;\n\
         #[no_sync] fn a(s: Arc<CudaStream>) { let d = Dev { s }; d.wait(); }\n\
         #[no_sync] fn b() { let p = Pair(Dev::open()); p.wait(); }\n",
    );
    let out = check(&src);
    assert_eq!(
        sink_lines(&out),
        [
            "10:60 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
            "11:50 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
        ],
        "{out}"
    );
}

#[test]
fn an_if_expression_has_the_type_of_its_branches() {
    let src = tensor_crate("pub type Result<T> = std::result::Result<T, Error>;")
        + "#[no_sync] pub fn pick(t: &Tensor, greedy: bool) -> Result<f32> {\n\
       \x20   let s = if greedy { t.sqrt()? } else { t.sum_all()? };\n\
       \x20   s.to_scalar::<f32>()\n\
       }\n";
    insta::assert_snapshot!(chains(&src), @"
    13:7 sync-in-no-sync: `pick` is #[no_sync] but reaches a host-blocking call: `Tensor::to_scalar`
      = this call reaches `t::Tensor::to_scalar`, which blocks the host
      t::pick -> t::Tensor::to_scalar (Blocks, inferred, Deny)
      via 13:7 t::pick (inferred)
    ");
}

#[test]
fn a_path_call_s_receiver_binds_the_impl_s_parameters() {
    // `T::read(t)` on a `T<Int>` is `Int`'s `read`, as `t.read()` is.
    let src = with_prelude(
        "pub struct Float;\npub struct Int;\n\
         pub trait Kind { fn read(s: &CudaStream); }\n\
         impl Kind for Float { fn read(s: &CudaStream) { s.synchronize().unwrap(); } }\n\
         impl Kind for Int { fn read(s: &CudaStream) {} }\n\
         pub struct T<K> { s: CudaStream, k: K }\n\
         impl<K: Kind> T<K> { pub fn read(&self) { K::read(&self.s) } }\n\
         #[no_sync] fn int(t: &T<Int>) { T::read(t) }\n\
         #[no_sync] fn float(t: &T<Float>) { T::read(t) }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    12:37 sync-in-no-sync: `float` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::float -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 12:37 t::float (exact)
      via 10:43 t::T::read (exact)
      via 7:51 <t::Float as t::Kind>::read (exact)
    ");
}

#[test]
fn option_s_inherent_methods_come_before_a_local_trait_s() {
    // burn implements its `Module` (with a `map`) for `Option<T>`: `o.map(|x| ..)` is still
    // `Option::map`.
    let src = with_prelude(
        "pub trait Module { fn map(self, s: &CudaStream) -> Self; }\n\
         impl<T> Module for Option<T> { fn map(self, s: &CudaStream) -> Self { s.synchronize().unwrap(); self } }\n\
         #[no_sync] fn inherent(o: Option<u32>) -> Option<u32> { o.map(|x| x + 1) }\n\
         #[no_sync] fn traits(o: Option<u32>, s: &CudaStream) -> Option<u32> { Module::map(o, s) }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    7:71 sync-in-no-sync: `traits` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::traits -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 7:71 t::traits (exact)
      via 5:73 <std::Option as t::Module>::map (exact)
    ");
}
