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

/// A built-in sink.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinSink {
    /// Canonical path: `cudarc::driver::CudaStream::synchronize`.
    pub path: &'static str,
    pub reason: &'static str,
    pub condition: Condition,
}

const fn sink(path: &'static str, reason: &'static str) -> BuiltinSink {
    BuiltinSink {
        path,
        reason,
        condition: Condition::Always,
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
    },
    sink(
        "cudarc::driver::CudaContext::synchronize",
        "waits for all work on every stream of the context",
    ),
    sink(
        "cudarc::driver::CudaContext::load_module",
        "loads a module into the context, which synchronizes the device",
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

/// Method names distinctive enough to be matched by name alone on an unknown receiver.
pub const NAME_ONLY_OK: &[&str] = &[
    "synchronize",
    "clone_dtoh",
    "memcpy_dtov",
    "memcpy_dtoh",
    "elapsed_ms",
    "load_module",
];
