//! Attribute macros of `nosync`. Use them through the `nosync` crate.
use proc_macro::TokenStream;

#[proc_macro_attribute]
pub fn no_sync(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}

#[proc_macro_attribute]
pub fn synchronizes(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}

#[proc_macro_attribute]
pub fn allow_sync(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}
