//! The lint's accuracy on real GPU code: a labelled corpus of roots in library crates from the
//! registry (candle, cubecl, dfdx) and in application repos at a pinned commit
//! (`accuracy/corpus.toml`), scored against the lint's JSON output.
//!
//! `corpus_is_well_formed` runs in CI. `accuracy_on_real_crates` needs the crates from the
//! registry, the application repos' checkouts and a release build, so it is ignored by
//! default; docs/accuracy.md gives the command and the rules, and the tables it printed.

#[path = "accuracy/corpus.rs"]
mod corpus;
#[path = "accuracy/score.rs"]
mod score;
#[path = "accuracy/setup.rs"]
mod setup;

use corpus::{Repo, Root};
use score::{Said, Verdict};
use setup::{app_workspace, fetch, write_config, write_probe};
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn corpus_is_well_formed() {
    let c = corpus::load();
    assert_eq!(corpus::problems(&c), Vec::<String>::new());
}

#[test]
#[ignore = "needs the real crates (cargo fetches them), the application repos' checkouts (NOSYNC_ACCURACY_GIT) and a release build: see docs/accuracy.md"]
fn accuracy_on_real_crates() {
    let c = corpus::load();
    assert_eq!(corpus::problems(&c), Vec::<String>::new());
    let dir = std::env::var_os("NOSYNC_ACCURACY_DIR").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).join("accuracy"),
        PathBuf::from,
    );
    let batch = corpus::batches(&c).expect("no cycle");
    let only = std::env::var("NOSYNC_ACCURACY_ONLY").ok();
    let only: Option<Vec<&str>> = only.as_deref().map(|o| o.split(',').collect());
    let mut scored = Vec::new();
    for repo in &c.repo {
        if only
            .as_ref()
            .is_some_and(|o| !o.contains(&repo.name.as_str()))
        {
            continue;
        }
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
    std::fs::create_dir_all(&dir).expect("accuracy dir");
    let wrong = wrong_versions(&scored);
    let report = format!(
        "{}\nMistakes:\n\n{}\nChains in another version than the one locked:\n\n{}",
        score::tables(&scored),
        score::mistakes(&scored),
        wrong.concat()
    );
    std::fs::write(dir.join("report.md"), &report).expect("report is written");
    println!("{report}");
    assert!(
        wrong.is_empty(),
        "{} roots with a chain in another version",
        wrong.len()
    );
    check_minimum(&scored);
}

