//! The registry: every public operation of the GPU module, with what it may do, when it does
//! wait and what for. `tests/gpu_coverage.rs` holds the public API and `docs/gpu.md` to it.

use crate::SyncSite;

/// What a waiting operation waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitsFor {
    /// All work queued on one stream.
    Stream,
    /// All work queued in the context (every stream of the device).
    Context,
    /// The work recorded in one event (for a pinned buffer: its last copy).
    Event,
    /// The driver or the compiler, not queued device work: a host stall of milliseconds
    /// (context creation, NVRTC, module load).
    Driver,
}

impl WaitsFor {
    /// The words used in the documentation table.
    pub const fn as_str(self) -> &'static str {
        match self {
            WaitsFor::Stream => "stream",
            WaitsFor::Context => "context (device)",
            WaitsFor::Event => "event",
            WaitsFor::Driver => "driver/compiler (host stall)",
        }
    }
}

/// A GPU operation that can block: its two sites and when it does wait.
#[derive(Debug)]
pub struct Op {
    /// Declared on every call under [`Granularity::Declared`](super::Granularity::Declared).
    pub may: SyncSite,
    /// Declared by the choke point under [`Granularity::Actual`](super::Granularity::Actual),
    /// only when the host waits.
    pub does: SyncSite,
    /// When the host does wait, in the words of the documentation table.
    pub when: &'static str,
    /// What it waits for.
    pub waits_for: WaitsFor,
}

impl Op {
    const fn new(
        api: &'static str,
        reason: &'static str,
        when: &'static str,
        waits_for: WaitsFor,
    ) -> Op {
        Op {
            may: SyncSite::may(api, reason),
            does: SyncSite::does(api, reason),
            when,
            waits_for,
        }
    }

    /// The operation's name, e.g. `Stream::synchronize`.
    pub const fn name(&self) -> &'static str {
        self.may.api
    }
}

