//! cudarc 0.19's blocking APIs (the built-in sinks), by canonical path (see
//! [`super::cudarc`] for the canonical form and cudarc's types).

/// When a sink blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    Always,
    /// Blocks only when argument `arg` (0-based, not counting `self`) is pageable host
    /// memory (`Vec`, slice, array); a `PinnedHostSlice` destination is asynchronous.
    PageableDst {
        arg: usize,
    },
}

pub use crate::diagnostics::SinkKind;

/// A built-in sink.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinSink {
    /// Canonical path: `cudarc::driver::CudaStream::synchronize`.
    pub path: &'static str,
    pub reason: &'static str,
    pub condition: Condition,
    pub kind: SinkKind,
}

const fn sink(path: &'static str, reason: &'static str) -> BuiltinSink {
    BuiltinSink {
        path,
        reason,
        condition: Condition::Always,
        kind: SinkKind::Blocks,
    }
}

const fn setup(path: &'static str, reason: &'static str) -> BuiltinSink {
    BuiltinSink {
        kind: SinkKind::Setup,
        ..sink(path, reason)
    }
}

/// cudarc 0.19's host-blocking APIs.
pub const CUDARC_SINKS: &[BuiltinSink] = &[
    sink(
        "cudarc::driver::CudaStream::synchronize",
        "waits for all work queued on the stream",
    ),
    sink(
        "cudarc::driver::CudaStream::clone_dtoh",
        "copies device memory into a new pageable `Vec`, which waits for the copy to finish",
    ),
    sink(
        "cudarc::driver::CudaStream::memcpy_dtov",
        "copies device memory into a new pageable `Vec`, which waits for the copy to finish",
    ),
    BuiltinSink {
        path: "cudarc::driver::CudaStream::memcpy_dtoh",
        reason: "copies device memory into pageable host memory, which waits for the copy to finish",
        condition: Condition::PageableDst { arg: 1 },
        kind: SinkKind::Blocks,
    },
    sink(
        "cudarc::driver::CudaContext::synchronize",
        "waits for all work on every stream of the context",
    ),
    setup(
        "cudarc::driver::CudaContext::load_module",
        "loads a module into the context (`cuModuleLoadData`), which synchronizes the device",
    ),
    setup(
        "cudarc::driver::CudaModule::load_function",
        "looks a kernel up in a loaded module (`cuModuleGetFunction`); with lazy loading (the default since CUDA 12.2) its first use loads the kernel, which may synchronize the device",
    ),
    setup(
        "cudarc::driver::CudaContext::new",
        "creates or retains the device's primary context: driver initialisation, hundreds of milliseconds",
    ),
    setup(
        "cudarc::driver::CudaContext::new_stream",
        "creates a stream (`cuStreamCreate`); the context's first extra stream synchronizes the context",
    ),
    setup(
        "cudarc::driver::CudaContext::new_stream_with_priority",
        "creates a stream (`cuStreamCreate`); the context's first extra stream synchronizes the context",
    ),
    setup(
        "cudarc::driver::CudaStream::fork",
        "creates a stream (`cuStreamCreate`) and makes it wait on this one",
    ),
    setup(
        "cudarc::nvrtc::compile_ptx",
        "compiles CUDA C++ with NVRTC on the host: milliseconds to seconds",
    ),
    setup(
        "cudarc::nvrtc::compile_ptx_with_opts",
        "compiles CUDA C++ with NVRTC on the host: milliseconds to seconds",
    ),
    sink(
        "cudarc::driver::CudaEvent::synchronize",
        "waits until the event has completed",
    ),
    sink(
        "cudarc::driver::CudaEvent::elapsed_ms",
        "waits for both events to complete to measure the time between them",
    ),
    sink(
        "cudarc::driver::PinnedHostSlice::as_slice",
        "waits for the event guarding the pinned buffer",
    ),
    sink(
        "cudarc::driver::PinnedHostSlice::as_mut_slice",
        "waits for the event guarding the pinned buffer",
    ),
    sink(
        "cudarc::driver::PinnedHostSlice::as_ptr",
        "waits for the event guarding the pinned buffer",
    ),
    sink(
        "cudarc::driver::PinnedHostSlice::as_mut_ptr",
        "waits for the event guarding the pinned buffer",
    ),
    sink(
        "cudarc::driver::result::stream::synchronize",
        "`cuStreamSynchronize`: waits for all work on the stream",
    ),
    sink(
        "cudarc::driver::result::ctx::synchronize",
        "`cuCtxSynchronize`: waits for all work in the context",
    ),
    sink(
        "cudarc::driver::result::event::synchronize",
        "`cuEventSynchronize`: waits until the event has completed",
    ),
    sink(
        "cudarc::driver::sys::cuStreamSynchronize",
        "waits for all work on the stream",
    ),
    sink(
        "cudarc::driver::sys::cuCtxSynchronize",
        "waits for all work in the context",
    ),
    sink(
        "cudarc::driver::sys::cuEventSynchronize",
        "waits until the event has completed",
    ),
];

/// cudarc 0.19's types whose `Drop` blocks the host, by their `drop` method's path: a value
/// of the type dropped in a hot path (at its scope's end, by `let _ =`, by `drop(x)`) reaches it.
///
/// `CudaSlice`'s `Drop` is not here: it frees with `cuMemFreeAsync` (no wait) on every device
/// with memory pools, and waits (`synchronize` + `cuMemFree`) only on devices without them; the
/// lint cannot know the device, and a `possible` finding for every dropped device buffer would
/// bury the real waits. The runtime's `nosync::gpu::DeviceBuffer` checks it at run time.
pub const CUDARC_DROPS: &[BuiltinSink] = &[sink(
    "cudarc::driver::PinnedHostSlice::drop",
    "waits for the buffer's last use (`cuEventSynchronize`), then frees page-locked memory with `cuMemFreeHost`, which waits for the device",
)];

/// Method names distinctive enough to be matched by name alone on an unknown receiver.
pub const NAME_ONLY_OK: &[&str] = &[
    "synchronize",
    "clone_dtoh",
    "memcpy_dtov",
    "memcpy_dtoh",
    "elapsed_ms",
    "load_module",
];
