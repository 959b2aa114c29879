//! Attribute arguments: which attribute is expanding, and its arguments parsed into a typed model.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Expr, ExprLit, Lit, LitStr, Path, Token};

/// The three attributes of this crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttrName {
    NoSync,
    Synchronizes,
    AllowSync,
}

impl AttrName {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            AttrName::NoSync => "no_sync",
            AttrName::Synchronizes => "synchronizes",
            AttrName::AllowSync => "allow_sync",
        }
    }

    /// Recognises `name`, `nosync::name` and `::nosync::name` (a `use .. as ..` rename cannot be seen).
    pub(crate) fn of_path(path: &Path) -> Option<AttrName> {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let name = match segments.as_slice() {
            [name] if path.leading_colon.is_none() => name,
            [krate, name] if krate == "nosync" => name,
            _ => return None,
        };
        [
            AttrName::NoSync,
            AttrName::Synchronizes,
            AttrName::AllowSync,
        ]
        .into_iter()
        .find(|attr| attr.as_str() == name)
    }
}

/// Whether a `#[synchronizes]` function always blocks the host or only may block it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Does,
    May,
}

/// The arguments of one attribute, one variant per attribute form.
#[derive(Debug)]
pub(crate) enum Args {
    /// `#[no_sync]`.
    NoSync,
    /// `#[synchronizes]`, `#[synchronizes(reason = "..")]`, `#[synchronizes(maybe, reason = "..")]`.
    Synchronizes { kind: Kind, reason: Option<LitStr> },
    /// `#[allow_sync(reason = "..")]`.
    AllowSync { reason: LitStr },
}

/// Parses the tokens inside the attribute's parentheses.
pub(crate) fn parse(name: AttrName, tokens: TokenStream) -> syn::Result<Args> {
    match name {
        AttrName::NoSync if tokens.is_empty() => Ok(Args::NoSync),
        AttrName::NoSync => Err(syn::Error::new_spanned(
            tokens,
            "#[no_sync] takes no arguments; write `#[no_sync]`",
        )),
        AttrName::Synchronizes => parse_synchronizes(tokens),
        AttrName::AllowSync => parse_allow_sync(tokens),
    }
}

fn parse_synchronizes(tokens: TokenStream) -> syn::Result<Args> {
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
            Err(unknown(&meta, "`maybe` or `reason = \"...\"`"))
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

fn parse_allow_sync(tokens: TokenStream) -> syn::Result<Args> {
    let mut reason: Option<LitStr> = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("reason") {
            set_reason(&mut reason, &meta, "say why waiting here is fine")
        } else {
            Err(unknown(&meta, "`reason = \"...\"`"))
        }
    });
    parser.parse2(tokens)?;
    match reason {
        Some(reason) => Ok(Args::AllowSync { reason }),
        None => Err(syn::Error::new(
            Span::call_site(),
            "#[allow_sync] needs a reason: #[allow_sync(reason = \"why this wait is fine here\")]",
        )),
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

fn unknown(meta: &ParseNestedMeta, expected: &str) -> syn::Error {
    let path = meta
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    meta.error(format_args!(
        "unknown argument `{path}`; expected {expected}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn check(name: AttrName, tokens: TokenStream) -> Result<Args, String> {
        parse(name, tokens).map_err(|e| e.to_string())
    }

    #[test]
    fn no_sync_takes_nothing() {
        assert!(matches!(
            check(AttrName::NoSync, quote!()),
            Ok(Args::NoSync)
        ));
        let err = check(AttrName::NoSync, quote!(reason = "x")).unwrap_err();
        assert!(err.contains("takes no arguments"), "{err}");
    }

    #[test]
    fn synchronizes_forms() {
        let Ok(Args::Synchronizes { kind, reason }) = check(AttrName::Synchronizes, quote!())
        else {
            panic!("bare #[synchronizes] must parse");
        };
        assert_eq!((kind, reason.is_none()), (Kind::Does, true));
        let parsed = check(AttrName::Synchronizes, quote!(reason = "copies"));
        let Ok(Args::Synchronizes { kind, reason }) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!(
            (kind, reason.map(|r| r.value())),
            (Kind::Does, Some("copies".into()))
        );
        let parsed = check(AttrName::Synchronizes, quote!(reason = "r", maybe,));
        let Ok(Args::Synchronizes { kind, .. }) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!(kind, Kind::May);
    }

    #[test]
    fn synchronizes_rejections() {
        let cases = [
            (quote!(maybe, maybe), "duplicate argument `maybe`"),
            (
                quote!(reason = "a", reason = "b"),
                "duplicate argument `reason`",
            ),
            (quote!(maybe = true), "`maybe` takes no value"),
            (quote!(reason = 5), "must be a string literal"),
            (quote!(reason = " "), "must not be empty"),
            (quote!(reason), "`reason` needs a value"),
            (quote!(blocking), "unknown argument `blocking`"),
            (quote!(a::b = 1), "unknown argument `a::b`"),
        ];
        for (tokens, expected) in cases {
            let err = check(AttrName::Synchronizes, tokens.clone()).unwrap_err();
            assert!(err.contains(expected), "{tokens}: {err}");
        }
    }

    #[test]
    fn allow_sync_requires_a_reason() {
        let parsed = check(AttrName::AllowSync, quote!(reason = "warm-up"));
        assert!(matches!(parsed, Ok(Args::AllowSync { .. })), "{parsed:?}");
        for (tokens, expected) in [
            (quote!(), "needs a reason"),
            (quote!(reason = ""), "must not be empty"),
            (quote!(maybe), "unknown argument `maybe`"),
        ] {
            let err = check(AttrName::AllowSync, tokens.clone()).unwrap_err();
            assert!(err.contains(expected), "{tokens}: {err}");
        }
    }

    #[test]
    fn recognises_attribute_spellings() {
        let name = |path: Path| AttrName::of_path(&path);
        assert_eq!(name(syn::parse_quote!(no_sync)), Some(AttrName::NoSync));
        assert_eq!(
            name(syn::parse_quote!(nosync::synchronizes)),
            Some(AttrName::Synchronizes)
        );
        assert_eq!(
            name(syn::parse_quote!(::nosync::allow_sync)),
            Some(AttrName::AllowSync)
        );
        assert_eq!(name(syn::parse_quote!(::no_sync)), None);
        assert_eq!(name(syn::parse_quote!(other::no_sync)), None);
        assert_eq!(name(syn::parse_quote!(inline)), None);
    }
}
