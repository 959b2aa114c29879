//! nosync: catch hidden host-device synchronisations in GPU hot paths.
pub use nosync_macros::{allow_sync, no_sync, synchronizes};

#[cfg(feature = "cuda")]
pub mod gpu;
