//! Whole calls through the callback without a GPU: entry and exit records shaped like CUPTI's
//! (`correlationData` the slot CUPTI keeps per call, `functionReturnValue` the call's result):
//! the time waited reaches `count_syncs`, captures begin and end, what breaks one is reported,
//! return codes 900/901 are.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

// cudarc's generated parameter struct (the full one, which the hook reads a prefix of).
use cudarc::cupti::sys::cuMemcpyDtoHAsync_v2_params_st;

use super::ffi::{self, CallbackData};

use super::callback::check_call;
use super::table::BREAKS;
use super::table::{Domain, Memory, PtrKind};
use crate::{Mode, SyncReport};

/// Below 0x1000_0000 pageable, the rest device memory; nothing from a pool.
struct Fake;

impl Memory for Fake {
    fn kind(&self, ptr: u64) -> PtrKind {
        if ptr < 0x1000_0000 {
            PtrKind::Pageable
        } else {
            PtrKind::Device
        }
    }
    fn pool_allocated(&self, _: u64) -> bool {
        false
    }
}

const STREAM: u64 = 0x5555_0000;
static CAPTURED: u64 = STREAM;

/// One call: its entry, then (after `wait`) its exit returning `code`, through one slot.
fn call(cbid: u32, params: *const c_void, wait: Duration, code: u32) {
    let mut slot = 0u64;
    let mut result = code;
    let (slot, result) = (&raw mut slot, (&raw mut result).cast::<c_void>());
    let record = |site| CallbackData {
        callbackSite: site,
        functionName: c"call".as_ptr(),
        functionParams: params,
        functionReturnValue: result,
        symbolName: std::ptr::null(),
        context: std::ptr::null_mut(),
        contextUid: 1,
        correlationData: slot,
        correlationId: 7,
    };
    let enter = record(ffi::API_ENTER);
    // SAFETY: `params` is the call's parameter struct (or null for a call that reads none).
    unsafe { check_call(Domain::Driver, cbid, &enter, &Fake) };
    std::thread::sleep(wait);
    let exit = record(ffi::API_EXIT);
    // SAFETY: as above.
    unsafe { check_call(Domain::Driver, cbid, &exit, &Fake) };
}

fn stream_sync(stream: &u64) {
    call(126, std::ptr::from_ref(stream).cast(), Duration::ZERO, 0);
}

/// `cuStreamBeginCapture_v2(STREAM, mode)`, returning `code`.
fn begin_capture(mode: u32, code: u32) {
    let params: (u64, u32) = (STREAM, mode);
    call(539, (&raw const params).cast(), Duration::ZERO, code);
}

fn end_capture(code: u32) {
    let params: (u64, u64) = (STREAM, 0);
    call(497, (&raw const params).cast(), Duration::ZERO, code);
}

fn alloc() {
    call(243, std::ptr::null(), Duration::ZERO, 0);
}

fn logged(f: impl FnOnce()) -> SyncReport {
    crate::count_syncs(|| crate::with_mode(Mode::Log, f)).1
}

#[test]
fn the_host_s_wait_from_entry_to_exit_reaches_the_report() {
    let report = logged(|| {
        let _hot = crate::forbid();
        call(
            126,
            (&raw const CAPTURED).cast(),
            Duration::from_millis(20),
            0,
        );
        call(
            126,
            (&raw const CAPTURED).cast(),
            Duration::from_millis(2),
            0,
        );
    });
    let site = &report.sites()[0];
    assert_eq!(
        (site.site().api, site.count(), site.timed()),
        ("cuStreamSynchronize", 2, 2)
    );
    assert!(site.waited() >= Duration::from_millis(22), "{report}");
    assert!(site.max_wait() >= Duration::from_millis(20), "{report}");
    assert!(site.max_wait() < site.waited(), "{report}");
    assert!(report.to_string().contains(", waited "), "{report}");
}

