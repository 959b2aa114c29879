//! The choke point: every driver call that can make the host wait is made here, and nowhere
//! else in the GPU module (`tests/gpu_coverage.rs` scans the other files for the blocking
//! cudarc calls).
//!
//! Each function first runs the check for its operation ([`Op`]), then makes the call:
//! - under [`Granularity::Declared`] it declares the operation's `May` site on every call;
//! - under [`Granularity::Actual`] it describes the call's actual arguments as [`Blocking`]
//!   facts and declares the `Does` site only when [`Blocking::waits`] says the host waits.
//!
//! The decisions are pure functions of the facts, tested without a GPU; the facts they rely on
//! were measured on an H200 with driver 580 (see `docs/gpu.md`).

use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaEvent, CudaModule, CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits, result,
};

use super::ops::{self, Op};
use super::{Error, Granularity, granularity};
use crate::guard::quiet::Checked;

use crate::guard::granularity::{PAGEABLE_INLINE_LIMIT, PAGEABLE_STAGING_CHUNKS, staging_chunks};

/// The facts about one blocking driver call that decide whether the host waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blocking {
    /// An explicit synchronization: stream, context or event synchronize, elapsed time.
    Synchronize,
    /// Driver or compiler work that stalls the host: context creation, NVRTC, module load,
    /// page-locking host memory.
    Setup,
    /// The built-in kernels, compiled and loaded on the first call per context.
    LoadBuiltins {
        /// Whether this context has them already.
        loaded: bool,
    },
    /// Creating a stream: cudarc synchronizes the context before its first one (while its
    /// event tracking is on).
    NewStream {
        /// Streams already created in the context.
        existing: usize,
        /// cudarc's event tracking (on by default).
        event_tracking: bool,
    },
    /// A device allocation: `cuMemAllocAsync` with memory pools, `cuMemAlloc` without.
    Alloc {
        /// Whether the device supports memory pools.
        pools: bool,
    },
    /// A device free: `cuMemFreeAsync` with memory pools; without, cudarc synchronizes the
    /// stream, then `cuMemFree`.
    Free {
        /// Whether the device supports memory pools.
        pools: bool,
    },
    /// A host→device copy from pageable memory.
    PageableToDevice {
        /// Bytes copied.
        bytes: usize,
        /// Staging buffers held by earlier pageable copies that have not run yet.
        staged_chunks: usize,
    },
    /// A device→host copy into pageable memory (it returns once the data has arrived).
    DeviceToPageable,
    /// Freeing page-locked memory: `cuMemFreeHost` waits for the whole device (measured).
    FreeHost,
    /// Host access to a pinned buffer whose copies are tracked by an event.
    PinnedAccess {
        /// Whether the last copy from or into the buffer is still pending.
        pending: bool,
    },
    /// Unloading a module.
    ModuleUnload,
}

impl Blocking {
    /// Whether the host waits for the device (or the driver) in this call.
    pub(crate) const fn waits(self) -> bool {
        match self {
            Blocking::Synchronize | Blocking::Setup | Blocking::DeviceToPageable => true,
            Blocking::LoadBuiltins { loaded } => !loaded,
            Blocking::NewStream {
                existing,
                event_tracking,
            } => existing == 0 && event_tracking,
            Blocking::Alloc { pools } | Blocking::Free { pools } => !pools,
            Blocking::PageableToDevice {
                bytes,
                staged_chunks,
            } => {
                bytes > PAGEABLE_INLINE_LIMIT
                    && staging_chunks(bytes).saturating_add(staged_chunks) > PAGEABLE_STAGING_CHUNKS
            }
            Blocking::PinnedAccess { pending } => pending,
            Blocking::ModuleUnload | Blocking::FreeHost => true,
        }
    }
}

/// Pageable uploads of one context whose copies may not have run yet: they still hold the
/// driver's staging buffers. Each upload records an event after itself; completed ones are
/// forgotten at the next upload (a non-blocking event query each).
#[derive(Debug, Default)]
pub(crate) struct Staging {
    pending: Mutex<Vec<(CudaEvent, usize)>>,
}