/// One paragraph per root with a chain through another version of a crate it `locked`.
fn wrong_versions(scored: &[(&Root, Said, Verdict)]) -> Vec<String> {
    let mut out = Vec::new();
    for (root, said, _) in scored {
        let files = score::wrong_versions(root, said);
        if !files.is_empty() {
            let each: Vec<String> = files.iter().map(|f| format!("  - {f}\n")).collect();
            out.push(format!(
                "- {} `{}`:\n{}",
                root.repo,
                root.path,
                each.concat()
            ));
        }
    }
    out
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

/// Writes the config of batch `b` (and, for a registry repo, the probe crate), runs the lint
/// on the probe or the application's workspace, and returns what it said about each root (in
/// the order of `roots`).
fn lint_repo(dir: &Path, repo: &Repo, roots: &[&Root], b: usize) -> Vec<Said> {
    std::fs::create_dir_all(dir).expect("accuracy dir");
    let config = dir.join(format!("nosync-accuracy-{b}.toml"));
    write_config(repo, roots, &config);
    let manifest = if repo.is_app() {
        app_workspace(repo).join("Cargo.toml")
    } else {
        write_probe(dir, repo);
        dir.join("Cargo.toml")
    };
    fetch(repo, &manifest);
    let out = Command::new(lint_bin())
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--config")
        .arg(&config)
        .args(["--format", "json"])
        .args(&repo.args)
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
    // Without cargo's graph the lint analyses a guessed selection: not the repo as built.
    let fallback = messages.iter().find(|m| m.code == "workspace-fallback");
    assert!(
        fallback.is_none(),
        "lint on {} batch {b}: {}",
        repo.name,
        fallback.map_or("", |m| m.text.as_str())
    );
    roots.iter().map(|r| said_about(r, &messages)).collect()
}

/// A diagnostic of the JSON stream: code, level, message text, primary span (file relative
/// to the workspace, line), and the finding's root/sink.
#[derive(Debug)]
struct Message {
    code: String,
    level: String,
    text: String,
    site: (String, usize),
    root: Option<String>,
    sink: Option<String>,
    /// The files of the finding's chain (`nosync.chain[].file`).
    chain_files: Vec<String>,
}

fn parse_messages(stdout: &str) -> Vec<Message> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let m = &v["message"];
        let s = |x: &serde_json::Value| x.as_str().map(str::to_owned);
        let spans = m["spans"].as_array().map(Vec::as_slice).unwrap_or_default();
        let primary = spans.iter().find(|s| s["is_primary"] == true);
        let site = primary.map_or_else(Default::default, |p| {
            let line = p["line_start"].as_u64().unwrap_or_default();
            (s(&p["file_name"]).unwrap_or_default(), line as usize)
        });
        let chain = v["nosync"]["chain"].as_array().map(Vec::as_slice);
        let chain_files = chain
            .unwrap_or_default()
            .iter()
            .filter_map(|h| s(&h["file"]));
        out.push(Message {
            code: s(&m["code"]["code"]).unwrap_or_default(),
            level: s(&m["level"]).unwrap_or_default(),
            text: s(&m["message"]).unwrap_or_default(),
            site,
            root: s(&v["nosync"]["root"]),
            sink: s(&v["nosync"]["sink"]),
            chain_files: chain_files.collect(),
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
        said.chain_files.extend(m.chain_files.iter().cloned());
        if m.level == "error" {
            said.errors.push(m.code.clone());
            said.error_sites.push(m.site.clone());
            said.sinks.extend(m.sink.clone());
        } else {
            said.warnings.push(m.code.clone());
        }
    }
    said
}

/// Whether the lint's name for a root (`candle_core::tensor::Tensor::to_vec1`) is the
/// corpus path (`candle_core::Tensor::to_vec1`): the corpus path's identifiers appear in
/// order among the lint's, with the same first and last. A trait is compared by its name
/// (the lint writes std's `Display` without its path).
fn same_fn(corpus_path: &str, reported: &str) -> bool {
    let idents = |p: &str| -> Vec<String> {
        trait_by_name(p)
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
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

/// `<a::T as std::fmt::Display>::fmt` as `<a::T as Display>::fmt`.
fn trait_by_name(path: &str) -> String {
    match path.split_once(" as ") {
        Some((head, tail)) => match tail.split_once('>') {
            Some((tr, rest)) => {
                let path = tr.split('<').next().unwrap_or(tr);
                let name = path.rsplit("::").next().unwrap_or(path);
                format!("{head} as {name}{}>{rest}", &tr[path.len()..])
            }
            None => path.to_owned(),
        },
        None => path.to_owned(),
    }
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
    assert!(same_fn(
        "<candle_core::Tensor as std::fmt::Display>::fmt",
        "<candle_core::tensor::Tensor as Display>::fmt"
    ));
    assert!(!same_fn(
        "<candle_core::Tensor as std::fmt::Display>::fmt",
        "<candle_core::tensor::Tensor as Debug>::fmt"
    ));
    assert!(same_fn(
        "<a::Lbfgs as a::LossOptimizer>::step",
        "<a::lbfgs::Lbfgs as a::LossOptimizer<m::Model>>::step"
    ));
}

/// A corpus of one application repo with a syncs root whose wait starts at `src/main.rs:10`.
const APP: &str = r#"
[[repo]]
name = "app"
git = "https://example.com/app"
commit = "0123456789abcdef0123456789abcdef01234567"
sinks = []

[[root]]
repo = "app"
crate = "app"
path = "app::step"
label = "syncs"
sink = "cudarc::driver::CudaStream::clone_dtoh"
difficulty = "direct"
sites = ["src/main.rs:10"]
hops = ["step (src/main.rs:10): logits.to_vec1()"]
"#;

fn said(errors: &[(&str, &str, usize)]) -> Said {
    Said {
        errors: errors.iter().map(|e| e.0.to_owned()).collect(),
        error_sites: errors.iter().map(|e| (e.1.to_owned(), e.2)).collect(),
        ..Said::default()
    }
}

#[test]
fn syncs_roots_with_sites_are_scored_by_site() {
    let c = corpus::parse(APP);
    let root = &c.root[0];
    let sync = "sync-in-no-sync";
    let v = |errors: &[(&str, &str, usize)]| score::verdict(root, &said(errors));
    let found = Verdict::TruePositive {
        false_report: false,
    };
    assert_eq!(v(&[(sync, "src/main.rs", 10)]), found);
    assert_eq!(
        v(&[(sync, "src/main.rs", 10), (sync, "src/main.rs", 12)]),
        Verdict::TruePositive { false_report: true }
    );
    assert_eq!(
        v(&[(sync, "src/main.rs", 12)]),
        Verdict::FalseNegative { false_report: true }
    );
    assert_eq!(
        v(&[]),
        Verdict::FalseNegative {
            false_report: false
        }
    );
    let mut row = score::Row::default();
    row.add(root, Verdict::TruePositive { false_report: true });
    assert_eq!((row.tally.tp, row.tally.fp), (1, 1));
}

#[test]
fn application_repos_are_checked() {
    let mut c = corpus::parse(APP);
    let problems = corpus::problems(&c);
    assert!(problems.contains(&"application repo `app`: 1 roots, at least 20".to_owned()));
    c.root[0].sites.clear();
    c.repo[0].commit = Some("abc".to_owned());
    let problems = corpus::problems(&c);
    assert!(problems.contains(&"repo `app`: `commit` is not 40 hex digits".to_owned()));
    let needs = "root `app::step`: a syncs root of an application repo needs `sites`";
    assert!(problems.contains(&needs.to_owned()), "{problems:?}");
}

#[test]
fn chains_through_another_version_are_caught() {
    let mut c = corpus::parse(APP);
    c.root[0].locked = vec!["candle-core 0.7.2".to_owned(), "cudarc 0.12.1".to_owned()];
    let reg = "registry/src/index.crates.io";
    let said = |files: &[&str]| Said {
        chain_files: files.iter().map(|f| format!("{reg}/{f}")).collect(),
        ..Said::default()
    };
    let root = &c.root[0];
    let right = said(&[
        "candle-core-0.7.2/src/tensor.rs",
        "candle-nn-0.6.0/src/ops.rs",
    ]);
    assert_eq!(score::wrong_versions(root, &right), Vec::<String>::new());
    let other = said(&[
        "candle-core-0.7.2/src/tensor.rs",
        "candle-core-0.6.0/src/cuda_backend/mod.rs",
        "candle-core-ext-0.1.0/src/lib.rs",
    ]);
    assert_eq!(
        score::wrong_versions(root, &other),
        vec![format!(
            "{reg}/candle-core-0.6.0/src/cuda_backend/mod.rs (locks candle-core 0.7.2)"
        )]
    );
}

#[test]
fn locked_versions_are_checked() {
    let mut c = corpus::parse(APP);
    let problems = corpus::problems(&c);
    let none = "no repo whose roots lock two versions of one crate";
    assert!(problems.contains(&none.to_owned()), "{problems:?}");
    c.root[0].locked = vec!["candle-core 0.7".to_owned()];
    let problems = corpus::problems(&c);
    let bad = "root `app::step`: `locked` entry `candle-core 0.7` is not `name x.y.z`";
    assert!(problems.contains(&bad.to_owned()), "{problems:?}");
    let mut other = corpus::parse(APP);
    other.root[0].path = "app::other".to_owned();
    other.root[0].locked = vec!["candle-core 0.6.0".to_owned()];
    c.root[0].locked = vec!["candle-core 0.7.2".to_owned()];
    c.root.extend(other.root);
    assert!(!corpus::problems(&c).contains(&none.to_owned()));
}
