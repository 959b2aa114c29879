//! The callback's decisions on callback data shaped like CUPTI's (`CUpti_CallbackData` with
//! `functionParams` pointing at the call's parameter struct), with a fake driver. The values are
//! the ones the H200 run printed for the same calls (`tests/hook_gpu.rs`, `docs/gpu.md`).

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

// cudarc's generated parameter structs (the full ones, which the hook reads a prefix of).
use cudarc::cupti::sys::{
    cuMemFree_v2_params_st, cuMemcpyDtoHAsync_v2_params_st, cuMemcpyHtoDAsync_v2_params_st,
};

use super::callback::check_call;
use super::ffi::{self, CallbackData};
use super::table::{self, Args, Domain, HOOKED, Memory, PtrKind, Rule, Verdict};
use crate::guard::state::{self, IN_RUNTIME, PENDING, QUIET};
use crate::{Mode, SyncKind, SyncViolation};

/// Pointers below 0x1000_0000 are pageable, below 0x2000_0000 pinned, the rest device memory;
/// device pointers with bit 0x100 set come from a pool.
struct Fake;

impl Memory for Fake {
    fn kind(&self, ptr: u64) -> PtrKind {
        match ptr {
            0..0x1000_0000 => PtrKind::Pageable,
            0x1000_0000..0x2000_0000 => PtrKind::Pinned,
            _ => PtrKind::Device,
        }
    }
    fn pool_allocated(&self, ptr: u64) -> bool {
        ptr & 0x100 != 0
    }
}

const PAGEABLE: u64 = 0x7f00;
const PINNED: u64 = 0x1000_4000;
const DEVICE: u64 = 0x7f3a_0000_0000;
const POOL: u64 = 0x7f3a_0000_0100;

fn data(params: *const c_void, site: u32, name: &'static [u8]) -> CallbackData {
    CallbackData {
        callbackSite: site,
        functionName: name.as_ptr().cast(),
        functionParams: params,
        functionReturnValue: std::ptr::null_mut(),
        symbolName: std::ptr::null(),
        context: std::ptr::null_mut(),
        contextUid: 1,
        correlationData: std::ptr::null_mut(),
        correlationId: 42,
    }
}

const ENTER: u32 = ffi::API_ENTER;

/// `cuMemcpyDtoHAsync_v2(dst, DEVICE, 4, stream)` inside a forbid scope: the sites declared.
fn dtoh_async(dst: u64, site: u32) -> crate::SyncReport {
    let params = cuMemcpyDtoHAsync_v2_params_st {
        dstHost: dst as *mut c_void,
        srcDevice: DEVICE,
        ByteCount: 4,
        hStream: std::ptr::null_mut(),
    };
    let d = data((&raw const params).cast(), site, b"cuMemcpyDtoHAsync_v2\0");
    let (_, report) = crate::count_syncs(|| {
        crate::with_mode(Mode::Log, || {
            let _hot = crate::forbid();
            // SAFETY: the params are the call's struct.
            unsafe { check_call(Domain::Driver, 279, &d, &Fake) };
        })
    });
    report
}

#[test]
fn an_async_copy_into_pageable_memory_waits_into_pinned_memory_not() {
    let pageable = dtoh_async(PAGEABLE, ENTER);
    assert_eq!(pageable.count_api("cuMemcpyDtoHAsync_v2"), 1, "{pageable}");
    assert_eq!(
        (pageable.forbidden(), pageable.of_kind(SyncKind::Does)),
        (1, 1)
    );
    assert!(dtoh_async(PINNED, ENTER).is_empty());
    let exit = ffi::API_EXIT;
    assert!(
        dtoh_async(PAGEABLE, exit).is_empty(),
        "only the entry counts"
    );
}

