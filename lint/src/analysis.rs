//! From each root, breadth-first searches of the call graph: one finding per (root, call
//! site in the root, sink) that the call reaches, each with its shortest chain. Fixing one
//! reported chain thus never reveals a violation that was there all along: every call of
//! the root that reaches a sink is reported, and every sink it reaches. The search from a
//! call's callee goes first over exact and inferred edges only, then over name-only edges
//! for sinks not reached yet; at one site (a call dispatched to several impls, several
//! values dropped at one brace) the chain without a name-only hop wins, then the shorter.
//! Calls into `#[allow_sync]` fns are not followed; sinks end a chain; cycles terminate
//! because every fn is visited once per search. What a callee reaches is computed once and
//! shared by every call of it, from every root.
//!
//! Another root also ends a chain: a sink reached through an inner root is reported at
//! that inner root only. The outer root's finding would add nothing (its chain is the
//! inner root's chain with a prefix, and fixing the inner root fixes both), and with n
//! roots calling each other in a line, reporting every pair would be n² / 2 hops (10 000
//! roots exhausted memory). The outer root still reports sinks it reaches by a path
//! that avoids other roots.

use crate::callgraph::{CallGraph, Dropped, Edge, Uncertain, Unresolved, Via};
use crate::diagnostics::{Code, Confidence, Diagnostic, Finding, Hop};
use crate::known::sinks::SinkKind;
use crate::parse::ir::SpanIr;
use crate::resolve::{DefMap, FnData, FnId};
use crate::source::SourceMap;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet, VecDeque};

const NONE: u32 = u32::MAX;

/// Per-search scratch space, reused across roots (stamped instead of cleared).
struct Search {
    stamp: Vec<u32>,
    parent: Vec<u32>,
    generation: u32,
}

impl Search {
    fn new(n: usize) -> Self {
        Search {
            stamp: vec![0; n],
            parent: vec![NONE; n],
            generation: 0,
        }
    }

    /// BFS from `root` (a root, or the callee of a root's call); returns the fns reached
    /// in visiting order. `is_root[f]`: `f` is searched as a root of its own, so the
    /// search stops there.
    fn run(
        &mut self,
        map: &DefMap<'_>,
        g: &CallGraph,
        (root, is_root): (FnId, &[bool]),
        name_only: bool,
    ) -> Vec<FnId> {
        self.generation += 1;
        let mut order = Vec::new();
        let mut queue = VecDeque::from([root]);
        self.stamp[root as usize] = self.generation;
        self.parent[root as usize] = NONE;
        while let Some(f) = queue.pop_front() {
            order.push(f);
            if f != root && (map.func(f).marks.sink.is_some() || is_root[f as usize]) {
                continue;
            }
            for &ei in &g.out[f as usize] {
                let e = &g.edges[ei as usize];
                let t = e.to as usize;
                if self.stamp[t] == self.generation
                    || map.func(e.to).marks.allow
                    || (!name_only && e.tag == Confidence::NameOnly)
                {
                    continue;
                }
                self.stamp[t] = self.generation;
                self.parent[t] = ei;
                queue.push_back(e.to);
            }
        }
        order
    }

    fn chain<'g>(&self, g: &'g CallGraph, to: FnId) -> Vec<&'g Edge> {
        let mut out = Vec::new();
        let mut cur = to;
        while self.parent[cur as usize] != NONE && out.len() <= g.edges.len() {
            let e = &g.edges[self.parent[cur as usize] as usize];
            out.push(e);
            cur = e.from;
        }
        out.reverse();
        out
    }
}

/// The sinks a callee reaches, in search order, each with its shortest chain from the
/// callee (exact and inferred edges first, then name-only edges for the sinks left).
type Reach<'g> = Vec<(FnId, Vec<&'g Edge>)>;

