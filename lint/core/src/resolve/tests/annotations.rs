//! The attribute contract as the lint reads it (one parser with the macros), setup sinks and
//! cudarc's blocking `Drop`s.

use crate::config::Config;
use crate::source::SourceMap;
use crate::test_support::*;
use std::path::Path;

#[test]
fn maybe_is_a_possible_sync_with_the_macros_default_reason() {
    let src = with_prelude(
        "#[synchronizes(maybe)] fn pool() {}\n\
         #[synchronizes(maybe, reason = \"waits when the pool is empty\")] fn acquire() {}\n\
         #[synchronizes] fn wait() {}\n\
         #[no_sync] fn a() { pool(); }\n#[no_sync] fn b() { acquire(); }\n#[no_sync] fn c() { wait(); }\n",
    );
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let got: Vec<(&str, &str, &str)> = a
        .diagnostics
        .iter()
        .filter_map(|d| {
            Some((
                d.code.as_str(),
                d.message.as_str(),
                &*d.finding.as_ref()?.sink_reason,
            ))
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "possible-sync-in-no-sync",
                "`a` is #[no_sync] but reaches a call that may block the host: `pool`",
                nosync_syntax::DEFAULT_REASON_MAYBE
            ),
            (
                "possible-sync-in-no-sync",
                "`b` is #[no_sync] but reaches a call that may block the host: `acquire`",
                "waits when the pool is empty"
            ),
            (
                "sync-in-no-sync",
                "`c` is #[no_sync] but reaches a host-blocking call: `wait`",
                nosync_syntax::DEFAULT_REASON
            ),
        ]
    );
    assert_eq!(nosync_syntax::DEFAULT_REASON, "declared #[synchronizes]");
}

#[test]
fn reasons_are_string_literals() {
    let src = with_prelude(
        "#[synchronizes(reason = \"waits for \\\"the\\\" copy\\u{2192}host\")] fn a() {}\n\
         #[synchronizes(reason = r#\"a \"raw\" reason\"#)] fn b() {}\n\
         #[no_sync] fn r() { a(); b(); }\n",
    );
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let reasons: Vec<&str> = a
        .diagnostics
        .iter()
        .filter_map(|d| Some(&*d.finding.as_ref()?.sink_reason))
        .collect();
    assert_eq!(
        reasons,
        ["waits for \"the\" copy\u{2192}host", "a \"raw\" reason"]
    );
}

#[test]
fn renamed_and_cfg_attr_forms_keep_their_arguments() {
    let src = "use nosync::synchronizes as blocks;\n\
               #[blocks(maybe, reason = \"renamed\")] fn a() {}\n\
               #[cfg_attr(feature = \"on\", nosync::synchronizes(maybe))] fn b() {}\n\
               #[cfg_attr(feature = \"off\", nosync::synchronizes)] fn c() {}\n\
               #[nosync::no_sync] fn r() { a(); b(); c(); }\n";
    insta::assert_snapshot!(chains(src), @"
    5:29 possible-sync-in-no-sync: `r` is #[no_sync] but reaches a call that may block the host: `a`
      = this call reaches `t::a`, which may block the host
      t::r -> t::a (May, exact, Warn)
      via 5:29 t::r (exact)
    5:34 possible-sync-in-no-sync: `r` is #[no_sync] but reaches a call that may block the host: `b`
      = this call reaches `t::b`, which may block the host
      t::r -> t::b (May, exact, Warn)
      via 5:34 t::r (exact)
    ");
}

#[test]
/// A malformed attribute is reported, and still read where that checks more, never less:
/// a `#[no_sync]` is a root, a `#[synchronizes]` a sink (`maybe` kept); an `#[allow_sync]`
/// is ignored.
fn malformed_attributes_are_located_and_read_where_that_checks_more() {
    let src = with_prelude(
        "#[synchronizes(blocking)] fn a() {}\n\
         #[synchronizes(maybe, reason = 5)] fn b() {}\n\
         #[synchronizes] fn w() {}\n\
         #[nosync::allow_sync] fn ok() { w() }\n\
         #[nosync::no_sync(hot)] fn still_a_root() { w() }\n\
         #[other::no_sync(hot)] fn other_attr() {}\n\
         #[no_sync] fn r() { a(); b(); ok(); }\n",
    );
    let out = check(&src);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "4:16 invalid-annotation: unknown argument `blocking`; expected `maybe` or `reason = \"...\"`",
            "5:32 invalid-annotation: `reason` must be a string literal, e.g. reason = \"waits for the copy\"",
            "7:3 invalid-annotation: #[allow_sync] needs a reason: #[allow_sync(reason = \"why this wait is fine here\")]",
            "8:19 invalid-annotation: #[no_sync] takes no arguments but `capture_safe`; write `#[no_sync]` or `#[no_sync(capture_safe)]`",
            "8:45 sync-in-no-sync: `still_a_root` is #[no_sync] but reaches a host-blocking call: `w`",
            "10:21 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `a`",
            "10:26 possible-sync-in-no-sync: `r` is #[no_sync] but reaches a call that may block the host: `b`",
            "10:31 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `w`",
        ],
        "{out}"
    );
    assert!(
        out.contains("  = the #[synchronizes] macro rejects this"),
        "{out}"
    );
}

