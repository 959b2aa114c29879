//! CUDA-graph capture safety: while a thread captures a stream into a graph
//! (`cuStreamBeginCapture*` .. `cuStreamEndCapture`), the calls the driver would reject or that
//! break the capture are reported at their entry, before the error; a `capture_safe` scope
//! demands the same of code that is not being captured (in tests).
//!
//! What breaks a capture ([`Break`]), by the capture's mode (`CUstreamCaptureMode`): in every
//! mode, synchronizing or querying the capturing stream, synchronizing the context, a
//! synchronous copy, an async copy from or to pageable memory and any use of the legacy default
//! stream; in modes `global` and `thread_local` (the default, and what a `capture_safe` scope
//! assumes), also any other synchronization, synchronous allocation and free, page-locking, and
//! module loads and unloads ("potentially unsafe API calls"; mode `relaxed` allows them).
//! A call that returns `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` (900) or `_INVALIDATED` (901) is
//! reported at its exit, even when the library that made it discards the error.
//!
//! Pure: [`Captures`] is one thread's state, fed the calls as [`Op`]s.

// With `--cfg nosync_off` the callback does nothing and these go unused.
#![cfg_attr(nosync_off, allow(dead_code))]

use super::table::{Domain, Hooked, Rule, Verdict};
use crate::SyncSite;

/// The mode a capture was begun in (`CUstreamCaptureMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CaptureMode {
    /// `CU_STREAM_CAPTURE_MODE_GLOBAL` (0): unsafe calls are prohibited in every thread.
    Global,
    /// `CU_STREAM_CAPTURE_MODE_THREAD_LOCAL` (1): in the capturing thread.
    ThreadLocal,
    /// `CU_STREAM_CAPTURE_MODE_RELAXED` (2): unsafe calls are allowed.
    Relaxed,
}

impl CaptureMode {
    /// The driver's value; an unknown one is taken as the strictest.
    pub(crate) fn from_raw(mode: u32) -> CaptureMode {
        match mode {
            1 => CaptureMode::ThreadLocal,
            2 => CaptureMode::Relaxed,
            _ => CaptureMode::Global,
        }
    }
}

/// What a hooked call is, for the capture rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Synchronizes the context (`cuCtxSynchronize`, `cudaDeviceSynchronize`) or releases it.
    Context,
    /// Synchronizes one stream.
    Stream,
    /// Synchronizes an event.
    Event,
    /// A synchronous copy.
    SyncCopy,
    /// An async copy; `pageable` when it touches pageable host memory (its rule said it waits).
    AsyncCopy {
        /// The copy touches pageable host memory.
        pageable: bool,
    },
    /// A synchronous allocation or free, of device or page-locked host memory.
    Alloc,
    /// A module or library load or unload.
    Module,
}

impl Class {
    /// The class of a hooked row, with its rule's verdict for this call.
    pub(crate) fn of(row: &Hooked, verdict: Verdict) -> Class {
        let api = row.does.api;
        match row.rule {
            Rule::Synchronize if api.starts_with("cuStream") => Class::Stream,
            Rule::Synchronize if api.starts_with("cuEvent") => Class::Event,
            Rule::Synchronize => Class::Context,
            Rule::ToHost | Rule::FromHost | Rule::Copy => Class::SyncCopy,
            Rule::ToHostAsync | Rule::FromHostAsync | Rule::CopyAsync => Class::AsyncCopy {
                pageable: verdict != Verdict::No,
            },
            Rule::Free | Rule::Alloc => Class::Alloc,
            Rule::Setup if api.starts_with("cuModule") || api.starts_with("cuLibrary") => {
                Class::Module
            }
            Rule::Setup if api.starts_with("cuDevicePrimaryCtx") => Class::Context,
            Rule::Setup => Class::Alloc,
        }
    }
}

/// One call as the capture rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// A capture begins (at the exit of a successful `cuStreamBeginCapture*`).
    Begin {
        /// The stream captured.
        stream: u64,
        /// Its mode.
        mode: CaptureMode,
    },
    /// A capture ends (at the exit of `cuStreamEndCapture`, whatever it returned).
    End {
        /// The stream.
        stream: u64,
    },
    /// `cuStreamQuery`.
    Query {
        /// The stream queried.
        stream: u64,
    },
    /// A kernel launch.
    Launch {
        /// Its stream.
        stream: u64,
    },
    /// A hooked call.
    Hooked {
        /// What it is.
        class: Class,
        /// Its stream, for the calls that take one.
        stream: Option<u64>,
    },
}

