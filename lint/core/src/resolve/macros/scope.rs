//! Which `macro_rules!` definition an invocation names, and what `$crate` becomes.

use crate::crate_graph::{CrateSpec, DepTarget};
use crate::parse::Parsed;
use crate::parse::ir::{FileId, Item, MacroCallIr, MacroRulesIr, ModKind, SpanIr};
use proc_macro2::{TokenStream, TokenTree};
use rayon::prelude::*;
use std::collections::HashMap;
use std::str::FromStr;

/// Most definitions of one name tried for one invocation.
const MAX_CANDIDATES: usize = 8;

/// One `macro_rules!` definition of an analysed crate.
#[derive(Debug)]
pub(super) struct MacroDef {
    pub name: String,
    /// Whether the definition is of the `(..) => {..}` shape (its rules can be parsed).
    pub shaped: bool,
    /// The rules as written, parsed the first time an invocation is expanded rather than
    /// found in the cache of expansions ([`MacroDef::rules`]).
    text: String,
    parsed: std::cell::OnceCell<Option<super::rules::Rules>>,
    /// The digest of the rules as written ([`super::memo::rules_key`]).
    pub key: crate::source::Key,
    pub krate: usize,
    pub file: FileId,
    pub lo: u32,
    pub exported: bool,
    pub bodies: Vec<SpanIr>,
    /// Whether an expansion may declare items by itself, and the macros its rules invoke
    /// (see [`own_items`]).
    pub items: bool,
    pub invokes: Vec<String>,
}

/// Every definition, by name, in (crate, file, position) order.
#[derive(Debug, Default)]
pub(super) struct Defs {
    by_name: HashMap<String, Vec<MacroDef>>,
    /// The names of the definitions that may expand to items, through the macros they
    /// invoke too.
    item_names: std::collections::HashSet<String>,
}

impl Defs {
    /// Whether some definition called `name` may expand to items.
    pub(super) fn may_generate_items(&self, name: &str) -> bool {
        self.item_names.contains(name)
    }

    /// The names of the definitions that may expand to items.
    pub(super) fn item_names(&self) -> &std::collections::HashSet<String> {
        &self.item_names
    }

    /// Whether the invocation `call`, a statement of a fn body, may expand to items: its
    /// macro may, or its own tokens hold an item keyword, an attribute or an escape, or
    /// invoke a macro that may (the rules' bodies are the invocation's tokens and theirs).
    pub(super) fn may_generate_in_body(&self, call: &MacroCallIr) -> bool {
        if call.path.last().is_some_and(|n| self.may_generate_items(n)) {
            return true;
        }
        let Ok(tokens) = TokenStream::from_str(&call.tokens) else {
            return true;
        };
        let mut invokes = Vec::new();
        !crate::parse::lazy::eligible(tokens, &mut invokes)
            || invokes.iter().any(|n| self.may_generate_items(n))
    }

    /// [`Defs::item_names`]: those whose rules declare items, then those invoking one of
    /// them, to a fixed point.
    fn find_item_names(&mut self) {
        let mut names: std::collections::HashSet<String> = self
            .by_name
            .iter()
            .filter(|(_, defs)| defs.iter().any(|d| d.items))
            .map(|(n, _)| n.clone())
            .collect();
        loop {
            let more: Vec<String> = self
                .by_name
                .iter()
                .filter(|(n, defs)| {
                    !names.contains(*n)
                        && defs
                            .iter()
                            .any(|d| d.invokes.iter().any(|i| names.contains(i)))
                })
                .map(|(n, _)| n.clone())
                .collect();
            if more.is_empty() {
                break;
            }
            names.extend(more);
        }
        self.item_names = names;
    }

