//! The few CUDA driver and CUPTI entry points the hook calls, and the C structs it reads, declared
//! here and resolved at run time with `libloading`.
//!
//! The hook does not use cudarc: an application's cudarc (candle's, cubecl's, burn's, its own)
//! chooses its linking mode and its CUDA version, and any choice nosync made for the same cudarc
//! would be unified with it by cargo (two linking modes, or two versions, do not build). These
//! declarations hold for every CUDA 11.x to 13.x: the driver and CUPTI keep their ABI, the
//! callback ids are fixed (`cupti_driver_cbid.h`), and the structs read are the stable prefixes of
//! `CUpti_CallbackData` and of the copy calls' parameter structs (`generated_cuda_api_meta.h`).
//! The unit tests compare every declaration with cudarc 0.19's generated bindings.

// With `--cfg nosync_off` the callback does nothing, and what it would read goes unused.
#![cfg_attr(nosync_off, allow(dead_code))]

use std::ffi::{c_char, c_int, c_uint, c_void};

/// `CUresult`: 0 is success.
pub(in crate::hook) type CuResult = c_int;
/// `CUptiResult`: 0 is success.
pub(in crate::hook) type CuptiResult = c_uint;
/// `CUpti_SubscriberHandle`.
pub(in crate::hook) type Subscriber = *mut c_void;
/// `CUdeviceptr`.
pub(in crate::hook) type DevicePtr = u64;

/// `CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED`.
pub(in crate::hook) const CUPTI_MULTIPLE_SUBSCRIBERS: CuptiResult = 39;
/// `CUPTI_CB_DOMAIN_DRIVER_API`.
pub(in crate::hook) const DOMAIN_DRIVER: u32 = 1;
/// `CUPTI_CB_DOMAIN_RUNTIME_API`.
pub(in crate::hook) const DOMAIN_RUNTIME: u32 = 2;
/// `CUPTI_API_ENTER`.
pub(in crate::hook) const API_ENTER: u32 = 0;
/// `CUPTI_API_EXIT`.
#[cfg_attr(not(test), allow(dead_code))] // exits are not decided yet
pub(in crate::hook) const API_EXIT: u32 = 1;
/// `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`.
pub(in crate::hook) const POINTER_MEMORY_TYPE: c_uint = 2;
/// `CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`.
pub(in crate::hook) const POINTER_MEMPOOL_HANDLE: c_uint = 17;
/// `CU_MEMORYTYPE_HOST`.
pub(in crate::hook) const MEMORYTYPE_HOST: c_uint = 1;

/// `CUpti_CallbackFunc`. The domain and the callback site are C enums: read as integers, so an
/// unknown value is no undefined behaviour.
pub(in crate::hook) type CallbackFunc =
    unsafe extern "C" fn(userdata: *mut c_void, domain: u32, cbid: u32, data: *const c_void);

/// `CUpti_CallbackData`, the data of an API callback.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case)] // CUPTI's names, so the declaration reads like the header
pub(in crate::hook) struct CallbackData {
    /// `CUPTI_API_ENTER` or `CUPTI_API_EXIT`.
    pub callbackSite: u32,
    /// The API function's name.
    pub functionName: *const c_char,
    /// The call's parameter struct.
    pub functionParams: *const c_void,
    /// The call's result, valid at exit.
    pub functionReturnValue: *mut c_void,
    /// The kernel's name, for launches.
    pub symbolName: *const c_char,
    /// The context (`CUcontext`).
    pub context: *mut c_void,
    /// The context's unique id.
    pub contextUid: u32,
    /// Data kept from enter to exit.
    pub correlationData: *mut u64,
    /// The call's correlation id.
    pub correlationId: u32,
}

/// `cuMemcpyDtoH_v2_params` (and the prefix of the async and `_ptds`/`_ptsz` variants).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case)]
pub(in crate::hook) struct ToHostParams {
    /// Host destination.
    pub dstHost: *mut c_void,
    /// Device source.
    pub srcDevice: DevicePtr,
    /// Bytes.
    pub ByteCount: usize,
}

/// `cuMemcpyHtoD_v2_params` (and the prefix of its variants).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case)]
pub(in crate::hook) struct FromHostParams {
    /// Device destination.
    pub dstDevice: DevicePtr,
    /// Host source.
    pub srcHost: *const c_void,
    /// Bytes.
    pub ByteCount: usize,
}

/// `cuMemcpy_params` (and the prefix of its variants).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case)]
pub(in crate::hook) struct CopyParams {
    /// Destination (unified addressing).
    pub dst: DevicePtr,
    /// Source.
    pub src: DevicePtr,
    /// Bytes.
    pub ByteCount: usize,
}

