//! Modules compiled at run time with NVRTC, their kernels and kernel launches.

use std::mem::ManuallyDrop;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
};

use super::choke::{self, Blocking};
use super::{Error, ops};

/// A module of kernels compiled from CUDA C source with NVRTC and loaded into a context.
/// Compiling blocks (NVRTC + module load): do it during setup. Dropping the last handle of a
/// module (this or one of its [`Kernel`]s) unloads it.
#[derive(Debug)]
pub struct Module {
    name: String,
    module: ManuallyDrop<Arc<CudaModule>>,
}

impl Module {
    pub(crate) fn load(
        op: &'static ops::Op,
        facts: Blocking,
        ctx: &Arc<CudaContext>,
        name: &str,
        src: &str,
    ) -> Result<Module, Error> {
        let module = choke::compile_and_load(op, facts, ctx, name, src)?;
        Ok(Module {
            name: name.to_owned(),
            module: ManuallyDrop::new(module),
        })
    }

    /// The module's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kernel `name` (an `extern "C"` function of the module). Does not wait.
    pub fn kernel(&self, name: &str) -> Result<Kernel, Error> {
        let func = self.module.load_function(name)?;
        Ok(Kernel {
            name: name.to_owned(),
            func: ManuallyDrop::new(func),
            module: ManuallyDrop::new(Arc::clone(&self.module)),
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: `module` is taken once, here in `drop`, and not used after.
        let module = unsafe { ManuallyDrop::take(&mut self.module) };
        choke::module_unload_in_drop(&ops::MODULE_DROP, module);
    }
}

/// A kernel of a loaded [`Module`]; it keeps its module loaded.
#[derive(Debug)]
pub struct Kernel {
    name: String,
    func: ManuallyDrop<CudaFunction>,
    module: ManuallyDrop<Arc<CudaModule>>,
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The underlying cudarc function, for launches nosync does not wrap.
    pub fn cuda_function(&self) -> &CudaFunction {
        &self.func
    }
}

impl Clone for Kernel {
    fn clone(&self) -> Self {
        Kernel {
            name: self.name.clone(),
            func: self.func.clone(),
            module: self.module.clone(),
        }
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: `func` is dropped once, here, and not used after; it goes first so that its
        // module handle is gone when the check below asks whether this is the last one.
        unsafe { ManuallyDrop::drop(&mut self.func) };
        // SAFETY: `module` is taken once, here, and not used after.
        let module = unsafe { ManuallyDrop::take(&mut self.module) };
        choke::module_unload_in_drop(&ops::KERNEL_DROP, module);
    }
}

/// Something that can be passed to a kernel: a device buffer (as a pointer) or a plain value.
pub trait KernelArg<'a> {
    /// Adds `self` to the launch's arguments.
    fn push(self, args: &mut LaunchArgs<'a>);
}

impl<'a, T: DeviceRepr> KernelArg<'a> for &'a T {
    fn push(self, args: &mut LaunchArgs<'a>) {
        args.arg(self);
    }
}

/// A kernel launch being built: [`Stream::launch`](super::Stream::launch), then
/// [`arg`](Self::arg) for each parameter in order, then [`launch`](Self::launch).
#[derive(Debug)]
pub struct Launch<'a> {
    args: LaunchArgs<'a>,
}

impl<'a> Launch<'a> {
    pub(crate) fn new(args: LaunchArgs<'a>) -> Self {
        Launch { args }
    }

    /// Adds the next kernel parameter.
    pub fn arg(&mut self, arg: impl KernelArg<'a>) -> &mut Self {
        arg.push(&mut self.args);
        self
    }

    /// Enqueues the kernel; returns without waiting.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameters in number, order and type, and the
    /// kernel must stay within the buffers it is given.
    pub unsafe fn launch(&mut self, cfg: LaunchConfig) -> Result<(), Error> {
        // SAFETY: the arguments match the kernel's parameters and the kernel stays within its
        // buffers (this fn's contract).
        unsafe { self.args.launch(cfg) }?;
        Ok(())
    }
}
