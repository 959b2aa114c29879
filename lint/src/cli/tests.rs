//! The command line in-process: what reaches `out` and `err`, and the exit code.

use super::{Terminal, run};
use std::path::Path;

/// `cargo nosync-lint ARGS` with `out` a terminal or not: exit code, stdout, stderr.
fn lint(args: &[&str], terminal: Terminal) -> (i32, String, String) {
    let argv = ["cargo-nosync-lint", "nosync-lint"]
        .into_iter()
        .chain(args.iter().copied())
        .map(Into::into);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = run(argv, &mut out, &mut err, terminal);
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    (exit, text(out), text(err))
}

/// cargo's error is printed once, as the lint's tool error, with nothing else.
#[test]
fn a_missing_manifest_is_one_error_line() {
    let missing = "/nonexistent/nosync-lint-test/Cargo.toml";
    let run = lint(&["--manifest-path", missing], Terminal::No);
    let expected =
        format!("error: manifest path `{missing}` does not exist (from `cargo metadata`)\n");
    assert_eq!(run, (2, String::new(), expected));
}

/// `--color auto` colours only an `out` the caller says is a terminal (and `NO_COLOR`, when
/// set and not empty, turns it off).
#[test]
fn color_auto_follows_the_terminal_value_given_to_run() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/Cargo.toml");
    let demo = demo.display().to_string();
    let args = ["--manifest-path", demo.as_str(), "--color", "auto", "-q"];
    let (exit, piped, _) = lint(&args, Terminal::No);
    assert_eq!(exit, 1, "{piped}");
    assert!(piped.contains("error[sync-in-no-sync]"), "{piped}");
    assert!(!piped.contains('\u{1b}'), "{piped}");
    let (exit, terminal, _) = lint(&args, Terminal::Yes);
    assert_eq!(exit, 1, "{terminal}");
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    assert_eq!(terminal.contains("\u{1b}["), !no_color, "{terminal}");
}
