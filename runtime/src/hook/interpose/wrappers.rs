//! One `extern "C"` function per hooked or watched call, with the call's C signature: the
//! interposer hands these out instead of the driver's. Each packs its arguments into the struct
//! CUPTI would pass (`generated_cuda_api_meta.h`: the arguments in order) and runs the same
//! check as the CUPTI callback, at the call's entry and exit, around the real call.
//!
//! Outside every scope, with no report and no capture, a wrapper is one thread-local read and
//! two relaxed loads before it calls the driver.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use super::super::table::Domain;

/// `CUresult` or `cudaError_t`.
type Res = i32;
/// A handle or a host pointer.
type P = *mut c_void;
/// `CUdeviceptr`.
type D = u64;

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
    /// The real function's address; 0 until found. A wrapper is handed out only once it is set.
    pub(in crate::hook) real: AtomicUsize,
}

impl Entry {
    /// The exported name.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(in crate::hook) fn name(&self) -> &'static str {
        let bytes = &self.cname[..self.cname.len() - 1];
        std::str::from_utf8(bytes).unwrap_or("")
    }
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
                    real: AtomicUsize::new(0),
                };

                /// The call's arguments as CUPTI's parameter struct lays them out.
                #[repr(C)]
                pub(in crate::hook) struct Params { $( pub(in crate::hook) $arg: $ty ),* }

                /// The wrapper.
                ///
                /// # Safety
                /// As the driver's function of the same name; called only once `ENTRY.real` is set.
                pub(in crate::hook) unsafe extern "C" fn wrapper($( $arg: $ty ),*) -> Res {
                    let real = ENTRY.real.load(Relaxed);
                    debug_assert_ne!(real, 0, "a wrapper handed out before its real function");
                    // SAFETY: `real` is the address of the function named `ENTRY.cname`, whose
                    // C signature this wrapper has (set by the interposer, never 0 once handed out).
                    let real: unsafe extern "C" fn($($ty),*) -> Res = unsafe { std::mem::transmute(real) };
                    let params = Params { $($arg),* };
                    // SAFETY: `params` is this call's parameter struct; the closure makes the call.
                    unsafe { super::super::around(&ENTRY, (&raw const params).cast(), || real($($arg),*)) }
                }
            }
        )*

        /// Every entry with its wrapper's address.
        pub(in crate::hook) fn all() -> Vec<(&'static Entry, usize)> {
            vec![$( (&$name::ENTRY, $name::wrapper as *const () as usize) ),*]
        }

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
