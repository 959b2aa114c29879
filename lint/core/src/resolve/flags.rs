//! The library flags (`known::models`' `[[flag]]`) that keep their default in the analysed
//! program. A flag holds for a crate of its library at a version it names; it is set when a
//! crate that can call its library (its dependency closure holds it) names one of its setters
//! anywhere in its source text, comments and strings included (a mention that calls nothing
//! makes the branches on it followed, as without the model: never a missed wait). The
//! library's own crate is not searched: the model's test checks that nothing in it calls a
//! setter. A flag no crate sets is fixed at its default, by its static's canonical path
//! ([`DefMap::fixed_flags`]), and the walk follows only the arm of `if FLAG.load(..)` that
//! the default takes (`callgraph::walk`).

use super::*;
use crate::known::models::{Flag, shipped};
use crate::parse::Parsed;
use crate::source::{FileId, SourceMap};
use rayon::prelude::*;

/// Fixes the shipped flags that no analysed crate sets at their defaults.
pub fn apply(map: &mut DefMap<'_>, parsed: &Parsed, sources: &SourceMap) {
    for flag in &shipped().0.flags {
        for k in 0..map.crates.len() {
            let c = &map.crates[k];
            if c.name != flag.krate() || !flag.holds_for(c.versions.own.as_ref()) {
                continue;
            }
            let segs: Vec<&str> = flag.path.split("::").collect();
            let Some(Def::Value(canon)) = map.resolve_path(c.root, &segs, false) else {
                continue;
            };
            if !set_by_callers(map, (flag, k), parsed, sources) {
                map.fixed_flags.insert(canon, flag.default);
            }
        }
    }
}

/// Whether a crate other than the flag's own (crate `k`), that can call it, names a setter.
fn set_by_callers(
    map: &DefMap<'_>,
    (flag, k): (&Flag, usize),
    parsed: &Parsed,
    sources: &SourceMap,
) -> bool {
    let callers = |c: usize| c != k && map.reach.get(c).is_none_or(|r| r.crates.contains(&k));
    let mut files: Vec<FileId> = (parsed.files.iter())
        .filter_map(|((_, c), f)| callers(*c).then_some(f.file))
        .collect();
    files.sort_unstable();
    files.dedup();
    // Peeked, not read into the source map: on a warm run most of these texts are not in
    // memory (their stamps vouch for them), and nothing else needs them.
    files.par_iter().any(|&f| {
        let text = &sources.file(f).text;
        text.peek(|text| flag.setter_names().any(|name| names(text, name)))
    })
}

/// Whether `text` holds the identifier `name` (not inside a longer identifier).
fn names(text: &str, name: &str) -> bool {
    let ident = |c: char| c == '_' || c.is_alphanumeric();
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn a_name_is_a_whole_identifier() {
        assert!(names("set_force_dmmv(true);", "set_force_dmmv"));
        assert!(names("cuda::set_force_dmmv", "set_force_dmmv"));
        assert!(!names("reset_force_dmmv()", "set_force_dmmv"));
        assert!(!names("set_force_dmmv2()", "set_force_dmmv"));
        assert!(!names("", "set_force_dmmv"));
    }
}
