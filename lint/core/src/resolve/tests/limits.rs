//! Bounded work on hostile input: name lookup in linear time.

use crate::test_support::*;

/// Guards against exponential name lookup: a mesh of modules that glob each other (and a
/// crate that does not exist) made every failed lookup re-search the mesh with a fresh
/// visited set at each level (12 modules: minutes). Each member search is done once per query.
#[test]
fn glob_meshes_resolve_in_linear_time() {
    let k = 12;
    let mut src = String::from("use nosync::{no_sync, synchronizes};\n");
    for i in 0..k {
        let (a, b) = ((i + 1) % k, (i + 2) % k);
        src.push_str(&format!(
            "pub mod m{i} {{ pub use super::*; pub use crate::m{a}::*; pub use m{b}::*; use nowhere{i}::*; }}\n"
        ));
    }
    src.push_str(&format!(
        "pub mod m{k} {{ #[synchronizes] pub fn deep_sink() {{}} }}\npub use m{k}::*;\n"
    ));
    src.push_str("#[no_sync] pub fn r() { m5::deep_sink(); missing(); ");
    for i in 0..24 {
        // Each distinct unresolvable multi-segment path searched the whole mesh anew.
        src.push_str(&format!("Missing{i}::f(); m{}::missing{i}(); ", i % k));
    }
    src.push_str("}\n");
    insta::assert_snapshot!(chains(&src), @"
    16:25 sync-in-no-sync: `r` is #[no_sync] but reaches a host-blocking call: `deep_sink`
      = this call reaches `t::m12::deep_sink`, which blocks the host
      t::r -> t::m12::deep_sink (Blocks, exact, Deny)
      via 16:25 t::r (exact)
    ");
}
