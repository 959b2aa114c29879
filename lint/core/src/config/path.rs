//! The syntax of a configured path: `krate::f`, `krate::Type::method`,
//! `<krate::Type as krate::Trait>::method`. Checked here, once, when the configuration is
//! read; `resolve::configured` only looks the parsed segments up.

/// A configured path as written, and its segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigPath {
    /// The path as written (diagnostics quote it).
    pub text: String,
    pub kind: PathKind,
}

/// The segments of a path (identifiers only: generic arguments are dropped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathKind {
    /// `krate::module::f`, `krate::Type::method`: at least one segment.
    Plain(Vec<String>),
    /// `<self_ty as trait_path>::method`; `trait_path` is empty for `<self_ty>::method`.
    Qualified {
        self_ty: Vec<String>,
        trait_path: Vec<String>,
        method: String,
    },
}

/// Longest configured path, and most nesting characters (`<`, `(`, `[`, `&`, `*`) in
/// one, that are handed to syn: real paths are far below both, and syn recurses once
/// per nesting level (20 000 `&` or `Vec<` overflow the stack).
const MAX_PATH_LEN: usize = 4096;
const MAX_PATH_NESTING: usize = 64;

/// Parses `text`; `Err` completes the sentence "`text` ..." (`is not a Rust path`).
pub(super) fn parse(text: &str) -> Result<ConfigPath, String> {
    if text.len() > MAX_PATH_LEN {
        return Err(format!(
            "is too long to be a path ({} bytes, at most {MAX_PATH_LEN})",
            text.len()
        ));
    }
    let nesting = text
        .chars()
        .filter(|c| matches!(c, '<' | '(' | '[' | '&' | '*'))
        .count();
    if nesting > MAX_PATH_NESTING {
        return Err(format!(
            "is too deeply nested to be a path ({nesting} of `<([&*`, at most {MAX_PATH_NESTING})"
        ));
    }
    let parsed: syn::ExprPath =
        syn::parse_str(text).map_err(|_| "is not a Rust path".to_owned())?;
    let segs = idents(&parsed.path);
    let kind = match &parsed.qself {
        Some(q) => qualified(q, segs)?,
        None if segs.is_empty() => return Err("is empty".to_owned()),
        None => PathKind::Plain(segs),
    };
    Ok(ConfigPath {
        text: text.to_owned(),
        kind,
    })
}

fn qualified(q: &syn::QSelf, mut segs: Vec<String>) -> Result<PathKind, String> {
    let syn::Type::Path(tp) = &*q.ty else {
        return Err("has an unsupported qualified type".to_owned());
    };
    let method = segs.pop().ok_or("is empty")?;
    segs.truncate(q.position);
    Ok(PathKind::Qualified {
        self_ty: idents(&tp.path),
        trait_path: segs,
        method,
    })
}

fn idents(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::{PathKind, parse};

    fn kind(text: &str) -> PathKind {
        parse(text)
            .unwrap_or_else(|why| panic!("`{text}` {why}"))
            .kind
    }

    fn strings(segs: &[&str]) -> Vec<String> {
        segs.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn plain_and_qualified_paths_are_split_into_segments() {
        assert_eq!(
            kind("krate::Dev::<u8>::flush"),
            PathKind::Plain(strings(&["krate", "Dev", "flush"]))
        );
        assert_eq!(
            kind("<krate::Dev<u8> as krate::io::Sync>::wait"),
            PathKind::Qualified {
                self_ty: strings(&["krate", "Dev"]),
                trait_path: strings(&["krate", "io", "Sync"]),
                method: "wait".to_owned(),
            }
        );
        assert_eq!(
            kind("<krate::Dev>::wait"),
            PathKind::Qualified {
                self_ty: strings(&["krate", "Dev"]),
                trait_path: Vec::new(),
                method: "wait".to_owned(),
            }
        );
    }

    #[test]
    fn malformed_paths_say_why() {
        let why = |text: &str| parse(text).unwrap_err();
        assert_eq!(why("krate::f("), "is not a Rust path");
        assert_eq!(why(""), "is not a Rust path");
        assert_eq!(
            why("<&krate::Dev as X>::m"),
            "has an unsupported qualified type"
        );
        assert_eq!(
            why(&format!("krate::{}", "a".repeat(5000))),
            "is too long to be a path (5007 bytes, at most 4096)"
        );
        assert_eq!(
            why(&format!(
                "krate::f::<{}u8{}>",
                "Vec<".repeat(65),
                ">".repeat(65)
            )),
            "is too deeply nested to be a path (66 of `<([&*`, at most 64)"
        );
    }
}
