//! The speculative analysis changes no output: while `cargo metadata` runs, the lint
//! analyses the selection the offline fallback would make, and keeps that analysis only
//! when cargo's selection turns out the same (`Options::speculate`,
//! `NOSYNC_LINT_SPECULATE=0` turns it off). Every fixture is analysed with it and without,
//! both without the caches (so that cargo runs and nothing else is reused): the
//! diagnostics (codes, messages, spans, hops, notes, origins) and the figures must be
//! identical, and the guess must be confirmed (the fallback is faithful to cargo on every
//! fixture, `fallback-gate`'s cargo failing included). A workspace where the guess is
//! wrong gets exactly the output of a run without speculation.

use nosync_lint::{Analysis, Options, Speculation};
use nosync_lint_core::crate_graph::CrateSpec;
use std::fs;
use std::path::{Path, PathBuf};

/// The analysis with speculation on or off, without the caches (or the error, in words).
fn analyze(opts: &Options, speculate: bool) -> Result<Analysis, String> {
    let mut opts = opts.clone();
    opts.workspace.cache = false;
    opts.speculate = speculate;
    nosync_lint::analyze(&opts, &mut |_| {}).map_err(|e| format!("{e:#}"))
}

/// What a run outputs (the diagnostics, the figures but their times, the crates), and
/// what became of the speculation.
type Output = (
    Result<(String, Vec<CrateSpec>), String>,
    Option<Speculation>,
);

fn output(a: Result<Analysis, String>) -> Output {
    match a {
        Ok(a) => {
            let s = &a.stats;
            let figures = (s.crates, s.files, s.lines, s.fns, s.fns_walked, s.roots);
            let text = format!("{:#?}\n{figures:?}", a.diagnostics);
            (Ok((text, a.crates)), a.speculation.clone())
        }
        Err(e) => (Err(e), None),
    }
}

