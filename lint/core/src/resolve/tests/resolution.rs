//! Items, names, receiver types, dispatch, escapes, macros and drops.

use crate::test_support::*;

#[test]
fn direct_and_transitive() {
    let out = chains(&with_prelude(
        "#[synchronizes] fn wait() {}\nfn mid() { wait() }\n#[no_sync] fn step() { mid(); }\n",
    ));
    insta::assert_snapshot!(out, @"
    6:24 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`
      = this call reaches `t::wait`, which blocks the host
      t::step -> t::wait (Blocks, exact, Deny)
      via 6:24 t::step (exact)
      via 5:12 t::mid (exact)
    ");
}

#[test]
fn attribute_spellings() {
    let src = "use nosync::synchronizes as blocks;\n#[blocks] fn a() {}\n#[nosync::synchronizes] fn b() {}\n#[nosync::no_sync] fn r() { a(); b(); }\n";
    insta::assert_snapshot!(chains(src), @"
    4:29 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `a`
      = this call reaches `t::a`, which blocks the host
      t::r -> t::a (Blocks, exact, Deny)
      via 4:29 t::r (exact)
    4:34 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `b`
      = this call reaches `t::b`, which blocks the host
      t::r -> t::b (Blocks, exact, Deny)
      via 4:34 t::r (exact)
    ");
}

#[test]
fn receiver_typing_through_fields_returns_and_question_mark() {
    let src = with_prelude(
        "struct Dev { stream: Arc<CudaStream> }\n\
         impl Dev { fn new() -> Result<Self, ()> { todo() } fn stream(&self) -> &Arc<CudaStream> { &self.stream } }\n\
         #[no_sync] fn a(d: &Dev) { d.stream.synchronize(); }\n\
         #[no_sync] fn b() -> Result<(), ()> { let d = Dev::new()?; d.stream().synchronize(); Ok(()) }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    6:37 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 6:37 t::a (inferred)
    7:71 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::b -> cudarc::driver::CudaStream::synchronize (Blocks, inferred, Deny)
      via 7:71 t::b (inferred)
    ");
}

#[test]
fn name_collision_uses_the_receiver_type() {
    let src = with_prelude(
        "struct Queue; impl Queue { fn synchronize(&self) {} }\n\
         #[no_sync] fn a(q: &Queue, s: &CudaStream) { q.synchronize(); s.synchronize(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    5:65 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 5:65 t::a (exact)
    ");
}

#[test]
fn unknown_receiver_is_name_only_and_a_warning() {
    let src = with_prelude("#[no_sync] fn a(x: Unknown) { x.synchronize(); }\n");
    // Every known `synchronize` is a candidate: one warning per (call, sink).
    insta::assert_snapshot!(chains(&src), @"
    4:33 possible-sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaContext::synchronize`
      = this call reaches `cudarc::driver::CudaContext::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaContext::synchronize (Blocks, name-only, Warn)
      via 4:33 t::a (name-only)
    4:33 possible-sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaDevice::synchronize`
      = this call reaches `cudarc::driver::CudaDevice::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaDevice::synchronize (Blocks, name-only, Warn)
      via 4:33 t::a (name-only)
    4:33 possible-sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaEvent::synchronize`
      = this call reaches `cudarc::driver::CudaEvent::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaEvent::synchronize (Blocks, name-only, Warn)
      via 4:33 t::a (name-only)
    4:33 possible-sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaStream::synchronize (Blocks, name-only, Warn)
      via 4:33 t::a (name-only)
    ");
}

#[test]
fn pageable_vs_pinned_memcpy_dtoh() {
    let src = with_prelude(
        "use cudarc::driver::PinnedHostSlice;\n\
         #[no_sync] fn pageable(s: &CudaStream, d: &u8, v: &mut Vec<f32>) { s.memcpy_dtoh(d, v); }\n\
         #[no_sync] fn pinned(s: &CudaStream, d: &u8, p: &mut PinnedHostSlice<f32>) { s.memcpy_dtoh(d, p); }\n\
         #[no_sync] fn unknown(s: &CudaStream, d: &u8, p: &mut Q) { s.memcpy_dtoh(d, p); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    5:70 sync-in-no-sync: `pageable` is #[no_sync] but reaches a host-blocking call: `CudaStream::memcpy_dtoh`
      = this call reaches `cudarc::driver::CudaStream::memcpy_dtoh`, which blocks the host
      t::pageable -> cudarc::driver::CudaStream::memcpy_dtoh (Blocks, exact, Deny)
      via 5:70 t::pageable (exact)
    7:62 possible-sync-in-no-sync: `unknown` is #[no_sync] but reaches a host-blocking call: `CudaStream::memcpy_dtoh`
      = this call reaches `cudarc::driver::CudaStream::memcpy_dtoh`, which blocks the host
      t::unknown -> cudarc::driver::CudaStream::memcpy_dtoh (Blocks, exact, Warn)
      via 7:62 t::unknown (exact)
    ");
}

#[test]
fn escapes_are_not_followed() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\n#[nosync::allow_sync(reason = \"warm-up\")] fn ok() { w() }\n\
         #[no_sync] fn a() { nosync::allow_sync(|| w()); nosync::allow_sync_expr!(w()); ok(); }\n",
    );
    assert_eq!(chains(&src), "");
}

#[test]
fn cycles_terminate_and_cfg_is_evaluated() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\nfn a(n: u32) { if n > 0 { b(n - 1) } }\nfn b(n: u32) { a(n); }\n\
         #[cfg(test)] fn t() { w() }\n#[cfg(not(feature = \"on\"))] fn t() {}\n\
         #[cfg(feature = \"on\")] fn on() { w() }\n#[no_sync] fn r() { a(3); on(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    10:27 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::r -> t::w (Blocks, exact, Deny)
      via 10:27 t::r (exact)
      via 9:34 t::on (exact)
    ");
}

#[test]
fn cfg_on_statements_is_evaluated() {
    // A statement under a disabled `#[cfg]` is not compiled, so it calls nothing; one
    // under an enabled `#[cfg]` does (crate `t` has feature `on`).
    let src = with_prelude(
        "#[synchronizes] fn w() {}\n\
         #[no_sync] fn off() { #[cfg(feature = \"gpu\")] w(); #[cfg(feature = \"gpu\")] { w(); } }\n\
         #[no_sync] fn on() {\n    #[cfg(feature = \"on\")]\n    w();\n}\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    8:5 sync-in-no-sync: `on` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::on -> t::w (Blocks, exact, Deny)
      via 8:5 t::on (exact)
    ");
}

#[test]
fn generic_bounds_dispatch_to_every_impl() {
    let src = with_prelude(
        "trait Dev { fn wait(&self); }\nstruct A; struct B;\n\
         impl Dev for A { #[synchronizes] fn wait(&self) {} }\nimpl Dev for B { fn wait(&self) {} }\n\
         #[no_sync] fn g<D: Dev>(d: &D) { d.wait(); }\n#[no_sync] fn h(d: &dyn Dev) { d.wait(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    8:36 sync-in-no-sync: `g` is #[no_sync] but reaches a host-blocking call: `A::wait`
      = this call reaches `<t::A as t::Dev>::wait`, which blocks the host
      t::g -> <t::A as t::Dev>::wait (Blocks, inferred, Deny)
      via 8:36 t::g (inferred)
    9:34 sync-in-no-sync: `h` is #[no_sync] but reaches a host-blocking call: `A::wait`
      = this call reaches `<t::A as t::Dev>::wait`, which blocks the host
      t::h -> <t::A as t::Dev>::wait (Blocks, inferred, Deny)
      via 9:34 t::h (inferred)
    ");
}

#[test]
fn macro_rules_fns_and_macro_arguments() {
    let src = with_prelude(
        "#[synchronizes] fn w() -> u32 { 0 }\nmacro_rules! mk { ($n:ident) => { fn $n() { w(); } }; }\nmk!(gen_wait);\n\
         #[no_sync] fn a() { gen_wait(); }\n#[no_sync] fn b() { let _s = format!(\"{}\", w()); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    7:21 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::a -> t::w (Blocks, exact, Deny)
      via 7:21 t::a (exact)
      via 6:1 t::gen_wait (exact)
    8:44 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::b -> t::w (Blocks, exact, Deny)
      via 8:44 t::b (exact)
    ");
}

/// A macro body that is no list of expressions (`=>`, `@rule`, a keyword before a call)
/// is scanned for calls: each is found once, and a body without calls adds nothing.
#[test]
fn unparsable_macro_bodies_are_scanned_for_calls() {
    let src = with_prelude(
        "#[synchronizes] fn w() -> u32 { 0 }\nfn idle() {}\n\
         #[no_sync] fn a() { mine!(@go w() => 1); }\n\
         #[no_sync] fn b() { mine!(when ready => { crate::w() }); }\n\
         #[no_sync] fn c() { mine!(@go idle() => [x, y] ; z); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    6:31 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::a -> t::w (Blocks, exact, Deny)
      via 6:31 t::a (exact)
    7:43 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::b -> t::w (Blocks, exact, Deny)
      via 7:43 t::b (exact)
    ");
}

#[test]
fn drop_at_scope_end() {
    let src = with_prelude(
        "struct G; impl Drop for G { #[synchronizes] fn drop(&mut self) {} }\n\
         #[no_sync] fn a() { let _g = G; }\n#[no_sync] fn b() -> G { let g = G; g }\n\
         #[no_sync] fn c() { let _ = G; }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    5:33 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `G::drop`
      = `_g` is dropped here, and its `Drop` (`<t::G as Drop>::drop`) blocks the host
      t::a -> <t::G as Drop>::drop (Blocks, inferred, Deny)
      via 5:33 t::a (inferred)
    7:21 sync-in-no-sync: `c` is #[no_sync] but reaches a host-blocking call: `G::drop`
      = the value is dropped here, and its `Drop` (`<t::G as Drop>::drop`) blocks the host
      t::c -> <t::G as Drop>::drop (Blocks, inferred, Deny)
      via 7:21 t::c (inferred)
    ");
}

#[test]
fn config_roots_sinks_and_errors() {
    let text = "roots = [\"t::hot\", \"t::nope\"]\nsinks = [\"t::Dev::flush\"]\n";
    let (cfg, _, diags) = config_from_toml(text);
    assert!(diags.is_empty());
    let out = chains_with(
        "struct Dev; impl Dev { fn flush(&self) {} }\nfn hot(d: &Dev) { d.flush() }\n",
        &cfg,
    );
    insta::assert_snapshot!(out, @"
    1:20 config-error: `t::nope` matches no function of the analysed crates
    2:21 sync-in-no-sync: `hot` is a configured no-sync root but reaches a host-blocking call: `Dev::flush`
      = this call reaches `t::Dev::flush`, which blocks the host
      t::hot -> t::Dev::flush (Blocks, exact, Deny)
      via 2:21 t::hot (exact)
    ");
}

/// A package's lib and bin share a crate name (`app`); a config path is looked up in both,
/// so the bin's modules can be named.
#[test]
fn config_paths_reach_a_bin_that_shares_its_libs_name() {
    let text = "roots = [\"app::hot::step\"]\nsinks = [\"app::hot::wait\"]\n";
    let (cfg, _, diags) = config_from_toml(text);
    assert!(diags.is_empty());
    let files = [
        ("src/lib.rs", "pub fn util() {}\n"),
        ("src/main.rs", "mod hot;\nfn main() { hot::step() }\n"),
        ("src/hot.rs", "pub fn wait() {}\npub fn step() { wait() }\n"),
    ];
    let crates = [("app", "src/lib.rs"), ("app", "src/main.rs")];
    let out = render(&analyze_tree_with(&files, &crates, &[], &cfg), true);
    insta::assert_snapshot!(out, @"
    src/hot.rs:2:17 sync-in-no-sync: `step` is a configured no-sync root but reaches a host-blocking call: `wait`
      = this call reaches `app::hot::wait`, which blocks the host
      via 2:17 app::hot::step (exact)
      stats: 2 edges, 0 unresolved
    ");
}

#[test]
fn generic_struct_fields_take_the_receivers_arguments() {
    let src = with_prelude(
        "trait Backend { fn flush(&self); }\nstruct Cuda; struct Cpu;\n\
         impl Backend for Cuda { #[synchronizes] fn flush(&self) {} }\nimpl Backend for Cpu { fn flush(&self) {} }\n\
         struct Trainer<B: Backend> { backend: B }\n\
         impl<B: Backend> Trainer<B> { #[no_sync] fn generic(&self) { self.backend.flush(); } }\n\
         #[no_sync] fn on_cpu(t: &Trainer<Cpu>) { t.backend.flush(); }\n\
         #[no_sync] fn on_cuda(t: &Trainer<Cuda>) { t.backend.flush(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    9:75 sync-in-no-sync: `generic` is #[no_sync] but reaches a host-blocking call: `Cuda::flush`
      = this call reaches `<t::Cuda as t::Backend>::flush`, which blocks the host
      t::Trainer::generic -> <t::Cuda as t::Backend>::flush (Blocks, inferred, Deny)
      via 9:75 t::Trainer::generic (inferred)
    11:54 sync-in-no-sync: `on_cuda` is #[no_sync] but reaches a host-blocking call: `Cuda::flush`
      = this call reaches `<t::Cuda as t::Backend>::flush`, which blocks the host
      t::on_cuda -> <t::Cuda as t::Backend>::flush (Blocks, inferred, Deny)
      via 11:54 t::on_cuda (inferred)
    ");
}

#[test]
fn statics_and_external_globs_are_typed() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::*;\nuse std::sync::atomic::*;\n\
               struct Loader; impl Loader { fn load(&self) {} fn synchronize(&self) {} }\n\
               static FLAG: AtomicBool = AtomicBool::new(false);\n\
               #[no_sync] fn a(s: &CudaStream) { FLAG.load(Ordering::Relaxed); s.synchronize(); }\n";
    insta::assert_snapshot!(chains(src), @"
    6:67 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::a -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 6:67 t::a (exact)
    ");
}

#[test]
fn external_globs_come_after_local_globs_and_crate_names() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::*;\nuse inner::*;\n\
               mod inner { #[nosync::synchronizes] pub fn w() {} }\n\
               #[no_sync] fn r(s: u64) { w(); unsafe { cudarc::driver::result::stream::synchronize(s) }; }\n";
    insta::assert_snapshot!(chains(src), @"
    5:27 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::inner::w`, which blocks the host
      t::r -> t::inner::w (Blocks, exact, Deny)
      via 5:27 t::r (exact)
    5:41 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `stream::synchronize`
      = this call reaches `cudarc::driver::result::stream::synchronize`, which blocks the host
      t::r -> cudarc::driver::result::stream::synchronize (Blocks, exact, Deny)
      via 5:41 t::r (exact)
    ");
}

#[test]
fn if_let_bindings_do_not_escape() {
    let src = with_prelude(
        "struct Idx; impl Idx { fn index(&self) -> usize { 0 } }\n\
         struct Other; impl Other { #[synchronizes] fn index(&self) -> usize { 0 } }\n\
         #[no_sync] fn a(m: &Idx, v: Vec<u8>) { if let Some(m) = v.first() { let _ = m; } m.index(); }\n",
    );
    assert_eq!(chains(&src), "");
}

#[test]
fn provided_methods_are_specialised_to_the_receiver() {
    let src = with_prelude(
        "trait Op { fn f(&self); fn map(&self) { self.f() } }\nstruct Fast; struct Slow;\n\
         impl Op for Fast { fn f(&self) {} }\nimpl Op for Slow { #[synchronizes] fn f(&self) {} }\n\
         #[no_sync] fn fast() { Fast.map(); }\n#[no_sync] fn slow() { Slow.map(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    9:29 sync-in-no-sync: `slow` is #[no_sync] but reaches a host-blocking call: `Slow::f`
      = this call reaches `<t::Slow as t::Op>::f`, which blocks the host
      t::slow -> <t::Slow as t::Op>::f (Blocks, exact, Deny)
      via 9:29 t::slow (exact)
      via 4:46 <t::Slow as t::Op>::map (exact)
    ");
}

#[test]
fn nested_fns_shadow_module_fns() {
    let src = with_prelude(
        "#[synchronizes] fn helper() {}\n\
         #[no_sync] fn a() { fn helper() {} helper(); }\n#[no_sync] fn b() { helper(); }\n",
    );
    insta::assert_snapshot!(chains(&src), @"
    6:21 sync-in-no-sync: `b` is #[no_sync] but reaches a host-blocking call: `helper`
      = this call reaches `t::helper`, which blocks the host
      t::b -> t::helper (Blocks, exact, Deny)
      via 6:21 t::b (exact)
    ");
}

/// A supertrait bound naming a trait of a crate collected later: resolving it while
/// the first crate was collected indexed a crate list that did not hold it yet (a panic
/// on the cubecl workspace). Supertraits are resolved once every crate is known.
#[test]
fn a_supertrait_from_a_crate_collected_later_resolves() {
    let app = "use nosync::no_sync;\npub trait Step: base::Base {}\n\
               #[no_sync] pub fn run<T: Step>(t: &T) { t.wait(); }\n";
    let base = "pub trait Base {\n    #[nosync::synchronizes(reason = \"waits\")]\n    fn wait(&self);\n}\n";
    let out = check_tree_deps(
        &[("app/lib.rs", app), ("base/lib.rs", base)],
        &[("app", "app/lib.rs"), ("base", "base/lib.rs")],
        &[(0, 1)],
    );
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "app/lib.rs:3:43 sync-in-no-sync: `run` is #[no_sync] but reaches a host-blocking call: `Base::wait`"
        ],
        "{out}"
    );
}
