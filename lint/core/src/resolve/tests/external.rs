//! Roots and calls across traits the lint cannot see whole: a trait of a crate that is
//! not analysed (candle's `impl safetensors::View for Tensor`), a provided method that
//! an impl does not override (dfdx's `Synchronize::synchronize` for `Cuda`), and calls
//! into a generic fn of a crate that is not analysed, given a value whose type
//! implements one of that crate's traits (`safetensors::serialize_to_file`).

use crate::crate_graph::DepTarget;
use crate::test_support::*;

const SINK: &str = "#[synchronizes] fn w() {}\n";

/// The lint's lines for `src` (crate `t`, with `safetensors` and `other` as external
/// dependencies besides cudarc and nosync) under a config with `roots`.
fn check_roots(src: &str, roots: &[&str]) -> String {
    let (cfg, sources, diags) = config_from_toml(&format!("roots = {roots:?}\n"));
    assert!(diags.is_empty(), "{diags:?}");
    let mut fx = Fixture::src(&with_prelude(&format!("{SINK}{src}")));
    for d in ["safetensors", "other"] {
        fx.crates[0]
            .deps
            .push((d.into(), DepTarget::External(d.into())));
    }
    let a = analyze_fixture(&fx, &cfg, sources);
    render(&a, false)
}

/// The first line of each diagnostic (no labels, chains or stats).
fn heads(out: &str) -> Vec<&str> {
    out.lines().filter(|l| !l.starts_with("  ")).collect()
}

const VIEW: &str = "use safetensors::tensor as st;\npub struct Tensor;\n\
    impl st::View for Tensor {\n    fn data(&self) { w(); }\n    fn data_len(&self) -> usize { 0 }\n}\n";

#[test]
fn a_root_names_an_impl_of_an_unanalysed_trait_by_its_crate_and_name() {
    for tr in ["safetensors::View", "safetensors::tensor::View"] {
        let data = format!("<t::Tensor as {tr}>::data");
        let len = format!("<t::Tensor as {tr}>::data_len");
        let out = check_roots(VIEW, &[&data, &len]);
        assert_eq!(
            heads(&out),
            [
                "8:22 sync-in-no-sync: `data` is a configured no-sync root but reaches a host-blocking call: `w`"
            ],
            "{tr}: {out}"
        );
    }
}

#[test]
fn an_unanalysed_trait_of_another_crate_or_name_matches_nothing() {
    for root in [
        "<t::Tensor as other::View>::data",
        "<t::Tensor as safetensors::Load>::data",
        "<t::Tensor as safetensors::View>::shape",
    ] {
        let out = check_roots(VIEW, &[root]);
        let heads = heads(&out);
        assert_eq!(heads.len(), 1, "{root}: {out}");
        assert!(
            heads[0].starts_with("1:10 config-error: `")
                && heads[0].contains("matches nothing: no `impl "),
            "{root}: {out}"
        );
    }
}

/// Two traits of the crate with one name (the lint cannot tell which a re-export is):
/// the crate-and-name match refuses to guess; the full path still matches.
#[test]
fn two_unanalysed_traits_of_one_name_match_by_full_path_only() {
    let src = "pub struct Tensor;\nimpl safetensors::a::View for Tensor { fn data(&self) { w(); } }\n\
               impl safetensors::b::View for Tensor { fn data(&self) {} }\n";
    let out = check_roots(src, &["<t::Tensor as safetensors::View>::data"]);
    assert!(heads(&out)[0].contains("config-error"), "{out}");
    let out = check_roots(src, &["<t::Tensor as safetensors::a::View>::data"]);
    assert_eq!(
        heads(&out),
        [
            "6:57 sync-in-no-sync: `data` is a configured no-sync root but reaches a host-blocking call: `w`"
        ],
        "{out}"
    );
}

const SYNC: &str = "pub trait Synchronize {\n    fn try_synchronize(&self);\n    \
    fn synchronize(&self) { self.try_synchronize() }\n}\n\
    pub struct Cuda;\nimpl Synchronize for Cuda { fn try_synchronize(&self) { w(); } }\n\
    pub struct Cpu;\nimpl Synchronize for Cpu { fn try_synchronize(&self) {} }\n";

#[test]
fn a_root_names_a_provided_method_for_a_type_whose_impl_does_not_override_it() {
    let out = check_roots(
        SYNC,
        &[
            "<t::Cuda as t::Synchronize>::synchronize",
            "<t::Cpu as t::Synchronize>::synchronize",
        ],
    );
    assert_eq!(
        out,
        "7:34 sync-in-no-sync: `synchronize` is a configured no-sync root but reaches a host-blocking call: `w`\n\
         \x20 = this call reaches `t::w`, which blocks the host\n\
         \x20 via 7:34 <t::Cuda as t::Synchronize>::synchronize (exact)\n\
         \x20 via 10:57 <t::Cuda as t::Synchronize>::try_synchronize (exact)\n\
         \x20 stats: 6 edges, 0 unresolved\n"
    );
}

#[test]
fn a_provided_method_root_needs_the_impl_and_the_method() {
    for root in [
        "<t::Tensor as t::Synchronize>::synchronize",
        "<t::Cuda as t::Synchronize>::nope",
    ] {
        let out = check_roots(&format!("{SYNC}pub struct Tensor;\n"), &[root]);
        let heads = heads(&out);
        assert_eq!(heads.len(), 1, "{root}: {out}");
        assert!(heads[0].contains("config-error"), "{root}: {out}");
    }
}

/// `VIEW` (with `Clone`) and fns passing tensors to fns of `safetensors` and `other`.
const SAVE: &str = "use safetensors::tensor as st;\n#[derive(Clone)]\npub struct Tensor;\n\
    impl st::View for Tensor {\n    fn data(&self) { w(); }\n    fn data_len(&self) -> usize { 0 }\n}\n\
    pub fn save(t: &Tensor, name: &str) {\n    let data = [(name, t.clone())];\n    \
    st::serialize_to_file(data, None, name);\n}\n\
    pub fn save_all(ts: Vec<(String, Tensor)>) { safetensors::serialize(ts, None); }\n\
    pub fn save_bytes(b: &[u8]) { st::serialize_to_file([(\"b\", b)], None, \"f\"); }\n\
    pub fn elsewhere(t: Tensor) { other::consume(t); }\n";

#[test]
fn an_unanalysed_fn_given_a_value_implementing_its_crates_trait_may_call_its_methods() {
    let out = check_roots(SAVE, &["t::save", "t::save_all"]);
    assert_eq!(
        out,
        "14:5 sync-in-no-sync: `save` is a configured no-sync root but reaches a host-blocking call: `w`\n\
         \x20 = this call reaches `t::w`, which blocks the host\n\
         \x20 via 14:5 t::save (inferred)\n\
         \x20 via 9:22 <t::Tensor as safetensors::tensor::View>::data (exact)\n\
         16:46 sync-in-no-sync: `save_all` is a configured no-sync root but reaches a host-blocking call: `w`\n\
         \x20 = this call reaches `t::w`, which blocks the host\n\
         \x20 via 16:46 t::save_all (inferred)\n\
         \x20 via 9:22 <t::Tensor as safetensors::tensor::View>::data (exact)\n\
         \x20 stats: 5 edges, 0 unresolved\n",
    );
}

#[test]
fn no_callback_for_other_types_or_other_crates() {
    let out = check_roots(SAVE, &["t::save_bytes", "t::elsewhere"]);
    assert_eq!(heads(&out), Vec::<&str>::new(), "{out}");
}
