//! `macro_rules!` expansion for item macros defined and invoked in the analysed code.
//!
//! The simple cases are substituted: rules without repetitions, fragments captured as
//! one token tree (`ident`, `tt`, `literal`, `lifetime`) or greedily up to the next
//! literal token of the matcher (`ty`, `expr`, `path`, ...). The expansion is parsed and
//! lowered like source, every span pointing at the invocation. An invocation that
//! matches no rule is left alone (its fns are unknown to the lint).

use crate::parse::Parsed;
use crate::parse::cfg::CfgCtx;
use crate::parse::ir::{Item, ModKind, SpanIr};
use crate::parse::lower::Lower;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::HashMap;
use std::str::FromStr;

const MAX_EXPANSIONS: usize = 10_000;
/// Longest expansion text accepted (self-doubling macros stop here).
const MAX_EXPANSION_LEN: usize = 256 * 1024;
/// Most expansion text in one run: a tree of macros each invoking the next twice can
/// reach [`MAX_EXPANSIONS`] expansions of [`MAX_EXPANSION_LEN`] each (gigabytes of
/// items); past this budget an invocation counts as not expanded.
const MAX_TOTAL_EXPANSION: usize = 8 * 1024 * 1024;

/// What [`expand_all`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expansions {
    pub expanded: usize,
    /// Invocations of local macros that no simple rule matched (or past the budget).
    pub failed: usize,
    /// Bytes of expansion text so far (bounded by [`MAX_TOTAL_EXPANSION`]).
    pub bytes: usize,
}

/// Expands item-position macro calls in every parsed file, in place.
pub fn expand_all(parsed: &mut Parsed, cfgs: &[CfgCtx]) -> Expansions {
    expand_all_within(parsed, cfgs, MAX_TOTAL_EXPANSION)
}

/// [`expand_all`] with at most `budget` bytes of expansion text.
fn expand_all_within(parsed: &mut Parsed, cfgs: &[CfgCtx], budget: usize) -> Expansions {
    let mut defs: HashMap<String, String> = HashMap::new();
    let mut keys: Vec<_> = parsed.files.keys().cloned().collect();
    keys.sort();
    for key in &keys {
        visit_items(&parsed.files[key].items, &mut |i| {
            if let Item::MacroRules { name, rules } = i {
                defs.entry(name.clone()).or_insert_with(|| rules.clone());
            }
        });
    }
    let mut count = Expansions::default();
    if defs.is_empty() {
        return count;
    }
    let default_cfg = CfgCtx::default();
    for key in &keys {
        let cfg = cfgs.get(key.1).unwrap_or(&default_cfg);
        if let Some(f) = parsed.files.get_mut(key) {
            expand_items(&mut f.items, (&defs, budget), cfg, &mut count, 0);
        }
    }
    count
}

fn visit_items(items: &[Item], f: &mut dyn FnMut(&Item)) {
    let mut stack = vec![items];
    while let Some(items) = stack.pop() {
        for i in items {
            f(i);
            if let Item::Mod {
                kind: ModKind::Inline(inner),
                ..
            } = i
            {
                stack.push(inner);
            }
        }
    }
}

fn expand_items(
    items: &mut Vec<Item>,
    (defs, max_bytes): (&HashMap<String, String>, usize),
    cfg: &CfgCtx,
    count: &mut Expansions,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    let mut new = Vec::new();
    for item in items.iter_mut() {
        match item {
            Item::MacroCall { path, tokens, span } if count.expanded < MAX_EXPANSIONS => {
                let Some(rules) = path.last().and_then(|n| defs.get(n)) else {
                    continue;
                };
                let budget = max_bytes.saturating_sub(count.bytes);
                if budget == 0 {
                    count.failed += 1;
                    continue;
                }
                // Every expansion made counts, kept or not: the work was done.
                let expanded = expand(rules, tokens)
                    .inspect(|src| count.bytes += src.len())
                    .filter(|src| src.len() <= MAX_EXPANSION_LEN.min(budget))
                    .and_then(|src| lower_expansion(&src, *span, cfg));
                match expanded {
                    Some(mut items) => {
                        count.expanded += 1;
                        expand_items(&mut items, (defs, max_bytes), cfg, count, depth + 1);
                        new.extend(items);
                    }
                    None => count.failed += 1,
                }
            }
            Item::Mod {
                kind: ModKind::Inline(inner),
                ..
            } => expand_items(inner, (defs, max_bytes), cfg, count, depth + 1),
            _ => {}
        }
    }
    items.extend(new);
}

