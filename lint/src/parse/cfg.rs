//! `#[cfg(..)]` evaluation against the enabled features.
//!
//! `feature = "x"` is true when `x` is enabled for the crate, `test` is false (tests are
//! not hot paths, and `cargo build` does not compile them into the crate), `not`, `all`
//! and `any` combine as in rustc. Every other predicate (`unix`, `target_os = ..`,
//! `debug_assertions`, custom cfgs) is taken as **true**, so that code guarded by a
//! platform switch is analysed rather than silently skipped.

use std::collections::HashSet;
use syn::Meta;
use syn::punctuated::Punctuated;

/// What `#[cfg]` predicates see.
#[derive(Debug, Clone, Default)]
pub struct CfgCtx {
    pub features: HashSet<String>,
    /// Whether `cfg(test)` holds (false for the analysed build).
    pub test: bool,
}

impl CfgCtx {
    /// Whether every `#[cfg(..)]` among `attrs` holds.
    pub fn enabled(&self, attrs: &[syn::Attribute]) -> bool {
        attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .all(|a| match a.parse_args::<Meta>() {
                Ok(meta) => self.eval(&meta, 0),
                Err(_) => true,
            })
    }

    /// Whether the predicate `meta` (as in `cfg(meta)`) holds.
    pub fn holds(&self, meta: &Meta) -> bool {
        self.eval(meta, 0)
    }

    fn eval(&self, meta: &Meta, depth: usize) -> bool {
        if depth > 64 {
            return true;
        }
        match meta {
            Meta::Path(p) if p.is_ident("test") => self.test,
            Meta::Path(_) => true,
            Meta::NameValue(nv) if nv.path.is_ident("feature") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => self.features.contains(&s.value()),
                _ => true,
            },
            Meta::NameValue(_) => true,
            Meta::List(list) => {
                let args =
                    list.parse_args_with(Punctuated::<Meta, syn::Token![,]>::parse_terminated);
                let Ok(args) = args else { return true };
                let name = list.path.get_ident().map(|i| i.to_string());
                match name.as_deref() {
                    Some("not") => args.first().is_none_or(|m| !self.eval(m, depth + 1)),
                    Some("all") => args.iter().all(|m| self.eval(m, depth + 1)),
                    Some("any") => args.iter().any(|m| self.eval(m, depth + 1)),
                    _ => true,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(cfg: &str, features: &[&str]) -> bool {
        let ctx = CfgCtx {
            features: features.iter().map(|f| f.to_string()).collect(),
            test: false,
        };
        let item: syn::ItemFn = syn::parse_str(&format!("#[cfg({cfg})] fn f() {{}}")).unwrap();
        ctx.enabled(&item.attrs)
    }

    #[test]
    fn predicates() {
        assert!(holds("feature = \"cuda\"", &["cuda"]));
        assert!(!holds("feature = \"cuda\"", &[]));
        assert!(!holds("test", &[]));
        assert!(holds("not(test)", &[]));
        assert!(holds("unix", &[]));
        assert!(!holds("all(unix, feature = \"x\")", &[]));
        assert!(holds("any(test, feature = \"x\")", &["x"]));
    }
}
