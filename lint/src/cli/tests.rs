//! The command line in-process: what reaches `out` and `err`, and the exit code.

use super::{Terminal, run, run_then_exit};
use std::path::Path;

/// `cargo nosync-lint ARGS` with `out` a terminal or not: exit code, stdout, stderr.
fn lint(args: &[&str], terminal: Terminal) -> (i32, String, String) {
    lint_with(run, args, terminal)
}

type Entry = fn(
    std::vec::IntoIter<std::ffi::OsString>,
    &mut dyn std::io::Write,
    &mut dyn std::io::Write,
    Terminal,
) -> i32;

/// [`lint`] through `entry` ([`run`] or [`run_then_exit`]).
fn lint_with(entry: Entry, args: &[&str], terminal: Terminal) -> (i32, String, String) {
    let argv: Vec<std::ffi::OsString> = ["cargo-nosync-lint", "nosync-lint"]
        .into_iter()
        .chain(args.iter().copied())
        .map(Into::into)
        .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = entry(argv.into_iter(), &mut out, &mut err, terminal);
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    (exit, text(out), text(err))
}

/// The binary's entry (which leaves the analysis' memory to the process exit) answers as
/// `run` does, findings, statistics and tool errors alike.
#[test]
fn the_binarys_entry_answers_as_run_does() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/Cargo.toml");
    let demo = demo.display().to_string();
    let args = [
        "--manifest-path",
        demo.as_str(),
        "--no-cache",
        "--message-format",
        "json",
    ];
    let answer = without_status(lint_with(run, &args, Terminal::No));
    assert_eq!(answer.0, 1, "{answer:?}");
    let exiting = without_status(lint_with(run_then_exit, &args, Terminal::No));
    assert_eq!(exiting, answer);
    let missing = [
        "--manifest-path",
        "/nonexistent/nosync-lint-test/Cargo.toml",
    ];
    let answer = without_status(lint_with(run, &missing, Terminal::No));
    assert_eq!(answer.0, 2, "{answer:?}");
    let exiting = without_status(lint_with(run_then_exit, &missing, Terminal::No));
    assert_eq!(exiting, answer);
}

/// An answer without cargo's status lines on stderr, which depend on what else runs
/// (`Blocking waiting for file lock on package cache` while another test runs cargo).
fn without_status((exit, out, err): (i32, String, String)) -> (i32, String, String) {
    let kept: Vec<&str> = err
        .lines()
        .filter(|l| !crate::workspace::is_status_line(l))
        .collect();
    (exit, out, kept.iter().map(|l| format!("{l}\n")).collect())
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

/// A `--target` rustc does not know is a tool error that says so, with rustc's words.
#[test]
fn an_unknown_target_is_a_tool_error() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/Cargo.toml");
    let demo = demo.display().to_string();
    let args = ["--manifest-path", &demo, "--no-cache", "--no-deps"];
    let (exit, out, err) = lint(
        &[&args[..], &["--target", "no-such-triple"]].concat(),
        Terminal::No,
    );
    assert_eq!((exit, out.as_str()), (2, ""), "{err}");
    let said = "error: cannot read the cfgs of target `no-such-triple`: ";
    assert!(err.starts_with(said), "{err}");
    assert!(err.ends_with("(from `rustc --print cfg`)\n"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A mistyped code on the command line is a tool error before any analysis, with the
/// closest known code as a "did you mean" (`-A`, `-D`, `-W` and `--explain` alike).
#[test]
fn a_mistyped_code_gets_the_closest_one() {
    let known: Vec<&str> = crate::diagnostics::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let known = known.join(", ");
    let missing = "/nonexistent/nosync-lint-test/Cargo.toml";
    let level = lint(
        &["--manifest-path", missing, "-A", "sync-in-nosync"],
        Terminal::No,
    );
    let expected = format!(
        "error: unknown diagnostic code `sync-in-nosync`; known codes: warnings, {known}\n  \
         = help: did you mean `sync-in-no-sync`?\n"
    );
    assert_eq!(level, (2, String::new(), expected));
    let explain = lint(&["--explain", "setup-sync"], Terminal::No);
    let expected = format!(
        "error: no diagnostic code named `setup-sync`; known codes: {known}\n  \
         = help: did you mean `setup-sync-in-no-sync`?\n"
    );
    assert_eq!(explain, (2, String::new(), expected));
    let far = lint(
        &["-D", "E0308", "--explain", "sync-in-no-sync"],
        Terminal::No,
    );
    let expected =
        format!("error: unknown diagnostic code `E0308`; known codes: warnings, {known}\n");
    assert_eq!(far, (2, String::new(), expected));
}
