//! The hooked calls: one row per CUPTI callback id, and the rule that decides from the call's
//! arguments whether the host waits. `docs/gpu.md` has the same table with what each row did on
//! an H200; `tests/hook_gpu.rs` checks every row on a GPU, and `tests/hook.rs` ties the two
//! tables.
//!
//! The rules are pure functions of [`Args`] and of what the driver says about the pointers
//! ([`Memory`]), tested without a GPU on callback data shaped like CUPTI's.

// With `--cfg nosync_off` the callback does nothing and the lookups go unused.
#![cfg_attr(nosync_off, allow(dead_code))]

use crate::guard::granularity::{PAGEABLE_INLINE_LIMIT, PAGEABLE_STAGING_CHUNKS, staging_chunks};
use crate::{SyncKind, SyncSite};

/// The CUPTI callback domain of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    /// The driver API (`CUPTI_CB_DOMAIN_DRIVER_API`): every library's calls into `libcuda`.
    Driver,
    /// The runtime API (`CUPTI_CB_DOMAIN_RUNTIME_API`), for the calls the driver domain misses.
    Runtime,
}

/// How a row decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// An explicit synchronization: always a wait, even when the device happens to be idle.
    Synchronize,
    /// A synchronous device→host copy: returns once the data has arrived.
    ToHost,
    /// An asynchronous device→host copy: waits when the destination is pageable, not when it
    /// is page-locked (the driver says which).
    ToHostAsync,
    /// A synchronous host→device copy: the driver synchronizes the stream first.
    FromHost,
    /// An asynchronous host→device copy: from page-locked memory never waits; from pageable
    /// memory up to 64 KiB is inlined and never waits, over two staging buffers (2 MiB) always
    /// waits, in between waits only while earlier staged copies are queued (a "may").
    FromHostAsync,
    /// `cuMemcpy`: a synchronous copy between any two pointers (unified addressing). Waits when
    /// either side is host memory; device to device does not.
    Copy,
    /// `cuMemcpyAsync`: like [`Rule::ToHostAsync`] or [`Rule::FromHostAsync`] by the sides;
    /// device to device does not wait.
    CopyAsync,
    /// `cuMemFree`: memory from a pool (`cuMemAllocAsync`) is freed without a wait; other memory
    /// waits for the device.
    Free,
    /// A device allocation (`cuMemAlloc`): a "may" (it can wait when the driver must reclaim).
    Alloc,
    /// Driver work that stalls the host: module and library loads and unloads, page-locking
    /// host memory and freeing it, releasing a context. Like the lint's setup sites: not for a
    /// hot path, reported like a wait.
    Setup,
}

/// One hooked callback id.
#[derive(Debug)]
pub struct Hooked {
    /// The callback domain.
    pub domain: Domain,
    /// CUPTI's callback id (`CUPTI_DRIVER_TRACE_CBID_*`, `CUPTI_RUNTIME_TRACE_CBID_*`; stable
    /// across CUDA versions).
    pub cbid: u32,
    /// The decision rule.
    pub rule: Rule,
    /// What the call's parameters look like.
    pub params: Params,
    /// Declared under `Granularity::Declared` whenever the rule says the call may wait.
    pub may: SyncSite,
    /// Declared under `Granularity::Actual` when the rule says the call waits.
    pub does: SyncSite,
    /// Reported when the call breaks a CUDA-graph capture (or would, in a `capture_safe` scope).
    pub capture: SyncSite,
}

/// The layout of a row's `functionParams`, for the arguments the rule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Params {
    /// The rule reads no argument.
    None,
    /// `{ dstHost, srcDevice, ByteCount, .. }`.
    ToHost,
    /// `{ dstDevice, srcHost, ByteCount, .. }`.
    FromHost,
    /// `{ dst, src, ByteCount, .. }`.
    Copy,
    /// `{ dptr }`.
    Free,
}

/// The arguments a rule reads, taken from the callback's `functionParams`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Args {
    /// The destination pointer (host or device).
    pub dst: u64,
    /// The source pointer.
    pub src: u64,
    /// Bytes copied.
    pub bytes: usize,
}

