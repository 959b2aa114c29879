//! Formatting macros and `to_string()`: each value shown reaches its type's `Debug` or
//! `Display` impl, as its placeholder says.

use crate::config::Config;
use crate::source::SourceMap;
use crate::test_support::*;
use std::path::Path;

/// A tensor whose `Debug` and `Display` read it to the host (as candle's do), and a
/// `Shape` whose impls block nothing.
const TENSOR: &str = "use std::fmt;\npub struct Tensor;\npub struct Shape;\n\
    impl fmt::Debug for Tensor { fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { to_host(); Ok(()) } }\n\
    impl fmt::Display for Tensor { fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { to_host(); Ok(()) } }\n\
    impl fmt::Debug for Shape { fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { Ok(()) } }\n\
    #[synchronizes(reason = \"copies the tensor to the host\")] fn to_host() {}\n";

/// `src` after the prelude and [`TENSOR`] (whose 7 lines put `src` at line 11).
fn fmt_chains(src: &str) -> String {
    chains(&with_prelude(&format!("{TENSOR}{src}")))
}

/// The first line of each finding: where, which code.
fn sites(src: &str) -> Vec<String> {
    fmt_chains(src)
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split(": `").next().unwrap_or(l).to_owned())
        .collect()
}

#[test]
fn debug_and_display_placeholders_reach_the_impls() {
    let src = "#[no_sync] fn f(t: &Tensor) -> String { format!(\"{t:?}\") }\n\
               #[no_sync] fn g(t: &Tensor) { println!(\"{}\", t); }\n";
    insta::assert_snapshot!(fmt_chains(src), @"
    11:50 sync-in-no-sync: `f` is #[no_sync] but reaches a host-blocking call: `to_host`
      = this call reaches `t::to_host`, which blocks the host
      t::f -> t::to_host (Blocks, exact, Deny)
      via 11:50 t::f (exact)
      via 7:89 <t::Tensor as Debug>::fmt (exact)
    12:46 sync-in-no-sync: `g` is #[no_sync] but reaches a host-blocking call: `to_host`
      = this call reaches `t::to_host`, which blocks the host
      t::g -> t::to_host (Blocks, exact, Deny)
      via 12:46 t::g (exact)
      via 8:91 <t::Tensor as Display>::fmt (exact)
    ");
}

/// Positional (`{:?}`, `{0}`, `{1}`), named (`{x}` with `x = ..`) and captured arguments
/// each at their own place; a value shown twice is two calls.
#[test]
fn every_kind_of_argument() {
    let src = "#[no_sync] fn f(t: &Tensor, s: &Shape, n: usize) {\n\
               \x20   let _ = format!(\"{:?} {}\", s, t);\n\
               \x20   let _ = format!(\"{1} {0:?}\", s, t);\n\
               \x20   let _ = format!(\"{x:?} {n}\", x = t);\n\
               \x20   let _ = format!(\"{t} and {t:?}\");\n\
               }\n";
    assert_eq!(
        sites(src),
        [
            "12:35 sync-in-no-sync",
            "13:37 sync-in-no-sync",
            "14:38 sync-in-no-sync",
            "15:22 sync-in-no-sync",
            "15:30 sync-in-no-sync",
        ]
    );
}

/// anyhow's `bail!`/`ensure!`/`anyhow!`, `panic!`, `assert!`/`assert_eq!`, `write!`,
/// `dbg!`, and the `tracing`/`log` events with their fields.
#[test]
fn every_formatting_macro() {
    let src = "#[no_sync] fn f(t: &Tensor, ok: bool, w: &mut String) -> anyhow::Result<()> {\n\
               \x20   if !ok { anyhow::bail!(\"bad logits {t:?}\") }\n\
               \x20   anyhow::ensure!(ok, \"bad {}\", t);\n\
               \x20   let _e = anyhow::anyhow!(\"{t}\");\n\
               \x20   assert!(ok, \"{t:?}\");\n\
               \x20   assert_eq!(t, t);\n\
               \x20   write!(w, \"{t}\")?;\n\
               \x20   dbg!(t);\n\
               \x20   tracing::info!(target: \"train\", loss = ?t, \"step {}\", 3);\n\
               \x20   tracing::warn!(%t);\n\
               \x20   log::debug!(\"{:?}\", t);\n\
               \x20   if !ok { panic!(\"{t}\") }\n\
               \x20   Ok(())\n\
               }\n";
    assert_eq!(
        sites(src),
        [
            "12:40 sync-in-no-sync",
            "13:35 sync-in-no-sync",
            "14:31 sync-in-no-sync",
            "15:18 sync-in-no-sync",
            "16:16 sync-in-no-sync",
            "16:19 sync-in-no-sync",
            "17:16 sync-in-no-sync",
            "18:10 sync-in-no-sync",
            "19:45 sync-in-no-sync",
            "20:21 sync-in-no-sync",
            "21:25 sync-in-no-sync",
            "22:22 sync-in-no-sync",
        ]
    );
}

/// `t.to_string()` is `Display`; a `Vec` of tensors shown with `Debug` shows each.
#[test]
fn to_string_and_containers() {
    let src = "#[no_sync] fn f(t: &Tensor) -> String { t.to_string() }\n\
               #[no_sync] fn g(ts: Vec<Tensor>) -> String { format!(\"{ts:?}\") }\n";
    insta::assert_snapshot!(fmt_chains(src), @"
    11:43 sync-in-no-sync: `f` is #[no_sync] but reaches a host-blocking call: `to_host`
      = this call reaches `t::to_host`, which blocks the host
      t::f -> t::to_host (Blocks, exact, Deny)
      via 11:43 t::f (exact)
      via 8:91 <t::Tensor as Display>::fmt (exact)
    12:55 sync-in-no-sync: `g` is #[no_sync] but reaches a host-blocking call: `to_host`
      = this call reaches `t::to_host`, which blocks the host
      t::g -> t::to_host (Blocks, exact, Deny)
      via 12:55 t::g (exact)
      via 7:89 <t::Tensor as Debug>::fmt (exact)
    ");
}

/// Nothing is reported for values whose impls block nothing or are std's, nor for
/// `{:x}`-like traits; a value of unknown type is an unresolved call.
#[test]
fn harmless_values_report_nothing() {
    let src = "#[no_sync] fn f(s: &Shape, v: Vec<u32>, name: String) {\n\
               \x20   println!(\"{s:?} {v:?} {name} {} {:x}\", 3, 255);\n\
               \x20   let _ = s.to_string();\n\
               }\n";
    assert_eq!(fmt_chains(src), "");
}

/// A value shown only while a macro builds an error or panic message waits only on a path
/// that fails: certain in the root's own body (`f`'s `bail!`), possible below it (`check`'s
/// `bail!` and `assert!` message), with a note; where a decided chain reaches the same sink
/// (`both`'s `println!`), it is the one reported.
#[test]
fn error_messages_below_the_root_are_possible_waits() {
    let src = "fn check(t: &Tensor, ok: bool) -> anyhow::Result<()> {\n\
               \x20   if !ok { anyhow::bail!(\"bad {t:?}\") }\n\
               \x20   assert!(ok, \"{t}\");\n\
               \x20   Ok(())\n\
               }\n\
               #[no_sync] fn f(t: &Tensor, ok: bool) -> anyhow::Result<()> {\n\
               \x20   if !ok { anyhow::bail!(\"bad {t:?}\") }\n\
               \x20   check(t, ok)\n\
               }\n\
               fn both(t: &Tensor, ok: bool) -> anyhow::Result<()> {\n\
               \x20   if !ok { anyhow::bail!(\"bad {t:?}\") }\n\
               \x20   println!(\"{t}\");\n\
               \x20   Ok(())\n\
               }\n\
               #[no_sync] fn g(t: &Tensor) -> anyhow::Result<()> { both(t, true) }\n";
    insta::assert_snapshot!(fmt_chains(src), @"
    17:33 sync-in-no-sync: `f` is #[no_sync] but reaches a host-blocking call: `to_host`
      = this call reaches `t::to_host`, which blocks the host
      t::f -> t::to_host (Blocks, exact, Deny)
      via 17:33 t::f (exact)
      via 7:89 <t::Tensor as Debug>::fmt (exact)
    18:5 possible-sync-in-no-sync: `f` is #[no_sync] but reaches a host-blocking call: `to_host`
      = this call reaches `t::to_host`, which blocks the host
      t::f -> t::to_host (Blocks, exact, Warn)
      via 18:5 t::f (exact)
      via 13:18 t::check (exact)
      via 8:91 <t::Tensor as Display>::fmt (exact)
    25:53 sync-in-no-sync: `g` is #[no_sync] but reaches a host-blocking call: `to_host`
      = this call reaches `t::to_host`, which blocks the host
      t::g -> t::to_host (Blocks, exact, Deny)
      via 25:53 t::g (exact)
      via 22:15 t::both (exact)
      via 8:91 <t::Tensor as Display>::fmt (exact)
    ");
    let src = with_prelude(&format!("{TENSOR}{src}"));
    let a = analyze_src(&src, &Config::default(), SourceMap::new(Path::new(ROOT)));
    let notes: Vec<&str> = (a.diagnostics.iter().flat_map(|d| &d.notes))
        .map(|n| n.message.as_str())
        .filter(|m| m.contains("only to build"))
        .collect();
    insta::assert_snapshot!(notes.join("\n"), @"
    `check` calls `Tensor::fmt` only to build the message of `assert!`: the host waits there only when `check` fails
    ");
}
