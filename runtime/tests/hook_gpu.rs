//! On a GPU: the CUPTI hook's table is true. Each case queues a ~100 ms spin kernel, makes one
//! raw driver (or runtime-API) call through cudarc, as third-party code does, inside a forbid
//! scope, and measures whether the host waited (>= 80 ms) and what the hook reported. A checked
//! case fails when the two disagree; setup cases are printed (their cost is the driver's).
//! Also: no double report under `nosync::gpu`, other threads, `Mode::Error` with the frame,
//! `Declared` granularity, uninstall. Skipped as ignored without a GPU.
#![cfg(feature = "hook")]

mod gpu_support;

use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaStream, result, sys};
use gpu_support::{exclusive, gpu, say, with_granularity};
use nosync::gpu::{Granularity, Kernels, Stream};
use nosync::{Mode, SyncReport, SyncViolation};

const SPIN: Duration = Duration::from_millis(100);
const WAITED: Duration = Duration::from_millis(80);
const MIB: usize = 1 << 20;

type Res<T> = Result<T, Box<dyn std::error::Error>>;
type Call = Box<dyn FnOnce() -> Res<()>>;

struct Env {
    k: Arc<Kernels>,
    s: Stream,
    cs: Arc<CudaStream>,
    ctx: Arc<CudaContext>,
}

impl Env {
    fn new(test: &str) -> Env {
        let gpu = gpu(test);
        let s = gpu.default_stream();
        Env {
            k: gpu.kernels().expect("built-in kernels"),
            cs: s.cuda_stream().clone(),
            ctx: gpu.cuda_context().clone(),
            s,
        }
    }

    fn busy(&self) {
        self.k.spin(&self.s, SPIN).expect("spin");
    }
}

fn hook() -> nosync::hook::Hook {
    nosync::hook::install()
        .unwrap_or_else(|e| panic!("the hook must install on the GPU machine: {e}"))
}

/// Raw device memory (`cuMemAlloc`) and page-locked host memory (`cuMemHostAlloc`).
fn dev(bytes: usize) -> u64 {
    // SAFETY: plain allocation, freed by the driver at exit.
    unsafe { result::malloc_sync(bytes) }.expect("cuMemAlloc")
}

fn pinned(bytes: usize) -> *mut c_void {
    // SAFETY: as above.
    unsafe { result::malloc_host(bytes, 0) }.expect("cuMemHostAlloc")
}

fn ok(r: sys::CUresult) -> Res<()> {
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        e => Err(format!("{e:?}").into()),
    }
}

/// Runs `call` in a forbid scope (Mode::Log: the hook records, nothing stops), timed.
fn measure(call: Call) -> (Duration, SyncReport) {
    let (elapsed, report) = nosync::count_syncs(|| {
        nosync::with_mode(Mode::Log, || {
            let _hot = nosync::forbid();
            let t0 = Instant::now();
            call().expect("the call succeeds");
            t0.elapsed()
        })
    });
    (elapsed, report)
}

fn reported(report: &SyncReport) -> String {
    let names: Vec<String> = report
        .sites()
        .iter()
        .filter(|s| s.forbidden() > 0)
        .map(|s| format!("{} [{}]", s.site().api, s.site().kind.as_str()))
        .collect();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(", ")
    }
}

