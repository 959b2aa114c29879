//! The types std's own functions and methods give, the way a reader sees them: what
//! iterating a collection yields, what indexing gives, what an iterator adapter or an
//! `Option`/`Result` combinator gives from its closure, and what a closure handed to one
//! of them is called with. Pure functions of types, from the tables of
//! [`crate::known::std`].

use crate::known::std::{
    CLOSURE, ITER, ITER_CLOSURES, ITER_ONE, ITER_SAME, ITERATE, MAP_GET, MAP_KEYS, MAP_VALUES,
    MAPS, OPTION_CLOSURES, Param, RESULT_CLOSURES, SEQUENCES, SLICE_CLOSURES, SUB_SLICES,
};
use crate::resolve::Ty;

fn adt(canon: &str, args: Vec<Ty>) -> Ty {
    Ty::Adt(canon.to_owned(), args)
}

/// `std::Iter<T>`: an iterator of `T`.
pub(super) fn iter_of(item: Ty) -> Ty {
    adt(ITER, vec![item])
}

/// A closure whose body gives `ret`.
pub(super) fn closure(ret: Ty) -> Ty {
    adt(CLOSURE, vec![ret])
}

/// What a closure gives, when `ty` is a closure's type.
fn closure_ret(ty: Option<&Ty>) -> Ty {
    match ty {
        Some(t) if t.is(CLOSURE) => t.arg(0),
        _ => Ty::Unknown,
    }
}

fn option(t: Ty) -> Ty {
    adt("std::Option", vec![t])
}

fn prim(name: &str) -> Ty {
    adt(name, Vec::new())
}

fn is_any(t: &Ty, canons: &[&str]) -> bool {
    t.canon().is_some_and(|c| canons.contains(&c))
}

fn is_string(t: &Ty) -> bool {
    t.is("std::String") || t.is("str")
}

/// What iterating a value of type `ty` yields (`for x in ty`, `ty.into_iter()`), for
/// std's iterables: collections, slices, arrays, maps (pairs), ranges, `Option`, iterators.
pub(super) fn item_of(ty: &Ty) -> Option<Ty> {
    match ty {
        Ty::Slice(t) | Ty::Array(t) => Some((**t).clone()),
        Ty::Adt(_, args) if is_any(ty, MAPS) => Some(Ty::Tuple(vec![
            args.first().cloned().unwrap_or(Ty::Unknown),
            args.get(1).cloned().unwrap_or(Ty::Unknown),
        ])),
        Ty::Adt(c, _)
            if SEQUENCES.contains(&c.as_str())
                || c == ITER
                || c == "std::Option"
                || c.starts_with("std::Range") =>
        {
            Some(ty.arg(0))
        }
        _ => None,
    }
}

/// The element type of a sequence (a slice, array or std sequence), for indexing.
fn element_of(ty: &Ty) -> Option<Ty> {
    match ty {
        Ty::Slice(t) | Ty::Array(t) => Some((**t).clone()),
        Ty::Adt(c, _) if c == "std::Vec" || c == "std::VecDeque" => Some(ty.arg(0)),
        _ => None,
    }
}

/// What `base[index]` gives for std's containers: an element, a map's value, or a
/// slice (a `str`) when `index` is a range.
pub(super) fn index_output(base: &Ty, index: &Ty) -> Option<Ty> {
    let range = index.canon().is_some_and(|c| c.starts_with("std::Range"));
    if is_string(base) {
        return range.then(|| prim("str"));
    }
    if is_any(base, MAPS) {
        return Some(base.arg(1));
    }
    let elem = element_of(base)?;
    Some(if range {
        Ty::Slice(Box::new(elem))
    } else {
        elem
    })
}

