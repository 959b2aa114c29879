//! A missed wait as a `missed-wait` diagnostic: the deepest frame whose fn the lint analysed,
//! why the lint lost the wait there (from the calls that fn makes on that line), and the
//! `sinks` entry that makes the lint report it.

use super::format::{Frame, Site};
use super::frames::{frame_file, normalise, same_file, same_fn};
use super::join::{World, observed, words};
use crate::diagnostics::{Code, Diagnostic, Span};
use crate::pipeline::{Callee, IndexedFn};
use crate::source::SourceMap;

/// The `missed-wait` diagnostic of `site`, in the scope of `root`; `lines`: the report's
/// frames have lines.
pub(crate) fn missed(
    sites: &[&Site],
    root: &IndexedFn,
    world: World<'_>,
    lines: bool,
    sources: &SourceMap,
) -> Diagnostic {
    let site = sites[0];
    let deepest = deepest(site, world, lines);
    let (at, line) = match deepest {
        Some((i, g)) => (g, site.frames[i].line.filter(|_| lines)),
        None => (root, None),
    };
    let (why, sink) = match deepest {
        Some((i, g)) => lost(&site.frames, i, g, world),
        None => (
            format!(
                "no frame is in a fn the lint analysed; `{}` is the root",
                root.path
            ),
            root.path.clone(),
        ),
    };
    let short = root.path.rsplit("::").next().unwrap_or(&root.path);
    let message = format!(
        "`{short}` is #[no_sync] and waited in `{}` ({}), which no finding explains",
        site.api, site.why
    );
    let primary = span(sources, at, line.unwrap_or(at.lines.0));
    let mut d = Diagnostic::new(Code::MissedWait, message, primary)
        .with_label(format!("the lint lost the wait here: {why}"))
        .with_note(words(&observed(sites)), None)
        .with_note(frames_note(&site.frames, sites.len()), None);
    let known = deepest.and_then(|(i, g)| known_sink(&site.frames, i, g));
    d = d.with_help(match known {
        Some(_) => format!(
            "the frames end before they show how `{short}` reached this call; a finding of `{short}` \
             may explain it (`-v` shows each chain whole)"
        ),
        None => format!(
            "to report it, add to `[workspace.metadata.nosync-lint]` (or a `--config` file): `sinks = [\"{sink}\"]`"
        ),
    });
    d
}

/// Where the lint lost a site's wait: the innermost analysed fn and its frame's line (sites
/// lost at one place, of one call, are one `missed-wait`).
pub(crate) fn lost_at(
    site: &Site,
    world: World<'_>,
    lines: bool,
) -> Option<(String, Option<usize>)> {
    let (i, g) = deepest(site, world, lines)?;
    Some((g.path.clone(), site.frames[i].line))
}

/// The innermost frame whose fn the lint analysed (at that fn's lines, with line tables).
fn deepest<'i>(site: &Site, world: World<'i>, lines: bool) -> Option<(usize, &'i IndexedFn)> {
    site.frames.iter().enumerate().find_map(|(i, f)| {
        let found = world.index.fns.iter().find(|g| {
            g.analysed && same_fn(&g.path, &f.function) && (!lines || at_lines(g, f, world))
        });
        found.map(|g| (i, g))
    })
}

fn at_lines(g: &IndexedFn, f: &Frame, world: World<'_>) -> bool {
    match (&f.file, f.line) {
        (Some(file), Some(line)) => {
            same_file(&g.file, &frame_file(world.root, file))
                && g.lines.0 <= line
                && line <= g.lines.1
        }
        _ => true,
    }
}