/// `cuLaunchKernel_params`, up to the stream.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_snake_case)]
pub(in crate::hook) struct LaunchParams {
    /// The kernel (`CUfunction`).
    pub f: *mut c_void,
    /// Grid and block dimensions, dynamic shared memory.
    pub dims: [c_uint; 7],
    /// The stream (`CUstream`).
    pub hStream: *mut c_void,
}

/// `cuMemFree_v2_params`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(in crate::hook) struct FreeParams {
    /// The freed pointer.
    pub dptr: DevicePtr,
}

/// The driver's entry points the hook calls (none of them is hooked or waits).
#[derive(Debug, Clone, Copy)]
pub(in crate::hook) struct Driver {
    /// `cuInit`.
    pub init: unsafe extern "C" fn(flags: c_uint) -> CuResult,
    /// `cuDriverGetVersion`.
    pub get_version: unsafe extern "C" fn(version: *mut c_int) -> CuResult,
    /// `cuGetErrorName`.
    pub error_name: unsafe extern "C" fn(code: CuResult, name: *mut *const c_char) -> CuResult,
    /// `cuPointerGetAttribute`.
    pub pointer_attribute:
        unsafe extern "C" fn(data: *mut c_void, attribute: c_uint, ptr: DevicePtr) -> CuResult,
    /// `cuCtxGetCurrent`: `CUDA_ERROR_NOT_INITIALIZED` until some code called `cuInit`.
    pub ctx_current: unsafe extern "C" fn(ctx: *mut *mut c_void) -> CuResult,
}

/// CUPTI's entry points for the callback API.
#[derive(Debug, Clone, Copy)]
pub(in crate::hook) struct Cupti {
    /// `cuptiSubscribe`.
    pub subscribe: unsafe extern "C" fn(
        subscriber: *mut Subscriber,
        callback: CallbackFunc,
        userdata: *mut c_void,
    ) -> CuptiResult,
    /// `cuptiUnsubscribe`.
    pub unsubscribe: unsafe extern "C" fn(subscriber: Subscriber) -> CuptiResult,
    /// `cuptiEnableCallback`.
    pub enable_callback: unsafe extern "C" fn(
        enable: u32,
        subscriber: Subscriber,
        domain: u32,
        cbid: u32,
    ) -> CuptiResult,
    /// `cuptiGetResultString`.
    pub result_string:
        unsafe extern "C" fn(result: CuptiResult, text: *mut *const c_char) -> CuptiResult,
}

/// A NUL-terminated static string from the driver or CUPTI, or `None`.
///
/// # Safety
/// `text` is null or points at a NUL-terminated string that lives for the program.
pub(in crate::hook) unsafe fn static_str(text: *const c_char) -> Option<String> {
    (!text.is_null()).then(|| {
        // SAFETY: `text` is not null, so by the caller's contract a NUL-terminated string that
        // lives for the program.
        unsafe { std::ffi::CStr::from_ptr(text) }
            .to_string_lossy()
            .into()
    })
}

/// `CUDA_ERROR_NOT_INITIALIZED`.
pub(in crate::hook) const NOT_INITIALIZED: CuResult = 3;

impl Driver {
    /// Whether some code of the process has called `cuInit` (and may hold the driver's
    /// functions).
    pub(in crate::hook) fn initialized(&self) -> bool {
        let mut ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: the loaded driver's `cuCtxGetCurrent` writes one `CUcontext` into `ctx`.
        unsafe { (self.ctx_current)(&mut ctx) != NOT_INITIALIZED }
    }

    /// `cuDriverGetVersion`, 0 when it fails.
    pub(in crate::hook) fn version(&self) -> i32 {
        let mut v = 0;
        // SAFETY: the loaded driver's `cuDriverGetVersion` writes one `int` into `v`.
        let _ = unsafe { (self.get_version)(&mut v) };
        v
    }

    /// `CUDA_ERROR_NO_DEVICE (100)`: the driver's name for a result, and its number.
    pub(in crate::hook) fn describe(&self, code: CuResult) -> String {
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: `cuGetErrorName` writes into `name` a pointer to a static string, or leaves
        // it null; any `code` is allowed.
        let _ = unsafe { (self.error_name)(code, &mut name) };
        // SAFETY: `name` is null or the driver's static NUL-terminated string.
        match unsafe { static_str(name) } {
            Some(name) => format!("{name} ({code})"),
            None => format!("CUresult {code}"),
        }
    }
}