/// The types of the parameters of the closure given as argument `arg` of the std
/// method `recv.name(..)`, where std says what it calls it with; `args` are the types
/// of the call's arguments (`fold`'s accumulator is its first).
pub(super) fn closure_params(recv: &Ty, name: &str, arg: usize, args: &[Ty]) -> Option<Vec<Ty>> {
    let (table, item, err) = match recv {
        _ if recv.is(ITER) => (ITER_CLOSURES, recv.arg(0), Ty::Unknown),
        _ if recv.is("std::Option") => (OPTION_CLOSURES, recv.arg(0), Ty::Unknown),
        _ if recv.is("std::Result") => (RESULT_CLOSURES, recv.arg(0), recv.arg(1)),
        _ => (SLICE_CLOSURES, element_of(recv)?, Ty::Unknown),
    };
    let (_, _, params) = table.iter().find(|(m, a, _)| *m == name && *a == arg)?;
    let first = args.first().cloned().unwrap_or(Ty::Unknown);
    Some(
        params
            .iter()
            .map(|p| match p {
                Param::Item => item.clone(),
                Param::Err => err.clone(),
                Param::First => first.clone(),
            })
            .collect(),
    )
}

/// What the std method `recv.name(args)` gives, for iterables, iterators, `Option` and
/// `Result` combinators that take closures, slices and strings (`None`: not one of
/// these; the other std methods are [`super::returns::std_method_ret`]'s).
pub(super) fn method_ret(recv: &Ty, name: &str, args: &[Ty]) -> Option<Ty> {
    if recv.is(ITER) {
        return iter_method(&recv.arg(0), name, args);
    }
    if recv.is("std::Option") || recv.is("std::Result") {
        return combinator(recv, name, args);
    }
    if is_any(recv, MAPS) {
        return map_method(recv, name);
    }
    if is_string(recv) {
        return string_method(name);
    }
    if name == "iter" || name == "iter_mut" || name == "into_iter" || name == "drain" {
        return item_of(recv).map(iter_of);
    }
    let elem = element_of(recv)?;
    match name {
        _ if SUB_SLICES.contains(&name) => Some(iter_of(Ty::Slice(Box::new(elem)))),
        "to_vec" | "into_vec" => Some(adt("std::Vec", vec![elem])),
        "as_slice" | "as_mut_slice" => Some(Ty::Slice(Box::new(elem))),
        "split_at" | "split_at_mut" => {
            let half = Ty::Slice(Box::new(elem));
            Some(Ty::Tuple(vec![half.clone(), half]))
        }
        "first" | "last" | "first_mut" | "last_mut" | "get" | "get_mut" | "pop" => {
            Some(option(elem))
        }
        "len" | "capacity" => Some(prim("usize")),
        "contains" | "is_empty" | "starts_with" | "ends_with" => Some(prim("bool")),
        _ => None,
    }
}

/// Methods of an iterator of `item`.
fn iter_method(item: &Ty, name: &str, args: &[Ty]) -> Option<Ty> {
    let closure = || closure_ret(args.first());
    let t = match name {
        _ if ITER_SAME.contains(&name) => iter_of(item.clone()),
        _ if ITER_ONE.contains(&name) => option(item.clone()),
        "map" => iter_of(closure()),
        "filter_map" | "map_while" => iter_of(closure().unwrap_once()),
        "flat_map" => iter_of(item_of(&closure()).unwrap_or(Ty::Unknown)),
        "flatten" => iter_of(item_of(item).unwrap_or(Ty::Unknown)),
        "enumerate" => iter_of(Ty::Tuple(vec![prim("usize"), item.clone()])),
        "zip" => {
            let other = args.first().and_then(item_of).unwrap_or(Ty::Unknown);
            iter_of(Ty::Tuple(vec![item.clone(), other]))
        }
        "into_iter" | "iter" => iter_of(item.clone()),
        "collect" => collected(item),
        "count" => prim("usize"),
        "position" | "rposition" => option(prim("usize")),
        "any" | "all" => prim("bool"),
        "fold" => args.first().cloned().unwrap_or(Ty::Unknown),
        "find_map" => option(closure().unwrap_once()),
        "partition" => {
            let v = adt("std::Vec", vec![item.clone()]);
            Ty::Tuple(vec![v.clone(), v])
        }
        _ => return None,
    };
    Some(t)
}

