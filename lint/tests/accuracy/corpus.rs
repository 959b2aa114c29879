//! The labelled corpus (`corpus.toml`): its model and the checks that keep it well formed.

use serde::Deserialize;
use std::collections::HashSet;

/// What a root does on the host, decided by reading every hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    Syncs,
    Setup,
    Clean,
}

pub const DIFFICULTIES: &[&str] = &["direct", "alias-?", "macro", "dyn", "cross-crate", "drop"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corpus {
    pub repo: Vec<Repo>,
    pub root: Vec<Root>,
}

/// One probe crate: a library depending on a repo's crates, linted from outside.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repo {
    pub name: String,
    /// `[dependencies]` lines of the probe's manifest.
    pub deps: Vec<String>,
    /// Extra config sinks (APIs outside the built-in cudarc 0.19 table).
    pub sinks: Vec<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Root {
    pub repo: String,
    #[serde(rename = "crate")]
    pub krate: String,
    /// A config-root path, as `roots = [..]` takes it.
    pub path: String,
    pub label: Label,
    /// The blocking API the chain ends in (syncs and setup roots).
    pub sink: Option<String>,
    pub difficulty: String,
    /// Other corpus roots on the chain as read: a search stops at another root (its chain is
    /// reported there only), so a root is linted in a later batch than every root it calls.
    #[serde(default)]
    pub calls: Vec<String>,
    /// The chain as read in the sources, one hop per entry.
    pub hops: Vec<String>,
}

pub fn load() -> Corpus {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/accuracy/corpus.toml");
    let text = std::fs::read_to_string(path).expect("corpus.toml is readable");
    toml::from_str(&text).expect("corpus.toml parses")
}

/// Every problem of the corpus, as sentences (empty when it is well formed).
pub fn problems(c: &Corpus) -> Vec<String> {
    let mut out = Vec::new();
    let repos: HashSet<&str> = c.repo.iter().map(|r| r.name.as_str()).collect();
    let mut seen = HashSet::new();
    for r in &c.root {
        let who = format!("root `{}`", r.path);
        if !repos.contains(r.repo.as_str()) {
            out.push(format!("{who}: repo `{}` is not declared", r.repo));
        }
        if !seen.insert((r.repo.as_str(), r.path.as_str())) {
            out.push(format!("{who}: listed twice"));
        }
        if !DIFFICULTIES.contains(&r.difficulty.as_str()) {
            out.push(format!("{who}: unknown difficulty `{}`", r.difficulty));
        }
        if r.hops.is_empty() {
            out.push(format!("{who}: no hops"));
        }
        if (r.label == Label::Clean) == r.sink.is_some() {
            out.push(format!(
                "{who}: a sink is given exactly for syncs/setup roots"
            ));
        }
    }
    out.extend(size_problems(c, repos.len()));
    out.extend(call_problems(c));
    out
}

fn call_problems(c: &Corpus) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.root {
        for callee in &r.calls {
            if !c.root.iter().any(|o| o.repo == r.repo && o.path == *callee) {
                out.push(format!(
                    "root `{}`: calls `{callee}`, not a root of {}",
                    r.path, r.repo
                ));
            }
        }
    }
    if out.is_empty() && batches(c).is_none() {
        out.push("the `calls` relation has a cycle".to_owned());
    }
    out
}

/// Batch of each root (index into `c.root`): 0 for roots calling no other root, else one
/// more than the highest batch of the roots it calls; `None` on a cycle.
pub fn batches(c: &Corpus) -> Option<Vec<usize>> {
    let n = c.root.len();
    let mut batch: Vec<Option<usize>> = vec![None; n];
    for _ in 0..=n {
        let mut changed = false;
        for (i, r) in c.root.iter().enumerate() {
            if batch[i].is_some() {
                continue;
            }
            let callees: Option<Vec<usize>> = r
                .calls
                .iter()
                .map(|p| c.root.iter().position(|o| o.repo == r.repo && o.path == *p))
                .map(|j| j.and_then(|j| batch[j]))
                .collect();
            if let Some(b) = callees {
                batch[i] = Some(b.into_iter().max().map_or(0, |m| m + 1));
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    batch.into_iter().collect()
}

fn size_problems(c: &Corpus, repos: usize) -> Vec<String> {
    let mut out = Vec::new();
    let clean = c.root.iter().filter(|r| r.label == Label::Clean).count();
    if c.root.len() < 60 {
        out.push(format!("{} roots: at least 60 are needed", c.root.len()));
    }
    if clean * 2 < c.root.len() {
        out.push(format!(
            "{clean} clean roots of {}: at least half",
            c.root.len()
        ));
    }
    if repos < 3 {
        out.push(format!("{repos} repos: at least 3"));
    }
    out
}
