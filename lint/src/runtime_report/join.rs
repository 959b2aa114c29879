//! The join, pure: the findings and a wait report → each finding confirmed (with what was
//! observed) or not observed, and each observed in-scope site of a root that no finding
//! explains (a missed wait, `advice.rs`). A frame that points into the workspace where no
//! fn of its name is means the report is of other sources: an error.

use super::format::{Frame, ScopeKind, Site, WaitReport};
use super::frames::{frame_file, same_file, same_fn};
use crate::diagnostics::{Finding, Runtime, SinkKind};
use crate::pipeline::{FnIndex, IndexedFn};
use std::path::Path;

/// What the join needs besides the report: the workspace root and the index of fns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct World<'a> {
    pub root: &'a Path,
    pub index: &'a FnIndex,
}

/// The first frame that points into the workspace where no fn of its name is, as words.
pub(crate) fn another_build(report: &WaitReport, world: World<'_>) -> Option<String> {
    let frames = report.sites.iter().flat_map(|s| &s.frames);
    let scopes = report
        .sites
        .iter()
        .filter_map(|s| misplaced_scope(s, world));
    frames
        .filter_map(|f| misplaced(f, world))
        .chain(scopes)
        .next()
}

/// Why a site's `#[no_sync]` scope, placed in a file of the workspace, cannot be of these
/// sources: no root has its name or holds its line.
fn misplaced_scope(site: &Site, world: World<'_>) -> Option<String> {
    let scope = site
        .scope
        .as_ref()
        .filter(|s| site.in_scope && s.kind == ScopeKind::NoSync)?;
    let (written, line) = (scope.file.as_ref()?, scope.line?);
    let file = frame_file(world.root, written);
    let in_workspace =
        file.starts_with(world.root) && (world.index.fns.iter()).any(|g| same_file(&g.file, &file));
    let name = scope.function.as_deref().unwrap_or("?");
    (in_workspace && scope_root(site, world).is_none()).then(|| {
        let at = written.display();
        format!("scope `{name}` at {at}:{line}: no #[no_sync] fn of that name or at that line")
    })
}

/// Why frame `f` cannot be of these sources, if it cannot.
fn misplaced(f: &Frame, world: World<'_>) -> Option<String> {
    let (written, line) = (f.file.as_ref()?, f.line?);
    let file = frame_file(world.root, written);
    if !file.starts_with(world.root) {
        return None;
    }
    let in_file: Vec<&IndexedFn> = (world.index.fns.iter())
        .filter(|g| same_file(&g.file, &file))
        .collect();
    let at = format!("frame `{}` at {}:{line}", f.function, written.display());
    if in_file.is_empty() {
        return Some(format!("{at}: no such source file in the workspace"));
    }
    let found = (in_file.iter()).any(|g| same_fn(&g.path, &f.function) && within(g, line));
    (!found).then(|| format!("{at}: no fn of that name holds that line"))
}

fn within(g: &IndexedFn, line: usize) -> bool {
    g.lines.0 <= line && line <= g.lines.1
}

/// Lines between a `#[no_sync]` attribute and its fn's name, at most (other attributes).
const ATTRIBUTES: usize = 8;

/// The root a site's waits were in (its path as the lint names it), if the site is in scope: a
/// `#[no_sync]` fn by its path, else by its place (a report names the fn by its last segment
/// alone when the frames end before it): the first root whose name is at most [`ATTRIBUTES`]
/// lines below the attribute's line, or that holds it; a `forbid` block by the root that holds its line.
pub(crate) fn scope_root<'i>(site: &Site, world: World<'i>) -> Option<&'i IndexedFn> {
    let scope = site.scope.as_ref().filter(|_| site.in_scope)?;
    let roots = world.index.fns.iter().filter(|g| g.root);
    let at = scope.file.as_deref().zip(scope.line);
    let (file, line) = at.map_or((None, 0), |(f, line)| {
        (Some(frame_file(world.root, f)), line)
    });
    let mut in_file =
        (roots.clone()).filter(|g| file.as_ref().is_some_and(|f| same_file(&g.file, f)));
    match scope.kind {
        ScopeKind::NoSync => {
            let name = scope.function.as_deref()?;
            // The attribute's line: at most a few attribute lines above the fn's name.
            let below = in_file.filter(|g| line <= g.lines.1 && line + ATTRIBUTES >= g.lines.0);
            let first = below.min_by_key(|g| g.lines.0);
            roots.clone().find(|g| same_fn(&g.path, name)).or(first)
        }
        ScopeKind::Forbid => in_file.find(|g| within(g, line)),
    }
}