/// How an operation stands towards the flag.
#[derive(Debug, Clone, Copy)]
pub enum Check {
    /// It can block: it checks the flag (through the choke point) first.
    Checked(&'static Op),
    /// It never makes the host wait; the text says why.
    NonBlocking(&'static str),
}

/// One row of [`OPS`].
#[derive(Debug, Clone, Copy)]
pub struct OpEntry {
    /// `Type::method` (or a free function's name; `Type::drop` for a `Drop` impl).
    pub name: &'static str,
    /// Checked or non-blocking.
    pub check: Check,
}

macro_rules! ops {
    ($($id:ident = $api:literal, $reason:literal, $when:literal, $waits:ident;)*) => {
        $(pub(crate) static $id: Op = Op::new($api, $reason, $when, WaitsFor::$waits);)*
    };
}

ops! {
    GPU_NEW = "Gpu::new", "initialises the driver and retains the device's primary context",
        "always (setup)", Driver;
    GPU_SYNCHRONIZE = "Gpu::synchronize", "waits for all work queued in the context",
        "always", Context;
    GPU_NEW_STREAM = "Gpu::new_stream",
        "cudarc synchronizes the context when its first stream is created",
        "the first stream created in the context", Context;
    GPU_KERNELS = "Gpu::kernels",
        "compiles the built-in kernels with NVRTC; loading the module waits for the device",
        "the first call on a Gpu (NVRTC + module load)", Context;
    MODULE_COMPILE = "Module::compile",
        "compiles CUDA C with NVRTC; loading the module waits for the device",
        "always (setup)", Context;
    MODULE_DROP = "Module::drop", "unloads the module (cuModuleUnload)",
        "it is the module's last handle", Context;
    KERNEL_DROP = "Kernel::drop", "unloads the module (cuModuleUnload)",
        "it is the module's last handle", Context;
    STREAM_SYNCHRONIZE = "Stream::synchronize", "waits for all work queued on the stream",
        "always", Stream;
    STREAM_ALLOC_ZEROS = "Stream::alloc_zeros",
        "allocates with cuMemAlloc when the device has no memory pools",
        "the device lacks memory pools", Context;
    STREAM_FROM_HOST = "Stream::from_host",
        "copies from pageable host memory: beyond the driver's staging memory it waits for the stream",
        "over 64 KiB while earlier pageable uploads not yet run hold the staging buffers (2 of 1 MiB); or no memory pools", Stream;
    STREAM_FROM_PINNED = "Stream::from_pinned",
        "allocates with cuMemAlloc when the device has no memory pools",
        "the device lacks memory pools", Context;
    BUFFER_TO_VEC = "DeviceBuffer::to_vec",
        "copies device memory into pageable host memory: waits for the stream",
        "always", Stream;
    BUFFER_UPLOAD = "DeviceBuffer::upload",
        "copies from pageable host memory: beyond the driver's staging memory it waits for the stream",
        "over 64 KiB while earlier pageable uploads not yet run hold the staging buffers (2 of 1 MiB)", Stream;
    BUFFER_TRY_CLONE = "DeviceBuffer::try_clone",
        "allocates with cuMemAlloc when the device has no memory pools",
        "the device lacks memory pools", Context;
    BUFFER_DROP = "DeviceBuffer::drop",
        "frees with cuMemFree after synchronizing the stream when the device has no memory pools",
        "the device lacks memory pools", Stream;
    PINNED_NEW = "PinnedBuffer::new", "page-locks host memory (cuMemHostAlloc)",
        "always (setup)", Driver;
    PINNED_READ = "PinnedBuffer::read", "waits for the pending copy into the pinned buffer",
        "a copy into the buffer is still pending", Event;
    PINNED_WRITE = "PinnedBuffer::write", "waits for the pending copy from or into the pinned buffer",
        "a copy from or into the buffer is still pending", Event;
    PINNED_DROP = "PinnedBuffer::drop",
        "frees page-locked memory: cuMemFreeHost waits for all work queued on the device",
        "always", Context;
    EVENT_SYNCHRONIZE = "Event::synchronize", "waits for the work recorded in the event",
        "always", Event;
    EVENT_ELAPSED_MS = "Event::elapsed_ms", "waits for both events to complete",
        "always", Event;
}

const ACCESSOR: &str = "reads a field; no driver call";
const ENQUEUE: &str = "enqueues work on a stream and returns";
const QUERY: &str = "a non-blocking driver query";
const PURE: &str = "pure CPU logic";

macro_rules! nb {
    ($name:literal, $why:expr) => {
        OpEntry {
            name: $name,
            check: Check::NonBlocking($why),
        }
    };
}
macro_rules! checked {
    ($id:ident) => {
        OpEntry {
            name: $id.may.api,
            check: Check::Checked(&$id),
        }
    };
}

/// Every public operation of `nosync::gpu`, blocking or not. A new public function without a
/// row here fails `tests/gpu_coverage.rs`.
pub static OPS: &[OpEntry] = &[
    // module-level functions
    nb!("probe", "dlopen and cuDeviceGetCount; no device work"),
    // Gpu
    checked!(GPU_NEW),
    checked!(GPU_SYNCHRONIZE),
    checked!(GPU_NEW_STREAM),
    checked!(GPU_KERNELS),
    nb!("Gpu::ordinal", ACCESSOR),
    nb!("Gpu::name", QUERY),
    nb!("Gpu::has_memory_pools", ACCESSOR),
    nb!("Gpu::default_stream", ACCESSOR),
    nb!("Gpu::new_event", "cuEventCreate does not wait"),
    nb!("Gpu::cuda_context", ACCESSOR),
    // Module, Kernel, Launch
    checked!(MODULE_COMPILE),
    checked!(MODULE_DROP),
    checked!(KERNEL_DROP),
    nb!("Module::kernel", "cuModuleGetFunction does not wait"),
    nb!("Module::name", ACCESSOR),
    nb!("Kernel::name", ACCESSOR),
    nb!("Kernel::cuda_function", ACCESSOR),
    nb!("Launch::arg", PURE),
    nb!("Launch::launch", ENQUEUE),
    // Stream
    checked!(STREAM_SYNCHRONIZE),
    checked!(STREAM_ALLOC_ZEROS),
    checked!(STREAM_FROM_HOST),
    checked!(STREAM_FROM_PINNED),
    nb!("Stream::gpu", ACCESSOR),
    nb!("Stream::launch", PURE),
    nb!("Stream::record_event", "cuEventRecord enqueues"),
    nb!(
        "Stream::wait_event",
        "cuStreamWaitEvent: the device waits, not the host"
    ),
    nb!("Stream::cuda_stream", ACCESSOR),
    // DeviceBuffer
    checked!(BUFFER_TO_VEC),
    checked!(BUFFER_UPLOAD),
    checked!(BUFFER_TRY_CLONE),
    checked!(BUFFER_DROP),
    nb!("DeviceBuffer::len", ACCESSOR),
    nb!("DeviceBuffer::is_empty", ACCESSOR),
    nb!("DeviceBuffer::stream", ACCESSOR),
    nb!(
        "DeviceBuffer::to_host_async",
        "d->h into page-locked memory is asynchronous"
    ),
    nb!(
        "DeviceBuffer::upload_pinned",
        "h->d from page-locked memory is asynchronous"
    ),
    nb!("DeviceBuffer::copy_from", "d->d copies are asynchronous"),
    nb!("DeviceBuffer::cuda_slice", ACCESSOR),
    // PinnedBuffer
    checked!(PINNED_NEW),
    checked!(PINNED_READ),
    checked!(PINNED_WRITE),
    checked!(PINNED_DROP),
    nb!("PinnedBuffer::len", ACCESSOR),
    nb!("PinnedBuffer::is_empty", ACCESSOR),
    nb!("PinnedBuffer::is_ready", QUERY),
    nb!(
        "PinnedBuffer::try_read",
        "returns None instead of waiting while a copy is pending"
    ),
    // Event
    checked!(EVENT_SYNCHRONIZE),
    checked!(EVENT_ELAPSED_MS),
    nb!("Event::record", "cuEventRecord enqueues"),
    nb!("Event::is_complete", QUERY),
    // built-in kernels
    nb!("Kernels::fill", ENQUEUE),
    nb!("Kernels::scale", ENQUEUE),
    nb!("Kernels::axpy", ENQUEUE),
    nb!("Kernels::add", ENQUEUE),
    nb!("Kernels::mul", ENQUEUE),
    nb!("Kernels::sum", ENQUEUE),
    nb!("Kernels::dot", ENQUEUE),
    nb!("Kernels::argmax", ENQUEUE),
    nb!("Kernels::spin", ENQUEUE),
    // the registry itself
    nb!("Op::name", PURE),
    nb!("WaitsFor::as_str", PURE),
    nb!("Error::as_violation", PURE),
];
