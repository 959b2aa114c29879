//! `Stream`: a queue of device work; allocations and uploads start here.

use std::sync::Arc;

use cudarc::driver::{CudaStream, DeviceRepr, ValidAsZeroBits};

use super::choke;
use super::module::{Kernel, Launch};
use super::{DeviceBuffer, Error, Event, Gpu, PinnedBuffer, ops};

/// A CUDA stream (the default stream or a created one). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Stream {
    gpu: Gpu,
    inner: Arc<CudaStream>,
}

impl Stream {
    pub(crate) fn new(gpu: Gpu, inner: Arc<CudaStream>) -> Stream {
        Stream { gpu, inner }
    }

    /// The device this stream belongs to.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Waits for all work queued on this stream. Blocks.
    pub fn synchronize(&self) -> Result<(), Error> {
        choke::stream_synchronize(&self.inner)
    }

    /// A zeroed device buffer of `len` elements (asynchronous with memory pools).
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<DeviceBuffer<T>, Error> {
        let slice = choke::alloc_zeros(&ops::STREAM_ALLOC_ZEROS, &self.inner, len)?;
        Ok(DeviceBuffer::new(self.clone(), slice))
    }

    /// A device buffer holding a copy of `src` (host→device from pageable memory). Returns
    /// before the copy runs up to 64 KiB, and while the driver's staging buffers (two of 1 MiB,
    /// shared with earlier uploads that have not run yet) can take it; beyond, it waits for the
    /// stream's queued work. For uploads in a hot path use [`Stream::from_pinned`].
    pub fn from_host<T: DeviceRepr>(&self, src: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let staging = self.gpu.staging();
        let slice = choke::clone_htod(&ops::STREAM_FROM_HOST, staging, &self.inner, src)?;
        Ok(DeviceBuffer::new(self.clone(), slice))
    }

    /// A device buffer holding a copy of a pinned buffer (asynchronous at any size).
    pub fn from_pinned<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        src: &PinnedBuffer<T>,
    ) -> Result<DeviceBuffer<T>, Error> {
        // SAFETY: `upload_pinned` below overwrites every element before anything reads them.
        let slice =
            unsafe { choke::alloc_uninit(&ops::STREAM_FROM_PINNED, &self.inner, src.len()) }?;
        let mut buf = DeviceBuffer::new(self.clone(), slice);
        buf.upload_pinned(src)?;
        Ok(buf)
    }

    /// Starts a kernel launch on this stream; add arguments, then [`Launch::launch`].
    pub fn launch<'a>(&'a self, kernel: &'a Kernel) -> Launch<'a> {
        Launch::new(self.inner.launch_builder(kernel.cuda_function()))
    }

    /// Records the work queued so far into `event` (enqueues; does not wait).
    pub fn record_event(&self, event: &Event) -> Result<(), Error> {
        event.record(self)
    }

    /// Makes this stream's later work wait for `event` (the device waits, not the host).
    pub fn wait_event(&self, event: &Event) -> Result<(), Error> {
        Ok(self.inner.wait(event.cuda_event())?)
    }

    /// The underlying cudarc stream, for work nosync does not wrap. Calls made through it are
    /// not checked.
    pub fn cuda_stream(&self) -> &Arc<CudaStream> {
        &self.inner
    }
}
