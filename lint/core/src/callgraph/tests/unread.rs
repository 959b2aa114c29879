//! Calls on values whose type stops at a crate the lint does not read: a `Box<dyn Op>`
//! taken out of a third-party container (`petgraph`'s `StableGraph`, not analysed here:
//! its `node_weight_mut` has no known type) dispatches by the method's name to every impl
//! of the one trait used as `dyn` that declares it, downstream crates' included.

use crate::test_support::*;

const ENGINE: &str = "use nosync::no_sync;\n\
pub trait Op { fn process(&mut self, x: usize); }\n\
pub struct Engine { graph: petgraph::stable_graph::StableGraph<Box<dyn Op>, ()> }\n\
impl Engine {\n\
\x20   #[no_sync]\n\
\x20   pub fn run(&mut self, n: petgraph::graph::NodeIndex) {\n\
\x20       self.graph.node_weight_mut(n).unwrap().process(1);\n\
\x20   }\n\
}\n";

const GPU: &str = "use nosync::synchronizes;\n\
#[synchronizes] fn read_back() {}\n\
pub struct Readback;\n\
impl engine::Op for Readback { fn process(&mut self, _x: usize) { read_back() } }\n\
pub struct Launch;\n\
impl engine::Op for Launch { fn process(&mut self, _x: usize) {} }\n";

#[test]
fn a_dyn_op_out_of_an_unread_container_reaches_every_impl() {
    let files = [("engine/src/lib.rs", ENGINE), ("gpu/src/lib.rs", GPU)];
    let crates = [("engine", "engine/src/lib.rs"), ("gpu", "gpu/src/lib.rs")];
    insta::assert_snapshot!(chains_tree(&files, &crates, &[(1, 0)]), @"
    engine/src/lib.rs:7:48 possible-sync-in-no-sync: `run` is #[no_sync] but reaches a host-blocking call: `read_back`
      = this call reaches `gpu::read_back`, which blocks the host
      engine::Engine::run -> gpu::read_back (Blocks, name-only, Warn)
      via 7:48 engine::Engine::run (name-only)
      via 4:67 <gpu::Readback as engine::Op>::process (exact)
    ");
}

/// With two traits used as `dyn` that both declare `process`, the call is not guessed.
#[test]
fn a_method_of_two_dyn_traits_is_not_guessed() {
    let engine = format!(
        "{ENGINE}pub trait Stage {{ fn process(&mut self, x: usize); }}\npub fn stages(_s: &[Box<dyn Stage>]) {{}}\n"
    );
    let files = [
        ("engine/src/lib.rs", engine.as_str()),
        ("gpu/src/lib.rs", GPU),
    ];
    let crates = [("engine", "engine/src/lib.rs"), ("gpu", "gpu/src/lib.rs")];
    insta::assert_snapshot!(chains_tree(&files, &crates, &[(1, 0)]), @"");
}
