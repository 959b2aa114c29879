//! The bench's inputs: the sweep's git workspaces (copied, mistral.rs optionally with
//! the sweep's candle patched in) and the generated crate, each with its roots and the
//! files the lint reads.

use super::{Input, edits, synth};
use nosync_lint::Options;
use nosync_lint_workspace::WorkspaceOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Roots of candle's labelled accuracy corpus (real GPU entry points).
pub(crate) fn candle_roots() -> Vec<String> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/accuracy/corpus.toml");
    let text = std::fs::read_to_string(corpus).unwrap_or_default();
    let table: toml::Table = text.parse().unwrap_or_default();
    let roots = table.get("root").and_then(|r| r.as_array());
    roots
        .into_iter()
        .flatten()
        .filter(|r| r.get("repo").and_then(|v| v.as_str()) == Some("candle"))
        .filter_map(|r| r.get("path")?.as_str().map(str::to_owned))
        .collect()
}

/// The roots listed in `support/<name>-roots.txt` (mistral.rs: its models' `forward` and the
/// sampler; burn: `Tensor`'s readbacks).
pub(crate) fn listed_roots(name: &str) -> Vec<String> {
    let list = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/support")
        .join(format!("{name}-roots.txt"));
    let text = std::fs::read_to_string(list).unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

fn config_text(roots: &[String]) -> String {
    let quoted: Vec<String> = roots.iter().map(|r| format!("    {r:?},")).collect();
    format!("roots = [\n{}\n]\n", quoted.join("\n"))
}

/// Copies `from` into `to`, without `target/` and `.git/`.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if name != "target" && name != ".git" {
                copy_tree(&src, &dst)?;
            }
        } else if kind.is_file() {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// The sweep's git workspaces `names` (from `$NOSYNC_BENCH_GIT`), copied side by side
/// into a new temporary directory: the directory and each copy.
fn copy_git(names: &[&str]) -> Result<(tempfile::TempDir, Vec<PathBuf>), String> {
    let git = std::env::var_os("NOSYNC_BENCH_GIT")
        .ok_or("NOSYNC_BENCH_GIT is not set (the sweep's git/ directory)")?;
    let from: Vec<PathBuf> = names.iter().map(|n| PathBuf::from(&git).join(n)).collect();
    if let Some(missing) = from.iter().find(|f| !f.join("Cargo.toml").is_file()) {
        return Err(format!("no {}", missing.join("Cargo.toml").display()));
    }
    let temp = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let mut dirs = Vec::new();
    for (name, from) in names.iter().zip(&from) {
        let dir = temp.path().join(name);
        copy_tree(from, &dir).map_err(|e| format!("copying {}: {e}", from.display()))?;
        dirs.push(dir);
    }
    Ok((temp, dirs))
}

/// A git workspace of the sweep, copied.
pub(crate) fn git_input(name: &str, roots: &[String]) -> Result<Input, String> {
    let (temp, mut dirs) = copy_git(&[name])?;
    finish(name, temp, dirs.remove(0), roots)
}

/// mistral.rs with its candle: mistral.rs names candle by git (`rev = ...`), which is not in
/// cargo's git database here, so the sweep's candle is copied beside it and put in its place
/// with a `[patch]` (the candle of the sweep, `0.11.0` like mistral.rs's). One untimed
/// `cargo metadata --offline` writes the patched lock file; the timed runs then find it as
/// a user's tree would have it. The lint then reads candle's crates as path dependencies.
pub(crate) fn patched_input(roots: &[String]) -> Result<Input, String> {
    let (temp, mut dirs) = copy_git(&["mistral.rs", "candle"])?;
    let dir = dirs.remove(0);
    let manifest = dir.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).map_err(|e| format!("{e}"))?;
    text.push_str("\n[patch.\"https://github.com/huggingface/candle.git\"]\n");
    for krate in [
        "candle-core",
        "candle-nn",
        "candle-flash-attn-v3",
        "candle-metal-kernels",
    ] {
        text.push_str(&format!("{krate} = {{ path = \"../candle/{krate}\" }}\n"));
    }
    std::fs::write(&manifest, text).map_err(|e| format!("{e}"))?;
    let lock = Command::new("cargo")
        .args([
            "metadata",
            "--offline",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(&manifest)
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !lock.status.success() {
        let why = String::from_utf8_lossy(&lock.stderr);
        return Err(format!(
            "cargo metadata --offline on the patched tree: {why}"
        ));
    }
    finish("mistral.rs + candle", temp, dir, roots)
}

/// The generated crate at `mods` modules, with the repository's lock file (so that
/// `cargo metadata` resolves `nosync` offline).
pub(crate) fn synth_input(mods: usize) -> Result<Input, String> {
    let temp = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let name = format!("synth_{mods}x10");
    let dir = temp.path().join(&name);
    synth::write_crate(&dir, mods, 10)?;
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(&lock, dir.join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    finish(&name, temp, dir, &[])
}

/// Writes the config beside the copy, and lists the files the lint reads.
fn finish(
    name: &str,
    temp: tempfile::TempDir,
    dir: PathBuf,
    roots: &[String],
) -> Result<Input, String> {
    let config = temp.path().join("nosync-bench.toml");
    std::fs::write(&config, config_text(roots)).map_err(|e| format!("config: {e}"))?;
    let manifest = dir.join("Cargo.toml");
    let opts = Options {
        workspace: WorkspaceOptions {
            manifest_path: Some(manifest.clone()),
            all_features: true,
            ..WorkspaceOptions::default()
        },
        config: Some(config.clone()),
        ..Options::default()
    };
    let a = nosync_lint::analyze(&opts, &mut |_| {}).map_err(|e| format!("analysis: {e:#}"))?;
    let mut files: Vec<PathBuf> = a
        .sources
        .files()
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files.dedup();
    let lines = a
        .sources
        .files()
        .iter()
        .filter(|f| files.binary_search(&f.path).is_ok())
        .map(|f| f.lines())
        .sum();
    let edit = edits::edited_file(&files, &dir, &a.diagnostics)?;
    Ok(Input {
        name: name.to_owned(),
        manifest,
        config,
        files,
        lines,
        edit,
        _temp: temp,
    })
}
