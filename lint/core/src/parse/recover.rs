//! Recovery for a file syn cannot parse whole: its items that parse are still analysed.
//!
//! The file is lexed; when it does not lex (an unclosed or stray delimiter, an unterminated
//! string), the error is located by [`delims`] (at the `(` that is never closed, where
//! proc-macro2 would point at the `}` that meets it, lines later) and the top-level item
//! around it is blanked (spaces of the same length, so that offsets stay file offsets), then
//! the file is lexed again. Its token trees are then cut at item ends (a `;` or a `{..}`
//! group at the top level, with a `;` right after one), each piece parsed alone (or with the
//! next one, when it does not parse alone: `impl X for Y<{ N }> {}`), and the pieces that
//! parse are lowered together, as one file. Each piece that does not parse, and each blanked
//! item, is a [`Skipped`]: its error and the text not analysed, in which the parse stage
//! looks for `#[no_sync]` fns that were therefore not checked.

use super::cache::Lowered;
use super::cfg::CfgCtx;
use super::ir::FileId;
use super::{FileJob, prescan};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use serde::{Deserialize, Serialize};

/// A part of a file that was not analysed: the syntax error (message and byte range) and
/// the byte range of the text skipped with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub message: String,
    pub error: (usize, usize),
    pub text: (usize, usize),
}

/// Most items blanked before a file that still does not lex is given up.
const MAX_BLANKED: usize = 16;

/// The items of `body` (the file's text from `offset` on) that parse, lowered, and what
/// was skipped.
pub(super) fn recover(
    job: &FileJob,
    id: FileId,
    body: &str,
    offset: usize,
    cfg: &CfgCtx,
) -> Lowered {
    let shift = |(lo, hi): (usize, usize)| (lo + offset, hi + offset);
    let (tokens, mut skipped) = lex_blanking(body);
    let Some(tokens) = tokens else {
        // Not lexable even with its broken items blanked: the whole file is skipped.
        let (message, error) = match skipped.first() {
            Some(s) => (s.message.clone(), s.error),
            None => ("cannot lex the file".to_owned(), (0, 0)),
        };
        let text = (0, body.len());
        let whole = Skipped {
            message,
            error,
            text,
        };
        let skipped = vec![whole].into_iter().map(|s| shifted(s, offset));
        return (Vec::new(), Vec::new(), skipped.collect());
    };
    let (items, errors) = parse_pieces(pieces(tokens));
    skipped.extend(errors);
    let file = syn::File {
        shebang: None,
        attrs: Vec::new(),
        items,
    };
    let (items, invalid, _) = super::lower_tree(job, id, &file, offset, cfg, None);
    let skipped = skipped.into_iter().map(|s| Skipped {
        error: shift(s.error),
        text: shift(s.text),
        message: s.message,
    });
    (items, invalid, skipped.collect())
}

fn shifted(s: Skipped, offset: usize) -> Skipped {
    Skipped {
        error: (s.error.0 + offset, s.error.1 + offset),
        text: (s.text.0 + offset, s.text.1 + offset),
        message: s.message,
    }
}

/// `body`'s tokens, with the items where it does not lex blanked (each a [`Skipped`]);
/// `None` when it still does not lex.
fn lex_blanking(body: &str) -> (Option<TokenStream>, Vec<Skipped>) {
    let mut text = std::borrow::Cow::Borrowed(body);
    let mut skipped = Vec::new();
    while skipped.len() < MAX_BLANKED {
        let e = match text.parse::<TokenStream>() {
            Ok(tokens) => return (Some(tokens), skipped),
            Err(e) => e,
        };
        let (message, error) = lex_error(&text, &e);
        let (lo, hi) = item_around(&text, error.0);
        let blank = blank_bytes(&text[lo..hi]);
        let changed = text[lo..hi] != blank;
        skipped.push(Skipped {
            message,
            error,
            text: (lo, hi),
        });
        if !changed {
            break;
        }
        // The same length in bytes: offsets stay the file's.
        text.to_mut().replace_range(lo..hi, &blank);
    }
    (None, skipped)
}

/// `text` with every byte but newlines made a space (the same length in bytes).
fn blank_bytes(text: &str) -> String {
    text.bytes()
        .map(|b| if b == b'\n' { '\n' } else { ' ' })
        .collect()
}

