//! The annotated item: a function with a body, or a declaration without one, and the checks on it.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{Attribute, Block, ForeignItemFn, ImplItemFn, ItemFn, Signature, TraitItemFn};

use crate::args::AttrName;

/// Every item shape an attribute can sit on that is a function.
pub(crate) enum FnItem {
    /// A free function, or a method in an inherent or trait `impl` (syn parses both the same way).
    Free(ItemFn),
    /// A trait method, with a default body or without one.
    Trait(TraitItemFn),
    /// A declaration without a body (e.g. in an `extern` block).
    Foreign(ForeignItemFn),
    /// An `impl` method with a body that the shapes above do not read (e.g. `default fn`).
    Impl(ImplItemFn),
}

impl FnItem {
    /// Reads `tokens` as a function; `None` when they are some other item.
    pub(crate) fn parse(tokens: TokenStream) -> Option<FnItem> {
        let ends_in_body = matches!(
            tokens.clone().into_iter().last(),
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace
        );
        syn::parse2(tokens.clone())
            .map(FnItem::Free)
            .or_else(|_| syn::parse2(tokens.clone()).map(FnItem::Trait))
            .or_else(|_| syn::parse2(tokens.clone()).map(FnItem::Foreign))
            .ok()
            .or_else(|| {
                // ImplItemFn also accepts `fn f();`, which the shapes above already cover.
                let parsed = ends_in_body.then(|| syn::parse2(tokens).ok());
                parsed.flatten().map(FnItem::Impl)
            })
    }

    pub(crate) fn sig(&self) -> &Signature {
        match self {
            FnItem::Free(f) => &f.sig,
            FnItem::Impl(f) => &f.sig,
            FnItem::Trait(f) => &f.sig,
            FnItem::Foreign(f) => &f.sig,
        }
    }

    pub(crate) fn attrs(&self) -> &[Attribute] {
        match self {
            FnItem::Free(f) => &f.attrs,
            FnItem::Impl(f) => &f.attrs,
            FnItem::Trait(f) => &f.attrs,
            FnItem::Foreign(f) => &f.attrs,
        }
    }

    pub(crate) fn has_body(&self) -> bool {
        match self {
            FnItem::Free(_) | FnItem::Impl(_) => true,
            FnItem::Trait(f) => f.default.is_some(),
            FnItem::Foreign(_) => false,
        }
    }

    pub(crate) fn body_mut(&mut self) -> Option<&mut Block> {
        match self {
            FnItem::Free(f) => Some(&mut f.block),
            FnItem::Impl(f) => Some(&mut f.block),
            FnItem::Trait(f) => f.default.as_mut(),
            FnItem::Foreign(_) => None,
        }
    }
}

impl ToTokens for FnItem {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            FnItem::Free(f) => f.to_tokens(tokens),
            FnItem::Impl(f) => f.to_tokens(tokens),
            FnItem::Trait(f) => f.to_tokens(tokens),
            FnItem::Foreign(f) => f.to_tokens(tokens),
        }
    }
}

/// Checks that attribute `name` can instrument `item`; every problem found is in the error.
pub(crate) fn check(name: AttrName, item: &FnItem) -> syn::Result<()> {
    let mut errors = Vec::new();
    let sig = item.sig();
    let attr = name.as_str();
    if let Some(constness) = &sig.constness {
        let msg = format!("#[{attr}] cannot be used on a `const fn`: its check runs at run time");
        errors.push(syn::Error::new(constness.span, msg));
    }
    if !item.has_body() && name != AttrName::Synchronizes {
        let msg = no_body_message(name, matches!(item, FnItem::Foreign(_)));
        errors.push(syn::Error::new(Span::call_site(), msg));
    }
    if let (Some(asyncness), AttrName::AllowSync) = (&sig.asyncness, name) {
        let msg = "#[allow_sync] cannot be used on an `async fn`: an allow scope cannot be held \
                   across `.await`; wrap the waiting expressions in nosync::allow_sync_expr!(..)";
        errors.push(syn::Error::new(asyncness.span, msg));
    }
    for other in item.attrs() {
        if let Some(other_name) = AttrName::of_path(other.path()) {
            errors.push(syn::Error::new_spanned(
                other,
                conflict_message(name, other_name),
            ));
        }
    }
    let combined = errors.into_iter().reduce(|mut all, e| {
        all.combine(e);
        all
    });
    combined.map_or(Ok(()), Err)
}

fn no_body_message(name: AttrName, foreign: bool) -> String {
    let instead = if foreign {
        "put it on the Rust functions that call this foreign function"
    } else {
        "put it on each implementation of this method"
    };
    format!(
        "#[{}] needs a function body: {instead} (only #[synchronizes] is accepted on a \
         declaration, as a marker for the lint)",
        name.as_str()
    )
}

