//! CUPTI's backend: the driver and libcupti loaded at run time (`load.rs`), the subscriber and
//! the callbacks it enables (`subscribe.rs`), enabled only while some scope needs them
//! (`check/demand.rs`).

pub(in crate::hook) mod load;
pub(in crate::hook) mod subscribe;
