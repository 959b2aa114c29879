//! What the GPU operations (`nosync::gpu`) and the CUPTI hook (`nosync::hook`) share without
//! depending on each other: the process-wide granularity of their checks, and the driver's
//! staging of pageable host-to-device copies (measured on an H200; `docs/gpu.md`).

use std::sync::atomic::{AtomicU8, Ordering};

pub use super::env::GRANULARITY_ENV;
use super::env::{self, EnvError};

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
        env::read(
            GRANULARITY_ENV,
            Granularity::parse_env,
            Granularity::Actual,
            "using `actual`",
        )
    }

    /// `NOSYNC_GRANULARITY`'s value as a granularity.
    fn parse_env(value: &str) -> Result<Granularity, EnvError> {
        match value {
            "declared" => Ok(Granularity::Declared),
            "actual" => Ok(Granularity::Actual),
            _ => Err(EnvError {
                var: GRANULARITY_ENV,
                value: value.to_owned(),
                takes: "declared, actual",
            }),
        }
    }
}

const UNSET: u8 = 0;
const DECLARED: u8 = 1;
const ACTUAL: u8 = 2;
static GRANULARITY: AtomicU8 = AtomicU8::new(UNSET);

/// Sets the process-wide granularity of the GPU operations and the CUPTI hook (overrides
/// `NOSYNC_GRANULARITY`).
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

/// The driver stages pageable host→device copies through a few pinned buffers of this size and
/// returns before they run while buffers are free; a copy takes whole buffers (a 128 KiB copy one,
/// a 2 MiB copy two). Beyond that it waits for the stream's queued work.
pub(crate) const PAGEABLE_STAGING_CHUNK: usize = 1 << 20;

/// The number of staging buffers. Measured on an H200 with driver 580, behind a busy stream: one
/// 2 MiB copy and two 1 MiB copies returned at once; one 3 MiB copy, three 1 MiB copies and a
/// series of 128 KiB copies waited.
pub(crate) const PAGEABLE_STAGING_CHUNKS: usize = 2;

/// Pageable host→device copies up to this size are not staged: the driver puts the data into
/// the command stream itself, and they never wait (measured: 40 copies of 64 KiB in a row,
/// 2.5 MiB in all, returned at once behind a busy stream).
pub(crate) const PAGEABLE_INLINE_LIMIT: usize = 64 << 10;

/// The staging buffers a pageable upload of `bytes` takes (none when it is inlined).
pub(crate) const fn staging_chunks(bytes: usize) -> usize {
    if bytes <= PAGEABLE_INLINE_LIMIT {
        0
    } else {
        bytes.div_ceil(PAGEABLE_STAGING_CHUNK)
    }
}
