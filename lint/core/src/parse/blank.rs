//! Lazy fn bodies found in the text, before it is lexed: most of a file's tokens are in fn
//! bodies, and lexing them is a third of lowering a file, so the eligible bodies (see
//! [`super::lazy`]) are cut out of the text (every byte between the braces) and
//! proc-macro2 lexes what is left: each such body lexes as an empty `{}` group, as if its
//! tokens had been removed after lexing. (Blanking them to spaces kept the offsets, but
//! proc-macro2 skips whitespace a char at a time: 4.1 of candle's 7.2 MB were such
//! spaces.) [`Cuts`] maps the offsets of the text parsed back to the file's.
//!
//! The scanner reads Rust's lexical grammar as proc-macro2 does, as far as the decision
//! needs: comments (doc comments are attributes), string, raw string, byte, C string and
//! char literals, lifetimes, raw identifiers, numbers, delimiters, and punctuation with its
//! spacing. Which group is a fn's body follows the item-level walk of the token pre-pass it
//! replaced: a `fn` (or `impl`, `trait`, `mod`) first among an item's identifiers decides
//! how its brace group is read. Whatever it cannot read (an unterminated literal or
//! comment, unbalanced delimiters, a character Rust has no token for) blanks nothing: the
//! caller parses the text as it is, eagerly, and reports the error as it always did.

mod body;

use super::lazy::{Cuts, Recorded};
use std::collections::HashMap;

/// A coarse token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// An identifier or keyword, by its text's byte range (`r#x` included).
    Ident(usize, usize),
    Punct {
        ch: u8,
        joint: bool,
    },
    Open(u8),
    Close(u8),
    Literal,
    /// A lifetime or label (`'a`, `'static`).
    Lifetime,
    /// A doc comment: an attribute.
    Doc,
}

/// The text with the contents of its eligible fn bodies cut out (each body's braces kept),
/// those bodies' byte ranges in `text` (by start) with the macros they invoke, and where
/// the cuts are; `None` when the scanner cannot read the text.
pub fn blank(text: &str) -> Option<(String, HashMap<u32, Recorded>, Cuts)> {
    let mut s = Scanner {
        text,
        b: text.as_bytes(),
        i: 0,
        toks: Vec::new(),
        stack: Vec::new(),
    };
    let mut found = Vec::new();
    s.items(&mut found, None)?;
    let (mut out, mut at) = (String::with_capacity(text.len()), 0);
    let mut cuts = Vec::with_capacity(found.len());
    let mut by_lo = HashMap::with_capacity(found.len());
    // The bodies are found in the text's order, none inside another; each is cut between
    // its ASCII braces, so every piece kept is whole chars.
    for (lo, hi, macros, uses) in found {
        out.push_str(text.get(at..lo + 1)?);
        at = hi - 1;
        cuts.push((out.len() as u32, (at - out.len()) as u32));
        let uses = uses
            .into_iter()
            .map(|(a, b)| Some((a as u32, text.get(a..b)?.to_owned())));
        by_lo.insert(
            lo as u32,
            Recorded {
                hi: hi as u32,
                macros,
                text: crate::source::text_hash(text.get(lo..hi)?),
                uses: uses.collect::<Option<_>>()?,
            },
        );
    }
    out.push_str(text.get(at..)?);
    Some((out, by_lo, Cuts(cuts)))
}

/// What decides how the brace group of an item is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Other,
    Fn,
    /// `impl`, `trait`, `mod`: its brace group holds items.
    Container,
}

/// A body found: its `{`, one past its `}`, the macros it invokes, the byte ranges of the
/// `use` declarations among its top-level statements.
type Found = (usize, usize, Vec<String>, Vec<(usize, usize)>);

struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    /// The tokens of the body being read, and the closers of the groups open in it: one
    /// allocation each for the file, not one per body and group.
    toks: Vec<(Tok, usize)>,
    stack: Vec<u8>,
}

