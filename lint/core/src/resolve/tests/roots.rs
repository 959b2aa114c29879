//! Config roots that name what a reader sees: an impl a macro generates for a primitive
//! (`<f32 as TryFrom<&Tensor>>::try_from`), an impl of a generic trait named without its
//! parameters (`<Cuda as BinaryKernel>::forward` for `BinaryKernel<K, E>`), an async fn
//! of an impl, a type through its alias.

use crate::test_support::*;

const SRC: &str = "use nosync::synchronizes;\n\
pub struct Tensor;\n\
impl Tensor { #[synchronizes] pub fn to_scalar(&self) -> f32 { 0. } }\n\
macro_rules! from_tensor { ($t:ident) => {\n\
\x20   impl TryFrom<&Tensor> for $t { type Error = (); fn try_from(t: &Tensor) -> Result<Self, ()> { Ok(t.to_scalar() as $t) } }\n\
} }\n\
from_tensor!(f32);\n\
pub trait BinaryKernel<K, E> { fn forward(&self, k: K, e: E); }\n\
pub struct Cuda;\n\
pub type Gpu = Cuda;\n\
impl<K, E> BinaryKernel<K, E> for Cuda { fn forward(&self, k: K, e: E) { Tensor.to_scalar(); } }\n\
pub struct Server;\n\
impl Server { pub async fn sync(&self) { Tensor.to_scalar(); } }\n";

/// The findings and config errors of [`SRC`] with `roots` configured, one line each.
fn with_root(root: &str) -> Vec<String> {
    let (cfg, sources, diags) = config_from_toml(&format!("roots = [{root:?}]\n"));
    assert!(diags.is_empty(), "{diags:?}");
    render(&analyze_src(SRC, &cfg, sources), false)
        .lines()
        .filter(|l| !l.starts_with("  "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn roots_of_impls_on_primitives_generic_traits_async_fns_and_aliases_match() {
    let reached =
        "is a configured no-sync root but reaches a host-blocking call: `Tensor::to_scalar`";
    for root in [
        "<f32 as TryFrom<&t::Tensor>>::try_from",
        "<f32 as std::convert::TryFrom>::try_from",
        "<t::Cuda as t::BinaryKernel>::forward",
        "<t::Cuda as t::BinaryKernel<u8, f32>>::forward",
        "<t::Gpu as t::BinaryKernel>::forward",
        "t::Server::sync",
    ] {
        let out = with_root(root);
        assert!(
            out.len() == 1 && out[0].contains(reached),
            "{root}: {out:#?}"
        );
    }
}

/// `<&T as Tr>::m` names the impl for `&T` and `<T as Tr>::m` the one for `T` (candle's
/// `impl View for Tensor` and `impl View for &Tensor`): a call that reaches the other impl
/// is not stopped at the root (here `save`, which reaches both).
#[test]
fn a_root_names_the_impl_for_a_reference_or_for_the_type() {
    let src = "use nosync::synchronizes;\n\
        pub struct Tensor;\n\
        impl Tensor { #[synchronizes] pub fn read(&self) {} }\n\
        pub trait View { fn data(&self); }\n\
        impl View for Tensor { fn data(&self) { self.read() } }\n\
        impl View for &Tensor { fn data(&self) { self.read() } }\n\
        pub fn save(t: &Tensor) { t.data() }\n";
    let run = |roots: &str| {
        let (cfg, sources, diags) = config_from_toml(&format!("roots = [{roots}]\n"));
        assert!(diags.is_empty(), "{diags:?}");
        finding_lines(&render(&analyze_src(src, &cfg, sources), false))
    };
    insta::assert_snapshot!(run(r#""<&t::Tensor as t::View>::data""#).join("\n"), @"
    6:47 sync-in-no-sync: `data` is a configured no-sync root but reaches a host-blocking call: `Tensor::read`
    ");
    insta::assert_snapshot!(run(r#""<t::Tensor as t::View>::data", "t::save""#).join("\n"), @"
    5:46 sync-in-no-sync: `data` is a configured no-sync root but reaches a host-blocking call: `Tensor::read`
    7:29 sync-in-no-sync: `save` is a configured no-sync root but reaches a host-blocking call: `Tensor::read`
    ");
}