/// What `collect()` gives when nothing says what to collect into: a `Vec` of the items,
/// or, for items that are `Result`s (`Option`s), a `Result` (`Option`) of the `Vec` of
/// their values, which is what `?` after it needs.
fn collected(item: &Ty) -> Ty {
    match item.canon() {
        Some(c @ ("std::Result" | "std::Option")) => {
            let mut args = vec![adt("std::Vec", vec![item.arg(0)])];
            if c == "std::Result" {
                args.push(item.arg(1));
            }
            adt(c, args)
        }
        _ => adt("std::Vec", vec![item.clone()]),
    }
}

/// What collecting items of type `item` into `target` gives (`collect::<T>()`, or a
/// `let` annotation `T`), `target`'s holes (`_`) filled: `Vec<_>` of `Tensor` items is
/// `Vec<Tensor>`; `Result<Vec<_>>` of `Result<Tensor>` items is `Result<Vec<Tensor>>`.
pub(super) fn collect_into(target: &Ty, item: &Ty) -> Ty {
    match target {
        Ty::Adt(c, args) if c == "std::Result" || c == "std::Option" => {
            let inner = match item.canon() {
                Some(i) if i == c => item.arg(0),
                _ => Ty::Unknown,
            };
            let mut args = args.clone();
            if let Some(first) = args.first_mut() {
                *first = collect_into(first, &inner);
            }
            if c == "std::Result" && args.get(1).is_none_or(|e| *e == Ty::Unknown) {
                args.truncate(1);
                args.push(item.arg(1));
            }
            Ty::Adt(c.clone(), args)
        }
        Ty::Adt(..) if item_of(target).is_some() => fill_holes(target, &collected(item)),
        Ty::Unknown => item.clone(),
        _ => target.clone(),
    }
}

/// `written` with its holes (`_`, unknown parts) taken from `inferred` where the two
/// have the same shape: `Vec<_>` and `Vec<Tensor>` give `Vec<Tensor>`.
pub(super) fn fill_holes(written: &Ty, inferred: &Ty) -> Ty {
    let all = |w: &[Ty], i: &[Ty]| -> Vec<Ty> {
        let inf = |k: usize| i.get(k).cloned().unwrap_or(Ty::Unknown);
        w.iter()
            .enumerate()
            .map(|(k, w)| fill_holes(w, &inf(k)))
            .collect()
    };
    match (written, inferred) {
        (Ty::Unknown, i) => i.clone(),
        (Ty::Adt(c, w), Ty::Adt(d, i)) if c == d => Ty::Adt(c.clone(), all(w, i)),
        (Ty::Slice(w), Ty::Slice(i)) => Ty::Slice(Box::new(fill_holes(w, i))),
        (Ty::Array(w), Ty::Array(i)) => Ty::Array(Box::new(fill_holes(w, i))),
        (Ty::Tuple(w), Ty::Tuple(i)) if w.len() == i.len() => Ty::Tuple(all(w, i)),
        _ => written.clone(),
    }
}

/// `Option`/`Result` combinators that take closures, and their iterators.
fn combinator(recv: &Ty, name: &str, args: &[Ty]) -> Option<Ty> {
    let closure = |i: usize| closure_ret(args.get(i));
    let rewrap = |t: Ty| match recv {
        Ty::Adt(c, a) => {
            let mut a = a.clone();
            match a.first_mut() {
                Some(first) => *first = t,
                None => a.push(t),
            }
            Ty::Adt(c.clone(), a)
        }
        _ => Ty::Unknown,
    };
    let t = match name {
        "map" => rewrap(closure(0)),
        "and_then" => closure(0),
        "map_or" => args.first().cloned().unwrap_or(Ty::Unknown),
        "map_or_else" => closure(1),
        "iter" | "iter_mut" | "into_iter" => iter_of(recv.arg(0)),
        "is_some" | "is_none" | "is_ok" | "is_err" | "is_some_and" | "is_ok_and" | "is_none_or"
        | "is_err_and" => prim("bool"),
        "err" if recv.is("std::Result") => option(recv.arg(1)),
        _ => return None,
    };
    Some(t)
}

