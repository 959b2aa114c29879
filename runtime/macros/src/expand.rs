//! Code generation: the checked model in, the instrumented function out.
//!
//! Every expansion reaches the runtime only through `::nosync::__private`. Generated tokens carry
//! `Span::call_site()` (the attribute), so `#[track_caller]` locations and error messages point at
//! the attribute and lints treat the code as macro output; the locals and statics the expansion
//! introduces use `Span::mixed_site()`, so they can neither clash with nor be named by user code.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::ext::IdentExt;
use syn::{Block, GenericArgument, PathArguments, ReturnType, Signature, Type, parse_quote};

use crate::Model;
use crate::args::{Args, Kind};

/// Expands a checked model into the instrumented item.
pub(crate) fn expand(model: Model) -> TokenStream {
    let Model { args, mut item } = model;
    let sig = item.sig().clone();
    let item_attrs = item.attrs().to_vec();
    let name = sig.ident.unraw().to_string();
    let Some(body) = item.body_mut() else {
        // `#[synchronizes]` on a declaration: a marker for the lint, no code.
        return item.into_token_stream();
    };
    match args {
        Args::NoSync if sig.asyncness.is_some() => wrap_async(body, &name, &sig),
        Args::NoSyncCaptureSafe if sig.asyncness.is_some() => {
            let msg = "#[no_sync(capture_safe)] is not for an `async fn` (a capture belongs to \
                       one thread); use #[no_sync], or `nosync::capture_safe(|| ..)` in its body";
            return syn::Error::new(Span::call_site(), msg).to_compile_error();
        }
        Args::NoSync | Args::NoSyncCaptureSafe if returns_violation(&item_attrs, &sig) => {
            wrap_result(body, &scope_guard(&args, &name), &sig);
        }
        Args::NoSync | Args::NoSyncCaptureSafe => prepend(body, scope_guard(&args, &name)),
        Args::AllowSync { reason } => prepend(body, allow_guard(&name, &reason.to_token_stream())),
        Args::Synchronizes { kind, reason } => {
            let reason = reason.map_or_else(|| default_reason(kind), |r| r.to_token_stream());
            prepend(body, sync_check(&name, kind, &reason, &sig));
        }
    }
    item.into_token_stream()
}

