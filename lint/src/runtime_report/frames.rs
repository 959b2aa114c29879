//! Function paths and files as a wait report names them, compared with the lint's: a
//! demangled symbol (`<app::Foo<T> as app::Bar>::run`, `app::main::{{closure}}`, a hash
//! suffix) normalised to the lint's form, and a frame's file (relative to the workspace
//! root, as cargo passes it to rustc, or absolute) compared with a file the lint read.

use std::path::{Path, PathBuf};

/// `path` without generic arguments, closure and shim segments or a hash suffix:
/// `<app::Foo<f32> as app::Bar>::run::{{closure}}` → `<app::Foo as app::Bar>::run`.
pub(crate) fn normalise(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    let bytes: Vec<char> = path.chars().collect();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            // A `<` that opens a qualified path (`<A as B>`) starts the path or follows `::`.
            '<' if i == 0 || out.ends_with("::") || out.ends_with('<') && depth == 0 => out.push(c),
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth > 0 => {}
            _ => out.push(c),
        }
    }
    let mut segments: Vec<&str> = split_segments(&out);
    while segments.last().is_some_and(|s| is_noise(s)) {
        segments.pop();
    }
    segments.join("::").replace("::::", "::")
}

/// `a::<b::c as d>::e` split at the `::` outside `<..>`.
fn split_segments(path: &str) -> Vec<&str> {
    let mut segments = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                segments.push(&path[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    segments.push(&path[start..]);
    segments.retain(|s| !s.is_empty());
    segments
}

/// A segment that names no fn of the source: a closure, a shim, a hash suffix
/// (`h0123456789abcdef`).
fn is_noise(segment: &str) -> bool {
    let hash = segment.len() == 17
        && segment.starts_with('h')
        && segment[1..].bytes().all(|b| b.is_ascii_hexdigit());
    hash || segment.starts_with("{{") || segment.starts_with('{')
}

/// Whether the lint's `lint` path and a report's `frame` path name one fn: equal once
/// normalised, or a trait impl's method of one type and name (the trait named through
/// another module), or a method of one crate, type and name (the type named through its
/// module or not), or a frame named by the fn's name alone.
pub(crate) fn same_fn(lint: &str, frame: &str) -> bool {
    let (a, b) = (normalise(lint), normalise(frame));
    if a == b {
        return true;
    }
    // A binary built with `debug = "line-tables-only"` names an inlined fn by its name alone
    // (`train_step`, not `app::train_step`); such a frame always has its file and line, which
    // the callers compare too.
    if !b.contains("::") && !b.is_empty() {
        return a.rsplit("::").next() == Some(b.as_str());
    }
    let (sa, sb) = (split_segments(&a), split_segments(&b));
    match (sa.first(), sb.first()) {
        (Some(x), Some(y)) if x.starts_with('<') && y.starts_with('<') => {
            self_type(x) == self_type(y) && sa.last() == sb.last() && sa.len() == sb.len()
        }
        (Some(x), Some(y)) if x == y && sa.len() >= 3 && sb.len() >= 3 => {
            sa[sa.len() - 2..] == sb[sb.len() - 2..]
                && sa[sa.len() - 2].starts_with(char::is_uppercase)
        }
        _ => false,
    }
}

/// `A` of `<A as B>`.
fn self_type(qualified: &str) -> &str {
    let inner = qualified.trim_start_matches('<').trim_end_matches('>');
    inner.split(" as ").next().unwrap_or(inner)
}

/// A frame's file as a path to compare: relative ones are relative to the workspace root.
pub(crate) fn frame_file(root: &Path, file: &Path) -> PathBuf {
    match file.is_relative() {
        true => root.join(file),
        false => file.to_owned(),
    }
}

/// Whether two files are one, lexically (`.` segments dropped).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    let clean = |p: &Path| -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    let (a, b) = (clean(a), clean(b));
    a == b || (b.is_relative() && a.ends_with(&b)) || (a.is_relative() && b.ends_with(&a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangled_forms_normalise_to_the_lints() {
        assert_eq!(normalise("app::main::{{closure}}"), "app::main");
        assert_eq!(normalise("app::step::h0123456789abcdef"), "app::step");
        assert_eq!(normalise("app::Foo<f32>::run"), "app::Foo::run");
        assert_eq!(
            normalise("<app::Foo<T> as app::Bar>::run::{{closure}}"),
            "<app::Foo as app::Bar>::run"
        );
        assert!(same_fn(
            "<app::Foo as app::traits::Bar>::run",
            "<app::Foo as app::Bar>::run"
        ));
        assert!(same_fn("app::Trainer::step", "app::model::Trainer::step"));
        assert!(!same_fn("app::train::step", "app::eval::step"));
        assert!(same_fn("app::train::step", "step"));
        assert!(!same_fn("app::train::step", "train"));
    }
}
