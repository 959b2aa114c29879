//! Items declared in inner blocks (an `if` block, a closure body, a nested block): lowered,
//! and callable from the fn they are declared in.

use crate::test_support::*;

#[test]
fn fn_in_an_if_block_is_called() {
    let src = with_prelude(
        "#[no_sync] fn step(s: &CudaStream, go: bool) {\n    if go {\n        fn helper(s: &CudaStream) { s.synchronize(); }\n        helper(s);\n    }\n}\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    7:9 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 7:9 t::step (exact)
      via 6:39 t::helper (exact)
    ");
}

#[test]
fn fn_in_a_closure_body_and_in_a_nested_block_are_called() {
    let src = with_prelude(
        "#[synchronizes] fn wait() {}\n\
         #[no_sync] fn a() { let f = || { fn inner() { wait() } inner() }; f(); }\n\
         #[no_sync] fn b() { { { fn deep() { wait() } deep(); } } }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    5:56 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::a -> t::wait (Blocks, exact, Deny)
      via 5:56 t::a (exact)
      via 5:47 t::inner (exact)
    6:46 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::b -> t::wait (Blocks, exact, Deny)
      via 6:46 t::b (exact)
      via 6:37 t::deep (exact)
    ");
}

#[test]
fn impl_and_struct_in_an_inner_block_are_items() {
    let src = with_prelude(
        "#[no_sync] fn a(s: &CudaStream) {\n    if true {\n        struct W<'s>(&'s CudaStream);\n        impl W<'_> { fn go(&self) { self.0.synchronize(); } }\n        W(s).go();\n    }\n}\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    8:14 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 8:14 t::a (exact)
      via 7:44 t::W::go (inferred)
    ");
}

#[test]
fn inner_fns_shadow_module_fns_in_their_fn_only() {
    let src = with_prelude(
        "#[synchronizes] fn helper() {}\n\
         #[no_sync] fn a() { if true { fn helper() {} helper(); } }\n\
         #[no_sync] fn b() { helper(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    6:21 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `helper`
      = this call reaches `t::helper`, which blocks the host
      t::b -> t::helper (Blocks, exact, Deny)
      via 6:21 t::b (exact)
    ");
}