fn prepend(body: &mut Block, stmt: TokenStream) {
    body.stmts.insert(0, parse_quote!(#stmt));
}

fn guard_ident() -> Ident {
    Ident::new("__nosync_guard", Span::mixed_site())
}

/// `let guard = forbid_fn("name");` (or `capture_safe_fn`) as the first statement.
fn scope_guard(args: &Args, name: &str) -> TokenStream {
    let guard = guard_ident();
    match args {
        Args::NoSyncCaptureSafe => {
            quote!(let #guard = ::nosync::__private::capture_safe_fn(#name);)
        }
        _ => quote!(let #guard = ::nosync::__private::forbid_fn(#name);),
    }
}

/// `let guard = allow_fn("name", "reason");` as the first statement.
fn allow_guard(name: &str, reason: &TokenStream) -> TokenStream {
    let guard = guard_ident();
    quote!(let #guard = ::nosync::__private::allow_fn(#name, #reason);)
}

/// Whether a `#[no_sync]` fn can return a violation that surfaces at the end of its scope (one
/// the CUPTI hook saw inside the driver): it returns a spelled-out `Result` without `impl Trait`,
/// and it is neither `unsafe` (the body would move into a closure, outside the unsafe context)
/// nor `#[track_caller]` (closures do not forward the caller's location).
fn returns_violation(attrs: &[syn::Attribute], sig: &Signature) -> bool {
    let tracked = attrs.iter().any(|a| a.path().is_ident("track_caller"));
    let named = match &sig.output {
        ReturnType::Type(_, ty) => !mentions_impl_trait(ty),
        ReturnType::Default => false,
    };
    returns_result(&sig.output) && named && sig.unsafety.is_none() && sig.abi.is_none() && !tracked
}

/// The body runs in a `move` closure called at once, its output type fixed by an unreachable
/// `return` (so `?` converts as before); before the scope ends, `finish` turns a violation kept
/// for the scope into the fn's `Err` when `E: From<SyncViolation>` (autoref specialisation: the
/// `ReturnViolation` impl on `Finish` is found before the `KeepViolation` impl on `&Finish`).
fn wrap_result(body: &mut Block, open: &TokenStream, sig: &Signature) {
    let ReturnType::Type(_, ty) = &sig.output else {
        return;
    };
    let (ret, result) = (
        Ident::new("__nosync_return", Span::mixed_site()),
        Ident::new("__nosync_result", Span::mixed_site()),
    );
    let stmts = &body.stmts;
    *body = parse_quote!({
        #open
        let #result = ::nosync::__private::call_once(move || {
            #[allow(unreachable_code, clippy::diverging_sub_expression)]
            if false {
                let #ret: #ty = loop {};
                return #ret;
            }
            #(#stmts)*
        });
        #[allow(unused_imports)]
        use ::nosync::__private::{KeepViolation as _, ReturnViolation as _};
        (&::nosync::__private::Finish::of(&#result)).finish(#result)
    });
}

/// An `async fn` body becomes `no_sync_future(async move { body }, "name").await`: the forbid
/// scope then holds during each poll of the body only, on whichever thread polls it. When the
/// return type can be named, an unreachable `return` of that type fixes the async block's output
/// type before the body is checked, so `?` in the body converts errors exactly as it did before.
fn wrap_async(body: &mut Block, name: &str, sig: &Signature) {
    let hint = match &sig.output {
        ReturnType::Type(_, ty) if !mentions_impl_trait(ty) => {
            let ret = Ident::new("__nosync_return", Span::mixed_site());
            quote! {
                #[allow(unreachable_code, clippy::diverging_sub_expression)]
                if false {
                    let #ret: #ty = loop {};
                    return #ret;
                }
            }
        }
        _ => TokenStream::new(),
    };
    let stmts = &body.stmts;
    *body = parse_quote!({
        ::nosync::__private::no_sync_future(async move { #hint #(#stmts)* }, #name).await
    });
}

/// A block declaring the function's `static SyncSite` and checking it.
fn sync_check(name: &str, kind: Kind, reason: &TokenStream, sig: &Signature) -> TokenStream {
    let site = Ident::new("__NOSYNC_SITE", Span::mixed_site());
    let kind = match kind {
        Kind::Does => quote!(Does),
        Kind::May => quote!(May),
    };
    let check = if returns_result(&sig.output) {
        quote!(::nosync::__private::declare_sync(&#site)?;)
    } else {
        quote!(::nosync::__private::declare_sync_or_panic(&#site);)
    };
    quote!({
        static #site: ::nosync::__private::SyncSite = ::nosync::__private::SyncSite::new(
            #name,
            #reason,
            ::nosync::__private::SyncKind::#kind,
        );
        #check
    })
}

/// The reason of a `#[synchronizes]` without one: the lint shows the same text.
fn default_reason(kind: Kind) -> TokenStream {
    let reason = kind.default_reason();
    quote!(#reason)
}

/// Whether the return type is spelled `Result<T, E>`, `std::result::Result<T, E>` or
/// `core::result::Result<T, E>`. Aliases (`io::Result<T>`, `anyhow::Result<T>`, a crate's own
/// `Result<T>`) cannot be seen through by a macro and count as "not a Result".
pub(crate) fn returns_result(output: &ReturnType) -> bool {
    let ReturnType::Type(_, ty) = output else {
        return false;
    };
    let mut ty = &**ty;
    while let Type::Paren(syn::TypeParen { elem, .. }) | Type::Group(syn::TypeGroup { elem, .. }) =
        ty
    {
        ty = elem;
    }
    let Type::Path(path) = ty else { return false };
    if path.qself.is_some() {
        return false;
    }
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let spelled = match segments.as_slice() {
        [one] => one == "Result" && path.path.leading_colon.is_none(),
        [krate, module, ty] => {
            matches!(krate.as_str(), "std" | "core") && module == "result" && ty == "Result"
        }
        _ => false,
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let PathArguments::AngleBracketed(generics) = &last.arguments else {
        return false;
    };
    let types = generics
        .args
        .iter()
        .filter(|a| matches!(a, GenericArgument::Type(_)));
    spelled && types.count() == 2
}

/// `let x: impl Trait` is not allowed, so a return type mentioning `impl` gets no type hint.
fn mentions_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    syn::visit::visit_type(&mut finder, ty);
    finder.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::AttrName;
    use quote::quote;

    /// Runs the whole pipeline on `item` and returns the expansion, whitespace-normalised.
    fn check(name: AttrName, args: TokenStream, item: TokenStream) -> String {
        crate::run(name, args, item).to_string()
    }

    #[test]
    fn no_sync_opens_a_forbid_scope_first() {
        let out = check(
            AttrName::NoSync,
            quote!(),
            quote!(
                fn step(x: u8) -> u8 {
                    x + 1
                }
            ),
        );
        let guard = out.find("forbid_fn (\"step\")").expect(&out);
        assert!(guard < out.find("x + 1").expect(&out), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }

    #[test]
    fn capture_safe_opens_its_scope_also_around_a_result_and_refuses_async() {
        let plain = check(
            AttrName::NoSync,
            quote!(capture_safe),
            quote!(
                fn step() {}
            ),
        );
        assert!(plain.contains("capture_safe_fn (\"step\")"), "{plain}");
        let result = check(
            AttrName::NoSync,
            quote!(capture_safe),
            quote!(
                fn step() -> Result<(), E> {
                    Ok(())
                }
            ),
        );
        assert!(result.contains("capture_safe_fn (\"step\")"), "{result}");
        assert!(result.contains("Finish :: of"), "{result}");
        assert!(!result.contains("forbid_fn"), "{result}");
        let future = check(
            AttrName::NoSync,
            quote!(capture_safe),
            quote!(
                async fn step() {}
            ),
        );
        assert!(future.contains("compile_error"), "{future}");
        assert!(future.contains("is not for an `async fn`"), "{future}");
    }

    #[test]
    fn raw_identifiers_are_named_without_prefix() {
        let out = check(
            AttrName::NoSync,
            quote!(),
            quote!(
                fn r#match() {}
            ),
        );
        assert!(out.contains("forbid_fn (\"match\")"), "{out}");
    }

    #[test]
    fn async_no_sync_wraps_the_body_in_a_future() {
        let item = quote!(
            async fn load(&self) -> Result<u8, E> {
                self.x()?;
                Ok(1)
            }
        );
        let out = check(AttrName::NoSync, quote!(), item);
        assert!(
            out.starts_with("async fn load (& self) -> Result < u8 , E >"),
            "{out}"
        );
        assert!(out.contains("no_sync_future (async move {"), "{out}");
        assert!(
            out.contains("let __nosync_return : Result < u8 , E > = loop { }"),
            "{out}"
        );
        assert!(out.ends_with(", \"load\") . await }"), "{out}");
        assert!(!out.contains("forbid_fn"), "{out}");
    }

    #[test]
    fn async_impl_trait_return_gets_no_type_hint() {
        let item = quote!(
            async fn it() -> impl Iterator<Item = u8> {
                [1].into_iter()
            }
        );
        let out = check(AttrName::NoSync, quote!(), item);
        assert!(out.contains("no_sync_future"), "{out}");
        assert!(!out.contains("__nosync_return"), "{out}");
    }

    #[test]
    fn synchronizes_declares_a_static_site() {
        let args = quote!(maybe, reason = "copies to the host");
        let out = check(
            AttrName::Synchronizes,
            args,
            quote!(
                fn read(&self) -> Vec<u8> {
                    v()
                }
            ),
        );
        assert!(out.contains("static __NOSYNC_SITE"), "{out}");
        assert!(
            out.contains("SyncSite :: new (\"read\" , \"copies to the host\""),
            "{out}"
        );
        assert!(out.contains("SyncKind :: May"), "{out}");
        assert!(
            out.contains("declare_sync_or_panic (& __NOSYNC_SITE)"),
            "{out}"
        );
    }

    #[test]
    fn synchronizes_returns_the_error_from_result_fns() {
        let item = quote!(
            fn read() -> std::result::Result<u8, Error> {
                Ok(1)
            }
        );
        let out = check(AttrName::Synchronizes, quote!(), item);
        assert!(out.contains("declare_sync (& __NOSYNC_SITE) ?"), "{out}");
        assert!(out.contains("\"declared #[synchronizes]\""), "{out}");
        assert!(out.contains("SyncKind :: Does"), "{out}");
    }

    #[test]
    fn synchronizes_on_a_declaration_is_a_marker() {
        let item = quote!(
            fn sync(&self) -> Result<(), E>;
        );
        let out = check(AttrName::Synchronizes, quote!(reason = "r"), item.clone());
        assert_eq!(out, item.to_string());
    }

    #[test]
    fn allow_sync_opens_an_allow_scope() {
        let out = check(
            AttrName::AllowSync,
            quote!(reason = "warm-up"),
            quote!(
                fn w() {}
            ),
        );
        assert!(out.contains("allow_fn (\"w\" , \"warm-up\")"), "{out}");
    }

    #[test]
    fn rejection_keeps_the_original_item() {
        let item = quote!(
            const fn f() -> u8 {
                1
            }
        );
        let out = check(AttrName::NoSync, quote!(), item.clone());
        assert!(out.starts_with(":: core :: compile_error !"), "{out}");
        assert!(out.ends_with(&item.to_string()), "{out}");
        let out = check(
            AttrName::NoSync,
            quote!(),
            quote!(
                struct S;
            ),
        );
        assert!(out.contains("can only be used on a function"), "{out}");
        assert!(out.ends_with("struct S ;"), "{out}");
    }

    #[test]
    fn result_spellings() {
        let yes: [ReturnType; 4] = [
            parse_quote!(-> Result<(), E>),
            parse_quote!(-> std::result::Result<u8, Box<dyn Error>>),
            parse_quote!(-> ::core::result::Result<T, E>),
            parse_quote!(-> (Result<T, E>)),
        ];
        let no: [ReturnType; 7] = [
            parse_quote!(),
            parse_quote!(-> io::Result<()>),
            parse_quote!(-> Result<()>),
            parse_quote!(-> Option<Result<(), E>>),
            parse_quote!(-> my::Result<T, E>),
            parse_quote!(-> <X as Tr>::Result<T, E>),
            parse_quote!(-> impl Future<Output = Result<(), E>>),
        ];
        for ty in yes {
            assert!(returns_result(&ty), "{}", ty.to_token_stream());
        }
        for ty in no {
            assert!(!returns_result(&ty), "{}", ty.to_token_stream());
        }
    }
}
