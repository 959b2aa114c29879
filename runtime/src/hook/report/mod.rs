//! `NOSYNC_REPORT`: the process-wide account of the waits the check timed, as a summary on
//! stderr at exit (`summary.rs`), a Chrome trace (`trace.rs`) and the wait report (`json.rs`).

pub(in crate::hook) mod json;
pub(in crate::hook) mod summary;
pub(in crate::hook) mod trace;
