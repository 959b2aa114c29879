//! Lazy fn bodies: most of a file's tokens are in fn bodies, and most fns are never reached
//! from a root, so a body that cannot change the item tree is not parsed with its file.
//!
//! [`rewrite`] walks the file's tokens at item level (into the brace groups of `impl`,
//! `trait` and `mod` items) and replaces each eligible fn body by an empty `{}` carrying
//! the body's span, recording its byte range; syn then parses the much smaller stream.
//! [`check`] makes sure that every recorded range is the block of a fn of the parsed tree
//! (else the file is parsed eagerly: nothing is ever lost), and lowering turns each such
//! fn's body into a [`LazyBody`]. [`lower_body`] parses and lowers it when the call graph
//! reaches the fn (or before `macro_rules!` expansion, when it invokes a macro by a name
//! that is defined).
//!
//! A body is eligible when no token of it, at any depth, could declare an item (item
//! keywords), carry an attribute (`#`) or name an escape: then its lowering adds nothing to
//! `FnIr::nested` but statement macro calls (whose names are recorded) and nothing to
//! `Lower::invalid`.

use super::cache::{self, BodyLowering};
use super::cfg::CfgCtx;
use super::ir::{Block, Item, LazyBody};
use super::lower::Lower;
use crate::diagnostics::{Code, Diagnostic};
use crate::source::SourceMap;
use nosync_syntax::Escape;
use proc_macro2::{Delimiter, Group, Spacing, TokenStream, TokenTree};
use std::collections::HashMap;
use std::path::PathBuf;

/// A body replaced by `{}`: its byte range in the parsed text and the macros it invokes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub hi: u32,
    pub macros: Vec<String>,
}

/// The bodies of one file kept lazy, by start offset (in the parsed text), and what
/// lowering them later needs.
#[derive(Debug)]
pub struct Ranges {
    pub by_lo: HashMap<u32, Recorded>,
    pub mod_dir: PathBuf,
}

/// What decides how the brace group of an item is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Other,
    Fn,
    /// `impl`, `trait`, `mod`: its brace group holds items.
    Container,
}

/// Replaces the eligible fn bodies of `ts` (a whole file) by empty groups with their span.
pub fn rewrite(ts: TokenStream) -> (TokenStream, HashMap<u32, Recorded>) {
    let mut out = HashMap::new();
    let ts = items(ts, &mut out);
    (ts, out)
}

fn items(ts: TokenStream, out: &mut HashMap<u32, Recorded>) -> TokenStream {
    let mut kind = ItemKind::Other;
    let mut decided = false;
    let mut res = Vec::new();
    // Every stream here is walked by value and each brace group taken apart (its stream
    // then has no other owner), so that no token is cloned: iterating a shared stream
    // copies all of its tokens.
    for tt in ts {
        match tt {
            TokenTree::Ident(ref i) if !decided => {
                if i == "fn" {
                    (kind, decided) = (ItemKind::Fn, true);
                } else if i == "impl" || i == "trait" || i == "mod" {
                    (kind, decided) = (ItemKind::Container, true);
                }
            }
            TokenTree::Punct(ref p) if p.as_char() == ';' => {
                (kind, decided) = (ItemKind::Other, false);
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
                let (span, stream) = (g.span(), g.stream());
                drop(g);
                let stream = match kind {
                    ItemKind::Fn => lazy_body(span, stream, out),
                    ItemKind::Container => items(stream, out),
                    ItemKind::Other => stream,
                };
                (kind, decided) = (ItemKind::Other, false);
                res.push(TokenTree::Group(brace(stream, span)));
                continue;
            }
            _ => {}
        }
        res.push(tt);
    }
    res.into_iter().collect()
}

/// A brace group of `stream` with `span` (what a group taken apart was).
fn brace(stream: TokenStream, span: proc_macro2::Span) -> Group {
    let mut group = Group::new(Delimiter::Brace, stream);
    group.set_span(span);
    group
}

/// For an eligible, non-empty body (`stream`, the group's at `span`): records it and gives
/// the (empty) stream replacing it; else the body's own stream.
fn lazy_body(
    span: proc_macro2::Span,
    stream: TokenStream,
    out: &mut HashMap<u32, Recorded>,
) -> TokenStream {
    if stream.is_empty() {
        return stream;
    }
    let mut toks: Vec<TokenTree> = stream.into_iter().collect();
    let mut macros = Vec::new();
    if !eligible_tokens(&mut toks, &mut macros) {
        return toks.into_iter().collect();
    }
    macros.sort();
    macros.dedup();
    let r = span.byte_range();
    let hi = r.end as u32;
    out.insert(r.start as u32, Recorded { hi, macros });
    TokenStream::new()
}

