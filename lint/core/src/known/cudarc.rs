//! What the lint knows of cudarc's types, 0.9 to 0.19: their names, the canonical path of each
//! (`cudarc::driver::CudaStream`, which is also `cudarc::driver::safe::CudaStream` and
//! `cudarc::driver::safe::core::CudaStream`) and the return types of common
//! constructors and accessors, so that receivers built from cudarc calls are typed.
//! cudarc is never parsed; its blocking APIs are in [`super::sinks`].

/// cudarc types, by the name code may use for them; all live at `cudarc::driver::<name>`.
pub const CUDARC_TYPES: &[&str] = &[
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
    // Before 0.16: the device, with its stream inside.
    "CudaDevice",
    // From 0.11: the driver library loaded at run time (`sys::lib()`), whose methods are
    // the raw calls.
    "Lib",
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
    // Before 0.16 (a method absent from a version is never called by code built on it, so
    // one table serves every version).
    ("CudaDevice", "new", "Result<Arc<CudaDevice>>"),
    ("CudaDevice", "new_with_stream", "Result<Arc<CudaDevice>>"),
    ("CudaSlice", "device", "Arc<CudaDevice>"),
    ("CudaDevice", "alloc", "Result<CudaSlice>"),
    ("CudaDevice", "alloc_zeros", "Result<CudaSlice>"),
    ("CudaDevice", "htod_copy", "Result<CudaSlice>"),
    ("CudaDevice", "htod_sync_copy", "Result<CudaSlice>"),
    ("CudaDevice", "dtod_copy", "Result<CudaSlice>"),
    ("CudaDevice", "dtoh_sync_copy", "Result<Vec>"),
    ("CudaDevice", "sync_reclaim", "Result<Vec>"),
    ("CudaDevice", "fork_default_stream", "Result<CudaStream>"),
    // `sys::lib()`, from 0.11.
    ("sys", "lib", "Lib"),
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
