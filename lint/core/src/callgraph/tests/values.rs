//! Constant arguments (`callgraph::walk::values`): a callee given `true`/`false`, or a
//! struct literal with such fields, for a parameter it cannot change follows only the
//! branch of an `if` they decide, and passes them on with the parameter.

use crate::test_support::*;

#[test]
fn a_branch_a_constant_argument_rules_out_is_not_followed() {
    let src = with_prelude(
        "pub struct Mode { pub ignore: bool, pub flush: bool }\n\
         fn command(s: &CudaStream, mode: Mode) { if mode.flush { s.synchronize().unwrap(); } }\n\
         fn no_inputs(s: &CudaStream, mode: Mode) { command(s, mode) }\n\
         fn quick(s: &CudaStream, quick: bool) { if !quick { s.synchronize().unwrap(); } else {} }\n\
         fn changed(s: &CudaStream, mut wait: bool) { wait = !wait; if wait { s.synchronize().unwrap(); } }\n\
         fn shadowed(s: &CudaStream, wait: bool) { let wait = true; if wait { s.synchronize().unwrap(); } }\n\
         #[no_sync] fn stage(s: &CudaStream) { no_inputs(s, Mode { ignore: true, flush: false }); quick(s, true); }\n\
         #[no_sync] fn read(s: &CudaStream) { no_inputs(s, Mode { ignore: false, flush: true }); }\n\
         #[no_sync] fn unknown(s: &CudaStream, m: Mode) { command(s, m); }\n\
         #[no_sync] fn slow(s: &CudaStream) { quick(s, false); }\n\
         #[no_sync] fn others(s: &CudaStream) { changed(s, false); shadowed(s, false); }\n",
    );
    // `stage` passes `flush: false` on to `command` and `quick: true`: nothing; the others
    // pass `flush: true`, an unknown mode, `quick: false`, or a value the callee changes.
    insta::assert_snapshot!(chains(&src), @"
    11:38 sync-in-no-sync: `read` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::read -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 11:38 t::read (exact)
      via 6:44 t::no_inputs (exact)
      via 5:60 t::command (exact)
    12:50 sync-in-no-sync: `unknown` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::unknown -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 12:50 t::unknown (exact)
      via 5:60 t::command (exact)
    13:38 sync-in-no-sync: `slow` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::slow -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 13:38 t::slow (exact)
      via 7:55 t::quick (exact)
    14:40 sync-in-no-sync: `others` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::others -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 14:40 t::others (exact)
      via 8:72 t::changed (exact)
    14:59 sync-in-no-sync: `others` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      t::others -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 14:59 t::others (exact)
      via 9:72 t::shadowed (exact)
    ");
}

/// A burn-like `Config`: its derive writes `new` with the fields' `#[config(default)]`s.
const BURN_CORE: &str = "pub mod config { pub trait Config {} }\n\
pub mod nn {\n\
\x20   use crate::config::Config;\n\
\x20   use cudarc::driver::CudaStream;\n\
\x20   pub enum Layout { Row, Col }\n\
\x20   #[derive(Config, Debug)]\n\
\x20   pub struct LinearConfig {\n\
\x20       pub d: usize,\n\
\x20       #[config(default = \"Layout::Row\")]\n\
\x20       pub layout: Layout,\n\
\x20       #[config(default = false)]\n\
\x20       pub transposed: bool,\n\
\x20   }\n\
\x20   impl LinearConfig {\n\
\x20       pub fn init(&self, s: &CudaStream) {\n\
\x20           match self.layout { Layout::Row => {} Layout::Col => { s.synchronize().unwrap(); } }\n\
\x20           if self.transposed { s.synchronize().unwrap(); }\n\
\x20       }\n\
\x20   }\n\
}\n";

#[test]
fn a_derived_constructor_s_defaults_decide_matches_and_branches() {
    let app = "use nosync::no_sync;\nuse cudarc::driver::CudaStream;\nuse burn_core::nn::LinearConfig;\n\
        #[no_sync] fn defaults(s: &CudaStream) { LinearConfig::new(3).init(s); }\n\
        #[no_sync] fn unknown(c: &LinearConfig, s: &CudaStream) { c.init(s); }\n";
    let files = [("app/src/lib.rs", app), ("core/src/lib.rs", BURN_CORE)];
    let crates = [("app", "app/src/lib.rs"), ("burn_core", "core/src/lib.rs")];
    // `LinearConfig::new(3)` has `layout: Layout::Row` and `transposed: false`: neither
    // the `Col` arm nor the `if` is taken; a config of unknown fields takes both.
    insta::assert_snapshot!(chains_tree(&files, &crates, &[(0, 1)]), @"
    app/src/lib.rs:5:61 sync-in-no-sync: `unknown` is #[no_sync] but reaches a host-blocking call: `CudaStream::synchronize`
      = this call reaches `cudarc::driver::CudaStream::synchronize`, which blocks the host
      app::unknown -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
      via 5:61 app::unknown (exact)
      via 16:70 burn_core::nn::LinearConfig::init (exact)
    ");
}