impl Staging {
    fn staged_chunks(&self) -> usize {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|(event, _)| !matches!(event.try_is_complete(), Ok(true)));
        pending.iter().map(|(_, chunks)| chunks).sum()
    }

    fn staged(&self, stream: &CudaStream, bytes: usize) -> Result<(), Error> {
        let chunks = staging_chunks(bytes);
        if chunks > 0 {
            let event = stream.record_event(None)?;
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            pending.push((event, chunks));
        }
        Ok(())
    }
}

/// The check, for operations that can return the error.
#[track_caller]
#[inline]
pub(crate) fn gate(op: &'static Op, waits: bool) -> Result<Checked, Error> {
    match granularity() {
        Granularity::Declared => crate::declare_sync(&op.may)?,
        Granularity::Actual if waits => crate::declare_sync(&op.does)?,
        Granularity::Actual => {}
    }
    Ok(Checked::new())
}

/// The check, for `Drop` implementations: never panics.
#[track_caller]
fn gate_in_drop(op: &'static Op, waits: bool) -> Checked {
    match granularity() {
        Granularity::Declared => crate::declare_sync_in_drop(&op.may),
        Granularity::Actual if waits => crate::declare_sync_in_drop(&op.does),
        Granularity::Actual => {}
    }
    Checked::new()
}

fn usage(op: &'static Op, message: String) -> Error {
    Error::usage(op.name(), message)
}

fn byte_len<T>(len: usize) -> usize {
    len.saturating_mul(std::mem::size_of::<T>())
}

// ---- context, streams, modules -------------------------------------------------------------

pub(crate) fn context_new(ordinal: usize) -> Result<Arc<CudaContext>, Error> {
    let _checked = gate(&ops::GPU_NEW, Blocking::Setup.waits())?;
    Ok(CudaContext::new(ordinal)?)
}

pub(crate) fn context_synchronize(ctx: &CudaContext) -> Result<(), Error> {
    let _checked = gate(&ops::GPU_SYNCHRONIZE, Blocking::Synchronize.waits())?;
    Ok(ctx.synchronize()?)
}

pub(crate) fn new_stream(ctx: &Arc<CudaContext>) -> Result<Arc<CudaStream>, Error> {
    let facts = Blocking::NewStream {
        existing: usize::from(ctx.is_in_multi_stream_mode()),
        event_tracking: ctx.is_event_tracking(),
    };
    let _checked = gate(&ops::GPU_NEW_STREAM, facts.waits())?;
    Ok(ctx.new_stream()?)
}

/// NVRTC compile and module load. `facts` is `Setup` for user modules and
/// `LoadBuiltins { loaded: false }` for the built-in kernels.
pub(crate) fn compile_and_load(
    op: &'static Op,
    facts: Blocking,
    ctx: &Arc<CudaContext>,
    name: &str,
    src: &str,
) -> Result<Arc<CudaModule>, Error> {
    let _checked = gate(op, facts.waits())?;
    if !super::library_present(&super::NVRTC_NAMES) {
        return Err(Error::Unavailable(format!(
            "libnvrtc (NVRTC) was not found (looked for {:?} on the loader's search path)",
            super::NVRTC_NAMES
        )));
    }
    let (major, minor) = ctx.compute_capability()?;
    let opts = cudarc::nvrtc::CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
        name: Some(name.to_owned()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(src, opts).map_err(|e| Error::Compile {
        name: name.to_owned(),
        log: compile_log(&e),
    })?;
    Ok(ctx.load_module(ptx)?)
}

fn compile_log(e: &cudarc::nvrtc::CompileError) -> String {
    match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => {
            log.to_string_lossy().trim().to_owned()
        }
        other => format!("{other:?}"),
    }
}

/// Drops the last handle of a module: `cuModuleUnload`.
pub(crate) fn module_unload_in_drop(op: &'static Op, module: Arc<CudaModule>) {
    let last = Arc::strong_count(&module) == 1;
    let _checked = gate_in_drop(op, last && Blocking::ModuleUnload.waits());
    drop(module);
}

pub(crate) fn stream_synchronize(stream: &CudaStream) -> Result<(), Error> {
    let _checked = gate(&ops::STREAM_SYNCHRONIZE, Blocking::Synchronize.waits())?;
    Ok(stream.synchronize()?)
}

// ---- device memory -------------------------------------------------------------------------

fn alloc_facts(stream: &CudaStream) -> Blocking {
    Blocking::Alloc {
        pools: stream.context().has_async_alloc(),
    }
}

