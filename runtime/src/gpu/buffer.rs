//! `DeviceBuffer<T>`: device memory tied to the stream it was allocated on.

use std::mem::ManuallyDrop;

use cudarc::driver::{
    CudaSlice, DevicePtr, DeviceRepr, LaunchArgs, PushKernelArg, ValidAsZeroBits, result,
};

use super::{Error, KernelArg, PinnedBuffer, Stream, choke, ops};

/// `len` elements of `T` in device memory. Its operations run on the stream it was allocated
/// on; dropping it frees the memory on that stream (asynchronously with memory pools).
#[derive(Debug)]
pub struct DeviceBuffer<T> {
    stream: Stream,
    slice: ManuallyDrop<CudaSlice<T>>,
}

impl<T> DeviceBuffer<T> {
    pub(crate) fn new(stream: Stream, slice: CudaSlice<T>) -> Self {
        DeviceBuffer {
            stream,
            slice: ManuallyDrop::new(slice),
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }

    /// The stream this buffer's operations run on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The underlying cudarc slice, for work nosync does not wrap (not checked).
    pub fn cuda_slice(&self) -> &CudaSlice<T> {
        &self.slice
    }

    pub(crate) fn cuda_slice_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Copies the buffer into a new `Vec` (device→host into pageable memory). Blocks: waits
    /// for all work queued on the stream, then for the copy.
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        choke::clone_dtoh(&ops::BUFFER_TO_VEC, self.stream.cuda_stream(), &self.slice)
    }

    /// Overwrites the buffer from pageable host memory (`src.len()` must equal `len()`).
    /// Returns before the copy runs up to 64 KiB, and while the driver's staging buffers (two of
    /// 1 MiB, shared with earlier uploads that have not run yet) can take it; beyond, it waits
    /// for the stream.
    pub fn upload(&mut self, src: &[T]) -> Result<(), Error> {
        let stream = self.stream.cuda_stream().clone();
        let staging = self.stream.gpu().staging();
        choke::memcpy_htod(&ops::BUFFER_UPLOAD, staging, &stream, src, &mut self.slice)
    }

    /// A new buffer with a copy of this one (device→device, asynchronous).
    pub fn try_clone(&self) -> Result<DeviceBuffer<T>, Error> {
        let stream = self.stream.cuda_stream();
        let slice = choke::clone_dtod(&ops::BUFFER_TRY_CLONE, stream, &self.slice)?;
        Ok(DeviceBuffer::new(self.stream.clone(), slice))
    }

    /// Copies `src` into this buffer (device→device, asynchronous, on this buffer's stream).
    pub fn copy_from(&mut self, src: &DeviceBuffer<T>) -> Result<(), Error> {
        if src.len() != self.len() {
            let message = format!(
                "source has {} elements, destination {}",
                src.len(),
                self.len()
            );
            return Err(Error::usage("DeviceBuffer::copy_from", message));
        }
        let stream = self.stream.cuda_stream().clone();
        Ok(stream.memcpy_dtod(&*src.slice, &mut *self.slice)?)
    }
}

impl<T: DeviceRepr + ValidAsZeroBits> DeviceBuffer<T> {
    /// Starts copying the buffer into `dst` (device→host into page-locked memory) and returns
    /// at once. `dst` records the copy: [`PinnedBuffer::read`] waits for it,
    /// [`PinnedBuffer::try_read`] and [`PinnedBuffer::is_ready`] never wait.
    pub fn to_host_async(&self, dst: &mut PinnedBuffer<T>) -> Result<(), Error> {
        if dst.len() < self.len() {
            let message = format!(
                "pinned buffer holds {} elements, source {}",
                dst.len(),
                self.len()
            );
            return Err(Error::usage("DeviceBuffer::to_host_async", message));
        }
        let stream = self.stream.cuda_stream();
        stream.context().bind_to_thread()?;
        // The device must not overwrite the pinned memory while an earlier copy still uses it.
        stream.wait(dst.event())?;
        let len = self.len();
        let (src, record_src) = self.slice.device_ptr(stream);
        // SAFETY: `dst` holds at least `len` elements and stays alive and un-accessed by the
        // host until its event (recorded below, after the copy) completes: `read`, `write` and
        // `Drop` wait for it.
        let host = unsafe { std::slice::from_raw_parts_mut(dst.host_ptr(), len) };
        // SAFETY: `src` is this buffer's `CudaSlice<T>` of `len` elements, alive while `self` is
        // borrowed and ordered on `stream` by `device_ptr` (whose guard records the read below);
        // the driver writes `host` later, before `dst`'s event, which every host access waits for.
        unsafe { result::memcpy_dtoh_async(host, src, stream.cu_stream()) }?;
        drop(record_src);
        Ok(dst.event().record(stream)?)
    }

