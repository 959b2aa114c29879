//! The command line over fixture crates: insta snapshots of the JSON and SARIF output (paths
//! normalised; the human output of every fixture is the golden snapshot of
//! `tests/tests/golden.rs`, and is not stored again here), the JSON read back as cargo messages,
//! the SARIF validated against the schema, level flags and config levels, the flags
//! rust-analyzer passes, `--explain`, and a baseline round trip on a copy of `fixtures/demo`.
//!
//! Refresh the snapshots with `INSTA_UPDATE=always cargo test -p cargo-nosync-lint --test
//! formats_fixtures` (or `cargo insta review` after a failing run).

use cargo_metadata::Message;
use nosync_lint_core::diagnostics::Code;
use nosync_lint_core::diagnostics::explain::explain;
use serde_json::Value;
use std::path::PathBuf;

mod fixtures_run;
mod formats_support;
use fixtures_run::{
    Run, check_json, check_sarif, demo_copy, edit_file, fixture_args, lint, lint_manifest,
    manifest, normalise, repo,
};

/// Snapshots the JSON and SARIF output of one fixture run, and checks that `--format human`
/// prints what the default run (the golden snapshot's) prints; returns the human run.
fn snapshot_formats(fixture: &str, extra: &[&str]) -> Run {
    let manifest = manifest(fixture);
    let fixture_dir = repo().join("fixtures").join(fixture);
    let extra: Vec<String> = extra
        .iter()
        .map(|a| a.replace("$FIXTURE", &fixture_dir.display().to_string()))
        .collect();
    let with = |format: Option<&str>| {
        let mut args = vec!["--manifest-path", manifest.as_str(), "--color", "never"];
        args.extend(format.map(|f| ["--format", f]).into_iter().flatten());
        args.extend(extra.iter().map(String::as_str));
        lint(&args)
    };
    let human = with(Some("human"));
    let default = with(None);
    assert_eq!(
        (human.exit, &human.stdout),
        (default.exit, &default.stdout),
        "`--format human` is the default output"
    );
    let json = with(Some("json"));
    let sarif = with(Some("sarif"));
    assert_eq!(
        (json.exit, sarif.exit),
        (human.exit, human.exit),
        "formats agree on the exit code"
    );
    let lines = check_json(&json.stdout, &fixture_dir);
    let log = check_sarif(&sarif.stdout);
    let results = log["runs"][0]["results"].as_array().map_or(0, Vec::len);
    assert_eq!(results + 1, lines.len(), "as many results as messages");
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let json_text: Vec<String> = lines.iter().map(pretty).collect();
    insta::assert_snapshot!(
        format!("{fixture}-json"),
        normalise(&json_text.join("\n"), None)
    );
    insta::assert_snapshot!(format!("{fixture}-sarif"), normalise(&pretty(&log), None));
    human
}

#[test]
fn demo_in_three_formats() {
    let human = snapshot_formats("demo", &[]);
    assert_eq!(human.exit, 1, "{}{}", human.stdout, human.stderr);
}

#[test]
fn syntax_error_in_three_formats() {
    let human = snapshot_formats("syntax-error", &[]);
    assert!(human.stdout.contains("parse-error"), "{}", human.stdout);
}

#[test]
fn config_file_in_three_formats() {
    let human = snapshot_formats("config-file", &["--config", "$FIXTURE/nosync.toml"]);
    assert!(human.stdout.contains("config-error"), "{}", human.stdout);
}

