//! GPU operations over [cudarc] whose blocking calls check the nosync flag.
//!
//! Every public operation of this module either never makes the host wait, or checks the
//! thread's scope first (see `OPS`, the table the coverage test holds the API to, and
//! `docs/gpu.md`, the same table with the H200 measurements).
//!
//! Two granularities, both real:
//! - [`Granularity::Declared`]: each operation that *may* block declares its `SyncKind::May`
//!   site on every call, whatever its arguments. Code that passes this check passes on every
//!   device and driver.
//! - [`Granularity::Actual`] (the default): every blocking driver call goes through one choke
//!   point (`choke.rs`) that decides from the actual arguments (pinned or pageable memory, copy
//!   size, memory-pool support, a pending copy, the first stream of a context) whether the host
//!   *does* wait, and only then declares the operation's `SyncKind::Does` site.
//!
//! ```no_run
//! use nosync::gpu::{Gpu, LaunchConfig};
//! # fn main() -> Result<(), nosync::gpu::Error> {
//! let gpu = Gpu::new(0)?;                 // setup: blocks, outside the hot path
//! let kernels = gpu.kernels()?;           // NVRTC + module load, once per context
//! let stream = gpu.default_stream();
//! let mut x = stream.from_host(&[1.0f32; 1024])?;
//! let mut total = stream.alloc_zeros::<f32>(1)?;
//! nosync::no_sync(|| -> Result<(), nosync::gpu::Error> {
//!     kernels.scale(&stream, &mut x, 2.0)?;    // never blocks
//!     kernels.sum(&stream, &x, &mut total)?;    // the result stays on the device
//!     Ok(())
//! })?;
//! assert_eq!(total.to_vec()?, vec![2048.0]);  // blocks: outside the no_sync scope
//! # let _ = LaunchConfig::for_num_elems(1);
//! # Ok(()) }
//! ```

mod buffer;
mod builtins;
pub(crate) mod choke;
mod context;
mod error;
mod event;
mod kernels;
mod module;
mod ops;
mod pinned;
mod stream;

pub use buffer::DeviceBuffer;
pub use builtins::Kernels;
pub use context::Gpu;
pub use cudarc::driver::{DeviceRepr, LaunchConfig, ValidAsZeroBits};
pub use error::Error;
pub use event::Event;
pub use module::{Kernel, KernelArg, Launch, Module};

/// The registry of every public GPU operation, for `tests/gpu_coverage.rs` (which holds the
/// API and `docs/gpu.md` to it). Not a public API: it changes with the operations.
#[doc(hidden)]
pub mod __private {
    pub use super::ops::{Check, OPS, Op, OpEntry, WaitsFor};
}
pub use pinned::PinnedBuffer;
pub use stream::Stream;

pub use crate::guard::granularity::{GRANULARITY_ENV, Granularity, granularity, set_granularity};

/// The driver's names on the loader's path.
const DRIVER_NAMES: [&str; 2] = ["libcuda.so.1", "libcuda.so"];
/// NVRTC's names: the unversioned one and those of the major versions cudarc 0.19 binds.
const NVRTC_NAMES: [&str; 4] = [
    "libnvrtc.so",
    "libnvrtc.so.13",
    "libnvrtc.so.12",
    "libnvrtc.so.11",
];

/// Whether the loader finds one of these libraries. cudarc's own check exists only with its
/// `dynamic-loading`; linked (candle's `dynamic-linking`), the library is loaded already and
/// this finds it too.
fn library_present(names: &[&str]) -> bool {
    // SAFETY: loading the driver or NVRTC runs their initialisers, which set up their own state.
    names
        .iter()
        .any(|name| unsafe { libloading::Library::new(*name) }.is_ok())
}

/// Whether a CUDA driver can be used here, without panicking when there is none: `Ok(n)` with
/// the number of devices, or `Err` with the reason (no libcuda, driver error, no device).
/// Tests and examples call it first and skip visibly when it fails.
pub fn probe() -> Result<usize, String> {
    if !library_present(&DRIVER_NAMES) {
        return Err(format!(
            "libcuda (the CUDA driver library) was not found (looked for {DRIVER_NAMES:?} on the loader's search path)"
        ));
    }
    match cudarc::driver::CudaContext::device_count() {
        Ok(0) => Err("the CUDA driver reports no device".to_owned()),
        Ok(n) => Ok(n as usize),
        Err(e) => Err(format!("the CUDA driver failed to initialise: {e}")),
    }
}