#[test]
fn a_call_that_does_not_wait_is_not_timed() {
    let pinned_free = cuMemcpyDtoHAsync_v2_params_st {
        dstHost: 0x2000_0000 as *mut c_void,
        srcDevice: 0x7000_0000,
        ByteCount: 4,
        hStream: STREAM as _,
    };
    let report = logged(|| call(279, (&raw const pinned_free).cast(), Duration::ZERO, 0));
    assert!(report.is_empty(), "{report}");
}

#[test]
fn a_sync_inside_a_capture_breaks_it_and_a_clean_capture_is_silent() {
    let report = logged(|| {
        begin_capture(0, 0);
        assert_ne!(
            crate::guard::state::flags() & crate::guard::state::CAPTURING,
            0
        );
        call(307, std::ptr::null(), Duration::ZERO, 0); // a launch with no parameters: skipped
        stream_sync(&STREAM);
        alloc();
        end_capture(0);
        alloc(); // after the capture: outside every scope, nothing
    });
    let apis: Vec<(&str, &str, usize)> = report
        .sites()
        .iter()
        .map(|s| (s.site().api, s.site().reason, s.forbidden()))
        .collect();
    assert_eq!(
        apis,
        [
            ("cuStreamSynchronize", BREAKS, 1),
            ("cuMemAlloc_v2", BREAKS, 1)
        ]
    );
    assert_eq!(
        crate::guard::state::flags() & crate::guard::state::CAPTURING,
        0
    );
    let clean = logged(|| {
        begin_capture(0, 0);
        let other = 0x7777_0000u64;
        call(125, (&raw const other).cast(), Duration::ZERO, 0); // another stream's query
        end_capture(0);
    });
    assert!(clean.is_empty(), "{clean}");
}

#[test]
fn a_failed_begin_starts_no_capture_and_relaxed_mode_allows_allocations() {
    let report = logged(|| {
        begin_capture(0, 1); // CUDA_ERROR_INVALID_VALUE
        alloc();
        begin_capture(2, 0); // relaxed
        alloc();
        let query = STREAM;
        call(125, (&raw const query).cast(), Duration::ZERO, 0); // still the capturing stream
        end_capture(0);
    });
    let apis: Vec<&str> = report.sites().iter().map(|s| s.site().api).collect();
    assert_eq!(apis, ["cuStreamQuery"], "{report}");
}

#[test]
fn error_mode_keeps_a_capture_break_for_the_scope_and_names_it() {
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        crate::with_mode(Mode::Error, || {
            crate::no_sync(|| {
                begin_capture(0, 0);
                alloc();
                end_capture(0);
            })
        })
    }));
    let message = panicked.expect_err("the scope's end panics");
    let message = message.downcast_ref::<String>().expect("a message");
    assert!(
        message.starts_with(
            "`cuMemAlloc_v2` breaks a CUDA-graph capture (a synchronous allocation or free: prohibited while a stream is captured"
        ),
        "{message}"
    );
    assert!(message.contains("inside a nosync scope ("), "{message}");
    assert!(
        message.ends_with("make the call before or after the capture"),
        "{message}"
    );
}

#[test]
fn a_capture_safe_scope_demands_it_without_a_capture_and_allow_does_not_lift_it() {
    let report = logged(|| {
        crate::capture_safe(|| {
            alloc();
            crate::allow_sync(alloc);
            let legacy = 0u64;
            call(125, (&raw const legacy).cast(), Duration::ZERO, 0);
        });
        alloc();
    });
    let counts: Vec<(&str, usize)> = report
        .sites()
        .iter()
        .map(|s| (s.site().api, s.count()))
        .collect();
    assert_eq!(
        counts,
        [("cuMemAlloc_v2", 2), ("cuStreamQuery", 1)],
        "{report}"
    );
    assert_eq!(
        crate::guard::state::flags() & crate::guard::state::CAPTURE_SAFE,
        0
    );
}

