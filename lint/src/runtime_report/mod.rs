//! `--runtime-report PATH`: the findings joined with what the runtime hook saw
//! (`docs/wait-report.md`). `format` reads and checks the report, `index` keeps what the
//! join needs of the analysis, `frames` compares its paths, `join` matches sites with
//! findings, `advice` makes a missed wait's diagnostic. [`apply`] is the join over a run's
//! diagnostics: findings confirmed (with what was observed, the costliest first) or not
//! observed, and a `missed-wait` for each observed wait of a root no finding explains.

mod advice;
mod format;
mod frames;
mod join;

pub(crate) use join::words;

use crate::diagnostics::{Diagnostic, Runtime, SinkKind};
use crate::pipeline::{IndexedFn, RawIndex};
use crate::source::SourceMap;
use format::{Site, WaitReport};
use join::World;
use std::path::Path;

/// The note said once when the report's frames have no lines.
const NO_LINES: &str = "the wait report's frames have no file or line (the binary has no line tables): findings were matched by function names only; to match lines, build with `[profile.release] debug = \"line-tables-only\"`";

/// What the join reads of the run besides its diagnostics.
pub(crate) struct Analysed<'a> {
    pub sources: &'a SourceMap,
    /// The index of the fns the run analysed.
    pub index: RawIndex,
    /// The workspace root.
    pub root: &'a Path,
}

/// Joins the report at `path` (its text `text`) with `diagnostics`, the run's over the
/// workspace `analysed.root`: `Err` is the located error to print (exit status 2).
pub(crate) fn apply(
    diagnostics: &mut Vec<Diagnostic>,
    analysed: Analysed<'_>,
    path: &Path,
    text: &str,
) -> Result<(), String> {
    let Analysed {
        sources,
        index,
        root,
    } = analysed;
    let report = format::parse(path, text).map_err(|e| e.to_string())?;
    let index = index.lines(sources);
    let world = World {
        root,
        index: &index,
    };
    if let Some(frame) = join::another_build(&report, world) {
        return Err(another_build(path, &report, &frame));
    }
    let taken = confirm(diagnostics, &report, world);
    let untaken = (report.sites.iter().zip(&taken)).filter(|(_, taken)| !**taken);
    let lost = untaken.map(|(site, _)| site);
    let mut missed: Vec<(u64, Diagnostic)> = (missed_groups(lost, world, report.line_tables))
        .iter()
        .map(|(root, sites, total)| {
            let d = advice::missed(sites, root, world, report.line_tables, sources);
            (*total, d)
        })
        .collect();
    if !report.line_tables
        && let Some(first) = (missed.first_mut().map(|(_, d)| d))
            .or(diagnostics.iter_mut().find(|d| d.finding.is_some()))
    {
        first.notes.push(crate::diagnostics::Note {
            message: NO_LINES.to_owned(),
            span: None,
        });
    }
    order(diagnostics, missed);
    Ok(())
}

