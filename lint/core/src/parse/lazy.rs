//! Lazy fn bodies: most of a file's tokens are in fn bodies, and most fns are never reached
//! from a root, so a body that cannot change the item tree is not parsed with its file.
//!
//! `blank.rs` walks the file's text at item level (into the brace groups of `impl`,
//! `trait` and `mod` items) and cuts each eligible fn body's contents out of it (its braces
//! kept), recording its byte range, so that proc-macro2 lexes it as an empty `{}` and syn
//! parses the much smaller stream; [`Cuts`] maps the parsed text's offsets back to the file's. [`check`] makes sure that every recorded range is the block of a fn of the parsed tree
//! (else the file is parsed eagerly: nothing is ever lost), and lowering turns each such
//! fn's body into a [`LazyBody`]. [`lower_body`] parses and lowers it when the call graph
//! reaches the fn (or before `macro_rules!` expansion, when it invokes a macro by a name
//! that is defined).
//!
//! A body is eligible when no token of it, at any depth, could declare an item (item
//! keywords), carry an attribute (`#`) or name an escape, but for `use` declarations among
//! its top-level statements (a plain path tree: `blank/body.rs`'s `use_decl`): then its lowering
//! adds nothing to `FnIr::nested` but those `use`s, which the file's lowering adds itself
//! (each parsed on its own where it stands, `Lower::body_uses`: an eager lowering puts a
//! body's top-level items first among `nested`, in order), and statement macro calls (whose
//! names are recorded), and nothing to `Lower::invalid`. Most bodies that declare anything
//! declare `use`s (94 of `mistralrs-core/src/ops.rs`'s 110 fns; on candle, more than half of
//! the text eager bodies kept in the parsed text).

use super::cache::{self, BodyLowering};
use super::cfg::CfgCtx;
use super::ir::{Block, Item, LazyBody};
use super::lower::Lower;
use crate::diagnostics::{Code, Diagnostic};
use crate::source::SpanIr;
use crate::source::{SharedCache, SourceMap};
use nosync_syntax::Escape;
use proc_macro2::{Spacing, TokenStream, TokenTree};
use std::collections::HashMap;
use std::path::Path;

/// A body replaced by `{}`: its byte range in the parsed text and the macros it invokes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub hi: u32,
    pub macros: Vec<String>,
    /// The hash of the body's text ([`LazyBody::text`]).
    pub text: u128,
    /// The `use` declarations among the body's top-level statements: where each starts (in
    /// the file's text) and its text, lowered as the fn's `nested` items.
    pub uses: Vec<(u32, String)>,
}

/// The bodies of one file kept lazy, by start offset (in the file's text), where their
/// contents were cut from the parsed text, and what lowering them later needs.
#[derive(Debug)]
pub struct Ranges {
    pub by_lo: HashMap<u32, Recorded>,
    pub cuts: Cuts,
    pub mod_dir: std::sync::Arc<Path>,
}

/// Where the contents of the lazy bodies were cut out of the text that was parsed (each
/// body's `{` and `}` kept): by the offset of the cut in the parsed text, the bytes cut
/// there and before it. An offset of the parsed text maps back to the file's text.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cuts(pub Vec<(u32, u32)>);

impl Cuts {
    /// The file offset of a span's start at `at`: a cut at `at` lies before it.
    pub fn start(&self, at: usize) -> usize {
        self.shift(self.0.partition_point(|&(c, _)| c as usize <= at), at)
    }

    /// The file offset of a span's (exclusive) end at `at`: a cut at `at` lies after it.
    pub fn end(&self, at: usize) -> usize {
        self.shift(self.0.partition_point(|&(c, _)| (c as usize) < at), at)
    }

    fn shift(&self, before: usize, at: usize) -> usize {
        before
            .checked_sub(1)
            .map_or(at, |i| at + self.0[i].1 as usize)
    }

    /// A parsed-text byte range as the file's.
    pub fn range(&self, r: std::ops::Range<usize>) -> (u32, u32) {
        (self.start(r.start) as u32, self.end(r.end) as u32)
    }
}

