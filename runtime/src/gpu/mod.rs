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

use std::sync::atomic::{AtomicU8, Ordering};

mod buffer;
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
pub use context::Gpu;
pub use cudarc::driver::{DeviceRepr, LaunchConfig, ValidAsZeroBits};
pub use error::Error;
pub use event::Event;
pub use kernels::Kernels;
pub use module::{Kernel, KernelArg, Launch, Module};

/// The registry of every public GPU operation, for `tests/gpu_coverage.rs` (which holds the
/// API and `docs/gpu.md` to it). Not a public API: it changes with the operations.
#[doc(hidden)]
pub mod __private {
    pub use super::ops::{Check, OPS, Op, OpEntry, WaitsFor};
}
pub use pinned::PinnedBuffer;
pub use stream::Stream;

/// The environment variable read (once) for the process-wide default granularity:
/// `declared` or `actual`.
pub const GRANULARITY_ENV: &str = "NOSYNC_GRANULARITY";

/// Which of the two checks the GPU operations run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// Check what an operation *may* do: its `SyncKind::May` site on every call.
    Declared,
    /// Check what the call *does*: the choke point's `SyncKind::Does` site, only when the
    /// host actually waits given the arguments. The default.
    Actual,
}

impl Granularity {
    fn from_env() -> Granularity {
        match std::env::var(GRANULARITY_ENV).as_deref() {
            Ok("declared") => Granularity::Declared,
            Ok("actual") | Err(_) => Granularity::Actual,
            Ok(other) => {
                log::error!(
                    target: "nosync",
                    "{GRANULARITY_ENV}={other:?} is not one of `declared`, `actual`; using `actual`"
                );
                Granularity::Actual
            }
        }
    }
}

const UNSET: u8 = 0;
const DECLARED: u8 = 1;
const ACTUAL: u8 = 2;
static GRANULARITY: AtomicU8 = AtomicU8::new(UNSET);

/// Sets the process-wide granularity (overrides `NOSYNC_GRANULARITY`).
pub fn set_granularity(g: Granularity) {
    let v = match g {
        Granularity::Declared => DECLARED,
        Granularity::Actual => ACTUAL,
    };
    GRANULARITY.store(v, Ordering::Relaxed);
}

/// The process-wide granularity: `set_granularity`, else `NOSYNC_GRANULARITY`, else `Actual`.
#[inline]
pub fn granularity() -> Granularity {
    match GRANULARITY.load(Ordering::Relaxed) {
        DECLARED => Granularity::Declared,
        ACTUAL => Granularity::Actual,
        _ => {
            let g = Granularity::from_env();
            // Only the first reader stores; a concurrent `set_granularity` wins.
            let v = if g == Granularity::Declared {
                DECLARED
            } else {
                ACTUAL
            };
            let _ = GRANULARITY.compare_exchange(UNSET, v, Ordering::Relaxed, Ordering::Relaxed);
            granularity_after_init()
        }
    }
}

fn granularity_after_init() -> Granularity {
    if GRANULARITY.load(Ordering::Relaxed) == DECLARED {
        Granularity::Declared
    } else {
        Granularity::Actual
    }
}

/// Whether a CUDA driver can be used here, without panicking when there is none: `Ok(n)` with
/// the number of devices, or `Err` with the reason (no libcuda, driver error, no device).
/// Tests and examples call it first and skip visibly when it fails.
pub fn probe() -> Result<usize, String> {
    // SAFETY: only tries to dlopen the library; no symbol is called.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("libcuda (the CUDA driver library) was not found".to_owned());
    }
    match cudarc::driver::CudaContext::device_count() {
        Ok(0) => Err("the CUDA driver reports no device".to_owned()),
        Ok(n) => Ok(n as usize),
        Err(e) => Err(format!("the CUDA driver failed to initialise: {e}")),
    }
}
