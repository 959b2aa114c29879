//! One `macro_rules!` invocation: the first rule whose matcher takes the input, and its
//! body transcribed with the captures.
//!
//! Matchers: literal tokens and delimited groups, fragments (`ident`, `literal`,
//! `lifetime`, `tt`, `block` as what they are; `ty`, `expr`, `path`, `pat`, `vis`, ...
//! greedily up to the matcher's next token, never inside a closure's `|params|` or `<..>`),
//! an `expr` of several tokens transcribed in parentheses (one expression, as in rustc), repetitions `$( .. ) sep? op` nested to any
//! depth (bounded). Transcribers: fragments, repetitions (driven by the variables they
//! use, at any depth) and `$crate`.

use crate::parse::lower_macro::split_rules;
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use std::collections::HashMap;
use std::str::FromStr;

/// A definition's rules, tokenized once: (matcher, body) each.
pub(super) type Rules = Vec<(Group, Group)>;

/// The rules of a definition's text; `None` when it is not `(..) => {..};` ...
pub(super) fn parse_rules(rules: &str) -> Option<Rules> {
    split_rules(TokenStream::from_str(rules).ok()?)
}

/// Expands one invocation with the first matching rule: the text, and the rule's index.
/// `krate` is what `$crate` becomes.
pub(super) fn expand(rules: &Rules, input: &str, krate: &TokenStream) -> Option<(String, usize)> {
    let input: Vec<TokenTree> = TokenStream::from_str(input).ok()?.into_iter().collect();
    for (k, (matcher, body)) in rules.iter().enumerate() {
        if let Some(mut caps) = match_rule(&flat(matcher.stream()), &input) {
            caps.insert(
                "crate".to_owned(),
                Bind::One(krate.clone().into_iter().collect()),
            );
            return transcribe(body.stream(), &caps, 0).map(|ts| (ts.to_string(), k));
        }
    }
    None
}

fn flat(ts: TokenStream) -> Vec<TokenTree> {
    ts.into_iter().collect()
}

/// What a metavariable matched: one fragment, or one set of captures per repetition.
#[derive(Debug, Clone)]
enum Bind {
    One(Vec<TokenTree>),
    Seq(Vec<Captures>),
}

type Captures = HashMap<String, Bind>;

/// Matches the whole `input` against `matcher`.
fn match_rule(matcher: &[TokenTree], input: &[TokenTree]) -> Option<Captures> {
    let (caps, used) = match_seq(matcher, input, None, 0)?;
    (used == input.len()).then_some(caps)
}

/// A `$( .. ) sep? op` repetition at `matcher[m]`: (inner, separator, tokens used).
fn repetition(matcher: &[TokenTree], m: usize) -> Option<(Vec<TokenTree>, Option<String>, usize)> {
    let TokenTree::Group(g) = matcher.get(m + 1)? else {
        return None;
    };
    let inner = flat(g.stream());
    let is_op =
        |t: &TokenTree| matches!(t, TokenTree::Punct(p) if matches!(p.as_char(), '*' | '+' | '?'));
    match matcher.get(m + 2)? {
        t if is_op(t) => Some((inner, None, 3)),
        sep => matcher
            .get(m + 3)
            .filter(|t| is_op(t))
            .map(|_| (inner, Some(sep.to_string()), 4)),
    }
}

/// Matches a prefix of `input` against `matcher`; `stop` ends greedy fragments.
fn match_seq(
    matcher: &[TokenTree],
    input: &[TokenTree],
    stop: Option<&TokenTree>,
    depth: usize,
) -> Option<(Captures, usize)> {
    if depth > 16 {
        return None;
    }
    let mut caps = Captures::new();
    let (mut m, mut i) = (0, 0);
    while m < matcher.len() {
        if is_dollar(&matcher[m]) && matches!(matcher.get(m + 1), Some(TokenTree::Group(_))) {
            let (inner, sep, used) = repetition(matcher, m)?;
            let after = matcher.get(m + used).or(stop);
            let (iters, n) = match_repeated(&inner, sep.as_deref(), after, &input[i..], depth)?;
            for name in var_names(&inner) {
                caps.insert(name, Bind::Seq(iters.clone()));
            }
            i += n;
            m += used;
        } else if is_dollar(&matcher[m]) {
            let (name, end) = match_fragment(matcher, m, input, i, stop)?;
            caps.insert(
                name,
                Bind::One(fragment(matcher.get(m + 3), &input[i..end])),
            );
            i = end;
            m += 4;
        } else {
            match (&matcher[m], input.get(i)?) {
                (TokenTree::Group(g), TokenTree::Group(h)) if g.delimiter() == h.delimiter() => {
                    caps.extend(match_nested(&flat(g.stream()), &flat(h.stream()), depth)?);
                }
                (TokenTree::Group(_), _) | (_, TokenTree::Group(_)) => return None,
                (a, b) if a.to_string() == b.to_string() => {}
                _ => return None,
            }
            m += 1;
            i += 1;
        }
    }
    Some((caps, i))
}

