//! The expression-level escapes of the `nosync` crate: an intended wait inside a hot path.

use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Token};

/// One of the escapes, by how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Escape {
    /// `nosync::allow_sync(|| ..)`: the closure runs in an allow scope.
    AllowSync,
    /// `nosync::allow_sync_once(|| ..)`: the first run of each call site is allowed.
    AllowSyncOnce,
    /// `nosync::allow_sync_expr!(expr)`: the expression runs in an allow scope; `?` and
    /// `return` inside keep their meaning.
    AllowSyncExpr,
}

impl Escape {
    /// The function escape called `name` (the last segment of the called path).
    pub fn of_fn_name(name: &str) -> Option<Escape> {
        match name {
            "allow_sync" => Some(Escape::AllowSync),
            "allow_sync_once" => Some(Escape::AllowSyncOnce),
            _ => None,
        }
    }

    /// The macro escape called `name` (the last segment of the macro's path).
    pub fn of_macro_name(name: &str) -> Option<Escape> {
        (name == "allow_sync_expr").then_some(Escape::AllowSyncExpr)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Escape::AllowSync => "allow_sync",
            Escape::AllowSyncOnce => "allow_sync_once",
            Escape::AllowSyncExpr => "allow_sync_expr",
        }
    }

    /// The body of `allow_sync_expr!(..)`: exactly one expression, as the macro's `$e:expr`
    /// matcher takes it; `mac` is where the error for an empty body points.
    pub fn parse_macro_body(tokens: TokenStream, mac: Span) -> syn::Result<Expr> {
        if tokens.is_empty() {
            return Err(syn::Error::new(
                mac,
                "allow_sync_expr! needs an expression: allow_sync_expr!(stream.synchronize()?)",
            ));
        }
        syn::parse2::<Expr>(tokens).map_err(|e| {
            let msg = format!(
                "allow_sync_expr! takes one expression (wrap several in a block: \
                 allow_sync_expr!({{ a; b }})): {e}"
            );
            syn::Error::new(e.span(), msg)
        })
    }

    /// The arguments of `allow_sync(f)` / `allow_sync_once(f)`: exactly one, the closure;
    /// `call` is where the error for a wrong count points.
    pub fn check_fn_args(
        self,
        args: &Punctuated<Expr, Token![,]>,
        call: Span,
    ) -> syn::Result<&Expr> {
        match (args.len(), args.first()) {
            (1, Some(f)) => Ok(f),
            (n, _) => Err(syn::Error::new(
                call,
                format!(
                    "{}(..) takes one argument, the closure to run (`{0}(|| ..)`), not {n}",
                    self.as_str()
                ),
            )),
        }
    }
}
