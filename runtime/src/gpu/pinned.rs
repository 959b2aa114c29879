//! `PinnedBuffer<T>`: page-locked host memory whose copies are tracked by an event.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaEvent, DeviceRepr, ValidAsZeroBits};

use super::{Error, Gpu, choke, ops};

/// `len` elements of `T` in page-locked host memory: the target of
/// [`DeviceBuffer::to_host_async`](super::DeviceBuffer::to_host_async) and the source of
/// [`DeviceBuffer::upload_pinned`](super::DeviceBuffer::upload_pinned). An event records the
/// last copy from or into it: host access waits for that copy ([`read`](Self::read),
/// [`write`](Self::write); `Drop` waits for the whole device) or returns `None` while it is pending
/// ([`try_read`](Self::try_read)).
///
/// Unlike cudarc's `PinnedHostSlice`, the event is recorded after every copy whatever the
/// context's stream mode, and the memory is cached (not write-combined), so host reads are fast.
#[derive(Debug)]
pub struct PinnedBuffer<T> {
    ptr: *mut T,
    len: usize,
    event: CudaEvent,
    ctx: Arc<CudaContext>,
}

// SAFETY: the buffer owns its memory like a `Box<[T]>`; the event and context are thread safe.
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
// SAFETY: shared access only reads, after waiting for the device's copies.
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}

impl<T: DeviceRepr + ValidAsZeroBits> PinnedBuffer<T> {
    /// `len` zeroed elements of page-locked memory. Blocks (page-locking): call it during setup.
    pub fn new(gpu: &Gpu, len: usize) -> Result<PinnedBuffer<T>, Error> {
        let ctx = Arc::clone(gpu.cuda_context());
        let event = ctx.new_event(None)?;
        let ptr = choke::malloc_host::<T>(&ctx, len)?;
        Ok(PinnedBuffer {
            ptr,
            len,
            event,
            ctx,
        })
    }
}

impl<T> PinnedBuffer<T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the last copy from or into the buffer has completed. Never waits.
    pub fn is_ready(&self) -> Result<bool, Error> {
        Ok(self.event.try_is_complete()?)
    }

    /// The contents, or `None` while a copy is pending. Never waits.
    pub fn try_read(&self) -> Result<Option<&[T]>, Error> {
        Ok(self.is_ready()?.then(|| self.contents()))
    }

    /// The contents, after waiting for a pending copy into the buffer. Blocks only while such
    /// a copy is pending.
    pub fn read(&self) -> Result<&[T], Error> {
        choke::pinned_wait(&ops::PINNED_READ, &self.event)?;
        Ok(self.contents())
    }

    /// Mutable contents, after waiting for a pending copy from or into the buffer. Blocks
    /// only while such a copy is pending.
    pub fn write(&mut self) -> Result<&mut [T], Error> {
        choke::pinned_wait(&ops::PINNED_WRITE, &self.event)?;
        // SAFETY: no copy uses the memory any more; `&mut self` excludes other host access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    fn contents(&self) -> &[T] {
        // SAFETY: the memory holds `len` initialised elements (zeroed at allocation, then
        // written by copies that have completed).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub(crate) fn host_ptr(&self) -> *mut T {
        self.ptr
    }

    pub(crate) fn event(&self) -> &CudaEvent {
        &self.event
    }
}

impl<T> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `choke::malloc_host` and is not used after this.
        unsafe { choke::free_host_in_drop(&self.ctx, self.ptr) };
    }
}
