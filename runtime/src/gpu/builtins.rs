//! `Kernels`: the built-in kernels of one context, compiled and loaded once; their launches
//! are in `kernels.rs`.

use std::sync::Arc;

use cudarc::driver::CudaContext;

use super::choke::Blocking;
use super::{Error, Kernel, Module, ops};

const SOURCE: &str = include_str!("kernels.cu");

/// The built-in kernels of one context; get them with [`Gpu::kernels`](super::Gpu::kernels).
#[derive(Debug)]
pub struct Kernels {
    pub(super) fill: Kernel,
    pub(super) scale: Kernel,
    pub(super) axpy: Kernel,
    pub(super) add: Kernel,
    pub(super) mul: Kernel,
    pub(super) sum: Kernel,
    pub(super) dot: Kernel,
    pub(super) argmax: Kernel,
    pub(super) spin: Kernel,
    // Dropped last: the kernels above hold the module too.
    _module: Module,
}

impl Kernels {
    pub(crate) fn load(ctx: &Arc<CudaContext>) -> Result<Kernels, Error> {
        let facts = Blocking::LoadBuiltins { loaded: false };
        let module = Module::load(&ops::GPU_KERNELS, facts, ctx, "nosync_builtins", SOURCE)?;
        Ok(Kernels {
            fill: module.kernel("nosync_fill")?,
            scale: module.kernel("nosync_scale")?,
            axpy: module.kernel("nosync_axpy")?,
            add: module.kernel("nosync_add")?,
            mul: module.kernel("nosync_mul")?,
            sum: module.kernel("nosync_sum")?,
            dot: module.kernel("nosync_dot")?,
            argmax: module.kernel("nosync_argmax")?,
            spin: module.kernel("nosync_spin")?,
            _module: module,
        })
    }
}
