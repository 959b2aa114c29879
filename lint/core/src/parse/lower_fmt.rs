//! Formatting macros lowered into the trait calls they make: each argument that a format
//! string shows with `{:?}` is a call of `<T as Debug>::fmt` on it, with `{}` one of
//! `<T as Display>::fmt` (`T` its type, found by the walk), so that a `Debug` impl that
//! reads a tensor to the host is a hop like any other.
//!
//! The macros are known by name (std's `format!`, `print!`, `println!`, `eprint!`,
//! `eprintln!`, `write!`, `writeln!`, `format_args!`, `panic!`, `unreachable!`, `todo!`,
//! `unimplemented!`, `assert*!`, `debug_assert*!`, `dbg!`; anyhow's and eyre's `anyhow!`,
//! `bail!`, `ensure!`, `format_err!`, `eyre!`; the `tracing` and `log` events `trace!`,
//! `debug!`, `info!`, `warn!`, `error!`, `event!`, `log!`). A format argument is
//! positional (`{}`, `{0}`), named (`{x}` with `x = expr`) or an identifier captured from
//! the scope (`{x}` alone); a `tracing` field is shown with `Debug` (`?x`, `k = ?x`) or
//! `Display` (`%x`, `k = %x`). `assert_eq!`'s operands and `dbg!`'s arguments are shown
//! with `Debug`. The message of a macro that builds an error value or panics (`bail!`,
//! `anyhow!`, `ensure!`, `panic!`, `assert*!`, ...) is wrapped in [`Expr::Failing`]: the walk
//! marks the calls it makes as made only on a failing path. Other format traits (`{:x}`, `{:e}`, `{:p}`) are taken as calling nothing
//! (std implements them for numbers and pointers); their arguments are lowered as written.

use super::ir::*;
use super::lower::Lower;
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::spanned::Spanned;

/// The trait a placeholder formats its argument with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FmtTrait {
    Debug,
    Display,
}

impl FmtTrait {
    /// The path of its `fmt`, from the root of the crate graph (`::core::fmt::Debug::fmt`).
    fn path(self) -> PathIr {
        let name = match self {
            FmtTrait::Debug => "Debug",
            FmtTrait::Display => "Display",
        };
        PathIr {
            global: true,
            segs: ["core", "fmt", name, "fmt"]
                .map(|s| Seg {
                    name: s.into(),
                    generics: None,
                })
                .into(),
            qself: None,
        }
    }
}

/// What comes before a formatting macro's format string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// The format string first (`format!`, `panic!`, `bail!`).
    Nothing,
    /// One expression (`write!`'s writer, `assert!`'s condition, `event!`'s level).
    One,
    /// Two values shown with `Debug` when the assertion fails (`assert_eq!`).
    DebugPair,
    /// Every argument shown with `Debug` (`dbg!`), no format string.
    AllDebug,
    /// `tracing`/`log` metadata (`target: ..`) and fields (`k = ?v`, `%v`), then an
    /// optional format string; `level` says whether a level comes first (`event!`, `log!`).
    Fields { level: bool },
}

fn lead(name: &str) -> Option<Lead> {
    Some(match name {
        "format" | "format_args" | "print" | "println" | "eprint" | "eprintln" | "panic"
        | "unreachable" | "todo" | "unimplemented" | "anyhow" | "bail" | "format_err" | "eyre" => {
            Lead::Nothing
        }
        "write" | "writeln" | "assert" | "debug_assert" | "ensure" => Lead::One,
        "assert_eq" | "assert_ne" | "debug_assert_eq" | "debug_assert_ne" => Lead::DebugPair,
        "dbg" => Lead::AllDebug,
        "trace" | "debug" | "info" | "warn" | "error" => Lead::Fields { level: false },
        "event" | "log" => Lead::Fields { level: true },
        _ => return None,
    })
}

/// Whether macro `name!` builds an error value or panics: its message's arguments are
/// evaluated only on a path that fails ([`Expr::Failing`]). `assert!`'s condition and
/// `assert_eq!`'s operands are not its message.
fn builds_failure(name: &str) -> bool {
    matches!(
        name,
        "panic"
            | "unreachable"
            | "todo"
            | "unimplemented"
            | "assert"
            | "debug_assert"
            | "assert_eq"
            | "assert_ne"
            | "debug_assert_eq"
            | "debug_assert_ne"
            | "anyhow"
            | "bail"
            | "ensure"
            | "format_err"
            | "eyre"
    )
}