/// What a pointer is, as the driver says (`cuPointerGetAttribute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PtrKind {
    /// Host memory the driver does not know: pageable.
    Pageable,
    /// Page-locked host memory (`cuMemHostAlloc`, `cuMemHostRegister`).
    Pinned,
    /// Device (or managed) memory.
    Device,
}

/// The driver's answers a rule needs.
pub trait Memory {
    /// What `ptr` points to.
    fn kind(&self, ptr: u64) -> PtrKind;
    /// Whether a device pointer was allocated from a memory pool.
    fn pool_allocated(&self, ptr: u64) -> bool;
}

/// A rule's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The host waits.
    Waits,
    /// The host may wait, depending on state the hook does not track: `Declared` reports it.
    May,
    /// The host does not wait.
    No,
}

/// A host→device copy: up to 64 KiB it never waits, whatever the source, so the driver is not
/// asked (cubecl uploads a few bytes of metadata with every launch: measured on the H200, asking
/// cost more than the launch).
fn host_to_device(src: u64, bytes: usize, memory: &dyn Memory) -> Verdict {
    if bytes <= PAGEABLE_INLINE_LIMIT {
        return Verdict::No;
    }
    match memory.kind(src) {
        PtrKind::Pinned | PtrKind::Device => Verdict::No,
        PtrKind::Pageable if staging_chunks(bytes) > PAGEABLE_STAGING_CHUNKS => Verdict::Waits,
        PtrKind::Pageable => Verdict::May,
    }
}

impl Rule {
    /// Whether this call, with these arguments, makes the host wait.
    pub fn decide(self, args: Args, memory: &dyn Memory) -> Verdict {
        match self {
            Rule::Synchronize | Rule::ToHost | Rule::FromHost | Rule::Setup => Verdict::Waits,
            Rule::Alloc => Verdict::May,
            Rule::ToHostAsync => match memory.kind(args.dst) {
                PtrKind::Pageable => Verdict::Waits,
                PtrKind::Pinned | PtrKind::Device => Verdict::No,
            },
            Rule::FromHostAsync => host_to_device(args.src, args.bytes, memory),
            Rule::Copy => match (memory.kind(args.dst), memory.kind(args.src)) {
                (PtrKind::Device, PtrKind::Device) => Verdict::No,
                _ => Verdict::Waits,
            },
            Rule::CopyAsync => match memory.kind(args.dst) {
                PtrKind::Pageable => Verdict::Waits,
                _ => host_to_device(args.src, args.bytes, memory),
            },
            Rule::Free if memory.pool_allocated(args.dst) => Verdict::No,
            Rule::Free => Verdict::Waits,
        }
    }
}

/// The site a verdict declares under a granularity: `Declared` reports every "may" and
/// every wait on the `May` site, `Actual` only waits, on the `Does` site.
pub(in crate::hook) fn site_for(
    row: &'static Hooked,
    verdict: Verdict,
    declared: bool,
) -> Option<&'static SyncSite> {
    match (verdict, declared) {
        (Verdict::No, _) => None,
        (_, true) => Some(&row.may),
        (Verdict::Waits, false) => Some(&row.does),
        (Verdict::May, false) => None,
    }
}

/// The row of a callback, if it is hooked.
pub(in crate::hook) fn row(domain: Domain, cbid: u32) -> Option<&'static Hooked> {
    HOOKED.iter().find(|h| h.domain == domain && h.cbid == cbid)
}

const fn row_of(
    domain: Domain,
    cbid: u32,
    api: &'static str,
    rule: Rule,
    params: Params,
    reason: &'static str,
) -> Hooked {
    Hooked {
        domain,
        cbid,
        rule,
        params,
        may: SyncSite::new(api, reason, SyncKind::May),
        does: SyncSite::new(api, reason, SyncKind::Does),
        capture: SyncSite::new(api, BREAKS, SyncKind::Does),
    }
}

const fn driver(api: &'static str, cbid: u32, rule: Rule, params: Params) -> Hooked {
    row_of(Domain::Driver, cbid, api, rule, params, reason(rule))
}

