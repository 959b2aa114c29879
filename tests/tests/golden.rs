//! The lint over every fixture, through the library (`nosync_lint::run`), checked two
//! independent ways (each reports every fixture, then fails naming the failing ones):
//!
//! - `golden_outputs`: the exit code, stdout and stderr, paths normalised, must equal the
//!   insta snapshot `tests/golden/<fixture>.snap`. `INSTA_UPDATE=always cargo test -p
//!   nosync-tests --test golden` rewrites them (a plain failing run leaves
//!   `<fixture>.snap.new` for `cargo insta review`; with `CI` set insta writes nothing), except
//!   where the output contradicts the fixture's annotations: that fixture fails and its
//!   snapshot is neither compared nor written (a broken lint is never blessed). A missing
//!   snapshot fails, and so does a file in `tests/golden/` that is no fixture's snapshot.
//! - `annotations_match`: the `(file, line, code)` of every reported error and warning
//!   (from the same run with `--message-format json`, the lint's machine interface) must
//!   equal the `//~ CODE` (`#~ CODE` in TOML) annotations in the fixture's files; the
//!   human output's `-->` lines must point at the same places; every finding must keep
//!   the finding contract (its chain starts in the root at the primary span; `possible-`
//!   exactly for name-only chains); and both runs exit 2 when an annotated code makes the
//!   run incomplete (`no-roots`, `unparsed-root`), else 1 exactly when an annotated code
//!   is deny-level by default.
//!
//! The lint runs twice per fixture (human, then JSON), and both tests share those runs.
//! `NOSYNC_FIXTURE=<name>` restricts both to one fixture. The fixtures of
//! `fixture::OWN_TEST` have a test each (both checks on one run), `candle_app` and
//! `burn_app`.

use std::ffi::OsString;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use nosync_lint_core::diagnostics::{Code, Level};
use nosync_tests::annotations::{self, Key};
use nosync_tests::fixture::{self, Fixture};
use nosync_tests::{golden, reported};

/// One lint run over one fixture.
struct Run {
    args: Vec<String>,
    exit: i32,
    stdout: String,
    stderr: String,
    /// The same run with `--message-format json`: exit code and stdout.
    json_exit: i32,
    json: String,
}

fn lint(fixture: &Fixture) -> Result<Run, String> {
    let args = fixture.lint_args()?;
    let (exit, stdout, stderr) = run_cli(&args)?;
    // The lint passes on cargo's status lines (`    Updating ..`, `    Blocking ..`) as
    // cargo prints them; whether cargo prints one depends on the machine's cache and locks.
    let stderr: String = stderr
        .lines()
        .filter(|l| !nosync_lint_workspace::is_status_line(l))
        .flat_map(|l| [l, "\n"])
        .collect();
    let mut json_args = args.clone();
    json_args.extend(["--message-format".to_owned(), "json".to_owned()]);
    let (json_exit, json, _) = run_cli(&json_args)?;
    Ok(Run {
        args,
        exit,
        stdout,
        stderr,
        json_exit,
        json,
    })
}

/// `nosync_lint::run` on `args`: exit code, stdout, stderr; a panic is an error.
fn run_cli(args: &[String]) -> Result<(i32, String, String), String> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let exit = catch_unwind(AssertUnwindSafe(|| {
        let args = args.iter().map(OsString::from);
        nosync_lint::run(args, &mut out, &mut err, nosync_lint::Terminal::No)
    }))
    .map_err(|panic| format!("the lint panicked: {}", panic_message(&*panic)))?;
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
    Ok((exit, text(out), text(err)))
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string payload)".to_owned())
}

/// Every selected fixture with its run, computed once for both tests.
fn runs() -> &'static [(Fixture, Result<Run, String>)] {
    static RUNS: OnceLock<Vec<(Fixture, Result<Run, String>)>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let fixtures = fixture::selected().unwrap_or_else(|e| panic!("{e}"));
        fixtures
            .into_iter()
            .map(|f| {
                let run = lint(&f);
                (f, run)
            })
            .collect()
    })
}