impl Scanner<'_> {
    /// The items up to the close of the group opened by `close`'s delimiter (the end of the
    /// text for `None`), recording the eligible bodies.
    fn items(&mut self, found: &mut Vec<Found>, close: Option<u8>) -> Option<()> {
        let (mut kind, mut decided) = (ItemKind::Other, false);
        loop {
            let Some((tok, at)) = self.next()? else {
                return close.is_none().then_some(());
            };
            match tok {
                Tok::Ident(a, b) if !decided => match &self.text[a..b] {
                    "fn" => (kind, decided) = (ItemKind::Fn, true),
                    "impl" | "trait" | "mod" => (kind, decided) = (ItemKind::Container, true),
                    _ => {}
                },
                Tok::Punct { ch: b';', .. } => (kind, decided) = (ItemKind::Other, false),
                Tok::Open(b'{') => {
                    match kind {
                        ItemKind::Fn => self.body(at, found)?,
                        ItemKind::Container => self.items(found, Some(b'}'))?,
                        ItemKind::Other => self.group(b'}', None)?,
                    }
                    (kind, decided) = (ItemKind::Other, false);
                }
                Tok::Open(open) => self.group(closer(open), None)?,
                Tok::Close(c) => return (Some(c) == close).then_some(()),
                _ => {}
            }
        }
    }

    /// A fn body whose `{` is at `lo`: recorded when it has tokens and is eligible.
    fn body(&mut self, lo: usize, found: &mut Vec<Found>) -> Option<()> {
        let mut toks = std::mem::take(&mut self.toks);
        toks.clear();
        let read = self.group(b'}', Some(&mut toks));
        let (mut macros, mut uses) = (Vec::new(), Vec::new());
        if read.is_some() && !toks.is_empty() && self.eligible(&toks, &mut macros, &mut uses) {
            macros.sort();
            macros.dedup();
            found.push((lo, self.i, macros, uses));
        }
        self.toks = toks;
        read
    }

    /// The tokens up to the `close` of a group just opened (pushed to `toks` when given,
    /// nested groups' included); `None` when the delimiters do not match.
    fn group(&mut self, close: u8, toks: Option<&mut Vec<(Tok, usize)>>) -> Option<()> {
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        stack.push(close);
        let read = self.group_with(&mut stack, toks);
        self.stack = stack;
        read
    }

    fn group_with(
        &mut self,
        stack: &mut Vec<u8>,
        mut toks: Option<&mut Vec<(Tok, usize)>>,
    ) -> Option<()> {
        while let Some(&want) = stack.last() {
            let (tok, at) = self.next()??;
            match tok {
                Tok::Open(open) => stack.push(closer(open)),
                Tok::Close(c) if c == want => {
                    stack.pop();
                    if stack.is_empty() {
                        return Some(());
                    }
                }
                Tok::Close(_) => return None,
                _ => {}
            }
            if let Some(toks) = toks.as_deref_mut() {
                toks.push((tok, at));
            }
        }
        Some(())
    }

    /// The next token and where it starts: `Some(None)` at the end of the text, `None`
    /// for what the scanner cannot read.
    fn next(&mut self) -> Option<Option<(Tok, usize)>> {
        if let Some(doc) = self.trivia()? {
            return Some(Some(doc));
        }
        let at = self.i;
        let Some(&c) = self.b.get(at) else {
            return Some(None);
        };
        let tok = match c {
            b'(' | b'[' | b'{' => {
                self.i += 1;
                Tok::Open(c)
            }
            b')' | b']' | b'}' => {
                self.i += 1;
                Tok::Close(c)
            }
            b'"' => self.string(at + 1)?,
            b'\'' => self.quote()?,
            b'0'..=b'9' => {
                self.i = self.word_end(at);
                Tok::Literal
            }
            _ if is_punct(c) => {
                self.i += 1;
                Tok::Punct {
                    ch: c,
                    joint: self.punct_follows(),
                }
            }
            _ => self.word_or_prefixed()?,
        };
        Some(Some((tok, at)))
    }

    /// Skips whitespace and comments; a doc comment is returned as a token.
    fn trivia(&mut self) -> Option<Option<(Tok, usize)>> {
        loop {
            match self.b.get(self.i) {
                None => return Some(None),
                Some(b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) => self.i += 1,
                Some(b'/') => match self.b.get(self.i + 1) {
                    Some(b'/') => {
                        if let Some(doc) = self.line_comment() {
                            return Some(Some(doc));
                        }
                    }
                    Some(b'*') => {
                        if let Some(doc) = self.block_comment()? {
                            return Some(Some(doc));
                        }
                    }
                    _ => return Some(None),
                },
                Some(&c) if c < 0x80 => return Some(None),
                Some(_) => {
                    let c = self.text[self.i..].chars().next()?;
                    if !is_whitespace(c) {
                        return Some(None);
                    }
                    self.i += c.len_utf8();
                }
            }
        }
    }

    /// A `//` comment at the cursor, skipped: a doc comment (`///`, `//!`) is a token.
    fn line_comment(&mut self) -> Option<(Tok, usize)> {
        let (at, rest) = (self.i, &self.b[self.i..]);
        let doc =
            (rest.starts_with(b"///") && !rest.starts_with(b"////")) || rest.starts_with(b"//!");
        self.i += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
        doc.then_some((Tok::Doc, at))
    }

    /// A `/*` comment at the cursor, skipped (`None` when unterminated): a doc comment
    /// (`/**` but `/**/` and `/***`, `/*!`) is a token.
    fn block_comment(&mut self) -> Option<Option<(Tok, usize)>> {
        let (at, rest) = (self.i, &self.b[self.i..]);
        let doc =
            (rest.starts_with(b"/**") && !rest.starts_with(b"/***") && !rest.starts_with(b"/**/"))
                || rest.starts_with(b"/*!");
        self.i += block_comment_len(rest)?;
        Some(doc.then_some((Tok::Doc, at)))
    }

    /// Whether the char at the cursor is punctuation that joins the one before (as
    /// proc-macro2 sets `Spacing::Joint`): a punct char that does not start a comment.
    fn punct_follows(&self) -> bool {
        let rest = &self.b[self.i..];
        match rest.first() {
            Some(b'/') => !(rest.starts_with(b"//") || rest.starts_with(b"/*")),
            Some(&c) => is_punct(c) || c == b'\'',
            None => false,
        }
    }

    /// A string's body from `from` (past its `"`) through its closing `"`, and a suffix.
    fn string(&mut self, from: usize) -> Option<Tok> {
        let mut i = from;
        loop {
            match *self.b.get(i)? {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        self.i = self.word_end(i + 1);
        Some(Tok::Literal)
    }

    /// A raw string whose `#`s start at `from`: `None` when no `"` follows them.
    fn raw_string(&mut self, from: usize) -> Option<Option<Tok>> {
        let hashes = self.b[from..].iter().take_while(|&&c| c == b'#').count();
        if self.b.get(from + hashes) != Some(&b'"') {
            return Some(None);
        }
        let mut close = vec![b'"'];
        close.extend(std::iter::repeat_n(b'#', hashes));
        let body = from + hashes + 1;
        let end = find(&self.b[body..], &close)?;
        self.i = self.word_end(body + end + close.len());
        Some(Some(Tok::Literal))
    }

    /// A char literal or a lifetime at the cursor (a `'`).
    fn quote(&mut self) -> Option<Tok> {
        let from = self.i + 1;
        let rest = &self.text[from..];
        let first = rest.chars().next()?;
        if first == '\\' {
            // An escape: the escaped char (a quote among them), then up to the closing quote.
            let after = from + 1 + rest[1..].chars().next()?.len_utf8();
            let close = self.b[after..].iter().position(|&c| c == b'\'')?;
            self.i = self.word_end(after + close + 1);
            return Some(Tok::Literal);
        }
        if self.b.get(from + first.len_utf8()) == Some(&b'\'') {
            self.i = self.word_end(from + first.len_utf8() + 1);
            return Some(Tok::Literal);
        }
        let start = if rest.starts_with("r#") {
            from + 2
        } else {
            from
        };
        self.i = self.word_end(start);
        (self.i > start).then_some(Tok::Lifetime)
    }

    /// An identifier, or a literal with a prefix (`r"`, `r#"`, `b"`, `b'`, `br"`, `c"`,
    /// `cr"`), or a raw identifier (`r#x`).
    fn word_or_prefixed(&mut self) -> Option<Tok> {
        let at = self.i;
        let b = self.b;
        let next = |k: usize| b.get(at + k).copied();
        match (b[at], next(1), next(2)) {
            (b'b' | b'c', Some(b'"'), _) => return self.string(at + 2),
            (b'b', Some(b'\''), _) => {
                self.i = at + 1;
                return self.quote().filter(|t| *t == Tok::Literal);
            }
            (b'b' | b'c', Some(b'r'), Some(b'"' | b'#')) => {
                if let Some(t) = self.raw_string(at + 2)? {
                    return Some(t);
                }
            }
            (b'r', Some(b'"' | b'#'), _) => {
                if let Some(t) = self.raw_string(at + 1)? {
                    return Some(t);
                }
                if next(1) == Some(b'#') {
                    let end = self.word_end(at + 2);
                    self.i = end;
                    return (end > at + 2).then_some(Tok::Ident(at, end));
                }
            }
            _ => {}
        }
        let end = self.word_end(at);
        self.i = end;
        (end > at).then_some(Tok::Ident(at, end))
    }

    /// One past the identifier characters from `i` (ASCII alphanumerics, `_`, and any
    /// other char that is not whitespace).
    fn word_end(&self, mut i: usize) -> usize {
        while let Some(&c) = self.b.get(i) {
            if c.is_ascii_alphanumeric() || c == b'_' {
                i += 1;
            } else if c < 0x80 {
                break;
            } else {
                match self.text[i..].chars().next() {
                    Some(ch) if !is_whitespace(ch) => i += ch.len_utf8(),
                    _ => break,
                }
            }
        }
        i
    }
}

/// Whitespace as proc-macro2 skips it.
fn is_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{200e}' || c == '\u{200f}'
}

/// The punctuation proc-macro2 lexes as `Punct` (but `'`, read as a quote).
fn is_punct(c: u8) -> bool {
    PUNCT[c as usize]
}

/// [`is_punct`] by byte: a table, since a `contains` on the 21 bytes was a tenth of the
/// scan (a `memchr` call per token).
static PUNCT: [bool; 256] = {
    let mut t = [false; 256];
    let chars = b"~!@#$%^&*-=+|;:,<.>/?";
    let mut i = 0;
    while i < chars.len() {
        t[chars[i] as usize] = true;
        i += 1;
    }
    t
};

fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// The length of the (nested) block comment `b` starts with; `None` when unterminated.
fn block_comment_len(b: &[u8]) -> Option<usize> {
    let (mut depth, mut i) = (0usize, 0);
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
