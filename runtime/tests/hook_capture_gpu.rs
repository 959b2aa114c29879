//! On a GPU: the hook's time waited and its CUDA-graph capture checks, on raw cudarc. A capture
//! that calls a hidden sync is reported at the call, with its frame, and the driver's refusals
//! (900, 901) that the code discards are reported too; a clean capture is silent and its graph
//! runs; a `capture_safe` scope reports what would break a capture without one; the wait behind
//! a 100 ms kernel is timed. Skipped as ignored without a GPU.
#![cfg(feature = "hook")]

mod gpu_support;

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaGraph, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PushKernelArg, result,
};
use gpu_support::{exclusive, gpu, say};
use nosync::hook::capture::Break;
use nosync::{Mode, SyncReport, SyncViolation};

const GLOBAL: CUstreamCaptureMode = CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;

struct Env {
    ctx: Arc<CudaContext>,
    s: Arc<CudaStream>,
    add: CudaFunction,
    x: CudaSlice<f32>,
}

impl Env {
    fn new() -> Env {
        let _ = gpu("capture"); // a clear failure without a GPU
        let ctx = CudaContext::new(0).expect("context");
        // cudarc's events between streams are not what is tested here.
        // SAFETY: one stream is used at a time.
        unsafe { ctx.disable_event_tracking() };
        let src = "extern \"C\" __global__ void add(float* x) { x[threadIdx.x] += 1.0f; }";
        let ptx = cudarc::nvrtc::compile_ptx(src).expect("nvrtc");
        let module = ctx.load_module(ptx).expect("module");
        let s = ctx.new_stream().expect("stream");
        Env {
            add: module.load_function("add").expect("kernel"),
            x: s.alloc_zeros(32).expect("alloc"),
            s,
            ctx,
        }
    }

    fn launch(&mut self, on: &Arc<CudaStream>) -> Result<(), DriverError> {
        let mut b = on.launch_builder(&self.add);
        b.arg(&mut self.x);
        // SAFETY: one float per thread, 32 threads.
        unsafe { b.launch(LaunchConfig::for_num_elems(32)) }.map(drop)
    }
}

fn hook() -> nosync::hook::Hook {
    nosync::hook::install().unwrap_or_else(|e| panic!("the hook must install: {e}"))
}

fn flags() -> CUgraphInstantiate_flags {
    CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
}

/// A debug path that peeks at the stream, as a `tracing` hook might: a hidden sync. The error
/// is discarded, as such code does. (`black_box` after the call keeps it from being a tail
/// call, which would leave no frame of this fn on the stack.)
#[inline(never)]
fn debug_peek(s: &Arc<CudaStream>) -> Result<(), DriverError> {
    let r = s.synchronize();
    std::hint::black_box(&r);
    r
}

