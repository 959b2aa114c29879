//! The syntax of a configured path: `krate::f`, `krate::Type::method`,
//! `<krate::Type as krate::Trait>::method`. Checked here, once, when the configuration is
//! read; `resolve::configured` only looks the parsed segments up. A path's crate may be pinned
//! to one version of it, as chains print an older version's paths: `krate@0.6.0::f` (the first
//! segment is then `krate@0.6.0`).

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
        /// `<&self_ty as ..>`: the impl for a reference to the type (`impl View for &Tensor`),
        /// not the one for the type.
        self_ref: bool,
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
    let (plain, pins) = split_pins(text)?;
    let parsed: syn::ExprPath =
        syn::parse_str(&plain).map_err(|_| "is not a Rust path".to_owned())?;
    let segs = idents(&parsed.path);
    let mut kind = match &parsed.qself {
        Some(q) => qualified(q, segs)?,
        None if segs.is_empty() => return Err("is empty".to_owned()),
        None => PathKind::Plain(segs),
    };
    apply_pins(&mut kind, pins)?;
    Ok(ConfigPath {
        text: text.to_owned(),
        kind,
    })
}

/// A version pin: the crate name it follows, the version, and whether it is in a qualified
/// path's trait (after `as`).
type Pin = (String, String, bool);

/// `text` without its version pins (`krate@0.6.0` → `krate`), and the pins in order. A pin
/// follows the crate name that starts a path (the text, a qualified type, `&` or not, or its
/// trait) and is a full version.
fn split_pins(text: &str) -> Result<(String, Vec<Pin>), String> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut plain = String::with_capacity(text.len());
    let mut pins = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let (head, tail) = rest.split_at(at);
        let name_len = head.chars().rev().take_while(|&c| is_ident(c)).count();
        let name = &head[head.len() - name_len..];
        let before = format!("{plain}{}", &head[..head.len() - name_len]);
        let before = before.trim_end();
        let in_trait = before.ends_with(" as");
        let starts = ["", "<", "<&", "<&mut"].contains(&before);
        if name.is_empty() || !(starts || in_trait) {
            return Err(
                "has an `@` that does not follow the crate name a path starts with \
                 (`krate@0.6.0::f`)"
                    .to_owned(),
            );
        }
        let tail = &tail[1..];
        let len = tail
            .find(|c: char| !(is_ident(c) || matches!(c, '.' | '-' | '+')))
            .unwrap_or(tail.len());
        let version = &tail[..len];
        if cargo_metadata::semver::Version::parse(version).is_err() {
            return Err(format!(
                "pins `{name}` to `{version}`, which is not a full version (`{name}@0.6.0`)"
            ));
        }
        plain.push_str(head);
        pins.push((name.to_owned(), version.to_owned(), in_trait));
        rest = &tail[len..];
    }
    plain.push_str(rest);
    Ok((plain, pins))
}

/// Puts each pin back on the first segment it follows (`krate` → `krate@0.6.0`).
fn apply_pins(kind: &mut PathKind, pins: Vec<Pin>) -> Result<(), String> {
    for (name, version, in_trait) in pins {
        let first = match kind {
            PathKind::Plain(segs) => segs.first_mut(),
            PathKind::Qualified { trait_path, .. } if in_trait => trait_path.first_mut(),
            PathKind::Qualified { self_ty, .. } => self_ty.first_mut(),
        };
        match first {
            Some(seg) if *seg == name => *seg = format!("{name}@{version}"),
            _ => return Err(format!("pins `{name}`, which does not start a path")),
        }
    }
    Ok(())
}

fn qualified(q: &syn::QSelf, mut segs: Vec<String>) -> Result<PathKind, String> {
    let (ty, self_ref) = match &*q.ty {
        syn::Type::Reference(r) => (&*r.elem, true),
        ty => (ty, false),
    };
    let syn::Type::Path(tp) = ty else {
        return Err("has an unsupported qualified type".to_owned());
    };
    let method = segs.pop().ok_or("is empty")?;
    segs.truncate(q.position);
    Ok(PathKind::Qualified {
        self_ty: idents(&tp.path),
        self_ref,
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
                self_ref: false,
                trait_path: strings(&["krate", "io", "Sync"]),
                method: "wait".to_owned(),
            }
        );
        assert_eq!(
            kind("<krate::Dev>::wait"),
            PathKind::Qualified {
                self_ty: strings(&["krate", "Dev"]),
                self_ref: false,
                trait_path: Vec::new(),
                method: "wait".to_owned(),
            }
        );
    }

    #[test]
    fn a_crate_may_be_pinned_to_one_version() {
        assert_eq!(
            kind("candle_core@0.6.0::Tensor::to_vec1"),
            PathKind::Plain(strings(&["candle_core@0.6.0", "Tensor", "to_vec1"]))
        );
        assert_eq!(
            kind("<&gpu@1.2.3-rc.1::Dev as gpu@1.2.3-rc.1::Sync>::wait"),
            PathKind::Qualified {
                self_ty: strings(&["gpu@1.2.3-rc.1", "Dev"]),
                self_ref: true,
                trait_path: strings(&["gpu@1.2.3-rc.1", "Sync"]),
                method: "wait".to_owned(),
            }
        );
        let why = |text: &str| parse(text).unwrap_err();
        assert_eq!(
            why("gpu@0.6::f"),
            "pins `gpu` to `0.6`, which is not a full version (`gpu@0.6.0`)"
        );
        let not_first = "has an `@` that does not follow the crate name a path starts with \
                         (`krate@0.6.0::f`)";
        assert_eq!(why("gpu::Dev@0.6.0::f"), not_first);
        assert_eq!(why("@0.6.0::f"), not_first);
        assert_eq!(why("gpu::f::<gpu@0.6.0::T>"), not_first);
        assert_eq!(why("<gpu::Dev<gpu@0.6.0::T> as X>::m"), not_first);
    }

    #[test]
    fn malformed_paths_say_why() {
        let why = |text: &str| parse(text).unwrap_err();
        assert_eq!(why("krate::f("), "is not a Rust path");
        assert_eq!(why(""), "is not a Rust path");
        assert_eq!(
            why("<[krate::Dev] as X>::m"),
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
