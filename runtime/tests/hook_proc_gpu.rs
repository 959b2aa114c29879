//! On a GPU, with the real driver: the interposer's answer to `cuGetProcAddress` for every
//! hooked name, at each CUDA version it supports and with each stream flag. A "not found" answer
//! passes through untouched (a null function, the driver's status); a function the driver
//! returns is either answered with a wrapper (an exported function nosync stands in for) or
//! listed in `Hook::coverage()` as unseen; `cuGetProcAddress` itself is answered with nosync's
//! hook. A synchronization looked up each way is reported inside a forbid scope. Skipped as
//! ignored without a GPU; run it alone (one test, before any other CUDA call of the process).
#![cfg(all(feature = "hook", target_os = "linux"))]

use std::collections::BTreeMap;
use std::ffi::{CString, c_char, c_void};

type GetProcV2 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, i32, u64, *mut i32) -> i32;
type GetProcV1 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, i32, u64) -> i32;
type Sync = unsafe extern "C" fn(*mut c_void) -> i32;

/// `CU_GET_PROC_ADDRESS_DEFAULT`, `_LEGACY_STREAM`, `_PER_THREAD_DEFAULT_STREAM`.
const FLAGS: [u64; 3] = [0, 1, 2];
/// The CUDA versions nosync's table covers, from the first with `cuGetProcAddress`.
const VERSIONS: [i32; 5] = [11030, 11080, 12000, 12080, 13000];

/// The base names of the hooked calls (what a caller of `cuGetProcAddress` asks for).
const NAMES: [&str; 22] = [
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuEventSynchronize",
    "cuMemcpyDtoH",
    "cuMemcpyDtoHAsync",
    "cuMemcpyHtoD",
    "cuMemcpyHtoDAsync",
    "cuMemcpy",
    "cuMemcpyAsync",
    "cuMemFree",
    "cuMemAlloc",
    "cuMemFreeHost",
    "cuMemHostAlloc",
    "cuMemAllocHost",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuLibraryLoadData",
    "cuDevicePrimaryCtxRelease",
    "cuStreamBeginCapture",
    "cuStreamEndCapture",
    "cuStreamQuery",
    "cuLaunchKernel",
];

fn get<T: Copy>(lib: &libloading::Library, name: &str) -> T {
    // SAFETY: each name's type is its C signature in `cuda.h`.
    unsafe { *lib.get::<T>(name.as_bytes()).unwrap() }
}

/// Every exported name a lookup of `base` may return: with `_v2`, `_ptsz`, `_ptds`.
fn exports(base: &str) -> Vec<String> {
    let mut out = Vec::new();
    for v in ["", "_v2"] {
        for s in ["", "_ptsz", "_ptds"] {
            out.push(format!("{base}{v}{s}"));
        }
    }
    out
}

/// How many `cuStreamSynchronize` waits a forbid scope around `f` reported.
fn reported(f: impl FnOnce()) -> usize {
    let ((), report) = nosync::count_syncs(|| {
        nosync::with_mode(nosync::Mode::Log, || {
            let _hot = nosync::forbid();
            f();
        })
    });
    report.forbidden()
}

