//! `Stream`: a queue of device work; allocations and uploads start here.

use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::choke;
use super::module::{Kernel, Launch};
use super::{Error, Event, Gpu};

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

impl Gpu {
    /// The context's default (null) stream.
    pub fn default_stream(&self) -> Stream {
        Stream::new(self.clone(), self.cuda_context().default_stream())
    }

    /// A new non-blocking stream. The first one created in a context blocks: cudarc
    /// synchronizes the context before switching to multi-stream event tracking.
    pub fn new_stream(&self) -> Result<Stream, Error> {
        let stream = choke::new_stream(self.cuda_context())?;
        Ok(Stream::new(self.clone(), stream))
    }
}

impl Event {
    /// Records the work queued so far on `stream` (enqueues; does not wait).
    pub fn record(&self, stream: &Stream) -> Result<(), Error> {
        Ok(self.cuda_event().record(stream.cuda_stream())?)
    }
}
