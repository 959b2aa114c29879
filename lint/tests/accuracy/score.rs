//! Scoring the lint's JSON output against the corpus labels (the rules are in docs/accuracy.md).

use crate::corpus::{Label, Root, split_locked, split_site};
use std::collections::BTreeMap;

/// What the lint said about one root.
#[derive(Debug, Default, Clone)]
pub(crate) struct Said {
    /// Codes of the error-level findings for the root.
    pub errors: Vec<String>,
    /// Where each error-level finding is (its primary span: file relative to the workspace,
    /// line), in the order of `errors`.
    pub error_sites: Vec<(String, usize)>,
    /// Codes of the warning-level findings for the root.
    pub warnings: Vec<String>,
    /// The sinks of its error-level findings.
    pub sinks: Vec<String>,
    /// A config error named the root: it matched no function.
    pub unmatched: Option<String>,
    /// The files of the chains of all its findings (errors and warnings).
    pub chain_files: Vec<String>,
}

/// The verdict on one root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A syncs root with an error at each of its sites (any error when it lists none);
    /// `false_report`: it also has an error elsewhere (counted as a false positive too).
    TruePositive { false_report: bool },
    /// A syncs root missing an error at one of its sites (at all, when it lists none).
    FalseNegative { false_report: bool },
    /// A clean or setup root with an error-level finding.
    FalsePositive,
    /// A clean root without an error-level finding.
    TrueNegative,
    /// A setup root reported as setup (`setup-sync-in-no-sync`) and with no error.
    SetupWarned,
    /// A setup root with no finding at all (no error, no setup warning).
    SetupSilent,
    /// The config root matched no function: the lint could not analyse it.
    Unmatched,
}

pub(crate) fn verdict(root: &Root, said: &Said) -> Verdict {
    if said.unmatched.is_some() {
        return Verdict::Unmatched;
    }
    let error = !said.errors.is_empty();
    match root.label {
        Label::Syncs => {
            let (found, false_report) = syncs_found(root, said);
            if found {
                Verdict::TruePositive { false_report }
            } else {
                Verdict::FalseNegative { false_report }
            }
        }
        Label::Clean | Label::Setup if error => Verdict::FalsePositive,
        Label::Clean => Verdict::TrueNegative,
        Label::Setup if said.warnings.iter().any(|c| c == "setup-sync-in-no-sync") => {
            Verdict::SetupWarned
        }
        Label::Setup => Verdict::SetupSilent,
    }
}

/// Whether every site of a syncs root got a `sync-in-no-sync` error (without sites: whether
/// one did), and whether an error is reported anywhere else (the user-facing view: an error on
/// a call that does not wait, e.g. on a branch that cannot be taken, is false).
fn syncs_found(root: &Root, said: &Said) -> (bool, bool) {
    let real = |code: &str| code == "sync-in-no-sync";
    if root.sites.is_empty() {
        return (said.errors.iter().any(|c| real(c)), false);
    }
    let sites: Vec<(&str, usize)> = root.sites.iter().filter_map(|s| split_site(s)).collect();
    let at_site = |(file, line): &(String, usize)| sites.contains(&(file.as_str(), *line));
    let right = |i: usize| real(&said.errors[i]) && at_site(&said.error_sites[i]);
    let all = sites.iter().all(|&(file, line)| {
        (0..said.errors.len()).any(|i| right(i) && said.error_sites[i] == (file.to_owned(), line))
    });
    let wrong = (0..said.errors.len()).any(|i| !right(i));
    (all, wrong)
}

/// How many of a syncs root's sites got an error.
pub(crate) fn sites_found(root: &Root, said: &Said) -> usize {
    root.sites
        .iter()
        .filter_map(|s| split_site(s))
        .filter(|&(file, line)| {
            said.errors
                .iter()
                .zip(&said.error_sites)
                .any(|(c, (f, l))| c == "sync-in-no-sync" && f == file && *l == line)
        })
        .count()
}

/// The chain files of a root that lie in another version of a crate it `locked` than the one
/// named there, each as `file (locks name version)`.
pub(crate) fn wrong_versions(root: &Root, said: &Said) -> Vec<String> {
    let mut out = Vec::new();
    for file in &said.chain_files {
        for (name, version) in root.locked.iter().filter_map(|l| split_locked(l)) {
            let other = file.split(['/', '\\']).any(|dir| {
                dir.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix('-'))
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()) && v != version)
            });
            let line = format!("{file} (locks {name} {version})");
            if other && !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// Counts for one row of the table.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tally {
    pub roots: usize,
    pub tp: usize,
    pub fn_: usize,
    pub fp: usize,
    pub tn: usize,
    pub setup_ok: usize,
    pub setup_warned: usize,
    pub unmatched: usize,
}