/// A format string's placeholder: which argument, with which trait, where in the string
/// (byte offsets of `{` and past `}` in the literal's text).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Placeholder {
    arg: ArgRef,
    how: Option<FmtTrait>,
    at: (usize, usize),
}

/// The argument a placeholder shows.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ArgRef {
    Index(usize),
    Name(String),
}

impl Lower<'_> {
    /// The lowering of formatting macro `name!(tokens)`; `None` when `name` is not one
    /// or its body does not read as one (the caller then lowers it as any macro).
    pub(super) fn fmt_macro(&mut self, name: &str, tokens: &TokenStream) -> Option<Expr> {
        let lead = lead(name)?;
        let mut pieces = split_commas(tokens.clone()).into_iter().peekable();
        let mut kids = Vec::new();
        match lead {
            Lead::Nothing => {}
            Lead::One => kids.push(self.piece_expr(&pieces.next()?)?),
            Lead::DebugPair | Lead::AllDebug => {
                let n = if lead == Lead::DebugPair {
                    2
                } else {
                    usize::MAX
                };
                for piece in pieces.by_ref().take(n) {
                    let e = syn::parse2::<syn::Expr>(piece).ok()?;
                    kids.push(self.fmt_call(FmtTrait::Debug, &e, None));
                }
            }
            Lead::Fields { level } => {
                if level {
                    kids.push(self.piece_expr(&pieces.next()?)?);
                }
                while let Some(piece) = pieces.next_if(|p| !is_str_lit(p)) {
                    kids.push(self.field(piece)?);
                }
            }
        }
        if let Some(fmt) = pieces.next() {
            let rest: Vec<TokenStream> = pieces.collect();
            match builds_failure(name) {
                true => {
                    let mut args = Vec::new();
                    self.format_args(&fmt, &rest, &mut args)?;
                    let name = name.to_owned();
                    kids.push(Expr::Failing { name, args });
                }
                false => self.format_args(&fmt, &rest, &mut kids)?,
            }
        }
        Some(Expr::Other(kids))
    }

    /// A piece lowered as the expression it is.
    fn piece_expr(&mut self, piece: &TokenStream) -> Option<Expr> {
        let e = syn::parse2::<syn::Expr>(piece.clone()).ok()?;
        Some(self.expr(&e))
    }

    /// `<T as how>::fmt(&e)`, at `at` (else at `e`).
    fn fmt_call(&mut self, how: FmtTrait, e: &syn::Expr, at: Option<SpanIr>) -> Expr {
        let span = at.unwrap_or_else(|| self.sp(e.span()));
        Expr::CallPath {
            path: how.path(),
            args: vec![Expr::Ref(Box::new(self.expr(e)))],
            span,
        }
    }

    /// A `tracing`/`log` piece before the format string: metadata (`target: ..`), a field
    /// shown with `Debug` or `Display` (`?v`, `%v`, `k = ?v`, `k.j = %v`), or a value.
    fn field(&mut self, piece: TokenStream) -> Option<Expr> {
        let toks: Vec<TokenTree> = piece.into_iter().collect();
        let value = match toks.as_slice() {
            // `target: "x"`, `parent: span`, `name: "n"`.
            [TokenTree::Ident(_), TokenTree::Punct(p), rest @ ..]
                if p.as_char() == ':' && p.spacing() == Spacing::Alone =>
            {
                rest
            }
            _ => match field_value(&toks) {
                Some(at) => &toks[at..],
                None => &toks[..],
            },
        };
        let (how, value) = match value.first() {
            Some(TokenTree::Punct(p)) if p.as_char() == '?' => (Some(FmtTrait::Debug), &value[1..]),
            Some(TokenTree::Punct(p)) if p.as_char() == '%' => {
                (Some(FmtTrait::Display), &value[1..])
            }
            _ => (None, value),
        };
        let e = syn::parse2::<syn::Expr>(value.iter().cloned().collect()).ok()?;
        Some(match how {
            Some(how) => self.fmt_call(how, &e, None),
            None => self.expr(&e),
        })
    }

    /// The calls of format string `fmt` with arguments `rest` (`expr` or `name = expr`),
    /// pushed to `kids`; an argument no placeholder shows is lowered as written. `None`
    /// when `fmt` is not a string literal.
    fn format_args(
        &mut self,
        fmt: &TokenStream,
        rest: &[TokenStream],
        kids: &mut Vec<Expr>,
    ) -> Option<()> {
        let mut toks = fmt.clone().into_iter();
        let (Some(TokenTree::Literal(lit)), None) = (toks.next(), toks.next()) else {
            return None;
        };
        let text = lit.to_string();
        let placeholders = placeholders(&text)?;
        let mut args: Vec<(Option<String>, syn::Expr)> = Vec::new();
        for piece in rest {
            let e = syn::parse2::<syn::Expr>(piece.clone()).ok()?;
            args.push(match e {
                syn::Expr::Assign(a) => match &*a.left {
                    syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                        (p.path.get_ident().map(|i| i.to_string()), *a.right)
                    }
                    _ => (None, syn::Expr::Assign(a)),
                },
                e => (None, e),
            });
        }
        let lit_span = self.sp(lit.span());
        let mut shown = vec![false; args.len()];
        for p in placeholders {
            let found = match &p.arg {
                ArgRef::Index(i) => Some(*i).filter(|i| *i < args.len()),
                ArgRef::Name(n) => args.iter().position(|(name, _)| name.as_ref() == Some(n)),
            };
            let Some(how) = p.how else { continue };
            let at = self.inside(lit_span, p.at);
            match (found, &p.arg) {
                (Some(i), _) => {
                    shown[i] = true;
                    let e = args[i].1.clone();
                    kids.push(self.fmt_call(how, &e, Some(self.sp(e.span()))));
                }
                (None, ArgRef::Name(n)) => {
                    let ident = syn::parse_str::<syn::Expr>(n).ok()?;
                    kids.push(self.fmt_call(how, &ident, Some(at)));
                }
                (None, ArgRef::Index(_)) => {}
            }
        }
        for (_, e) in args
            .iter()
            .zip(&shown)
            .filter(|(_, s)| !**s)
            .map(|(a, _)| a)
        {
            kids.push(self.expr(e));
        }
        Some(())
    }

    /// The span of bytes `at` of a literal at `lit` (the literal's, in a macro expansion).
    fn inside(&self, lit: SpanIr, (lo, hi): (usize, usize)) -> SpanIr {
        if self.fixed.is_some() || lit.lo as usize + hi > lit.hi as usize {
            return lit;
        }
        SpanIr {
            lo: lit.lo + lo as u32,
            hi: lit.lo + hi as u32,
            ..lit
        }
    }
}