/// Methods of std maps.
fn map_method(recv: &Ty, name: &str) -> Option<Ty> {
    let t = match name {
        _ if ITERATE.contains(&name) => iter_of(item_of(recv)?),
        _ if MAP_KEYS.contains(&name) => iter_of(recv.arg(0)),
        _ if MAP_VALUES.contains(&name) => iter_of(recv.arg(1)),
        _ if MAP_GET.contains(&name) => option(recv.arg(1)),
        "contains_key" | "is_empty" => prim("bool"),
        "len" => prim("usize"),
        _ => return None,
    };
    Some(t)
}

/// Methods of `str` and `String`.
fn string_method(name: &str) -> Option<Ty> {
    let t = match name {
        "as_str" | "trim" | "trim_start" | "trim_end" => prim("str"),
        "to_string" | "to_owned" | "to_lowercase" | "to_uppercase" | "replace" => {
            adt("std::String", Vec::new())
        }
        "chars" => iter_of(prim("char")),
        "bytes" => iter_of(prim("u8")),
        "lines" | "split" | "split_whitespace" | "split_terminator" | "rsplit" => {
            iter_of(prim("str"))
        }
        "len" => prim("usize"),
        "is_empty" | "contains" | "starts_with" | "ends_with" => prim("bool"),
        _ => return None,
    };
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(c: &str) -> Ty {
        adt(c, Vec::new())
    }

    #[test]
    fn iterating_and_indexing_std_containers() {
        let tensor = t("k::Tensor");
        let v = adt("std::Vec", vec![tensor.clone()]);
        assert_eq!(item_of(&v), Some(tensor.clone()));
        let range = adt("std::Range", vec![t("usize")]);
        assert_eq!(
            index_output(&v, &range),
            Some(Ty::Slice(Box::new(tensor.clone())))
        );
        assert_eq!(index_output(&v, &t("usize")), Some(tensor.clone()));
        let m = adt("std::HashMap", vec![t("std::String"), tensor.clone()]);
        assert_eq!(index_output(&m, &t("str")), Some(tensor.clone()));
        assert_eq!(method_ret(&m, "values", &[]), Some(iter_of(tensor.clone())));
        assert_eq!(index_output(&t("std::String"), &range), Some(t("str")));
        assert_eq!(index_output(&tensor, &range), None);
    }

    #[test]
    fn closures_get_the_items_they_are_called_with() {
        let tensor = t("k::Tensor");
        let it = iter_of(tensor.clone());
        assert_eq!(
            closure_params(&it, "map", 0, &[]),
            Some(vec![tensor.clone()])
        );
        assert_eq!(
            closure_params(&it, "fold", 1, &[t("f32")]),
            Some(vec![t("f32"), tensor.clone()])
        );
        let res = adt("std::Result", vec![tensor.clone(), t("k::Error")]);
        assert_eq!(
            closure_params(&res, "map_err", 0, &[]),
            Some(vec![t("k::Error")])
        );
        assert_eq!(closure_params(&it, "frobnicate", 0, &[]), None);
        // `ts.iter().map(|t| t.sum())` is an iterator of what the closure gives.
        let mapped = method_ret(&it, "map", &[closure(t("f32"))]);
        assert_eq!(mapped, Some(iter_of(t("f32"))));
        let results = iter_of(adt("std::Result", vec![tensor.clone(), t("k::Error")]));
        assert_eq!(
            method_ret(&results, "collect", &[]),
            Some(adt(
                "std::Result",
                vec![adt("std::Vec", vec![tensor.clone()]), t("k::Error")]
            ))
        );
        let opt = option(tensor.clone());
        assert_eq!(
            method_ret(&opt, "map", &[closure(t("f32"))]),
            Some(option(t("f32")))
        );
    }
}
