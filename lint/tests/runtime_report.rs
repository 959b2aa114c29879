//! `--runtime-report` on `fixtures/runtime-report`: the advice of a missed wait, applied,
//! makes it a finding the same report confirms; a report that cannot be joined (another
//! format or version, malformed JSON, frames of other sources) is a located error, exit 2.
//! The three outputs of the join are snapshots of `formats_fixtures.rs`.

use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runtime-report");
    dir.canonicalize().unwrap_or(dir)
}

/// `cargo nosync-lint --manifest-path <fixture> --color never ARGS`: exit, stdout, stderr.
fn lint(args: &[&str]) -> (i32, String, String) {
    let manifest = fixture().join("Cargo.toml").display().to_string();
    let argv = [
        "cargo-nosync-lint",
        "--manifest-path",
        &manifest,
        "--color",
        "never",
        "-q",
    ]
    .into_iter()
    .chain(args.iter().copied())
    .map(Into::into);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = nosync_lint::run(argv, &mut out, &mut err, nosync_lint::Terminal::No);
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (exit, text(out), text(err))
}

/// The messages of a `--message-format short` run whose code is `code`, in order.
fn lines_of(stdout: &str, code: &str) -> Vec<String> {
    let tag = format!("[{code}]");
    stdout
        .lines()
        .filter(|l| l.contains(&tag))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_advice_applied_makes_the_missed_wait_a_confirmed_finding() {
    let report = fixture().join("report.json").display().to_string();
    let (exit, stdout, stderr) = lint(&["--runtime-report", &report]);
    assert_eq!(exit, 1, "{stderr}");
    let missed = stdout
        .split("warning[missed-wait]")
        .nth(1)
        .unwrap_or_default();
    let advice = "`sinks = [\"runtime_report::driver::wait_idle\"]`";
    assert!(missed.contains(advice), "{stdout}");
    let config = fixture().join("sinks.toml").display().to_string();
    let args = [
        "--runtime-report",
        &report,
        "--config",
        &config,
        "--message-format",
        "short",
    ];
    let (exit, applied, stderr) = lint(&args);
    assert_eq!(exit, 1, "{stderr}");
    assert_eq!(
        lines_of(&applied, "missed-wait"),
        Vec::<String>::new(),
        "{applied}"
    );
    let (_, json, _) = lint(&[
        "--runtime-report",
        &report,
        "--config",
        &config,
        "--message-format",
        "json",
    ]);
    let observed: Vec<(String, String)> = json
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|m| {
            let f = &m["nosync"];
            let status = f["runtime"]["status"].as_str()?.to_owned();
            Some((f["sink"].as_str()?.to_owned(), status))
        })
        .collect();
    let expected = [
        ("runtime_report::metrics::loss_value", "observed"),
        ("runtime_report::driver::wait_idle", "observed"),
        ("runtime_report::metrics::grad_norm", "observed"),
        ("runtime_report::metrics::save_weights", "not-observed"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(s, t)| (s.to_string(), t.to_string()))
        .collect();
    assert_eq!(observed, expected);
}

/// Runs the join with the report `text` (written to a scratch file); stderr with the
/// file's directory as `$TMP`, and the exit code.
fn join_error(name: &str, text: &str) -> (i32, String) {
    let tmp = tempfile::tempdir().expect("scratch dir");
    let dir = tmp.path();
    let path = dir.join(name);
    std::fs::write(&path, text).expect("report written");
    let (exit, stdout, stderr) = lint(&["--runtime-report", &path.display().to_string()]);
    assert_eq!(stdout, "", "no join printed: {stdout}");
    (exit, stderr.replace(&dir.display().to_string(), "$TMP"))
}

#[test]
fn a_report_that_cannot_be_joined_is_a_located_error() {
    let good = std::fs::read_to_string(fixture().join("report.json")).expect("report.json");
    let cases = [
        (
            "version.json",
            good.replace("\"version\": 1", "\"version\": 2"),
        ),
        (
            "format.json",
            good.replace("\"nosync-wait-report\"", "\"perf-script\""),
        ),
        (
            "malformed.json",
            good.replacen("\"sites\": [", "\"sites\": [[", 1),
        ),
        (
            "other-build.json",
            good.replace("\"line\": 21", "\"line\": 40"),
        ),
        (
            "other-scope.json",
            good.replace(
                "\"function\": \"runtime_report::train::step\", \"file\": \"src/train.rs\", \"line\": 9",
                "\"function\": \"gone\", \"file\": \"src/train.rs\", \"line\": 30",
            ),
        ),
        (
            "other-file.json",
            good.replace(
                "src/metrics.rs\", \"line\": 14",
                "src/gone.rs\", \"line\": 14",
            ),
        ),
    ];
    let mut out = String::new();
    for (name, text) in cases {
        assert_ne!(text, good, "{name}: the case changes the report");
        let (exit, stderr) = join_error(name, &text);
        assert_eq!(exit, 2, "{name}: {stderr}");
        out.push_str(&stderr);
    }
    insta::assert_snapshot!(out);
}

/// Without line tables the frames have no file or line: the join matches by function names
/// and says so once, with the profile setting that adds them.
#[test]
fn without_line_tables_the_join_matches_by_names_and_says_so_once() {
    let good = std::fs::read_to_string(fixture().join("report.json")).expect("report.json");
    let mut report: serde_json::Value = serde_json::from_str(&good).expect("JSON");
    report["line_tables"] = false.into();
    for site in report["sites"].as_array_mut().into_iter().flatten() {
        for frame in site["frames"].as_array_mut().into_iter().flatten() {
            frame["file"] = serde_json::Value::Null;
            frame["line"] = serde_json::Value::Null;
        }
    }
    let tmp = tempfile::tempdir().expect("scratch dir");
    let path = tmp.path().join("no-lines.json");
    std::fs::write(&path, report.to_string()).expect("report written");
    let (exit, stdout, stderr) = lint(&["--runtime-report", &path.display().to_string()]);
    assert_eq!(exit, 1, "{stderr}");
    let setting = "`[profile.release] debug = \"line-tables-only\"`";
    assert_eq!(stdout.matches(setting).count(), 1, "{stdout}");
    let observed = stdout.matches("= note: observed: 2000 waits").count();
    assert_eq!(observed, 3, "two findings and the missed wait: {stdout}");
    assert_eq!(
        stdout.matches("= note: not observed").count(),
        1,
        "{stdout}"
    );
}

/// A site in a `forbid()` block belongs to the root whose body holds the block.
#[test]
fn a_forbid_blocks_site_is_joined_to_the_root_that_holds_it() {
    let good = std::fs::read_to_string(fixture().join("report.json")).expect("report.json");
    let mut report: serde_json::Value = serde_json::from_str(&good).expect("JSON");
    for site in report["sites"].as_array_mut().into_iter().flatten() {
        if site["in_scope"] == true {
            site["scope"] = serde_json::json!({
                "kind": "forbid", "function": null, "file": "src/train.rs", "line": 10
            });
        }
    }
    let tmp = tempfile::tempdir().expect("scratch dir");
    let path = tmp.path().join("forbid.json");
    std::fs::write(&path, report.to_string()).expect("report written");
    let (exit, stdout, stderr) = lint(&["--runtime-report", &path.display().to_string()]);
    assert_eq!(exit, 1, "{stderr}");
    assert_eq!(
        stdout.matches("= note: observed: 2000 waits").count(),
        3,
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("warning[missed-wait]").count(),
        1,
        "{stdout}"
    );
}

/// The sinks of the JSON run joined with the report `text`, each with its runtime status.
fn statuses(text: &str) -> Vec<(String, String)> {
    let tmp = tempfile::tempdir().expect("scratch dir");
    let path = tmp.path().join("report.json");
    std::fs::write(&path, text).expect("report written");
    let report = path.display().to_string();
    let (_, json, _) = lint(&["--runtime-report", &report, "--message-format", "json"]);
    json.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|m| {
            let f = &m["nosync"];
            let status = f["runtime"]["status"].as_str()?.to_owned();
            Some((f["sink"].as_str()?.to_owned(), status))
        })
        .collect()
}

