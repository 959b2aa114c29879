//! Calls through blanket impls (`impl<U: UnaryOpT> Map1 for U`): a receiver whose type
//! has the impl's bounds (a type parameter bounded so, or a concrete type implementing
//! them) has the impl's methods, and the trait's provided methods with `Self` = the
//! receiver's type. candle's `U::V.map(..)` in `CudaStorage::unary_impl` is
//! `<U as Map1>::map`, whose `self.f(..)` is the blanket impl's `f`.

use super::Walker;
use crate::callgraph::tags::How;
use crate::resolve::{FnId, Ty};

impl Walker<'_, '_> {
    /// The target of `recv.name(..)` through the first blanket impl whose bounds are
    /// all among `traits` (the receiver's): its method `name`, or the trait's provided
    /// one specialised to `recv`. Empty when there is none.
    pub(super) fn blanket_targets(
        &mut self,
        recv: &Ty,
        traits: &[String],
        name: &str,
    ) -> Vec<(FnId, How)> {
        if traits.is_empty() {
            return Vec::new();
        }
        for b in &self.map.blankets {
            if !b.bounds.iter().all(|t| traits.contains(t)) {
                continue;
            }
            if let Some(&f) = b.fns.get(name) {
                return vec![(f, How::Receiver)];
            }
            if let Some(decl) = self.map.trait_method(&b.trait_, name)
                && self.map.func(decl).ir.is_some_and(|ir| ir.body.is_some())
            {
                self.spec = Some(recv.clone());
                return vec![(decl, How::Receiver)];
            }
        }
        Vec::new()
    }
}