/// Captures one launch, with the hidden sync in the middle.
#[nosync::no_sync]
fn capture_with_peek(e: &mut Env) -> Result<Option<CudaGraph>, SyncViolation> {
    let s = e.s.clone();
    s.begin_capture(GLOBAL).expect("begin capture");
    e.launch(&s).expect("launch in the capture");
    let peeked = debug_peek(&s);
    say(&format!(
        "  the driver's answer to the sync, discarded: {peeked:?}"
    ));
    let ended = s.end_capture(flags());
    say(&format!("  cuStreamEndCapture: {:?}", ended.as_ref().err()));
    Ok(ended.ok().flatten())
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn a_hidden_sync_inside_a_capture_is_reported_at_the_call_with_its_frame() {
    let _x = exclusive();
    let mut e = Env::new();
    let _hook = hook();
    let (result, report) =
        nosync::count_syncs(|| nosync::with_mode(Mode::Error, || capture_with_peek(&mut e)));
    let Err(err) = result else {
        panic!("the capture's break comes back as the fn's error: {report}");
    };
    say(&format!("capture with a hidden sync, Mode::Error: {err}"));
    for frame in err.frames() {
        say(&format!("  frame {frame}"));
    }
    say(&format!("  count_syncs: {report}"));
    assert_eq!(err.site().api, "cuStreamSynchronize");
    assert_eq!(err.capture_break(), Some(Break::CapturingStream.reason()));
    let first = err
        .frames()
        .first()
        .expect("a frame outside cudarc and nosync");
    // `debug = "line-tables-only"` names frames without their path.
    let name = first.function.trim_start_matches("hook_capture_gpu::");
    assert_eq!(name, "debug_peek", "{first}");
    let apis: Vec<&str> = report.sites().iter().map(|s| s.site().api).collect();
    assert_eq!(
        apis,
        ["cuStreamSynchronize", "cuStreamEndCapture"],
        "{report}"
    );
    // The capture is over: the same sync outside every scope is nothing.
    let (_, after) = nosync::count_syncs(|| e.s.synchronize().expect("sync"));
    assert_eq!((after.total(), after.forbidden()), (1, 0), "{after}");
}

#[nosync::no_sync]
fn clean_capture(e: &mut Env) -> Result<Option<CudaGraph>, SyncViolation> {
    let s = e.s.clone();
    s.begin_capture(GLOBAL).expect("begin capture");
    for _ in 0..8 {
        e.launch(&s).expect("launch in the capture");
    }
    Ok(s.end_capture(flags()).expect("end capture"))
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn a_clean_capture_is_silent_and_its_graph_runs() {
    let _x = exclusive();
    let mut e = Env::new();
    let _hook = hook();
    let (graph, report) =
        nosync::count_syncs(|| nosync::with_mode(Mode::Panic, || clean_capture(&mut e)));
    assert!(report.is_empty(), "{report}");
    let graph = graph.expect("no violation").expect("a graph");
    graph.launch().expect("graph launch");
    graph.launch().expect("graph launch");
    let x = e.s.clone_dtoh(&e.x).expect("read");
    assert_eq!(x[0], 16.0, "two launches of 8 captured adds");
    say("clean capture (8 launches) x2 graph launches: no report, x[0] = 16");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn a_capture_safe_scope_reports_what_would_break_a_capture() {
    let _x = exclusive();
    let mut e = Env::new();
    let _hook = hook();
    let legacy = e.ctx.default_stream();
    let (_, report) = nosync::count_syncs(|| {
        nosync::with_mode(Mode::Log, || {
            nosync::capture_safe(|| {
                e.launch(&e.s.clone()).expect("launch on a created stream");
                // SAFETY: freed below.
                let p = unsafe { result::malloc_sync(1 << 20) }.expect("cuMemAlloc");
                e.launch(&legacy).expect("launch on the legacy stream");
                // SAFETY: allocated above, unused.
                unsafe { result::free_sync(p) }.expect("cuMemFree");
            })
        })
    });
    say(&format!("capture_safe, no capture: {report}"));
    let apis: Vec<&str> = report.sites().iter().map(|s| s.site().api).collect();
    assert_eq!(
        apis,
        ["cuMemAlloc_v2", "cuLaunchKernel", "cuMemFree_v2"],
        "{report}"
    );
    // Outside the scope the launches are no longer watched.
    let (_, outside) = nosync::count_syncs(|| e.launch(&legacy).expect("launch"));
    assert!(outside.is_empty(), "{outside}");
    e.s.synchronize().expect("sync");
    legacy.synchronize().expect("sync");
    assert!(nosync::hook::capture::watched().any(|(_, live)| live));
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn the_wait_behind_a_busy_device_is_timed() {
    let _x = exclusive();
    let g = gpu("timed");
    let kernels = g.kernels().expect("kernels");
    let stream = g.default_stream();
    let raw = stream.cuda_stream().clone();
    let _hook = hook();
    let (_, report): ((), SyncReport) = nosync::count_syncs(|| {
        kernels
            .spin(&stream, Duration::from_millis(100))
            .expect("spin");
        raw.synchronize().expect("sync");
        raw.synchronize().expect("sync, idle");
    });
    say(&format!("100 ms spin, then two raw syncs: {report}"));
    let site = &report.sites()[0];
    assert_eq!(
        (site.site().api, site.count(), site.timed()),
        ("cuStreamSynchronize", 2, 2)
    );
    assert!(site.max_wait() >= Duration::from_millis(80), "{report}");
    assert!(
        site.waited() - site.max_wait() < Duration::from_millis(5),
        "{report}"
    );
}