/// Whether the tokens of a body (at any depth) can neither declare an item, carry an
/// attribute nor name an escape; collects the names of the macros invoked.
pub fn eligible(ts: TokenStream, macros: &mut Vec<String>) -> bool {
    let mut toks: Vec<TokenTree> = ts.into_iter().collect();
    eligible_tokens(&mut toks, macros)
}

/// [`eligible`] on tokens that come back as they were (a nested group is taken apart to be
/// read, then put back).
fn eligible_tokens(toks: &mut [TokenTree], macros: &mut Vec<String>) -> bool {
    for i in 0..toks.len() {
        let ok = match &toks[i] {
            TokenTree::Group(_) => nested_eligible(&mut toks[i], macros),
            TokenTree::Punct(p) => p.as_char() != '#',
            TokenTree::Literal(_) => true,
            TokenTree::Ident(id) => {
                let (prev, next) = (i.checked_sub(1).map(|j| &toks[j]), toks.get(i + 1));
                let ok = !item_keyword(id, prev, next) && !names_escape(id);
                if ok
                    && matches!(next, Some(TokenTree::Punct(p)) if p.as_char() == '!' && p.spacing() == Spacing::Alone)
                {
                    macros.push(id.to_string());
                }
                ok
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

/// [`eligible`] for the group at `slot` (true for any other token): the group is taken
/// apart, so that its stream has no other owner and is read without a copy, then put back.
fn nested_eligible(slot: &mut TokenTree, macros: &mut Vec<String>) -> bool {
    let placeholder = TokenTree::Punct(proc_macro2::Punct::new('.', Spacing::Alone));
    let g = match std::mem::replace(slot, placeholder) {
        TokenTree::Group(g) => g,
        other => {
            *slot = other;
            return true;
        }
    };
    let (delimiter, span, stream) = (g.delimiter(), g.span(), g.stream());
    drop(g);
    let mut inner: Vec<TokenTree> = stream.into_iter().collect();
    let ok = eligible_tokens(&mut inner, macros);
    let mut group = Group::new(delimiter, inner.into_iter().collect());
    group.set_span(span);
    *slot = TokenTree::Group(group);
    ok
}

/// Whether `id` names an escape (`allow_sync(..)`, `allow_sync_expr!(..)`), compared
/// without building its string.
fn names_escape(id: &proc_macro2::Ident) -> bool {
    [
        Escape::AllowSync,
        Escape::AllowSyncOnce,
        Escape::AllowSyncExpr,
    ]
    .iter()
    .any(|e| id == e.as_str())
}

/// Whether identifier `id` (between `prev` and `next`) may start or introduce an item.
fn item_keyword(
    id: &proc_macro2::Ident,
    prev: Option<&TokenTree>,
    next: Option<&TokenTree>,
) -> bool {
    let after = |c: char| matches!(prev, Some(TokenTree::Punct(p)) if p.as_char() == c);
    const ITEM: [&str; 10] = [
        "fn",
        "impl",
        "struct",
        "enum",
        "trait",
        "mod",
        "macro_rules",
        "type",
        "use",
        "extern",
    ];
    if ITEM.iter().any(|k| id == k) {
        return true;
    }
    // `&'static T` is a lifetime, `*const T` a pointer type.
    if id == "static" {
        return !after('\'');
    }
    if id == "const" {
        return !after('*');
    }
    // A contextual keyword: `union U {` declares, `a.union(&b)` calls.
    id == "union" && matches!(next, Some(TokenTree::Ident(_)))
}

/// The byte ranges of the blocks of the fns of `file` at item level (into modules, impls
/// and traits, as [`rewrite`] walks them), for [`check`].
fn fn_blocks(items: &[syn::Item], out: &mut Vec<(u32, u32)>) {
    fn push(out: &mut Vec<(u32, u32)>, b: &syn::Block) {
        if b.stmts.is_empty() {
            let r = b.brace_token.span.join().byte_range();
            out.push((r.start as u32, r.end as u32));
        }
    }
    for item in items {
        match item {
            syn::Item::Fn(f) => push(out, &f.block),
            syn::Item::Impl(i) => i.items.iter().for_each(|ii| {
                if let syn::ImplItem::Fn(f) = ii {
                    push(out, &f.block)
                }
            }),
            syn::Item::Trait(t) => t.items.iter().for_each(|ti| {
                if let syn::TraitItem::Fn(f) = ti
                    && let Some(b) = &f.default
                {
                    push(out, b)
                }
            }),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    fn_blocks(inner, out);
                }
            }
            _ => {}
        }
    }
}

/// Whether every recorded range is the (empty) block of a fn of `file`: when one is not
/// (a `{..}` that was not the body, as in `-> Foo<{N}>`), the file must be parsed eagerly.
pub fn check(file: &syn::File, recorded: &HashMap<u32, Recorded>) -> bool {
    let mut blocks = Vec::new();
    fn_blocks(&file.items, &mut blocks);
    let found: HashMap<u32, u32> = blocks.into_iter().collect();
    recorded
        .iter()
        .all(|(lo, rec)| found.get(lo) == Some(&rec.hi))
}

/// A lazy body lowered: its block, the items its lowering declares (statement macro calls)
/// and its diagnostics. `Err` with a `parse-error` when the body does not parse.
pub struct LoweredBody {
    pub block: Block,
    pub nested: Vec<Item>,
    pub diags: Vec<Diagnostic>,
}

/// Parses `text[lo..hi]` of a lazy body as a block and lowers it, with spans offset by `lo`,
/// as it would have been lowered with its file; from the cache of lazy bodies when the
/// source map has one that holds it (and into it when not). No span of it outlives the
/// call: the caller may [`super::free_spans`] after, when it holds none itself.
/// (`#[cfg]` is not read: a lazy body has no attribute.)
pub fn lower_body(body: &LazyBody, sources: &SourceMap) -> Result<LoweredBody, Box<Diagnostic>> {
    let file = body.span.file;
    let text = &sources.file(file).text;
    let lowering = match sources.bodies() {
        None => lower_text(body, text),
        Some(store) => {
            let key = cache::body_key(body, text);
            match store.get(key).and_then(|b| cache::decode_body(&b, body)) {
                Some(found) => found,
                None => {
                    let lowering = lower_text(body, text);
                    if let Some(bytes) = cache::encode_body(&lowering, body) {
                        store.insert(key, bytes);
                    }
                    lowering
                }
            }
        }
    };
    let (block, nested, invalid) = lowering.map_err(|(msg, a, b)| {
        let at = sources.span_of(file, floor(text, a), floor(text, b));
        let d = Diagnostic::new(Code::ParseError, msg, at).with_note(
            "a fn body is parsed when the call graph reads it; this one's calls are not in the call graph",
            None,
        );
        Box::new(d)
    })?;
    let diags = invalid
        .into_iter()
        .map(|(msg, at)| super::invalid_escape(msg, at, sources))
        .collect();
    Ok(LoweredBody {
        block,
        nested,
        diags,
    })
}

/// The lowering of a lazy body of the file whose text is `text`.
fn lower_text(body: &LazyBody, text: &str) -> BodyLowering {
    let (lo, hi) = (body.span.lo as usize, body.span.hi as usize);
    let src = text.get(lo..hi).unwrap_or_default();
    let block: syn::Block = syn::parse_str(src).map_err(|e| {
        let r = e.span().byte_range();
        let msg = format!("syntax error: {e}");
        (msg, r.start + lo, r.end.max(r.start) + lo)
    })?;
    let no_cfg = CfgCtx::default();
    let mut lower = Lower {
        file: body.span.file,
        offset: body.span.lo,
        cfg: &no_cfg,
        mod_dir: body.mod_dir.clone(),
        file_dir: body.mod_dir.clone(),
        depth: 0,
        fixed: None,
        inner: Vec::new(),
        attr_renames: Vec::new(),
        invalid: Vec::new(),
        lazy: None,
    };
    let mut nested = Vec::new();
    let block = lower.block(&block, &mut nested);
    nested.append(&mut lower.inner);
    Ok((block, nested, lower.invalid))
}

fn floor(text: &str, at: usize) -> usize {
    super::floor_char(text, at)
}
