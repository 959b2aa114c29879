//! The cache tests' workspaces (two crates, and the same with the files of the walks'
//! tests) and the lint run in process on them, with `-v`'s cache counts read back.

use std::fs;
use std::path::{Path, PathBuf};

use nosync_tests::golden;
use nosync_tests::run::with;

/// The lint in process (stderr without cargo's status lines).
pub(crate) fn run(args: &[String]) -> (i32, String, String) {
    nosync_tests::run::lint(args, |_| false)
}

/// Without the lines that report a duration (`-v`'s timings, some fixtures' arguments).
pub(crate) fn timeless((exit, out, err): (i32, String, String)) -> (i32, String, String) {
    (exit, out, golden::normalise(&err, &[], true))
}

/// The phase table of a `-v` run (each phase's time and what it read from the caches),
/// as one line.
pub(crate) fn times(stderr: &str) -> String {
    let rows = stderr
        .lines()
        .skip_while(|l| l.split_whitespace().next() != Some("phase"));
    rows.collect::<Vec<_>>().join(" ")
}

/// A run without the cache, then two with it (the first may write it, the second reads
/// it): all three print the same, and the last one's `-v` says it was a hit.
pub(crate) fn check_identical(args: &[String]) -> Result<(), String> {
    let cold = timeless(run(&with(args, &["--no-cache"])));
    let first = timeless(run(args));
    let second = timeless(run(args));
    if first != cold || second != cold {
        return Err(format!(
            "with the cache the output differs\n--- --no-cache:\n{}{}\n--- first:\n{}{}\n--- second:\n{}{}",
            cold.1, cold.2, first.1, first.2, second.1, second.2
        ));
    }
    let has_v = args.iter().any(|a| a == "-v" || a == "--verbose");
    let verbose = run(&with(args, if has_v { &[] } else { &["-v"] }));
    if verbose.1 != cold.1 {
        return Err(format!(
            "-v changed stdout:\n{}\n---\n{}",
            cold.1, verbose.1
        ));
    }
    let t = times(&verbose.2);
    if !t.contains("metadata (cache hit)") {
        return Err(format!("the cache was not hit: {t:?}"));
    }
    match lowered_from_cache(&t) {
        Some((hits, all)) if hits == all && all > 0 => {}
        _ => return Err(format!("not every lowered file came from the cache: {t:?}")),
    }
    match bodies_from_cache(&t) {
        Some((hits, all)) if hits == all => {}
        _ => return Err(format!("not every lazy fn body came from the cache: {t:?}")),
    }
    match from_cache(&t, ["macro", "expansions", "from"]) {
        Some((hits, all)) if hits == all => Ok(()),
        _ => Err(format!(
            "not every macro expansion came from the cache: {t:?}"
        )),
    }
}

/// `-v`'s "N of M <what> from the cache", `what` the three words after M.
pub(crate) fn from_cache(times: &str, what: [&str; 3]) -> Option<(usize, usize)> {
    let words: Vec<&str> = times.split_whitespace().collect();
    let at = words.windows(4).position(|w| w[1..] == what)?;
    let hits = words.get(at.checked_sub(2)?)?;
    Some((hits.parse().ok()?, words[at].parse().ok()?))
}

/// `-v`'s "N of M lazy fn bodies from the cache".
pub(crate) fn bodies_from_cache(times: &str) -> Option<(usize, usize)> {
    from_cache(times, ["lazy", "fn", "bodies"])
}

/// `-v`'s "N of M lowered files from the cache".
pub(crate) fn lowered_from_cache(times: &str) -> Option<(usize, usize)> {
    from_cache(times, ["lowered", "files", "from"])
}

pub(crate) const APP: &str = r#"[package]
name = "app"
version = "0.1.0"
edition = "2021"

[workspace]
members = ["gpu"]

[features]
fast = []

[dependencies]
gpu = { path = "gpu" }
"#;

pub(crate) const APP_LIB: &str = r#"#[no_sync]
pub fn step() {
    gpu::wait();
    #[cfg(feature = "fast")]
    gpu::fast_wait();
}
"#;