const fn reason(rule: Rule) -> &'static str {
    match rule {
        Rule::Synchronize => "an explicit synchronization: waits for the device",
        Rule::ToHost => "copies device memory to the host: waits for the copy",
        Rule::ToHostAsync => "copies device memory into pageable host memory: waits for the stream",
        Rule::FromHost => "a synchronous host-to-device copy: synchronizes the stream first",
        Rule::FromHostAsync => {
            "copies from pageable host memory: waits when the driver's staging buffers are full"
        }
        Rule::Copy => "a synchronous copy from or to host memory: waits for the copy",
        Rule::CopyAsync => "an async copy from or to pageable host memory: the driver stages it",
        Rule::Free => "frees device memory that is not from a pool: waits for the device",
        Rule::Alloc => "allocates device memory: may wait while the driver reclaims memory",
        Rule::Setup => "driver setup work (module load, page-locking, context): stalls the host",
    }
}

use Params as P;
use Rule as R;

/// Every hooked call. Runtime-API rows only where the driver domain misses the call (measured:
/// `cudaDeviceSynchronize`); other runtime calls reach the driver rows.
pub static HOOKED: [Hooked; 33] = [
    driver("cuCtxSynchronize", 17, R::Synchronize, P::None),
    driver("cuCtxSynchronize_v2", 800, R::Synchronize, P::None),
    driver("cuStreamSynchronize", 126, R::Synchronize, P::None),
    driver("cuStreamSynchronize_ptsz", 440, R::Synchronize, P::None),
    driver("cuEventSynchronize", 121, R::Synchronize, P::None),
    driver("cuMemcpyDtoH_v2", 278, R::ToHost, P::ToHost),
    driver("cuMemcpyDtoH_v2_ptds", 398, R::ToHost, P::ToHost),
    driver("cuMemcpyDtoHAsync_v2", 279, R::ToHostAsync, P::ToHost),
    driver("cuMemcpyDtoHAsync_v2_ptsz", 422, R::ToHostAsync, P::ToHost),
    driver("cuMemcpyHtoD_v2", 276, R::FromHost, P::FromHost),
    driver("cuMemcpyHtoD_v2_ptds", 397, R::FromHost, P::FromHost),
    driver("cuMemcpyHtoDAsync_v2", 277, R::FromHostAsync, P::FromHost),
    driver(
        "cuMemcpyHtoDAsync_v2_ptsz",
        421,
        R::FromHostAsync,
        P::FromHost,
    ),
    driver("cuMemcpy", 305, R::Copy, P::Copy),
    driver("cuMemcpy_ptds", 408, R::Copy, P::Copy),
    driver("cuMemcpyAsync", 306, R::CopyAsync, P::Copy),
    driver("cuMemcpyAsync_ptsz", 418, R::CopyAsync, P::Copy),
    driver("cuMemFree_v2", 245, R::Free, P::Free),
    driver("cuMemAlloc_v2", 243, R::Alloc, P::None),
    driver("cuMemFreeHost", 38, R::Setup, P::None),
    driver("cuMemHostAlloc", 39, R::Setup, P::None),
    driver("cuMemAllocHost_v2", 294, R::Setup, P::None),
    driver("cuModuleLoad", 18, R::Setup, P::None),
    driver("cuModuleLoadData", 19, R::Setup, P::None),
    driver("cuModuleLoadDataEx", 20, R::Setup, P::None),
    driver("cuModuleLoadFatBinary", 21, R::Setup, P::None),
    driver("cuModuleUnload", 22, R::Setup, P::None),
    driver("cuLibraryLoadData", 678, R::Setup, P::None),
    driver("cuLibraryLoadFromFile", 679, R::Setup, P::None),
    driver("cuDevicePrimaryCtxRelease_v2", 544, R::Setup, P::None),
    driver("cuDevicePrimaryCtxReset_v2", 545, R::Setup, P::None),
    row_of(
        Domain::Runtime,
        165,
        "cudaDeviceSynchronize",
        R::Synchronize,
        P::None,
        "an explicit synchronization: waits for the device",
    ),
    row_of(
        Domain::Runtime,
        126,
        "cudaThreadSynchronize",
        R::Synchronize,
        P::None,
        "an explicit synchronization: waits for the device",
    ),
];

/// The reason of every capture site (the violation states the precise break).
pub(crate) const BREAKS: &str = "breaks a CUDA-graph capture";