pub(crate) fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
    op: &'static Op,
    stream: &Arc<CudaStream>,
    len: usize,
) -> Result<CudaSlice<T>, Error> {
    let _checked = gate(op, alloc_facts(stream).waits())?;
    Ok(stream.alloc_zeros(len)?)
}

/// An allocation the caller overwrites completely before any read.
///
/// # Safety
/// The contents are uninitialised until written.
pub(crate) unsafe fn alloc_uninit<T: DeviceRepr>(
    op: &'static Op,
    stream: &Arc<CudaStream>,
    len: usize,
) -> Result<CudaSlice<T>, Error> {
    let _checked = gate(op, alloc_facts(stream).waits())?;
    // SAFETY: the memory is uninitialised; the caller writes all of it before any read (this
    // fn's contract).
    Ok(unsafe { stream.alloc(len) }?)
}

pub(crate) fn clone_htod<T: DeviceRepr>(
    op: &'static Op,
    staging: &Staging,
    stream: &Arc<CudaStream>,
    src: &[T],
) -> Result<CudaSlice<T>, Error> {
    let bytes = byte_len::<T>(src.len());
    let copy = Blocking::PageableToDevice {
        bytes,
        staged_chunks: staging.staged_chunks(),
    };
    let _checked = gate(op, alloc_facts(stream).waits() || copy.waits())?;
    let slice = stream.clone_htod(src)?;
    staging.staged(stream, bytes)?;
    Ok(slice)
}

pub(crate) fn memcpy_htod<T: DeviceRepr>(
    op: &'static Op,
    staging: &Staging,
    stream: &Arc<CudaStream>,
    src: &[T],
    dst: &mut CudaSlice<T>,
) -> Result<(), Error> {
    if src.len() != dst.len() {
        let message = format!("source has {} elements, buffer {}", src.len(), dst.len());
        return Err(usage(op, message));
    }
    let bytes = byte_len::<T>(src.len());
    let copy = Blocking::PageableToDevice {
        bytes,
        staged_chunks: staging.staged_chunks(),
    };
    let _checked = gate(op, copy.waits())?;
    stream.memcpy_htod(src, dst)?;
    staging.staged(stream, bytes)
}

pub(crate) fn clone_dtoh<T: DeviceRepr>(
    op: &'static Op,
    stream: &Arc<CudaStream>,
    src: &CudaSlice<T>,
) -> Result<Vec<T>, Error> {
    let _checked = gate(op, Blocking::DeviceToPageable.waits())?;
    Ok(stream.clone_dtoh(src)?)
}

pub(crate) fn clone_dtod<T: DeviceRepr>(
    op: &'static Op,
    stream: &Arc<CudaStream>,
    src: &CudaSlice<T>,
) -> Result<CudaSlice<T>, Error> {
    let _checked = gate(op, alloc_facts(stream).waits())?;
    Ok(stream.clone_dtod(src)?)
}

/// Frees device memory from `DeviceBuffer`'s `Drop`.
pub(crate) fn free_device_in_drop<T>(slice: CudaSlice<T>) {
    let facts = Blocking::Free {
        pools: slice.context().has_async_alloc(),
    };
    let _checked = gate_in_drop(&ops::BUFFER_DROP, facts.waits());
    drop(slice);
}

// ---- pinned host memory and events ---------------------------------------------------------

/// Page-locked, zeroed host memory of `len` elements.
pub(crate) fn malloc_host<T: ValidAsZeroBits>(
    ctx: &CudaContext,
    len: usize,
) -> Result<*mut T, Error> {
    let op = &ops::PINNED_NEW;
    let bytes = len
        .checked_mul(std::mem::size_of::<T>())
        .filter(|b| *b <= isize::MAX as usize)
        .ok_or_else(|| usage(op, format!("{len} elements overflow the address space")))?;
    let _checked = gate(op, Blocking::Setup.waits())?;
    ctx.bind_to_thread()?;
    // SAFETY: flags 0 (cached, not write-combined: the host reads it); the size is checked.
    let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }?.cast::<T>();
    // SAFETY: `ptr` holds at least `bytes` bytes; all-zero bits are a valid `T`.
    unsafe { std::ptr::write_bytes(ptr, 0, len) };
    Ok(ptr)
}

