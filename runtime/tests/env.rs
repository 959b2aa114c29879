//! `NOSYNC_MODE`, `NOSYNC_GRANULARITY` (read once per process) and `Mode::Warn` (stderr), tested
//! in subprocesses: the parent tests re-run this test binary with the environment set and only
//! one `#[ignore]`d probe selected, then check its stdout and stderr.
#![cfg(not(nosync_off))]

use std::process::{Command, Output};

use nosync::{Mode, SyncSite};

/// Runs the ignored probe `name` in a fresh process with `NOSYNC_MODE` set to `value` (or unset).
fn run_probe(name: &str, value: Option<&str>) -> (String, String) {
    run_probe_with(name, "NOSYNC_MODE", value)
}

/// Runs the ignored probe `name` in a fresh process with `var` set to `value` (or unset).
fn run_probe_with(name: &str, var: &str, value: Option<&str>) -> (String, String) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--ignored",
        "--exact",
        name,
        "--nocapture",
        "--test-threads=1",
    ]);
    match value {
        Some(v) => cmd.env(var, v),
        None => cmd.env_remove(var),
    };
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("re-run the test binary");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr),
    );
    assert!(status.success(), "probe {name} failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "probe {name} did not run:\n{stdout}"
    );
    (stdout.into_owned(), stderr.into_owned())
}

fn probed_mode(stdout: &str) -> &str {
    // libtest may print `test probe_mode ... ` on the same line first.
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("PROBE mode=").map(|(_, m)| m));
    line.expect("the probe prints its mode").trim()
}

#[test]
#[ignore = "probe: run by the other tests of this file in a subprocess"]
fn probe_mode() {
    let first = nosync::mode();
    assert_eq!(nosync::mode(), first, "read once");
    println!("PROBE mode={first}");
}

#[test]
#[ignore = "probe: run by the other tests of this file in a subprocess"]
fn probe_warn() {
    static WAIT: SyncSite = SyncSite::does("probe_warn_wait", "blocks");
    static COPY: SyncSite = SyncSite::may("probe_warn_copy", "may block");
    nosync::with_mode(Mode::Warn, || {
        let _forbid = nosync::forbid();
        for _ in 0..3 {
            assert!(nosync::declare_sync(&WAIT).is_ok());
        }
        assert!(nosync::declare_sync(&COPY).is_ok());
    });
}

#[test]
fn every_valid_value_selects_its_mode() {
    for (m, name) in Mode::ALL.into_iter().zip(Mode::NAMES) {
        let (stdout, stderr) = run_probe("probe_mode", Some(name));
        assert_eq!(probed_mode(&stdout), m.to_string());
        assert!(
            !stderr.contains("nosync:"),
            "a valid value is silent: {stderr}"
        );
    }
    let (stdout, _) = run_probe("probe_mode", Some(" Error "));
    assert_eq!(probed_mode(&stdout), "error");
}

#[test]
fn unset_or_empty_means_the_build_default() {
    for value in [None, Some("")] {
        let (stdout, stderr) = run_probe("probe_mode", value);
        assert_eq!(probed_mode(&stdout), Mode::build_default().to_string());
        assert!(!stderr.contains("nosync:"), "{stderr}");
    }
}

#[test]
fn an_invalid_value_prints_one_message_naming_the_valid_ones() {
    let (stdout, stderr) = run_probe("probe_mode", Some("loud"));
    assert_eq!(probed_mode(&stdout), Mode::build_default().to_string());
    let lines: Vec<_> = stderr.lines().filter(|l| l.contains("nosync:")).collect();
    let expected = format!(
        "nosync: NOSYNC_MODE: `loud` is none of allow, log, warn, error, panic; using the \
         default `{}`",
        Mode::build_default()
    );
    assert_eq!(lines, [expected.as_str()], "{stderr}");
}

#[test]
fn warn_mode_prints_one_stderr_line_per_site() {
    let (_, stderr) = run_probe("probe_warn", None);
    let lines: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("nosync: warning: "))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].contains("`probe_warn_wait` blocks the host (blocks) inside a nosync::forbid()")
    );
    assert!(lines[1].contains("`probe_warn_copy` blocks the host (may block)"));
}

#[test]
#[ignore = "probe: run by the other tests of this file in a subprocess"]
fn probe_granularity() {
    println!("PROBE granularity={:?}", nosync::hook::granularity());
}

/// Every `NOSYNC_*` variable takes one policy: an unknown value is one line on stderr naming
/// what it takes, and the default stands.
#[test]
fn an_invalid_granularity_is_one_stderr_line_like_an_invalid_mode() {
    let (stdout, stderr) = run_probe_with("probe_granularity", "NOSYNC_GRANULARITY", Some("all"));
    assert!(stdout.contains("PROBE granularity=Actual"), "{stdout}");
    let lines: Vec<_> = stderr.lines().filter(|l| l.contains("nosync:")).collect();
    assert_eq!(
        lines,
        ["nosync: NOSYNC_GRANULARITY: `all` is none of declared, actual; using `actual`"],
        "{stderr}"
    );
}
