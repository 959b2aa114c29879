//! The guard: scopes, modes, the per-thread state, the check, `count_syncs`, violations and
//! sites. The ground floor of the runtime: it names neither the GPU operations nor the hook,
//! and tells the layers above it what happens through one seam (`seam.rs`).

pub(crate) mod check;
#[cfg(not(nosync_off))]
pub(crate) mod deferred;
pub(crate) mod env;
pub(crate) mod future;
#[cfg(any(feature = "cuda", feature = "hook"))]
pub(crate) mod granularity;
pub(crate) mod mode;
pub(crate) mod once;
#[cfg(feature = "cuda")]
pub(crate) mod quiet;
pub(crate) mod report;
pub(crate) mod scope;
pub(crate) mod seam;
pub(crate) mod site;
#[cfg(not(nosync_off))]
pub(crate) mod state;
pub(crate) mod violation;
