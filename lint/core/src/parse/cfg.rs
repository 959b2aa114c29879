//! `#[cfg(..)]` evaluation for the analysed build.
//!
//! `feature = "x"` is true when `x` is enabled for the crate; `test` is false (tests are
//! not hot paths, and `cargo build` does not compile them into the crate); `not`, `all`
//! and `any` combine as in rustc. The predicates rustc sets from the target (`unix`,
//! `windows`, `target_os = ..`, `target_arch = ..`, `target_feature = ..`, `panic = ..`,
//! ...) and `debug_assertions` are looked up in the [`TargetCfg`] the edge asked rustc for
//! (`rustc --print cfg`, with `--target` when one is given): absent, they are false, as
//! rustc has it. `debug_assertions` holds, as in cargo's dev profile. Any other name (a
//! cfg that a build script or `RUSTFLAGS` may set, `docsrs`) is taken as **true**, so that
//! the code it guards is analysed rather than silently skipped; so is every predicate
//! when rustc could not be asked ([`TargetCfg::default`]).

use std::collections::HashSet;
use std::sync::Arc;
use syn::Meta;
use syn::punctuated::Punctuated;

/// The cfgs of the target the analysed build is for: `rustc --print cfg`'s lines as data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetCfg {
    /// `(name, value)` of each cfg set (`("unix", None)`, `("target_os", Some("linux"))`);
    /// `None` when the target's cfgs are not known.
    set: Option<HashSet<(String, Option<String>)>>,
}

/// Names whose truth is the target's (or the profile's): absent from [`TargetCfg`], false.
const TARGET_NAMES: &[&str] = &[
    "unix",
    "windows",
    "target_os",
    "target_family",
    "target_arch",
    "target_env",
    "target_abi",
    "target_vendor",
    "target_endian",
    "target_pointer_width",
    "target_has_atomic",
    "target_has_atomic_load_store",
    "target_has_atomic_equal_alignment",
    "target_thread_local",
    "target_feature",
    "panic",
    "relocation_model",
    "sanitize",
    "debug_assertions",
    "overflow_checks",
    "ub_checks",
    "doc",
    "doctest",
    "miri",
];

impl TargetCfg {
    /// The target whose `rustc --print cfg` lines are `cfgs` (`(name, value)` each), in
    /// cargo's dev profile: `debug_assertions` set whatever rustc printed.
    pub fn new(cfgs: impl IntoIterator<Item = (String, Option<String>)>) -> TargetCfg {
        let mut set: HashSet<_> = cfgs.into_iter().collect();
        set.insert(("debug_assertions".to_owned(), None));
        TargetCfg { set: Some(set) }
    }

    /// The target whose cfgs are not known: every target predicate is taken as true.
    pub fn unknown() -> &'static TargetCfg {
        static UNKNOWN: TargetCfg = TargetCfg { set: None };
        &UNKNOWN
    }

    /// Whether the target's cfgs are known.
    pub fn is_known(&self) -> bool {
        self.set.is_some()
    }

    /// Whether the predicate `name` (= `value`) holds; `None` when the target does not
    /// decide it (a name rustc does not set, or an unknown target).
    fn decides(&self, name: &str, value: Option<&str>) -> Option<bool> {
        let set = self.set.as_ref()?;
        let named = TARGET_NAMES.contains(&name) || set.iter().any(|(n, _)| n == name);
        named.then(|| set.contains(&(name.to_owned(), value.map(str::to_owned))))
    }

    /// A digest of the cfgs, for cache keys (0 for an unknown target).
    pub fn key(&self) -> u128 {
        let Some(set) = &self.set else { return 0 };
        let mut lines: Vec<_> = set.iter().collect();
        lines.sort_unstable();
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for (name, value) in lines {
            h.update(name.as_bytes());
            h.update(b"=");
            h.update(value.as_deref().unwrap_or("\u{0}").as_bytes());
            h.update(b"\n");
        }
        h.digest128() | 1
    }
}