#[test]
fn the_rules_decide_from_the_arguments() {
    let copy = |dst, src, bytes| Args { dst, src, bytes };
    let cases = [
        (Rule::Synchronize, Args::default(), Verdict::Waits),
        (Rule::ToHost, copy(PINNED, DEVICE, 4), Verdict::Waits),
        (Rule::ToHostAsync, copy(DEVICE, DEVICE, 4), Verdict::No),
        (
            Rule::FromHostAsync,
            copy(DEVICE, PINNED, 16 << 20),
            Verdict::No,
        ),
        (
            Rule::FromHostAsync,
            copy(DEVICE, PAGEABLE, 64 << 10),
            Verdict::No,
        ),
        (
            Rule::FromHostAsync,
            copy(DEVICE, PAGEABLE, 1 << 20),
            Verdict::May,
        ),
        (
            Rule::FromHostAsync,
            copy(DEVICE, PAGEABLE, 3 << 20),
            Verdict::Waits,
        ),
        (Rule::Copy, copy(DEVICE, DEVICE, 1 << 20), Verdict::No),
        (Rule::Copy, copy(PINNED, DEVICE, 4), Verdict::Waits),
        (Rule::CopyAsync, copy(PAGEABLE, DEVICE, 4), Verdict::Waits),
        (Rule::CopyAsync, copy(PINNED, DEVICE, 4), Verdict::No),
        (
            Rule::CopyAsync,
            copy(DEVICE, PAGEABLE, 3 << 20),
            Verdict::Waits,
        ),
        (Rule::Free, copy(POOL, 0, 0), Verdict::No),
        (Rule::Free, copy(DEVICE, 0, 0), Verdict::Waits),
        (Rule::Alloc, Args::default(), Verdict::May),
        (Rule::Setup, Args::default(), Verdict::Waits),
    ];
    for (rule, args, verdict) in cases {
        assert_eq!(rule.decide(args, &Fake), verdict, "{rule:?} {args:?}");
    }
}

/// Panics when asked: small uploads are decided without the driver.
struct NeverAsked;

impl Memory for NeverAsked {
    fn kind(&self, ptr: u64) -> PtrKind {
        panic!("asked for {ptr:#x}")
    }
    fn pool_allocated(&self, ptr: u64) -> bool {
        panic!("asked for {ptr:#x}")
    }
}

#[test]
fn small_uploads_are_decided_without_asking_the_driver() {
    let args = Args {
        dst: DEVICE,
        src: PAGEABLE,
        bytes: 64 << 10,
    };
    assert_eq!(Rule::FromHostAsync.decide(args, &NeverAsked), Verdict::No);
}

#[test]
fn granularity_picks_the_site() {
    let row = table::row(Domain::Driver, 277).expect("cuMemcpyHtoDAsync_v2 is hooked");
    assert_eq!(row.does.api, "cuMemcpyHtoDAsync_v2");
    assert!(std::ptr::eq(
        table::site_for(row, Verdict::May, true).unwrap(),
        &row.may
    ));
    assert!(table::site_for(row, Verdict::May, false).is_none());
    assert!(std::ptr::eq(
        table::site_for(row, Verdict::Waits, false).unwrap(),
        &row.does
    ));
    assert!(table::site_for(row, Verdict::No, true).is_none());
}

#[test]
fn the_arguments_are_read_from_the_parameter_structs() {
    let htod = cuMemcpyHtoDAsync_v2_params_st {
        dstDevice: DEVICE,
        srcHost: PAGEABLE as *const c_void,
        ByteCount: 3 << 20,
        hStream: std::ptr::null_mut(),
    };
    let free = cuMemFree_v2_params_st { dptr: POOL };
    // SAFETY: each pointer is the struct of its layout.
    let (a, b, none) = unsafe {
        (
            super::args::read_args(table::Params::FromHost, (&raw const htod).cast()),
            super::args::read_args(table::Params::Free, (&raw const free).cast()),
            super::args::read_args(table::Params::ToHost, std::ptr::null()),
        )
    };
    assert_eq!(
        a,
        Args {
            dst: DEVICE,
            src: PAGEABLE,
            bytes: 3 << 20
        }
    );
    assert_eq!(b.dst, POOL);
    assert_eq!(none, Args::default());
}

/// `cuStreamSynchronize` inside `no_sync`, in `mode`.
fn synchronize_in_scope(mode: Mode) -> std::thread::Result<()> {
    let d = data(std::ptr::null(), ENTER, b"cuStreamSynchronize\0");
    catch_unwind(AssertUnwindSafe(|| {
        crate::with_mode(mode, || {
            crate::no_sync(|| {
                // SAFETY: cuStreamSynchronize's rule reads no parameter.
                unsafe { check_call(Domain::Driver, 126, &d, &Fake) };
                assert!(crate::is_forbidden(), "the callback returned normally");
            });
        })
    }))
}