/// (name, checked, setup): `setup` queues the spin and returns the call.
type Case = (&'static str, bool, fn(&Env) -> Call);

fn cases() -> Vec<Case> {
    vec![
        ("cuStreamSynchronize", true, |e| {
            e.busy();
            let cs = e.cs.clone();
            Box::new(move || Ok(cs.synchronize()?))
        }),
        ("cuCtxSynchronize", true, |e| {
            e.busy();
            let ctx = e.ctx.clone();
            Box::new(move || Ok(ctx.synchronize()?))
        }),
        ("cuEventSynchronize", true, |e| {
            e.busy();
            let ev = e.cs.record_event(None).expect("event");
            Box::new(move || Ok(ev.synchronize()?))
        }),
        ("cuMemcpyDtoHAsync_v2 into pageable (4 B)", true, |e| {
            let d = dev(4);
            e.busy();
            let cs = e.cs.cu_stream() as usize;
            Box::new(move || {
                let mut host = [0f32; 1];
                // SAFETY: 4 bytes each side.
                Ok(unsafe { result::memcpy_dtoh_async(&mut host, d, cs as sys::CUstream) }?)
            })
        }),
        ("cuMemcpyDtoHAsync_v2 into pinned (16 MiB)", true, |e| {
            let (d, h) = (dev(16 * MIB), pinned(16 * MIB) as usize);
            e.busy();
            let cs = e.cs.cu_stream() as usize;
            Box::new(move || {
                // SAFETY: `h` is 16 MiB of pinned memory, never freed, not read by the host.
                let host = unsafe { std::slice::from_raw_parts_mut(h as *mut u8, 16 * MIB) };
                // SAFETY: `d` and `host` are 16 MiB allocations never freed, so they outlive the
                // copy; bytes have no invalid values.
                Ok(unsafe { result::memcpy_dtoh_async(host, d, cs as sys::CUstream) }?)
            })
        }),
        ("cuMemcpyDtoH_v2 into pinned (4 B)", true, |e| {
            let (d, h) = (dev(4), pinned(4) as usize);
            e.busy();
            Box::new(move || {
                // SAFETY: `h` is 4 bytes of pinned memory, never freed, not read by the host.
                let host = unsafe { std::slice::from_raw_parts_mut(h as *mut u8, 4) };
                // SAFETY: `d` is a 4-byte allocation never freed; the copy ends before it returns.
                Ok(unsafe { result::memcpy_dtoh_sync(host, d) }?)
            })
        }),
        ("cuMemcpyHtoD_v2 from pageable (4 B)", true, |e| {
            let d = dev(4);
            e.busy();
            // SAFETY: 4 bytes each side.
            Box::new(move || Ok(unsafe { result::memcpy_htod_sync(d, &[1f32]) }?))
        }),
        ("cuMemcpyHtoDAsync_v2 from pageable (4 KiB)", true, |e| {
            htod_pageable(e, 4 << 10)
        }),
        (
            "cuMemcpyHtoDAsync_v2 from pageable (1 MiB, a may)",
            true,
            |e| htod_pageable(e, MIB),
        ),
        ("cuMemcpyHtoDAsync_v2 from pageable (4 MiB)", true, |e| {
            htod_pageable(e, 4 * MIB)
        }),
        ("cuMemcpyHtoDAsync_v2 from pinned (16 MiB)", true, |e| {
            let (d, h) = (dev(16 * MIB), pinned(16 * MIB) as usize);
            e.busy();
            let cs = e.cs.cu_stream() as usize;
            Box::new(move || {
                // SAFETY: `h` is 16 MiB of pinned memory, never freed.
                let host = unsafe { std::slice::from_raw_parts(h as *const u8, 16 * MIB) };
                // SAFETY: `d` and `host` are 16 MiB allocations never freed, so they outlive the
                // copy; nothing writes `host`.
                Ok(unsafe { result::memcpy_htod_async(d, host, cs as sys::CUstream) }?)
            })
        }),
        ("cuMemcpy device to device (16 MiB)", true, |e| {
            let (a, b) = (dev(16 * MIB), dev(16 * MIB));
            e.busy();
            // SAFETY: 16 MiB each side.
            Box::new(move || ok(unsafe { sys::cuMemcpy(a, b, 16 * MIB) }))
        }),
        ("cuMemcpy device to pageable (4 B)", true, |e| {
            let d = dev(4);
            e.busy();
            Box::new(move || {
                let mut host = [0f32; 1];
                // SAFETY: 4 bytes each side; unified addressing.
                ok(unsafe { sys::cuMemcpy(host.as_mut_ptr() as u64, d, 4) })
            })
        }),
        ("cuMemcpyAsync device to pageable (4 B)", true, |e| {
            copy_async_to(e, None)
        }),
        ("cuMemcpyAsync device to pinned (4 B)", true, |e| {
            copy_async_to(e, Some(pinned(4)))
        }),
        ("cuMemFree_v2 of cuMemAlloc memory", true, |e| {
            let d = dev(MIB);
            e.busy();
            // SAFETY: freed once.
            Box::new(move || Ok(unsafe { result::free_sync(d) }?))
        }),
        ("cuMemFree_v2 of pool memory (cuMemAllocAsync)", true, |e| {
            // SAFETY: allocated on the stream, which is drained before the spin.
            let d = unsafe { result::malloc_async(e.cs.cu_stream(), MIB) }.expect("alloc");
            e.cs.synchronize().expect("sync");
            e.busy();
            // SAFETY: freed once.
            Box::new(move || Ok(unsafe { result::free_sync(d) }?))
        }),
        ("cuMemAlloc_v2 (1 MiB, a may)", true, |e| {
            e.busy();
            // SAFETY: uninitialised device memory, never read (the pointer is dropped).
            Box::new(|| Ok(unsafe { result::malloc_sync(MIB) }.map(drop)?))
        }),
        ("cuMemFreeHost", true, |e| {
            let h = pinned(MIB) as usize;
            e.busy();
            // SAFETY: freed once.
            Box::new(move || Ok(unsafe { result::free_host(h as *mut c_void) }?))
        }),
        ("cuLaunchKernel (the spin itself)", true, |e| {
            let (k, s) = (e.k.clone(), e.s.clone());
            Box::new(move || Ok(k.spin(&s, SPIN).map_err(|e| e.to_string())?))
        }),
        ("cuMemHostAlloc (16 MiB, setup)", false, |e| {
            e.busy();
            // SAFETY: uninitialised host memory, never read (the pointer is dropped).
            Box::new(|| Ok(unsafe { result::malloc_host(16 * MIB, 0) }.map(drop)?))
        }),
        ("cuModuleLoadData + cuModuleUnload (setup)", false, |e| {
            let ptx =
                cudarc::nvrtc::compile_ptx("extern \"C\" __global__ void k() {}").expect("nvrtc");
            e.busy();
            let ctx = e.ctx.clone();
            Box::new(move || {
                drop(ctx.load_module(ptx)?);
                Ok(())
            })
        }),
        ("cudaDeviceSynchronize (runtime API)", true, |e| {
            runtime_call(e, 0)
        }),
        ("cudaStreamSynchronize (runtime API)", true, |e| {
            runtime_call(e, 1)
        }),
        ("cudaMemcpy device to host (runtime API)", true, |e| {
            runtime_call(e, 2)
        }),
    ]
}

fn htod_pageable(e: &Env, bytes: usize) -> Call {
    let d = dev(bytes);
    e.busy();
    let cs = e.cs.cu_stream() as usize;
    Box::new(move || {
        let host = vec![1u8; bytes];
        // SAFETY: `bytes` each side; the driver stages pageable memory before returning.
        Ok(unsafe { result::memcpy_htod_async(d, &host, cs as sys::CUstream) }?)
    })
}

fn copy_async_to(e: &Env, dst: Option<*mut c_void>) -> Call {
    let d = dev(4);
    let dst = dst.map(|p| p as usize);
    e.busy();
    let cs = e.cs.cu_stream() as usize;
    Box::new(move || {
        let mut pageable = [0f32; 1];
        let to = dst.unwrap_or(pageable.as_mut_ptr() as usize) as u64;
        // SAFETY: 4 bytes each side; unified addressing.
        ok(unsafe { sys::cuMemcpyAsync(to, d, 4, cs as sys::CUstream) })
    })
}

fn runtime_call(e: &Env, which: u8) -> Call {
    assert!(
        // SAFETY: only tries to load libcudart, whose initialisers set up its own state.
        unsafe { cudarc::runtime::sys::is_culib_present() },
        "libcudart"
    );
    let d = dev(4);
    e.busy();
    Box::new(move || {
        use cudarc::runtime::sys as rt;
        let mut host = [0f32; 1];
        // SAFETY: the runtime attaches to the primary context nosync uses; 4 bytes each side.
        let r = unsafe {
            match which {
                0 => rt::cudaDeviceSynchronize(),
                1 => rt::cudaStreamSynchronize(std::ptr::null_mut()),
                _ => rt::cudaMemcpy(
                    host.as_mut_ptr().cast(),
                    d as *const c_void,
                    4,
                    rt::cudaMemcpyKind::cudaMemcpyDeviceToHost,
                ),
            }
        };
        match r {
            rt::cudaError::cudaSuccess => Ok(()),
            e => Err(format!("{e:?}").into()),
        }
    })
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn every_hooked_call_is_reported_exactly_when_the_host_waits() {
    let _x = exclusive();
    let e = Env::new("hook table");
    let hook = hook();
    say(&format!(
        "hooked calls seen: {} of {} ({:?})",
        hook.hooked().len(),
        nosync::hook::HOOKED.len(),
        hook.backend()
    ));
    let mut wrong = Vec::new();
    say("| call | host ms behind a 100 ms spin | reported (Actual) |");
    for (name, checked, setup) in cases() {
        e.s.synchronize().expect("idle");
        let (elapsed, report) = measure(setup(&e));
        let (waited, seen) = (elapsed >= WAITED, report.forbidden() > 0);
        say(&format!(
            "| {name} | {:.2} | {} |",
            elapsed.as_secs_f64() * 1e3,
            reported(&report)
        ));
        // Both backends see the driver calls the CUDA runtime makes itself: the interposer
        // answers the runtime's lookup of the driver (`dlsym` of `cuGetProcAddress`).
        if checked && waited != seen {
            wrong.push(format!("{name}: waited {waited}, reported {seen}"));
        }
    }
    e.s.synchronize().expect("idle");
    assert!(
        wrong.is_empty(),
        "the hook disagrees with the device: {wrong:#?}"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn declared_granularity_reports_the_mays_too() {
    let _x = exclusive();
    let e = Env::new("declared");
    let _hook = hook();
    let (_, may) = with_granularity(Granularity::Declared, || measure(htod_pageable(&e, MIB)));
    let (_, pinned_copy) = with_granularity(Granularity::Declared, || {
        let (d, h) = (dev(4), pinned(4) as usize);
        measure(Box::new(move || {
            // SAFETY: `h` is 4 bytes of pinned memory, never freed, not read by the host.
            let host = unsafe { std::slice::from_raw_parts_mut(h as *mut u8, 4) };
            // SAFETY: `d` and `host` are 4-byte allocations never freed, so they outlive the copy.
            Ok(unsafe { result::memcpy_dtoh_async(host, d, std::ptr::null_mut()) }?)
        }))
    });
    e.s.synchronize().expect("idle");
    say(&format!(
        "Declared: 1 MiB pageable upload: {}; pinned async read: {}",
        reported(&may),
        reported(&pinned_copy)
    ));
    assert_eq!(may.count_api("cuMemcpyHtoDAsync_v2"), 1, "{may}");
    assert_eq!(may.of_kind(nosync::SyncKind::May), 1);
    assert!(pinned_copy.is_empty(), "{pinned_copy}");
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn a_nosync_gpu_op_is_reported_once_under_its_own_name() {
    let _x = exclusive();
    let e = Env::new("no double report");
    let _hook = hook();
    e.busy();
    let s = e.s.clone();
    let (_, report) = measure(Box::new(move || {
        Ok(s.synchronize().map_err(|e| e.to_string())?)
    }));
    say(&format!(
        "nosync::gpu Stream::synchronize with the hook: {}",
        reported(&report)
    ));
    assert_eq!(
        (report.total(), report.count_api("Stream::synchronize")),
        (1, 1),
        "{report}"
    );
}

/// The line of `hidden_sync`'s raw synchronize.
const HIDDEN_SYNC_LINE: u32 = line!() + 4;

#[nosync::no_sync]
fn hidden_sync(cs: &Arc<CudaStream>) -> Result<(), SyncViolation> {
    cs.synchronize().expect("sync");
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn error_mode_returns_the_violation_with_the_callers_frame() {
    let _x = exclusive();
    let e = Env::new("frames");
    let _hook = hook();
    let err = nosync::with_mode(Mode::Error, || hidden_sync(&e.cs)).unwrap_err();
    say(&format!(
        "Mode::Error, raw CudaStream::synchronize in #[no_sync]: {err}"
    ));
    for frame in err.frames() {
        say(&format!("  frame {frame}"));
    }
    assert_eq!(err.site().api, "cuStreamSynchronize");
    assert_eq!(err.scope_function(), Some("hidden_sync"));
    let first = err
        .frames()
        .first()
        .expect("a frame outside cudarc and nosync");
    // The fn, at the line of its body that made the call (not the attribute's closure): full
    // names with `debug = 1`, bare ones with line tables only.
    assert!(
        ["hook_gpu::hidden_sync", "hidden_sync"].contains(&first.function.as_str()),
        "{first}"
    );
    assert!(
        first
            .file
            .as_deref()
            .is_some_and(|f| f.ends_with("hook_gpu.rs")),
        "{first}"
    );
    assert_eq!(first.line, Some(HIDDEN_SYNC_LINE), "{first}");
    let panicked = std::panic::catch_unwind(|| {
        nosync::with_mode(Mode::Panic, || nosync::no_sync(|| e.cs.synchronize()))
    });
    assert!(
        panicked.is_err(),
        "no_sync(..) panics at the scope's end in Mode::Panic"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a GPU machine"]
fn other_threads_are_not_affected_and_uninstall_stops_the_checks() {
    let _x = exclusive();
    let e = Env::new("threads");
    let hook = hook();
    let cs = e.cs.clone();
    let (_, here) = nosync::count_syncs(|| {
        let _hot = nosync::forbid();
        let other =
            std::thread::spawn(move || nosync::count_syncs(|| cs.synchronize().expect("sync")).1);
        let there = other.join().expect("thread");
        assert_eq!(
            (there.total(), there.forbidden()),
            (1, 0),
            "its own call, not forbidden: {there}"
        );
    });
    assert!(
        here.is_empty(),
        "the other thread's call is not this thread's: {here}"
    );
    drop(hook);
    drop(gpu_support::take_early_hook());
    assert!(!nosync::hook::is_installed());
    let (_, after) = measure(Box::new(move || Ok(e.cs.synchronize()?)));
    assert!(after.is_empty(), "after uninstall: {after}");
    say(
        "threads: the other thread's call counted there, not here; after uninstall nothing is seen",
    );
}