/// Where the value of a `k = v` field starts (`k`, `k.j` or `"k"`, then a lone `=`).
fn field_value(toks: &[TokenTree]) -> Option<usize> {
    let eq = toks.iter().position(
        |t| matches!(t, TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Alone),
    )?;
    let key = &toks[..eq];
    let is_key = |t: &TokenTree| match t {
        TokenTree::Ident(_) | TokenTree::Literal(_) => true,
        TokenTree::Punct(p) => p.as_char() == '.',
        TokenTree::Group(_) => false,
    };
    (!key.is_empty() && key.iter().all(is_key)).then_some(eq + 1)
}

/// Whether a piece is one string literal (a format string).
fn is_str_lit(piece: &TokenStream) -> bool {
    let mut toks = piece.clone().into_iter();
    match (toks.next(), toks.next()) {
        (Some(TokenTree::Literal(l)), None) => {
            let t = l.to_string();
            t.starts_with('"') || t.starts_with("r\"") || t.starts_with("r#")
        }
        _ => false,
    }
}

/// A macro body split at its top-level commas (a trailing comma gives no empty piece).
fn split_commas(ts: TokenStream) -> Vec<TokenStream> {
    let mut out: Vec<Vec<TokenTree>> = vec![Vec::new()];
    for tt in ts {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => out.push(Vec::new()),
            // `None`-delimited groups (from `macro_rules!` fragments) are kept whole.
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => {
                if let Some(last) = out.last_mut() {
                    last.push(tt.clone());
                }
            }
            _ => {
                if let Some(last) = out.last_mut() {
                    last.push(tt);
                }
            }
        }
    }
    if out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    out.into_iter().map(|p| p.into_iter().collect()).collect()
}

