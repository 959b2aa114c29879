//! std/core items by their canonical path: `Drop` is `core::ops::Drop` however it is
//! spelled, a user trait that happens to be called `Drop` is not.

use crate::test_support::*;

const SINK: &str = "#[synchronizes] fn w() {}\n";

/// Whether dropping a `G` at the end of the root reaches `w`, for an impl of `tr`.
fn drop_reaches_w(decl: &str, tr: &str) -> bool {
    let src = with_prelude(&format!(
        "{SINK}{decl}struct G;\nimpl {tr} for G {{ fn drop(&mut self) {{ w(); }} }}\n\
         #[no_sync] fn r() {{ let _g = G; }}\n"
    ));
    let out = check(&src);
    out.contains("sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `w`")
}

#[test]
fn drop_is_core_ops_drop_by_any_of_its_paths() {
    for tr in [
        "Drop",
        "std::ops::Drop",
        "core::ops::Drop",
        "::core::ops::Drop",
    ] {
        assert!(drop_reaches_w("", tr), "{tr}");
    }
    assert!(drop_reaches_w("use core::ops::Drop as D;\n", "D"));
}

#[test]
fn a_user_trait_named_drop_is_not_drop() {
    let user = [
        ("trait NoDrop { fn drop(&mut self); }\n", "NoDrop"),
        (
            "mod m { pub trait Drop { fn drop(&mut self); } }\nuse m::Drop;\n",
            "Drop",
        ),
        ("trait Drop { fn drop(&mut self); }\n", "Drop"),
    ];
    for (decl, tr) in user {
        assert!(!drop_reaches_w(decl, tr), "{decl}");
    }
}

#[test]
fn a_config_root_names_a_drop_impl_by_its_std_or_core_path() {
    let src = with_prelude(&format!(
        "{SINK}pub struct G;\nimpl Drop for G {{ fn drop(&mut self) {{ w(); }} }}\n\
         pub trait NoDrop {{ fn drop(&mut self); }}\npub struct H;\n\
         impl NoDrop for H {{ fn drop(&mut self) {{ w(); }} }}\n"
    ));
    for (root, found) in [
        ("<t::G as core::ops::Drop>::drop", true),
        ("<t::G as std::ops::Drop>::drop", true),
        ("<t::H as t::NoDrop>::drop", true),
        ("<t::H as core::ops::Drop>::drop", false),
    ] {
        let (cfg, sources, _) = config_from_toml(&format!("roots = [{root:?}]\n"));
        let out = render(&analyze_src(&src, &cfg, sources), false);
        let reported =
            out.contains("is a configured no-sync root but reaches a host-blocking call: `w`");
        assert_eq!(reported, found, "{root}: {out}");
        if !found {
            assert!(
                out.contains("config-error") && out.contains("no `impl std::Drop for t::H`"),
                "{root}: {out}"
            );
        }
    }
}
