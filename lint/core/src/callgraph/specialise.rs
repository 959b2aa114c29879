//! Specialised nodes: a callee walked again with more types known than its declaration
//! gives, so that its calls on them reach one impl instead of every impl.
//!
//! - A provided trait method called on a known type gets a node for that type
//!   (`<Gather as Map1>::map`), walked with `Self` = that type: its `self.f()` reaches
//!   that type's impl only.
//! - A fn given a value of a known concrete type for a parameter declared `&dyn Trait`,
//!   `Box<dyn Trait>`, `Arc<dyn Trait>`, `impl Trait` or `T: Trait` gets a node for
//!   those argument types, walked with the parameters bound to them: its calls on the
//!   parameter reach that type's impl only (candle-nn's `softmax_last_dim` passes
//!   `&SoftmaxLastDim` to `apply_op1_no_bwd<C: CustomOp1>`, whose `c.cuda_fwd(..)` is
//!   then `SoftmaxLastDim`'s and no other op's). A specialised callee passes the types
//!   on, so the narrowing follows the chain.
//! - A method of a generic impl called on a receiver whose type arguments are concrete
//!   (`ComputeClient<CudaRuntime>::read` for `impl<R: Runtime> ComputeClient<R>`), and a
//!   fn given a concrete argument for a parameter typed by a type parameter (`c: &C`),
//!   get a node with those type parameters bound (only bounded ones: an unbounded one
//!   dispatches nothing): its `R::Server` is `CudaRuntime`'s server, its `C::f()` that
//!   type's impl.
//!
//! Sinks and roots are never specialised (a sink ends a chain; a root ends another
//! root's search). The number of nodes is bounded per fn and in all; past a bound the
//! call goes to the unspecialised fn, which dispatches to every impl and says so.

use super::*;
use crate::resolve::Ty;

/// What a call knows that its callee's declaration does not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Spec {
    /// `Self` of a provided trait method called on a known type.
    pub self_ty: Option<Ty>,
    /// Dispatching parameters (by position, not counting `self`) with the concrete type
    /// the call passes, and how sure that type is.
    pub args: Vec<(usize, Ty, Confidence)>,
    /// Type parameters bound to concrete types: the impl's, from the receiver's type
    /// arguments (`Client<CudaRuntime>::read` binds `R`), and the fn's, from arguments
    /// passed for parameters typed by one (`c: &C`).
    pub params: Vec<(String, Ty)>,
    /// Parameters (by name, `self` for the receiver) given constant arguments the callee
    /// cannot change, and their values (`walk::values`).
    pub values: Vec<(String, crate::resolve::Known)>,
}

/// Most specialised nodes in all, and per fn (bounds on pathological inputs: a fn
/// called with many different concrete types falls back to dispatching to every impl).
const MAX_SPECIALISED: usize = 20_000;
const MAX_PER_FN: usize = 16;
/// Of those, at most this many per fn know constant arguments only (no type): a fn
/// called with many different constants is walked as declared, and its budget stays for
/// the types its calls narrow.
const MAX_VALUES_ONLY_PER_FN: usize = 4;

/// The specialised nodes created so far: by (fn, what is known), how many per fn, and
/// each one's place in the order of [`Ids::order`].
#[derive(Default)]
pub(super) struct Ids {
    by_key: HashMap<(FnId, String), FnId>,
    per_fn: HashMap<FnId, usize>,
    values_only_per_fn: HashMap<FnId, usize>,
    /// Per specialised node: the declared fn it specialises, and what it knows (the keys
    /// of the specialisations from that fn to this node).
    order: HashMap<FnId, (FnId, String)>,
}

impl Ids {
    /// A key that orders fns by what they are, not by when their node was created: a
    /// declared fn by its id, a specialised node after the fn it specialises, by what it
    /// knows (nodes are created in the order the walk reaches them, which depends on
    /// which fns are walked).
    pub(super) fn order(&self, f: FnId) -> (FnId, &str) {
        self.order
            .get(&f)
            .map_or((f, ""), |(decl, known)| (*decl, known.as_str()))
    }
}

/// The node of `decl` specialised to `spec`, created on first request (then pushed to
/// `created`, to be walked); `None` when `decl` stays as it is.
pub(super) fn node(
    map: &mut DefMap<'_>,
    ids: &mut Ids,
    decl: FnId,
    spec: Spec,
    created: &mut Vec<FnId>,
) -> Option<FnId> {
    let d = &map.fns[decl as usize];
    if d.marks.sink.is_some() || d.marks.root {
        return None;
    }
    // `Self` as the node's path shows it: a type, or a type parameter's bounds (a
    // provided method reached through a blanket impl: `<impl UnaryOpT as Map1>::map`).
    let shown = match &spec.self_ty {
        Some(Ty::Param(ts)) if !ts.is_empty() => Some(format!("impl {}", ts.join(" + "))),
        Some(t) => Some(t.canon()?.to_owned()),
        None if spec.args.is_empty() && spec.params.is_empty() && spec.values.is_empty() => {
            return None;
        }
        None => None,
    };
    let canon = spec.self_ty.as_ref().and_then(Ty::canon).map(str::to_owned);
    let key = (decl, spec_key(shown.as_deref(), &spec));
    if let Some(&id) = ids.by_key.get(&key) {
        return Some(id);
    }
    let values_only = spec.self_ty.is_none() && spec.args.is_empty() && spec.params.is_empty();
    let n = ids.per_fn.get(&decl).copied().unwrap_or_default();
    let v = ids
        .values_only_per_fn
        .get(&decl)
        .copied()
        .unwrap_or_default();
    if ids.by_key.len() >= MAX_SPECIALISED
        || n >= MAX_PER_FN
        || (values_only && v >= MAX_VALUES_ONLY_PER_FN)
    {
        return None;
    }
    *ids.per_fn.entry(decl).or_default() += 1;
    if values_only {
        *ids.values_only_per_fn.entry(decl).or_default() += 1;
    }
    let fd = d.specialised(shown.as_deref(), canon.as_deref(), spec.self_ty);
    let id = map.fns.len() as FnId;
    map.fns.push(fd);
    // A specialised node specialised again keeps what it already knew.
    let mut args = map.arg_specs.get(&decl).cloned().unwrap_or_default();
    args.retain(|(i, ..)| spec.args.iter().all(|(j, ..)| j != i));
    args.extend(spec.args);
    map.arg_specs.insert(id, args);
    let mut params = map.param_specs.get(&decl).cloned().unwrap_or_default();
    params.retain(|(n, _)| spec.params.iter().all(|(m, _)| m != n));
    params.extend(spec.params);
    map.param_specs.insert(id, params);
    let mut values = map.value_specs.get(&decl).cloned().unwrap_or_default();
    values.retain(|(n, _)| spec.values.iter().all(|(m, _)| m != n));
    values.extend(spec.values);
    if !values.is_empty() {
        map.value_specs.insert(id, values);
    }
    let (base, known) = ids.order(decl);
    let known = format!("{known}\u{1f}{}", key.1);
    ids.order.insert(id, (base, known));
    ids.by_key.insert(key, id);
    created.push(id);
    Some(id)
}

/// What a specialisation knows, as the key of its node: `Self` as shown, the arguments'
/// types, the type parameters, and the constant arguments (when there are any: the keys of
/// nodes that know none are as they were without them).
fn spec_key(shown: Option<&str>, spec: &Spec) -> String {
    let mut key = format!("{shown:?} {:?} {:?}", spec.args, spec.params);
    if !spec.values.is_empty() {
        key += &format!(" {:?}", spec.values);
    }
    key
}
