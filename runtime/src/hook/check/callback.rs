//! The `extern "C"` function CUPTI calls at the entry and exit of every hooked CUDA call, on the
//! calling thread. Nothing unwinds out of it: its body runs under `catch_unwind`, and it never
//! panics on purpose (violations are reported, recorded or kept for the scope's end).

// With `--cfg nosync_off` the callback does nothing, and what it would use goes unused.
#![cfg_attr(nosync_off, allow(dead_code, unused_imports))]

use std::ffi::c_void;

use super::ffi::{self, CallbackData};
use super::table::{self, Domain, Memory, PtrKind};

/// The subscriber's callback.
///
/// # Safety
/// Called by CUPTI only, with `data` pointing at a `CUpti_CallbackData` of an enabled
/// driver- or runtime-API callback.
pub(in crate::hook) unsafe extern "C" fn on_api(
    _userdata: *mut c_void,
    domain: u32,
    cbid: u32,
    data: *const c_void,
) {
    #[cfg(not(nosync_off))]
    {
        if data.is_null() || idle(cbid) {
            return;
        }
        let domain = match domain {
            ffi::DOMAIN_DRIVER => Domain::Driver,
            ffi::DOMAIN_RUNTIME => Domain::Runtime,
            _ => return,
        };
        // SAFETY: `data` is not null (checked above) and, by `on_api`'s contract, CUPTI's
        // `CUpti_CallbackData` for this call, alive during the callback; `CallbackData`
        // declares its layout (checked against cudarc's bindings in `ffi`'s tests). Its
        // `functionParams` is the parameter struct of that call, `correlationData` the call's
        // slot and `functionReturnValue` its result (or null), as `check_interposed` requires.
        unsafe { check_interposed(domain, cbid, &*data.cast::<CallbackData>()) };
    }
    #[cfg(nosync_off)]
    let _ = (domain, cbid, data);
}

/// Whether a call has nothing to decide: outside any scope (not counting, not capturing), no
/// report on, no capture beginning, and not a device runner while some thread checks waits. One
/// thread-local read and two relaxed loads (a third read on a runner).
#[cfg(not(nosync_off))]
#[inline(always)]
pub(in crate::hook) fn idle(cbid: u32) -> bool {
    let runner = || super::demand::checking() && super::runner::is_runner();
    crate::guard::state::flags() == 0
        && !super::sink::on()
        && !super::capture::Watched::begins(cbid)
        && !runner()
}

/// Without checks there is never anything to decide.
#[cfg(nosync_off)]
#[inline(always)]
pub(in crate::hook) fn idle(_cbid: u32) -> bool {
    true
}

/// The loaded driver's entry points, handed down by the backend that loads it (`load.rs`).
static DRIVER: std::sync::OnceLock<&'static ffi::Driver> = std::sync::OnceLock::new();

/// The driver is loaded: the check asks it where pointers live.
pub(in crate::hook) fn driver_loaded(driver: &'static ffi::Driver) {
    let _ = DRIVER.set(driver);
}

/// Checks one call with the live driver, under `catch_unwind`: a bug in nosync must not unwind
/// into the driver or the program's FFI call (it is already printed by the panic hook).
///
/// # Safety
/// As [`check_call`].
pub(in crate::hook) unsafe fn check_interposed(domain: Domain, cbid: u32, data: &CallbackData) {
    #[cfg(not(nosync_off))]
    {
        let run = std::panic::AssertUnwindSafe(|| {
            // The hook is installed only once the driver is loaded.
            let Some(driver) = DRIVER.get().copied() else {
                return;
            };
            // SAFETY: this fn's contract.
            unsafe { check_call(domain, cbid, data, &Driver(driver)) };
        });
        let _ = std::panic::catch_unwind(run);
    }
    #[cfg(nosync_off)]
    let _ = (domain, cbid, data);
}

/// Decides one call and checks the site it declares, if any. This is the callback without the
/// FFI: the tests call it with callback data shaped like CUPTI's and a fake [`Memory`].
///
/// # Safety
/// `data` is shaped like CUPTI's data of callback `cbid` in `domain`: `functionParams` is null or
/// points at that call's parameter struct, `correlationData` is null or the call's `u64` slot,
/// `functionReturnValue` is null or points at the call's result (read at its exit).
#[cfg(not(nosync_off))]
pub(in crate::hook) unsafe fn check_call(
    domain: Domain,
    cbid: u32,
    data: &CallbackData,
    mem: &dyn Memory,
) {
    use crate::guard::state::{self, IN_RUNTIME, QUIET};
    let flags = state::flags();
    if flags & QUIET != 0 {
        return; // a nosync::gpu operation checked this call itself
    }
    let enter = data.callbackSite == ffi::API_ENTER;
    let Some(row) = table::row(domain, cbid) else {
        if let Some(watched) = super::capture::Watched::row(domain, cbid) {
            // SAFETY: `watched` is the row of `cbid` in `domain`, so `data` is the data of
            // `watched`'s call as `calls::watched` requires (this fn's contract).
            unsafe { super::calls::watched(watched, enter, data, flags) };
        }
        return;
    };
    match domain {
        // A runtime call is checked at its entry; the driver calls it makes are not checked
        // again (measured: CUDA 13's cudaDeviceSynchronize calls cuCtxSynchronize_v2).
        Domain::Runtime => state::set_flag(IN_RUNTIME, enter),
        Domain::Driver if flags & IN_RUNTIME != 0 => return,
        Domain::Driver => {}
    }
    // SAFETY: `row` is the row of `cbid` in `domain`, so `data` is the data of `row`'s call as
    // `enter_hooked` and `exit_hooked` require (this fn's contract).
    unsafe {
        if enter {
            super::calls::enter_hooked(row, data, mem, flags);
        } else {
            super::calls::exit_hooked(row, data, flags);
        }
    }
}

/// The live driver: `cuPointerGetAttribute`, which does not wait and is not hooked.
struct Driver<'a>(&'a ffi::Driver);

impl Memory for Driver<'_> {
    fn kind(&self, ptr: u64) -> PtrKind {
        let mut kind: u32 = 0;
        // SAFETY: the loaded driver's `cuPointerGetAttribute` (`cuda.h`'s signature, `load.rs`)
        // writes one `unsigned int` for `CU_POINTER_ATTRIBUTE_MEMORY_TYPE` into `kind`, which
        // outlives the call; any `ptr` is allowed (unknown ones return an error).
        let r = unsafe {
            (self.0.pointer_attribute)((&raw mut kind).cast(), ffi::POINTER_MEMORY_TYPE, ptr)
        };
        match (r, kind) {
            (0, ffi::MEMORYTYPE_HOST) => PtrKind::Pinned,
            (0, _) => PtrKind::Device,
            // Memory the driver does not know (CUDA_ERROR_INVALID_VALUE) is pageable; any other
            // error is taken as pageable too, the answer that reports rather than hides a wait.
            _ => PtrKind::Pageable,
        }
    }

    fn pool_allocated(&self, ptr: u64) -> bool {
        let mut pool: *mut c_void = std::ptr::null_mut();
        // SAFETY: as for `kind`, with `CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`: the driver writes
        // one `CUmemoryPool` (a pointer) into `pool`.
        let r = unsafe {
            (self.0.pointer_attribute)((&raw mut pool).cast(), ffi::POINTER_MEMPOOL_HANDLE, ptr)
        };
        r == 0 && !pool.is_null()
    }
}
