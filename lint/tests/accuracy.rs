//! The lint's accuracy on real GPU code: a labelled corpus of roots in candle, cubecl and
//! dfdx (`accuracy/corpus.toml`), scored against the release lint's JSON output.
//!
//! `corpus_is_well_formed` runs in CI. `accuracy_on_real_crates` needs the crates from the
//! registry and a release build, so it is ignored by default; docs/accuracy.md gives the
//! command and the rules, and the table it printed on main.

#[path = "accuracy/corpus.rs"]
mod corpus;
#[path = "accuracy/score.rs"]
mod score;

use corpus::{Repo, Root};
use score::{Said, Verdict};
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn corpus_is_well_formed() {
    let c = corpus::load();
    assert_eq!(corpus::problems(&c), Vec::<String>::new());
}

#[test]
#[ignore = "needs the real crates (cargo fetches candle, cubecl, dfdx) and a release build: see docs/accuracy.md"]
fn accuracy_on_real_crates() {
    let c = corpus::load();
    assert_eq!(corpus::problems(&c), Vec::<String>::new());
    let dir = std::env::var_os("NOSYNC_ACCURACY_DIR").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("accuracy"),
        PathBuf::from,
    );
    let batch = corpus::batches(&c).expect("no cycle");
    let mut scored = Vec::new();
    for repo in &c.repo {
        let mine: Vec<usize> = (0..c.root.len())
            .filter(|&i| c.root[i].repo == repo.name)
            .collect();
        let depth = mine.iter().map(|&i| batch[i]).max().unwrap_or(0);
        for b in 0..=depth {
            let roots: Vec<&Root> = mine
                .iter()
                .filter(|&&i| batch[i] == b)
                .map(|&i| &c.root[i])
                .collect();
            let said = lint_repo(&dir.join(&repo.name), repo, &roots, b);
            for (root, s) in roots.into_iter().zip(said) {
                let v = score::verdict(root, &s);
                scored.push((root, s, v));
            }
        }
    }
    let report = format!(
        "{}\nMistakes:\n\n{}",
        score::tables(&scored),
        score::mistakes(&scored)
    );
    std::fs::write(dir.join("report.md"), &report).expect("report is written");
    println!("{report}");
    check_minimum(&scored);
}

/// With `NOSYNC_ACCURACY_MIN=0.95`, fails unless recall and precision reach it.
fn check_minimum(scored: &[(&Root, Said, Verdict)]) {
    let Some(min) = std::env::var("NOSYNC_ACCURACY_MIN").ok() else {
        return;
    };
    let min: f64 = min.parse().expect("NOSYNC_ACCURACY_MIN is a number");
    let mut row = score::Row::default();
    for (root, _, v) in scored {
        row.add(root, *v);
    }
    let recall = row.tally.recall(row.unmatched_syncs).unwrap_or(0.0);
    let precision = row.tally.precision().unwrap_or(0.0);
    assert!(
        recall >= min && precision >= min,
        "recall {recall:.3}, precision {precision:.3}, below {min}"
    );
}

/// The lint binary: `NOSYNC_LINT_BIN` (a release build), else the one cargo built for
/// this test.
fn lint_bin() -> PathBuf {
    std::env::var_os("NOSYNC_LINT_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_cargo-nosync-lint")),
        PathBuf::from,
    )
}

/// Writes the probe crate and the config of batch `b`, runs the lint on it, and returns
/// what it said about each root (in the order of `roots`).
fn lint_repo(dir: &Path, repo: &Repo, roots: &[&Root], b: usize) -> Vec<Said> {
    let config = dir.join(format!("nosync-accuracy-{b}.toml"));
    write_probe(dir, repo, roots, &config);
    let out = Command::new(lint_bin())
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .arg("--config")
        .arg(&config)
        .args(["--format", "json"])
        .output()
        .expect("the lint runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    std::fs::write(dir.join(format!("lint-{b}.json")), stdout.as_bytes()).expect("output is kept");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "lint on {} batch {b}: {} (a crash scores nothing): {}",
        repo.name,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let messages = parse_messages(&stdout);
    roots.iter().map(|r| said_about(r, &messages)).collect()
}

fn write_probe(dir: &Path, repo: &Repo, roots: &[&Root], config_path: &Path) {
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
    let mut config = toml::Table::new();
    let paths = roots.iter().map(|r| toml::Value::from(r.path.as_str()));
    config.insert("roots".into(), toml::Value::Array(paths.collect()));
    config.insert("sinks".into(), toml::Value::Array(repo.sinks.clone()));
    let config = toml::to_string(&config).expect("config serialises");
    write_if_changed(config_path, &config);
    let status = Command::new(env!("CARGO"))
        .arg("fetch")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .status()
        .expect("cargo fetch runs");
    assert!(status.success(), "cargo fetch for {}", repo.name);
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("probe file is written");
    }
}

/// A diagnostic of the JSON stream: code, level, message text, and the finding's root/sink.
#[derive(Debug)]
struct Message {
    code: String,
    level: String,
    text: String,
    root: Option<String>,
    sink: Option<String>,
}

fn parse_messages(stdout: &str) -> Vec<Message> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let m = &v["message"];
        let s = |x: &serde_json::Value| x.as_str().map(str::to_owned);
        out.push(Message {
            code: s(&m["code"]["code"]).unwrap_or_default(),
            level: s(&m["level"]).unwrap_or_default(),
            text: s(&m["message"]).unwrap_or_default(),
            root: s(&v["nosync"]["root"]),
            sink: s(&v["nosync"]["sink"]),
        });
    }
    out
}

fn said_about(root: &Root, messages: &[Message]) -> Said {
    let mut said = Said::default();
    let quoted = format!("`{}`", root.path);
    for m in messages {
        if m.code == "config-error" && m.text.contains(&quoted) {
            said.unmatched = Some(m.text.clone());
        }
        let Some(found) = &m.root else { continue };
        if !same_fn(&root.path, found) {
            continue;
        }
        if m.level == "error" {
            said.errors.push(m.code.clone());
            said.sinks.extend(m.sink.clone());
        } else {
            said.warnings.push(m.code.clone());
        }
    }
    said
}

/// Whether the lint's name for a root (`candle_core::tensor::Tensor::to_vec1`) is the
/// corpus path (`candle_core::Tensor::to_vec1`): the corpus path's identifiers appear in
/// order among the lint's, with the same first and last.
fn same_fn(corpus_path: &str, reported: &str) -> bool {
    let idents = |p: &str| -> Vec<String> {
        p.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|s| !s.is_empty() && *s != "as")
            .map(str::to_owned)
            .collect()
    };
    let (want, got) = (idents(corpus_path), idents(reported));
    if want.first() != got.first() || want.last() != got.last() {
        return false;
    }
    let mut rest = got.iter();
    want.iter().all(|w| rest.any(|g| g == w))
}

#[test]
fn reported_names_match_corpus_paths() {
    assert!(same_fn(
        "candle_core::Tensor::to_vec1",
        "candle_core::tensor::Tensor::to_vec1"
    ));
    assert!(!same_fn(
        "candle_core::Tensor::dims",
        "candle_core::shape::Shape::dims"
    ));
    assert!(same_fn(
        "<candle_nn::Linear as candle_core::Module>::forward",
        "<candle_nn::linear::Linear as candle_core::Module>::forward"
    ));
    assert!(!same_fn(
        "candle_core::Tensor::to_vec1",
        "candle_core::Tensor::to_vec2"
    ));
}
