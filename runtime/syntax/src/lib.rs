//! The attribute contract of [nosync](https://docs.rs/nosync), parsed once for both of its
//! readers: `nosync-macros` (which expands the attributes) and `cargo-nosync-lint` (which reads
//! them as syntax). Both get the same typed model, the same error messages at the same places,
//! and the same default reasons.
//!
//! - [`AttrName`]: which attribute (`no_sync`, `synchronizes`, `allow_sync`), from its path.
//! - [`parse`] / [`parse_meta`]: an attribute's arguments into [`Args`], or a located
//!   [`syn::Error`] (each of its errors has its own span: iterate it).
//! - [`Escape`]: the expression-level escapes (`allow_sync(|| ..)`, `allow_sync_once(|| ..)`,
//!   `allow_sync_expr!(..)`) and the form of the macro's body.
//!
//! The reasons are string literals: [`Args`] is generic over how a reason is kept, [`LitStr`]
//! (with its span, for code generation) or `String` (its value, escapes resolved) after
//! [`Args::values`].

// A parser returns its errors; it never prints.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod escape;

pub use escape::Escape;

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitStr, Meta, Path, Token};

/// The reason of a bare `#[synchronizes]`.
pub const DEFAULT_REASON: &str = "declared #[synchronizes]";
/// The reason of `#[synchronizes(maybe)]` without `reason = ".."`.
pub const DEFAULT_REASON_MAYBE: &str = "declared #[synchronizes(maybe)]";

/// The three attributes of nosync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AttrName {
    NoSync,
    Synchronizes,
    AllowSync,
}

impl AttrName {
    pub const ALL: [AttrName; 3] = [
        AttrName::NoSync,
        AttrName::Synchronizes,
        AttrName::AllowSync,
    ];

    /// The name as written in `#[name]`.
    pub fn as_str(self) -> &'static str {
        match self {
            AttrName::NoSync => "no_sync",
            AttrName::Synchronizes => "synchronizes",
            AttrName::AllowSync => "allow_sync",
        }
    }

    /// The attribute called `name` (the last segment of its path).
    pub fn from_name(name: &str) -> Option<AttrName> {
        AttrName::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// Recognises `name`, `nosync::name` and `::nosync::name`. A `use nosync::x as y` rename
    /// cannot be seen from the path alone; the lint resolves those itself.
    pub fn of_path(path: &Path) -> Option<AttrName> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        match segments.as_slice() {
            [name] if path.leading_colon.is_none() => AttrName::from_name(name),
            [krate, name] if krate == "nosync" => AttrName::from_name(name),
            _ => None,
        }
    }
}

/// Whether a `#[synchronizes]` function always blocks the host or only may block it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Kind {
    Does,
    May,
}

impl Kind {
    /// The reason shown when the attribute gives none.
    pub fn default_reason(self) -> &'static str {
        match self {
            Kind::Does => DEFAULT_REASON,
            Kind::May => DEFAULT_REASON_MAYBE,
        }
    }
}

/// The arguments of one attribute, one variant per attribute; `R` is how a reason is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Args<R = LitStr> {
    /// `#[no_sync]`.
    NoSync,
    /// `#[synchronizes]`, `#[synchronizes(reason = "..")]`, `#[synchronizes(maybe, reason = "..")]`.
    Synchronizes { kind: Kind, reason: Option<R> },
    /// `#[allow_sync(reason = "..")]`.
    AllowSync { reason: R },
    /// `#[no_sync(capture_safe)]`: a `#[no_sync]` root that also demands CUDA-graph capture
    /// safety at run time (the lint checks it as `#[no_sync]`). Last, so that data encoded
    /// before it keeps its meaning.
    NoSyncCaptureSafe,
}

impl<R> Args<R> {
    pub fn name(&self) -> AttrName {
        match self {
            Args::NoSync | Args::NoSyncCaptureSafe => AttrName::NoSync,
            Args::Synchronizes { .. } => AttrName::Synchronizes,
            Args::AllowSync { .. } => AttrName::AllowSync,
        }
    }

    /// The same arguments with each reason mapped by `f`.
    pub fn map_reason<S>(self, f: impl Fn(R) -> S) -> Args<S> {
        match self {
            Args::NoSync => Args::NoSync,
            Args::NoSyncCaptureSafe => Args::NoSyncCaptureSafe,
            Args::Synchronizes { kind, reason } => Args::Synchronizes {
                kind,
                reason: reason.map(f),
            },
            Args::AllowSync { reason } => Args::AllowSync { reason: f(reason) },
        }
    }
}

impl Args<LitStr> {
    /// The model with the reasons' values (escapes resolved), without spans.
    pub fn values(self) -> Args<String> {
        self.map_reason(|r| r.value())
    }
}

impl Args<String> {
    /// A `#[synchronizes]` sink's reason: the one given, or the default for its kind.
    pub fn sync_reason(&self) -> Option<&str> {
        match self {
            Args::Synchronizes { kind, reason } => {
                Some(reason.as_deref().unwrap_or(kind.default_reason()))
            }
            _ => None,
        }
    }
}

