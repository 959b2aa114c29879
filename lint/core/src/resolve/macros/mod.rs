//! `macro_rules!` expansion in item position, before the def map is built.
//!
//! Invocations at module level, inside `impl` blocks, inside trait bodies and as
//! statements of fn bodies (where only the items they generate are kept) are
//! substituted ([`rules`]) and the text is parsed and lowered like source
//! ([`crate::parse::lower_macro`]), every span pointing at the invocation; the items
//! replace the invocation (module level) or join the impl's / trait's fns. An expansion's
//! own invocations are expanded in turn, up to a depth and within a text budget.
//!
//! Which definition an invocation names ([`scope`]): `krate::name!` / `$crate::name!`
//! the `#[macro_export]`ed macro of that analysed crate; a bare `name!` the last
//! definition before it in its file, then the crate's other definitions (textual scope and
//! `#[macro_use]` modules), then the exported macros of other analysed crates. The first
//! candidate with a matching rule expands; an invocation that none matches is left out
//! (counted in [`Expansions::failed`]).

mod lazy;
mod memo;
mod rules;
mod scope;

use crate::crate_graph::CrateSpec;
use crate::diagnostics::Diagnostic;
use crate::incremental::Incremental;
use crate::parse::Parsed;
use crate::parse::cfg::CfgCtx;
use crate::parse::ir::{FnIr, Item, MacroCallIr, MacroOrigin, ModKind, SpanIr};
use crate::parse::lower_macro::{Expanded, Position, lower_expansion};
use crate::source::{Loader, SharedCache, SourceMap};
use rayon::prelude::*;
use scope::{Defs, MacroDef};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

const MAX_EXPANSIONS: usize = 10_000;
/// Longest expansion text accepted (self-doubling macros stop here).
const MAX_EXPANSION_LEN: usize = 256 * 1024;
/// Most expansion text in one run: a tree of macros each invoking the next twice can
/// reach [`MAX_EXPANSIONS`] expansions of [`MAX_EXPANSION_LEN`] each (gigabytes of
/// items); past this budget an invocation counts as not expanded.
const MAX_TOTAL_EXPANSION: usize = 8 * 1024 * 1024;

/// What one round of expansion is given: the crates' cfgs, the crates, the budget.
#[derive(Clone, Copy)]
struct Round<'a> {
    cfgs: &'a [CfgCtx],
    crates: &'a [CrateSpec],
    budget: usize,
}

/// The caches of expansions and of lazy bodies.
#[derive(Clone, Copy)]
struct Caches<'a> {
    memo: Option<&'a SharedCache>,
    bodies: Option<&'a SharedCache>,
}

/// What expansion reads besides the parsed files: the crates' cfgs (`cfgs[i]` is crate
/// `i`'s), the crates and the loader the files of `mod x;` items are read through.
#[derive(Clone, Copy)]
pub struct Given<'a> {
    pub cfgs: &'a [CfgCtx],
    pub crates: &'a [CrateSpec],
    pub files: &'a dyn Loader,
}

impl std::fmt::Debug for Given<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Given")
            .field("cfgs", &self.cfgs)
            .field("crates", &self.crates)
            .finish_non_exhaustive()
    }
}

/// Deepest nesting of expansions (a macro whose expansion invokes a macro ...) and modules.
const MAX_DEPTH: usize = 32;

/// What [`expand_all`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expansions {
    pub expanded: usize,
    /// Invocations of analysed macros that no rule matched (or past the budget).
    pub failed: usize,
    /// Bytes of expansion text so far (bounded by [`MAX_TOTAL_EXPANSION`]).
    pub bytes: usize,
}

/// Expands item-position macro calls in every parsed file, in place; `given.cfgs[i]` and
/// `given.crates[i]` belong to crate `i` (the second half of a file's key). A `mod x;` in
/// an expansion names the file it would name written at the invocation (tokio declares
/// most of its modules in `cfg_*!` macros); the files found (through `given.files`) are
/// parsed, and expanded in turn.
pub fn expand_all(
    parsed: &mut Parsed,
    given: Given<'_>,
    incr: &mut Incremental,
    sources: &mut SourceMap,
) -> (Expansions, Vec<Diagnostic>) {
    expand_all_within(parsed, given, incr, sources, MAX_TOTAL_EXPANSION)
}