    /// Overwrites the buffer from a pinned buffer (host→device, asynchronous at any size).
    pub fn upload_pinned(&mut self, src: &PinnedBuffer<T>) -> Result<(), Error> {
        if src.len() != self.len() {
            let message = format!(
                "pinned buffer holds {} elements, destination {}",
                src.len(),
                self.len()
            );
            return Err(Error::usage("DeviceBuffer::upload_pinned", message));
        }
        let stream = self.stream.cuda_stream().clone();
        stream.context().bind_to_thread()?;
        // Wait (on the device) for an earlier copy into `src` to finish before reading it.
        stream.wait(src.event())?;
        let len = self.len();
        let (dst, record_dst) =
            cudarc::driver::DevicePtrMut::device_ptr_mut(&mut *self.slice, &stream);
        // SAFETY: `src` holds `len` elements; the host cannot write them before the event
        // recorded below completes (`write` waits for it).
        let host = unsafe { std::slice::from_raw_parts(src.host_ptr().cast_const(), len) };
        // SAFETY: `dst` is this buffer's `CudaSlice<T>` of `len` elements, borrowed mutably and
        // ordered on `stream` by `device_ptr_mut`; the pinned `host` does not move or get freed
        // or written before `src`'s event, recorded after the copy (`write` and `Drop` wait).
        unsafe { result::memcpy_htod_async(dst, host, stream.cu_stream()) }?;
        drop(record_dst);
        Ok(src.event().record(&stream)?)
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: `slice` is not used after this point.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        choke::free_device_in_drop(slice);
    }
}

impl Stream {
    /// A zeroed device buffer of `len` elements (asynchronous with memory pools).
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        len: usize,
    ) -> Result<DeviceBuffer<T>, Error> {
        let slice = choke::alloc_zeros(&ops::STREAM_ALLOC_ZEROS, self.cuda_stream(), len)?;
        Ok(DeviceBuffer::new(self.clone(), slice))
    }

    /// A device buffer holding a copy of `src` (host→device from pageable memory). Returns
    /// before the copy runs up to 64 KiB, and while the driver's staging buffers (two of 1 MiB,
    /// shared with earlier uploads that have not run yet) can take it; beyond, it waits for the
    /// stream's queued work. For uploads in a hot path use [`Stream::from_pinned`].
    pub fn from_host<T: DeviceRepr>(&self, src: &[T]) -> Result<DeviceBuffer<T>, Error> {
        let staging = self.gpu().staging();
        let slice = choke::clone_htod(&ops::STREAM_FROM_HOST, staging, self.cuda_stream(), src)?;
        Ok(DeviceBuffer::new(self.clone(), slice))
    }

    /// A device buffer holding a copy of a pinned buffer (asynchronous at any size).
    pub fn from_pinned<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        src: &PinnedBuffer<T>,
    ) -> Result<DeviceBuffer<T>, Error> {
        // SAFETY: `upload_pinned` below overwrites every element before anything reads them.
        let slice = unsafe {
            choke::alloc_uninit(&ops::STREAM_FROM_PINNED, self.cuda_stream(), src.len())
        }?;
        let mut buf = DeviceBuffer::new(self.clone(), slice);
        buf.upload_pinned(src)?;
        Ok(buf)
    }
}

impl<'a, T> KernelArg<'a> for &'a DeviceBuffer<T> {
    fn push(self, args: &mut LaunchArgs<'a>) {
        args.arg(self.cuda_slice());
    }
}

impl<'a, T> KernelArg<'a> for &'a mut DeviceBuffer<T> {
    fn push(self, args: &mut LaunchArgs<'a>) {
        args.arg(self.cuda_slice_mut());
    }
}
