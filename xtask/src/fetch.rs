//! Getting each input's sources into the scratch directory (never into the repository).
//!
//! * `git` inputs: `<scratch>/git/NAME` if it has a `Cargo.toml` (put there by hand, e.g. from
//!   `git archive`), else `git clone URL` there and `git checkout COMMIT`.
//! * `crate` inputs: a one-dependency Cargo project in `<scratch>/fetch/`, whose `cargo metadata`
//!   downloads the crate into cargo's registry cache and names its manifest; the crate directory is
//!   then copied to `<scratch>/crates/NAME-VERSION`, so that the lint's own `cargo metadata`
//!   (which writes a `Cargo.lock`) never touches cargo's cache.

use crate::list::{Input, Source};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An input ready to lint.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub manifest: PathBuf,
    /// The crate version, or the first 10 digits of the commit.
    pub version: String,
}

pub(crate) fn locate(input: &Input, scratch: &Path) -> Result<Located, String> {
    match &input.source {
        Source::Git { url, commit } => git(&input.name, url, commit, scratch),
        Source::Crate { req } => registry(&input.name, req, scratch),
    }
}

fn git(name: &str, url: &str, commit: &str, scratch: &Path) -> Result<Located, String> {
    let dir = scratch.join("git").join(name);
    if !dir.join("Cargo.toml").is_file() {
        run(Command::new("git")
            .args(["clone", "--quiet", url])
            .arg(&dir))?;
        run(Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["checkout", "--quiet", commit]))?;
    }
    Ok(Located {
        manifest: dir.join("Cargo.toml"),
        version: commit[..10].to_owned(),
    })
}

fn registry(name: &str, req: &str, scratch: &Path) -> Result<Located, String> {
    if let Some(exact) = req.strip_prefix('=') {
        let dir = scratch.join("crates").join(format!("{name}-{exact}"));
        if dir.join("Cargo.toml").is_file() {
            return Ok(Located {
                manifest: dir.join("Cargo.toml"),
                version: exact.to_owned(),
            });
        }
    }
    let (cached, version) = download(name, req, scratch)?;
    let dir = scratch.join("crates").join(format!("{name}-{version}"));
    if !dir.join("Cargo.toml").is_file() {
        copy_dir(&cached, &dir).map_err(|e| format!("copying {}: {e}", cached.display()))?;
    }
    Ok(Located {
        manifest: dir.join("Cargo.toml"),
        version,
    })
}

/// The crate's directory in cargo's registry cache and its version.
fn download(name: &str, req: &str, scratch: &Path) -> Result<(PathBuf, String), String> {
    let slug: String = format!("{name}@{req}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let project = scratch.join("fetch").join(slug);
    std::fs::create_dir_all(project.join("src")).map_err(|e| e.to_string())?;
    let manifest = format!(
        "[package]\nname = \"sweep-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\n{name} = \"{req}\"\n\n[workspace]\n"
    );
    write(&project.join("Cargo.toml"), &manifest)?;
    write(&project.join("src/lib.rs"), "")?;
    let out = run(Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(project.join("Cargo.toml")))?;
    let meta: Value = serde_json::from_str(&out).map_err(|e| format!("cargo metadata: {e}"))?;
    direct_dep(&meta, name).ok_or_else(|| format!("`{name}` is not in the fetch project's graph"))
}

/// The manifest directory and version of the root package's dependency `name`.
fn direct_dep(meta: &Value, name: &str) -> Option<(PathBuf, String)> {
    let root = meta["resolve"]["root"].as_str()?;
    let node = meta["resolve"]["nodes"]
        .as_array()?
        .iter()
        .find(|n| n["id"] == root)?;
    let ids: Vec<&str> = node["deps"]
        .as_array()?
        .iter()
        .filter_map(|d| d["pkg"].as_str())
        .collect();
    let pkg = meta["packages"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name && p["id"].as_str().is_some_and(|id| ids.contains(&id)))?;
    let manifest = PathBuf::from(pkg["manifest_path"].as_str()?);
    Some((
        manifest.parent()?.to_path_buf(),
        pkg["version"].as_str()?.to_owned(),
    ))
}

/// `cargo metadata --all-features` once, untimed, so that the timed run finds every dependency
/// downloaded and the lock file written. The error is cargo's `error:` line.
pub(crate) fn warm(manifest: &Path, host: Option<&str>) -> Result<(), String> {
    let mut cmd = Command::new("cargo");
    cmd.args(["metadata", "--format-version", "1", "--all-features"])
        .arg("--manifest-path")
        .arg(manifest);
    if let Some(host) = host {
        cmd.args(["--filter-platform", host]);
    }
    run(&mut cmd).map(drop)
}

/// `rustc -vV`'s host triple.
pub(crate) fn host_triple() -> Option<String> {
    let out = run(Command::new("rustc").arg("-vV")).ok()?;
    out.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
}

/// Runs `cmd`; its stdout, or its first `error` line (else last stderr line) as the error.
fn run(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("error"))
        .or_else(|| err.lines().last())
        .unwrap_or("");
    Err(format!(
        "{:?} failed ({}): {line}",
        cmd.get_program(),
        out.status
    ))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut tmp = to.as_os_str().to_owned();
    tmp.push(".partial");
    let tmp = PathBuf::from(tmp);
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)?;
    }
    let mut work = vec![(from.to_path_buf(), tmp.clone())];
    while let Some((src, dst)) = work.pop() {
        std::fs::create_dir_all(&dst)?;
        for entry in std::fs::read_dir(&src)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                work.push((entry.path(), dst.join(entry.file_name())));
            } else if kind.is_file() {
                std::fs::copy(entry.path(), dst.join(entry.file_name()))?;
            }
        }
    }
    std::fs::rename(tmp, to)
}