/// What one root's searches found: its chains, and the unresolved calls they reach (by
/// the fn that makes each), in search order.
type Searched<'g> = (Vec<Vec<&'g Edge>>, Vec<(FnId, &'g Unresolved)>);

/// What a finding or an unresolved call is reported from: a root and its chain, or a root,
/// the fn reached and its unresolved call.
enum Report<'g> {
    Finding(FnId, Vec<&'g Edge>),
    Unresolved(FnId, FnId, &'g Unresolved),
}

/// Findings and reachable unresolved calls for every root.
///
/// The roots are searched in parallel (a search reads only the graph; what a callee
/// reaches is a function of the graph alone, so each thread's memo of it holds what any
/// other would), then kept in root order, each finding and unresolved call once (the
/// first root's), and the diagnostics made in parallel, in that order.
pub fn find(
    map: &DefMap<'_>,
    g: &CallGraph,
    sources: &SourceMap,
    roots: &[FnId],
) -> Vec<Diagnostic> {
    let mut is_root = vec![false; map.fns.len()];
    for &r in roots {
        is_root[r as usize] = true;
    }
    let is_root = &is_root[..];
    let fresh = || (Search::new(map.fns.len()), HashMap::new());
    let searched: Vec<Result<Searched<'_>, crate::net::Caught>> = roots
        .par_iter()
        .map_init(fresh, |(s, reach), &root| {
            let out = crate::net::catch(|| search(map, g, s, (root, is_root), reach));
            if out.is_err() {
                // The search's state is unknown after a panic: start the next root afresh.
                (*s, *reach) = fresh();
            }
            out
        })
        .collect();
    let mut seen_unresolved = HashSet::new();
    let mut seen_findings = HashSet::new();
    let mut reports = Vec::new();
    for (&root, found) in roots.iter().zip(searched) {
        let (chains, calls) = match found {
            Ok(found) => found,
            Err(caught) => {
                reports.push(Err(root_error(map, sources, root, &caught)));
                continue;
            }
        };
        for chain in chains {
            if seen_findings.insert(finding_key(map, root, &chain)) {
                reports.push(Ok(Report::Finding(root, chain)));
            }
        }
        for (f, u) in calls {
            if seen_unresolved.insert(u.site) {
                reports.push(Ok(Report::Unresolved(root, f, u)));
            }
        }
    }
    reports
        .into_par_iter()
        .map(|r| report(map, sources, r))
        .collect()
}

/// The chains of `root` and the unresolved calls its search reaches.
fn search<'g>(
    map: &DefMap<'_>,
    g: &'g CallGraph,
    s: &mut Search,
    (root, is_root): (FnId, &[bool]),
    reach: &mut HashMap<FnId, Reach<'g>>,
) -> Searched<'g> {
    crate::net::failpoint("search", &map.func(root).name);
    let chains = root_chains(map, g, s, (root, is_root), reach);
    let mut calls = Vec::new();
    for f in s.run(map, g, (root, is_root), true) {
        // Another root's own unresolved calls are reported by its own search.
        if f == root || !is_root[f as usize] {
            calls.extend(g.unresolved[f as usize].iter().map(|u| (f, u)));
        }
    }
    (chains, calls)
}

/// The diagnostic of one report (a root's error as it is); a panic while making it is
/// that root's error instead.
fn report(map: &DefMap<'_>, sources: &SourceMap, r: Result<Report<'_>, Diagnostic>) -> Diagnostic {
    let r = match r {
        Ok(r) => r,
        Err(d) => return d,
    };
    let root = match &r {
        Report::Finding(root, _) | Report::Unresolved(root, ..) => *root,
    };
    let made = crate::net::catch(|| match &r {
        Report::Finding(root, chain) => finding(map, sources, *root, chain),
        Report::Unresolved(root, f, u) => unresolved(map, sources, *root, *f, u),
    });
    made.unwrap_or_else(|caught| root_error(map, sources, root, &caught))
}

/// One chain per (call site in `root`, sink the call reaches), in call-site order: a
/// chain without a name-only hop before one with, then the shorter.
fn root_chains<'g>(
    map: &DefMap<'_>,
    g: &'g CallGraph,
    s: &mut Search,
    (root, is_root): (FnId, &[bool]),
    reach: &mut HashMap<FnId, Reach<'g>>,
) -> Vec<Vec<&'g Edge>> {
    let mut best: Vec<Vec<&'g Edge>> = Vec::new();
    let mut index: HashMap<(SpanIr, FnId), usize> = HashMap::new();
    for &ei in &g.out[root as usize] {
        let e = &g.edges[ei as usize];
        let callee = map.func(e.to);
        if callee.marks.allow || (callee.marks.sink.is_none() && is_root[e.to as usize]) {
            continue;
        }
        let suffixes: &[(FnId, Vec<&Edge>)] = if callee.marks.sink.is_some() {
            &[(e.to, Vec::new())]
        } else {
            reach
                .entry(e.to)
                .or_insert_with(|| callee_reach(map, g, s, (e.to, is_root)))
        };
        for (sink, suffix) in suffixes {
            let mut chain = Vec::with_capacity(suffix.len() + 1);
            chain.push(e);
            chain.extend(suffix.iter().copied());
            match index.get(&(e.site, *sink)) {
                Some(&i) if rank(&chain) < rank(&best[i]) => best[i] = chain,
                Some(_) => {}
                None => {
                    index.insert((e.site, *sink), best.len());
                    best.push(chain);
                }
            }
        }
    }
    best
}