/// A delimited group of the matcher against the input's group: the whole of it.
fn match_nested(matcher: &[TokenTree], input: &[TokenTree], depth: usize) -> Option<Captures> {
    let (caps, used) = match_seq(matcher, input, None, depth + 1)?;
    (used == input.len()).then_some(caps)
}

/// `$( inner ) sep op` against `input`: the captures of each iteration, tokens used.
fn match_repeated(
    inner: &[TokenTree],
    sep: Option<&str>,
    after: Option<&TokenTree>,
    input: &[TokenTree],
    depth: usize,
) -> Option<(Vec<Captures>, usize)> {
    let sep_tok = sep.and_then(|s| TokenStream::from_str(s).ok()?.into_iter().next());
    let stop = sep_tok.as_ref().or(after);
    let (mut iters, mut i) = (Vec::new(), 0);
    while i < input.len() {
        let Some((c, n)) = match_seq(inner, &input[i..], stop, depth + 1) else {
            break;
        };
        if n == 0 {
            break;
        }
        iters.push(c);
        i += n;
        match sep {
            Some(s) if input.get(i).is_some_and(|t| t.to_string() == s) => i += 1,
            Some(_) => break,
            None => {}
        }
    }
    Some((iters, i))
}

/// Whether input token `t` is where a greedy fragment followed by `next` ends.
fn stops(t: &TokenTree, next: &TokenTree) -> bool {
    match (t, next) {
        (TokenTree::Group(a), TokenTree::Group(b)) => a.delimiter() == b.delimiter(),
        (TokenTree::Group(_), _) | (_, TokenTree::Group(_)) => false,
        (a, b) => a.to_string() == b.to_string(),
    }
}

/// `$name:frag` at `matcher[m]` against `input[i..]`: the name and where the match ends.
fn match_fragment(
    matcher: &[TokenTree],
    m: usize,
    input: &[TokenTree],
    i: usize,
    stop: Option<&TokenTree>,
) -> Option<(String, usize)> {
    let (TokenTree::Ident(name), Some(TokenTree::Ident(frag))) =
        (matcher.get(m + 1)?, matcher.get(m + 3))
    else {
        return None;
    };
    let end = match (frag.to_string().as_str(), input.get(i)) {
        ("ident", Some(TokenTree::Ident(_))) => i + 1,
        ("literal", Some(TokenTree::Literal(_))) => i + 1,
        ("literal", Some(TokenTree::Punct(p))) if p.as_char() == '-' => {
            matches!(input.get(i + 1), Some(TokenTree::Literal(_))).then_some(i + 2)?
        }
        ("lifetime", Some(TokenTree::Punct(p))) if p.as_char() == '\'' => {
            matches!(input.get(i + 1), Some(TokenTree::Ident(_))).then_some(i + 2)?
        }
        ("block", Some(TokenTree::Group(g))) if g.delimiter() == Delimiter::Brace => i + 1,
        ("tt", Some(_)) => i + 1,
        ("ident" | "literal" | "lifetime" | "block" | "tt", _) => return None,
        (kind, _) => {
            let stop = matcher.get(m + 4).or(stop);
            let n = stop.and_then(|s| greedy_len(kind, &input[i..], s));
            let end = i + n.unwrap_or(input.len() - i);
            // A fragment other than `vis` is never empty.
            (end > i || frag == "vis").then_some(end)?
        }
    };
    Some((name.to_string(), end))
}