#[test]
fn a_mistyped_attribute_argument_gets_the_closest_one() {
    let src = with_prelude("#[synchronizes(reson = \"copies\")] fn a() {}\n");
    let out = check(&src);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "4:16 invalid-annotation: unknown argument `reson`; expected `maybe` or `reason = \"...\"`; did you mean `reason`?"
        ],
        "{out}"
    );
}

#[test]
fn malformed_escapes_are_located_and_still_escape() {
    let src = with_prelude(
        "#[synchronizes] fn w() {}\n\
         #[no_sync] fn r() { nosync::allow_sync(); nosync::allow_sync_expr!(w(), w()); nosync::allow_sync_expr!(); }\n",
    );
    let out = check(&src);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "5:21 invalid-annotation: allow_sync(..) takes one argument, the closure to run (`allow_sync(|| ..)`), not 0",
            "5:71 invalid-annotation: allow_sync_expr! takes one expression (wrap several in a block: allow_sync_expr!({ a; b })): unexpected token",
            "5:79 invalid-annotation: allow_sync_expr! needs an expression: allow_sync_expr!(stream.synchronize()?)",
        ],
        "{out}"
    );
}

#[test]
fn setup_is_its_own_kind() {
    let src = with_prelude(
        "use cudarc::nvrtc::Ptx;\n\
         struct Dev { ctx: Arc<CudaContext>, stream: Arc<CudaStream> }\n\
         impl Dev {\n\
           fn load(&self, ptx: Ptx) { self.ctx.load_module(ptx); }\n\
           fn compile(&self) { cudarc::nvrtc::safe::compile_ptx(\"\"); }\n\
           fn streams(&self) { self.ctx.new_stream(); self.stream.fork(); }\n\
         }\n\
         #[no_sync] fn a(d: &Dev, p: Ptx) { d.load(p); d.compile(); d.stream.synchronize(); }\n\
         #[no_sync] fn b(d: &Dev) { d.streams(); let _c = CudaContext::new(0); }\n",
    );
    let out = check(&src);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(
        lines,
        [
            "11:38 setup-sync-in-no-sync: `a` is #[no_sync] but reaches one-time setup that blocks the host: `CudaContext::load_module`",
            "11:49 setup-sync-in-no-sync: `a` is #[no_sync] but reaches one-time setup that blocks the host: `nvrtc::compile_ptx`",
            "11:69 sync-in-no-sync: `a` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`",
            // `d.streams()` reaches `new_stream` and `fork`: one setup finding per call site.
            "12:30 setup-sync-in-no-sync: `b` is #[no_sync] but reaches one-time setup that blocks the host: `CudaContext::new_stream`",
            "12:50 setup-sync-in-no-sync: `b` is #[no_sync] but reaches one-time setup that blocks the host: `CudaContext::new`",
        ],
        "{out}"
    );
}

#[test]
fn dropped_pinned_host_slices_block() {
    let src = with_prelude(
        "use cudarc::driver::PinnedHostSlice;\n\
         #[no_sync] fn scope_end(ctx: &Arc<CudaContext>) -> Result<(), ()> {\n\
           let staging = unsafe { ctx.alloc_pinned::<f32>(1024) }?;\n\
           Ok(())\n\
         }\n\
         #[no_sync] fn explicit(p: PinnedHostSlice<f32>) { drop(p); }\n\
         #[no_sync] fn typed(make: fn() -> u8) { let _p: PinnedHostSlice<u8> = todo(make); }\n\
         #[no_sync] fn borrowed(p: &PinnedHostSlice<f32>) { drop(p); }\n\
         #[no_sync] fn handed_back(ctx: &Arc<CudaContext>) -> PinnedHostSlice<f32> {\n\
           let p = unsafe { ctx.alloc_pinned::<f32>(8) }.unwrap();\n\
           p\n\
         }\n\
         struct Holder { p: PinnedHostSlice<f32> }\n\
         #[no_sync] fn moved_away(p: PinnedHostSlice<f32>, q: PinnedHostSlice<f32>, v: &mut Vec<PinnedHostSlice<f32>>) -> Result<Holder, ()> {\n\
           let r = p; v.push(r); let h = Holder { p: q }; Ok(h)\n\
         }\n",
    );
    let out = check(&src);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("  ") || l.starts_with("  ="))
        .filter(|l| !l.contains("unresolved-call") && !l.contains("not followed"))
        .collect();
    let blocks = "its `Drop` (`cudarc::driver::PinnedHostSlice::drop`) blocks the host";
    assert_eq!(
        lines,
        [
            "8:1 sync-in-no-sync: `scope_end` is #[no_sync] but reaches a host-blocking call: `PinnedHostSlice::drop`".to_owned(),
            format!("  = `staging` is dropped here, and {blocks}"),
            "9:51 sync-in-no-sync: `explicit` is #[no_sync] but reaches a host-blocking call: `PinnedHostSlice::drop`".to_owned(),
            format!("  = `p` is dropped here, and {blocks}"),
            "10:83 sync-in-no-sync: `typed` is #[no_sync] but reaches a host-blocking call: `PinnedHostSlice::drop`".to_owned(),
            format!("  = `_p` is dropped here, and {blocks}"),
        ],
        "{out}"
    );
}

