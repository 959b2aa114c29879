//! `#[cfg]` predicates evaluated for the target: items, statements and `mod`s the target
//! leaves out call nothing; those it keeps are analysed.

use crate::config::Config;
use crate::parse::cfg::TargetCfg;
use crate::test_support::{
    Fixture, Input, analyze_crates_with, both_walks, chains_of, with_prelude,
};

/// x86_64-unknown-linux-gnu's cfgs (those the tests read).
fn linux() -> TargetCfg {
    let pairs = [
        ("unix", None),
        ("target_os", Some("linux")),
        ("target_family", Some("unix")),
        ("target_arch", Some("x86_64")),
        ("target_pointer_width", Some("64")),
    ];
    TargetCfg::new(pairs.map(|(n, v)| (n.to_owned(), v.map(str::to_owned))))
}

/// [`super::chains`] of `src` with `#[cfg]` evaluated for `target`.
fn chains_on(src: &str, target: &TargetCfg) -> String {
    let fx = Fixture::src(src);
    let config = Config::default();
    let a = both_walks(|opts| {
        let input = Input {
            target,
            ..fx.input(&config)
        };
        analyze_crates_with(input, opts, &fx.files)
    });
    chains_of(&a, false)
}

const PLATFORM: &str = "#[synchronizes] fn w() {}\n\
    #[cfg(windows)] fn plat() { w() }\n\
    #[cfg(not(windows))] fn plat() {}\n\
    #[cfg(target_os = \"linux\")] fn os() { w() }\n\
    #[cfg(all(unix, target_pointer_width = \"32\"))] fn os() {}\n\
    #[no_sync] fn r() { plat(); os(); }\n\
    #[no_sync] fn s() {\n    #[cfg(target_os = \"macos\")]\n    w();\n    #[cfg(debug_assertions)]\n    w();\n}\n";

/// On Linux, `#[cfg(windows)]` code is left out and `#[cfg(not(windows))]` kept; a
/// statement under `target_os = "macos"` calls nothing, one under `debug_assertions` does
/// (cargo's dev profile).
#[test]
fn predicates_are_the_targets() {
    insta::assert_snapshot!(chains_on(&with_prelude(PLATFORM), &linux()), @"
    9:29 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::r -> t::w (Blocks, exact, Deny)
      via 9:29 t::r (exact)
      via 7:39 t::os (exact)
    14:5 sync-in-no-sync: `s` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::s -> t::w (Blocks, exact, Deny)
      via 14:5 t::s (exact)
    ");
}

/// Without the target's cfgs, each target predicate is taken as true: `#[cfg(windows)]`'s
/// `plat` is analysed, `not(windows)`'s is not, and so is the macOS statement.
#[test]
fn an_unknown_target_analyses_every_platform() {
    insta::assert_snapshot!(chains_on(&with_prelude(PLATFORM), TargetCfg::unknown()), @"
    9:21 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::r -> t::w (Blocks, exact, Deny)
      via 9:21 t::r (exact)
      via 5:29 t::plat (exact)
    9:29 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::r -> t::w (Blocks, exact, Deny)
      via 9:29 t::r (exact)
      via 7:39 t::os (exact)
    12:5 sync-in-no-sync: `s` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::s -> t::w (Blocks, exact, Deny)
      via 12:5 t::s (exact)
    14:5 sync-in-no-sync: `s` is #[no_sync] but reaches a host-blocking call: `w`
      = this call reaches `t::w`, which blocks the host
      t::s -> t::w (Blocks, exact, Deny)
      via 14:5 t::s (exact)
    ");
}