/// A hook names a `#[no_sync]` fn by the frame of that name; where the frames end before it,
/// by its name alone, and an older hook named a library's namesake below it. Either way the
/// scope's place (the attribute's line) finds the root, and the join is the same.
#[test]
fn a_scope_named_by_its_last_segment_or_a_namesake_is_found_by_its_place() {
    let good = std::fs::read_to_string(fixture().join("report.json")).expect("report.json");
    let expected = statuses(&good);
    assert!(
        expected.iter().any(|(_, s)| s == "observed"),
        "{expected:?}"
    );
    for name in ["step", "<other::Dev as other::Backend>::step"] {
        let text = good.replace(
            "\"no_sync\", \"function\": \"runtime_report::train::step\"",
            &format!("\"no_sync\", \"function\": \"{name}\""),
        );
        assert_ne!(text, good);
        assert_eq!(statuses(&text), expected, "{name}");
    }
}

/// Two call stacks that reach one wait the lint lost at one place (a loop's two callers of the
/// same helper, deeper frames apart) are one `missed-wait`, with both observations summed.
#[test]
fn sites_lost_at_one_place_are_one_missed_wait() {
    let good = std::fs::read_to_string(fixture().join("report.json")).expect("report.json");
    let lost = "{ \"function\": \"runtime_report::train::step\", \"file\": \"src/train.rs\", \"line\": 12 }";
    let start = good
        .find("    {\n      \"api\": \"cuCtxSynchronize\"")
        .expect("the lost site");
    let end = start + good[start..].find("\n    },").expect("its end") + "\n    },".len();
    let twin = good[start..end]
        .replace(lost, &format!("{lost},\n        {{ \"function\": \"runtime_report::main\", \"file\": null, \"line\": null }}"))
        .replace("\"count\": 2000, \"total_ns\": 25000000", "\"count\": 5, \"total_ns\": 1000000");
    assert_ne!(twin, good[start..end]);
    let text = format!("{}\n{twin}{}", &good[..end], &good[end..]);
    let tmp = tempfile::tempdir().expect("scratch dir");
    let path = tmp.path().join("report.json");
    std::fs::write(&path, text).expect("report written");
    let report = path.display().to_string();
    let (_, stdout, stderr) = lint(&["--runtime-report", &report]);
    assert_eq!(
        stdout.matches("warning[missed-wait]").count(),
        1,
        "{stdout}{stderr}"
    );
    assert!(
        stdout.contains("observed: 2005 waits, 26.0 ms in all, longest 40 µs"),
        "{stdout}"
    );
    assert!(stdout.contains("2 call stacks lost here"), "{stdout}");
}

