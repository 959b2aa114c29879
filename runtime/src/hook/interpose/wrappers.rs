//! One `extern "C"` function per hooked or watched call, with the call's C signature: the
//! interposer hands these out instead of the driver's. Each packs its arguments into the struct
//! CUPTI would pass (`generated_cuda_api_meta.h`: the arguments in order) and runs the same
//! check as the CUPTI callback, at the call's entry and exit, around the call of the function
//! its slot (or lookup) held before: a preloaded shim stays in the call path.
//!
//! A name has four wrappers (variants), each calling its own target: the driver's function, and
//! what other objects had bound the name to. A slot bound to a fifth function is left alone and
//! listed in the coverage.
//!
//! Outside every scope, with no report and no capture, a wrapper is one thread-local read and
//! two relaxed loads before it calls its target.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};
use std::sync::atomic::{AtomicBool, AtomicUsize};

use crate::hook::check::table::Domain;

/// `CUresult` or `cudaError_t`.
type Res = i32;
/// A handle or a host pointer.
type P = *mut c_void;
/// `CUdeviceptr`.
type D = u64;

/// How many functions one name's wrappers can call at once.
pub(in crate::hook) const VARIANTS: usize = 4;

/// The functions one name's wrappers call, one per variant, and the wrappers.
#[derive(Debug)]
pub(in crate::hook) struct Targets {
    /// The function each variant's wrapper calls; 0 while the variant is free. Set once, before
    /// the wrapper is handed out, and never changed.
    slots: [AtomicUsize; VARIANTS],
    /// The wrappers' addresses, by variant.
    wrappers: fn() -> [usize; VARIANTS],
}

impl Targets {
    pub(in crate::hook) const fn new(wrappers: fn() -> [usize; VARIANTS]) -> Targets {
        Targets {
            slots: [const { AtomicUsize::new(0) }; VARIANTS],
            wrappers,
        }
    }

    /// The wrapper that calls `target`, claiming a free variant for it; `None` when `target` is
    /// null, is one of these wrappers, or every variant calls another function.
    pub(in crate::hook) fn wrapper_for(&self, target: usize) -> Option<usize> {
        let wrappers = (self.wrappers)();
        if target == 0 || wrappers.contains(&target) {
            return None;
        }
        for (k, t) in self.slots.iter().enumerate() {
            match t.compare_exchange(0, target, AcqRel, Acquire) {
                Ok(_) => return Some(wrappers[k]),
                Err(held) if held == target => return Some(wrappers[k]),
                Err(_) => {}
            }
        }
        None
    }

    /// The wrapper already calling `target`, without claiming a variant.
    pub(in crate::hook) fn wrapper_of(&self, target: usize) -> Option<usize> {
        let k = self
            .slots
            .iter()
            .position(|t| target != 0 && t.load(Acquire) == target)?;
        Some((self.wrappers)()[k])
    }

    /// What the wrapper at `addr` calls, if it is one of these wrappers.
    pub(in crate::hook) fn target_of_wrapper(&self, addr: usize) -> Option<usize> {
        let k = (self.wrappers)().iter().position(|&w| w == addr)?;
        Some(self.slots[k].load(Acquire))
    }

    /// Whether some variant calls a function (the call can be seen through some path).
    pub(in crate::hook) fn claimed(&self) -> bool {
        self.slots.iter().any(|t| t.load(Relaxed) != 0)
    }

    /// Variant `k`'s target as a function pointer of type `F`.
    ///
    /// # Safety
    /// `F` is a function pointer type with the signature of the function these wrappers stand
    /// for, and variant `k`'s wrapper has been handed out (its target is set).
    #[inline(always)]
    pub(in crate::hook) unsafe fn get<F: Copy>(&self, k: usize) -> F {
        const { assert!(size_of::<F>() == size_of::<usize>()) };
        let real = self.slots[k].load(Acquire);
        debug_assert_ne!(real, 0, "a wrapper handed out before its target");
        // SAFETY: this fn's contract: `F` is a function pointer of the target's signature.
        unsafe { std::mem::transmute_copy(&real) }
    }
}

/// The addresses of variants 0 to 3 of a wrapper generic over its variant.
macro_rules! variants {
    ($f:ident) => {
        || {
            [
                $f::<0> as *const () as usize,
                $f::<1> as *const () as usize,
                $f::<2> as *const () as usize,
                $f::<3> as *const () as usize,
            ]
        }
    };
}
pub(super) use variants;

/// What a wrapper knows of its call.
#[derive(Debug)]
pub(in crate::hook) struct Entry {
    /// The exported name, NUL-terminated.
    pub(in crate::hook) cname: &'static [u8],
    /// The API it belongs to.
    pub(in crate::hook) domain: Domain,
    /// CUPTI's callback id for it (the hook's tables are keyed by it).
    pub(in crate::hook) cbid: u32,
    /// A call made so often (launches, stream queries) that it is checked only while a capture
    /// or a `capture_safe` scope is live.
    pub(in crate::hook) frequent: bool,
    /// What its wrappers call.
    pub(in crate::hook) targets: Targets,
}

