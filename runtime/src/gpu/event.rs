//! `Event`: a marker in a stream's work.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaEvent, sys::CUevent_flags};

use super::{Error, choke};

/// A CUDA event: record it on a stream, then query it (never blocks), wait for it on another
/// stream (the device waits), or synchronize on it (blocks).
#[derive(Debug)]
pub struct Event {
    inner: CudaEvent,
}

impl Event {
    pub(crate) fn new(ctx: &Arc<CudaContext>, timing: bool) -> Result<Event, Error> {
        let flags = if timing {
            CUevent_flags::CU_EVENT_DEFAULT
        } else {
            CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        Ok(Event {
            inner: ctx.new_event(Some(flags))?,
        })
    }

    /// Whether the recorded work has completed (a never-recorded event is complete). Never
    /// waits.
    pub fn is_complete(&self) -> Result<bool, Error> {
        Ok(self.inner.try_is_complete()?)
    }

    /// Waits for the recorded work. Blocks.
    pub fn synchronize(&self) -> Result<(), Error> {
        choke::event_synchronize(&self.inner)
    }

    /// Milliseconds between `self` (the start) and `end`; both need `timing`. Blocks until
    /// both have completed.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, Error> {
        choke::event_elapsed_ms(&self.inner, &end.inner)
    }

    pub(crate) fn cuda_event(&self) -> &CudaEvent {
        &self.inner
    }
}