/// How many tokens of `input` a greedy fragment of `kind` takes before `stop`: never a
/// stop inside a closure's `|params|` (an `expr`) or inside `<..>` (a `ty` or `path`), so
/// `|a, b| a + b` and `HashMap<K, V>` are one fragment each before a `,`.
fn greedy_len(kind: &str, input: &[TokenTree], stop: &TokenTree) -> Option<usize> {
    let is =
        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
    let mut k = 0;
    if kind == "expr" {
        if matches!(input.first(), Some(TokenTree::Ident(m)) if m == "move") {
            k = 1;
        }
        if is(input.get(k), '|') {
            k += 1;
            while k < input.len() && !is(input.get(k), '|') {
                k += 1;
            }
            if k >= input.len() {
                return None;
            }
            k += 1;
        } else {
            k = 0;
        }
    }
    let angled = matches!(kind, "ty" | "path");
    let mut depth = 0usize;
    let mut prev: Option<&TokenTree> = None;
    while let Some(t) = input.get(k) {
        if depth == 0 && stops(t, stop) {
            return Some(k);
        }
        let arrow = is(Some(t), '>') && is(prev, '-');
        if angled && is(Some(t), '<') {
            depth += 1;
        } else if angled && is(Some(t), '>') && !arrow {
            depth = depth.saturating_sub(1);
        }
        prev = Some(t);
        k += 1;
    }
    None
}

/// What a fragment transcribes to: an `expr` of several tokens in parentheses, as rustc
/// keeps it one expression (`$f(v)` with `$f` = `|v: f64| v as u8` calls the closure).
fn fragment(kind: Option<&TokenTree>, toks: &[TokenTree]) -> Vec<TokenTree> {
    match kind {
        Some(TokenTree::Ident(k)) if k == "expr" && toks.len() > 1 => {
            let inner: TokenStream = toks.iter().cloned().collect();
            vec![TokenTree::Group(Group::new(Delimiter::Parenthesis, inner))]
        }
        _ => toks.to_vec(),
    }
}

/// The metavariables (`$x:frag`) declared in a matcher fragment, at any depth.
fn var_names(toks: &[TokenTree]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        match (t, toks.get(k + 1), toks.get(k + 2)) {
            (d, Some(TokenTree::Ident(n)), Some(TokenTree::Punct(c)))
                if is_dollar(d) && c.as_char() == ':' =>
            {
                out.push(n.to_string())
            }
            (TokenTree::Group(g), _, _) => out.extend(var_names(&flat(g.stream()))),
            _ => {}
        }
    }
    out
}

/// The metavariables a transcriber fragment uses (`$x`), at any depth.
fn used_vars(toks: &[TokenTree], out: &mut Vec<String>) {
    for (k, t) in toks.iter().enumerate() {
        match (t, toks.get(k + 1)) {
            (d, Some(TokenTree::Ident(n))) if is_dollar(d) => out.push(n.to_string()),
            (TokenTree::Group(g), _) => used_vars(&flat(g.stream()), out),
            _ => {}
        }
    }
}

fn is_dollar(t: &TokenTree) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == '$')
}

fn transcribe(body: TokenStream, caps: &Captures, depth: usize) -> Option<TokenStream> {
    if depth > 64 {
        return None;
    }
    let toks: Vec<TokenTree> = body.into_iter().collect();
    let mut out = TokenStream::new();
    let mut k = 0;
    while k < toks.len() {
        match &toks[k] {
            t if is_dollar(t) && matches!(toks.get(k + 1), Some(TokenTree::Group(_))) => {
                let (inner, sep, used) = repetition(&toks, k)?;
                out.extend(transcribe_rep(&inner, sep.as_deref(), caps, depth)?);
                k += used;
            }
            t if is_dollar(t) => {
                let TokenTree::Ident(name) = toks.get(k + 1)? else {
                    return None;
                };
                match caps.get(&name.to_string())? {
                    Bind::One(ts) => out.extend(ts.iter().cloned()),
                    Bind::Seq(_) => return None,
                }
                k += 2;
            }
            TokenTree::Group(g) => {
                let inner = transcribe(g.stream(), caps, depth + 1)?;
                let delim = if g.delimiter() == Delimiter::None {
                    Delimiter::Parenthesis
                } else {
                    g.delimiter()
                };
                out.extend(std::iter::once(TokenTree::Group(proc_macro2::Group::new(
                    delim, inner,
                ))));
                k += 1;
            }
            t => {
                out.extend(std::iter::once(t.clone()));
                k += 1;
            }
        }
    }
    Some(out)
}

