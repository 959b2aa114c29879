//! `edits`: the caches checked on a real workspace. Random edits of its files, one after
//! another; after each, the lint runs with its caches (warm) and with `--no-cache`, and the
//! two outputs (JSON and exit status) must be the same bytes. The edits are what a user
//! does and what breaks a file: a comment line, a blank line, a statement at the top of a
//! fn body, a line deleted, duplicated, or swapped with the next. The workspace is edited
//! in place: give it a copy.
//!
//! `cargo run -p xtask --release -- edits --lint PATH --manifest-path DIR/Cargo.toml
//! [--config FILE] [--steps N] [--seed N] [--out DIR]`
//!
//! Prints one line per step (the edit, the warm and `--no-cache` wall times, what the warm
//! run took from its caches) and, at the end, the steps whose outputs differ; each one's
//! two outputs are kept in `--out` (default `<tmp>/nosync-edits`). Exit status 1 when any
//! step differs, 2 when the lint could not be run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) const USAGE: &str = "usage: cargo run -p xtask --release -- edits --lint PATH \
                         --manifest-path DIR/Cargo.toml [--config FILE] [--steps N] [--seed N] [--out DIR]";

struct Args {
    lint: PathBuf,
    manifest: PathBuf,
    config: Option<PathBuf>,
    steps: usize,
    seed: u64,
    out: PathBuf,
}

fn parse(rest: &[String]) -> Result<Args, String> {
    let (mut lint, mut manifest, mut config) = (None, None, None);
    let (mut steps, mut seed) = (40, 1);
    let mut out = std::env::temp_dir().join("nosync-edits");
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--lint" => lint = Some(PathBuf::from(value()?)),
            "--manifest-path" => manifest = Some(PathBuf::from(value()?)),
            "--config" => config = Some(PathBuf::from(value()?)),
            "--steps" => steps = value()?.parse().map_err(|e| format!("--steps: {e}"))?,
            "--seed" => seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--out" => out = PathBuf::from(value()?),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Args {
        lint: lint.ok_or("--lint is required")?,
        manifest: manifest.ok_or("--manifest-path is required")?,
        config,
        steps,
        seed,
        out,
    })
}

pub(crate) fn main(rest: &[String]) -> i32 {
    let args = match parse(rest) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            return 2;
        }
    };
    match run(&args) {
        Ok(0) => {
            println!("every step: the warm output is the --no-cache output");
            0
        }
        Ok(n) => {
            println!(
                "{n} of {} steps differ (outputs in {})",
                args.steps,
                args.out.display()
            );
            1
        }
        Err(e) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// What one run printed.
struct Out {
    stdout: Vec<u8>,
    code: i32,
    wall: Duration,
    /// The `-v` line's cache counts ("882 of 883 lowered files from the cache, ..").
    cached: String,
}

fn run(args: &Args) -> Result<usize, String> {
    let dir = args
        .manifest
        .parent()
        .ok_or("--manifest-path has no directory")?;
    let files = rust_files(dir);
    if files.is_empty() {
        return Err(format!("no .rs file under {}", dir.display()));
    }
    let _ = std::fs::remove_dir_all(dir.join("target/nosync-lint"));
    let mut last = lint(args, true)?;
    let mut rng = Rng(args.seed.max(1));
    let mut differ = 0;
    for step in 0..args.steps {
        // Every other step edits a file the last output points into (where the findings
        // and the walked fns are), the others any file.
        let shown = shown_files(dir, &last.stdout);
        let file = match step % 2 {
            0 if !shown.is_empty() => &shown[rng.below(shown.len())],
            _ => &files[rng.below(files.len())],
        };
        let what = edit(file, &mut rng, step)?;
        let warm = lint(args, true)?;
        let fresh = lint(args, false)?;
        let same = warm.stdout == fresh.stdout && warm.code == fresh.code;
        let shown = file.strip_prefix(dir).unwrap_or(file).display();
        println!(
            "{step:3} {} {shown}: {what}; warm {:.2} s, --no-cache {:.2} s, exit {}; {}",
            if same { "same" } else { "DIFF" },
            warm.wall.as_secs_f64(),
            fresh.wall.as_secs_f64(),
            warm.code,
            warm.cached
        );
        if !same {
            differ += 1;
            keep(&args.out, step, &warm, &fresh)?;
        }
        last = fresh;
    }
    Ok(differ)
}

/// The files (under `dir`) that the spans of a JSON output point into, sorted.
fn shown_files(dir: &Path, json: &[u8]) -> Vec<PathBuf> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::String(f)) = m.get("file_name") {
                    out.push(f.clone());
                }
                m.values().for_each(|v| walk(v, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut names = Vec::new();
    for line in String::from_utf8_lossy(json).lines() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
            walk(&v, &mut names);
        }
    }
    let mut files: Vec<PathBuf> = names
        .into_iter()
        .map(|n| dir.join(n))
        // Only the workspace's own: a dependency's file (an absolute name) is never edited.
        .filter(|p| inside(dir, p) && p.extension().is_some_and(|x| x == "rs") && p.is_file())
        .collect();
    files.sort();
    files.dedup();
    files
}