/// One expansion run: the definitions, the crates, the budget and what was done.
struct Run<'r> {
    defs: &'r Defs,
    crates: &'r [CrateSpec],
    budget: usize,
    count: Expansions,
    origins: HashMap<SpanIr, MacroOrigin>,
    /// Expansions by content ([`memo`]), when a cache is used.
    memo: Option<&'r SharedCache>,
}

/// Where the items being expanded live: their crate and cfg context.
#[derive(Clone, Copy)]
struct At<'c> {
    krate: usize,
    cfg: &'c CfgCtx,
}

/// [`expand_all`] with at most `budget` bytes of expansion text.
fn expand_all_within(
    parsed: &mut Parsed,
    given: Given<'_>,
    incr: &mut Incremental,
    sources: &mut SourceMap,
    budget: usize,
) -> (Expansions, Vec<Diagnostic>) {
    let Given {
        cfgs,
        crates,
        files,
    } = given;
    let mut count = Expansions::default();
    let mut diags = Vec::new();
    let mut todo: Vec<_> = parsed.files.keys().cloned().collect();
    // Each round expands the files parsed in the round before (a file is parsed once), so
    // it ends when no expansion names a file not parsed yet.
    while !todo.is_empty() {
        todo.sort();
        let round = Round {
            cfgs,
            crates,
            budget,
        };
        let caches = Caches {
            memo: incr.expansions.as_ref(),
            bodies: incr.bodies.as_ref(),
        };
        count = expand_files(parsed, &todo, round, caches, &*sources, count, &mut diags);
        let mut jobs = Vec::new();
        for key in &todo {
            if let Some(f) = parsed.files.get_mut(key) {
                crate::parse::locate(&mut f.items, files);
            }
            let items = &parsed.files[key].items;
            jobs.extend(crate::parse::unparsed_children(parsed, items, key.1));
        }
        let before: HashSet<_> = parsed.files.keys().cloned().collect();
        let caches = &mut incr.files;
        crate::parse::parse_jobs(parsed, jobs, cfgs, files, caches, sources, &mut diags);
        todo = parsed
            .files
            .keys()
            .filter(|k| !before.contains(*k))
            .cloned()
            .collect();
    }
    (count, diags)
}

/// One round: the invocations of the files `keys`, with the definitions of all parsed
/// files; with the caches of expansions and of lazy bodies.
fn expand_files(
    parsed: &mut Parsed,
    keys: &[(PathBuf, usize)],
    round: Round<'_>,
    caches: Caches<'_>,
    sources: &SourceMap,
    count: Expansions,
    diags: &mut Vec<Diagnostic>,
) -> Expansions {
    let Round {
        cfgs,
        crates,
        budget,
    } = round;
    let Caches { memo, bodies } = caches;
    let defs = Defs::collect(parsed);
    if defs.is_empty() {
        return count;
    }
    lower_invoking(parsed, keys, defs.item_names(), (sources, bodies), diags);
    let mut run = Run {
        defs: &defs,
        crates,
        budget,
        count,
        origins: HashMap::new(),
        memo,
    };
    let default_cfg = CfgCtx::default();
    for key in keys {
        let at = At {
            krate: key.1,
            cfg: cfgs.get(key.1).unwrap_or(&default_cfg),
        };
        if let Some(f) = parsed.files.get_mut(key) {
            run.items(&mut f.items, at, 0, Position::Module);
        }
    }
    for (span, origin) in run.origins {
        parsed.origins.entry(span).or_insert(origin);
    }
    run.count
}