pub(crate) const GPU: &str = "[package]\nname = \"gpu\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

pub(crate) const GPU_LIB: &str = r#"#[synchronizes]
pub fn wait() {}

#[synchronizes]
pub fn fast_wait() {}
"#;

/// One edit of the sequence: what it changes, and the change.
pub(crate) type Step<'a> = (&'static str, Box<dyn Fn() + 'a>);

pub(crate) fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    fs::create_dir_all(p.parent().expect("a parent")).expect("a directory");
    fs::write(p, text).expect("a written file");
}

/// The directory of the caches of the workspace at `dir`, in the target dir cargo gives
/// it (`CARGO_TARGET_DIR` when set, else its own `target/`).
pub(crate) fn cache_dir(dir: &Path) -> PathBuf {
    let cwd = std::env::current_dir().expect("a current directory");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| dir.join("target"), |t| cwd.join(t));
    nosync_lint_workspace::cache_dir::cache_dir(&target, dir)
}

/// A fresh copy of the two-crate workspace (`APP` depending on `GPU`) in a temporary
/// directory named after `tag`: the directory and its manifest's path.
pub(crate) fn two_crate_workspace(tag: &str) -> (PathBuf, String) {
    let dir: PathBuf = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    write(&dir, "Cargo.toml", APP);
    write(&dir, "src/lib.rs", APP_LIB);
    write(&dir, "gpu/Cargo.toml", GPU);
    write(&dir, "gpu/src/lib.rs", GPU_LIB);
    let manifest = dir.join("Cargo.toml").display().to_string();
    (dir, manifest)
}

pub(crate) const WALK_LIB: &str = "mod a;\nmod fast;\nmod ops;\n\n#[no_sync]\npub fn step() {\n    a::one();\n    ops::run_all();\n}\n";

pub(crate) const WALK_A: &str = r#"macro_rules! twice {
    ($e:expr) => {
        $e;
        $e
    };
}

pub fn one() {
    two();
}

pub fn two() {
    twice!(three());
}

pub fn three() {}
"#;

pub(crate) const WALK_OPS: &str = r#"pub trait Op {
    fn run(&self);
    fn go(&self) {
        self.run();
    }
}

pub fn run_all() {
    crate::fast::Fast.go();
}
"#;

pub(crate) const WALK_FAST: &str = r#"pub struct Fast;

impl crate::ops::Op for Fast {
    fn run(&self) {
        let _unit = ();
    }
}
"#;

/// One edit of the walk cache's sequence: what it changes, the change, how many walked
/// nodes come from the cache of how many after it, and a text a finding then has.
pub(crate) type WalkStep<'a> = (
    &'static str,
    Box<dyn Fn() + 'a>,
    (usize, usize),
    &'static str,
);

/// `-v`'s "N of M walked nodes from the cache".
pub(crate) fn walks_from_cache(times: &str) -> Option<(usize, usize)> {
    from_cache(times, ["walked", "nodes", "from"])
}

/// The two-crate workspace with the four files of the walks' tests (see `cache.rs`) in its
/// `app` crate: the directory and the lint's arguments for it (with `-v`).
pub(crate) fn walk_workspace(tag: &str) -> (PathBuf, Vec<String>) {
    let (dir, manifest) = two_crate_workspace(tag);
    write(&dir, "src/lib.rs", WALK_LIB);
    write(&dir, "src/a.rs", WALK_A);
    write(&dir, "src/ops.rs", WALK_OPS);
    write(&dir, "src/fast.rs", WALK_FAST);
    let args = ["cargo-nosync-lint", "--manifest-path", &manifest, "-v"];
    (dir, args.map(str::to_owned).to_vec())
}

/// `-v`'s "N of M files read".
pub(crate) fn files_read(times: &str) -> Option<(usize, usize)> {
    let words: Vec<&str> = times.split_whitespace().collect();
    let at = words.windows(3).position(|w| w[1..] == ["files", "read"])?;
    let read = words.get(at.checked_sub(2)?)?;
    Some((read.parse().ok()?, words[at].parse().ok()?))
}