    /// The definitions at module level (inline modules included) and in fn bodies of
    /// every parsed file. What each one's rules may generate is read in parallel (it
    /// tokenizes them; the order of the lists is fixed by the sort, not by threads); the
    /// rules themselves are parsed only when an invocation needs them.
    pub(super) fn collect(parsed: &Parsed) -> Defs {
        let found = definitions(parsed);
        let summaries: Vec<Result<Summary, crate::panics::Caught>> = found
            .par_iter()
            .map(|(_, m)| crate::panics::catch(|| Summary::of(&m.rules)))
            .collect();
        let mut defs = Defs::default();
        for ((krate, m), summary) in found.into_iter().zip(summaries) {
            // As on one thread: a panic stops the expansion at the net around it.
            let summary = summary.unwrap_or_else(|caught| crate::panics::rethrow(caught));
            let def = MacroDef {
                name: m.name.clone(),
                shaped: summary.shaped,
                text: m.rules.clone(),
                parsed: std::cell::OnceCell::new(),
                key: super::memo::rules_key(&m.rules),
                krate,
                file: m.span.file,
                lo: m.span.lo,
                exported: m.exported,
                bodies: m.bodies.clone(),
                items: summary.items,
                invokes: summary.invokes,
            };
            defs.by_name.entry(m.name.clone()).or_default().push(def);
        }
        for list in defs.by_name.values_mut() {
            list.sort_by_key(|d| (d.krate, d.file, d.lo));
        }
        defs.find_item_names();
        defs
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The definitions `call` (in crate `krate`) may name, most likely first.
    pub(super) fn candidates(
        &self,
        call: &MacroCallIr,
        krate: usize,
        crates: &[CrateSpec],
    ) -> Vec<&MacroDef> {
        let Some(list) = call.path.last().and_then(|n| self.by_name.get(n)) else {
            return Vec::new();
        };
        let mut out: Vec<&MacroDef> = match call.path.len() {
            1 => bare(list, call.span, krate, crates),
            _ => {
                let target = path_crate(&call.path[0], krate, crates);
                list.iter()
                    .filter(|d| Some(d.krate) == target && (d.krate == krate || d.exported))
                    .collect()
            }
        };
        out.truncate(MAX_CANDIDATES);
        out
    }
}

/// A bare `name!` at `at` in crate `krate`: the last definition before it in its file,
/// the crate's other definitions, then other crates' exported ones (dependencies first).
fn bare<'d>(
    list: &'d [MacroDef],
    at: SpanIr,
    krate: usize,
    crates: &[CrateSpec],
) -> Vec<&'d MacroDef> {
    let before = |d: &MacroDef| d.krate == krate && d.file == at.file && d.lo < at.lo;
    let mut out: Vec<&MacroDef> = list.iter().filter(|d| before(d)).rev().collect();
    out.extend(list.iter().filter(|d| d.krate == krate && !before(d)));
    let is_dep = |c: usize| {
        crates.get(krate).is_some_and(|s| {
            s.deps
                .iter()
                .any(|(_, t)| matches!(t, DepTarget::Analysed(i) if *i == c))
        })
    };
    let others = list.iter().filter(|d| d.krate != krate && d.exported);
    out.extend(others.clone().filter(|d| is_dep(d.krate)));
    out.extend(others.filter(|d| !is_dep(d.krate)));
    out
}

/// The analysed crate a path's first segment names from crate `krate`.
fn path_crate(first: &str, krate: usize, crates: &[CrateSpec]) -> Option<usize> {
    if matches!(first, "crate" | "self" | "super") {
        return Some(krate);
    }
    let dep = crates.get(krate).and_then(|s| {
        s.deps.iter().find_map(|(n, t)| match t {
            DepTarget::Analysed(i) if n == first => Some(*i),
            _ => None,
        })
    });
    dep.or_else(|| crates.iter().position(|c| c.name == first))
}

/// What `$crate` in a macro of crate `def` becomes where crate `at` invokes it: `crate`
/// in its own crate, else `::name` by the name `at` knows it under.
pub(super) fn dollar_crate(def: usize, at: usize, crates: &[CrateSpec]) -> TokenStream {
    let known = crates.get(at).and_then(|s| {
        s.deps.iter().find_map(|(n, t)| match t {
            DepTarget::Analysed(i) if *i == def => Some(n.clone()),
            _ => None,
        })
    });
    let text = match known.or_else(|| crates.get(def).map(|c| c.name.clone())) {
        Some(name) if def != at => format!(":: {name}"),
        _ => "crate".to_owned(),
    };
    TokenStream::from_str(&text).unwrap_or_default()
}

/// Whether a rule's body invokes a macro named by a metavariable (`$m!(..)`): the name
/// comes from the invocation's tokens, so any macro, one generating items too.
fn invokes_a_metavariable(ts: TokenStream) -> bool {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    toks.iter().enumerate().any(|(i, tt)| match tt {
        TokenTree::Group(g) => invokes_a_metavariable(g.stream()),
        TokenTree::Punct(p) if p.as_char() == '$' => {
            matches!(toks.get(i + 1), Some(TokenTree::Ident(_)))
                && matches!(toks.get(i + 2), Some(TokenTree::Punct(b)) if b.as_char() == '!')
        }
        _ => false,
    })
}

