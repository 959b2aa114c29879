//! What the join needs of the analysis, kept after the def map and the call graph are
//! freed: each fn the lint parsed in the workspace (to tell a report of other sources), and
//! each fn it analysed (walked into the call graph) with its calls by line (to say where a
//! missed wait was lost).

use crate::callgraph::CallGraph;
use crate::parse::ir::Body;
use crate::resolve::{DefMap, FnId};
use crate::source::{FileId, SourceMap, SpanIr};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The fns the join can look up, and the crates the lint read.
#[derive(Debug, Clone, Default)]
pub struct FnIndex {
    pub fns: Vec<IndexedFn>,
    /// The analysed crates' names as code spells them (`candle_core`).
    pub crates: Vec<String>,
}

/// One fn with a body: where it is, whether it was analysed, and its calls.
#[derive(Debug, Clone)]
pub struct IndexedFn {
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
pub struct Call {
    pub line: usize,
    pub callee: Callee,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callee {
    /// Resolved to a fn of the analysed crates (or a known one); whether it is a sink.
    Fn { path: String, sink: bool },
    /// Not resolved: what the lint says of it (`a call through parameter `f``).
    Unresolved(String),
}

/// What [`build`] keeps: spans, not lines, so that no file is read for it (a file the stamp
/// table vouched for is read only if a join asks, [`RawIndex::lines`]).
#[derive(Debug, Clone, Default)]
pub struct RawIndex {
    fns: Vec<RawFn>,
    crates: Vec<String>,
}

#[derive(Debug, Clone)]
struct RawFn {
    path: String,
    file: FileId,
    name: SpanIr,
    end: Option<SpanIr>,
    analysed: bool,
    root: bool,
    calls: Vec<(SpanIr, Callee)>,
}

impl RawIndex {
    /// The index with lines, read from `sources`.
    pub fn lines(self, sources: &SourceMap) -> FnIndex {
        let line = |s: SpanIr| sources.span(s).line_start;
        let fns = (self.fns.into_iter())
            .map(|f| {
                let start = line(f.name);
                let end = f.end.map_or(start, |e| sources.span(e).line_end);
                let calls = f.calls.into_iter();
                IndexedFn {
                    path: f.path,
                    file: sources.file(f.file).path.clone(),
                    lines: (start, end.max(start)),
                    analysed: f.analysed,
                    root: f.root,
                    calls: calls
                        .map(|(s, callee)| Call {
                            line: line(s),
                            callee,
                        })
                        .collect(),
                }
            })
            .collect();
        FnIndex {
            fns,
            crates: self.crates,
        }
    }
}

/// The index of `map`'s fns with a body that are under `workspace` or that `graph` walked.
pub(super) fn build(
    map: &DefMap<'_>,
    graph: &CallGraph,
    sources: &SourceMap,
    workspace: &Path,
) -> RawIndex {
    let reached: HashSet<FnId> = graph.edges.iter().map(|e| e.to).collect();
    let mut fns = Vec::new();
    for (id, f) in map.fns.iter().enumerate() {
        let (Some(ir), Some(span)) = (f.ir, f.span) else {
            continue;
        };
        let id = id as FnId;
        let walked = has_calls(graph, id) || f.marks.root || reached.contains(&id);
        if !walked && !sources.file(span.file).path.starts_with(workspace) {
            continue;
        }
        fns.push(RawFn {
            path: f.path.clone(),
            file: span.file,
            name: span,
            end: body_end(ir.body.as_ref()),
            analysed: walked,
            root: f.marks.root,
            calls: calls(map, graph, id),
        });
    }
    let names = map.fns.iter().filter_map(|f| crate_name(&f.path));
    let mut crates: Vec<String> = names.collect::<HashSet<_>>().into_iter().collect();
    crates.sort_unstable();
    RawIndex { fns, crates }
}

fn has_calls(graph: &CallGraph, id: FnId) -> bool {
    let i = id as usize;
    graph.out.get(i).is_some_and(|o| !o.is_empty())
        || graph.unresolved.get(i).is_some_and(|u| !u.is_empty())
}

/// The span whose end is the end of a body.
fn body_end(body: Option<&Body>) -> Option<SpanIr> {
    match body? {
        Body::Lowered(block) => block.close,
        Body::Lazy(lazy) => Some(lazy.span),
        Body::Encoded(encoded) => encoded.block().and_then(|b| b.close),
    }
}

/// Fn `id`'s calls: its edges (not drops), then its unresolved calls.
fn calls(map: &DefMap<'_>, graph: &CallGraph, id: FnId) -> Vec<(SpanIr, Callee)> {
    let i = id as usize;
    let out = graph.out.get(i).map_or(&[][..], Vec::as_slice);
    let edges = out.iter().map(|&e| &graph.edges[e as usize]);
    let mut calls: Vec<(SpanIr, Callee)> = (edges.filter(|e| e.dropped.is_none()))
        .map(|e| {
            let callee = map.func(e.to);
            let sink = callee.marks.sink.is_some() || callee.marks.model_node.is_some();
            let path = callee.path.clone();
            (e.site, Callee::Fn { path, sink })
        })
        .collect();
    let unresolved = graph.unresolved.get(i).map_or(&[][..], Vec::as_slice);
    calls.extend((unresolved.iter()).map(|u| (u.site, Callee::Unresolved(u.what.clone()))));
    calls
}

/// The crate a fn's path starts in (`candle_core`), for a path that starts with one.
fn crate_name(path: &str) -> Option<String> {
    let first = path.split("::").next()?;
    (!first.starts_with('<') && !first.is_empty()).then(|| first.to_owned())
}