#[test]
fn speculation_changes_no_output_and_is_confirmed_on_every_fixture() {
    let fixtures = nosync_tests::fixture::selected().unwrap_or_else(|e| panic!("{e}"));
    let mut failed = Vec::new();
    for f in &fixtures {
        let args = f.lint_args().unwrap_or_else(|e| panic!("{e}"));
        let opts = nosync_lint::options_from_args(&args).unwrap_or_else(|e| panic!("{e}"));
        let (plain, none) = output(analyze(&opts, false));
        let (speculated, verdict) = output(analyze(&opts, true));
        if plain != speculated {
            failed.push(format!(
                "{}:\nplain: {plain:?}\nspeculated: {speculated:?}",
                f.name
            ));
        }
        // A fixture whose `cargo metadata` fails before the fallback can: no analysis.
        let expected = plain.is_ok().then_some(Speculation::Confirmed);
        if none.is_some() || verdict != expected {
            failed.push(format!(
                "{}: speculation {verdict:?} (off: {none:?})",
                f.name
            ));
        }
    }
    assert!(!fixtures.is_empty(), "no fixture compared");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// As the CLI runs it, a guess not made when cargo answers is dropped
/// (`Options::drop_late_guess`): which of the two comes first is the machine's, so the
/// verdict is either, and the output is the same as without speculation.
#[test]
fn with_a_late_guess_dropped_the_output_is_the_same_on_every_fixture() {
    let fixtures = nosync_tests::fixture::selected().unwrap_or_else(|e| panic!("{e}"));
    let mut failed = Vec::new();
    for f in &fixtures {
        let args = f.lint_args().unwrap_or_else(|e| panic!("{e}"));
        let mut opts = nosync_lint::options_from_args(&args).unwrap_or_else(|e| panic!("{e}"));
        let (plain, _) = output(analyze(&opts, false));
        opts.drop_late_guess = true;
        let (speculated, verdict) = output(analyze(&opts, true));
        if plain != speculated {
            failed.push(format!(
                "{}:\nplain: {plain:?}\nspeculated: {speculated:?}",
                f.name
            ));
        }
        let expected = [Some(Speculation::Confirmed), Some(Speculation::Late)];
        if plain.is_ok() && !expected.contains(&verdict) {
            failed.push(format!("{}: speculation {verdict:?}", f.name));
        }
    }
    assert!(!fixtures.is_empty(), "no fixture compared");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// A workspace whose root package has a member with a feature: `cargo metadata
/// --all-features` enables every member's features, the offline fallback only the root
/// package's (its features rules are those of the selected packages; a difference of
/// the fallback, kept here as the wrong guess). The feature gates the only path from the
/// root to the sink, so the guess's analysis has no finding and cargo's has one.
fn wrong_guess_workspace(dir: &Path) -> PathBuf {
    let file = |path: &str, text: &str| {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    let package = |name: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
    };
    let app = package("app")
        + "\n[dependencies]\nother = { path = \"other\" }\n\n[workspace]\nmembers = [\"other\"]\n";
    file("Cargo.toml", &app);
    file("src/lib.rs", "pub fn hot() {\n    other::step();\n}\n");
    file(
        "other/Cargo.toml",
        &(package("other") + "\n[features]\nextra = []\n"),
    );
    // The gate is an item's `#[cfg]` (the lint evaluates those, not a statement's).
    let other = "pub fn step() {\n    inner();\n}\n\n#[cfg(feature = \"extra\")]\nfn inner() {\n    flush();\n}\n\n#[cfg(not(feature = \"extra\"))]\nfn inner() {}\n\npub fn flush() {}\n";
    file("other/src/lib.rs", other);
    let lock = "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\n \"other\",\n]\n\n[[package]]\nname = \"other\"\nversion = \"0.1.0\"\n";
    file("Cargo.lock", lock);
    file(
        "nosync.toml",
        "roots = [\"app::hot\"]\nsinks = [\"other::flush\"]\n",
    );
    dir.join("Cargo.toml")
}

/// The command line for the workspace in `dir`.
fn wrong_guess_args(dir: &Path) -> Vec<String> {
    let manifest = wrong_guess_workspace(dir);
    ["cargo-nosync-lint", "nosync-lint", "--all-features"]
        .into_iter()
        .map(str::to_owned)
        .chain(["--manifest-path".to_owned(), manifest.display().to_string()])
        .chain([
            "--config".to_owned(),
            dir.join("nosync.toml").display().to_string(),
        ])
        .collect()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nosync-speculate-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_wrong_guess_is_rejected_and_the_output_is_cargo_s() {
    let dir = temp_dir("rejected");
    let opts = nosync_lint::options_from_args(&wrong_guess_args(&dir)).unwrap();
    let plain = analyze(&opts, false);
    let speculated = analyze(&opts, true);
    let _ = fs::remove_dir_all(&dir);
    let (plain, speculated) = (plain.unwrap(), speculated.unwrap());
    // Cargo's selection has the feature, so there is the one finding.
    let codes: Vec<&str> = plain.diagnostics.iter().map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["sync-in-no-sync"], "{:#?}", plain.diagnostics);
    assert_eq!(plain.diagnostics, speculated.diagnostics);
    assert_eq!(plain.crates, speculated.crates);
    assert_eq!(plain.stats.files, speculated.stats.files);
    match &speculated.speculation {
        Some(Speculation::Rejected(what)) => assert_eq!(what, "crate 1 (`other`): features"),
        other => panic!("not rejected: {other:?}"),
    }
}

/// With the caches: the rejected speculation writes none of its own (the run on cargo's
/// selection writes them), the rejected run lowers every file as a run without
/// speculation does (the speculative run's lowered files count as lowered, not cached),
/// and the next run reads everything from the caches and prints the same.
#[test]
fn a_rejected_guess_leaves_the_caches_of_cargo_s_selection() {
    let (on, off) = (temp_dir("cache-on"), temp_dir("cache-off"));
    let run = |dir: &Path, speculate: bool| {
        let mut opts = nosync_lint::options_from_args(&wrong_guess_args(dir)).unwrap();
        opts.speculate = speculate;
        nosync_lint::analyze(&opts, &mut |_| {}).unwrap()
    };
    let (cold, plain) = (run(&on, true), run(&off, false));
    let warm = run(&on, true);
    let _ = (fs::remove_dir_all(&on), fs::remove_dir_all(&off));
    assert!(matches!(cold.speculation, Some(Speculation::Rejected(_))));
    assert_eq!(cold.stats.lowered_cached, plain.stats.lowered_cached);
    assert_eq!(cold.stats.bodies_cached, plain.stats.bodies_cached);
    // The warm run hits the metadata cache: no speculation, every file from the cache.
    assert_eq!(warm.speculation, None);
    let (hits, all) = warm.stats.lowered_cached.unwrap();
    assert!(hits == all && all > 0, "{:?}", warm.stats.lowered_cached);
    let relocated = |a: &Analysis, from: &Path| {
        let text = format!("{:#?}", a.diagnostics);
        text.replace(&from.display().to_string(), "<ws>")
    };
    assert_eq!(relocated(&cold, &on), relocated(&plain, &off));
    assert_eq!(relocated(&warm, &on), relocated(&plain, &off));
}
