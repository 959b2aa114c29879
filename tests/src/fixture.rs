//! The fixture crates under `fixtures/`, and the arguments the lint gets for each.

use std::fs;
use std::path::{Path, PathBuf};

/// Fixtures that are deliberately not valid Rust, with the reason `cargo check` skips them.
pub const NOT_CHECKABLE: &[(&str, &str)] = &[
    (
        "syntax-error",
        "src/broken.rs is deliberately not valid Rust (the lint must report it as parse-error)",
    ),
    (
        "syntax-error-item",
        "src/lib.rs deliberately has a struct with a missing `,` (parse-error; the rest is analysed)",
    ),
    (
        "unclosed-delimiter",
        "src/lib.rs deliberately has an unclosed `(` (parse-error and unparsed-root)",
    ),
    (
        "annotation-bad-arg",
        "its attributes deliberately have arguments their macros reject (invalid-annotation)",
    ),
    (
        "missing-module",
        "`mod absent;` deliberately names a file that does not exist (missing-module)",
    ),
    (
        "fallback-gate",
        "a git dependency deliberately names a repository that does not exist, so cargo cannot resolve the graph (workspace-fallback)",
    ),
    (
        "burn-app",
        "burn's CUDA backend is about 600 crates to build; its committed lock is checked with `cargo metadata --locked` instead, and the lint only reads sources",
    ),
    (
        "candle-app",
        "candle's `cuda` feature builds candle-kernels, whose build script compiles CUDA with nvcc (no CUDA toolkit here); its committed lock is checked with `cargo metadata --locked` instead, and the lint only reads sources",
    ),
];

/// Fixtures that cannot be built but whose graph must resolve: `tests/fixtures_check.rs` runs
/// `cargo metadata --locked` on them instead of `cargo check`.
pub const RESOLVE_ONLY: &[&str] = &["candle-app", "burn-app"];

/// Fixtures with a test of their own in `tests/golden.rs` (they analyse large crates from the
/// registry): the suites that run every fixture leave them out unless `NOSYNC_FIXTURE` names
/// one.
pub const OWN_TEST: &[&str] = &["candle-app", "burn-app"];

/// Extra lint arguments for a fixture, one per line; `$FIXTURE` is its absolute directory.
pub const LINT_ARGS_FILE: &str = "lint-args.txt";

/// One fixture crate (or fixture workspace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    /// The directory name under `fixtures/`, e.g. `direct`.
    pub name: String,
    /// Absolute, canonical directory.
    pub dir: PathBuf,
}

impl Fixture {
    /// The fixture's root manifest.
    pub fn manifest(&self) -> PathBuf {
        self.dir.join("Cargo.toml")
    }

    /// Whether `cargo metadata --locked` stands in for `cargo check` ([`RESOLVE_ONLY`]).
    pub fn resolve_only(&self) -> bool {
        RESOLVE_ONLY.contains(&self.name.as_str())
    }

    /// Why `cargo check` cannot succeed on this fixture, if it is one of the broken ones.
    pub fn not_checkable(&self) -> Option<&'static str> {
        NOT_CHECKABLE
            .iter()
            .find(|(name, _)| *name == self.name)
            .map(|(_, reason)| *reason)
    }

    /// The full argument list for `nosync_lint::run`, `argv[0]` included.
    pub fn lint_args(&self) -> Result<Vec<String>, String> {
        let mut args = vec![
            "cargo-nosync-lint".to_owned(),
            "--manifest-path".to_owned(),
            self.manifest().display().to_string(),
            "--color".to_owned(),
            "never".to_owned(),
        ];
        args.extend(self.extra_lint_args()?);
        Ok(args)
    }

    /// The arguments from `lint-args.txt` (none when the file does not exist).
    pub fn extra_lint_args(&self) -> Result<Vec<String>, String> {
        let path = self.dir.join(LINT_ARGS_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let dir = self.dir.display().to_string();
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| l.replace("$FIXTURE", &dir))
            .collect())
    }
}

/// The nosync repository root (the parent of this package).
pub fn repo_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = here.parent().unwrap_or(here);
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// `fixtures/` in the repository.
pub fn fixtures_dir() -> PathBuf {
    repo_root().join("fixtures")
}

/// Every fixture (a directory of `fixtures/` holding a `Cargo.toml`), sorted by name.
pub fn all() -> Result<Vec<Fixture>, String> {
    let dir = fixtures_dir();
    let entries = fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut fixtures = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if !path.join("Cargo.toml").is_file() {
            continue;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        fixtures.push(Fixture { name, dir: path });
    }
    fixtures.sort_by(|a, b| a.name.cmp(&b.name));
    if fixtures.is_empty() {
        return Err(format!("no fixture found under {}", dir.display()));
    }
    Ok(fixtures)
}

/// All fixtures but those of [`OWN_TEST`], or only the one named by `NOSYNC_FIXTURE` (to
/// iterate on a single case).
pub fn selected() -> Result<Vec<Fixture>, String> {
    let all = all()?;
    match std::env::var("NOSYNC_FIXTURE") {
        Ok(only) if !only.is_empty() => {
            let chosen: Vec<_> = all.into_iter().filter(|f| f.name == only).collect();
            if chosen.is_empty() {
                return Err(format!("NOSYNC_FIXTURE={only}: no such fixture"));
            }
            Ok(chosen)
        }
        _ => Ok(all
            .into_iter()
            .filter(|f| !OWN_TEST.contains(&f.name.as_str()))
            .collect()),
    }
}

/// [`selected`], with the fixtures of [`OWN_TEST`] when `NOSYNC_FIXTURE` is not set.
pub fn selected_with_own_tests() -> Result<Vec<Fixture>, String> {
    match std::env::var("NOSYNC_FIXTURE") {
        Ok(only) if !only.is_empty() => selected(),
        _ => all(),
    }
}

/// The fixture named `name`.
pub fn named(name: &str) -> Result<Fixture, String> {
    all()?
        .into_iter()
        .find(|f| f.name == name)
        .ok_or_else(|| format!("no fixture `{name}`"))
}

/// Files of a fixture with one of `extensions`, recursively, skipping `target/`, sorted.
pub fn source_files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries = fs::read_dir(&current)
            .map_err(|e| format!("cannot list {}: {e}", current.display()))?;
        for entry in entries {
            let path = entry
                .map_err(|e| format!("cannot list {}: {e}", current.display()))?
                .path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    pending.push(path);
                }
            } else if path
                .extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_not_checkable_name_is_a_fixture() {
        let names: Vec<String> = all()
            .expect("fixtures")
            .into_iter()
            .map(|f| f.name)
            .collect();
        let lists = NOT_CHECKABLE.iter().map(|(n, _)| n).chain(OWN_TEST);
        for name in lists.chain(RESOLVE_ONLY) {
            assert!(
                names.iter().any(|n| n == name),
                "NOT_CHECKABLE, OWN_TEST or RESOLVE_ONLY names `{name}`, which is no fixture"
            );
        }
    }

    #[test]
    fn lint_args_substitute_the_fixture_dir() {
        let fixture = all()
            .expect("fixtures")
            .into_iter()
            .find(|f| f.dir.join(LINT_ARGS_FILE).is_file())
            .expect("at least one fixture has lint-args.txt");
        let args = fixture.lint_args().expect("args");
        assert_eq!(
            args[..3],
            [
                "cargo-nosync-lint".to_owned(),
                "--manifest-path".to_owned(),
                fixture.manifest().display().to_string()
            ]
        );
        assert!(args.iter().all(|a| !a.contains("$FIXTURE")), "{args:?}");
    }
}