fn lower_expansion(src: &str, span: SpanIr, cfg: &CfgCtx) -> Option<Vec<Item>> {
    let file = syn::parse_file(src).ok()?;
    let mut lower = Lower {
        file: span.file,
        offset: 0,
        cfg,
        mod_dir: Default::default(),
        file_dir: Default::default(),
        depth: 0,
        truncated: false,
        inner: Vec::new(),
        fixed: Some(span),
    };
    let items = lower.items(&file.items, std::path::Path::new(""), false);
    // `mod x;` inside an expansion cannot be located: drop file modules.
    Some(
        items
            .into_iter()
            .filter(|i| {
                !matches!(
                    i,
                    Item::Mod {
                        kind: ModKind::File { .. } | ModKind::Missing(_),
                        ..
                    }
                )
            })
            .collect(),
    )
}

/// Expands one invocation with the first matching rule, as source text.
pub fn expand(rules: &str, input: &str) -> Option<String> {
    let rules: Vec<TokenTree> = TokenStream::from_str(rules).ok()?.into_iter().collect();
    let input: Vec<TokenTree> = TokenStream::from_str(input).ok()?.into_iter().collect();
    let mut i = 0;
    // Each rule is `(matcher) => {body}`, `=>` being two punctuation tokens.
    while i < rules.len() {
        let (Some(TokenTree::Group(matcher)), Some(TokenTree::Group(body))) =
            (rules.get(i), rules.get(i + 3))
        else {
            return None;
        };
        if let Some(caps) = match_rule(&flat(matcher.stream()), &input) {
            return transcribe(body.stream(), &caps, 0).map(|ts| ts.to_string());
        }
        i += 4;
        while matches!(rules.get(i), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
            i += 1;
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
    stop: Option<&str>,
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
            let after = matcher.get(m + used).map(|t| t.to_string());
            let (iters, n) = match_repeated(&inner, sep.as_deref(), after, &input[i..], depth)?;
            for name in var_names(&inner) {
                caps.insert(name, Bind::Seq(iters.clone()));
            }
            i += n;
            m += used;
        } else if is_dollar(&matcher[m]) {
            let (name, end) = match_fragment(matcher, m, input, i, stop)?;
            caps.insert(name, Bind::One(input[i..end].to_vec()));
            i = end;
            m += 4;
        } else {
            match (&matcher[m], input.get(i)?) {
                (TokenTree::Group(g), TokenTree::Group(h)) if g.delimiter() == h.delimiter() => {
                    caps.extend(match_rule(&flat(g.stream()), &flat(h.stream()))?);
                }
                (a, b) if a.to_string() == b.to_string() => {}
                _ => return None,
            }
            m += 1;
            i += 1;
        }
    }
    Some((caps, i))
}

