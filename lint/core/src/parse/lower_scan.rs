//! Lowering of macros in expression position: escapes, format macros, bodies that parse
//! as expressions, and the token-scan fallback that finds calls in other bodies.

use super::ir::*;
use super::lower::{Lower, path_names};
use nosync_syntax::Escape;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

impl Lower<'_> {
    /// A macro in expression position: escapes are dropped, other arguments are parsed
    /// as comma- or semicolon-separated expressions where they parse.
    pub(super) fn mac(&mut self, m: &syn::Macro) -> Expr {
        let names = path_names(&m.path);
        let name = names.last().map_or("", String::as_str);
        if Escape::of_macro_name(name).is_some() {
            if let Err(e) = Escape::parse_macro_body(m.tokens.clone(), m.span()) {
                self.invalid(e);
            }
            return Expr::Escape;
        }
        if let Some(e) = self.fmt_macro(name, &m.tokens) {
            // `bail!` returns the error it builds. (`ensure!` returns only when its
            // condition fails: it stays an `Expr::Failing`, which the drops read as an exit.)
            return match name {
                "bail" => Expr::Return {
                    value: Some(Box::new(e)),
                    span: self.sp(m.span()),
                },
                _ => e,
            };
        }
        let mut kids = Vec::new();
        let parser = Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(args) = m.parse_body_with(parser) {
            kids = self.exprs(&args);
        } else {
            self.scan_tokens(m.tokens.clone(), 0, &mut kids);
        }
        match name {
            // `bail!(MyError)`: an error value, returned.
            "bail" => Expr::Return {
                value: Some(Box::new(Expr::Other(kids))),
                span: self.sp(m.span()),
            },
            _ => Expr::Other(kids),
        }
    }

    /// The token-scan fallback for macro bodies that are not a list of expressions (user
    /// macros with `=>`, `@rule` or `;` syntax): each top-level piece that parses as an
    /// expression is lowered; a piece that does not is searched inside its delimited groups,
    /// so `m!(@go wait() => 1)` still yields the call `wait()`. Depth-bounded.
    fn scan_tokens(&mut self, ts: proc_macro2::TokenStream, depth: usize, kids: &mut Vec<Expr>) {
        for chunk in split_top_level(ts) {
            if let Ok(e) = syn::parse2::<syn::Expr>(chunk.clone()) {
                kids.push(self.expr(&e));
                continue;
            }
            if depth >= MAX_SCAN_DEPTH {
                continue;
            }
            let (pieces, groups) = split_calls(chunk);
            for piece in pieces {
                // `rule a::b(x)`: drop leading tokens until the rest is a call.
                let piece: Vec<proc_macro2::TokenTree> = piece.into_iter().collect();
                let parsed = (0..piece.len().min(MAX_SKIP)).find_map(|skip| {
                    syn::parse2::<syn::Expr>(piece[skip..].iter().cloned().collect()).ok()
                });
                if let Some(e) = parsed {
                    kids.push(self.expr(&e));
                }
            }
            for group in groups {
                self.scan_tokens(group, depth + 1, kids);
            }
        }
    }
}

/// How deep [`Lower::scan_tokens`] descends into the groups of an unparsable macro body.
const MAX_SCAN_DEPTH: usize = 8;
/// How many leading tokens of a call-shaped run are tried away (`rule a::b(x)`), so a long
/// run costs a bounded number of parses.
const MAX_SKIP: usize = 8;

/// Splits a token stream at top-level `,`, `;` and `=>` (tolerant fallback for macro bodies).
fn split_top_level(ts: proc_macro2::TokenStream) -> Vec<proc_macro2::TokenStream> {
    use proc_macro2::{Spacing, TokenTree};
    let mut out = vec![proc_macro2::TokenStream::new()];
    let mut fat_arrow = false;
    for tt in ts {
        let split = match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' || p.as_char() == ';' => true,
            TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Joint => {
                fat_arrow = true;
                continue;
            }
            TokenTree::Punct(p) if p.as_char() == '>' && fat_arrow => true,
            _ => false,
        };
        if fat_arrow && !split {
            // A lone `=` (joint with something other than `>`): keep it.
            push_last(
                &mut out,
                proc_macro2::Punct::new('=', Spacing::Joint).into(),
            );
        }
        fat_arrow = false;
        if split {
            out.push(proc_macro2::TokenStream::new());
        } else {
            push_last(&mut out, tt);
        }
    }
    out
}

fn push_last(out: &mut [proc_macro2::TokenStream], tt: proc_macro2::TokenTree) {
    if let Some(last) = out.last_mut() {
        last.extend(std::iter::once(tt));
    }
}

/// For a piece that is no expression: the call-shaped runs in it (`path(args)`, an identifier
/// path followed by a parenthesised group, with any leading `@rule`/keywords dropped) and the
/// contents of its other delimited groups, to be scanned again.
fn split_calls(
    ts: proc_macro2::TokenStream,
) -> (Vec<proc_macro2::TokenStream>, Vec<proc_macro2::TokenStream>) {
    use proc_macro2::{Delimiter, TokenTree};
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    let (mut pieces, mut groups) = (Vec::new(), Vec::new());
    let mut run: Vec<TokenTree> = Vec::new();
    for tt in tokens {
        match &tt {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis && !run.is_empty() => {
                run.push(tt.clone());
                pieces.push(run.drain(..).collect());
            }
            TokenTree::Group(g) => {
                run.clear();
                groups.push(g.stream());
            }
            TokenTree::Ident(_) => run.push(tt),
            TokenTree::Punct(p) if p.as_char() == ':' || p.as_char() == '.' => run.push(tt),
            _ => run.clear(),
        }
    }
    (pieces, groups)
}