fn keep(out: &Path, step: usize, warm: &Out, fresh: &Out) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (name, o) in [("warm", warm), ("no-cache", fresh)] {
        let path = out.join(format!("step{step}-{name}.json"));
        std::fs::write(&path, &o.stdout).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn lint(args: &Args, cache: bool) -> Result<Out, String> {
    let mut cmd = Command::new(&args.lint);
    cmd.args(["nosync-lint", "--all-features", "--format", "json", "-v"])
        .arg("--manifest-path")
        .arg(&args.manifest)
        .env_remove("CARGO_TARGET_DIR");
    if let Some(c) = &args.config {
        cmd.arg("--config").arg(c);
    }
    if !cache {
        cmd.arg("--no-cache");
    }
    let t = Instant::now();
    let out = cmd
        .output()
        .map_err(|e| format!("{}: {e}", args.lint.display()))?;
    let wall = t.elapsed();
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if code == 2 || code < 0 {
        return Err(format!("the lint failed (exit {code}): {stderr}"));
    }
    let cached = cache_counts(&stderr);
    Ok(Out {
        stdout: out.stdout,
        code,
        wall,
        cached,
    })
}

/// The metadata phase (`metadata (cache hit)`) and what each phase read from the caches
/// (`N of M .. from the cache`, `N of M files read ..`), from the rows of `-v`'s phase table
/// (`  NAME  TIME ms  NOTES, ..`).
fn cache_counts(stderr: &str) -> String {
    let rows = stderr
        .lines()
        .skip_while(|l| l.split_whitespace().next() != Some("phase"));
    let mut parts: Vec<String> = Vec::new();
    for row in rows.filter_map(|l| l.split_once(" ms")) {
        let (name, notes) = row;
        let phase = name.trim().rsplit_once(' ').map_or("", |(n, _)| n.trim());
        if phase.starts_with("metadata") {
            parts.push(phase.to_owned());
        }
        let counted = |p: &&str| p.contains(" from the cache") || p.contains(" files read");
        parts.extend(
            notes
                .split(", ")
                .map(str::trim)
                .filter(counted)
                .map(str::to_owned),
        );
    }
    parts.join(", ")
}

/// Whether `p` is under `dir`, lexically (no `..` out of it).
fn inside(dir: &Path, p: &Path) -> bool {
    let parent = |c: std::path::Component| c == std::path::Component::ParentDir;
    p.strip_prefix(dir)
        .is_ok_and(|rest| !rest.components().any(parent))
}

/// The workspace's `.rs` files (not under `target/` or a hidden directory), sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let (path, name) = (e.path(), e.file_name());
            let hidden = name.to_string_lossy().starts_with('.');
            match e.file_type() {
                Ok(t) if t.is_dir() && !hidden && name != "target" => todo.push(path),
                Ok(t) if t.is_file() && path.extension().is_some_and(|x| x == "rs") => {
                    out.push(path)
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// Applies one random edit to `file`; what it did.
fn edit(file: &Path, rng: &mut Rng, step: usize) -> Result<String, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let n = lines.len().max(1);
    let at = rng.below(n).min(lines.len());
    let what = match rng.below(6) {
        0 => {
            lines.insert(0, format!("// edit {step}"));
            "a comment line at the top".to_owned()
        }
        1 => {
            lines.insert(at, String::new());
            format!("a blank line at line {}", at + 1)
        }
        2 => match lines.iter().position(|l| opens_fn_body(l)) {
            Some(i) => {
                lines.insert(i + 1, format!("    let _nosync_edit_{step} = {step};"));
                format!("a statement in the fn body at line {}", i + 1)
            }
            None => {
                lines.insert(0, format!("// edit {step}"));
                "a comment line at the top (no fn body)".to_owned()
            }
        },
        3 if at < lines.len() => {
            lines.remove(at);
            format!("line {} deleted", at + 1)
        }
        4 if at < lines.len() => {
            let l = lines[at].clone();
            lines.insert(at, l);
            format!("line {} duplicated", at + 1)
        }
        _ if at + 1 < lines.len() => {
            lines.swap(at, at + 1);
            format!("lines {} and {} swapped", at + 1, at + 2)
        }
        _ => {
            lines.push(format!("// edit {step}"));
            "a comment line at the end".to_owned()
        }
    };
    let mut out = lines.join("\n");
    out.push('\n');
    std::fs::write(file, out).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(what)
}

/// A line that opens a fn body: `fn name(..) .. {`, after indentation and qualifiers.
fn opens_fn_body(line: &str) -> bool {
    let t = line.trim_end();
    let mut words = t.trim_start();
    for q in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        words = words.strip_prefix(q).unwrap_or(words);
    }
    words.starts_with("fn ") && t.ends_with('{')
}

/// xorshift64: reproducible edits from `--seed`, no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    /// The metadata phase and the cache notes are read from `-v`'s phase table.
    #[test]
    fn cache_counts_come_from_the_phase_table() {
        let stderr = "nosync-lint statistics:\n  crates: 1, files: 2\n  \
                      phase                      time\n  \
                      metadata (cache hit)     3.1 ms\n  \
                      parse                   95.2 ms  2 of 2 lowered files from the cache, 1 of 2 files read (the others unchanged)\n  \
                      analysis                 1.0 ms\n\
                      {\"reason\":\"nosync-statistics\",\"phases\":[{\"ms\":3.1}]}\n";
        assert_eq!(
            super::cache_counts(stderr),
            "metadata (cache hit), 2 of 2 lowered files from the cache, 1 of 2 files read (the others unchanged)"
        );
    }
}