/// [`lazy::lower_invoking`] on the files `keys` (sorted), in parallel; the diagnostics in
/// the order of `keys`, a panic in one rethrown here ([`crate::panics::rethrow`]).
fn lower_invoking(
    parsed: &mut Parsed,
    keys: &[(PathBuf, usize)],
    generating: &HashSet<String>,
    sources: (&SourceMap, Option<&SharedCache>),
    diags: &mut Vec<Diagnostic>,
) {
    let wanted: HashSet<&(PathBuf, usize)> = keys.iter().collect();
    let mut files: Vec<_> = parsed
        .files
        .iter_mut()
        .filter(|(k, _)| wanted.contains(k))
        .collect();
    files.sort_by(|a, b| a.0.cmp(b.0));
    let found: Vec<Result<Vec<Diagnostic>, crate::panics::Caught>> = files
        .par_iter_mut()
        .map(|(_, f)| {
            crate::panics::catch(|| {
                let mut d = Vec::new();
                lazy::lower_invoking(&mut f.items, generating, sources, (&mut f.digest, &mut d));
                d
            })
        })
        .collect();
    for found in found {
        match found {
            Ok(d) => diags.extend(d),
            // As on one thread: the expansion stops at the net around it, which reports
            // this panic (the first file's, in file order).
            Err(caught) => crate::panics::rethrow(caught),
        }
    }
}