#[test]
fn level_flags_decide_what_is_reported_and_the_exit_code() {
    let demo = manifest("demo");
    let run = |flags: &[&str]| {
        let mut args = vec!["--manifest-path", demo.as_str(), "--message-format=short"];
        args.extend(flags);
        lint(&args)
    };
    let plain = run(&[]);
    assert_eq!(plain.exit, 1);
    let errors = plain.stdout.matches(": error[sync-in-no-sync]:").count();
    assert_eq!(errors, 2, "{}", plain.stdout);
    let warned = run(&["-W", "sync-in-no-sync"]);
    assert_eq!(warned.exit, 0);
    assert_eq!(
        warned.stdout.matches(": warning[sync-in-no-sync]:").count(),
        2,
        "{}",
        warned.stdout
    );
    let promoted = run(&["-W", "sync-in-no-sync", "-D", "warnings"]);
    assert_eq!(promoted.exit, 1, "-D warnings promotes warnings");
    let allowed = run(&["-D", "warnings", "-A", "sync-in-no-sync"]);
    assert_eq!((allowed.exit, allowed.stdout.as_str()), (0, ""));
    let last_wins = run(&["-A", "sync-in-no-sync", "--deny=sync-in-no-sync"]);
    assert_eq!(last_wins.exit, 1);
    let unknown = run(&["-D", "sync-in-nosync"]);
    assert_eq!(unknown.exit, 2);
    assert!(
        unknown
            .stderr
            .contains("unknown diagnostic code `sync-in-nosync`"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn accepts_what_rust_analyzer_and_cargo_check_pass() {
    let demo = manifest("demo");
    let run = lint(&[
        "--manifest-path",
        &demo,
        "--message-format=json-diagnostic-rendered-ansi",
        "--all-targets",
        "--keep-going",
        "--workspace",
        "--tests",
        "--all-features",
        "--locked",
        "--target-dir",
        "/nonexistent/target",
        "-j",
        "2",
    ]);
    assert_eq!(run.exit, 1, "{}", run.stderr);
    let messages: Vec<Message> = Message::parse_stream(run.stdout.as_bytes())
        .collect::<Result<_, _>>()
        .expect("cargo messages");
    let rendered: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::CompilerMessage(m) => m.message.rendered.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(rendered.len(), 2);
    assert!(
        rendered.iter().all(|r| r.contains("\u{1b}[")),
        "ANSI colours"
    );
    assert!(matches!(messages.last(), Some(Message::BuildFinished(f)) if !f.success));
    let short = lint(&[
        "--manifest-path",
        &demo,
        "--message-format=json-diagnostic-short",
    ]);
    let first: Value =
        serde_json::from_str(short.stdout.lines().next().unwrap_or_default()).expect("a JSON line");
    let rendered = first["message"]["rendered"].as_str().unwrap_or_default();
    assert!(
        rendered.starts_with("src/model.rs:") && rendered.trim_end().lines().count() == 1,
        "short rendering: {rendered}"
    );
    let bad = lint(&["--manifest-path", &demo, "--message-format", "xml"]);
    assert_eq!(bad.exit, 2);
    assert!(
        bad.stderr.contains("invalid --message-format"),
        "{}",
        bad.stderr
    );
}

#[test]
fn explain_prints_the_docs_section() {
    for &code in Code::ALL {
        let run = lint(&["--explain", code.as_str()]);
        assert_eq!(run.exit, 0);
        assert_eq!(run.stdout.trim_end(), explain(code).unwrap_or_default());
    }
    let run = lint(&["--explain", "E0308"]);
    assert_eq!(run.exit, 2);
    assert!(
        run.stderr.contains("known codes: sync-in-no-sync"),
        "{}",
        run.stderr
    );
}

#[test]
fn baseline_round_trip_fails_only_on_new_findings() {
    let dir = demo_copy(|m| m);
    let root = dir.path();
    let baseline = root.join("nosync-baseline.toml").display().to_string();
    let run = |flags: &[&str]| lint_manifest(&root.join("Cargo.toml"), flags);

    let written = run(&["--write-baseline", &baseline]);
    assert_eq!(written.exit, 0, "{}{}", written.stdout, written.stderr);
    let text = std::fs::read_to_string(&baseline).expect("baseline written");
    assert_eq!(text.matches("[[finding]]").count(), 2, "{text}");
    insta::assert_snapshot!("demo-baseline", text);

    // Unrelated edits: every line of model.rs moves down, a constant changes elsewhere.
    edit_file(&root.join("src/model.rs"), |t| {
        t.replacen("\n", "\n//! (a new line of documentation)\n\n", 1)
    });
    edit_file(&root.join("src/metrics.rs"), |t| {
        t.replace("LOG_EVERY: u64 = 50", "LOG_EVERY: u64 = 100")
    });
    let unrelated = run(&["--baseline", &baseline]);
    assert!(
        unrelated
            .stderr
            .contains("2 finding(s) accepted by the baseline"),
        "{}",
        unrelated.stderr
    );
    assert_eq!(
        (unrelated.exit, unrelated.stdout.trim()),
        (0, "nosync-lint: no findings"),
        "{}",
        unrelated.stderr
    );

    // A new violation: a second hot path that reads the loss.
    edit_file(&root.join("src/model.rs"), |t| {
        t + "\nimpl LinearRegression {\n    #[no_sync]\n    pub fn peek_loss(&self) -> Result<Vec<f32>, DriverError> {\n        self.stream.clone_dtoh(&self.loss)\n    }\n}\n"
    });
    let new = run(&["--baseline", &baseline, "--message-format=short"]);
    assert_eq!(new.exit, 1, "{}{}", new.stdout, new.stderr);
    let reported: Vec<&str> = new.stdout.lines().collect();
    assert_eq!(reported.len(), 1, "only the new finding: {}", new.stdout);
    assert!(
        reported[0].contains("error[sync-in-no-sync]"),
        "{}",
        reported[0]
    );
    assert!(reported[0].contains("peek_loss"), "{}", reported[0]);
    assert!(!reported[0].contains("train_step"), "{}", reported[0]);
}

#[test]
fn stale_baseline_entries_are_reported_at_the_entry() {
    let dir = demo_copy(|m| m);
    let root = dir.path();
    let baseline = root.join("nosync-baseline.toml").display().to_string();
    let run = |flags: &[&str]| lint_manifest(&root.join("Cargo.toml"), flags);
    assert_eq!(run(&["--write-baseline", &baseline]).exit, 0);
    // Fix one of the two syncs: the loss is no longer logged from the hot path.
    edit_file(&root.join("src/model.rs"), |t| {
        t.replace(
            "metrics::log_loss(&self.stream, &self.loss, step)?;",
            "let _ = step;",
        )
    });
    let stale = run(&["--baseline", &baseline, "--format", "json"]);
    assert_eq!(
        stale.exit, 0,
        "a stale entry is a warning: {}",
        stale.stderr
    );
    let lines = check_json(&stale.stdout, root);
    let codes: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["message"]["code"]["code"].as_str())
        .collect();
    assert_eq!(codes, ["stale-baseline-entry"], "{}", stale.stdout);
    let span = &lines[0]["message"]["spans"][0];
    assert_eq!(span["file_name"], "nosync-baseline.toml");
    let text = std::fs::read_to_string(&baseline).expect("baseline");
    let line = span["line_start"].as_u64().unwrap_or(0) as usize;
    let entry = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    assert!(
        entry.starts_with("[[finding]]") || entry.starts_with("code"),
        "points at the entry: {entry}"
    );
    assert!(
        lines[0]["message"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("log_loss") || m.contains("clone_dtoh"))
    );
    let human = run(&["--baseline", &baseline]);
    insta::assert_snapshot!("demo-stale-baseline-human", human.stdout);
    let denied = run(&["--baseline", &baseline, "-D", "warnings"]);
    assert_eq!(denied.exit, 1, "-D warnings fails on stale entries");
}

#[test]
fn config_levels_apply_and_bad_entries_are_config_errors() {
    let relaxed = demo_copy(|m| {
        m + "\n[workspace.metadata.nosync-lint]\nlevels = { \"sync-in-no-sync\" = \"warn\" }\n"
    });
    let manifest = relaxed.path().join("Cargo.toml").display().to_string();
    let run = lint(&["--manifest-path", &manifest, "--message-format=short"]);
    assert_eq!(run.exit, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stdout.matches("warning[sync-in-no-sync]").count(), 2);
    let overridden = lint(&[
        "--manifest-path",
        &manifest,
        "--message-format=short",
        "-D",
        "sync-in-no-sync",
    ]);
    assert_eq!(overridden.exit, 1, "the command line wins over the config");

    let broken = demo_copy(|m| {
        m + "\n[workspace.metadata.nosync-lint]\nlevels = { \"sync-in-nosync\" = \"warn\" }\n"
    });
    let manifest = broken.path().join("Cargo.toml").display().to_string();
    let run = lint(&["--manifest-path", &manifest, "--message-format=short"]);
    assert_eq!(run.exit, 1, "{}{}", run.stdout, run.stderr);
    let config_error = run
        .stdout
        .lines()
        .find(|l| l.contains("error[config-error]"))
        .unwrap_or_else(|| panic!("a config error: {}", run.stdout));
    assert!(
        config_error.starts_with("Cargo.toml:") && config_error.contains("sync-in-nosync"),
        "{config_error}"
    );
}

#[test]
fn unresolved_calls_are_reported_as_the_flags_and_the_config_levels_say() {
    // The CLI has the core make no `unresolved-call-in-no-sync` diagnostic when the levels
    // allow it: each way of raising or lowering it must still decide what is shown.
    let fixture = manifest("unresolved-calls");
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("levels.toml");
    let warn = "levels = { \"unresolved-call-in-no-sync\" = \"warn\" }\n";
    std::fs::write(&config, warn).expect("config written");
    let config = config.display().to_string();
    let shown = |flags: &[&str]| {
        let mut args = vec![
            "--manifest-path",
            fixture.as_str(),
            "--message-format=short",
        ];
        args.extend(flags);
        let run = lint(&args);
        assert_eq!(run.exit, 0, "{}{}", run.stdout, run.stderr);
        run.stdout
            .matches(": warning[unresolved-call-in-no-sync]:")
            .count()
    };
    assert_eq!(shown(&[]), 0, "allowed by default");
    let flagged = shown(&["-W", "unresolved-call-in-no-sync"]);
    assert_eq!(flagged, 4, "the fixture's unresolved calls");
    assert_eq!(shown(&["--config", &config]), flagged, "config levels");
    let lowered = ["--config", &config, "-A", "unresolved-call-in-no-sync"];
    assert_eq!(shown(&lowered), 0, "the command line wins");
    let hidden = ["-W", "unresolved-call-in-no-sync", "-A", "warnings"];
    assert_eq!(shown(&hidden), 0, "`-A warnings` hides them");
}

#[test]
fn color_flag_is_honoured_in_human_output() {
    let demo = manifest("demo");
    let always = lint(&["--manifest-path", &demo, "--color", "always"]);
    assert!(always.stdout.contains("\u{1b}["), "{}", always.stdout);
    let never = lint(&["--manifest-path", &demo, "--color", "never"]);
    assert!(!never.stdout.contains('\u{1b}'), "{}", never.stdout);
    let json = lint(&[
        "--manifest-path",
        &demo,
        "--color",
        "always",
        "--format",
        "json",
    ]);
    assert!(
        !json.stdout.contains("\\u001b"),
        "plain `json` renders without colours, as cargo does"
    );
}

#[test]
fn every_fixture_renders_cargo_json_and_valid_sarif() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo().join("fixtures"))
        .expect("fixtures")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|d| d.join("Cargo.toml").exists())
        // burn-app analyses burn and cubecl (about two minutes in a debug build): its JSON
        // output is checked by its own golden test (`burn_app` in tests/tests/golden.rs).
        .filter(|d| !d.ends_with("burn-app"))
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 3, "fixtures found: {dirs:?}");
    for dir in dirs {
        let manifest = dir.join("Cargo.toml").display().to_string();
        let extra = fixture_args(&dir);
        let with = |format: &str| {
            let mut args = vec!["--manifest-path", manifest.as_str(), "--format", format];
            args.extend(extra.iter().map(String::as_str));
            lint(&args)
        };
        let (json, sarif) = (with("json"), with("sarif"));
        let name = dir.display();
        // Exit 2 only where the run says it checked not everything (a fixture without roots,
        // or with a root that does not parse), never for a tool error.
        let incomplete = ["\"no-roots\"", "\"unparsed-root\""];
        let said = incomplete.iter().any(|c| json.stdout.contains(c));
        assert!(json.exit != 2 || said, "{name}: {}", json.stderr);
        assert_eq!(
            json.exit, sarif.exit,
            "{name}: formats agree on the exit code"
        );
        let lines = check_json(&json.stdout, &dir);
        let log = check_sarif(&sarif.stdout);
        let results = log["runs"][0]["results"].as_array().map_or(0, Vec::len);
        assert_eq!(results + 1, lines.len(), "{name}: one result per message");
        let denied = lines.iter().any(|l| l["message"]["level"] == "error");
        let want = if said { 2 } else { i32::from(denied) };
        assert_eq!(json.exit, want, "{name}: exit follows the levels");
    }
}