#[test]
fn a_call_reported_at_its_entry_is_not_reported_again_for_its_refusal() {
    let report = logged(|| {
        begin_capture(0, 0);
        call(126, (&raw const CAPTURED).cast(), Duration::ZERO, 900);
        end_capture(901);
    });
    let counts: Vec<(&str, usize)> = report
        .sites()
        .iter()
        .map(|s| (s.site().api, s.count()))
        .collect();
    assert_eq!(
        counts,
        [("cuStreamSynchronize", 1), ("cuStreamEndCapture", 1)],
        "{report}"
    );
}

#[test]
fn return_codes_900_and_901_are_reported_inside_a_scope_only() {
    let report = logged(|| {
        crate::allow_sync(|| call(126, (&raw const CAPTURED).cast(), Duration::ZERO, 900));
        begin_capture(0, 0);
        end_capture(901);
    });
    let sites: Vec<(&str, &str, usize)> = report
        .sites()
        .iter()
        .map(|s| (s.site().api, s.site().reason, s.forbidden()))
        .collect();
    // The sync itself (in an allow scope: counted, allowed), its 900, the end's 901.
    let sync = "an explicit synchronization: waits for the device";
    assert_eq!(
        sites,
        [
            ("cuStreamSynchronize", sync, 0),
            ("cuStreamSynchronize", BREAKS, 1),
            ("cuStreamEndCapture", BREAKS, 1)
        ],
        "{report}"
    );
    let outside = crate::count_syncs(|| ()).1;
    assert!(outside.is_empty());
}

/// Runs [`runner_alone`] in a child process: a runner's wait counts in every scope open in the
/// process, also those of the other tests of this binary.
#[test]
fn a_device_runner_s_wait_counts_in_the_scopes_open_meanwhile() {
    crate::hook::run_test_alone("hook::check::flow_tests::runner_alone");
}

/// A `cuStreamSynchronize` on a thread named like cubecl's runners (or marked as one), made
/// while this thread is in a `#[no_sync]` fn, is that fn's violation; another thread's is not.
#[test]
#[ignore = "run alone in a child process by `a_device_runner_s_wait_counts_in_the_scopes_open_meanwhile`"]
fn runner_alone() {
    super::demand::installed(crate::hook::SWITCHES); // scopes are counted from here on
    fn sync_on(name: &str, mark: bool) {
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                if mark {
                    crate::hook::runner_thread();
                }
                stream_sync(&STREAM);
            })
            .expect("spawn")
            .join()
            .expect("join");
    }
    #[crate::no_sync]
    fn step(name: &str, mark: bool) -> Result<(), crate::SyncViolation> {
        sync_on(name, mark);
        Ok(())
    }
    let err = crate::with_mode(Mode::Error, || step("DSD-0-0", false)).expect_err("reported");
    assert_eq!(
        (err.runner_thread(), err.scope_function(), err.site().api),
        (Some("DSD-0-0"), Some("step"), "cuStreamSynchronize")
    );
    let message = err.to_string();
    assert!(
        message.starts_with(
            "`cuStreamSynchronize` blocks device-runner thread `DSD-0-0` (an explicit synchronization: waits for the device), which makes the CUDA calls for other threads, while this thread is inside #[no_sync] `step` ("
        ),
        "{message}"
    );
    assert!(
        message.ends_with("wrap the call that waits for the runner in nosync::allow_sync(..) if this wait is intended"),
        "{message}"
    );
    let marked = crate::with_mode(Mode::Error, || step("my-runner", true));
    assert_eq!(
        marked.expect_err("marked").runner_thread(),
        Some("my-runner")
    );
    assert!(crate::with_mode(Mode::Error, || step("loader", false)).is_ok());
    // Outside every scope, and inside `allow_sync`: nothing.
    sync_on("DSU-0-0", false);
    crate::with_mode(Mode::Panic, || {
        crate::no_sync(|| crate::allow_sync(|| sync_on("DSU-0-0", false)));
    });
    let report = logged(|| {
        let _hot = crate::forbid();
        sync_on("DSU-0-0", false);
    });
    let counts: Vec<(&str, usize)> = report
        .sites()
        .iter()
        .map(|s| (s.site().api, s.forbidden()))
        .collect();
    assert_eq!(counts, [("cuStreamSynchronize", 1)], "{report}");
}
