//! Items, names, receiver types, dispatch, escapes, macros and drops.

use super::*;

#[test]
fn direct_and_transitive() {
    let out = check(&with_prelude(
        "#[synchronizes] fn wait() {}\nfn mid() { wait() }\n#[no_sync] fn step() { mid(); }\n",
    ));
    assert!(
        out.contains(
            "6:24 sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `wait`"
        ),
        "{out}"
    );
    assert!(
        out.contains("via 6:24 t::step (exact)") && out.contains("via 5:12 t::mid (exact)"),
        "{out}"
    );
}

#[test]
fn attribute_spellings() {
    let src = "use nosync::synchronizes as blocks;\n#[blocks] fn a() {}\n#[nosync::synchronizes] fn b() {}\n#[nosync::no_sync] fn r() { a(); b(); }\n";
    assert_eq!(findings(src).len(), 2, "{}", check(src));
}

#[test]
fn receiver_typing_through_fields_returns_and_question_mark() {
    let src = with_prelude(
        "struct Dev { stream: Arc<CudaStream> }\n\
         impl Dev { fn new() -> Result<Self, ()> { todo() } fn stream(&self) -> &Arc<CudaStream> { &self.stream } }\n\
         #[no_sync] fn a(d: &Dev) { d.stream.synchronize(); }\n\
         #[no_sync] fn b() -> Result<(), ()> { let d = Dev::new()?; d.stream().synchronize(); Ok(()) }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 2, "{}", check(&src));
    assert!(check(&src).contains("(inferred)"));
}

#[test]
fn name_collision_uses_the_receiver_type() {
    let src = with_prelude(
        "struct Queue; impl Queue { fn synchronize(&self) {} }\n\
         #[no_sync] fn a(q: &Queue, s: &CudaStream) { q.synchronize(); s.synchronize(); }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 1, "{}", check(&src));
    assert!(f[0].contains("CudaStream::synchronize"));
}

#[test]
fn unknown_receiver_is_name_only_and_a_warning() {
    let src = with_prelude("#[no_sync] fn a(x: Unknown) { x.synchronize(); }\n");
    let f = findings(&src);
    // Every known `synchronize` is a candidate: one warning per (call, sink).
    assert_eq!(f.len(), 3, "{}", check(&src));
    assert!(
        f.iter().all(|l| l.contains("possible-sync-in-no-sync")),
        "{}",
        check(&src)
    );
}

#[test]
fn pageable_vs_pinned_memcpy_dtoh() {
    let src = with_prelude(
        "use cudarc::driver::PinnedHostSlice;\n\
         #[no_sync] fn pageable(s: &CudaStream, d: &u8, v: &mut Vec<f32>) { s.memcpy_dtoh(d, v); }\n\
         #[no_sync] fn pinned(s: &CudaStream, d: &u8, p: &mut PinnedHostSlice<f32>) { s.memcpy_dtoh(d, p); }\n\
         #[no_sync] fn unknown(s: &CudaStream, d: &u8, p: &mut Q) { s.memcpy_dtoh(d, p); }\n",
    );
    let f = findings(&src);
    assert_eq!(f.len(), 2, "{}", check(&src));
    assert!(f[0].contains("sync-in-no-sync") && f[0].contains("`pageable`"));
    assert!(f[1].contains("possible-sync-in-no-sync") && f[1].contains("`unknown`"));
}

#[test]
fn escapes_are_not_followed() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\n#[nosync::allow_sync(reason = \"warm-up\")] fn ok() { w() }\n\
         #[no_sync] fn a() { nosync::allow_sync(|| w()); nosync::allow_sync_expr!(w()); ok(); }\n",
    );
    assert!(findings(&src).is_empty(), "{}", check(&src));
}

#[test]
fn cycles_terminate_and_cfg_is_evaluated() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\nfn a(n: u32) { if n > 0 { b(n - 1) } }\nfn b(n: u32) { a(n); }\n\
         #[cfg(test)] fn t() { w() }\n#[cfg(not(feature = \"on\"))] fn t() {}\n\
         #[cfg(feature = \"on\")] fn on() { w() }\n#[no_sync] fn r() { a(3); on(); }\n",
    );
    let f = findings(&src);
    assert!(f.len() == 1 && f[0].contains("`w`"), "{}", check(&src));
}

#[test]
fn generic_bounds_dispatch_to_every_impl() {
    let src = with_prelude(
        "trait Dev { fn wait(&self); }\nstruct A; struct B;\n\
         impl Dev for A { #[synchronizes] fn wait(&self) {} }\nimpl Dev for B { fn wait(&self) {} }\n\
         #[no_sync] fn g<D: Dev>(d: &D) { d.wait(); }\n#[no_sync] fn h(d: &dyn Dev) { d.wait(); }\n",
    );
    let out = check(&src);
    assert_eq!(findings(&src).len(), 2, "{out}");
    assert!(out.contains("(inferred)"), "{out}");
}