/// Whether the site's waits are driver setup (a module load, page-locking, a context): the
/// hook gives such calls one reason, which the format's reference documents.
pub(crate) fn is_setup(site: &Site) -> bool {
    site.why.starts_with("driver setup work")
}

/// How well a site's frames match a finding of the same root: `None` when its hops in the
/// workspace are not all among the frames in order (for setup found as setup, the root's hop
/// alone); else whether the sink is among them too.
pub(crate) fn matches(
    finding: &Finding,
    site: &Site,
    world: World<'_>,
    lines: bool,
) -> Option<bool> {
    // Outermost first, as the chain goes. One-time setup reached through the root's call is that
    // call's setup finding whichever way it went below (candle loads each op's kernels on its
    // first use, through whichever op runs first): only the root's hop must be among the frames.
    let setup = finding.sink_kind == SinkKind::Setup && is_setup(site);
    let hops = if setup {
        &finding.chain[..1]
    } else {
        &finding.chain[..]
    };
    let mut frames = site.frames.iter().rev();
    for hop in hops {
        let file = &hop.call_site.file;
        let in_workspace = world.index.fns.iter().any(|g| {
            same_file(&g.file, file) && g.file.starts_with(world.root) && g.path == hop.function
        });
        if !in_workspace {
            continue;
        }
        let line = hop.call_site.line_start;
        frames.find(|f| {
            same_fn(&hop.function, &f.function) && (!lines || frame_at(f, world.root, file, line))
        })?;
    }
    let sink = site
        .frames
        .iter()
        .any(|f| same_fn(&finding.sink, &f.function));
    (lines || sink).then_some(sink)
}

fn frame_at(f: &Frame, root: &Path, file: &Path, line: usize) -> bool {
    let at_file = f
        .file
        .as_ref()
        .is_some_and(|g| same_file(file, &frame_file(root, g)));
    at_file && f.line == Some(line)
}

/// The observations of `sites`, summed, with `rank` left to [`rank`].
pub(crate) fn observed(sites: &[&Site]) -> Runtime {
    Runtime::Observed {
        count: sites.iter().map(|s| s.count).sum(),
        total_ns: sites.iter().map(|s| s.total_ns).sum(),
        max_ns: sites.iter().map(|s| s.max_ns).max().unwrap_or(0),
        rank: 0,
    }
}

/// Each observed finding's `rank`: its share of the time of all, 0 to 100.
pub(crate) fn rank(runtimes: &mut [&mut Runtime]) {
    let total: u128 = (runtimes.iter())
        .map(|r| match r {
            Runtime::Observed { total_ns, .. } => *total_ns as u128,
            Runtime::NotObserved => 0,
        })
        .sum();
    for r in runtimes.iter_mut() {
        if let Runtime::Observed { total_ns, rank, .. } = r {
            let share = (*total_ns as u128 * 100).checked_div(total).unwrap_or(0);
            *rank = share.min(100) as u8;
        }
    }
}

/// `2000 waits, 41.0 ms in all, longest 90 µs`.
pub(crate) fn words(r: &Runtime) -> String {
    match r {
        Runtime::Observed {
            count,
            total_ns,
            max_ns,
            ..
        } => {
            let waits = if *count == 1 { "wait" } else { "waits" };
            let (total, max) = (duration(*total_ns), duration(*max_ns));
            format!("observed: {count} {waits}, {total} in all, longest {max}")
        }
        Runtime::NotObserved => {
            "not observed: the run that wrote the wait report never waited on this chain".to_owned()
        }
    }
}

/// `41.0 ms`, `90 µs`, `1.20 s`, `850 ns`.
pub(crate) fn duration(ns: u64) -> String {
    let ns = ns as f64;
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.1} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.0} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}