/// The sites no finding took, of a root, grouped by where the lint lost them (root, call,
/// the place it lost them): one `missed-wait` each, with its total time, the costliest group
/// first, its costliest site first.
fn missed_groups<'s, 'i>(
    sites: impl Iterator<Item = &'s Site>,
    world: World<'i>,
    lines: bool,
) -> Vec<(&'i IndexedFn, Vec<&'s Site>, u64)> {
    type Key<'k> = (&'k str, &'k str, Option<(String, Option<usize>)>);
    let mut groups: Vec<(Key<'_>, &IndexedFn, Vec<&Site>)> = Vec::new();
    for site in sites {
        let Some(root) = join::scope_root(site, world) else {
            continue;
        };
        let key = (
            root.path.as_str(),
            site.api.as_str(),
            advice::lost_at(site, world, lines),
        );
        match groups.iter_mut().find(|(k, ..)| *k == key) {
            Some((.., group)) => group.push(site),
            None => groups.push((key, root, vec![site])),
        }
    }
    let mut groups: Vec<_> = (groups.into_iter())
        .map(|(_, root, mut sites)| {
            sites.sort_by_key(|s| std::cmp::Reverse(s.total_ns));
            let total = sites.iter().map(|s| s.total_ns).sum::<u64>();
            (root, sites, total)
        })
        .collect();
    groups.sort_by_key(|(.., total)| std::cmp::Reverse(*total));
    groups
}

/// The error for a report of other sources.
fn another_build(path: &Path, report: &WaitReport, frame: &str) -> String {
    let p = &report.program;
    format!(
        "{}: the wait report is of another build of this workspace ({}, pid {}, backend {}): {frame}",
        path.display(),
        p.exe,
        p.pid,
        p.backend
    )
}

/// How well a finding explains a site: its sink among the frames, a sink of the site's kind,
/// the chain's length; the highest takes the site.
type Score = (bool, bool, usize);

/// Marks each finding observed or not, and returns which sites a finding took.
fn confirm(diagnostics: &mut [Diagnostic], report: &WaitReport, world: World<'_>) -> Vec<bool> {
    let roots: Vec<Option<&IndexedFn>> = report
        .sites
        .iter()
        .map(|s| join::scope_root(s, world))
        .collect();
    let lines = report.line_tables;
    let mut taken_by: Vec<Option<(usize, Score)>> = vec![None; report.sites.len()];
    for (d, diagnostic) in diagnostics.iter().enumerate() {
        let Some(finding) = &diagnostic.finding else {
            continue;
        };
        for (s, site) in report.sites.iter().enumerate() {
            let same_root = roots[s].is_some_and(|r| r.path == finding.root);
            let Some(sink) = same_root
                .then(|| join::matches(finding, site, world, lines))
                .flatten()
            else {
                continue;
            };
            // The sink among the frames, then a sink of the site's kind (a module load is
            // setup), then the longest chain.
            let kind = (finding.sink_kind == SinkKind::Setup) == join::is_setup(site);
            let score = (sink, kind, finding.chain.len());
            if taken_by[s].is_none_or(|(_, best)| score > best) {
                taken_by[s] = Some((d, score));
            }
        }
    }
    for (d, diagnostic) in diagnostics.iter_mut().enumerate() {
        let sites: Vec<_> = (report.sites.iter().zip(&taken_by))
            .filter(|(_, t)| t.is_some_and(|(by, _)| by == d))
            .map(|(s, _)| s)
            .collect();
        if let Some(finding) = &mut diagnostic.finding {
            finding.runtime = Some(match sites.is_empty() {
                true => Runtime::NotObserved,
                false => join::observed(&sites),
            });
        }
    }
    let mut runtimes: Vec<&mut Runtime> = (diagnostics.iter_mut())
        .filter_map(|d| d.finding.as_mut()?.runtime.as_mut())
        .collect();
    join::rank(&mut runtimes);
    taken_by.iter().map(Option::is_some).collect()
}

/// The observed findings and the missed waits first, the most time first, each finding with
/// its note; the other findings after, in their order, each with a note that it was not
/// observed.
fn order(diagnostics: &mut Vec<Diagnostic>, missed: Vec<(u64, Diagnostic)>) {
    for d in diagnostics.iter_mut() {
        if let Some(runtime) = d.finding.as_ref().and_then(|f| f.runtime) {
            d.notes.push(crate::diagnostics::Note {
                message: join::words(&runtime),
                span: None,
            });
        }
    }
    let rank = |d: &Diagnostic| match d.finding.as_ref().and_then(|f| f.runtime) {
        Some(Runtime::Observed { total_ns, .. }) => Some(total_ns),
        _ => None,
    };
    let mut all: Vec<(Option<u64>, Diagnostic)> = (diagnostics.drain(..))
        .map(|d| (rank(&d), d))
        .chain(missed.into_iter().map(|(total, d)| (Some(total), d)))
        .collect();
    all.sort_by_key(|(total, _)| (total.is_none(), std::cmp::Reverse(total.unwrap_or(0))));
    diagnostics.extend(all.into_iter().map(|(_, d)| d));
}

#[cfg(test)]
mod tests;