impl Tally {
    pub(crate) fn add(&mut self, v: Verdict) {
        self.roots += 1;
        match v {
            Verdict::TruePositive { false_report } => {
                self.tp += 1;
                self.fp += usize::from(false_report);
            }
            Verdict::FalseNegative { false_report } => {
                self.fn_ += 1;
                self.fp += usize::from(false_report);
            }
            Verdict::FalsePositive => self.fp += 1,
            Verdict::TrueNegative => self.tn += 1,
            Verdict::SetupWarned => {
                self.setup_ok += 1;
                self.setup_warned += 1;
            }
            Verdict::SetupSilent => self.setup_ok += 1,
            Verdict::Unmatched => self.unmatched += 1,
        }
    }

    /// TP / (TP + FN + unmatched syncs roots): an unmatched syncs root is a miss.
    pub(crate) fn recall(&self, unmatched_syncs: usize) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_ + unmatched_syncs)
    }

    /// TP / (TP + FP), FP counting clean and setup roots with an error-level finding and
    /// syncs roots with an error away from their sites.
    pub(crate) fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }
}

fn ratio(n: usize, d: usize) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "–".to_owned(), |x| format!("{:.1} %", x * 100.0))
}

/// The table row for a group of verdicts.
#[derive(Debug, Default)]
pub(crate) struct Row {
    pub tally: Tally,
    pub unmatched_syncs: usize,
}

impl Row {
    pub(crate) fn add(&mut self, root: &Root, v: Verdict) {
        self.tally.add(v);
        if v == Verdict::Unmatched && root.label == Label::Syncs {
            self.unmatched_syncs += 1;
        }
    }

    fn cells(&self, name: &str) -> String {
        let t = &self.tally;
        format!(
            "| {name} | {} | {} | {} | {} | {} | {} ({} warned) | {} | {} | {} |",
            t.roots,
            t.tp,
            t.fn_,
            t.fp,
            t.tn,
            t.setup_ok,
            t.setup_warned,
            t.unmatched,
            pct(t.recall(self.unmatched_syncs)),
            pct(t.precision()),
        )
    }
}

const HEADER: &str = "| group | roots | TP | FN | FP | TN | setup ok | unmatched | recall | precision |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|";

/// The per-repo and per-difficulty tables, in Markdown.
pub(crate) fn tables(scored: &[(&Root, Said, Verdict)]) -> String {
    let mut by_repo: BTreeMap<&str, Row> = BTreeMap::new();
    let mut by_diff: BTreeMap<&str, Row> = BTreeMap::new();
    let mut all = Row::default();
    for (root, _, v) in scored {
        by_repo.entry(&root.repo).or_default().add(root, *v);
        by_diff.entry(&root.difficulty).or_default().add(root, *v);
        all.add(root, *v);
    }
    let mut out = format!("Per repo:\n\n{HEADER}\n");
    for (name, row) in &by_repo {
        out += &format!("{}\n", row.cells(name));
    }
    out += &format!("{}\n\nPer difficulty:\n\n{HEADER}\n", all.cells("**all**"));
    for (name, row) in &by_diff {
        out += &format!("{}\n", row.cells(&format!("`{name}`")));
    }
    out
}

/// The errors of a syncs root away from its sites.
fn false_reports(root: &Root, said: &Said) -> String {
    let wrong: Vec<(String, usize)> = said
        .error_sites
        .iter()
        .filter(|(f, l)| {
            !root
                .sites
                .iter()
                .any(|s| split_site(s) == Some((f.as_str(), *l)))
        })
        .cloned()
        .collect();
    format!("false report at {}", sites_text(&wrong))
}

fn sites_text(sites: &[(String, usize)]) -> String {
    let each: Vec<String> = sites.iter().map(|(f, l)| format!("{f}:{l}")).collect();
    each.join(", ")
}

/// One line per root the lint got wrong (or could not analyse).
pub(crate) fn mistakes(scored: &[(&Root, Said, Verdict)]) -> String {
    let mut out = String::new();
    for (root, said, v) in scored {
        let what = match v {
            Verdict::TruePositive {
                false_report: false,
            } => continue,
            Verdict::TruePositive { false_report: true } => false_reports(root, said),
            Verdict::FalseNegative { false_report } => {
                let mut m = if root.sites.is_empty() {
                    "miss".to_owned()
                } else {
                    format!(
                        "miss ({} of {} sites reported)",
                        sites_found(root, said),
                        root.sites.len()
                    )
                };
                if *false_report {
                    m += &format!("; {}", false_reports(root, said));
                }
                m
            }
            Verdict::FalsePositive => format!(
                "false positive ({}) via {} at {}",
                said.errors.join(", "),
                said.sinks.join(", "),
                sites_text(&said.error_sites)
            ),
            Verdict::Unmatched => format!(
                "unmatched: {}",
                said.unmatched.as_deref().unwrap_or_default()
            ),
            _ => continue,
        };
        out += &format!(
            "- {} ({}) `{}` ({:?}, `{}`): {what}\n",
            root.repo, root.krate, root.path, root.label, root.difficulty
        );
    }
    out
}
