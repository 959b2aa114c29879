//! The labelled corpus (`corpus.toml`): its model and the checks that keep it well formed.

use serde::Deserialize;
use std::collections::HashSet;

/// What a root does on the host, decided by reading every hop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Label {
    Syncs,
    Setup,
    Clean,
}

pub(crate) const DIFFICULTIES: &[&str] = &[
    "direct",
    "alias-?",
    "macro",
    "dyn",
    "cross-crate",
    "drop",
    "fmt",
    "iter",
    "operator",
    "closure",
    "arg",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Corpus {
    pub repo: Vec<Repo>,
    pub root: Vec<Root>,
}

/// A repo of the corpus: either library crates from the registry (`deps`), linted from
/// outside through a probe crate, or an application (`git` + `commit`), a workspace linted
/// itself at that commit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Repo {
    pub name: String,
    /// `[dependencies]` lines of the probe's manifest (registry repos).
    #[serde(default)]
    pub deps: Vec<String>,
    /// The repository's URL (application repos).
    pub git: Option<String>,
    /// The commit linted, 40 hex digits (application repos).
    pub commit: Option<String>,
    /// The workspace's directory inside the checkout (default: its root).
    pub workspace: Option<String>,
    /// Extra lint arguments (`--features`, ...).
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra config sinks (APIs outside the built-in cudarc 0.19 table).
    pub sinks: Vec<toml::Value>,
}

impl Repo {
    /// Whether this is an application repo (a git workspace linted itself).
    pub(crate) fn is_app(&self) -> bool {
        self.git.is_some()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Root {
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
    /// Where the user must see an error (syncs roots of application repos): each call in the
    /// root's body that starts a real wait, as `file:line` relative to the workspace. An
    /// error anywhere else is a false report.
    #[serde(default)]
    pub sites: Vec<String>,
    /// The versions its chains must stay in, as `name version` (`candle-core 0.6.0`): each
    /// file of a chain reported for the root that lies in a source directory of a crate named
    /// here (`candle-core-<version>/`) must be in that version's. Where a graph holds two
    /// versions of a crate, a chain through the other one points the user at the wrong code.
    #[serde(default)]
    pub locked: Vec<String>,
}

/// `candle-core 0.6.0` as (`candle-core`, `0.6.0`).
pub(crate) fn split_locked(entry: &str) -> Option<(&str, &str)> {
    let (name, version) = entry.split_once(' ')?;
    let numeric = version.split('.').all(|n| n.parse::<u64>().is_ok());
    (!name.is_empty() && numeric && version.matches('.').count() == 2).then_some((name, version))
}

pub(crate) fn load() -> Corpus {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/accuracy/corpus.toml");
    let text = std::fs::read_to_string(path).expect("corpus.toml is readable");
    toml::from_str(&text).expect("corpus.toml parses")
}

#[cfg(test)]
pub(crate) fn parse(text: &str) -> Corpus {
    toml::from_str(text).expect("the corpus parses")
}

/// Every problem of the corpus, as sentences (empty when it is well formed).
pub(crate) fn problems(c: &Corpus) -> Vec<String> {
    let mut out = Vec::new();
    let repos: HashSet<&str> = c.repo.iter().map(|r| r.name.as_str()).collect();
    for repo in &c.repo {
        out.extend(repo_problems(repo));
    }
    let mut seen = HashSet::new();
    for r in &c.root {
        let who = format!("root `{}`", r.path);
        match c.repo.iter().find(|x| x.name == r.repo) {
            None => out.push(format!("{who}: repo `{}` is not declared", r.repo)),
            Some(repo) => out.extend(site_problems(&who, repo, r)),
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

fn repo_problems(r: &Repo) -> Vec<String> {
    let who = format!("repo `{}`", r.name);
    let mut out = Vec::new();
    match (&r.git, &r.commit) {
        (None, None) if r.deps.is_empty() => {
            out.push(format!("{who}: neither `deps` nor `git` + `commit`"));
        }
        (None, None) => {
            if r.workspace.is_some() {
                out.push(format!("{who}: `workspace` is for application repos"));
            }
        }
        (Some(_), Some(commit)) => {
            if !r.deps.is_empty() {
                out.push(format!("{who}: both `deps` and `git`"));
            }
            if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                out.push(format!("{who}: `commit` is not 40 hex digits"));
            }
        }
        _ => out.push(format!("{who}: `git` and `commit` go together")),
    }
    out
}

/// `sites` are required for the syncs roots of application repos, and are `file:line`.
fn site_problems(who: &str, repo: &Repo, r: &Root) -> Vec<String> {
    let mut out = Vec::new();
    if r.label != Label::Syncs && !r.sites.is_empty() {
        out.push(format!("{who}: `sites` are for syncs roots"));
    }
    if repo.is_app() && r.label == Label::Syncs && r.sites.is_empty() {
        out.push(format!(
            "{who}: a syncs root of an application repo needs `sites`"
        ));
    }
    for s in &r.sites {
        if split_site(s).is_none() {
            out.push(format!("{who}: site `{s}` is not `file:line`"));
        }
    }
    if r.label == Label::Clean && !r.locked.is_empty() {
        out.push(format!("{who}: `locked` is for syncs and setup roots"));
    }
    for l in &r.locked {
        if split_locked(l).is_none() {
            out.push(format!("{who}: `locked` entry `{l}` is not `name x.y.z`"));
        }
    }
    out
}

/// `src/main.rs:12` as (`src/main.rs`, 12).
pub(crate) fn split_site(site: &str) -> Option<(&str, usize)> {
    let (file, line) = site.rsplit_once(':')?;
    let line = line.parse().ok().filter(|&l| l > 0)?;
    (!file.is_empty()).then_some((file, line))
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
pub(crate) fn batches(c: &Corpus) -> Option<Vec<usize>> {
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

/// Whether the roots of `repo` lock two versions of one crate (a graph that holds both).
fn two_versions(c: &Corpus, repo: &str) -> bool {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let locked = c.root.iter().filter(|r| r.repo == repo);
    for (name, version) in locked.flat_map(|r| r.locked.iter().filter_map(|l| split_locked(l))) {
        if seen.iter().any(|&(n, v)| n == name && v != version) {
            return true;
        }
        seen.push((name, version));
    }
    false
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
    if !c.repo.iter().any(|r| two_versions(c, &r.name)) {
        out.push("no repo whose roots lock two versions of one crate".to_owned());
    }
    for repo in c.repo.iter().filter(|r| r.is_app()) {
        let n = c.root.iter().filter(|r| r.repo == repo.name).count();
        if n < 20 {
            out.push(format!(
                "application repo `{}`: {n} roots, at least 20",
                repo.name
            ));
        }
    }
    out
}