/// Parses the tokens inside the attribute's parentheses. `attr` is where errors that belong
/// to the whole attribute point (a missing `reason`): `Span::call_site()` in a macro.
pub fn parse(name: AttrName, tokens: TokenStream, attr: Span) -> syn::Result<Args> {
    match name {
        AttrName::NoSync if tokens.is_empty() => Ok(Args::NoSync),
        AttrName::NoSync if is_capture_safe(&tokens) => Ok(Args::NoSyncCaptureSafe),
        AttrName::NoSync => Err(syn::Error::new_spanned(
            tokens,
            "#[no_sync] takes no arguments but `capture_safe`; write `#[no_sync]` or `#[no_sync(capture_safe)]`",
        )),
        AttrName::Synchronizes => parse_synchronizes(tokens),
        AttrName::AllowSync => parse_allow_sync(tokens, attr),
    }
}

/// `capture_safe`, alone.
fn is_capture_safe(tokens: &TokenStream) -> bool {
    let mut it = tokens.clone().into_iter();
    matches!(
        (it.next(), it.next()),
        (Some(proc_macro2::TokenTree::Ident(id)), None) if id == "capture_safe"
    )
}

/// Parses a whole attribute as syn reads it (`#[name]`, `#[name(..)]`, `#[name = ..]`), as the
/// attribute `name`.
pub fn parse_meta(name: AttrName, meta: &Meta) -> syn::Result<Args> {
    match meta {
        Meta::Path(p) => parse(name, TokenStream::new(), p.span()),
        Meta::List(l) => parse(name, l.tokens.clone(), l.span()),
        Meta::NameValue(nv) => Err(syn::Error::new(
            nv.eq_token.span,
            format!(
                "#[{0} = ..] is not a form of #[{0}]; write the arguments in parentheses",
                name.as_str()
            ),
        )),
    }
}

fn parse_synchronizes(tokens: TokenStream) -> syn::Result<Args> {
    bare_reason(&tokens, "#[synchronizes(reason = \"...\")]")?;
    let mut maybe: Option<Span> = None;
    let mut reason: Option<LitStr> = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("maybe") {
            if maybe.is_some() {
                return Err(meta.error("duplicate argument `maybe`"));
            }
            if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                return Err(meta.error(
                    "`maybe` takes no value; write #[synchronizes(maybe, reason = \"...\")]",
                ));
            }
            maybe = Some(meta.path.require_ident()?.span());
            Ok(())
        } else if meta.path.is_ident("reason") {
            set_reason(&mut reason, &meta, "say how this function blocks the host")
        } else {
            Err(unknown(
                &meta,
                "`maybe` or `reason = \"...\"`",
                &["maybe", "reason"],
            ))
        }
    });
    parser.parse2(tokens)?;
    let kind = if maybe.is_some() {
        Kind::May
    } else {
        Kind::Does
    };
    Ok(Args::Synchronizes { kind, reason })
}

fn parse_allow_sync(tokens: TokenStream, attr: Span) -> syn::Result<Args> {
    bare_reason(&tokens, "#[allow_sync(reason = \"...\")]")?;
    let mut reason: Option<LitStr> = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("reason") {
            set_reason(&mut reason, &meta, "say why waiting here is fine")
        } else {
            Err(unknown(&meta, "`reason = \"...\"`", &["reason"]))
        }
    });
    parser.parse2(tokens)?;
    match reason {
        Some(reason) => Ok(Args::AllowSync { reason }),
        None => Err(syn::Error::new(
            attr,
            "#[allow_sync] needs a reason: #[allow_sync(reason = \"why this wait is fine here\")]",
        )),
    }
}

/// Rejects a reason written as a bare string (`#[synchronizes("copies")]`) with a hint,
/// where syn's nested-meta parser would only say it expected an identifier.
fn bare_reason(tokens: &TokenStream, form: &str) -> syn::Result<()> {
    match tokens.clone().into_iter().next() {
        Some(proc_macro2::TokenTree::Literal(lit)) => Err(syn::Error::new(
            lit.span(),
            format!("a reason is an argument `reason = \"...\"`, not a bare literal: write {form}"),
        )),
        _ => Ok(()),
    }
}

/// Parses `reason = "non-empty string"` into `slot`, rejecting a second `reason`; `hint` tells
/// what an empty reason should have said.
fn set_reason(slot: &mut Option<LitStr>, meta: &ParseNestedMeta, hint: &str) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error("duplicate argument `reason`"));
    }
    if !meta.input.peek(Token![=]) {
        return Err(meta.error("`reason` needs a value: reason = \"...\""));
    }
    let value: Expr = meta.value()?.parse()?;
    let lit = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit,
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "`reason` must be a string literal, e.g. reason = \"waits for the copy\"",
            ));
        }
    };
    if lit.value().trim().is_empty() {
        let msg = format!("`reason` must not be empty: {hint}");
        return Err(syn::Error::new(lit.span(), msg));
    }
    *slot = Some(lit);
    Ok(())
}

/// An unknown argument's error: what the attribute takes, and the closest of `known` when
/// one is near (at most a third of the name's characters edited, as cargo and rustc suggest).
fn unknown(meta: &ParseNestedMeta, expected: &str, known: &[&str]) -> syn::Error {
    let path = meta
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    let limit = (path.chars().count() / 3).max(1);
    let near = known
        .iter()
        .map(|k| (strsim::levenshtein(&path, k), k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d);
    match near {
        Some((_, near)) => meta.error(format_args!(
            "unknown argument `{path}`; expected {expected}; did you mean `{near}`?"
        )),
        None => meta.error(format_args!(
            "unknown argument `{path}`; expected {expected}"
        )),
    }
}

#[cfg(test)]
mod tests;
