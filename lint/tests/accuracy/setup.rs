//! The trees the accuracy test lints: an application repo's checkout at its corpus commit, or
//! a probe crate depending on the registry crates; the config of a batch of roots.

use crate::corpus::{Repo, Root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory of the application repos' checkouts: `NOSYNC_ACCURACY_GIT`, else `git/`
/// in the accuracy directory.
fn checkouts() -> PathBuf {
    std::env::var_os("NOSYNC_ACCURACY_GIT").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("accuracy/git"),
        PathBuf::from,
    )
}

/// The application's workspace directory: `<checkouts>/<name>/<workspace>`, cloned and
/// checked out at the corpus commit when absent; an existing checkout must be at that commit.
pub(crate) fn app_workspace(repo: &Repo) -> PathBuf {
    let (url, commit) = (repo.git.as_deref(), repo.commit.as_deref());
    let (url, commit) = (url.expect("git"), commit.expect("commit"));
    let dir = checkouts().join(&repo.name);
    if !dir.exists() {
        git(None, &["clone", "--quiet", url, &dir.to_string_lossy()]);
        git(Some(&dir), &["checkout", "--quiet", commit]);
    }
    let head = git(Some(&dir), &["rev-parse", "HEAD"]);
    assert_eq!(
        head.trim(),
        commit,
        "{} is not at the corpus commit of {}: check out {commit} there",
        dir.display(),
        repo.name
    );
    dir.join(repo.workspace.as_deref().unwrap_or("."))
}

fn git(dir: Option<&Path>, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    if let Some(dir) = dir {
        cmd.arg("-C").arg(dir);
    }
    let out = cmd.args(args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The config of a batch: its roots, and the repo's extra sinks.
pub(crate) fn write_config(repo: &Repo, roots: &[&Root], config_path: &Path) {
    let mut config = toml::Table::new();
    let paths = roots.iter().map(|r| toml::Value::from(r.path.as_str()));
    config.insert("roots".into(), toml::Value::Array(paths.collect()));
    config.insert("sinks".into(), toml::Value::Array(repo.sinks.clone()));
    let config = toml::to_string(&config).expect("config serialises");
    write_if_changed(config_path, &config);
}

/// Downloads the dependencies (an application's as its lock file pins them).
pub(crate) fn fetch(repo: &Repo, manifest: &Path) {
    let status = Command::new(env!("CARGO"))
        .arg("fetch")
        .args(repo.is_app().then_some("--locked"))
        .arg("--manifest-path")
        .arg(manifest)
        .status()
        .expect("cargo fetch runs");
    assert!(status.success(), "cargo fetch for {}", repo.name);
}

pub(crate) fn write_probe(dir: &Path, repo: &Repo) {
    std::fs::create_dir_all(dir.join("src")).expect("probe dir");
    let manifest = format!(
        "[package]\nname = \"probe-{}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n{}\n\n[workspace]\n",
        repo.name,
        repo.deps.join("\n")
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    write_if_changed(
        &dir.join("src/lib.rs"),
        "//! Probe: the corpus roots live in the dependencies.\n",
    );
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("probe file is written");
    }
}
