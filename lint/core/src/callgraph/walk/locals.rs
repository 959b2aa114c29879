//! The walk's locals: scopes of bindings, and the index that finds a name's innermost
//! binding in constant time.

use super::{Local, Typed, Walker};

impl Walker<'_, '_> {
    pub(super) fn bind(&mut self, name: &str, ty: Typed, is_param: bool) {
        let depth = self.scopes.len().saturating_sub(1) as u32;
        if let Some(scope) = self.scopes.last_mut() {
            let at = (depth, scope.len() as u32);
            self.bound.entry(name.to_owned()).or_default().push(at);
            scope.push(Local {
                name: name.to_owned(),
                ty,
                is_param,
                by_ref: false,
                moved: false,
                owned: false,
            });
        }
    }

    pub(super) fn bind_param(&mut self, name: &str, ty: Typed, by_ref: bool) {
        self.bind(name, ty, true);
        if let Some(l) = self.scopes.last_mut().and_then(|s| s.last_mut()) {
            l.by_ref = by_ref;
        }
    }

    pub(super) fn local(&self, name: &str) -> Option<&Local> {
        let &(s, i) = self.bound.get(name)?.last()?;
        self.scopes.get(s as usize)?.get(i as usize)
    }

    pub(super) fn local_mut(&mut self, name: &str) -> Option<&mut Local> {
        let &(s, i) = self.bound.get(name)?.last()?;
        self.scopes.get_mut(s as usize)?.get_mut(i as usize)
    }

    pub(super) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Ends the innermost scope: its locals leave the index, innermost binding first.
    pub(super) fn pop_scope(&mut self) -> Vec<Local> {
        let scope = self.scopes.pop().unwrap_or_default();
        for l in scope.iter().rev() {
            if let Some(at) = self.bound.get_mut(&l.name) {
                at.pop();
                if at.is_empty() {
                    self.bound.remove(&l.name);
                }
            }
        }
        scope
    }
}
