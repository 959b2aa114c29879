//! A cheap scan for inputs syn would recurse too deeply on, run before syn.
//!
//! Two measures, both lexical: delimiter nesting, and the number of tokens in one
//! *segment* (the text between `;`, `,`, `{` and `}`). syn recurses once per level of
//! `( [ {`, and builds one level of AST (parsed, and later dropped, recursively) per
//! operator of a chain without delimiters: `a.b().c()..`, `1 + 1 + ..`, `return return ..`,
//! `Option<Option<..>>`, `&&&&x`, `move || move || ..`. Real code stays far below both
//! limits; a file above them is reported as a `parse-error` and skipped. Strings, chars
//! and comments are skipped approximately: a false alarm needs an extreme file anyway.

/// Deepest delimiter nesting accepted.
pub(super) const MAX_NESTING: usize = 200;
/// Most tokens accepted between two `;`, `,`, `{` or `}`.
pub(super) const MAX_SEGMENT_TOKENS: usize = 4000;

/// Why a file was rejected, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TooDeep {
    Nesting(usize),
    Segment(usize),
}

/// The first place where the file exceeds a limit, if it does.
pub(super) fn too_deep(text: &str) -> Option<TooDeep> {
    let b = text.as_bytes();
    // Tokens per open delimiter level; a closed group counts as one token of its parent.
    let mut counts: Vec<usize> = vec![0];
    let (mut i, mut bars) = (0, 0usize);
    while i < b.len() {
        // Whitespace, and the bytes of a word after its first, change no count: skipped
        // in a tight loop (most of a file's bytes; the same result as the loop below).
        i = skip_quiet(b, i);
        let Some(&c) = b.get(i) else { break };
        let start = i;
        match c {
            b'(' | b'[' | b'{' => counts.push(0),
            b')' | b']' | b'}' if counts.len() > 1 => {
                counts.pop();
            }
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            b'"' => i = skip_string(b, i),
            b'\'' if is_char_literal(b, i) => i = skip_char(b, i),
            _ => {}
        }
        if counts.len() > MAX_NESTING + 1 {
            return Some(TooDeep::Nesting(start));
        }
        let n = counts.last_mut().map_or(0, |n| {
            *n = match c {
                b';' | b'{' | b'}' => 0,
                // A `,` separates list items, except between a closure's `|..|`.
                b',' if bars % 2 == 0 => 0,
                b' ' | b'\t' | b'\n' | b'\r' => *n,
                c if is_word(c) && start > 0 && is_word(b[start - 1]) => *n,
                _ => *n + 1,
            };
            *n
        });
        bars = match c {
            b'|' => bars + 1,
            b';' | b'{' | b'}' => 0,
            _ => bars,
        };
        if n > MAX_SEGMENT_TOKENS {
            return Some(TooDeep::Segment(start));
        }
        i += 1;
    }
    None
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// Past the bytes from `i` on that the scan would count nothing for: whitespace, and a
/// word byte right after a word byte.
fn skip_quiet(b: &[u8], mut i: usize) -> usize {
    let mut after_word = i > 0 && is_word(b[i - 1]);
    while let Some(&c) = b.get(i) {
        match CLASS[c as usize] {
            SPACE => after_word = false,
            WORD if after_word => {}
            _ => break,
        }
        i += 1;
    }
    i
}

const OTHER: u8 = 0;
const SPACE: u8 = 1;
const WORD: u8 = 2;

/// Each byte's class for [`skip_quiet`] (the same as `is_word` and the whitespace arm).
static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            SPACE
        } else if b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 {
            WORD
        } else {
            OTHER
        };
        c += 1;
    }
    t
};

/// At a comment, string or char literal starting at `i`, the index of its last byte; else
/// `i`.
pub(super) fn skip_literal_or_comment(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'/' if b.get(i + 1) == Some(&b'/') => skip_line(b, i),
        b'/' if b.get(i + 1) == Some(&b'*') => skip_block_comment(b, i),
        b'"' => skip_string(b, i),
        b'\'' if is_char_literal(b, i) => skip_char(b, i),
        _ => i,
    }
}

fn skip_line(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| i + p)
}

fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i + 1 < b.len() {
        if b[i] == b'/' && b[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i - 1;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// Skips `"..."` (also the body of raw strings: their `#`s are not delimiters).
fn skip_string(b: &[u8], mut i: usize) -> usize {
    let raw_hashes = raw_prefix_hashes(b, i);
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' if raw_hashes.is_none() => i += 2,
            b'"' => {
                let n = raw_hashes.unwrap_or(0);
                if b[i + 1..].iter().take(n).filter(|&&c| c == b'#').count() == n {
                    return i + n;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    b.len()
}

/// For `r##"`, the number of `#`s; `None` when the string is not raw.
fn raw_prefix_hashes(b: &[u8], quote: usize) -> Option<usize> {
    let mut j = quote;
    while j > 0 && b[j - 1] == b'#' {
        j -= 1;
    }
    (j > 0 && b[j - 1] == b'r').then_some(quote - j)
}

/// `'x'`, `'\n'`, `'é'` (a char of any UTF-8 length), as opposed to a lifetime `'a`.
fn is_char_literal(b: &[u8], i: usize) -> bool {
    let Some(&first) = b.get(i + 1) else {
        return false;
    };
    if first == b'\\' {
        return true;
    }
    let len = match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    b.get(i + 1 + len) == Some(&b'\'')
}

fn skip_char(b: &[u8], i: usize) -> usize {
    // After `'\` the escaped char may itself be a quote: search from past it.
    let from = if b.get(i + 1) == Some(&b'\\') {
        i + 3
    } else {
        i + 2
    };
    b.get(from..)
        .and_then(|rest| rest.iter().position(|&c| c == b'\''))
        .map_or(b.len(), |p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_deep_nesting_only() {
        assert_eq!(too_deep("fn f() { let s = \"((((\"; }"), None);
        let deep = format!("fn f() {{ {}{} }}", "(".repeat(500), ")".repeat(500));
        assert!(matches!(too_deep(&deep), Some(TooDeep::Nesting(_))));
        let chain = format!("fn f() {{ x{} }}", ".b()".repeat(2000));
        assert!(matches!(too_deep(&chain), Some(TooDeep::Segment(_))));
        let args = format!("fn f() {{ g({}) }}", "1, ".repeat(20000));
        assert_eq!(too_deep(&args), None);
        let in_comment = format!("// {}\nfn f() {{}}", "(".repeat(500));
        assert_eq!(too_deep(&in_comment), None);
        assert_eq!(too_deep("fn f<'a>(x: &'a str) -> char { '(' }"), None);
        assert_eq!(too_deep("fn f() -> char { let _ = '\\''; 'é' }"), None);
        let chars = format!("fn f() {{ {}1{} }}", "'é'(".repeat(500), ")".repeat(500));
        assert!(matches!(too_deep(&chars), Some(TooDeep::Nesting(_))));
        let closures = format!("fn f() {{ {}a }}", "|a: u8, b: u8| ".repeat(2000));
        assert!(matches!(too_deep(&closures), Some(TooDeep::Segment(_))));
        let fn_types = format!("type T = {}u8;", "fn(u8, u8) -> ".repeat(2000));
        assert!(matches!(too_deep(&fn_types), Some(TooDeep::Segment(_))));
    }
}