/// Why `text` does not lex, and where: a delimiter error where [`delims`] finds one, else
/// proc-macro2's error.
fn lex_error(text: &str, e: &proc_macro2::LexError) -> (String, (usize, usize)) {
    if let Some((message, at)) = delims(text) {
        return (message, (at, at + 1));
    }
    let r = e.span().byte_range();
    let lo = super::floor_char(text, r.start);
    let hi = super::floor_char(text, r.end.max(r.start));
    (format!("syntax error: {e}"), (lo, hi))
}

/// The first delimiter error of `text`: a closing delimiter that closes nothing (at it), or
/// an opening one that is never closed (at the opener, where rustc points: the innermost
/// open one when a wrong closer is met, the outermost when the file ends, `fn f( {`).
pub(super) fn delims(text: &str) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let mut open: Vec<(u8, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => open.push((b[i], i)),
            c @ (b')' | b']' | b'}') => match open.last() {
                Some(&(o, _)) if closer(o) == c => {
                    open.pop();
                }
                Some(&(o, at)) => {
                    let msg = format!(
                        "unclosed delimiter: this `{}` is never closed (a `{}` is met first)",
                        o as char, c as char
                    );
                    return Some((msg, at));
                }
                None => {
                    let msg = format!("unexpected closing delimiter `{}`", c as char);
                    return Some((msg, i));
                }
            },
            _ => i = prescan::skip_literal_or_comment(b, i),
        }
        i += 1;
    }
    let (o, at) = *open.first()?;
    let msg = format!(
        "unclosed delimiter: this `{}` is never closed (the file ends first)",
        o as char
    );
    Some((msg, at))
}

fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// The byte range of the top-level item around `at`, by layout: from the nearest line at
/// or above `at` that starts an item at column 0 (with the attributes and doc comments on
/// the lines right above it) to the next line below that does.
fn item_around(text: &str, at: usize) -> (usize, usize) {
    let at = super::floor_char(text, at);
    let starts = line_starts(text);
    let line = starts.partition_point(|&s| s <= at).saturating_sub(1);
    let begins = |l: usize| starts_item(&text[starts[l]..]);
    let mut first = (0..=line).rev().find(|&l| begins(l)).unwrap_or(0);
    while first > 0 && is_attribute_line(&text[starts[first - 1]..]) {
        first -= 1;
    }
    let end = (line + 1..starts.len())
        .find(|&l| begins(l) || is_attribute_line(&text[starts[l]..]))
        .map_or(text.len(), |l| starts[l]);
    (starts[first], end)
}

fn line_starts(text: &str) -> Vec<usize> {
    let newlines = text.match_indices('\n').map(|(i, _)| i + 1);
    std::iter::once(0)
        .chain(newlines.filter(|&i| i < text.len()))
        .collect()
}

/// A line that starts an item at column 0: a word, not a closing delimiter, comment or
/// attribute.
fn starts_item(line: &str) -> bool {
    line.bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
}

/// An outer attribute or doc comment at column 0 (it belongs to the item below it).
fn is_attribute_line(line: &str) -> bool {
    line.starts_with("#[") || (line.starts_with("///") && !line.starts_with("////"))
}

/// The top-level token trees cut at item ends: after a `;`, and after a `{..}` group (with
/// the `;` that follows one, `const X: T = { .. };`).
fn pieces(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut out = Vec::new();
    let mut piece = Vec::new();
    let mut it = tokens.into_iter().peekable();
    while let Some(tt) = it.next() {
        let ends = match &tt {
            TokenTree::Punct(p) => p.as_char() == ';',
            TokenTree::Group(g) => g.delimiter() == Delimiter::Brace,
            _ => false,
        };
        let brace = matches!(&tt, TokenTree::Group(_));
        piece.push(tt);
        if ends {
            if brace && matches!(it.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
                piece.extend(it.next());
            }
            out.push(std::mem::take(&mut piece));
        }
    }
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}

/// Each piece parsed as items (alone, else with the next piece); the items of those that
/// parse, and a [`Skipped`] for each that does not.
fn parse_pieces(pieces: Vec<Vec<TokenTree>>) -> (Vec<syn::Item>, Vec<Skipped>) {
    let parse = |trees: &[TokenTree]| syn::parse2::<syn::File>(trees.iter().cloned().collect());
    let (mut items, mut skipped) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < pieces.len() {
        match parse(&pieces[i]) {
            Ok(file) => items.extend(file.items),
            Err(e) => {
                let joined = pieces
                    .get(i + 1)
                    .map(|next| [&pieces[i][..], next].concat());
                match joined.as_deref().map(parse) {
                    Some(Ok(file)) => {
                        items.extend(file.items);
                        i += 1;
                    }
                    _ => skipped.push(skipped_piece(&pieces[i], &e)),
                }
            }
        }
        i += 1;
    }
    (items, skipped)
}

