//! Uses the hook and `nosync::gpu` over this crate graph's cudarc.

pub fn install() -> Result<nosync::hook::Hook, nosync::hook::HookError> {
    nosync::hook::install()
}

pub fn gpu() -> Result<nosync::gpu::Gpu, nosync::gpu::Error> {
    nosync::gpu::Gpu::new(0)
}
