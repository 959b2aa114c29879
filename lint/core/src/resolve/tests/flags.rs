//! Library flags (`known::models`' `[[flag]]`): a branch on candle's `FORCE_DMMV` follows
//! the arm of its default while no analysed crate names its setter, both arms once one does.

use crate::test_support::*;

/// A `candle_core` whose quantized matmul waits on the arm its flag's default does not take.
const CANDLE: &str = "pub mod quantized { pub mod cuda {\n\
use cudarc::driver::CudaStream;\n\
use std::sync::atomic::{AtomicBool, Ordering};\n\
static FORCE_DMMV: AtomicBool = AtomicBool::new(false);\n\
pub fn set_force_dmmv(f: bool) { FORCE_DMMV.store(f, Ordering::Relaxed) }\n\
pub fn matmul(s: &CudaStream) {\n\
    if FORCE_DMMV.load(Ordering::Relaxed) { s.synchronize(); } else { launch(); }\n\
}\n\
pub fn matmul_vec(s: &CudaStream) {\n\
    if !FORCE_DMMV.load(Ordering::Relaxed) { launch(); } else { s.synchronize(); }\n\
}\n\
fn launch() {}\n\
} }\n";

const APP: &str = "use nosync::no_sync;\nuse cudarc::driver::CudaStream;\n\
use candle_core::quantized::cuda::{matmul, matmul_vec};\n\
#[no_sync] fn step(s: &CudaStream) { matmul(s); matmul_vec(s); }\n";

fn flagged(library: &str, app: &str) -> String {
    let app = app.replace("candle_core", library);
    let files = [("app/src/lib.rs", &*app), ("candle/src/lib.rs", CANDLE)];
    let crates = [("app", "app/src/lib.rs"), (library, "candle/src/lib.rs")];
    let out = chains_tree(&files, &crates, &[(0, 1)]);
    let chains: Vec<&str> = out.lines().filter(|l| l.contains(" -> ")).collect();
    chains.join("\n")
}

#[test]
fn a_flag_nothing_sets_keeps_its_default_arm() {
    insta::assert_snapshot!(flagged("candle_core", APP), @"");
}

#[test]
fn a_crate_that_names_the_setter_takes_both_arms() {
    let app =
        format!("{APP}pub fn init() {{ candle_core::quantized::cuda::set_force_dmmv(true); }}\n");
    insta::assert_snapshot!(flagged("candle_core", &app), @"
    app::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
    app::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
    ");
}

#[test]
fn the_same_static_in_another_crate_is_no_flag() {
    insta::assert_snapshot!(flagged("mycandle", APP), @"
    app::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
    app::step -> cudarc::driver::CudaStream::synchronize (Blocks, exact, Deny)
    ");
}
