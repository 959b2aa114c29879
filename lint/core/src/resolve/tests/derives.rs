//! `#[derive(..)]` (`resolve::derives`): a derive naming a trait of an analysed crate makes
//! the type implement it; derive-new's `new` gives the type a constructor.

use crate::test_support::*;

/// A burn-like library: a `Module` trait with a required `visit`, two visitors (one reads
/// every tensor), and a fn that visits a module with the one that does not.
const LIB: &str = "use cudarc::driver::CudaStream;\n\
pub struct Tensor { s: CudaStream }\n\
impl Tensor { pub fn read(&self) { self.s.synchronize().unwrap(); } pub fn fetch(&self) { self.read() } }\n\
pub trait Visitor { fn visit(&mut self, t: &Tensor); }\n\
pub trait Module { fn visit<V: Visitor>(&self, v: &mut V); fn name(&self) -> Named { Named } }\n\
pub struct Named;\n\
impl Named { pub fn read(&self) {} pub fn fetch(&self) {} }\n\
impl Module for Tensor { fn visit<V: Visitor>(&self, v: &mut V) { v.visit(self) } }\n\
pub struct Collector;\n\
impl Visitor for Collector { fn visit(&mut self, t: &Tensor) { t.read() } }\n\
#[derive(new)] pub struct Converter { n: usize }\n\
impl Visitor for Converter { fn visit(&mut self, _t: &Tensor) {} }\n\
pub fn convert<M: Module>(m: &M) { let mut v = Converter::new(1); m.visit(&mut v); }\n\
pub trait Config: Sized { fn load(path: &str) -> Option<Self> { None } }\n";

#[test]
fn a_derived_trait_and_constructor_narrow_dispatch() {
    let app = "use nosync::no_sync;\nuse lib::{Module, Tensor};\n\
        #[derive(Module, Debug)] pub struct Model { t: Tensor }\n\
        #[no_sync] fn step(m: &Model) { lib::convert(m); }\n\
        #[no_sync] fn provided(m: &Model) { m.name().read(); }\n\
        #[derive(Module, lib::Config)] pub struct Loaded { t: Tensor }\n\
        #[no_sync] fn loaded() { Loaded::load(\"m\").unwrap().visit(&mut lib::Collector); }\n";
    let files = [("app/src/lib.rs", app), ("lib/src/lib.rs", LIB)];
    let crates = [("app", "app/src/lib.rs"), ("lib", "lib/src/lib.rs")];
    // `convert` is specialised to `Model`, whose `visit` the derive writes (not followed),
    // with a `Converter` (which reads nothing); `name` is the trait's provided method, and
    // its `Named` has an inherent `read` that waits for nothing; `Loaded::load` is the
    // derived `Config`'s provided method, which returns a `Loaded`, whose `visit` the
    // derive writes (not a guess by name among the impls of `visit`).
    insta::assert_snapshot!(chains_tree(&files, &crates, &[(0, 1)]), @"");
}

#[test]
fn a_struct_written_without_its_defaulted_arguments_has_their_defaults() {
    // `Tensor<B, 2>` is `Tensor<B, 2, Float>`; a const argument keeps its place, so `K`
    // is bound to `Float` or `Int`, and `K::read` reaches that kind's impl only.
    let src = with_prelude(
        "pub struct Float;\npub struct Int;\n\
         pub trait Kind { fn read(s: &CudaStream); }\n\
         impl Kind for Float { fn read(s: &CudaStream) { s.synchronize().unwrap(); } }\n\
         impl Kind for Int { fn read(s: &CudaStream) {} }\n\
         pub struct Tensor<B, const D: usize, K = Float> { s: CudaStream, b: B, k: K }\n\
         impl<B, const D: usize, K: Kind> Tensor<B, D, K> {\n\
         \x20   pub fn read(&self) { K::read(&self.s) }\n\
         \x20   pub fn squeeze<const D2: usize>(self) -> Tensor<B, D2, K> { loop {} }\n\
         }\n\
         #[no_sync] fn float(t: Tensor<u8, 2>) { t.squeeze::<1>().read(); }\n\
         #[no_sync] fn int(t: Tensor<u8, 2, Int>) { t.squeeze::<1>().read(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    14:58 sync-in-no-sync: `float` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::float -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 14:58 t::float (inferred)
      via 11:26 t::Tensor::read (exact)
      via 7:51 <t::Float as t::Kind>::read (exact)
    ");
}