#[test]
fn error_and_panic_modes_surface_at_the_end_of_the_scope() {
    for mode in [Mode::Error, Mode::Panic] {
        let panic = synchronize_in_scope(mode).expect_err("the scope's end panics");
        let message = panic.downcast_ref::<String>().expect("a message");
        assert!(
            message.starts_with("`cuStreamSynchronize` blocks the host"),
            "{message}"
        );
        assert!(
            message.contains("inside a nosync::forbid() scope"),
            "{message}"
        );
    }
    assert!(synchronize_in_scope(Mode::Log).is_ok());
    assert!(synchronize_in_scope(Mode::Allow).is_ok());
    assert_eq!(state::flags() & PENDING, 0, "nothing left pending");
}

#[test]
fn allow_scopes_quiet_ops_and_disabled_checks_see_nothing() {
    let d = data(std::ptr::null(), ENTER, b"cuStreamSynchronize\0");
    // SAFETY: as above.
    let call = || unsafe { check_call(Domain::Driver, 126, &d, &Fake) };
    let (_, report) = crate::count_syncs(|| {
        crate::with_mode(Mode::Error, || {
            crate::no_sync(|| {
                crate::allow_sync(call);
                state::set_flag(QUIET, true);
                call();
                state::set_flag(QUIET, false);
            })
        })
    });
    assert_eq!((report.total(), report.forbidden()), (1, 0), "{report}");
}

#[nosync::no_sync]
fn step_returning(d: &CallbackData) -> Result<u32, SyncViolation> {
    // SAFETY: as above.
    unsafe { check_call(Domain::Driver, 126, d, &Fake) };
    Ok(7)
}

#[test]
fn a_no_sync_fn_returning_result_returns_the_violation_in_error_mode() {
    let d = data(std::ptr::null(), ENTER, b"cuStreamSynchronize\0");
    let err = crate::with_mode(Mode::Error, || step_returning(&d)).unwrap_err();
    assert_eq!(err.site().api, "cuStreamSynchronize");
    assert_eq!(err.scope_function(), Some("step_returning"));
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        crate::with_mode(Mode::Panic, || step_returning(&d))
    }));
    assert!(panicked.is_err(), "Mode::Panic panics at the scope's end");
    assert_eq!(
        crate::with_mode(Mode::Log, || step_returning(&d)).unwrap(),
        7
    );
}

#[test]
fn rows_are_unique_and_match_cuptis_callback_ids() {
    for (i, row) in HOOKED.iter().enumerate() {
        let dup = HOOKED[..i]
            .iter()
            .any(|r| r.domain == row.domain && r.cbid == row.cbid);
        assert!(!dup, "{} twice", row.does.api);
        assert_eq!(row.may.api, row.does.api);
    }
    #[cfg(feature = "cuda-13000")]
    ids_match_cudarc();
}