/// The placeholders of the string literal whose token text is `lit` (`"..."`, `r#"..."#`),
/// at their offsets in that text; `None` when it is no string literal. Positional
/// placeholders are numbered as rustc numbers them (`{:.*}` takes one for the precision).
fn placeholders(lit: &str) -> Option<Vec<Placeholder>> {
    let (raw, start) = match lit.strip_prefix('r') {
        Some(rest) => (true, 1 + rest.find('"')? + 1),
        None if lit.starts_with('"') => (false, 1),
        None => return None,
    };
    let bytes = lit.as_bytes();
    let end = lit.rfind('"').filter(|&e| e >= start)?;
    let (mut out, mut next, mut i) = (Vec::new(), 0usize, start);
    while i < end {
        match bytes[i] {
            b'\\' if !raw => i += escape_len(&lit[i..end]),
            b'{' if bytes.get(i + 1) == Some(&b'{') => i += 2,
            b'}' => {
                i += if bytes.get(i + 1) == Some(&b'}') {
                    2
                } else {
                    1
                }
            }
            b'{' => {
                let close = i + lit[i..end].find('}')?;
                let inner = &lit[i + 1..close];
                let (arg, spec) = inner.split_once(':').unwrap_or((inner, ""));
                let arg = arg.trim();
                if spec.contains(".*") {
                    next += 1;
                }
                let arg = if arg.is_empty() {
                    next += 1;
                    ArgRef::Index(next - 1)
                } else if let Ok(n) = arg.parse() {
                    ArgRef::Index(n)
                } else {
                    ArgRef::Name(arg.trim_start_matches("r#").to_owned())
                };
                let how = spec_trait(spec);
                out.push(Placeholder {
                    arg,
                    how,
                    at: (i, close + 1),
                });
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    Some(out)
}

/// The length of the escape at the start of `s` (`\n`, `\"`, `\u{..}`, `\` + newline).
fn escape_len(s: &str) -> usize {
    match s.as_bytes().get(1) {
        Some(b'u') => s.find('}').map_or(2, |c| c + 1),
        Some(_) => 1 + s[1..].chars().next().map_or(1, char::len_utf8),
        None => 1,
    }
}

/// The trait a format spec (after `:`) shows its argument with: `Debug` for `?`, `x?`,
/// `X?`; `Display` for no type; `None` for the other traits (`x`, `e`, `p`, ...).
fn spec_trait(spec: &str) -> Option<FmtTrait> {
    if spec.ends_with('?') {
        return Some(FmtTrait::Debug);
    }
    // The type is the trailing letters (`x`, `e`, `X`): a fill letter comes before an
    // alignment (`{:x<8}`), a named width or precision ends with `$`.
    match spec.ends_with(|c: char| c.is_ascii_alphabetic()) {
        true => None,
        false => Some(FmtTrait::Display),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(lit: &str) -> Vec<String> {
        placeholders(lit)
            .unwrap()
            .iter()
            .map(|p| {
                let arg = match &p.arg {
                    ArgRef::Index(i) => i.to_string(),
                    ArgRef::Name(n) => n.clone(),
                };
                format!("{arg}:{:?}@{}", p.how, &lit[p.at.0..p.at.1])
            })
            .collect()
    }

    #[test]
    fn placeholders_and_their_traits() {
        assert_eq!(
            shown(r#""a {} b {:?} {x} {y:?} {0} {1:#?} {{z}} {:>8.3} {:x} {:e} {w:width$}""#),
            [
                "0:Some(Display)@{}",
                "1:Some(Debug)@{:?}",
                "x:Some(Display)@{x}",
                "y:Some(Debug)@{y:?}",
                "0:Some(Display)@{0}",
                "1:Some(Debug)@{1:#?}",
                "2:Some(Display)@{:>8.3}",
                "3:None@{:x}",
                "4:None@{:e}",
                "w:Some(Display)@{w:width$}",
            ]
        );
    }

    #[test]
    fn escapes_raw_strings_and_star_precision() {
        assert_eq!(shown(r#""\u{7b} \" {t:?}""#), ["t:Some(Debug)@{t:?}"]);
        assert_eq!(shown(r##"r#"a "b" {t}"#"##), ["t:Some(Display)@{t}"]);
        // `{:.*}` takes the precision, then the value.
        assert_eq!(
            shown(r#""{:.*} {}""#),
            ["1:Some(Display)@{:.*}", "2:Some(Display)@{}"]
        );
        assert_eq!(
            shown(r#""{:x?} {:08.2} {:08.2e} {:x<8}""#),
            [
                "0:Some(Debug)@{:x?}",
                "1:Some(Display)@{:08.2}",
                "2:None@{:08.2e}",
                "3:Some(Display)@{:x<8}"
            ]
        );
        assert_eq!(placeholders("b\"x\""), None);
    }

    #[test]
    fn pieces_split_at_top_level_commas() {
        let ts: TokenStream = "f, \"{} {}\", g(a, b), [1, 2],".parse().unwrap();
        let pieces: Vec<String> = split_commas(ts).iter().map(|p| p.to_string()).collect();
        assert_eq!(pieces, ["f", "\"{} {}\"", "g (a , b)", "[1 , 2]"]);
    }
}