/// How good a chain is (less is better): without a name-only hop first, then shorter.
fn rank(chain: &[&Edge]) -> (bool, usize) {
    let name_only = chain.iter().any(|e| e.tag == Confidence::NameOnly);
    (name_only, chain.len())
}

/// The sinks `callee` reaches (it is no sink and no root itself).
fn callee_reach<'g>(
    map: &DefMap<'_>,
    g: &'g CallGraph,
    s: &mut Search,
    (callee, is_root): (FnId, &[bool]),
) -> Reach<'g> {
    let mut out = Vec::new();
    let mut found = HashSet::new();
    for name_only in [false, true] {
        for f in s.run(map, g, (callee, is_root), name_only) {
            if f != callee && map.func(f).marks.sink.is_some() && found.insert(f) {
                out.push((f, s.chain(g, f)));
            }
        }
    }
    out
}

fn root_error(
    map: &DefMap<'_>,
    sources: &SourceMap,
    root: FnId,
    caught: &crate::net::Caught,
) -> Diagnostic {
    let f = map.func(root);
    let at = f
        .span
        .map_or_else(|| sources.first_span(), |s| sources.span(s));
    let subject = format!("from the #[no_sync] root `{}`", f.path);
    caught.diagnostic(
        "searching",
        &subject,
        "this root's chains are not all reported",
        at,
    )
}

/// What makes two findings the same, whichever crate they were found in: a file
/// included by two targets (`#[path]` from a bench into an example) gives each its
/// own copy of the fns, with the same spans but different crate paths.
type FindingKey = (
    Code,
    Option<SpanIr>,
    (Option<SpanIr>, String),
    (Option<SpanIr>, String),
);

fn finding_key(map: &DefMap<'_>, root: FnId, chain: &[&Edge]) -> FindingKey {
    let (r, sink) = (
        map.func(root),
        map.func(chain.last().map_or(root, |e| e.to)),
    );
    // Built-in sinks have no span: their path is their identity.
    let sink_id = match sink.span {
        Some(_) => sink.name.clone(),
        None => sink.path.clone(),
    };
    (
        chain_code(chain, sink).0,
        chain.first().map(|e| e.site),
        (r.span, r.name.clone()),
        (sink.span, sink_id),
    )
}

/// The short name of a fn for messages: `Type::method` for methods, the module and
/// name for built-in fns (`stream::synchronize`), the bare name otherwise.
fn short(f: &FnData<'_>) -> String {
    let owner = f
        .self_canon
        .as_deref()
        .map(|c| c.rsplit("::").next().unwrap_or(c));
    match (owner, f.ir.is_none()) {
        (Some(o), _) => format!("{o}::{}", f.name),
        (None, true) => {
            let segs: Vec<&str> = f.path.rsplitn(3, "::").collect();
            segs.iter()
                .take(2)
                .rev()
                .copied()
                .collect::<Vec<_>>()
                .join("::")
        }
        (None, false) => match (f.is_trait_decl, f.trait_.as_deref()) {
            (true, Some(t)) => format!("{}::{}", t.rsplit("::").next().unwrap_or(t), f.name),
            _ => f.name.clone(),
        },
    }
}

/// The code of a chain to `sink`: `setup-` for one-time setup, else `possible-` as soon as
/// one edge is name-only or undecided or the sink only may block.
fn chain_code(chain: &[&Edge], sink: &FnData<'_>) -> (Code, Confidence) {
    let confidence = chain
        .iter()
        .map(|e| e.tag)
        .max()
        .unwrap_or(Confidence::Exact);
    let uncertain = chain.iter().any(|e| e.uncertain.is_some());
    let code = match sink.marks.sink_kind {
        SinkKind::Setup => Code::SetupSyncInNoSync,
        SinkKind::May => Code::PossibleSyncInNoSync,
        SinkKind::Blocks if confidence == Confidence::NameOnly || uncertain => {
            Code::PossibleSyncInNoSync
        }
        SinkKind::Blocks => Code::SyncInNoSync,
    };
    (code, confidence)
}