impl Cupti {
    /// CUPTI's text for a result, with its number.
    pub(in crate::hook) fn describe(&self, code: CuptiResult) -> String {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: `cuptiGetResultString` writes into `text` a pointer to a static string, or
        // leaves it null; any `code` is allowed.
        let _ = unsafe { (self.result_string)(code, &mut text) };
        // SAFETY: `text` is null or CUPTI's static NUL-terminated string.
        match unsafe { static_str(text) } {
            Some(text) => format!("{text} ({code})"),
            None => format!("CUptiResult {code}"),
        }
    }
}

/// Every declaration against cudarc 0.19's bindings, generated from CUDA 13.0's headers.
#[cfg(test)]
mod tests {
    use std::mem::{align_of, offset_of, size_of};

    use cudarc::cupti::sys as cupti;
    use cudarc::driver::sys as driver;

    use super::*;

    macro_rules! same_layout {
        ($ours:ty, $theirs:ty, [$($field:ident),*]) => {
            assert_eq!(size_of::<$ours>(), size_of::<$theirs>(), stringify!($ours));
            assert_eq!(align_of::<$ours>(), align_of::<$theirs>(), stringify!($ours));
            $(assert_eq!(
                offset_of!($ours, $field),
                offset_of!($theirs, $field),
                concat!(stringify!($ours), ".", stringify!($field))
            );)*
        };
    }

    #[test]
    fn the_callback_data_has_cuptis_layout() {
        same_layout!(
            CallbackData,
            cupti::CUpti_CallbackData,
            [
                callbackSite,
                functionName,
                functionParams,
                functionReturnValue,
                symbolName,
                context,
                contextUid,
                correlationData,
                correlationId
            ]
        );
    }

    /// The hook reads a prefix of each parameter struct: the fields it declares sit where the
    /// synchronous and the asynchronous calls' structs have them.
    #[test]
    fn the_parameter_structs_are_prefixes_of_cuptis() {
        macro_rules! prefix {
            ($ours:ty, $theirs:ty, [$($field:ident),*]) => {
                assert!(size_of::<$ours>() <= size_of::<$theirs>(), stringify!($theirs));
                $(assert_eq!(
                    offset_of!($ours, $field),
                    offset_of!($theirs, $field),
                    concat!(stringify!($theirs), ".", stringify!($field))
                );)*
            };
        }
        prefix!(
            ToHostParams,
            cupti::cuMemcpyDtoH_v2_params_st,
            [dstHost, srcDevice, ByteCount]
        );
        prefix!(
            ToHostParams,
            cupti::cuMemcpyDtoHAsync_v2_params_st,
            [dstHost, srcDevice, ByteCount]
        );
        prefix!(
            FromHostParams,
            cupti::cuMemcpyHtoD_v2_params_st,
            [dstDevice, srcHost, ByteCount]
        );
        prefix!(
            FromHostParams,
            cupti::cuMemcpyHtoDAsync_v2_params_st,
            [dstDevice, srcHost, ByteCount]
        );
        prefix!(CopyParams, cupti::cuMemcpy_params_st, [dst, src, ByteCount]);
        prefix!(
            CopyParams,
            cupti::cuMemcpyAsync_params_st,
            [dst, src, ByteCount]
        );
        same_layout!(FreeParams, cupti::cuMemFree_v2_params_st, [dptr]);
        prefix!(LaunchParams, cupti::cuLaunchKernel_params_st, [f, hStream]);
    }

    #[test]
    fn the_constants_are_cudas() {
        use cupti::{CUpti_ApiCallbackSite as Site, CUpti_CallbackDomain as Domain};
        assert_eq!(DOMAIN_DRIVER, Domain::CUPTI_CB_DOMAIN_DRIVER_API as u32);
        assert_eq!(DOMAIN_RUNTIME, Domain::CUPTI_CB_DOMAIN_RUNTIME_API as u32);
        assert_eq!(API_ENTER, Site::CUPTI_API_ENTER as u32);
        assert_eq!(API_EXIT, Site::CUPTI_API_EXIT as u32);
        let multiple = cupti::CUptiResult::CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        assert_eq!(CUPTI_MULTIPLE_SUBSCRIBERS, multiple as u32);
        use driver::CUpointer_attribute as Attr;
        assert_eq!(
            POINTER_MEMORY_TYPE,
            Attr::CU_POINTER_ATTRIBUTE_MEMORY_TYPE as u32
        );
        assert_eq!(
            POINTER_MEMPOOL_HANDLE,
            Attr::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE as u32
        );
        assert_eq!(
            MEMORYTYPE_HOST,
            driver::CUmemorytype::CU_MEMORYTYPE_HOST as u32
        );
        assert_eq!(size_of::<DevicePtr>(), size_of::<driver::CUdeviceptr>());
        assert_eq!(size_of::<CuResult>(), size_of::<driver::CUresult>());
    }
}