#[cfg(feature = "cuda-13000")]
fn ids_match_cudarc() {
    use cudarc::cupti::sys::CUpti_driver_api_trace_cbid_enum as D;
    use cudarc::cupti::sys::CUpti_runtime_api_trace_cbid_enum as R;
    let driver = |api: &str| {
        let row = HOOKED.iter().find(|r| r.does.api == api);
        row.map(|r| (r.domain, r.cbid))
    };
    let ids = [
        (
            "cuCtxSynchronize",
            D::CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize as u32,
        ),
        (
            "cuCtxSynchronize_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2 as u32,
        ),
        (
            "cuStreamSynchronize",
            D::CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize as u32,
        ),
        (
            "cuStreamSynchronize_ptsz",
            D::CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz as u32,
        ),
        (
            "cuEventSynchronize",
            D::CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize as u32,
        ),
        (
            "cuMemcpyDtoH_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2 as u32,
        ),
        (
            "cuMemcpyDtoH_v2_ptds",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds as u32,
        ),
        (
            "cuMemcpyDtoHAsync_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2 as u32,
        ),
        (
            "cuMemcpyDtoHAsync_v2_ptsz",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz as u32,
        ),
        (
            "cuMemcpyHtoD_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2 as u32,
        ),
        (
            "cuMemcpyHtoD_v2_ptds",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds as u32,
        ),
        (
            "cuMemcpyHtoDAsync_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2 as u32,
        ),
        (
            "cuMemcpyHtoDAsync_v2_ptsz",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz as u32,
        ),
        ("cuMemcpy", D::CUPTI_DRIVER_TRACE_CBID_cuMemcpy as u32),
        (
            "cuMemcpy_ptds",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds as u32,
        ),
        (
            "cuMemcpyAsync",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync as u32,
        ),
        (
            "cuMemcpyAsync_ptsz",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz as u32,
        ),
        (
            "cuMemFree_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2 as u32,
        ),
        (
            "cuMemAlloc_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2 as u32,
        ),
        (
            "cuMemFreeHost",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost as u32,
        ),
        (
            "cuMemHostAlloc",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc as u32,
        ),
        (
            "cuMemAllocHost_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2 as u32,
        ),
        (
            "cuModuleLoad",
            D::CUPTI_DRIVER_TRACE_CBID_cuModuleLoad as u32,
        ),
        (
            "cuModuleLoadData",
            D::CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData as u32,
        ),
        (
            "cuModuleLoadDataEx",
            D::CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx as u32,
        ),
        (
            "cuModuleLoadFatBinary",
            D::CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary as u32,
        ),
        (
            "cuModuleUnload",
            D::CUPTI_DRIVER_TRACE_CBID_cuModuleUnload as u32,
        ),
        (
            "cuLibraryLoadData",
            D::CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData as u32,
        ),
        (
            "cuLibraryLoadFromFile",
            D::CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile as u32,
        ),
        (
            "cuDevicePrimaryCtxRelease_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2 as u32,
        ),
        (
            "cuDevicePrimaryCtxReset_v2",
            D::CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2 as u32,
        ),
    ];
    assert_eq!(ids.len() + 2, HOOKED.len(), "every driver row is listed");
    for (api, id) in ids {
        assert_eq!(driver(api), Some((Domain::Driver, id)), "{api}");
    }
    let runtime: Vec<(u32, &str)> = HOOKED
        .iter()
        .filter(|r| r.domain == Domain::Runtime)
        .map(|r| (r.cbid, r.does.api))
        .collect();
    let expected = [
        (
            R::CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 as u32,
            "cudaDeviceSynchronize",
        ),
        (
            R::CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020 as u32,
            "cudaThreadSynchronize",
        ),
    ];
    assert_eq!(runtime, expected);
}

#[nosync::no_sync]
fn step_with_string_error(d: &CallbackData) -> Result<u32, String> {
    // SAFETY: as above.
    unsafe { check_call(Domain::Driver, 126, d, &Fake) };
    Ok(7)
}

#[test]
fn an_error_that_cannot_take_the_violation_panics_at_the_scope_end() {
    let d = data(std::ptr::null(), ENTER, b"cuStreamSynchronize\0");
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        crate::with_mode(Mode::Error, || step_with_string_error(&d))
    }));
    let message = panicked.expect_err("kept for the guard, which panics");
    let message = message.downcast_ref::<String>().expect("a message");
    assert!(
        message.contains("inside #[no_sync] `step_with_string_error`"),
        "{message}"
    );
    assert_eq!(state::flags() & PENDING, 0);
}

#[test]
fn driver_calls_inside_a_hooked_runtime_call_are_not_reported_twice() {
    let exit = ffi::API_EXIT;
    let runtime = |site| data(std::ptr::null(), site, b"cudaDeviceSynchronize_v3020\0");
    let driver = |site| data(std::ptr::null(), site, b"cuCtxSynchronize_v2\0");
    let (_, report) = crate::count_syncs(|| {
        crate::with_mode(Mode::Log, || {
            let _hot = crate::forbid();
            // SAFETY: neither rule reads a parameter.
            unsafe {
                check_call(Domain::Runtime, 165, &runtime(ENTER), &Fake);
                check_call(Domain::Driver, 800, &driver(ENTER), &Fake);
                check_call(Domain::Driver, 800, &driver(exit), &Fake);
                check_call(Domain::Runtime, 165, &runtime(exit), &Fake);
                check_call(Domain::Driver, 800, &driver(ENTER), &Fake);
            }
        })
    });
    assert_eq!(report.count_api("cudaDeviceSynchronize"), 1, "{report}");
    assert_eq!(
        report.count_api("cuCtxSynchronize_v2"),
        1,
        "only the call made after: {report}"
    );
    assert_eq!(state::flags() & IN_RUNTIME, 0);
}
