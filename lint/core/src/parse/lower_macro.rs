//! `macro_rules!` definitions and item-position invocations (in modules, impl blocks,
//! trait bodies and fn bodies), and the lowering of an expansion's text through the same path as
//! source items.
//!
//! [`crate::resolve::macros`] substitutes an invocation into text; [`lower_expansion`]
//! parses that text with syn as module items, impl items or trait items (by where the
//! invocation stood) and lowers it with every span fixed at the invocation.

use super::cfg::CfgCtx;
use super::ir::{FnIr, ImplIr, Item, MacroCallIr, MacroRulesIr, SpanIr, TypeRef};
use super::lower::{Lower, path_names};
use super::prescan;
use proc_macro2::{Group, TokenStream, TokenTree};
use std::path::{Path, PathBuf};
use syn::spanned::Spanned;

impl Lower<'_> {
    /// `macro_rules! name { .. }` or an invocation `path! { .. }` at module level.
    /// `dir` and `top` say where a `mod x;` of the expansion is looked for.
    pub(super) fn item_macro(&mut self, m: &syn::ItemMacro, dir: &Path, top: bool) -> Item {
        let path = path_names(&m.mac.path);
        if path.last().is_some_and(|n| n == "macro_rules")
            && let Some(name) = &m.ident
        {
            let bodies = split_rules(m.mac.tokens.clone())
                .unwrap_or_default()
                .iter()
                .map(|(_, body)| self.first_line(body))
                .collect();
            return Item::MacroRules(MacroRulesIr {
                name: name.to_string(),
                rules: m.mac.tokens.to_string(),
                exported: m.attrs.iter().any(|a| a.path().is_ident("macro_export")),
                span: self.sp(m.span()),
                bodies,
            });
        }
        let mut call = self.macro_call(&m.mac, m.span());
        call.mod_dir = dir.to_path_buf();
        call.path_base = self.path_base(dir, top).to_path_buf();
        Item::MacroCall(call)
    }

    /// The tokens on the first line of a rule's body (where the generated items start),
    /// inside the repetitions it opens with (`$( pub fn $name ..`).
    fn first_line(&self, body: &Group) -> SpanIr {
        let mut ts = body.stream();
        for _ in 0..8 {
            let toks: Vec<TokenTree> = ts.clone().into_iter().take(2).collect();
            match toks.as_slice() {
                [TokenTree::Punct(p), TokenTree::Group(g)] if p.as_char() == '$' => ts = g.stream(),
                _ => break,
            }
        }
        let mut toks = ts.into_iter();
        let Some(first) = toks.next() else {
            return self.sp(body.span_open());
        };
        let line = first.span().start().line;
        let mut span = self.sp(first.span());
        for t in toks {
            if t.span().start().line != line || t.span().end().line != line {
                break;
            }
            span.hi = self.sp(t.span()).hi;
        }
        span
    }

    /// An invocation in item position, kept as text.
    pub(super) fn macro_call(&self, mac: &syn::Macro, span: proc_macro2::Span) -> MacroCallIr {
        MacroCallIr {
            path: path_names(&mac.path),
            tokens: mac.tokens.to_string(),
            span: self.sp(span),
            mod_dir: PathBuf::new(),
            path_base: PathBuf::new(),
        }
    }
}

/// The rules of a `macro_rules!` body: `(matcher) => {body}`, separated by `;`.
/// `None` when the body is not of that shape.
pub(crate) fn split_rules(ts: TokenStream) -> Option<Vec<(Group, Group)>> {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let mut rules = Vec::new();
    let mut i = 0;
    // `=>` is two punctuation tokens.
    while i < toks.len() {
        let (Some(TokenTree::Group(matcher)), Some(TokenTree::Group(body))) =
            (toks.get(i), toks.get(i + 3))
        else {
            return None;
        };
        rules.push((matcher.clone(), body.clone()));
        i += 4;
        while matches!(toks.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
            i += 1;
        }
    }
    Some(rules)
}

/// Where an invocation stands, which decides how its expansion is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Position {
    Module,
    Impl,
    Trait,
    /// A statement in a fn body: only the items of the expansion are kept (its
    /// statements are the body's, walked from the invocation's arguments).
    Body,
}

/// An expansion lowered for its [`Position`].
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Expanded {
    /// Module position: the items (a `mod x;` is looked for where the invocation stands).
    pub items: Vec<Item>,
    /// Impl and trait position: the methods and associated types.
    pub fns: Vec<FnIr>,
    pub assoc_types: Vec<(String, TypeRef)>,
    /// Impl and trait position: invocations the expansion itself contains.
    pub macros: Vec<MacroCallIr>,
}

/// Parses the expansion text `src` of `call` as items of `pos` and lowers them, every span
/// at the invocation. `None` when the text does not parse (or is too deep for syn).
pub(crate) fn lower_expansion(
    src: &str,
    call: &MacroCallIr,
    cfg: &CfgCtx,
    pos: Position,
) -> Option<Expanded> {
    let at = call.span;
    if prescan::too_deep(src).is_some() {
        return None;
    }
    let mut lower = Lower {
        file: at.file,
        offset: 0,
        cfg,
        mod_dir: call.mod_dir.clone(),
        file_dir: call.path_base.clone(),
        depth: 0,
        fixed: Some(at),
        inner: Vec::new(),
        attr_renames: Vec::new(),
        invalid: Vec::new(),
        lazy: None,
    };
    let mut out = Expanded::default();
    match pos {
        Position::Module => {
            let file = syn::parse_file(src).ok()?;
            out.items = lower.items(&file.items, &call.mod_dir, true);
        }
        Position::Body => {
            let block: syn::Block = syn::parse_str(&format!("{{ {src} }}")).ok()?;
            let mut items = Vec::new();
            lower.block(&block, &mut items);
            items.append(&mut lower.inner);
            out.items = items;
        }
        Position::Impl => {
            let imp: syn::ItemImpl =
                syn::parse_str(&format!("impl __Expansion {{ {src} }}")).ok()?;
            let ImplIr {
                fns,
                assoc_types,
                macros,
                ..
            } = lower.impl_(&imp);
            (out.fns, out.assoc_types, out.macros) = (fns, assoc_types, macros);
        }
        Position::Trait => {
            let tr: syn::ItemTrait =
                syn::parse_str(&format!("trait __Expansion {{ {src} }}")).ok()?;
            if let Item::Trait { fns, macros, .. } = lower.trait_(&tr) {
                (out.fns, out.macros) = (fns, macros);
            }
        }
    }
    Some(out)
}