/// `$( inner ) sep op` in a transcriber: once per iteration of the repeated variables
/// it uses (at any depth: `$( $( $x )* )*` repeats over `x`'s outer sequence).
fn transcribe_rep(
    inner: &[TokenTree],
    sep: Option<&str>,
    caps: &Captures,
    depth: usize,
) -> Option<TokenStream> {
    let mut used = Vec::new();
    used_vars(inner, &mut used);
    let iters = used.iter().find_map(|n| match caps.get(n) {
        Some(Bind::Seq(v)) => Some(v),
        _ => None,
    })?;
    let stream: TokenStream = inner.iter().cloned().collect();
    let mut out = TokenStream::new();
    for (n, iter) in iters.iter().enumerate() {
        if n > 0
            && let Some(s) = sep
        {
            out.extend(TokenStream::from_str(s).ok()?);
        }
        // The iteration's bindings over the outer single fragments (not the outer
        // sequences: cloning those per iteration would be quadratic).
        let mut scoped: Captures = caps
            .iter()
            .filter(|(_, b)| matches!(b, Bind::One(_)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        scoped.extend(iter.iter().map(|(k, v)| (k.clone(), v.clone())));
        out.extend(transcribe(stream.clone(), &scoped, depth + 1)?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;

    fn expand(rules: &str, input: &str) -> Option<String> {
        let krate: TokenStream = "crate".parse().unwrap();
        super::expand(&super::parse_rules(rules)?, input, &krate).map(|(s, _)| s)
    }

    #[test]
    fn substitutes_simple_rules() {
        let rules = "($name:ident, $t:ty) => { fn $name(x: $t) { helper(x) } };";
        let out = expand(rules, "wait_all, &Stream").unwrap();
        assert_eq!(out, "fn wait_all (x : & Stream) { helper (x) }");
        assert!(expand("($x:ident) => { fn $x() {} }", "a, b").is_none());
        let rep = expand("($($n:ident),*) => { $(fn $n() { w(); })* };", "a, b").unwrap();
        assert_eq!(rep, "fn a () { w () ; } fn b () { w () ; }");
    }

    #[test]
    fn nested_repetitions_transcribe_per_inner_iteration() {
        let rules = "($($ty:ident { $($m:ident),* });*) => { $(impl $ty { $(fn $m() {})* })* };";
        let out = expand(rules, "A { x, y }; B { z }").unwrap();
        assert_eq!(
            out,
            "impl A { fn x () { } fn y () { } } impl B { fn z () { } }"
        );
    }

    #[test]
    fn fragments_select_the_rule_by_kind() {
        let rules = "($n:literal) => { fn lit() {} }; ($n:ident) => { fn id() {} };";
        assert_eq!(expand(rules, "x").unwrap(), "fn id () { }");
        assert_eq!(expand(rules, "-1").unwrap(), "fn lit () { }");
        // A greedy fragment stops at the delimiter group that follows it in the matcher.
        let rules = "($t:ty { $b:expr }) => { fn f() -> $t { $b } };";
        assert_eq!(
            expand(rules, "Vec<u8> { vec![] }").unwrap(),
            "fn f () -> Vec < u8 > { (vec ! []) }"
        );
        assert!(expand("($e:expr) => {}", "").is_none());
    }

    #[test]
    fn expr_fragments_stay_one_expression() {
        let rules = "($f:expr, $x:expr) => { fn g() -> u8 { $f($x) } };";
        assert_eq!(
            expand(rules, "|v: f64| v as u8, 1.0 + 2.0").unwrap(),
            "fn g () -> u8 { (| v : f64 | v as u8) ((1.0 + 2.0)) }"
        );
        assert_eq!(expand(rules, "h, y").unwrap(), "fn g () -> u8 { h (y) }");
    }

    #[test]
    fn greedy_fragments_skip_closure_params_and_generic_args() {
        let rules = "($e:expr, $t:ty, $n:ident) => { fn $n(x: $t) { $e(x, x) } };";
        assert_eq!(
            expand(rules, "|a, b| a + b, HashMap<K, V>, f").unwrap(),
            "fn f (x : HashMap < K , V >) { (| a , b | a + b) (x , x) }"
        );
    }

    #[test]
    fn dollar_crate_becomes_the_defining_crate() {
        let krate: TokenStream = ":: gpu".parse().unwrap();
        let rules = super::parse_rules("() => { fn f() { $crate::wait() } }").unwrap();
        let out = super::expand(&rules, "", &krate).unwrap();
        assert_eq!(out.0, "fn f () { :: gpu :: wait () }");
    }
}
