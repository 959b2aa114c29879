//! Deterministic mutation of real sources: each mutant becomes the victim file of a case.
//!
//! Batch names are `CORPUS:SEED:COUNT`; the corpus is `fixtures` (the repository's
//! fixture crates), `lint` (the lint's own sources) or `registry` (every `.rs` file of
//! the crates named in `NOSYNC_QA_REGISTRY_CRATES`, default a fixed list, under
//! `~/.cargo/registry/src/*/`). Before each mutant the child prints `QA-MUTANT i: how`
//! to stderr, so a crash names the mutant that caused it. Seed 0 runs every file unmodified.

use super::{Case, Rng, run_case};
use std::path::{Path, PathBuf};

/// Runs `COUNT` mutants of corpus files, seeded with `SEED`.
pub(crate) fn run_batch(spec: &str) -> Result<String, String> {
    let mut parts = spec.split(':');
    let corpus = parts.next().unwrap_or("fixtures");
    let seed: u64 = parts.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let count: usize = parts.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let files = corpus_files(corpus)?;
    if files.is_empty() {
        return Err(format!("corpus `{corpus}` has no files"));
    }
    if seed == 0 {
        return run_unmodified(&files);
    }
    let mut rng = Rng::new(seed);
    let mut bytes = 0usize;
    for i in 0..count {
        let path = &files[rng.below(files.len())];
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (mutant, how) = mutate(&text, &mut rng);
        eprintln!("QA-MUTANT {i}: {how} of {}", path.display());
        bytes += mutant.len();
        run_case(&Case::victim(mutant)).map_err(|e| format!("mutant {i} ({how}): {e}"))?;
    }
    Ok(format!(
        "{count} mutants of {} files, {bytes} bytes",
        files.len()
    ))
}

/// Seed 0: every corpus file once, unmodified, as the victim module.
fn run_unmodified(files: &[PathBuf]) -> Result<String, String> {
    let mut bytes = 0usize;
    for (i, path) in files.iter().enumerate() {
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("QA-MUTANT {i}: unmodified {}", path.display());
        bytes += text.len();
        run_case(&Case::victim(text)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(format!("{} files unmodified, {bytes} bytes", files.len()))
}

fn corpus_files(corpus: &str) -> Result<Vec<PathBuf>, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let roots: Vec<PathBuf> = match corpus {
        "fixtures" => vec![repo.join("fixtures")],
        "lint" => ["lint/src", "lint/core/src", "lint/workspace/src"]
            .iter()
            .map(|d| repo.join(d))
            .collect(),
        "registry" => registry_dirs()?,
        _ => return Err(format!("unknown corpus `{corpus}`")),
    };
    let mut files = Vec::new();
    for r in roots {
        rs_files(&r, &mut files);
    }
    files.sort();
    Ok(files)
}

/// Crate directories under `~/.cargo/registry/src/*/` for the heavy corpus.
pub(crate) fn registry_dirs() -> Result<Vec<PathBuf>, String> {
    let names = std::env::var("NOSYNC_QA_REGISTRY_CRATES").unwrap_or_else(|_| {
        "syn-2,cudarc-0.19,tokio-1,clap_builder-4,serde-1,criterion-0.8,rayon-1,insta-1,candle-core-0.9,candle-nn-0.9".into()
    });
    let home = home::cargo_home().map_err(|e| format!("no cargo home: {e}"))?;
    let mut dirs = Vec::new();
    let Ok(indexes) = std::fs::read_dir(home.join("registry/src")) else {
        return Err("no ~/.cargo/registry/src".into());
    };
    for index in indexes.flatten() {
        let Ok(crates) = std::fs::read_dir(index.path()) else {
            continue;
        };
        for c in crates.flatten() {
            let file_name = c.file_name();
            let name = file_name.to_string_lossy();
            if names.split(',').any(|n| name.starts_with(&format!("{n}."))) {
                dirs.push(c.path());
            }
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Every `.rs` file under `dir` (no symlinks followed), sorted.
pub(crate) fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() && !p.ends_with("target") {
                stack.push(p);
            } else if ft.is_file() && p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
}

/// Tokens worth inserting: unbalanced delimiters, attributes, keywords, escapes.
const SNIPPETS: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    "<",
    ">",
    "\"",
    "'",
    "r#\"",
    "/*",
    "*/",
    "//",
    "#[no_sync]",
    "#[synchronizes]",
    "#[path = \"victim.rs\"] mod again;",
    "mod m;",
    "use self::*;",
    "use super::*;",
    "pub use crate::*;",
    "macro_rules! m { () => { m!(); } }",
    "m!();",
    "é",
    "\u{0}",
    "\r",
    "\u{feff}",
    "fn",
    "impl",
    "where",
    "dyn",
    "?",
    ".await",
    "..",
    "::",
    "'a",
    "#![cfg(FALSE)]",
    "nosync::allow_sync(||",
    "self.",
    "Self::",
];

/// One mutation of `text`; returns the mutant and what was done.
pub(crate) fn mutate(text: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let s = String::from_utf8_lossy(text).into_owned();
    let len = s.len();
    let at = floor(&s, rng.below(len + 1));
    match rng.below(9) {
        0 => (s[..at].into(), format!("truncate at {at}")),
        1 => {
            let end = floor(&s, (at + 1 + rng.below(200)).min(len));
            let out = format!("{}{}", &s[..at], &s[end..]);
            (out.into(), format!("delete {at}..{end}"))
        }
        2 => {
            let snip = SNIPPETS[rng.below(SNIPPETS.len())];
            let out = format!("{}{snip}{}", &s[..at], &s[at..]);
            (out.into(), format!("insert {snip:?} at {at}"))
        }
        3 => duplicate_lines(&s, rng),
        4 => swap_lines(&s, rng),
        5 => {
            let k = 1 + rng.below(64);
            let snip = ["(", "{", "[", ")", "}", "<"][rng.below(6)].repeat(k);
            let out = format!("{}{snip}{}", &s[..at], &s[at..]);
            (out.into(), format!("insert {k} x {:?} at {at}", &snip[..1]))
        }
        6 => {
            let mut out = text.to_vec();
            let n = 1 + rng.below(8);
            for _ in 0..n {
                let i = rng.below(out.len().max(1));
                if let Some(b) = out.get_mut(i) {
                    *b = rng.next() as u8;
                }
            }
            (out, format!("flip {n} random bytes"))
        }
        7 => {
            let out = s.replace('\n', "\r\n");
            (out.into(), "CRLF line ends".into())
        }
        _ => {
            let end = floor(&s, (at + rng.below(400)).min(len));
            let span = &s[at..end];
            let out = format!("{}{span}{span}{}", &s[..at], &s[end..]);
            (out.into(), format!("duplicate {at}..{end}"))
        }
    }
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn duplicate_lines(s: &str, rng: &mut Rng) -> (Vec<u8>, String) {
    let lines: Vec<&str> = s.split_inclusive('\n').collect();
    let i = rng.below(lines.len());
    let k = 1 + rng.below(20);
    let mut out = String::new();
    for (j, l) in lines.iter().enumerate() {
        out.push_str(l);
        if j == i {
            for _ in 0..k {
                out.push_str(l);
            }
        }
    }
    (out.into(), format!("duplicate line {} x{k}", i + 1))
}

fn swap_lines(s: &str, rng: &mut Rng) -> (Vec<u8>, String) {
    let mut lines: Vec<&str> = s.split_inclusive('\n').collect();
    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
    if !lines.is_empty() {
        lines.swap(a, b);
    }
    (
        lines.concat().into(),
        format!("swap lines {} and {}", a + 1, b + 1),
    )
}
