//! What a search found, as diagnostics: a finding's message, labels and hop notes, and a
//! reached fn's unresolved calls.

use super::*;
use crate::diagnostics::{OTHER_CHAINS_LISTED, OtherChain};

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
pub(super) fn chain_code(chain: &[&Edge], sink: &FnData<'_>) -> (Code, Confidence) {
    let confidence = chain
        .iter()
        .map(|e| e.tag)
        .max()
        .unwrap_or(Confidence::Exact);
    let uncertain = undecided(chain).next().is_some();
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

pub(super) fn finding(
    map: &DefMap<'_>,
    sources: &SourceMap,
    root: FnId,
    (chain, others): (&[&Edge], &[super::others::Join<'_>]),
) -> Diagnostic {
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
    let undecided: Vec<String> = undecided(chain).map(|e| uncertain_note(map, e)).collect();
    for note in &undecided {
        d = d.with_note(note.clone(), None);
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
        undecided,
        runtime: None,
        other_chain_count: others.len(),
        other_chains: (others.iter().take(OTHER_CHAINS_LISTED))
            .map(|j| other_chain(map, sources, j))
            .collect(),
    });
    d
}

/// Where another chain joins the shown one, for the finding's data.
fn other_chain(map: &DefMap<'_>, sources: &SourceMap, j: &super::others::Join<'_>) -> OtherChain {
    OtherChain {
        function: map.func(j.edge.from).path.clone(),
        call_site: sources.span(j.edge.site),
        confidence: j.edge.tag,
        joins: map.func(j.edge.to).path.clone(),
        branch: j.edge.branch,
        hops: j.hops,
    }
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

pub(super) fn unresolved(
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
/// Why an undecided edge's wait may not happen.
fn uncertain_note(map: &DefMap<'_>, e: &Edge) -> String {
    match &e.uncertain {
        Some(Uncertain::Argument { note }) => note.clone(),
        Some(Uncertain::Failing { name }) => {
            let from = short(map.func(e.from));
            let to = short(map.func(e.to));
            format!(
                "`{from}` calls `{to}` only to build the message of `{name}!`: the host waits there only when `{from}` fails"
            )
        }
        None => String::new(),
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

/// A confidence's name: `exact`, `inferred` or `name-only`.
pub fn tag_name(t: Confidence) -> &'static str {
    match t {
        Confidence::Exact => "exact",
        Confidence::Inferred => "inferred",
        Confidence::NameOnly => "name-only",
    }
}
