//! Name-only guesses go only where a call can go: into the caller's crate and its
//! dependency closure, to methods taking as many arguments.

use crate::config::Config;
use crate::source::SourceMap;
use crate::test_support::*;
use std::path::Path;

/// `opaque()` resolves nowhere: `x`'s type is unknown, so `x.fetch(1)` is a guess.
const UNKNOWN_RECV: &str =
    "use nosync::no_sync;\n#[no_sync] pub fn step() { let x = opaque(); x.fetch(1); }\n";

fn lib_with_fetch(name: &str) -> String {
    format!(
        "use nosync::synchronizes;\npub struct {name};\n\
         impl {name} {{ #[synchronizes] pub fn fetch(&self, _i: usize) {{}} }}\n"
    )
}

#[test]
fn a_name_only_guess_never_goes_into_a_crate_the_caller_does_not_depend_on() {
    let files = [
        ("app/src/lib.rs", UNKNOWN_RECV),
        ("dep/src/lib.rs", &lib_with_fetch("Near") as &str),
        ("other/src/lib.rs", &lib_with_fetch("Far")),
    ];
    let crates = [
        ("app", "app/src/lib.rs"),
        ("dep", "dep/src/lib.rs"),
        ("other", "other/src/lib.rs"),
    ];
    // app depends on dep only: `x.fetch(1)` may be `Near::fetch`, never `Far::fetch`.
    let out = chains_tree(&files, &crates, &[(0, 1)]);
    insta::assert_snapshot!(out, @"
    app/src/lib.rs:2:48 possible-sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `Near::fetch`
      = this call reaches `dep::Near::fetch`, which blocks the host
      app::step -> dep::Near::fetch (Blocks, name-only, Warn)
      via 2:48 app::step (name-only)
    ");
    // Through a dependency of a dependency too.
    let out = chains_tree(&files, &crates, &[(0, 2), (2, 1)]);
    insta::assert_snapshot!(out, @"
    app/src/lib.rs:2:48 possible-sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `Far::fetch`
      = this call reaches `other::Far::fetch`, which blocks the host
      app::step -> other::Far::fetch (Blocks, name-only, Warn)
      via 2:48 app::step (name-only)
    app/src/lib.rs:2:48 possible-sync-in-no-sync: `step` is #[no_sync] but reaches a host-blocking call: `Near::fetch`
      = this call reaches `dep::Near::fetch`, which blocks the host
      app::step -> dep::Near::fetch (Blocks, name-only, Warn)
      via 2:48 app::step (name-only)
    ");
    // No dependency at all: nothing to guess, whatever else is analysed.
    let out = chains_tree(&files, &crates, &[]);
    assert_eq!(out, "");
}

#[test]
fn a_name_only_guess_takes_as_many_arguments_as_the_call() {
    let src = "use nosync::{no_sync, synchronizes};\npub struct D;\n\
        impl D { #[synchronizes] pub fn fetch(&self, _i: usize) {} }\n\
        #[no_sync] pub fn two() { let x = opaque(); x.fetch(1, 2); }\n\
        #[no_sync] pub fn one() { let x = opaque(); x.fetch(1); }\n";
    insta::assert_snapshot!(chains(src), @"
    5:47 possible-sync-in-no-sync: `one` is #[no_sync] but reaches a host-blocking call: `D::fetch`
      = this call reaches `t::D::fetch`, which blocks the host
      t::one -> t::D::fetch (Blocks, name-only, Warn)
      via 5:47 t::one (name-only)
    ");
}

#[test]
fn cudarc_sinks_are_guessed_only_for_crates_that_depend_on_cudarc() {
    let src =
        "use nosync::no_sync;\n#[no_sync] pub fn step() { let s = opaque(); s.synchronize(); }\n";
    let with = analyze_src(src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    assert!(render(&with, false).contains("possible-sync-in-no-sync"));
    let mut fx = Fixture::src(src);
    fx.crates[0].deps.retain(|(n, _)| n != "cudarc");
    let without = analyze_fixture(&fx, &Config::default(), fx.sources());
    let out = render(&without, false);
    assert!(!out.contains("sync-in-no-sync"), "{out}");
}

/// A receiver of a known std type is never matched by name to a user method: its
/// methods are std's (or a user trait impl for that type, found by type).
#[test]
fn a_receiver_known_to_be_a_std_type_is_never_guessed() {
    let src = "use nosync::{no_sync, synchronizes};\npub struct D;\n\
        impl D { #[synchronizes] pub fn to_vec(&self) -> Vec<usize> { Vec::new() }\n\
                 #[synchronizes] pub fn windows(&self, _n: usize) {} }\n\
        #[no_sync] pub fn r(v: Vec<usize>, s: &[usize]) -> usize {\n\
            let w: Vec<usize> = v.to_vec(); s.to_vec(); s.windows(2); v.windows(2); w.len() }\n";
    let out = check(src);
    assert!(!out.contains("sync-in-no-sync"), "{out}");
}
