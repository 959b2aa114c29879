//! Uses the hook, so that `cargo check` compiles it in this crate graph.

pub fn install() -> Result<nosync::hook::Hook, nosync::hook::HookError> {
    nosync::hook::install()
}

/// The application's own cudarc, as the stack configures it.
pub fn devices() -> usize {
    cudarc::driver::CudaContext::device_count().map_or(0, |n| n as usize)
}