/// A binary built with `debug = "line-tables-only"` names inlined fns by their name alone
/// (`loss_value`, not `runtime_report::metrics::loss_value`), with their file and line: the
/// join is the same (on an H100 the raw-cudarc example's report was all such frames).
#[test]
fn frames_named_by_the_fn_alone_join_by_their_file_and_line() {
    let good = std::fs::read_to_string(fixture().join("report.json")).expect("report.json");
    let expected = statuses(&good);
    let mut bare = good.clone();
    for path in [
        "metrics::loss_value",
        "train::log_loss",
        "metrics::grad_norm",
        "driver::wait_idle",
    ] {
        let name = path.rsplit("::").next().unwrap_or(path);
        bare = bare.replace(
            &format!("\"function\": \"runtime_report::{path}\""),
            &format!("\"function\": \"{name}\""),
        );
    }
    assert_ne!(bare, good);
    assert_eq!(statuses(&bare), expected);
}

/// A site whose frames end before the root's call (a report cut short) but whose deepest frame
/// calls a sink the lint knows is no gap to configure: the missed wait says so, without a
/// `sinks` entry.
#[test]
fn a_wait_at_a_known_sink_whose_frames_end_early_needs_no_sinks_entry() {
    let good = std::fs::read_to_string(fixture().join("report.json")).expect("report.json");
    let cut = good.replace(
        "{ \"function\": \"runtime_report::metrics::loss_value\", \"file\": \"src/metrics.rs\", \"line\": 8 },\n        { \"function\": \"runtime_report::train::log_loss\", \"file\": \"src/train.rs\", \"line\": 21 },\n        { \"function\": \"runtime_report::train::step\", \"file\": \"src/train.rs\", \"line\": 10 }",
        "{ \"function\": \"runtime_report::train::log_loss\", \"file\": \"src/train.rs\", \"line\": 21 }",
    );
    assert_ne!(cut, good);
    let tmp = tempfile::tempdir().expect("scratch dir");
    let path = tmp.path().join("report.json");
    std::fs::write(&path, cut).expect("report written");
    let (_, stdout, _) = lint(&["--runtime-report", &path.display().to_string()]);
    let missed = stdout
        .split("warning[missed-wait]")
        .nth(1)
        .unwrap_or_default();
    let missed = missed.split("\n\n").next().unwrap_or_default();
    assert!(missed.contains("which the lint knows to wait"), "{stdout}");
    assert!(
        missed.contains("the frames end before they show how `step` reached this call"),
        "{missed}"
    );
    assert!(!missed.contains("sinks = ["), "{missed}");
}