/// Why a call breaks a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Break {
    /// Synchronizes or queries the stream being captured.
    CapturingStream,
    /// Synchronizes the whole context, the capturing stream included.
    Context,
    /// Uses the legacy default stream, which synchronizes with the capturing stream.
    Legacy,
    /// A synchronous copy.
    SyncCopy,
    /// An async copy from or to pageable host memory.
    PageableCopy,
    /// Another synchronization (mode global or thread-local).
    Sync,
    /// A synchronous allocation, free or page-locking (mode global or thread-local).
    Alloc,
    /// A module load or unload (mode global or thread-local).
    Module,
    /// The call returned `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` (900).
    Unsupported,
    /// The call returned `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED` (901).
    Invalidated,
}

impl Break {
    /// The reason, as a violation states it.
    pub fn reason(self) -> &'static str {
        match self {
            Break::CapturingStream => {
                "synchronizes or queries the stream being captured: the driver rejects it and invalidates the capture"
            }
            Break::Context => {
                "synchronizes the context, the capturing stream included: the driver rejects it and invalidates the capture"
            }
            Break::Legacy => {
                "uses the legacy default stream, which cannot be captured and synchronizes with the capture"
            }
            Break::SyncCopy => "a synchronous copy: it cannot be captured and waits for the device",
            Break::PageableCopy => {
                "an async copy from or to pageable host memory: it cannot be captured (use page-locked memory)"
            }
            Break::Sync => "a synchronization: prohibited while a stream is captured",
            Break::Alloc => {
                "a synchronous allocation or free: prohibited while a stream is captured (use cuMemAllocAsync / cuMemFreeAsync, or allocate before)"
            }
            Break::Module => {
                "loads or unloads a module: prohibited while a stream is captured (load it before the capture)"
            }
            Break::Unsupported => {
                "returned CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900): the operation is not permitted while capturing"
            }
            Break::Invalidated => {
                "returned CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901): an earlier call broke the capture; its graph is lost"
            }
        }
    }

    /// The break a return code reports (900, 901), at any call's exit.
    pub fn of_return(code: u32) -> Option<Break> {
        match code {
            900 => Some(Break::Unsupported),
            901 => Some(Break::Invalidated),
            _ => None,
        }
    }
}

/// `CU_STREAM_LEGACY` is 1; the null stream is the legacy stream too, except in `_ptsz` calls.
fn legacy(stream: u64) -> bool {
    stream <= 1
}

/// One thread's captures in progress.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captures {
    active: Vec<(u64, CaptureMode)>,
}

impl Captures {
    /// No capture.
    pub(crate) const fn new() -> Captures {
        Captures { active: Vec::new() }
    }

    /// Whether a capture is in progress.
    pub(crate) fn capturing(&self) -> bool {
        !self.active.is_empty()
    }

    /// Follows a capture's begin and end (other calls change nothing); whether it changed.
    pub(crate) fn apply(&mut self, op: Op) -> bool {
        let before = self.active.len();
        match op {
            Op::Begin { stream, mode } => self.active.push((stream, mode)),
            Op::End { stream } => self.active.retain(|(s, _)| *s != stream),
            _ => {}
        }
        self.active.len() != before
    }

    /// What `op` breaks, in this thread's captures or, with `safe_scope`, in a capture of mode
    /// global assumed around it.
    pub(crate) fn check(&self, safe_scope: bool, op: Op) -> Option<Break> {
        if !safe_scope && !self.capturing() {
            return None;
        }
        let strict = safe_scope || self.active.iter().any(|(_, m)| *m != CaptureMode::Relaxed);
        let captured = |s: u64| self.active.iter().any(|(c, _)| *c == s);
        let (relaxed_ok, broken) = match op {
            Op::Begin { .. } | Op::End { .. } => return None,
            Op::Query { stream } if captured(stream) => (false, Break::CapturingStream),
            Op::Query { stream } | Op::Launch { stream } => {
                (false, legacy(stream).then_some(Break::Legacy)?)
            }
            Op::Hooked {
                stream: Some(s), ..
            } if legacy(s) => (false, Break::Legacy),
            Op::Hooked { class, stream } => match class {
                Class::Context => (false, Break::Context),
                Class::Stream if stream.is_some_and(captured) => (false, Break::CapturingStream),
                Class::Stream | Class::Event => (true, Break::Sync),
                Class::SyncCopy => (false, Break::SyncCopy),
                Class::AsyncCopy { pageable: true } => (false, Break::PageableCopy),
                Class::AsyncCopy { pageable: false } => return None,
                Class::Alloc => (true, Break::Alloc),
                Class::Module => (true, Break::Module),
            },
        };
        (strict || !relaxed_ok).then_some(broken)
    }
}