/// Waits (checked) for the pinned buffer's last copy before host access.
pub(crate) fn pinned_wait(op: &'static Op, event: &CudaEvent) -> Result<(), Error> {
    let pending = !event.try_is_complete()?;
    let _checked = gate(op, Blocking::PinnedAccess { pending }.waits())?;
    if pending {
        event.synchronize()?;
    }
    Ok(())
}

/// Frees a pinned buffer from its `Drop`: `cuMemFreeHost` waits for all work queued on the
/// device (measured), which covers the buffer's pending copy too.
///
/// # Safety
/// `ptr` came from [`malloc_host`] and is not used afterwards.
pub(crate) unsafe fn free_host_in_drop<T>(ctx: &CudaContext, ptr: *mut T) {
    let _checked = gate_in_drop(&ops::PINNED_DROP, Blocking::FreeHost.waits());
    ctx.record_err(ctx.bind_to_thread());
    // SAFETY: `ptr` came from `cuMemHostAlloc` (`malloc_host`) and is freed once, here; no
    // copy still uses it, since `cuMemFreeHost` waits for all work queued on the device.
    ctx.record_err(unsafe { result::free_host(ptr.cast()) });
}

pub(crate) fn event_synchronize(event: &CudaEvent) -> Result<(), Error> {
    let _checked = gate(&ops::EVENT_SYNCHRONIZE, Blocking::Synchronize.waits())?;
    Ok(event.synchronize()?)
}

pub(crate) fn event_elapsed_ms(start: &CudaEvent, end: &CudaEvent) -> Result<f32, Error> {
    let _checked = gate(&ops::EVENT_ELAPSED_MS, Blocking::Synchronize.waits())?;
    Ok(start.elapsed_ms(end)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(facts: Blocking, expected: bool) {
        assert_eq!(facts.waits(), expected, "{facts:?}");
    }

    #[test]
    fn explicit_synchronization_always_waits() {
        check(Blocking::Synchronize, true);
        check(Blocking::Setup, true);
        check(Blocking::DeviceToPageable, true);
        check(Blocking::ModuleUnload, true);
    }

    #[test]
    fn pageable_upload_waits_when_the_staging_buffers_are_taken() {
        let upload = |bytes, staged_chunks| Blocking::PageableToDevice {
            bytes,
            staged_chunks,
        };
        const MIB: usize = 1 << 20;
        check(upload(0, 0), false);
        check(upload(PAGEABLE_INLINE_LIMIT, usize::MAX), false);
        check(upload(2 * MIB, 0), false);
        check(upload(2 * MIB + 1, 0), true);
        check(upload(4 * MIB, 0), true);
        check(upload(MIB, 1), false);
        check(upload(MIB, 2), true);
        check(upload(128 << 10, 1), false);
        check(upload(128 << 10, 2), true);
        assert_eq!(staging_chunks(PAGEABLE_INLINE_LIMIT), 0);
        assert_eq!(staging_chunks(PAGEABLE_INLINE_LIMIT + 1), 1);
        assert_eq!(staging_chunks(3 * MIB / 2), 2);
    }

    #[test]
    fn freeing_pinned_memory_always_waits() {
        check(Blocking::FreeHost, true);
    }

    #[test]
    fn memory_pools_decide_alloc_and_free() {
        check(Blocking::Alloc { pools: true }, false);
        check(Blocking::Alloc { pools: false }, true);
        check(Blocking::Free { pools: true }, false);
        check(Blocking::Free { pools: false }, true);
    }

    #[test]
    fn only_the_first_tracked_stream_synchronizes_the_context() {
        let first = Blocking::NewStream {
            existing: 0,
            event_tracking: true,
        };
        check(first, true);
        check(
            Blocking::NewStream {
                existing: 1,
                event_tracking: true,
            },
            false,
        );
        check(
            Blocking::NewStream {
                existing: 0,
                event_tracking: false,
            },
            false,
        );
    }

    #[test]
    fn pinned_access_waits_only_for_a_pending_copy() {
        check(Blocking::PinnedAccess { pending: true }, true);
        check(Blocking::PinnedAccess { pending: false }, false);
        check(Blocking::LoadBuiltins { loaded: false }, true);
        check(Blocking::LoadBuiltins { loaded: true }, false);
    }
}