/// `fixtures/<name>` for a fixture, the path itself for a stray file in `tests/golden/`.
fn label(name: &str) -> String {
    if name.contains('/') {
        name.to_owned()
    } else {
        format!("fixtures/{name}")
    }
}

/// Collects per-fixture results; panics at the end with every failure, after printing
/// which fixtures passed.
fn finish(test: &str, results: Vec<(String, Result<(), String>)>) {
    let passed: Vec<&str> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(n, _)| n.as_str())
        .collect();
    let failed: Vec<String> = results
        .iter()
        .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{}:\n{e}", label(n))))
        .collect();
    eprintln!("{test}: {} passed: {}", passed.len(), passed.join(", "));
    assert!(
        failed.is_empty(),
        "{test}: {} of {} fixtures failed\n\n{}",
        failed.len(),
        results.len(),
        failed.join("\n\n")
    );
}

#[test]
fn golden_outputs() {
    let mut results = Vec::new();
    for (fixture, run) in runs() {
        let result = run
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|run| golden(fixture, run));
        results.push((fixture.name.clone(), result));
    }
    if std::env::var_os("NOSYNC_FIXTURE").is_none_or(|f| f.is_empty()) {
        results.extend(stale_snapshots());
    }
    finish("golden", results);
}

/// The annotations, then the snapshot: an output that contradicts the fixture's annotations
/// is never compared (or, when blessing, written).
fn golden(fixture: &Fixture, run: &Run) -> Result<(), String> {
    check_annotations(fixture, run)
        .map_err(|e| format!("not snapshotted: the output contradicts the annotations\n{e}"))?;
    let placeholders = golden::placeholders(&fixture::repo_root());
    let verbose = run.args.iter().any(|a| a == "-v" || a == "--verbose");
    let text = golden::render(run.exit, &run.stdout, &run.stderr);
    let text = golden::normalise(&text, &placeholders, verbose);
    let command = golden::normalise(&run.args.join(" "), &placeholders, false);
    snapshot(&fixture.name, &command, &text)
}

/// A fixture of `fixture::OWN_TEST`: its annotations and its snapshot, on one run.
fn own_test(name: &str) {
    let result = fixture::named(name).and_then(|f| lint(&f).and_then(|run| golden(&f, &run)));
    finish(name, vec![(name.to_owned(), result)]);
}

/// A classifier on candle 0.9 (CUDA) from the registry, as a user writes it: exactly its
/// real host waits are errors.
#[test]
fn candle_app() {
    own_test("candle-app");
}

/// A training step on burn 0.21 (CUDA) from the registry: four reads of the device, twelve
/// waits inside cubecl, every one in the JSON output (the annotations); the human report
/// shows one diagnostic per read and stays short.
#[test]
fn burn_app() {
    let name = "burn-app";
    let result = fixture::named(name).and_then(|f| {
        let run = lint(&f)?;
        golden(&f, &run)?;
        let lines = run.stdout.lines().count();
        match lines < 150 {
            true => Ok(()),
            false => Err(format!("the human report has {lines} lines, not under 150")),
        }
    });
    finish(name, vec![(name.to_owned(), result)]);
}

/// Compares `text` with the snapshot `tests/golden/<name>.snap` (insta: written instead under
/// `INSTA_UPDATE=always`); a mismatch is an `Err` (insta prints the diff), so that every
/// fixture is compared before the test fails.
fn snapshot(name: &str, command: &str, text: &str) -> Result<(), String> {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(golden::dir());
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_description(command);
    catch_unwind(AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(name, text));
    }))
    .map_err(|panic| {
        format!(
            "{} (the diff is above); if the new output is right: `{}`",
            panic_message(&*panic),
            golden::BLESS_COMMAND
        )
    })
}

