//! rustc-style text through `annotate-snippets`: the finding at the offending call in
//! the root, one note per hop with its snippet, the sink's reason, and a help line.

use crate::diagnostics::{Diagnostic, Level, Note, Span};
use crate::report::Report;
use crate::source::SourceMap;
use annotate_snippets::{AnnotationKind, Group, Level as ALevel, Renderer, Snippet};
use std::io::Write;

/// How the human format is written: in colour, with the summary line, each finding with
/// its whole chain (`full`) or those of one call in a root together.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    pub color: bool,
    pub summary: bool,
    pub full: bool,
}

/// Writes every reported diagnostic, then (with `summary`) the line counting them. Returns
/// `false` when one of them could only be written in its short form (see [`render_or_short`]).
/// With `full`, each finding with its whole chain; else the findings of one call in a root
/// together, their hops inside dependencies folded ([`super::grouped`]).
pub(crate) fn write(
    report: &Report<'_>,
    style: Style,
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    let Style {
        color,
        summary,
        full,
    } = style;
    let mut complete = true;
    for site in super::grouped::sites(report.diagnostics()) {
        if !full && super::grouped::folds(&site) {
            let folded =
                crate::panics::catch(|| super::grouped::render(&site, report.sources, color));
            if let Ok(text) = folded {
                out.write_all(text.as_bytes())?;
                continue;
            }
        }
        for d in site {
            let (text, ok) = render_or_short(d, report.sources, color);
            complete &= ok;
            out.write_all(text.as_bytes())?;
        }
    }
    if summary {
        writeln!(out, "{}", summary_line(report))?;
    }
    Ok(complete)
}

/// `nosync-lint: 1 error, 2 warnings`, or `nosync-lint: no findings`.
fn summary_line(report: &Report<'_>) -> String {
    let errors = report.count(Level::Deny);
    let warnings = report.count(Level::Warn);
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    match (errors, warnings) {
        (0, 0) => "nosync-lint: no findings".to_owned(),
        _ => format!(
            "nosync-lint: {}, {}",
            plural(errors, "error"),
            plural(warnings, "warning")
        ),
    }
}

/// The human rendering of `d`; if the renderer panics, its short form with a note saying
/// so, and `false`.
pub(crate) fn render_or_short(d: &Diagnostic, sources: &SourceMap, color: bool) -> (String, bool) {
    match crate::panics::catch(|| render(d, sources, color)) {
        Ok(text) => (text, true),
        Err(caught) => {
            let text = format!(
                "{}\n  = note: internal error while rendering this diagnostic: {}\n\n",
                super::short::line(d),
                caught.message
            );
            (text, false)
        }
    }
}

/// Renders one diagnostic (ending with a blank line, as rustc does).
pub fn render(d: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let level = level(d.level);
    let title = level.primary_title(d.message.as_str()).id(d.code.as_str());
    let mut first = Group::with_title(title);
    if let Some(s) = snippet(
        sources,
        &d.primary,
        d.label.as_deref(),
        AnnotationKind::Primary,
    ) {
        first = first.element(s);
    }
    let mut report: Vec<Group<'_>> = vec![first];
    let (spanned, plain): (Vec<&Note>, Vec<&Note>) = d.notes.iter().partition(|n| n.span.is_some());
    for n in spanned {
        let mut g = Group::with_title(ALevel::NOTE.secondary_title(n.message.as_str()));
        if let Some(s) = n
            .span
            .as_ref()
            .and_then(|sp| snippet(sources, sp, None, AnnotationKind::Context))
        {
            g = g.element(s);
        }
        report.push(g);
    }
    // Notes without a snippet (`= note:`, `= help:`) close the report, as in rustc.
    if let Some(last) = report.pop() {
        let last = plain.iter().fold(last, |g, n| {
            g.element(match n.help_text() {
                Some(h) => ALevel::HELP.message(h),
                None => ALevel::NOTE.message(n.message.as_str()),
            })
        });
        report.push(last);
    }
    let mut out = renderer.render(&report);
    out.push_str("\n\n");
    out
}

pub(super) fn level(l: Level) -> ALevel<'static> {
    match l {
        Level::Deny => ALevel::ERROR,
        Level::Warn => ALevel::WARNING,
        Level::Allow => ALevel::NOTE,
    }
}

/// A snippet of just the lines `span` covers (rendering stays cheap in large files).
pub(super) fn snippet<'s>(
    sources: &'s SourceMap,
    span: &Span,
    label: Option<&'s str>,
    kind: AnnotationKind,
) -> Option<Snippet<'s, annotate_snippets::Annotation<'s>>> {
    let text = sources.text(&span.file)?;
    // A span that does not fit the text (made by hand, or for another version of the
    // file) gets no snippet.
    let fits = span.byte_start.max(span.byte_end) <= text.len()
        && text.is_char_boundary(span.byte_start)
        && text.is_char_boundary(span.byte_end);
    if !fits {
        return None;
    }
    let start = text[..span.byte_start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[span.byte_end..]
        .find('\n')
        .map_or(text.len(), |i| span.byte_end + i);
    let lines = text.get(start..end)?;
    let lo = span.byte_start - start;
    let hi = span.byte_end.saturating_sub(start).max(lo);
    let mut ann = kind.span(lo..hi);
    if let Some(l) = label {
        ann = ann.label(l);
    }
    Some(
        Snippet::source(lines)
            .line_start(span.line_start)
            .path(span.file.to_string_lossy().into_owned())
            .annotation(ann),
    )
}