fn finding(map: &DefMap<'_>, sources: &SourceMap, root: FnId, chain: &[&Edge]) -> Diagnostic {
    let (r, sink) = (
        map.func(root),
        map.func(chain.last().map_or(root, |e| e.to)),
    );
    let (code, confidence) = chain_code(chain, sink);
    let reason = sink.marks.sink.clone().unwrap_or_default();
    let first = chain.first().map_or_else(
        || sources.span(r.span.unwrap_or_default()),
        |e| sources.span(e.site),
    );
    let (reaches, blocks) = wording(sink.marks.sink_kind);
    let message = format!(
        "`{}` is {} but reaches {reaches}: `{}`",
        r.name,
        root_kind(map, root),
        short(sink)
    );
    let label = first_label(chain.first().copied(), chain.len(), (&sink.path, blocks));
    let mut d = Diagnostic::new(code, message, first).with_label(label);
    let hops = hop_notes(map, sources, chain, &mut d);
    let sink_span = sink.span.map(|s| sources.span(s));
    d = d.with_note(format!("`{}` {blocks}: {reason}", sink.path), sink_span);
    for u in chain.iter().filter_map(|e| e.uncertain.as_ref()) {
        d = d.with_note(uncertain_note(u), None);
    }
    d = match sink.marks.sink_kind {
        SinkKind::Setup => d.with_help(setup_help(map, root, chain)),
        SinkKind::Blocks | SinkKind::May => d.with_help(ESCAPE_HELP),
    };
    d.finding = Some(Finding {
        root: r.path.clone(),
        sink: sink.path.clone(),
        sink_reason: reason,
        sink_kind: sink.marks.sink_kind,
        chain: hops,
        confidence,
    });
    d
}

const ESCAPE_HELP: &str = "if this wait is intended, wrap the call in `nosync::allow_sync(|| ..)` or mark the called function #[allow_sync]";
/// How to silence a setup finding: allow the fn that calls the setup (typically the cache in
/// front of it, candle's `get_or_load_func`), warm up, or allow the code.
fn setup_help(map: &DefMap<'_>, root: FnId, chain: &[&Edge]) -> String {
    let caller = chain.last().map_or(root, |e| e.from);
    let allow = match caller == root {
        true => String::new(),
        false => format!(
            "allow the function that calls it in the config (`allow = [\"{}\"]`) or ",
            map.func(caller).path
        ),
    };
    format!(
        "if this runs only on first use (a cache in front of it), {allow}warm the path up before the hot loop; `-A setup-sync-in-no-sync` hides all setup findings"
    )
}

/// How a finding words its sink's wait: (what the root reaches, what the sink does).
fn wording(kind: SinkKind) -> (&'static str, &'static str) {
    match kind {
        SinkKind::Blocks => ("a host-blocking call", "blocks the host"),
        SinkKind::May => ("a call that may block the host", "may block the host"),
        SinkKind::Setup => (
            "one-time setup that blocks the host",
            "blocks the host while it sets up",
        ),
    }
}

/// The label under the first hop: a call, or a value's `Drop`.
fn first_label(first: Option<&Edge>, hops: usize, (sink, blocks): (&str, &str)) -> String {
    let what = match first.and_then(|e| e.dropped.as_ref()) {
        None => return format!("this call reaches `{sink}`, which {blocks}"),
        Some(Dropped::Local(name)) => format!("`{name}` is dropped here"),
        Some(Dropped::Value) => "the value is dropped here".to_owned(),
    };
    match hops {
        1 => format!("{what}, and its `Drop` (`{sink}`) {blocks}"),
        _ => format!("{what}, and its `Drop` reaches `{sink}`, which {blocks}"),
    }
}

