//! The check both backends run on a hooked call: the table of calls and the rule that decides
//! whether the host waits (`table.rs`), the decision from the call's arguments (`args.rs`,
//! `callback.rs`, `calls.rs`), capture safety (`capture.rs`), whether the callbacks must be on
//! (`demand.rs`), waits on device-runner threads (`runner.rs`), a
//! violation's frames (`frame.rs`), the stack's hash that names a site (`stack/`) and the
//! loaded objects it reads (`loaded.rs`), the waits timed (`waits.rs`) and sent to the report (`sink.rs`), and the FFI
//! types both backends hand it (`ffi.rs`).

pub(in crate::hook) mod args;
pub(in crate::hook) mod callback;
#[cfg(not(nosync_off))]
pub(in crate::hook) mod calls;
pub(in crate::hook) mod capture;
pub(in crate::hook) mod demand;
pub(in crate::hook) mod ffi;
#[cfg(all(test, not(nosync_off)))]
mod flow_tests;
pub(in crate::hook) mod frame;
#[cfg(target_os = "linux")]
pub(in crate::hook) mod loaded;
pub(in crate::hook) mod runner;
pub(in crate::hook) mod sink;
pub(in crate::hook) mod stack;
pub(in crate::hook) mod table;
#[cfg(all(test, not(nosync_off)))]
mod tests;
pub(in crate::hook) mod waits;
