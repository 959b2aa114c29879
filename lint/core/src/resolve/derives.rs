//! `#[derive(..)]`: what a derive macro generates, which the lint never sees, as far as
//! calls need it. A derive that names a trait of an analysed crate (burn's `Module`,
//! `Record`, `Config`: a derive macro and the trait it implements share their name by
//! convention) makes the type implement that trait: the trait's provided methods are the
//! type's, a call of a required one reaches the trait's declaration (the derive writes its
//! body), and a value of the type narrows a parameter bounded by the trait. A derive with a
//! model (`known::models`' `[[derive]]`: derive-new's `new`, burn's `Config`) gives the
//! type the constructor it writes: `T::new(..)` is a `T`.

use super::*;
use crate::known::models::{Derive, shipped};

/// Records the traits and constructors the derives of every struct and enum generate.
pub(super) fn apply(map: &mut DefMap<'_>) {
    let models = &shipped().0.derives;
    let mut implemented: Vec<(String, String)> = Vec::new();
    let mut ctors: Vec<(String, &'static Derive)> = Vec::new();
    for (canon, td) in &map.types {
        for p in td.derives {
            let resolved = match map.resolve_path(td.module, &p.names(), p.global) {
                Some(Def::Trait(t)) => {
                    implemented.push((canon.clone(), t.clone()));
                    Some(t)
                }
                Some(Def::External(segs)) => Some(crate::known::canonical_name(&segs)),
                Some(_) => continue,
                None => None,
            };
            let model = models.iter().find(|d| names(d, resolved.as_deref(), p));
            ctors.extend(model.map(|d| (canon.clone(), d)));
        }
    }
    // Each type is visited once, so its list grows in its derives' order whatever the
    // map's (a hash's) order.
    for (ty, tr) in implemented {
        let traits = map.traits_of.entry(ty).or_default();
        if !traits.contains(&tr) {
            traits.push(tr);
        }
    }
    map.derived_ctors.extend(ctors);
}

/// Whether derive path `p`, resolved to `resolved` (a canonical path; `None`: to nothing,
/// as through `#[macro_use] extern crate derive_new`), is the derive model `d`'s.
fn names(d: &Derive, resolved: Option<&str>, p: &crate::parse::ir::PathIr) -> bool {
    match resolved {
        Some(c) => c == d.path,
        None => p.segs.len() == 1 && d.path.rsplit("::").next() == Some(p.last_name()),
    }
}