impl Entry {
    /// The exported name.
    pub(in crate::hook) fn name(&self) -> &'static str {
        let bytes = &self.cname[..self.cname.len() - 1];
        std::str::from_utf8(bytes).unwrap_or("")
    }
}

/// Whether a hook with this backend is installed: the wrappers check, else they call through.
pub(super) static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether a capture or a `capture_safe` scope is live: launches and queries are checked.
pub(super) static WATCHING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set while a wrapper on this thread runs its call: a wrapper reached from inside it (a
    /// shim that calls through another patched slot, or a program's PLT stub bound to a
    /// wrapper) calls straight through, so that one call is checked once.
    static IN_CALL: Cell<bool> = const { Cell::new(false) };
}

/// Runs a wrapper's call: checked at its entry and exit like a CUPTI callback, unless there is
/// nothing to decide.
///
/// # Safety
/// `params` is the call's parameter struct, laid out as CUPTI's for `entry`'s call.
#[inline(always)]
pub(in crate::hook) unsafe fn around(
    entry: &'static Entry,
    params: *const c_void,
    call: impl FnOnce() -> i32,
) -> i32 {
    if !ACTIVE.load(Relaxed)
        || (entry.frequent && !WATCHING.load(Relaxed))
        || crate::hook::check::callback::idle(entry.cbid)
    {
        return call();
    }
    // SAFETY: as this fn's contract.
    unsafe { checked(entry, params, call) }
}

/// # Safety
/// As [`around`].
unsafe fn checked(entry: &'static Entry, params: *const c_void, call: impl FnOnce() -> i32) -> i32 {
    use crate::hook::check::ffi::{API_ENTER, API_EXIT, CallbackData};
    if IN_CALL.with(Cell::get) {
        return call();
    }
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            IN_CALL.with(|c| c.set(false));
        }
    }
    IN_CALL.with(|c| c.set(true));
    let _leave = Leave;
    let mut slot = 0u64;
    let mut data = CallbackData {
        callbackSite: API_ENTER,
        functionName: entry.cname.as_ptr().cast(),
        functionParams: params,
        functionReturnValue: std::ptr::null_mut(),
        symbolName: std::ptr::null(),
        context: std::ptr::null_mut(),
        contextUid: 0,
        correlationData: &raw mut slot,
        correlationId: 0,
    };
    // SAFETY: `data` is shaped like CUPTI's for this call: its parameter struct (this fn's
    // contract), its slot, and at the exit its result.
    unsafe { crate::hook::check::callback::check_interposed(entry.domain, entry.cbid, &data) };
    let mut result = call();
    let r = result;
    data.callbackSite = API_EXIT;
    data.functionReturnValue = (&raw mut result).cast();
    // SAFETY: as above.
    unsafe { crate::hook::check::callback::check_interposed(entry.domain, entry.cbid, &data) };
    r
}

macro_rules! interposed {
    ($( $name:ident ( $($arg:ident : $ty:ty),* ) $domain:ident $cbid:literal $frequent:literal; )*) => {
        $(
            #[allow(non_snake_case)]
            mod $name {
                use super::*;

                pub(in crate::hook) static ENTRY: Entry = Entry {
                    cname: concat!(stringify!($name), "\0").as_bytes(),
                    domain: Domain::$domain,
                    cbid: $cbid,
                    frequent: $frequent,
                    targets: Targets::new(variants!(wrapper)),
                };

                /// The call's arguments as CUPTI's parameter struct lays them out.
                #[repr(C)]
                pub(in crate::hook) struct Params { $( pub(in crate::hook) $arg: $ty ),* }

                /// The wrapper of variant `K`: checks around a call of `ENTRY.targets[K]`.
                ///
                /// # Safety
                /// As the driver's function of the same name; handed out only once its target is set.
                pub(in crate::hook) unsafe extern "C" fn wrapper<const K: usize>($( $arg: $ty ),*) -> Res {
                    // SAFETY: the type is this call's C signature; variant `K` was handed out.
                    let real: unsafe extern "C" fn($($ty),*) -> Res = unsafe { ENTRY.targets.get(K) };
                    let params = Params { $($arg),* };
                    // SAFETY: `params` is this call's parameter struct; the closure makes the call
                    // with the caller's arguments, to the function the slot held before.
                    unsafe { crate::hook::interpose::wrappers::around(&ENTRY, (&raw const params).cast(), || real($($arg),*)) }
                }
            }
        )*

        /// Every entry.
        pub(in crate::hook) static ALL: &[&Entry] = &[$( &$name::ENTRY ),*];

        /// The size of each wrapper's parameter struct, by name (for the layout tests).
        #[cfg(test)]
        pub(in crate::hook) fn param_sizes() -> Vec<(&'static str, usize)> {
            vec![$( (stringify!($name), size_of::<$name::Params>()) ),*]
        }
    };
}