fn conflict_message(name: AttrName, other: AttrName) -> String {
    use AttrName::*;
    match (name, other) {
        _ if name == other => format!("duplicate #[{}] attribute", name.as_str()),
        (NoSync, Synchronizes) | (Synchronizes, NoSync) => {
            "a function cannot be both #[no_sync] and #[synchronizes]: a hot path must not \
             block the host; remove one of them"
                .into()
        }
        (NoSync, AllowSync) | (AllowSync, NoSync) => {
            "#[no_sync] and #[allow_sync] contradict each other on one function; to allow one \
             wait inside a #[no_sync] function, use nosync::allow_sync_expr!(..) around it"
                .into()
        }
        _ => "#[synchronizes] and #[allow_sync] cannot be combined (the check would depend on \
              attribute order); keep #[synchronizes] and wrap the waits inside the body in \
              nosync::allow_sync_expr!(..)"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn check_item(name: AttrName, tokens: TokenStream) -> Result<(), String> {
        let Some(item) = FnItem::parse(tokens) else {
            return Err("not a function".into());
        };
        check(name, &item).map_err(|e| {
            let messages: Vec<String> = e.into_iter().map(|e| e.to_string()).collect();
            messages.join("\n")
        })
    }

    #[test]
    fn reads_every_function_shape() {
        let shapes = [
            quote!(
                pub fn f() {}
            ),
            quote!(
                fn m(&self) -> u8 {
                    1
                }
            ),
            quote!(default fn m(&self) {}),
            quote!(
                fn m(&self);
            ),
            quote!(
                fn m(&self) {
                    #![allow(unused)]
                }
            ),
            quote!(
                pub fn c_decl(x: i32) -> i32;
            ),
            quote!(
                pub async unsafe extern "C" fn g<T: Copy>(x: T) -> impl Sized
                where
                    T: Send,
                {
                    x
                }
            ),
        ];
        for tokens in shapes {
            assert!(FnItem::parse(tokens.clone()).is_some(), "{tokens}");
        }
        for tokens in [
            quote!(
                struct S;
            ),
            quote!(
                mod m {}
            ),
            quote!(fn f() -> ;),
            quote!(),
        ] {
            assert!(FnItem::parse(tokens.clone()).is_none(), "{tokens}");
        }
    }

    #[test]
    fn rejections() {
        use AttrName::*;
        let cases = [
            (
                NoSync,
                quote!(
                    const fn f() {}
                ),
                "cannot be used on a `const fn`",
            ),
            (
                Synchronizes,
                quote!(
                    const fn f() {}
                ),
                "cannot be used on a `const fn`",
            ),
            (
                NoSync,
                quote!(
                    fn m(&self);
                ),
                "#[no_sync] needs a function body",
            ),
            (
                AllowSync,
                quote!(
                    fn m(&self);
                ),
                "#[allow_sync] needs a function body",
            ),
            (
                AllowSync,
                quote!(
                    async fn f() {}
                ),
                "cannot be used on an `async fn`",
            ),
            (
                NoSync,
                quote!(
                    #[synchronizes]
                    fn f() {}
                ),
                "both #[no_sync] and #[synchronizes]",
            ),
            (
                Synchronizes,
                quote!(
                    #[nosync::no_sync]
                    fn f() {}
                ),
                "both #[no_sync]",
            ),
            (
                NoSync,
                quote!(
                    #[::nosync::allow_sync]
                    fn f() {}
                ),
                "contradict each other",
            ),
            (
                AllowSync,
                quote!(
                    #[no_sync]
                    fn f() {}
                ),
                "contradict each other",
            ),
            (
                AllowSync,
                quote!(
                    #[synchronizes]
                    fn f() {}
                ),
                "cannot be combined",
            ),
            (
                NoSync,
                quote!(
                    #[no_sync]
                    fn f() {}
                ),
                "duplicate #[no_sync] attribute",
            ),
        ];
        for (name, tokens, expected) in cases {
            let err = check_item(name, tokens.clone()).unwrap_err();
            assert!(err.contains(expected), "{name:?} on {tokens}: {err}");
        }
    }

    #[test]
    fn reports_every_problem_at_once() {
        let err = check_item(
            AttrName::NoSync,
            quote!(
                #[no_sync]
                const fn f() {}
            ),
        )
        .unwrap_err();
        assert_eq!(err.lines().count(), 2, "{err}");
    }

    #[test]
    fn accepts() {
        use AttrName::*;
        let cases = [
            (
                NoSync,
                quote!(
                    #[inline]
                    async fn f(&self) {}
                ),
            ),
            (
                Synchronizes,
                quote!(
                    fn m(&self);
                ),
            ),
            (
                Synchronizes,
                quote!(
                    async fn f() {}
                ),
            ),
            (
                AllowSync,
                quote!(
                    unsafe extern "C" fn f() {}
                ),
            ),
            (
                NoSync,
                quote!(
                    #[other::no_sync]
                    fn f() {}
                ),
            ),
        ];
        for (name, tokens) in cases {
            assert_eq!(
                check_item(name, tokens.clone()),
                Ok(()),
                "{name:?} on {tokens}"
            );
        }
    }
}
