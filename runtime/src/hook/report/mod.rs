//! `NOSYNC_REPORT`: the process-wide account of the waits the check timed, as a summary on
//! stderr at exit (`summary.rs`) and a Chrome trace (`trace.rs`).

pub(in crate::hook) mod summary;
pub(in crate::hook) mod trace;