/// A file in `tests/golden/` that is not the snapshot of a fixture is an error (insta's own
/// work files, `.snap.new` and `.pending-snap`, are left to `cargo insta`).
fn stale_snapshots() -> Vec<(String, Result<(), String>)> {
    let names: Vec<&str> = runs()
        .iter()
        .map(|(f, _)| f.name.as_str())
        .chain(fixture::OWN_TEST.iter().copied())
        .collect();
    let Ok(entries) = std::fs::read_dir(golden::dir()) else {
        return Vec::new();
    };
    let mut stale: Vec<String> = entries
        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
        .filter(|file| !file.ends_with(".snap.new") && !file.ends_with(".pending-snap"))
        .filter(|file| {
            file.strip_suffix(".snap")
                .is_none_or(|stem| !names.contains(&stem))
        })
        .collect();
    stale.sort();
    stale
        .into_iter()
        .map(|file| {
            let path = format!("tests/golden/{file}");
            let error = format!("{path} is no fixture's snapshot (want <fixture>.snap); delete it");
            (path, Err(error))
        })
        .collect()
}

fn is_code(word: &str) -> bool {
    Code::from_name(word).is_some()
}

/// Compares one fixture's reported diagnostics (from the JSON stream) with its
/// annotations; checks the finding contract, that the human output points at the same
/// places, and the exit codes.
fn check_annotations(fixture: &Fixture, run: &Run) -> Result<(), String> {
    let expected = annotations::collect(&fixture.dir, &is_code).map_err(|e| e.join("\n"))?;
    let json = reported::parse_json(&run.json)?;
    // Relative paths in the output are relative to the analysed workspace's root, which
    // is the fixture directory.
    let found = reported::keys(&json.diagnostics, &fixture.dir, &fixture.dir)?;
    let output = format!("{}\n{}", run.stdout, run.stderr);
    let mut problems = Vec::new();
    if let Some(diff) = annotations::compare(&expected, &found) {
        problems.push(diff);
    }
    if !json.violations.is_empty() {
        let list = json.violations.join("\n    ");
        problems.push(format!("  findings break the contract:\n    {list}\n"));
    }
    // The human output shows the findings of one call in a root as one diagnostic: the
    // places and codes must be the same, not their number.
    let mut distinct = found.clone();
    distinct.dedup();
    let human = reported::keys(&reported::parse_human(&output), &fixture.dir, &fixture.dir);
    match human.map(|mut rendered| {
        rendered.dedup();
        rendered
    }) {
        Ok(rendered) if rendered == distinct => {}
        Ok(rendered) => problems.push(format!(
            "  the human output disagrees with the JSON output:\n{}",
            annotations::compare(&distinct, &rendered).unwrap_or_default()
        )),
        Err(e) => problems.push(format!("  human output: {e}\n")),
    }
    let want_exit = if expected.iter().any(is_incomplete) {
        2
    } else {
        i32::from(expected.iter().any(is_deny))
    };
    if (run.exit, run.json_exit) != (want_exit, want_exit) {
        let (human, json_exit) = (run.exit, run.json_exit);
        problems.push(format!(
            "  exit code {human} (JSON run: {json_exit}), expected {want_exit}\n"
        ));
    }
    if json.success != Some(want_exit == 0) {
        problems.push(format!("  build-finished.success is {:?}\n", json.success));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{}  lint output:\n{}",
        problems.concat(),
        indent(&output)
    ))
}

/// A deny-level code that makes the run not a verdict (exit status 2).
fn is_incomplete(key: &Key) -> bool {
    Code::from_name(&key.code).is_some_and(|c| c.incomplete() && c.default_level() == Level::Deny)
}

fn is_deny(key: &Key) -> bool {
    Code::from_name(&key.code).is_some_and(|c| c.default_level() == Level::Deny)
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    | {l}\n")).collect()
}

#[test]
fn annotations_match() {
    let mut results = Vec::new();
    for (fixture, run) in runs() {
        let result = run
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|run| check_annotations(fixture, run));
        results.push((fixture.name.clone(), result));
    }
    finish("annotations", results);
}