/// The `macro_rules!` items at module level (inline modules included) and in fn bodies
/// of every parsed file, with their crates.
fn definitions(parsed: &Parsed) -> Vec<(usize, &MacroRulesIr)> {
    let mut found = Vec::new();
    for ((_, krate), f) in &parsed.files {
        let mut stack = vec![&f.items];
        while let Some(items) = stack.pop() {
            for i in items {
                match i {
                    Item::MacroRules(m) => found.push((*krate, m)),
                    Item::Mod {
                        kind: ModKind::Inline(inner),
                        ..
                    } => stack.push(inner),
                    // A definition in a fn body (for the invocations after it there).
                    Item::Fn(f) => stack.push(&f.nested),
                    Item::Impl(imp) => stack.extend(imp.fns.iter().map(|f| &f.nested)),
                    _ => {}
                }
            }
        }
    }
    found
}

/// What a definition's rules say about its expansions, read from their text.
struct Summary {
    shaped: bool,
    items: bool,
    invokes: Vec<String>,
}

impl Summary {
    /// [`MacroDef::items`] and [`MacroDef::invokes`] from the rules' text: a
    /// transcriber that holds an item keyword, an attribute or an escape (as for a lazy
    /// body, see [`crate::parse::lazy::eligible`]) may declare items; the macros it invokes
    /// may too when they are analysed ones that do (a macro the lint does not know expands
    /// to nothing here). Items cannot come from the invocation's tokens in a lazy body (they
    /// hold none, and macro_rules cannot paste tokens into keywords), and rules not of the
    /// `(..) => {..}` shape may expand to anything.
    fn of(rules: &str) -> Summary {
        let split = TokenStream::from_str(rules)
            .ok()
            .and_then(crate::parse::lower_macro::split_rules);
        let mut out = Summary {
            shaped: split.is_some(),
            items: split.is_none(),
            invokes: Vec::new(),
        };
        for (_, body) in split.iter().flatten() {
            out.items |= !crate::parse::lazy::eligible(body.stream(), &mut out.invokes)
                || invokes_a_metavariable(body.stream());
        }
        out.invokes.sort();
        out.invokes.dedup();
        out
    }
}

impl MacroDef {
    /// The parsed rules (`None` when not of the `(..) => {..}` shape), parsed on first use.
    pub(super) fn rules(&self) -> Option<&super::rules::Rules> {
        let parsed = self.parsed.get_or_init(|| match self.shaped {
            true => super::rules::parse_rules(&self.text),
            false => None,
        });
        parsed.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::Defs;
    use crate::parse::cfg::CfgCtx;
    use crate::source::{MemLoader, SourceMap};

    /// Which macros keep a lazy body lazy: those that can only expand to statements and
    /// expressions, also through the macros they invoke (recursion included); an item, an
    /// attribute or an unreadable definition anywhere down the invocations lowers it.
    #[test]
    fn only_macros_that_may_expand_to_items_are_generating() {
        let src = "macro_rules! bail { ($m:literal) => { return Err(format!($m)) }; }\n\
                   macro_rules! munch { () => {}; ($x:tt $($r:tt)*) => { f($x); munch!($($r)*) }; }\n\
                   macro_rules! make { ($n:ident) => { fn $n() {} }; }\n\
                   macro_rules! outer { ($n:ident) => { g(); outer2!($n); }; }\n\
                   macro_rules! outer2 { ($n:ident) => { outer!($n); make!($n); }; }\n\
                   macro_rules! attr { () => { #[derive(Debug)] struct A; }; }\n\
                   macro_rules! odd { x }\n";
        let file = std::path::PathBuf::from("/mem/m/src/lib.rs");
        let files = MemLoader::new().with(&file, src);
        let mut sources = SourceMap::new(std::path::Path::new("/mem/m"));
        let cfgs = [CfgCtx::default()];
        let mut caches = crate::incremental::FileCaches::default();
        let (parsed, _) = crate::parse::parse_all(
            &[(file, 0)],
            &cfgs,
            &files,
            &mut caches,
            &mut sources,
            false,
        );
        let defs = Defs::collect(&parsed);
        let names = [
            "bail", "munch", "make", "outer", "outer2", "attr", "odd", "absent",
        ];
        let generating: Vec<&str> = names
            .into_iter()
            .filter(|n| defs.may_generate_items(n))
            .collect();
        assert_eq!(generating, ["make", "outer", "outer2", "attr", "odd"]);
    }
}
