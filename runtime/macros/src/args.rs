//! Attribute arguments: the typed model of `nosync-syntax`, shared with the lint, so that the
//! macros and `cargo nosync-lint` accept the same forms with the same errors and defaults.

pub(crate) use nosync_syntax::{Args, AttrName, Kind};

use proc_macro2::{Span, TokenStream};

/// Parses the tokens inside the attribute's parentheses; an error for the whole attribute
/// (a missing `reason`) points at the attribute.
pub(crate) fn parse(name: AttrName, tokens: TokenStream) -> syn::Result<Args> {
    nosync_syntax::parse(name, tokens, Span::call_site())
}
