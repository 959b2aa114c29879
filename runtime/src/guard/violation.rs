//! The error a forbidden sync produces.

use std::fmt;
use std::panic::Location;

use crate::SyncSite;

/// A sync declared inside a forbid scope. Its [`Display`](fmt::Display) is one actionable line:
///
/// ```text
/// `Stream::synchronize` blocks the host (waits for all work on the stream) inside #[no_sync] `train_step` (src/train.rs:42) on thread `main`; wrap it in nosync::allow_sync(..) if this wait is intended
/// ```
#[derive(Clone)]
pub struct SyncViolation {
    // Boxed so that `Result<(), SyncViolation>` is one pointer and the happy path stays cheap.
    inner: Box<Inner>,
}

#[derive(Debug, Clone)]
struct Inner {
    site: &'static SyncSite,
    location: &'static Location<'static>,
    scope_location: &'static Location<'static>,
    scope_function: Option<&'static str>,
    thread_name: Option<String>,
    /// The CUPTI hook's violations: the first stack frames outside cudarc and nosync.
    frames: Vec<Frame>,
    /// A call that breaks a CUDA-graph capture: why, and whether a scope of the thread demanded
    /// capture safety (else the thread was capturing outside every nosync scope).
    capture: Option<(&'static str, bool)>,
    /// A wait the CUPTI hook saw on a device-runner thread, which makes the CUDA calls for this
    /// thread: its name.
    runner: Option<String>,
}

/// One stack frame of the code that made a blocking CUDA call, as the CUPTI hook
/// ([`hook`](crate#the-hook)) captured it on a violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The demangled function, without its hash: `candle_core::cuda_backend::..::to_cpu_storage`.
    pub function: String,
    /// The source file, when the binary has line tables.
    pub file: Option<String>,
    /// The line in `file`.
    pub line: Option<u32>,
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.function)?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " ({file}:{line})"),
            (Some(file), None) => write!(f, " ({file})"),
            _ => Ok(()),
        }
    }
}

impl SyncViolation {
    #[cfg_attr(nosync_off, allow(dead_code))]
    pub(crate) fn new(
        site: &'static SyncSite,
        location: &'static Location<'static>,
        scope_location: &'static Location<'static>,
        scope_function: Option<&'static str>,
    ) -> Self {
        let thread_name = std::thread::current().name().map(str::to_owned);
        let inner = Inner {
            site,
            location,
            scope_location,
            scope_function,
            thread_name,
            frames: Vec::new(),
            capture: None,
            runner: None,
        };
        SyncViolation {
            inner: Box::new(inner),
        }
    }

    /// The same violation, with the frames of the code that made the call.
    #[cfg_attr(any(not(feature = "hook"), nosync_off), allow(dead_code))]
    pub(crate) fn with_frames(mut self, frames: Vec<Frame>) -> Self {
        self.inner.frames = frames;
        self
    }

    /// The same violation, seen on the device-runner thread `runner` (if any).
    #[cfg_attr(any(not(feature = "hook"), nosync_off), allow(dead_code))]
    pub(crate) fn on_runner(mut self, runner: Option<String>) -> Self {
        self.inner.runner = runner;
        self
    }

    /// The same violation as a break of a CUDA-graph capture: `why` it breaks one, and whether
    /// a forbid or `capture_safe` scope was open (else the thread captured outside every scope).
    #[cfg_attr(any(not(feature = "hook"), nosync_off), allow(dead_code))]
    pub(crate) fn breaking_capture(mut self, why: &'static str, scoped: bool) -> Self {
        self.inner.capture = Some((why, scoped));
        self
    }