fn skipped_piece(piece: &[TokenTree], e: &syn::Error) -> Skipped {
    let range = |tt: Option<&TokenTree>| tt.map(|t| t.span().byte_range());
    let lo = range(piece.first()).map_or(0, |r| r.start);
    let hi = range(piece.last()).map_or(lo, |r| r.end);
    let r = e.span().byte_range();
    // An error at the end of the piece's tokens ("unexpected end of input") has no span of
    // its own: it is the piece's last token.
    let error = if r.end == 0 && lo > 0 {
        (hi.saturating_sub(1), hi)
    } else {
        (r.start, r.end.max(r.start))
    };
    Skipped {
        message: format!("syntax error: {e}"),
        error,
        text: (lo, hi),
    }
}

/// The byte range of the `no_sync` of each `#[no_sync..]` (also `#[nosync::no_sync..]`)
/// in `text`.
pub(super) fn no_sync_attributes(text: &str) -> Vec<(usize, usize)> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let found = text.match_indices("no_sync").filter(|&(i, w)| {
        let next = text[i + w.len()..].chars().next();
        if next.is_some_and(word) {
            return false;
        }
        let mut before = text[..i].trim_end();
        if let Some(path) = before.strip_suffix("::")
            && let Some(rest) = path.trim_end().strip_suffix("nosync")
        {
            let rest = rest.trim_end();
            before = rest.strip_suffix("::").unwrap_or(rest).trim_end();
        }
        before
            .strip_suffix('[')
            .is_some_and(|b| b.trim_end().ends_with('#'))
    });
    found.map(|(i, w)| (i, i + w.len())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiter_errors_point_at_the_delimiter() {
        let at = |text: &str| delims(text).map(|(_, at)| at);
        // A `(` met by a `}`: the `(`, not the `}` two lines later.
        let text = "fn f() {\n    let x = g(1, 2;\n    x\n}\n";
        assert_eq!(at(text), text.find("g(").map(|i| i + 1));
        // The file ends with `(` and `{` open: the outer `(`.
        assert_eq!(at("fn f( {"), Some(4));
        assert_eq!(at("fn f() {}\n}"), Some(10));
        // Delimiters in strings, chars and comments are not delimiters.
        assert_eq!(
            at("fn f() { \"(\"; '('; b'{'; r#\"}\"#; } // (\n/* { */"),
            None
        );
        assert_eq!(at("fn f<'a>(x: &'a str) {}"), None);
    }

    #[test]
    fn the_item_around_an_error_is_its_lines_with_its_attributes() {
        let text = "fn a() {}\n/// doc\n#[no_sync]\nfn b() {\n    g(;\n}\nfn c() {}\n";
        let (lo, hi) = item_around(text, text.find("g(").unwrap());
        assert_eq!(&text[lo..hi], "/// doc\n#[no_sync]\nfn b() {\n    g(;\n}\n");
    }

    #[test]
    fn no_sync_attributes_are_found_in_their_spellings() {
        let text = "#[no_sync] fn a() {}\n# [ nosync :: no_sync(capture_safe) ] fn b() {}\n\
                    #[::nosync::no_sync]\nfn c() {}\n#[allow_no_sync] #[no_sync_x] fn d() { no_sync(); }\n";
        let found: Vec<&str> = (no_sync_attributes(text).into_iter())
            .map(|(lo, hi)| &text[lo..hi])
            .collect();
        assert_eq!(found, ["no_sync"; 3]);
    }

    #[test]
    fn pieces_end_at_items_and_rejoin_when_alone_they_do_not_parse() {
        let tokens: TokenStream = "const C: u8 = { 1 };\nstruct S { a: u8 b: u8 }\n\
                                   impl X for Y<{ 1 }> {}\nfn f() {}"
            .parse()
            .unwrap();
        let (items, skipped) = parse_pieces(pieces(tokens));
        assert_eq!(items.len(), 3, "{items:?}");
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].message, "syntax error: expected `,`");
    }
}
