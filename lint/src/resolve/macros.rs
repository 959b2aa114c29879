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

/// What [`expand_all`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expansions {
    pub expanded: usize,
    /// Invocations of local macros that no simple rule matched.
    pub failed: usize,
}

/// Expands item-position macro calls in every parsed file, in place.
pub fn expand_all(parsed: &mut Parsed, cfgs: &[CfgCtx]) -> Expansions {
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
            expand_items(&mut f.items, &defs, cfg, &mut count, 0);
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
    defs: &HashMap<String, String>,
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
                let expanded = expand(rules, tokens)
                    .filter(|src| src.len() <= MAX_EXPANSION_LEN)
                    .and_then(|src| lower_expansion(&src, *span, cfg));
                match expanded {
                    Some(mut items) => {
                        count.expanded += 1;
                        expand_items(&mut items, defs, cfg, count, depth + 1);
                        new.extend(items);
                    }
                    None => count.failed += 1,
                }
            }
            Item::Mod {
                kind: ModKind::Inline(inner),
                ..
            } => expand_items(inner, defs, cfg, count, depth + 1),
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

type Captures = HashMap<String, Vec<TokenTree>>;

fn match_rule(matcher: &[TokenTree], input: &[TokenTree]) -> Option<Captures> {
    let mut caps = Captures::new();
    let (mut m, mut i) = (0, 0);
    while m < matcher.len() {
        if is_dollar(&matcher[m]) {
            let (TokenTree::Ident(name), Some(TokenTree::Ident(frag))) =
                (matcher.get(m + 1)?, matcher.get(m + 3))
            else {
                return None; // `$( .. )*` repetitions are not substituted
            };
            let one = matches!(
                frag.to_string().as_str(),
                "ident" | "tt" | "literal" | "lifetime"
            );
            let end = if one {
                (i < input.len()).then_some(i + 1)?
            } else {
                let stop = matcher.get(m + 4).map(|t| t.to_string());
                let n = input[i..]
                    .iter()
                    .position(|t| Some(t.to_string()) == stop)
                    .unwrap_or(input.len() - i);
                i + n
            };
            caps.insert(name.to_string(), input[i..end].to_vec());
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
    (i == input.len()).then_some(caps)
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
            t if is_dollar(t) => {
                let TokenTree::Ident(name) = toks.get(k + 1)? else {
                    return None;
                };
                out.extend(caps.get(&name.to_string())?.iter().cloned());
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

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn substitutes_simple_rules() {
        let rules = "($name:ident, $t:ty) => { fn $name(x: $t) { helper(x) } };";
        let out = expand(rules, "wait_all, &Stream").unwrap();
        assert!(out.contains("fn wait_all"), "{out}");
        assert!(out.contains("& Stream"), "{out}");
        assert!(expand("($x:ident) => { fn $x() {} }", "a, b").is_none());
        assert!(expand("($($x:ident),*) => { }", "a").is_none());
    }
}