/// Whether the tokens of a body (at any depth) can neither declare an item, carry an
/// attribute nor name an escape; collects the names of the macros invoked. (The text
/// scanner decides the same for a file's fn bodies; this reads the tokens of a
/// `macro_rules!` rule or a statement macro call.)
pub fn eligible(ts: TokenStream, macros: &mut Vec<String>) -> bool {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    for (i, tt) in toks.iter().enumerate() {
        let ok = match tt {
            TokenTree::Group(g) => eligible(g.stream(), macros),
            TokenTree::Punct(p) => p.as_char() != '#',
            TokenTree::Literal(_) => true,
            TokenTree::Ident(id) => {
                let prev = match i.checked_sub(1).map(|j| &toks[j]) {
                    Some(TokenTree::Punct(p)) => Some(p.as_char()),
                    _ => None,
                };
                let next = toks.get(i + 1);
                let name = id.to_string();
                let ok = !blocks_laziness(&name, prev, matches!(next, Some(TokenTree::Ident(_))));
                if ok
                    && matches!(next, Some(TokenTree::Punct(p)) if p.as_char() == '!' && p.spacing() == Spacing::Alone)
                {
                    macros.push(name);
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

/// Whether identifier `name` (after punctuation `prev`, if it is; before an identifier,
/// if `next_ident`) keeps a body from being lazy: it may start or introduce an item, or
/// names an escape. One policy for the token pre-pass and the text scanner (`blank.rs`).
pub(super) fn blocks_laziness(name: &str, prev: Option<char>, next_ident: bool) -> bool {
    let item = match name {
        "fn" | "impl" | "struct" | "enum" | "trait" | "mod" | "macro_rules" | "type" | "use"
        | "extern" => true,
        // `&'static T` is a lifetime, `*const T` a pointer type.
        "static" => prev != Some('\''),
        "const" => prev != Some('*'),
        // A contextual keyword: `union U {` declares, `a.union(&b)` calls.
        "union" => next_ident,
        _ => false,
    };
    item || Escape::of_fn_name(name).is_some() || Escape::of_macro_name(name).is_some()
}

/// The byte ranges of the blocks of the fns of `file` at item level (into modules, impls
/// and traits, as `blank.rs` walks them), for [`check`].
fn fn_blocks(items: &[syn::Item], cuts: &Cuts, out: &mut Vec<(u32, u32)>) {
    let push = |out: &mut Vec<(u32, u32)>, b: &syn::Block| {
        if b.stmts.is_empty() {
            out.push(cuts.range(b.brace_token.span.join().byte_range()));
        }
    };
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
                    fn_blocks(inner, cuts, out);
                }
            }
            _ => {}
        }
    }
}

/// Whether every recorded range is the (empty) block of a fn of `file`: when one is not
/// (a `{..}` that was not the body, as in `-> Foo<{N}>`), the file must be parsed eagerly.
pub fn check(file: &syn::File, recorded: &HashMap<u32, Recorded>, cuts: &Cuts) -> bool {
    let mut blocks = Vec::new();
    fn_blocks(&file.items, cuts, &mut blocks);
    let found: HashMap<u32, u32> = blocks.into_iter().collect();
    recorded
        .iter()
        .all(|(lo, rec)| found.get(lo) == Some(&rec.hi))
}

/// A lazy body lowered: its block, the items its lowering declares (statement macro calls)
/// and its diagnostics. `Err` with a `parse-error` when the body does not parse.
#[derive(Debug)]
pub struct LoweredBody {
    pub block: Block,
    pub nested: Vec<Item>,
    pub diags: Vec<Diagnostic>,
}

/// Parses `text[lo..hi]` of a lazy body as a block and lowers it, with spans offset by `lo`,
/// as it would have been lowered with its file; from the cache of lazy bodies `cache` when
/// it holds it (and into it when not). No span of it outlives the
/// call: the caller may [`super::free_spans`] after, when it holds none itself.
/// (`#[cfg]` is not read: a lazy body has no attribute.)
pub fn lower_body(
    body: &LazyBody,
    sources: &SourceMap,
    cache: Option<&SharedCache>,
) -> Result<LoweredBody, Box<Diagnostic>> {
    let file = body.span.file;
    let text = &sources.file(file).text;
    let lowering = match cache {
        None => lower_text(body, text),
        Some(store) => {
            let key = cache::body_key(body);
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
        mod_dir: body.mod_dir.to_path_buf(),
        file_dir: body.mod_dir.to_path_buf(),
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

impl<'a> Lower<'a> {
    /// The lazy body `b` stands for, when it is one of the bodies replaced by `{}`, and the
    /// `use` declarations among its top-level statements.
    pub(super) fn lazy_body(&self, b: &syn::Block) -> Option<(LazyBody, &'a [(u32, String)])> {
        let lazy = self.lazy?;
        if !b.stmts.is_empty() || self.fixed.is_some() {
            return None;
        }
        let (lo, hi) = lazy.cuts.range(b.brace_token.span.join().byte_range());
        let rec = lazy.by_lo.get(&lo)?;
        let body = LazyBody {
            span: SpanIr {
                file: self.file,
                lo: lo + self.offset,
                hi: hi + self.offset,
            },
            mod_dir: lazy.mod_dir.clone(),
            macros: rec.macros.clone(),
            text: rec.text,
        };
        (rec.hi == hi).then_some((body, &rec.uses[..]))
    }

    /// The `use` declarations of a lazy body (each starting at its offset in the text), as
    /// its eager lowering adds them to the fn's `nested` items (`Stmt::Item`): each parsed
    /// on its own, its spans placed where it stands. One that does not parse is left to the
    /// body's own lowering, which reports the body's syntax error when a root reaches it.
    pub(super) fn body_uses(&mut self, uses: &[(u32, String)], nested: &mut Vec<Item>) {
        let dir = self.mod_dir.clone();
        for (at, text) in uses {
            let Ok(item) = syn::parse_str::<syn::Item>(text) else {
                continue;
            };
            let mut alone = Lower {
                offset: self.offset + at,
                fixed: None,
                inner: Vec::new(),
                attr_renames: Vec::new(),
                invalid: Vec::new(),
                lazy: None,
                mod_dir: dir.clone(),
                file_dir: self.file_dir.clone(),
                ..*self
            };
            nested.extend(alone.items(std::slice::from_ref(&item), &dir, false));
            self.invalid.append(&mut alone.invalid);
        }
    }
}