impl Run<'_> {
    /// Expands the invocations among `items` (and inside their modules, impls, traits and
    /// fn bodies), appending what they generate.
    /// `pos` is `Module`, or `Body` for the items of a fn body.
    fn items(&mut self, items: &mut Vec<Item>, at: At<'_>, depth: usize, pos: Position) {
        if depth > MAX_DEPTH {
            return;
        }
        let mut new = Vec::new();
        for item in items.iter_mut() {
            match item {
                // In a fn body only the items an expansion generates are kept.
                Item::MacroCall(call)
                    if pos == Position::Body && !self.defs.may_generate_in_body(call) => {}
                Item::MacroCall(call) => {
                    if let Some(mut out) = self.invoke(call, at, pos) {
                        self.items(&mut out.items, at, depth + 1, pos);
                        new.extend(out.items);
                    }
                }
                Item::Mod {
                    kind: ModKind::Inline(inner),
                    ..
                } => self.items(inner, at, depth + 1, Position::Module),
                Item::Impl(imp) => {
                    let calls = std::mem::take(&mut imp.macros);
                    let (fns, types) = self.members(calls, at, Position::Impl, depth);
                    imp.fns.extend(fns);
                    imp.assoc_types.extend(types);
                    self.fns(&mut imp.fns, at, depth);
                }
                Item::Trait { fns, macros, .. } => {
                    let calls = std::mem::take(macros);
                    fns.extend(self.members(calls, at, Position::Trait, depth).0);
                    self.fns(fns, at, depth);
                }
                Item::Fn(f) => self.items(&mut f.nested, at, depth + 1, Position::Body),
                _ => {}
            }
        }
        items.extend(new);
    }

    /// The items declared in fn bodies.
    fn fns(&mut self, fns: &mut [FnIr], at: At<'_>, depth: usize) {
        for f in fns {
            self.items(&mut f.nested, at, depth + 1, Position::Body);
        }
    }

    /// Expands impl- or trait-position invocations (and the ones their expansions hold):
    /// the fns and associated types generated.
    fn members(
        &mut self,
        calls: Vec<MacroCallIr>,
        at: At<'_>,
        pos: Position,
        depth: usize,
    ) -> (Vec<FnIr>, Vec<(String, crate::parse::ir::TypeRef)>) {
        let (mut fns, mut types) = (Vec::new(), Vec::new());
        let mut work: Vec<(MacroCallIr, usize)> = calls.into_iter().map(|c| (c, depth)).collect();
        work.reverse();
        while let Some((call, d)) = work.pop() {
            let Some(out) = self.invoke(&call, at, pos) else {
                continue;
            };
            fns.extend(out.fns);
            types.extend(out.assoc_types);
            if d < MAX_DEPTH {
                work.extend(out.macros.into_iter().rev().map(|c| (c, d + 1)));
            }
        }
        (fns, types)
    }

    /// Expands one invocation with the first candidate definition that matches it.
    fn invoke(&mut self, call: &MacroCallIr, at: At<'_>, pos: Position) -> Option<Expanded> {
        let defs = self.defs;
        let candidates = defs.candidates(call, at.krate, self.crates);
        if candidates.is_empty() {
            return None;
        }
        let left = self.budget.saturating_sub(self.count.bytes);
        let out = match left {
            _ if self.count.expanded >= MAX_EXPANSIONS => None,
            0 => None,
            _ => candidates
                .iter()
                .find_map(|def| self.try_def(def, call, at, pos, left)),
        };
        match out {
            Some(_) => self.count.expanded += 1,
            None => self.count.failed += 1,
        }
        out
    }

    fn try_def(
        &mut self,
        def: &MacroDef,
        call: &MacroCallIr,
        at: At<'_>,
        pos: Position,
        left: usize,
    ) -> Option<Expanded> {
        let limit = MAX_EXPANSION_LEN.min(left);
        let (len, rule, out) = self.outcome(def, call, at, pos, limit)?;
        // Every expansion made counts, kept or not: the work was done.
        self.count.bytes += len;
        if len > limit {
            return None;
        }
        let out = out?;
        if let Some(&body) = def.bodies.get(rule) {
            let origin = MacroOrigin {
                name: def.name.clone(),
                body,
            };
            self.origins.entry(call.span).or_insert(origin);
        }
        Some(out)
    }

    /// What `def` makes of `call`: from the cache when it has the outcome, else expanded,
    /// and lowered when the text is at most `limit` bytes long (then stored).
    fn outcome(
        &self,
        def: &MacroDef,
        call: &MacroCallIr,
        at: At<'_>,
        pos: Position,
        limit: usize,
    ) -> memo::Outcome {
        if !def.shaped {
            return None;
        }
        let krate = scope::dollar_crate(def.krate, at.krate, self.crates);
        let key = self.memo.map(|_| {
            let krate = krate.to_string();
            memo::key(def.key, call, &krate, at.cfg, pos)
        });
        let cached = self
            .memo
            .zip(key)
            .and_then(|(m, k)| memo::get(m, k, call.span));
        if let Some(outcome) = cached {
            return outcome;
        }
        let expanded = def
            .rules()
            .and_then(|r| rules::expand(r, &call.tokens, &krate));
        let outcome = match expanded {
            None => None,
            Some((src, rule)) if src.len() > limit => return Some((src.len(), rule, None)),
            Some((src, rule)) => Some((src.len(), rule, lower_expansion(&src, call, at.cfg, pos))),
        };
        if let Some((m, k)) = self.memo.zip(key) {
            memo::put(m, k, &outcome, call.span);
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    /// Guards against exponential expansion: macros that each invoke the next twice reached
    /// 10 000 expansions of ~100 KB each (a gigabyte of text to parse). The run's expansion
    /// text is budgeted and the invocations past it count as not expanded.
    #[test]
    fn expansion_text_is_budgeted() {
        use crate::parse::cfg::CfgCtx;
        use crate::source::{MemLoader, SourceMap};
        let zeros = "0,".repeat(20_000);
        let mut src =
            format!("macro_rules! leaf {{ () => {{ const X: [u8; 1] = [{zeros}]; }} }}\n");
        let depth = 14;
        for i in 0..depth {
            let next = match i + 1 == depth {
                true => "leaf".to_owned(),
                false => format!("t{}", i + 1),
            };
            src.push_str(&format!(
                "macro_rules! t{i} {{ () => {{ {next}!(); {next}!(); }} }}\n"
            ));
        }
        src.push_str("t0!();\n");
        let file = std::path::PathBuf::from("/mem/m/src/lib.rs");
        let files = MemLoader::new().with(&file, src);
        let mut sources = SourceMap::new(std::path::Path::new("/mem/m"));
        let cfgs = [CfgCtx::default()];
        let mut incr = crate::incremental::Incremental::default();
        let (mut parsed, _) = crate::parse::parse_all(
            &[(file, 0)],
            &cfgs,
            &files,
            &mut incr.files,
            &mut sources,
            false,
        );
        let given = super::Given {
            cfgs: &cfgs,
            crates: &[],
            files: &files,
        };
        let (n, _) = super::expand_all_within(&mut parsed, given, &mut incr, &mut sources, 1 << 20);
        assert!(n.bytes <= (1 << 20) + super::MAX_EXPANSION_LEN, "{n:?}");
        assert!(n.failed > 0 && n.expanded < 200, "{n:?}");
    }
}
