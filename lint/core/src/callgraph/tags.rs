//! The one policy for how sure the lint is of an edge (`exact`, `inferred`,
//! `name-only`), decided from what the resolution of the call knew. Every edge's tag is
//! [`edge`]'s answer, and every value's type carries how it was known ([`WRITTEN`],
//! [`derived`]), which the tags of calls on it then inherit.
//!
//! | how the callee was found ([`How`])                      | tag                                  |
//! |---------------------------------------------------------|--------------------------------------|
//! | by path (`f()`, `Type::f()`, `<T as Tr>::f()`, a sink)  | exact                                |
//! | a method of the receiver's type (or of a bound's trait) | as sure as the receiver's type       |
//! | one impl of a trait, the concrete type unknown          | inferred (or the receiver's, if less) |
//! | a value's `Drop` (scope end, `drop(x)`, `let _ = ..`)   | as sure as the value's type          |
//! | a method of a value's impl of a trait of the crate of an unanalysed fn it is passed to | inferred (or the value's type's, if less) |
//! | a fn item handed to a call as an argument (`.map(Tensor::relu)`) | inferred                |
//! | the method's name alone                                 | name-only                            |
//!
//! A value's type is exact when it is written (a parameter, a `let` annotation, a
//! struct literal, a cast, a path), and at least inferred when derived (a call's return
//! type, a field, an unannotated `let`, a pattern binding, `?`, an operator's `Output`, an
//! index, a `for` pattern, a closure parameter): a type derived from a name-only call is
//! name-only, and so is every call made on it. A name-only match is never made for a name
//! std owns (`known::std::never_guessed`).

use crate::diagnostics::Confidence;

/// How a call's callee was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// By path: the callee is the item the call names.
    Path,
    /// From the receiver's type: a method of that type (inherent, trait impl, a
    /// provided method specialised to it), or a trait's declaration for a bound.
    Receiver,
    /// One of the impls of a trait reached through a bound or `dyn`, the concrete type
    /// being unknown at the call.
    AnyImpl,
    /// A value's `Drop` impl, from the value's type.
    Drop,
    /// A method of the impl, for a value's type, of a trait of the crate of an
    /// unanalysed fn that the value is passed to: the fn may call it.
    Callback,
    /// A fn item handed to a call as an argument (`.map(Tensor::relu)`): the callee
    /// is taken to call it.
    Handed,
    /// A method with the call's name, the receiver's type being unknown.
    Name,
}

/// The tag of an edge found `how`, where the receiver's (or dropped value's) type was
/// known as sure as `ty` (ignored for paths and name-only matches).
pub fn edge(how: How, ty: Confidence) -> Confidence {
    match how {
        How::Path => Confidence::Exact,
        How::Receiver | How::Drop => ty,
        How::AnyImpl | How::Callback => ty.max(Confidence::Inferred),
        How::Handed => Confidence::Inferred,
        How::Name => Confidence::NameOnly,
    }
}

/// How sure a written type is (a parameter, an annotation, a literal, a cast, a path).
pub const WRITTEN: Confidence = Confidence::Exact;

/// How sure a type derived from something known as sure as `from` is.
pub fn derived(from: Confidence) -> Confidence {
    from.max(Confidence::Inferred)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Confidence::*;

    #[test]
    fn the_policy_table() {
        let cases = [
            (How::Path, NameOnly, Exact),
            (How::Receiver, Exact, Exact),
            (How::Receiver, Inferred, Inferred),
            (How::Receiver, NameOnly, NameOnly),
            (How::AnyImpl, Exact, Inferred),
            (How::AnyImpl, NameOnly, NameOnly),
            (How::Drop, Inferred, Inferred),
            (How::Callback, Exact, Inferred),
            (How::Callback, NameOnly, NameOnly),
            (How::Handed, Exact, Inferred),
            (How::Name, Exact, NameOnly),
        ];
        for (how, ty, tag) in cases {
            assert_eq!(edge(how, ty), tag, "{how:?} on a {ty:?} type");
        }
        assert_eq!(derived(Exact), Inferred);
        assert_eq!(derived(NameOnly), NameOnly);
    }
}
