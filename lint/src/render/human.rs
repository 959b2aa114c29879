//! rustc-style text through `annotate-snippets`: the finding at the offending call in
//! the root, one note per hop with its snippet, the sink's reason, and a help line.

use crate::diagnostics::{Diagnostic, Level, Note, Span};
use crate::source::SourceMap;
use annotate_snippets::{AnnotationKind, Group, Level as ALevel, Renderer, Snippet};

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

fn level(l: Level) -> ALevel<'static> {
    match l {
        Level::Deny => ALevel::ERROR,
        Level::Warn => ALevel::WARNING,
        Level::Allow => ALevel::NOTE,
    }
}

/// A snippet of just the lines `span` covers (rendering stays cheap in large files).
fn snippet<'s>(
    sources: &'s SourceMap,
    span: &Span,
    label: Option<&'s str>,
    kind: AnnotationKind,
) -> Option<Snippet<'s, annotate_snippets::Annotation<'s>>> {
    let text = sources.text(&span.file)?;
    let start = text[..span.byte_start.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let end = text[span.byte_end.min(text.len())..]
        .find('\n')
        .map_or(text.len(), |i| span.byte_end + i);
    let lines = text.get(start..end)?;
    let (lo, hi) = (
        span.byte_start - start,
        (span.byte_end - start).max(span.byte_start - start),
    );
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
