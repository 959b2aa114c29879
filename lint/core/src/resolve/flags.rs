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
use crate::known::models::{Flag, setters, shipped};
use crate::parse::Parsed;

/// Fixes the shipped flags that no analysed crate sets at their defaults.
pub fn apply(map: &mut DefMap<'_>, parsed: &Parsed) {
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
            if !set_by_callers(map, (flag, k), parsed) {
                map.fixed_flags.insert(canon, flag.default);
            }
        }
    }
}

/// Whether a crate other than the flag's own (crate `k`), that can call it, names a setter:
/// by the masks of its files' texts ([`setters`], [`crate::parse::ParsedFile::setters`]),
/// found when each text was read or, for a text a warm run does not read, kept by the
/// stamp table.
fn set_by_callers(map: &DefMap<'_>, (flag, k): (&Flag, usize), parsed: &Parsed) -> bool {
    let callers = |c: usize| c != k && map.reach.get(c).is_none_or(|r| r.crates.contains(&k));
    let mask = setters::of(flag);
    (parsed.files.iter()).any(|((_, c), f)| callers(*c) && f.setters & mask != 0)
}