#[test]
#[ignore = "needs an NVIDIA GPU: the real driver's cuGetProcAddress"]
fn every_hooked_name_through_the_real_cu_get_proc_address() {
    let hook = nosync::hook::install_with(nosync::hook::Backend::Interpose)
        .expect("the interposer installs before the first CUDA call");
    // SAFETY: the driver library, loaded by its soname.
    let driver = unsafe { libloading::Library::new("libcuda.so.1") }.expect("libcuda.so.1");
    let init: unsafe extern "C" fn(u32) -> i32 = get(&driver, "cuInit");
    // SAFETY: `cuInit(0)`.
    assert_eq!(unsafe { init(0) }, 0, "cuInit");
    let v2: GetProcV2 = get(&driver, "cuGetProcAddress_v2");
    let v1: GetProcV1 = get(&driver, "cuGetProcAddress");
    // The wrapper of each exported hooked function, as `dlsym` (nosync's) answers it.
    let hooked = nosync::hook::HOOKED.iter().map(|r| r.does.api);
    let hooked: Vec<&str> = hooked
        .chain(nosync::hook::capture::watched().map(|(api, _)| api))
        .collect();
    let wrapped: BTreeMap<usize, String> = NAMES
        .iter()
        .flat_map(|b| exports(b))
        .filter(|n| hooked.contains(&n.as_str()))
        .filter_map(|n| {
            // SAFETY: only the address is read.
            unsafe { driver.get::<*mut c_void>(n.as_bytes()) }
                .ok()
                .map(|s| (*s as usize, n))
        })
        .collect();
    let lookup = |name: &str, version: i32, flags: u64| {
        let c = CString::new(name).unwrap();
        let (mut pfn, mut status) = (std::ptr::null_mut(), -1);
        // SAFETY: `cuGetProcAddress_v2`'s signature; both out-pointers outlive the call.
        let r = unsafe { v2(c.as_ptr(), &mut pfn, version, flags, &mut status) };
        (r, status, pfn as usize)
    };
    let mut lines = Vec::new();
    for base in NAMES {
        for version in VERSIONS {
            for flags in FLAGS {
                let (r, status, pfn) = lookup(base, version, flags);
                let what = match (r, pfn) {
                    (0, 0) => format!("not found (status {status})"),
                    (0, f) => match wrapped.get(&f) {
                        Some(export) => format!("wrapper of {export}"),
                        None => String::from("a function nosync does not know"),
                    },
                    (r, _) => format!("error {r}"),
                };
                if what.starts_with("a function") {
                    let listed = hook.coverage().skipped().iter().any(|s| s.symbol == base);
                    assert!(
                        listed,
                        "{base} {version} {flags}: unseen but not in the coverage"
                    );
                }
                lines.push(format!("{base:28} {version:5} flags {flags}: {what}"));
            }
        }
    }
    // A name the driver does not have: a null function and its status, untouched.
    let (r, status, pfn) = lookup("cuNoSuchThing", 13000, 0);
    assert_eq!((r, pfn), (0, 0), "not found: success with a null function");
    assert_eq!(status, 1, "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND");
    // cuGetProcAddress through itself: nosync's hook, whose answers are wrappers.
    let (_, _, itself) = lookup("cuGetProcAddress", 13000, 0);
    assert_ne!(itself, 0);
    // SAFETY: the driver answered `cuGetProcAddress` (version 13000: the `_v2` signature).
    let itself: GetProcV2 = unsafe { std::mem::transmute(itself) };
    let mut through: Vec<(String, Sync)> = Vec::new();
    for (what, version, flags) in [
        ("v2", 13000, 0),
        ("v2 per-thread", 13000, 2),
        ("v1", 11030, 0),
    ] {
        let mut pfn = std::ptr::null_mut();
        let name = c"cuStreamSynchronize".as_ptr();
        // SAFETY: the two signatures of `cuGetProcAddress`; `pfn` outlives the call.
        let r = unsafe {
            match what {
                "v1" => v1(name, &mut pfn, version, flags),
                _ => v2(name, &mut pfn, version, flags, &mut 0),
            }
        };
        assert_eq!(r, 0, "{what}");
        // SAFETY: `cuStreamSynchronize`'s signature.
        through.push((what.to_owned(), unsafe {
            std::mem::transmute::<*mut c_void, Sync>(pfn)
        }));
    }
    let mut pfn = std::ptr::null_mut();
    // SAFETY: as above, through the looked-up `cuGetProcAddress`.
    let r = unsafe { itself(c"cuStreamSynchronize".as_ptr(), &mut pfn, 13000, 0, &mut 0) };
    assert_eq!(r, 0);
    // SAFETY: `cuStreamSynchronize`'s signature.
    through.push((String::from("through itself"), unsafe {
        std::mem::transmute::<*mut c_void, Sync>(pfn)
    }));
    // A context for the synchronizations.
    let (mut dev, mut ctx) = (0i32, std::ptr::null_mut::<c_void>());
    let device_get: unsafe extern "C" fn(*mut i32, i32) -> i32 = get(&driver, "cuDeviceGet");
    let retain: unsafe extern "C" fn(*mut *mut c_void, i32) -> i32 =
        get(&driver, "cuDevicePrimaryCtxRetain");
    let set: unsafe extern "C" fn(*mut c_void) -> i32 = get(&driver, "cuCtxSetCurrent");
    // SAFETY: `cuda.h`'s signatures; the out-pointers outlive the calls.
    unsafe {
        assert_eq!(device_get(&mut dev, 0), 0);
        assert_eq!(retain(&mut ctx, dev), 0);
        assert_eq!(set(ctx), 0);
    }
    for (what, sync) in through {
        // SAFETY: the null stream of the current context.
        let n = reported(|| assert_eq!(unsafe { sync(std::ptr::null_mut()) }, 0));
        assert_eq!(n, 1, "cuStreamSynchronize looked up {what}: seen");
    }
    println!("{}", lines.join("\n"));
    println!("{}", hook.coverage());
}