/// One note per hop (caller, callee, how the call was resolved, the call site).
fn hop_notes(
    map: &DefMap<'_>,
    sources: &SourceMap,
    chain: &[&Edge],
    d: &mut Diagnostic,
) -> Vec<Hop> {
    let mut hops = Vec::new();
    if let Some(first) = chain.first() {
        generated_note(map, sources, first.from, d);
    }
    for e in chain {
        let (from, to) = (map.func(e.from), map.func(e.to));
        let site = sources.span(e.site);
        let how = match via_note(&e.via) {
            Some(via) => format!("{}, {via}", tag_name(e.tag)),
            None => tag_name(e.tag).to_owned(),
        };
        let note = match &e.dropped {
            None => format!("`{}` calls `{}` ({how})", from.path, to.path),
            Some(Dropped::Local(name)) => format!(
                "`{}` drops `{name}`, which calls `{}` ({how})",
                from.path, to.path
            ),
            Some(Dropped::Value) => format!(
                "`{}` drops a value, which calls `{}` ({how})",
                from.path, to.path
            ),
        };
        d.notes.push(crate::diagnostics::Note {
            message: note,
            span: Some(site.clone()),
        });
        hops.push(Hop {
            function: from.path.clone(),
            call_site: site,
            confidence: e.tag,
        });
        generated_note(map, sources, e.to, d);
    }
    hops
}

/// For a fn generated by a `macro_rules!` invocation (its spans are the invocation's):
/// a note at the body of the macro rule that generated it.
fn generated_note(map: &DefMap<'_>, sources: &SourceMap, f: FnId, d: &mut Diagnostic) {
    if let Some(o) = map.generated_by(f) {
        d.notes.push(crate::diagnostics::Note {
            message: format!("`{}` is generated by `{}!`", map.func(f).path, o.name),
            span: Some(sources.span(o.body)),
        });
    }
}

fn unresolved(
    map: &DefMap<'_>,
    sources: &SourceMap,
    root: FnId,
    f: FnId,
    u: &Unresolved,
) -> Diagnostic {
    let (r, in_fn) = (map.func(root), map.func(f));
    Diagnostic::new(
        Code::UnresolvedCallInNoSync,
        format!(
            "`{}` is {} but reaches a call the lint cannot follow: {}",
            r.name,
            root_kind(map, root),
            u.what
        ),
        sources.span(u.site),
    )
    .with_label("not followed by the static analysis")
    .with_note(
        format!("in `{}`, reachable from `{}`", in_fn.path, r.path),
        None,
    )
    .with_note(UNRESOLVED_NOTE, None)
}

/// What covers an unresolved call instead: the runtime guard, as far as it can see.
const UNRESOLVED_NOTE: &str = "at run time, the `nosync` guard catches a host wait behind this call only if the function that waits declares it (`#[synchronizes]`, or a `nosync::gpu` op); run the hot path in tests under `Mode::Panic` or `Mode::Error` to make such a wait fail";

/// How a root is declared: `#[no_sync]`, or listed in the configuration.
fn root_kind(map: &DefMap<'_>, root: FnId) -> &'static str {
    if map.func(root).marks.configured_root {
        "a configured no-sync root"
    } else {
        "#[no_sync]"
    }
}

/// The note for a condition the lint could not decide.
fn uncertain_note(u: &Uncertain) -> String {
    match u {
        Uncertain::PageableDst { callee } => format!(
            "the destination's type is unknown: `{callee}` blocks only when it is pageable host memory"
        ),
    }
}

/// How a hop reached its callee, in words: `None` for a call the source names.
fn via_note(via: &Via) -> Option<String> {
    let dispatch = via.dispatch.as_ref().map(|d| {
        format!(
            "dispatched through `{}` to one of its {} impls: the concrete type is not known here",
            d.trait_, d.impls
        )
    });
    let named: Vec<String> = (via.specialised.iter())
        .map(|(param, ty)| format!("`{param}: {ty}`"))
        .chain(
            via.bound
                .iter()
                .map(|(param, ty)| format!("`{param} = {ty}`")),
        )
        .collect();
    let specialised = (!named.is_empty()).then(|| format!("specialised to {}", named.join(", ")));
    let callback = via.callback.as_ref().map(|c| {
        format!(
            "`{}` is not analysed: it is given a `{}`, which implements `{}`, and may call its methods",
            c.callee, c.ty, c.trait_
        )
    });
    let notes: Vec<String> = [dispatch, specialised, callback]
        .into_iter()
        .flatten()
        .collect();
    (!notes.is_empty()).then(|| notes.join(", "))
}

pub fn tag_name(t: Confidence) -> &'static str {
    match t {
        Confidence::Exact => "exact",
        Confidence::Inferred => "inferred",
        Confidence::NameOnly => "name-only",
    }
}