/// What a watched call (not a hooked row) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watch {
    /// `cuStreamBeginCapture` (`{ hStream }`) or `_v2` (`{ hStream, mode }`).
    Begin {
        /// The parameters carry the mode.
        with_mode: bool,
    },
    /// `cuStreamEndCapture` (`{ hStream, phGraph }`).
    End,
    /// `cuStreamQuery` (`{ hStream }`).
    Query,
    /// `cuLaunchKernel` (`hStream` after the grid, block and shared memory).
    Launch,
}

/// A call watched for capture safety only: the begin and end of captures, and the calls that
/// break one without waiting.
#[derive(Debug)]
pub(crate) struct Watched {
    /// The callback domain (always the driver's).
    pub(crate) domain: Domain,
    /// CUPTI's callback id.
    pub(crate) cbid: u32,
    /// What it is.
    pub(crate) watch: Watch,
    /// Per-thread default stream variant: a null stream is that thread's stream, not legacy.
    pub(crate) ptsz: bool,
    /// The site a capture break here is reported on.
    pub(crate) site: SyncSite,
}

const fn watched(api: &'static str, cbid: u32, watch: Watch, ptsz: bool) -> Watched {
    Watched {
        domain: Domain::Driver,
        cbid,
        watch,
        ptsz,
        site: SyncSite::does(api, super::table::BREAKS),
    }
}

/// Every watched call. Begin and end are enabled with the hook; queries and launches only
/// while some thread captures or is in a `capture_safe` scope ([`Watched::while_capturing`]).
pub(crate) static WATCHED: [Watched; 10] = [
    watched(
        "cuStreamBeginCapture",
        495,
        Watch::Begin { with_mode: false },
        false,
    ),
    watched(
        "cuStreamBeginCapture_ptsz",
        496,
        Watch::Begin { with_mode: false },
        true,
    ),
    watched(
        "cuStreamBeginCapture_v2",
        539,
        Watch::Begin { with_mode: true },
        false,
    ),
    watched(
        "cuStreamBeginCapture_v2_ptsz",
        540,
        Watch::Begin { with_mode: true },
        true,
    ),
    watched("cuStreamEndCapture", 497, Watch::End, false),
    watched("cuStreamEndCapture_ptsz", 498, Watch::End, true),
    watched("cuStreamQuery", 125, Watch::Query, false),
    watched("cuStreamQuery_ptsz", 439, Watch::Query, true),
    watched("cuLaunchKernel", 307, Watch::Launch, false),
    watched("cuLaunchKernel_ptsz", 442, Watch::Launch, true),
];

impl Watched {
    /// Enabled only while needed: a query or launch is frequent, and costs a callback.
    pub(crate) fn while_capturing(&self) -> bool {
        matches!(self.watch, Watch::Query | Watch::Launch)
    }

    /// Whether this call begins a capture: seen even outside every scope.
    #[inline(always)]
    pub(crate) fn begins(cbid: u32) -> bool {
        matches!(cbid, 495 | 496 | 539 | 540)
    }

    /// The row of a watched callback.
    pub(crate) fn row(domain: Domain, cbid: u32) -> Option<&'static Watched> {
        WATCHED
            .iter()
            .find(|w| w.domain == domain && w.cbid == cbid)
    }

    /// The stream argument as the capture rules see it: a `_ptsz` call's null stream is the
    /// thread's own stream, not the legacy one (2 is `CU_STREAM_PER_THREAD`).
    pub(crate) fn stream(&self, raw: u64) -> u64 {
        if self.ptsz && raw == 0 { 2 } else { raw }
    }
}

#[cfg(test)]
mod tests;
