//! Built-in knowledge of cudarc 0.19: its blocking APIs (sinks) and the return types
//! of its common constructors, so that receivers built from cudarc calls are typed.
//!
//! cudarc is never parsed. Its types are known by their canonical re-exported path
//! (`cudarc::driver::CudaStream`, which is also `cudarc::driver::safe::CudaStream` and
//! `cudarc::driver::safe::core::CudaStream`).

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

/// cudarc types, by the name code may use for them; all live at `cudarc::driver::<name>`.
const CUDARC_TYPES: &[&str] = &[
    "CudaStream",
    "CudaContext",
    "CudaEvent",
    "PinnedHostSlice",
    "CudaSlice",
    "CudaView",
    "CudaViewMut",
    "CudaModule",
    "CudaFunction",
    "CudaGraph",
    "LaunchArgs",
    "LaunchConfig",
    "DriverError",
];

/// (type, method, return type) of common cudarc constructors and accessors.
pub const CUDARC_RETURNS: &[(&str, &str, &str)] = &[
    ("CudaContext", "new", "Result<Arc<CudaContext>>"),
    ("CudaContext", "default_stream", "Arc<CudaStream>"),
    ("CudaContext", "new_stream", "Result<Arc<CudaStream>>"),
    ("CudaContext", "new_event", "Result<CudaEvent>"),
    ("CudaContext", "load_module", "Result<Arc<CudaModule>>"),
    ("CudaStream", "context", "Arc<CudaContext>"),
    ("CudaStream", "fork", "Result<Arc<CudaStream>>"),
    ("CudaStream", "record_event", "Result<CudaEvent>"),
    ("CudaStream", "alloc_zeros", "Result<CudaSlice>"),
    ("CudaStream", "clone_htod", "Result<CudaSlice>"),
    ("CudaStream", "clone_dtoh", "Result<Vec>"),
    ("CudaStream", "memcpy_dtov", "Result<Vec>"),
    ("CudaModule", "load_function", "Result<CudaFunction>"),
    ("CudaContext", "alloc_pinned", "Result<PinnedHostSlice>"),
    ("CudaContext", "per_thread_stream", "Arc<CudaStream>"),
    (
        "CudaContext",
        "new_stream_with_priority",
        "Result<Arc<CudaStream>>",
    ),
    ("CudaStream", "launch_builder", "LaunchArgs"),
    ("CudaStream", "alloc", "Result<CudaSlice>"),
    ("CudaStream", "memcpy_stod", "Result<CudaSlice>"),
    ("CudaStream", "clone_dtod", "Result<CudaSlice>"),
    ("LaunchArgs", "arg", "LaunchArgs"),
    ("CudaSlice", "stream", "Arc<CudaStream>"),
    ("CudaSlice", "context", "Arc<CudaContext>"),
    ("CudaEvent", "context", "Arc<CudaContext>"),
];

/// The canonical path of a cudarc path (`cudarc::driver::safe::core::CudaStream`
/// → `cudarc::driver::CudaStream`); other paths unchanged.
pub fn canonical_cudarc(path: &[String]) -> Vec<String> {
    if path.first().is_none_or(|s| s != "cudarc") {
        return path.to_vec();
    }
    if let Some(i) = path.iter().position(|s| CUDARC_TYPES.contains(&s.as_str())) {
        let mut out = vec!["cudarc".to_owned(), "driver".to_owned(), path[i].clone()];
        out.extend(path[i + 1..].iter().cloned());
        return out;
    }
    // `cudarc::driver::safe::result::..` is not a thing; strip `safe` where it is re-exported.
    path.iter().filter(|s| *s != "safe").cloned().collect()
}

/// Whether `name` is a cudarc type the lint knows.
pub fn is_cudarc_type(name: &str) -> bool {
    CUDARC_TYPES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(p: &str) -> String {
        let v: Vec<String> = p.split("::").map(str::to_owned).collect();
        canonical_cudarc(&v).join("::")
    }

    #[test]
    fn re_exports_are_one_type() {
        assert_eq!(
            canon("cudarc::driver::safe::CudaStream"),
            "cudarc::driver::CudaStream"
        );
        assert_eq!(
            canon("cudarc::driver::safe::core::CudaStream::synchronize"),
            "cudarc::driver::CudaStream::synchronize"
        );
        assert_eq!(
            canon("cudarc::driver::result::stream::synchronize"),
            "cudarc::driver::result::stream::synchronize"
        );
        assert_eq!(canon("serde::Serialize"), "serde::Serialize");
    }
}