/// Why the wait was lost in `g` (frame `i`), and the path to make a sink.
fn lost(frames: &[Frame], i: usize, g: &IndexedFn, world: World<'_>) -> (String, String) {
    let line = frames[i].line;
    let inward = i.checked_sub(1).map(|j| normalise(&frames[j].function));
    let at_line = || {
        g.calls
            .iter()
            .filter(move |c| line.is_none_or(|l| c.line == l))
    };
    let unresolved = at_line().find_map(|c| match &c.callee {
        Callee::Unresolved(what) => Some(what.clone()),
        Callee::Fn { .. } => None,
    });
    // A sink entry for `g` itself makes every chain to it a finding; for a root, the
    // callee the run went into instead.
    let own = || match (g.root, &inward) {
        (true, Some(callee)) => callee.clone(),
        _ => g.path.clone(),
    };
    if let Some(what) = unresolved {
        return (format!("an unresolved call ({what})"), own());
    }
    if let Some(callee) = inward.as_ref().filter(|c| unread(c, world)) {
        let krate = callee.split("::").next().unwrap_or(callee);
        let why = format!("a call into `{krate}`, a crate the lint did not read (`{callee}`)");
        return (why, g.path.clone());
    }
    if let Some(path) = known_sink(frames, i, g) {
        let why = format!(
            "a call to `{path}`, which the lint knows to wait, reached by a chain it did not report"
        );
        return (why, path);
    }
    let resolved = at_line().find_map(|c| match &c.callee {
        Callee::Fn { path, sink: false } => Some(path.clone()),
        _ => None,
    });
    match resolved {
        Some(path) => (
            format!("a call to `{path}`, which the lint does not know to wait"),
            path,
        ),
        None => (
            format!(
                "`{}` waits through code the lint does not see (FFI, the driver)",
                g.path
            ),
            own(),
        ),
    }
}

/// A sink the lint knows, called on frame `i`'s line of `g`, where no frame further in shows
/// another callee (cudarc's and the driver's frames are left out of a report).
fn known_sink(frames: &[Frame], i: usize, g: &IndexedFn) -> Option<String> {
    let line = frames[i].line?;
    let at_line = g.calls.iter().filter(|c| c.line == line);
    at_line.into_iter().find_map(|c| match &c.callee {
        Callee::Fn { path, sink: true } => Some(path.clone()),
        _ => None,
    })
}

/// Whether `path` starts in a crate the lint did not read.
fn unread(path: &str, world: World<'_>) -> bool {
    let first = path.split("::").next().unwrap_or(path);
    !first.starts_with('<') && !world.index.crates.iter().any(|k| k == first)
}

/// The first [`FRAMES_SHOWN`] frames of the costliest site, with how many sites were lost at
/// the same place.
fn frames_note(frames: &[Frame], sites: usize) -> String {
    let each = frames
        .iter()
        .take(FRAMES_SHOWN)
        .map(|f| match (&f.file, f.line) {
            (Some(file), Some(line)) => format!("`{}` at {}:{line}", f.function, file.display()),
            _ => format!("`{}`", f.function),
        });
    let mut list = each.collect::<Vec<_>>().join(", ");
    if frames.len() > FRAMES_SHOWN {
        list += &format!(" and {} more", frames.len() - FRAMES_SHOWN);
    }
    match sites {
        1 => format!("frames, innermost first: {list}"),
        n => format!("{n} call stacks lost here; the costliest's frames, innermost first: {list}"),
    }
}

/// Frames a `missed-wait` shows.
const FRAMES_SHOWN: usize = 8;

/// The span of line `line` of `g`'s file (the whole line, as the lint read it).
fn span(sources: &SourceMap, g: &IndexedFn, line: usize) -> Span {
    let file = sources.files().iter().find(|f| f.path == g.file);
    let display = file.map_or_else(|| g.file.clone(), |f| f.display.clone());
    let Some(text) = sources.text(&display).or_else(|| sources.text(&g.file)) else {
        return Span::start_of(display);
    };
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let rest = &text[start.min(text.len())..];
    let indent = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let end = start + rest.find('\n').unwrap_or(rest.len());
    Span::in_text(display, text, (start + indent).min(end)..end)
}
