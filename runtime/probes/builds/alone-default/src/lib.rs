//! Uses the hook, so that `cargo check` compiles it in this crate graph.

pub fn install() -> Result<nosync::hook::Hook, nosync::hook::HookError> {
    nosync::hook::install()
}
