//! The capture rules on the calls a capture sees, without a GPU.

use super::*;
use crate::hook::check::table::{self, HOOKED};

const S: u64 = 0x5555_0000; // the stream captured
const OTHER: u64 = 0x7777_0000; // another created stream

fn capture(mode: CaptureMode) -> Captures {
    let mut c = Captures::new();
    assert!(c.apply(Op::Begin { stream: S, mode }));
    c
}

fn hooked(class: Class, stream: Option<u64>) -> Op {
    Op::Hooked { class, stream }
}

#[test]
fn a_capture_begins_and_ends_with_its_stream() {
    let mut c = capture(CaptureMode::Global);
    assert!(c.capturing());
    assert!(!c.apply(Op::End { stream: OTHER }));
    assert!(c.capturing(), "another stream's end ends nothing");
    assert!(!c.apply(Op::Query { stream: S }));
    assert!(c.apply(Op::End { stream: S }));
    assert!(!c.capturing());
    assert_eq!(
        c.check(false, hooked(Class::Context, None)),
        None,
        "nothing outside"
    );
}

#[test]
fn every_mode_rejects_what_conflicts_with_the_capture() {
    for mode in [
        CaptureMode::Global,
        CaptureMode::ThreadLocal,
        CaptureMode::Relaxed,
    ] {
        let c = capture(mode);
        let cases = [
            (Op::Query { stream: S }, Some(Break::CapturingStream)),
            (hooked(Class::Stream, Some(S)), Some(Break::CapturingStream)),
            (hooked(Class::Context, None), Some(Break::Context)),
            (hooked(Class::SyncCopy, None), Some(Break::SyncCopy)),
            (
                hooked(Class::AsyncCopy { pageable: true }, Some(S)),
                Some(Break::PageableCopy),
            ),
            (hooked(Class::AsyncCopy { pageable: false }, Some(S)), None),
            (Op::Launch { stream: S }, None),
            (Op::Launch { stream: 0 }, Some(Break::Legacy)),
            (Op::Launch { stream: 1 }, Some(Break::Legacy)),
            (
                hooked(Class::AsyncCopy { pageable: false }, Some(0)),
                Some(Break::Legacy),
            ),
            (Op::Query { stream: OTHER }, None),
        ];
        for (op, expected) in cases {
            assert_eq!(c.check(false, op), expected, "{mode:?} {op:?}");
        }
    }
}

#[test]
fn only_relaxed_mode_allows_the_unsafe_calls() {
    let unsafe_calls = [
        (hooked(Class::Stream, Some(OTHER)), Break::Sync),
        (hooked(Class::Event, None), Break::Sync),
        (hooked(Class::Alloc, None), Break::Alloc),
        (hooked(Class::Module, None), Break::Module),
    ];
    for (op, broken) in unsafe_calls {
        assert_eq!(capture(CaptureMode::Global).check(false, op), Some(broken));
        assert_eq!(
            capture(CaptureMode::ThreadLocal).check(false, op),
            Some(broken)
        );
        assert_eq!(
            capture(CaptureMode::Relaxed).check(false, op),
            None,
            "{op:?}"
        );
        // A capture_safe scope assumes mode global, also around a relaxed capture.
        assert_eq!(capture(CaptureMode::Relaxed).check(true, op), Some(broken));
        assert_eq!(Captures::default().check(true, op), Some(broken));
    }
}

#[test]
fn a_capture_safe_scope_without_a_capture_knows_no_capturing_stream() {
    let c = Captures::default();
    assert_eq!(c.check(true, Op::Query { stream: OTHER }), None);
    assert_eq!(c.check(true, Op::Query { stream: 0 }), Some(Break::Legacy));
    assert_eq!(
        c.check(true, hooked(Class::Stream, Some(S))),
        Some(Break::Sync)
    );
    assert_eq!(c.check(true, Op::Launch { stream: S }), None);
}

#[test]
fn return_codes_900_and_901_are_breaks() {
    assert_eq!(Break::of_return(900), Some(Break::Unsupported));
    assert_eq!(Break::of_return(901), Some(Break::Invalidated));
    assert_eq!(Break::of_return(0), None);
    assert_eq!(Break::of_return(902), None);
    assert!(Break::Invalidated.reason().contains("(901)"));
}

#[test]
fn every_hooked_row_has_a_class() {
    let class = |api: &str, verdict| {
        let row = HOOKED.iter().find(|r| r.does.api == api).expect(api);
        Class::of(row, verdict)
    };
    assert_eq!(class("cuCtxSynchronize_v2", Verdict::Waits), Class::Context);
    assert_eq!(
        class("cudaDeviceSynchronize", Verdict::Waits),
        Class::Context
    );
    assert_eq!(
        class("cuStreamSynchronize_ptsz", Verdict::Waits),
        Class::Stream
    );
    assert_eq!(class("cuEventSynchronize", Verdict::Waits), Class::Event);
    assert_eq!(class("cuMemcpyHtoD_v2", Verdict::Waits), Class::SyncCopy);
    assert_eq!(
        class("cuMemcpyDtoHAsync_v2", Verdict::No),
        Class::AsyncCopy { pageable: false }
    );
    assert_eq!(class("cuMemFree_v2", Verdict::No), Class::Alloc);
    assert_eq!(class("cuMemHostAlloc", Verdict::Waits), Class::Alloc);
    assert_eq!(class("cuLibraryLoadData", Verdict::Waits), Class::Module);
    assert_eq!(
        class("cuDevicePrimaryCtxReset_v2", Verdict::Waits),
        Class::Context
    );
}

#[test]
fn watched_rows_are_unique_and_apart_from_the_hooked_ones() {
    for (i, w) in WATCHED.iter().enumerate() {
        assert!(
            WATCHED[..i].iter().all(|o| o.cbid != w.cbid),
            "{}",
            w.site.api
        );
        assert!(
            table::row(w.domain, w.cbid).is_none(),
            "{} is hooked",
            w.site.api
        );
        assert_eq!(
            Watched::begins(w.cbid),
            matches!(w.watch, Watch::Begin { .. })
        );
        assert_eq!(w.ptsz, w.site.api.ends_with("_ptsz"));
        assert!(std::ptr::eq(Watched::row(w.domain, w.cbid).unwrap(), w));
    }
    let ptsz = Watched::row(Domain::Driver, 442).unwrap();
    assert_eq!((ptsz.stream(0), ptsz.stream(S)), (2, S));
    assert_eq!(Watched::row(Domain::Driver, 307).unwrap().stream(0), 0);
    #[cfg(feature = "cuda-13000")]
    ids_match_cudarc();
}

#[cfg(feature = "cuda-13000")]
fn ids_match_cudarc() {
    use cudarc::cupti::sys::CUpti_driver_api_trace_cbid_enum as D;
    let ids = [
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,
        D::CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz,
        D::CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
        D::CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    ];
    let cbids: Vec<u32> = WATCHED.iter().map(|w| w.cbid).collect();
    assert_eq!(cbids, ids.map(|d| d as u32));
}
