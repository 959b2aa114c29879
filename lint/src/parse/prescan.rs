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
pub const MAX_NESTING: usize = 200;
/// Most tokens accepted between two `;`, `,`, `{` or `}`.
pub const MAX_SEGMENT_TOKENS: usize = 4000;

/// Why a file was rejected, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TooDeep {
    Nesting(usize),
    Segment(usize),
}

/// The first place where the file exceeds a limit, if it does.
pub fn too_deep(text: &str) -> Option<TooDeep> {
    let b = text.as_bytes();
    let (mut i, mut depth, mut tokens) = (0, 0usize, 0usize);
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'/' if b.get(i + 1) == Some(&b'/') => i = skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => i = skip_block_comment(b, i),
            b'"' => i = skip_string(b, i),
            b'\'' if is_char_literal(b, i) => i = skip_char(b, i),
            _ => {}
        }
        if depth > MAX_NESTING {
            return Some(TooDeep::Nesting(start));
        }
        tokens = match c {
            b';' | b',' | b'{' | b'}' => 0,
            b' ' | b'\t' | b'\n' | b'\r' => tokens,
            c if is_word(c) && start > 0 && is_word(b[start - 1]) => tokens,
            _ => tokens + 1,
        };
        if tokens > MAX_SEGMENT_TOKENS {
            return Some(TooDeep::Segment(start));
        }
        i += 1;
    }
    None
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
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

fn is_char_literal(b: &[u8], i: usize) -> bool {
    matches!(
        (b.get(i + 1), b.get(i + 2)),
        (Some(b'\\'), _) | (Some(_), Some(b'\''))
    )
}

fn skip_char(b: &[u8], i: usize) -> usize {
    b[i + 1..]
        .iter()
        .skip(1)
        .position(|&c| c == b'\'')
        .map_or(b.len(), |p| i + 2 + p)
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
    }
}