#[test]
fn setup_behind_an_allowed_cache_is_silenced_and_real_waits_remain() {
    let src = with_prelude(
        "use cudarc::nvrtc::Ptx;\n\
         struct Dev { ctx: Arc<CudaContext>, stream: Arc<CudaStream> }\n\
         impl Dev { fn get_or_load_func(&self, ptx: Ptx) { self.ctx.load_module(ptx); } }\n\
         #[no_sync] fn fwd(d: &Dev, p: Ptx) { d.get_or_load_func(p); d.stream.synchronize(); }\n",
    );
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let help: Vec<&str> = a
        .diagnostics
        .iter()
        .flat_map(|d| d.notes.iter().filter_map(|n| n.help_text()))
        .collect();
    assert!(
        help[0].contains("allow the function that calls it in the config (`allow = [\"t::Dev::get_or_load_func\"]`)"),
        "{help:?}"
    );
    let (cfg, sources, diags) = config_from_toml("allow = [\"t::Dev::get_or_load_func\"]\n");
    assert!(diags.is_empty(), "{diags:?}");
    let a = analyze_src(&src, &cfg, sources);
    let codes: Vec<&str> = a.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["sync-in-no-sync"]);
}

/// A struct that holds a blocking-`Drop` value drops it with itself: a field (directly,
/// in an `Option`, in a struct field), when the local is known to own the struct (a
/// struct literal, a written type). A borrow of one drops nothing, nor does a field
/// declared as a reference, nor an `Arc` (which drops only its last reference).
#[test]
fn a_struct_dropped_drops_its_fields() {
    let src = with_prelude(
        "use cudarc::driver::PinnedHostSlice;\n\
         pub struct Staging { buf: PinnedHostSlice<f32>, n: usize }\n\
         pub struct Outer { inner: Staging, spare: Option<PinnedHostSlice<u8>> }\n\
         pub struct View<'a> { buf: &'a PinnedHostSlice<f32>, shared: Arc<PinnedHostSlice<f32>> }\n\
         fn get(o: &Outer) -> &Staging { &o.inner }\n\
         #[no_sync] fn lit(p: PinnedHostSlice<f32>) { let s = Staging { buf: p, n: 1 }; }\n\
         #[no_sync] fn nested(make: fn() -> Outer) { let o: Outer = make(); }\n\
         #[no_sync] fn borrowed(o: &Outer) { let s = get(o); }\n\
         #[no_sync] fn views(v: View<'_>) { let w = View { buf: v.buf, shared: v.shared }; }\n\
         pub struct Spare { p: Option<PinnedHostSlice<u8>> }\n\
         #[no_sync] fn spare(p: PinnedHostSlice<u8>) { let s = Spare { p: Some(p) }; }\n",
    );
    let out = check(&src);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("  ") || l.starts_with("  ="))
        .filter(|l| !l.contains("unresolved-call") && !l.contains("not followed"))
        .collect();
    assert_eq!(
        lines,
        [
            "9:80 sync-in-no-sync: `lit` is #[no_sync] but reaches a host-blocking call: `PinnedHostSlice::drop`",
            "  = `s.buf` is dropped here, and its `Drop` (`cudarc::driver::PinnedHostSlice::drop`) blocks the host",
            // `o.inner.buf` and `o.spare` are dropped at one site: one finding.
            "10:68 sync-in-no-sync: `nested` is #[no_sync] but reaches a host-blocking call: `PinnedHostSlice::drop`",
            "  = `o.inner.buf` is dropped here, and its `Drop` (`cudarc::driver::PinnedHostSlice::drop`) blocks the host",
            "14:77 sync-in-no-sync: `spare` is #[no_sync] but reaches a host-blocking call: `PinnedHostSlice::drop`",
            "  = `s.p` is dropped here, and its `Drop` (`cudarc::driver::PinnedHostSlice::drop`) blocks the host",
        ],
        "{out}"
    );
}
