//! The traits the analysed code uses as trait objects (`dyn Trait`, in a field's, a
//! parameter's or a return type, at any depth: `StableGraph<Box<dyn Op>, ()>`), and their
//! methods by name. A method call on a receiver whose type the lint cannot know (a value
//! taken out of a container of a crate that is not analysed:
//! `graph.node_weight_mut(n).unwrap().process(..)`) may then be a call through such a
//! trait object: see `callgraph::walk::external`.

use super::{DefMap, ModId, NameMap, TypeKind};
use crate::parse::ir::TypeRef;
use std::collections::BTreeSet;

/// Types looked at inside one written type, at most (a bound on pathological types).
const MAX_PARTS: usize = 64;

/// Method name → the traits used as `dyn` that declare a method of that name (canonical
/// paths, sorted).
pub(super) fn index(map: &DefMap<'_>) -> NameMap<Vec<String>> {
    let mut traits = BTreeSet::new();
    let mut add = |m: ModId, t: &TypeRef| {
        let mut bounds = Vec::new();
        dyn_bounds(t, &mut bounds, &mut 0);
        for b in bounds {
            traits.extend(map.traits(m, std::slice::from_ref(b)));
        }
    };
    for td in map.types.values() {
        match &td.kind {
            TypeKind::Struct(fields, _) => fields.iter().for_each(|(_, t)| add(td.module, t)),
            TypeKind::Enum(variants) => {
                (variants.iter().flat_map(|(_, fs)| fs)).for_each(|(_, t)| add(td.module, t))
            }
            TypeKind::Alias(t, _) => add(td.module, t),
            TypeKind::Trait { .. } => {}
        }
    }
    for f in &map.fns {
        let Some(ir) = f.ir else { continue };
        ir.params.iter().for_each(|p| add(f.module, &p.ty));
        if let Some(r) = &ir.ret {
            add(f.module, r);
        }
    }
    let mut out: NameMap<Vec<String>> = NameMap::default();
    for t in traits {
        if let Some(td) = map.types.get(&t)
            && let TypeKind::Trait { fns, .. } = &td.kind
        {
            for name in fns.keys() {
                out.entry(name.clone()).or_default().push(t.clone());
            }
        }
    }
    out
}

/// The bounds of every `dyn` inside `t`, at most [`MAX_PARTS`] types looked at.
fn dyn_bounds<'t>(t: &'t TypeRef, out: &mut Vec<&'t crate::parse::ir::PathIr>, seen: &mut usize) {
    *seen += 1;
    if *seen > MAX_PARTS {
        return;
    }
    match t {
        TypeRef::DynTrait(bounds) => out.extend(bounds),
        TypeRef::Ref(inner) | TypeRef::Slice(inner) | TypeRef::Array(inner) => {
            dyn_bounds(inner, out, seen)
        }
        TypeRef::Tuple(ts) => ts.iter().for_each(|t| dyn_bounds(t, out, seen)),
        TypeRef::Path(p) => (p.segs.iter())
            .flat_map(|s| s.args())
            .for_each(|t| dyn_bounds(t, out, seen)),
        TypeRef::ImplTrait(_) | TypeRef::Unknown => {}
    }
}