#[test]
fn macro_rules_fns_and_macro_arguments() {
    let src = with_prelude(
        "#[synchronizes] fn w() -> u32 { 0 }\nmacro_rules! mk { ($n:ident) => { fn $n() { w(); } }; }\nmk!(gen_wait);\n\
         #[no_sync] fn a() { gen_wait(); }\n#[no_sync] fn b() { let _s = format!(\"{}\", w()); }\n",
    );
    assert_eq!(findings(&src).len(), 2, "{}", check(&src));
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
    let found = findings(&src);
    assert_eq!(found.len(), 2, "{}", check(&src));
    assert!(found.iter().all(|f| !f.contains("`c`")), "{}", check(&src));
}

#[test]
fn drop_at_scope_end() {
    let src = with_prelude(
        "struct G; impl Drop for G { #[synchronizes] fn drop(&mut self) {} }\n\
         #[no_sync] fn a() { let _g = G; }\n#[no_sync] fn b() -> G { let g = G; g }\n\
         #[no_sync] fn c() { let _ = G; }\n",
    );
    let f = findings(&src);
    assert!(
        f.len() == 2 && f[0].contains("`a`") && f[1].contains("`c`"),
        "{}",
        check(&src)
    );
}

#[test]
fn config_roots_sinks_and_errors() {
    let text = "roots = [\"t::hot\", \"t::nope\"]\nsinks = [\"t::Dev::flush\"]\n";
    let (cfg, _, diags) = config_from_toml(text);
    assert!(diags.is_empty());
    let out = check_with(
        "struct Dev; impl Dev { fn flush(&self) {} }\nfn hot(d: &Dev) { d.flush() }\n",
        &cfg,
    );
    assert!(out.contains("sync-in-no-sync"), "{out}");
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
    let f = findings(&src);
    assert_eq!(f.len(), 2, "{}", check(&src));
    assert!(
        f.iter().any(|l| l.contains("`generic`")) && f.iter().any(|l| l.contains("`on_cuda`")),
        "{}",
        check(&src)
    );
}

#[test]
fn statics_and_external_globs_are_typed() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::*;\nuse std::sync::atomic::*;\n\
               struct Loader; impl Loader { fn load(&self) {} fn synchronize(&self) {} }\n\
               static FLAG: AtomicBool = AtomicBool::new(false);\n\
               #[no_sync] fn a(s: &CudaStream) { FLAG.load(Ordering::Relaxed); s.synchronize(); }\n";
    let f = findings(src);
    assert_eq!(f.len(), 1, "{}", check(src));
    assert!(
        f[0].contains("sync-in-no-sync") && f[0].contains("CudaStream::synchronize"),
        "{}",
        check(src)
    );
}

#[test]
fn external_globs_come_after_local_globs_and_crate_names() {
    let src = "use nosync::no_sync;\nuse cudarc::driver::*;\nuse inner::*;\n\
               mod inner { #[nosync::synchronizes] pub fn w() {} }\n\
               #[no_sync] fn r(s: u64) { w(); unsafe { cudarc::driver::result::stream::synchronize(s) }; }\n";
    let f = findings(src);
    assert_eq!(f.len(), 2, "{}", check(src));
}

#[test]
fn if_let_bindings_do_not_escape() {
    let src = with_prelude(
        "struct Idx; impl Idx { fn index(&self) -> usize { 0 } }\n\
         struct Other; impl Other { #[synchronizes] fn index(&self) -> usize { 0 } }\n\
         #[no_sync] fn a(m: &Idx, v: Vec<u8>) { if let Some(m) = v.first() { let _ = m; } m.index(); }\n",
    );
    assert!(findings(&src).is_empty(), "{}", check(&src));
}

#[test]
fn provided_methods_are_specialised_to_the_receiver() {
    let src = with_prelude(
        "trait Op { fn f(&self); fn map(&self) { self.f() } }\nstruct Fast; struct Slow;\n\
         impl Op for Fast { fn f(&self) {} }\nimpl Op for Slow { #[synchronizes] fn f(&self) {} }\n\
         #[no_sync] fn fast() { Fast.map(); }\n#[no_sync] fn slow() { Slow.map(); }\n",
    );
    let f = findings(&src);
    assert!(f.len() == 1 && f[0].contains("`slow`"), "{}", check(&src));
    assert!(
        check(&src).contains("<t::Slow as t::Op>::map"),
        "{}",
        check(&src)
    );
}

#[test]
fn nested_fns_shadow_module_fns() {
    let src = with_prelude(
        "#[synchronizes] fn helper() {}\n\
         #[no_sync] fn a() { fn helper() {} helper(); }\n#[no_sync] fn b() { helper(); }\n",
    );
    let f = findings(&src);
    assert!(f.len() == 1 && f[0].contains("`b`"), "{}", check(&src));
}
