//! Demand-driven walking changes nothing but the work: on every fixture, a run that walks
//! only the fn bodies the search from the roots reads (the default) prints exactly what a
//! run that walks every fn body (`--walk-every-fn`) prints, in the human and the JSON
//! format, exit code included; only `-v`'s figures of the walked graph differ. And the
//! switch does walk every fn: its `-v` says `fns walked: N of N`.
#![allow(clippy::disallowed_macros)] // a test reports progress on stderr

use nosync_tests::run::with;
use nosync_tests::{fixture, golden};

/// The lint in process, stderr without `-v`'s durations and its figures of the walked graph.
fn run(args: &[String]) -> (i32, String, String) {
    let (exit, out, err) = nosync_tests::run::lint(args, is_walk_figure);
    (exit, out, golden::normalise(&err, &[], true))
}

/// `-v`'s lines that count the walked graph: its size, the table of its call sites (whose
/// rows end with the share resolved) and the JSON statistics.
fn is_walk_figure(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("fns walked:")
        || line.starts_with("edges:")
        || line.starts_with("call sites")
        || line.ends_with(" %")
        || line.ends_with(" -")
        || line.starts_with("{\"reason\":\"nosync-statistics\"")
}

/// `fns walked: N of M` from a `-v` run's stderr: (N, M).
fn walked(args: &[String]) -> Option<(usize, usize)> {
    let has_v = args.iter().any(|a| a == "-v" || a == "--verbose");
    let args = with(args, if has_v { &[] } else { &["-v"] });
    let (_, _, err) = nosync_tests::run::lint(&args, |_| false);
    let line = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("fns walked: "))?;
    let (n, rest) = line.split_once(" of ")?;
    let m = rest.split(' ').next()?;
    Some((n.parse().ok()?, m.parse().ok()?))
}

fn check_identical(args: &[String]) -> Result<(), String> {
    for format in [&[][..], &["--message-format", "json"]] {
        let demand = run(&with(args, format));
        let every = run(&with(&with(args, format), &["--walk-every-fn"]));
        if demand != every {
            return Err(format!(
                "{format:?}: the output differs\n--- walking from the roots (exit {}):\n{}{}\n--- walking every fn (exit {}):\n{}{}",
                demand.0, demand.1, demand.2, every.0, every.1, every.2
            ));
        }
    }
    match walked(&with(args, &["--walk-every-fn"])) {
        Some((n, m)) if n == m => Ok(()),
        found => Err(format!(
            "--walk-every-fn's -v does not say every fn was walked: {found:?}"
        )),
    }
}

#[test]
fn every_fixture_prints_the_same_walking_every_fn() {
    let fixtures = fixture::selected().unwrap_or_else(|e| panic!("{e}"));
    let mut failed = Vec::new();
    let (mut fewer, mut checked) = (0, 0);
    for f in &fixtures {
        let args = f.lint_args().unwrap_or_else(|e| panic!("{}: {e}", f.name));
        if let Err(e) = check_identical(&args) {
            failed.push(format!("fixtures/{}: {e}", f.name));
        }
        if let Some((n, m)) = walked(&args) {
            checked += 1;
            fewer += usize::from(n < m);
        }
    }
    eprintln!(
        "{} fixtures checked; walking from the roots walked fewer fns on {fewer} of {checked}",
        fixtures.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
