//! What the join needs of the analysis, kept after the def map and the call graph are
//! freed: each fn the lint parsed in the workspace (to tell a report of other sources), and
//! each fn it analysed (walked into the call graph) with its calls by line (to say where a
//! missed wait was lost).

use crate::callgraph::CallGraph;
use crate::parse::ir::Body;
use crate::resolve::{DefMap, FnId};
use crate::source::SourceMap;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The fns the join can look up, and the crates the lint read.
#[derive(Debug, Clone, Default)]
pub(crate) struct FnIndex {
    pub fns: Vec<IndexedFn>,
    /// The analysed crates' names as code spells them (`candle_core`).
    pub crates: Vec<String>,
}

/// One fn with a body: where it is, whether it was analysed, and its calls.
#[derive(Debug, Clone)]
pub(crate) struct IndexedFn {
    pub path: String,
    /// The file as the lint read it (absolute).
    pub file: PathBuf,
    /// The lines from the fn's name to the end of its body (the end unknown: its name's).
    pub lines: (usize, usize),
    /// Walked into the call graph from a root (its calls are known).
    pub analysed: bool,
    pub root: bool,
    /// Its calls, by line.
    pub calls: Vec<Call>,
}

/// One call an analysed fn makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Call {
    pub line: usize,
    pub callee: Callee,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Callee {
    /// Resolved to a fn of the analysed crates (or a known one); whether it is a sink.
    Fn { path: String, sink: bool },
    /// Not resolved: what the lint says of it (`a call through parameter `f``).
    Unresolved(String),
}

/// The index of `map`'s fns with a body that are under `workspace` or that `graph` walked.
pub(crate) fn build(
    map: &DefMap<'_>,
    graph: &CallGraph,
    sources: &SourceMap,
    workspace: &Path,
) -> FnIndex {
    let reached: HashSet<FnId> = graph.edges.iter().map(|e| e.to).collect();
    let mut fns = Vec::new();
    for (id, f) in map.fns.iter().enumerate() {
        let (Some(ir), Some(span)) = (f.ir, f.span) else {
            continue;
        };
        let id = id as FnId;
        let file = sources.file(span.file).path.clone();
        let walked = has_calls(graph, id) || f.marks.root || reached.contains(&id);
        if !walked && !file.starts_with(workspace) {
            continue;
        }
        let start = sources.span(span).line_start;
        let end = body_end(ir.body.as_ref()).map_or(start, |s| sources.span(s).line_end);
        fns.push(IndexedFn {
            path: f.path.clone(),
            file,
            lines: (start, end.max(start)),
            analysed: walked,
            root: f.marks.root,
            calls: calls(map, graph, sources, id),
        });
    }
    let names = map.fns.iter().filter_map(|f| crate_name(&f.path));
    let mut crates: Vec<String> = names.collect::<HashSet<_>>().into_iter().collect();
    crates.sort_unstable();
    FnIndex { fns, crates }
}

fn has_calls(graph: &CallGraph, id: FnId) -> bool {
    let i = id as usize;
    graph.out.get(i).is_some_and(|o| !o.is_empty())
        || graph.unresolved.get(i).is_some_and(|u| !u.is_empty())
}

/// The span whose end is the end of a body.
fn body_end(body: Option<&Body>) -> Option<crate::source::SpanIr> {
    match body? {
        Body::Lowered(block) => block.close,
        Body::Lazy(lazy) => Some(lazy.span),
        Body::Encoded(encoded) => encoded.block().and_then(|b| b.close),
    }
}

/// Fn `id`'s calls by line: its edges (not drops), then its unresolved calls.
fn calls(map: &DefMap<'_>, graph: &CallGraph, sources: &SourceMap, id: FnId) -> Vec<Call> {
    let i = id as usize;
    let out = graph.out.get(i).map_or(&[][..], Vec::as_slice);
    let edges = out.iter().map(|&e| &graph.edges[e as usize]);
    let mut calls: Vec<Call> = (edges.filter(|e| e.dropped.is_none()))
        .map(|e| {
            let callee = map.func(e.to);
            let callee = Callee::Fn {
                path: callee.path.clone(),
                sink: callee.marks.sink.is_some() || callee.marks.model_node.is_some(),
            };
            Call {
                line: sources.span(e.site).line_start,
                callee,
            }
        })
        .collect();
    let unresolved = graph.unresolved.get(i).map_or(&[][..], Vec::as_slice);
    calls.extend(unresolved.iter().map(|u| Call {
        line: sources.span(u.site).line_start,
        callee: Callee::Unresolved(u.what.clone()),
    }));
    calls
}

/// The crate a fn's path starts in (`candle_core`), for a path that starts with one.
fn crate_name(path: &str) -> Option<String> {
    let first = path.split("::").next()?;
    (!first.starts_with('<') && !first.is_empty()).then(|| first.to_owned())
}