/// `--no-deps` on a crate whose chains go into its dependencies says that they were not
/// followed (a warning, exit 0), and an `allow` entry naming a dependency is no config
/// error then (the dependency is not read), while it is one without `--no-deps` when it
/// matches nothing.
#[test]
fn no_deps_says_when_chains_leave_the_workspace() {
    let dir = demo_copy(|m| {
        m.replace(
            "[workspace]",
            "[package.metadata.nosync-lint]\nallow = [\"nosync::no_such_fn\"]\n\n[workspace]",
        )
    });
    let manifest = dir.path().join("Cargo.toml");
    let run = lint_manifest(&manifest, &["--no-deps", "--no-cache", "-q"]);
    assert_eq!(run.exit, 0, "{}{}", run.stdout, run.stderr);
    // How many calls: every call of the demo's step past its first into cudarc (a count
    // that follows what the lint resolves; at least the two chains' first hops).
    let calls = (run.stdout)
        .strip_prefix("warning[chains-leave-workspace]: with --no-deps, ")
        .and_then(|rest| {
            rest.split_once(" calls reached from the no-sync roots could not be followed")
        })
        .and_then(|(n, _)| n.parse::<usize>().ok());
    assert!(calls.is_some_and(|n| n >= 2), "{}", run.stdout);
    assert!(
        run.stdout.contains("  --> src/metrics.rs:20:31\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "= note: the members' dependencies are not read with --no-deps: `cudarc`, `nosync`"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("config-error"), "{}", run.stdout);
    let full = lint_manifest(&manifest, &["--no-cache", "-q"]);
    assert_eq!(full.exit, 1, "{}{}", full.stdout, full.stderr);
    assert!(
        full.stdout
            .contains("error[config-error]: `nosync::no_such_fn` matches"),
        "{}",
        full.stdout
    );
    assert!(
        !full.stdout.contains("chains-leave-workspace"),
        "{}",
        full.stdout
    );
}

/// The join with a hand-written wait report (`fixtures/runtime-report/report.json`): two
/// findings confirmed (the costlier first, `rank` by share of time), one not observed, one
/// missed wait with its advice (`lint/tests/runtime_report.rs` applies it).
#[test]
fn runtime_report_in_three_formats() {
    let human = snapshot_formats(
        "runtime-report",
        &["--runtime-report", "$FIXTURE/report.json"],
    );
    assert_eq!(human.exit, 1, "{}{}", human.stdout, human.stderr);
    insta::assert_snapshot!("runtime-report-human", normalise(&human.stdout, None));
}
