//! Items declared in inner blocks (an `if` block, a closure body, a nested block): lowered,
//! and callable from the fn they are declared in.

use super::*;

#[test]
fn fn_in_an_if_block_is_called() {
    let src = with_prelude(
        "#[no_sync] fn step(s: &CudaStream, go: bool) {\n    if go {\n        fn helper(s: &CudaStream) { s.synchronize(); }\n        helper(s);\n    }\n}\n",
    );
    let out = check(&src);
    assert!(
        out.contains(
            "7:9 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`"
        ),
        "{out}"
    );
    assert!(
        out.contains("via 7:9 t::step (exact)") && out.contains("via 6:39 t::helper (exact)"),
        "{out}"
    );
}

#[test]
fn fn_in_a_closure_body_and_in_a_nested_block_are_called() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         #[no_sync] fn a() { let f = || { fn inner() { wait() } inner() }; f(); }\n\
         #[no_sync] fn b() { { { fn deep() { wait() } deep(); } } }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 2, "{}", check(&src));
    assert!(f[0].contains("`a`") && f[1].contains("`b`"), "{f:?}");
}

#[test]
fn impl_and_struct_in_an_inner_block_are_items() {
    let src = with_prelude(
        "#[no_sync] fn a(s: &CudaStream) {\n    if true {\n        struct W<'s>(&'s CudaStream);\n        impl W<'_> { fn go(&self) { self.0.synchronize(); } }\n        W(s).go();\n    }\n}\n",
    );
    let out = check(&src);
    assert!(
        out.contains(
            "8:14 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`"
        ),
        "{out}"
    );
    assert!(out.contains("via 7:44 t::W::go (inferred)"), "{out}");
}

#[test]
fn inner_fns_shadow_module_fns_in_their_fn_only() {
    let src = with_prelude(
        "#[synchronizes] fn helper() {}\n\
         #[no_sync] fn a() { if true { fn helper() {} helper(); } }\n\
         #[no_sync] fn b() { helper(); }\n",
    );
    let f = findings(&src);
    assert!(f.len() == 1 && f[0].contains("`b`"), "{}", check(&src));
}