/// `$( inner ) sep op` against `input`: the captures of each iteration, tokens used.
fn match_repeated(
    inner: &[TokenTree],
    sep: Option<&str>,
    after: Option<String>,
    input: &[TokenTree],
    depth: usize,
) -> Option<(Vec<Captures>, usize)> {
    let stop = sep.map(str::to_owned).or(after);
    let (mut iters, mut i) = (Vec::new(), 0);
    while i < input.len() {
        let Some((c, n)) = match_seq(inner, &input[i..], stop.as_deref(), depth + 1) else {
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

/// `$name:frag` at `matcher[m]` against `input[i..]`: the name and where the match ends
/// (one token tree, or greedily up to the matcher's next literal token / `stop`).
fn match_fragment(
    matcher: &[TokenTree],
    m: usize,
    input: &[TokenTree],
    i: usize,
    stop: Option<&str>,
) -> Option<(String, usize)> {
    let (TokenTree::Ident(name), Some(TokenTree::Ident(frag))) =
        (matcher.get(m + 1)?, matcher.get(m + 3))
    else {
        return None;
    };
    let one = matches!(
        frag.to_string().as_str(),
        "ident" | "tt" | "literal" | "lifetime"
    );
    let end = if one {
        (i < input.len()).then_some(i + 1)?
    } else {
        let next = matcher.get(m + 4).map(|t| t.to_string());
        let stop = next.as_deref().or(stop);
        let n = input[i..]
            .iter()
            .position(|t| Some(t.to_string().as_str()) == stop);
        i + n.unwrap_or(input.len() - i)
    };
    Some((name.to_string(), end))
}

/// The metavariables (`$x:frag`) declared in a matcher fragment.
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

/// `$( inner ) sep op` in a transcriber: once per iteration of the repeated variables.
fn transcribe_rep(
    inner: &[TokenTree],
    sep: Option<&str>,
    caps: &Captures,
    depth: usize,
) -> Option<TokenStream> {
    let used: Vec<String> = inner
        .windows(2)
        .filter(|w| is_dollar(&w[0]))
        .filter_map(|w| match &w[1] {
            TokenTree::Ident(n) => Some(n.to_string()),
            _ => None,
        })
        .collect();
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
    use super::expand;

    /// B5: macros that each invoke the next twice reached 10 000 expansions of ~100 KB
    /// each (a gigabyte of text to parse); the run's expansion text is now budgeted and
    /// the invocations past it count as not expanded.
    #[test]
    fn expansion_text_is_budgeted() {
        use crate::parse::cfg::CfgCtx;
        use crate::source::SourceMap;
        let zeros = "0,".repeat(20_000);
        let mut src =
            format!("macro_rules! leaf {{ () => {{ const X: [u8; 1] = [{zeros}]; }} }}\n");
        let depth = 14;
        for i in 0..depth {
            let next = match i + 1 == depth {
                true => "leaf".to_owned(),
                false => format!("t{}", i + 1),
            };
            src.push_str(&format!(
                "macro_rules! t{i} {{ () => {{ {next}!(); {next}!(); }} }}\n"
            ));
        }
        src.push_str("t0!();\n");
        let file = std::path::PathBuf::from("/mem/m/src/lib.rs");
        let mut sources = SourceMap::new(std::path::Path::new("/mem/m"));
        sources.add(file.clone(), src);
        let cfgs = [CfgCtx::default()];
        let (mut parsed, _) = crate::parse::parse_all(&[(file, 0)], &cfgs, &mut sources);
        let n = super::expand_all_within(&mut parsed, &cfgs, 1 << 20);
        assert!(n.bytes <= (1 << 20) + super::MAX_EXPANSION_LEN, "{n:?}");
        assert!(n.failed > 0 && n.expanded < 200, "{n:?}");
    }

    #[test]
    fn substitutes_simple_rules() {
        let rules = "($name:ident, $t:ty) => { fn $name(x: $t) { helper(x) } };";
        let out = expand(rules, "wait_all, &Stream").unwrap();
        assert!(out.contains("fn wait_all"), "{out}");
        assert!(out.contains("& Stream"), "{out}");
        assert!(expand("($x:ident) => { fn $x() {} }", "a, b").is_none());
        let rep = expand("($($n:ident),*) => { $(fn $n() { w(); })* };", "a, b").unwrap();
        assert!(rep.contains("fn a") && rep.contains("fn b"), "{rep}");
    }
}
