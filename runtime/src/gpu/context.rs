//! `Gpu`: one device's primary context, its streams and its built-in kernels.

use std::sync::{Arc, OnceLock};

use cudarc::driver::CudaContext;

use super::builtins::Kernels;
use super::choke::{self, Blocking};
use super::{Error, Event, Module, ops};

/// A CUDA device's primary context. Cheap to clone (all clones share the context and its
/// built-in kernels).
#[derive(Debug, Clone)]
pub struct Gpu {
    inner: Arc<GpuInner>,
}

#[derive(Debug)]
struct GpuInner {
    ctx: Arc<CudaContext>,
    kernels: OnceLock<Arc<Kernels>>,
    staging: choke::Staging,
}

impl Gpu {
    /// Retains device `ordinal`'s primary context. Blocks (driver initialisation): call it
    /// during setup. Fails with [`Error::Unavailable`] instead of panicking when there is no
    /// CUDA driver.
    pub fn new(ordinal: usize) -> Result<Gpu, Error> {
        super::probe().map_err(Error::Unavailable)?;
        let ctx = choke::context_new(ordinal)?;
        Ok(Gpu {
            inner: Arc::new(GpuInner {
                ctx,
                kernels: OnceLock::new(),
                staging: choke::Staging::default(),
            }),
        })
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ctx.ordinal()
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> Result<String, Error> {
        Ok(self.inner.ctx.name()?)
    }

    /// Whether the device supports memory pools (then allocations and frees are asynchronous).
    pub fn has_memory_pools(&self) -> bool {
        self.inner.ctx.has_async_alloc()
    }

    /// Waits for all work queued in the context, on every stream. Blocks.
    pub fn synchronize(&self) -> Result<(), Error> {
        choke::context_synchronize(&self.inner.ctx)
    }

    /// A new event; `timing` enables [`Event::elapsed_ms`].
    pub fn new_event(&self, timing: bool) -> Result<Event, Error> {
        Event::new(&self.inner.ctx, timing)
    }

    /// The built-in kernels of this context. The first call compiles them with NVRTC and loads
    /// the module (blocks, tens of milliseconds): call it during setup.
    pub fn kernels(&self) -> Result<Arc<Kernels>, Error> {
        if let Some(k) = self.inner.kernels.get() {
            drop(choke::gate(
                &ops::GPU_KERNELS,
                Blocking::LoadBuiltins { loaded: true }.waits(),
            )?);
            return Ok(Arc::clone(k));
        }
        let loaded = Arc::new(Kernels::load(&self.inner.ctx)?);
        // Two threads may race to load; the first stored wins and the other module is dropped.
        Ok(Arc::clone(self.inner.kernels.get_or_init(|| loaded)))
    }

    pub(crate) fn staging(&self) -> &choke::Staging {
        &self.inner.staging
    }

    /// The underlying cudarc context, for work nosync does not wrap. Calls made through it
    /// are not checked.
    pub fn cuda_context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }
}

impl Module {
    /// Compiles `src` (CUDA C; kernels declared `extern "C" __global__`) for `gpu`'s
    /// architecture and loads it. Blocks.
    pub fn compile(gpu: &Gpu, name: &str, src: &str) -> Result<Module, Error> {
        let ctx = gpu.cuda_context();
        Module::load(&ops::MODULE_COMPILE, Blocking::Setup, ctx, name, src)
    }
}