interposed! {
    cuCtxSynchronize() Driver 17 false;
    cuCtxSynchronize_v2(ctx: P) Driver 800 false;
    cuStreamSynchronize(hStream: P) Driver 126 false;
    cuStreamSynchronize_ptsz(hStream: P) Driver 440 false;
    cuEventSynchronize(hEvent: P) Driver 121 false;
    cuMemcpyDtoH_v2(dstHost: P, srcDevice: D, ByteCount: usize) Driver 278 false;
    cuMemcpyDtoH_v2_ptds(dstHost: P, srcDevice: D, ByteCount: usize) Driver 398 false;
    cuMemcpyDtoHAsync_v2(dstHost: P, srcDevice: D, ByteCount: usize, hStream: P) Driver 279 false;
    cuMemcpyDtoHAsync_v2_ptsz(dstHost: P, srcDevice: D, ByteCount: usize, hStream: P) Driver 422 false;
    cuMemcpyHtoD_v2(dstDevice: D, srcHost: P, ByteCount: usize) Driver 276 false;
    cuMemcpyHtoD_v2_ptds(dstDevice: D, srcHost: P, ByteCount: usize) Driver 397 false;
    cuMemcpyHtoDAsync_v2(dstDevice: D, srcHost: P, ByteCount: usize, hStream: P) Driver 277 false;
    cuMemcpyHtoDAsync_v2_ptsz(dstDevice: D, srcHost: P, ByteCount: usize, hStream: P) Driver 421 false;
    cuMemcpy(dst: D, src: D, ByteCount: usize) Driver 305 false;
    cuMemcpy_ptds(dst: D, src: D, ByteCount: usize) Driver 408 false;
    cuMemcpyAsync(dst: D, src: D, ByteCount: usize, hStream: P) Driver 306 false;
    cuMemcpyAsync_ptsz(dst: D, src: D, ByteCount: usize, hStream: P) Driver 418 false;
    cuMemFree_v2(dptr: D) Driver 245 false;
    cuMemAlloc_v2(dptr: P, bytesize: usize) Driver 243 false;
    cuMemFreeHost(p: P) Driver 38 false;
    cuMemHostAlloc(pp: P, bytesize: usize, Flags: u32) Driver 39 false;
    cuMemAllocHost_v2(pp: P, bytesize: usize) Driver 294 false;
    cuModuleLoad(module: P, fname: P) Driver 18 false;
    cuModuleLoadData(module: P, image: P) Driver 19 false;
    cuModuleLoadDataEx(module: P, image: P, numOptions: u32, options: P, optionValues: P) Driver 20 false;
    cuModuleLoadFatBinary(module: P, fatCubin: P) Driver 21 false;
    cuModuleUnload(hmod: P) Driver 22 false;
    cuLibraryLoadData(library: P, code: P, jitOptions: P, jitOptionsValues: P, numJitOptions: u32,
        libraryOptions: P, libraryOptionValues: P, numLibraryOptions: u32) Driver 678 false;
    cuLibraryLoadFromFile(library: P, fileName: P, jitOptions: P, jitOptionsValues: P,
        numJitOptions: u32, libraryOptions: P, libraryOptionValues: P, numLibraryOptions: u32)
        Driver 679 false;
    cuDevicePrimaryCtxRelease_v2(dev: i32) Driver 544 false;
    cuDevicePrimaryCtxReset_v2(dev: i32) Driver 545 false;
    cudaDeviceSynchronize() Runtime 165 false;
    cudaThreadSynchronize() Runtime 126 false;
    cuStreamBeginCapture(hStream: P) Driver 495 false;
    cuStreamBeginCapture_ptsz(hStream: P) Driver 496 false;
    cuStreamBeginCapture_v2(hStream: P, mode: u32) Driver 539 false;
    cuStreamBeginCapture_v2_ptsz(hStream: P, mode: u32) Driver 540 false;
    cuStreamEndCapture(hStream: P, phGraph: P) Driver 497 false;
    cuStreamEndCapture_ptsz(hStream: P, phGraph: P) Driver 498 false;
    cuStreamQuery(hStream: P) Driver 125 true;
    cuStreamQuery_ptsz(hStream: P) Driver 439 true;
    cuLaunchKernel(f: P, gridDimX: u32, gridDimY: u32, gridDimZ: u32, blockDimX: u32,
        blockDimY: u32, blockDimZ: u32, sharedMemBytes: u32, hStream: P, kernelParams: P,
        extra: P) Driver 307 true;
    cuLaunchKernel_ptsz(f: P, gridDimX: u32, gridDimY: u32, gridDimZ: u32, blockDimX: u32,
        blockDimY: u32, blockDimZ: u32, sharedMemBytes: u32, hStream: P, kernelParams: P,
        extra: P) Driver 442 true;
}