/// What `#[cfg]` predicates see.
#[derive(Debug, Clone, Default)]
pub struct CfgCtx {
    pub features: HashSet<String>,
    /// Whether `cfg(test)` holds (false for the analysed build).
    pub test: bool,
    /// The target's cfgs, shared by the crates of a run.
    pub target: Arc<TargetCfg>,
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
            Meta::Path(p) => self.target_holds(p, None),
            Meta::NameValue(nv) if nv.path.is_ident("feature") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => self.features.contains(&s.value()),
                _ => true,
            },
            Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => self.target_holds(&nv.path, Some(&s.value())),
                _ => true,
            },
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

    /// A predicate other than `feature` and `test`: the target's answer, else true.
    fn target_holds(&self, path: &syn::Path, value: Option<&str>) -> bool {
        let Some(name) = path.get_ident().map(|i| i.to_string()) else {
            return true;
        };
        self.target.decides(&name, value).unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rustc --print cfg`'s lines for x86_64-unknown-linux-gnu, trimmed.
    const LINUX: &str = "panic=\"unwind\"\ntarget_arch=\"x86_64\"\ntarget_family=\"unix\"\n\
                         target_feature=\"sse2\"\ntarget_os=\"linux\"\n\
                         target_pointer_width=\"64\"\nunix";

    fn linux() -> TargetCfg {
        TargetCfg::new(LINUX.lines().map(|l| match l.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.trim_matches('"').to_owned())),
            None => (l.to_owned(), None),
        }))
    }

    fn holds_on(target: TargetCfg, cfg: &str, features: &[&str]) -> bool {
        let ctx = CfgCtx {
            features: features.iter().map(|f| f.to_string()).collect(),
            test: false,
            target: Arc::new(target),
        };
        let item: syn::ItemFn = syn::parse_str(&format!("#[cfg({cfg})] fn f() {{}}")).unwrap();
        ctx.enabled(&item.attrs)
    }

    fn holds(cfg: &str, features: &[&str]) -> bool {
        holds_on(TargetCfg::default(), cfg, features)
    }

    #[test]
    fn predicates() {
        assert!(holds("feature = \"cuda\"", &["cuda"]));
        assert!(!holds("feature = \"cuda\"", &[]));
        assert!(!holds("test", &[]));
        assert!(holds("not(test)", &[]));
        assert!(!holds("all(unix, feature = \"x\")", &[]));
        assert!(holds("any(test, feature = \"x\")", &["x"]));
    }

    /// Without the target's cfgs, every target predicate is taken as true (so is its
    /// `not`'s operand: the code is analysed, `not(..)` left out).
    #[test]
    fn an_unknown_target_takes_its_predicates_as_true() {
        assert!(holds("unix", &[]));
        assert!(holds("windows", &[]));
        assert!(!holds("not(windows)", &[]));
        assert!(holds("target_os = \"macos\"", &[]));
    }

    #[test]
    fn target_predicates_are_the_targets() {
        let on = |cfg: &str| holds_on(linux(), cfg, &[]);
        assert!(on("unix"));
        assert!(!on("windows"));
        assert!(on("not(windows)"));
        assert!(on("target_os = \"linux\""));
        assert!(!on("target_os = \"macos\""));
        assert!(on("any(target_os = \"macos\", target_family = \"unix\")"));
        assert!(!on("all(unix, target_pointer_width = \"32\")"));
        assert!(on("target_feature = \"sse2\""));
        assert!(!on("target_feature = \"avx512f\""));
        assert!(on("panic = \"unwind\""));
        assert!(!on("target_env = \"msvc\""));
        assert!(!on("miri"));
        assert!(!on("doc"));
    }

    /// `debug_assertions` as in cargo's dev profile, whatever rustc printed.
    #[test]
    fn debug_assertions_hold() {
        assert!(holds_on(linux(), "debug_assertions", &[]));
        assert!(!holds_on(linux(), "not(debug_assertions)", &[]));
    }

    /// A cfg the target does not set and rustc does not own (a build script's, `docsrs`)
    /// is taken as true on any target.
    #[test]
    fn other_names_are_taken_as_true() {
        assert!(holds_on(linux(), "docsrs", &[]));
        assert!(holds_on(linux(), "has_cuda_12 = \"yes\"", &[]));
        assert!(!holds_on(linux(), "not(docsrs)", &[]));
    }
}