    /// For a call the CUPTI hook saw break a CUDA-graph capture (or that would break one, in a
    /// `capture_safe` scope): why it breaks it. `None` for a sync.
    pub fn capture_break(&self) -> Option<&'static str> {
        self.inner.capture.map(|(why, _)| why)
    }

    /// The blocking operation.
    pub fn site(&self) -> &'static SyncSite {
        self.inner.site
    }

    /// Where the sync was declared (the caller of `declare_sync`). For a violation seen by the
    /// CUPTI hook this is inside nosync's hook; [`frames`](Self::frames) says who made the call.
    pub fn location(&self) -> &'static Location<'static> {
        self.inner.location
    }

    /// Where the forbidding scope began.
    pub fn scope_location(&self) -> &'static Location<'static> {
        self.inner.scope_location
    }

    /// The function whose `#[no_sync]` opened the scope, if it came from the attribute.
    pub fn scope_function(&self) -> Option<&'static str> {
        self.inner.scope_function
    }

    /// For a violation seen by the CUPTI hook: the innermost stack frames of the blocking call
    /// outside cudarc, nosync and the standard library, innermost first (at most 8; empty when
    /// the binary has no symbols). Empty for every other violation.
    pub fn frames(&self) -> &[Frame] {
        &self.inner.frames
    }

    /// The name of the thread the sync was declared on, if it has one: the thread of the scope.
    pub fn thread_name(&self) -> Option<&str> {
        self.inner.thread_name.as_deref()
    }

    /// For a wait the CUPTI hook saw on a device-runner thread (a thread that makes the CUDA
    /// calls for others, such as cubecl's `DSD-0-0`; see
    /// [`hook::runner_thread`](crate::hook::runner_thread)): that thread's name. The scope is
    /// this violation's thread's, which was inside it while the runner waited. `None` for a
    /// wait on the scope's own thread.
    pub fn runner_thread(&self) -> Option<&str> {
        self.inner.runner.as_deref()
    }
}

impl fmt::Display for SyncViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &*self.inner;
        if let Some((why, scoped)) = i.capture {
            return capture_break(f, i, why, scoped);
        }
        match &i.runner {
            Some(runner) => write!(
                f,
                "`{}` blocks device-runner thread `{runner}` ({}), which makes the CUDA calls for other threads, while this thread is inside ",
                i.site.api, i.site.reason
            )?,
            None => write!(
                f,
                "`{}` blocks the host ({}) inside ",
                i.site.api, i.site.reason
            )?,
        }
        match i.scope_function {
            Some(function) => write!(f, "#[no_sync] `{function}`")?,
            None => f.write_str("a nosync::forbid() scope")?,
        }
        let at = i.scope_location;
        write!(f, " ({}:{})", at.file(), at.line())?;
        if let Some(thread) = &i.thread_name {
            write!(f, " on thread `{thread}`")?;
        }
        if let Some(frame) = i.frames.first() {
            match &i.runner {
                Some(_) => write!(f, ", the runner called from {frame}")?,
                None => write!(f, ", called from {frame}")?,
            }
        }
        match &i.runner {
            Some(_) => f.write_str("; wrap the call that waits for the runner in nosync::allow_sync(..) if this wait is intended"),
            None => f.write_str("; wrap it in nosync::allow_sync(..) if this wait is intended"),
        }
    }
}

/// `` `cuMemAlloc_v2` breaks a CUDA-graph capture (why) inside #[no_sync] `f` (at) on thread
/// `t`, called from ..; move it out of the capture ``.
fn capture_break(f: &mut fmt::Formatter<'_>, i: &Inner, why: &str, scoped: bool) -> fmt::Result {
    write!(f, "`{}` breaks a CUDA-graph capture ({why})", i.site.api)?;
    match (scoped, i.scope_function) {
        (false, _) => f.write_str(" while this thread captures a stream")?,
        (true, Some(function)) => write!(f, " inside #[no_sync] `{function}`")?,
        (true, None) => f.write_str(" inside a nosync scope")?,
    }
    if scoped {
        let at = i.scope_location;
        write!(f, " ({}:{})", at.file(), at.line())?;
    }
    if let Some(thread) = &i.thread_name {
        write!(f, " on thread `{thread}`")?;
    }
    if let Some(frame) = i.frames.first() {
        write!(f, ", called from {frame}")?;
    }
    f.write_str("; make the call before or after the capture")
}

impl fmt::Debug for SyncViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncViolation")
            .field("site", &self.inner.site)
            .field("location", &self.inner.location)
            .field("scope_location", &self.inner.scope_location)
            .field("scope_function", &self.inner.scope_function)
            .field("thread_name", &self.inner.thread_name)
            .field("frames", &self.inner.frames)
            .field("capture", &self.inner.capture)
            .field("runner", &self.inner.runner)
            .finish()
    }
}

impl std::error::Error for SyncViolation {}
