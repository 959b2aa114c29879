//! A stand-in CUDA driver and runtime for the interposer's tests, without a GPU: C libraries built
//! with the system's C compiler (`cc`, which the Rust toolchain links with) into a fresh directory
//! that a child process gets on `LD_LIBRARY_PATH`.
//!
//! The stand-in driver (`libcuda.so.1`) defines every call the interposer hooks or watches, with
//! its C signature from `cuda.h` ([`FUNS`], one table: the C code of the driver and of the
//! callers is generated from it), and records each call: its name and its arguments as 64-bit
//! values (`stand_in_last`). `cuPointerGetAttribute` answers as the driver does for the pointers
//! of three ranges: page-locked host memory inside the exported `stand_in_pinned` buffer,
//! device memory from [`DEVICE`] up (allocated from a pool from [`POOL`] up), an error for other
//! host memory (pageable). `cuGetProcAddress` (CUDA 11.3's) and `cuGetProcAddress_v2` (CUDA 12's)
//! answer like the driver of CUDA 13 (driver 580): an unknown name is success with a null
//! function and status "symbol not found"; a known name gives the function of its versioned ABI
//! (`cuMemcpyDtoH` at 3020 and later: `cuMemcpyDtoH_v2`), its per-thread variant with
//! `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`, and `cuGetProcAddress` at 12000 and later is
//! `cuGetProcAddress_v2`. The addresses handed out are the exported functions' (the driver's
//! own, not what the loader binds the name to: a preloaded library that defines the name does not
//! change them).
//!
//! The stand-in runtime (`libcudart.so.13`) defines `cudaDeviceSynchronize` and
//! `cudaThreadSynchronize`, which call the driver's `cuCtxSynchronize` through its import slot.
//! The callers (`libcallers_early.so`, `libcallers_late.so`, one source) link both and call each
//! function through their import slots (`call_<name>`) or through a function pointer
//! (`via_<name>`), the arguments taken from an array of 64-bit values.
#![allow(dead_code)] // each test binary uses a part

mod c;
pub(crate) mod cases;
pub(crate) mod elf;
pub(crate) mod libs;

use std::path::{Path, PathBuf};
use std::process::Command;

use c::{CUDART_C, callers_c, driver_c};

/// A C parameter type of a hooked call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// A pointer or a handle (`CUstream`, `void *`, `CUmodule *`).
    P,
    /// `CUdeviceptr` (`unsigned long long`).
    D,
    /// `size_t`.
    Z,
    /// `unsigned int` (or a C enum).
    U32,
    /// `int` (`CUdevice`).
    I32,
}

impl Ty {
    fn c(self) -> &'static str {
        match self {
            Ty::P => "void *",
            Ty::D => "unsigned long long",
            Ty::Z => "size_t",
            Ty::U32 => "unsigned int",
            Ty::I32 => "int",
        }
    }

    /// The C expression that converts the 64-bit value `v` to this type.
    fn cast_u64(self, v: &str) -> String {
        match self {
            Ty::P => format!("(void *)(uintptr_t)({v})"),
            other => format!("({})({v})", other.c()),
        }
    }

    /// The C expression that records the argument `x` of this type as a 64-bit value.
    fn to_u64(self, x: &str) -> String {
        match self {
            Ty::P => format!("(unsigned long long)(uintptr_t)({x})"),
            Ty::I32 => format!("(unsigned long long)(long long)({x})"),
            _ => format!("(unsigned long long)({x})"),
        }
    }
}

/// What a hooked call's rule decides from (the expectations of [`expected_waits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// Always waits: synchronizations, synchronous copies, setup work.
    Waits,
    /// May wait (an allocation): not reported under the default granularity.
    May,
    /// `{ dstHost, srcDevice, ByteCount, hStream }`: waits when `dstHost` is pageable.
    ToHostAsync,
    /// `{ dstDevice, srcHost, ByteCount, hStream }`: waits when `srcHost` is pageable and the
    /// copy takes more than two staging buffers (over 2 MiB).
    FromHostAsync,
    /// `{ dst, src, ByteCount }`: waits unless both sides are device memory.
    Copy,
    /// `{ dst, src, ByteCount, hStream }`: waits when `dst` is pageable, or `src` as above.
    CopyAsync,
    /// `{ dptr }`: waits unless the memory is from a pool.
    Free,
    /// Watched only while a capture is live (capture begin and end, queries, launches).
    Watched,
}

/// One hooked or watched call: its exported name, its C parameters, its rule's family and
/// whether it is the runtime's (`libcudart`) rather than the driver's.
#[derive(Debug)]
pub(crate) struct Fun {
    pub(crate) name: &'static str,
    pub(crate) args: &'static [Ty],
    pub(crate) family: Family,
    pub(crate) runtime: bool,
}

const fn f(name: &'static str, args: &'static [Ty], family: Family) -> Fun {
    Fun {
        name,
        args,
        family,
        runtime: false,
    }
}

use Family as F;
use Ty::{D, I32, P, U32, Z};

const LAUNCH: &[Ty] = &[P, U32, U32, U32, U32, U32, U32, U32, P, P, P];
const LIBRARY_LOAD: &[Ty] = &[P, P, P, P, U32, P, P, U32];

/// Every call the interposer hooks or watches, with its C signature (`cuda.h`,
/// `cuda_runtime_api.h`).
pub(crate) static FUNS: [Fun; 43] = [
    f("cuCtxSynchronize", &[], F::Waits),
    f("cuCtxSynchronize_v2", &[P], F::Waits),
    f("cuStreamSynchronize", &[P], F::Waits),
    f("cuStreamSynchronize_ptsz", &[P], F::Waits),
    f("cuEventSynchronize", &[P], F::Waits),
    f("cuMemcpyDtoH_v2", &[P, D, Z], F::Waits),
    f("cuMemcpyDtoH_v2_ptds", &[P, D, Z], F::Waits),
    f("cuMemcpyDtoHAsync_v2", &[P, D, Z, P], F::ToHostAsync),
    f("cuMemcpyDtoHAsync_v2_ptsz", &[P, D, Z, P], F::ToHostAsync),
    f("cuMemcpyHtoD_v2", &[D, P, Z], F::Waits),
    f("cuMemcpyHtoD_v2_ptds", &[D, P, Z], F::Waits),
    f("cuMemcpyHtoDAsync_v2", &[D, P, Z, P], F::FromHostAsync),
    f("cuMemcpyHtoDAsync_v2_ptsz", &[D, P, Z, P], F::FromHostAsync),
    f("cuMemcpy", &[D, D, Z], F::Copy),
    f("cuMemcpy_ptds", &[D, D, Z], F::Copy),
    f("cuMemcpyAsync", &[D, D, Z, P], F::CopyAsync),
    f("cuMemcpyAsync_ptsz", &[D, D, Z, P], F::CopyAsync),
    f("cuMemFree_v2", &[D], F::Free),
    f("cuMemAlloc_v2", &[P, Z], F::May),
    f("cuMemFreeHost", &[P], F::Waits),
    f("cuMemHostAlloc", &[P, Z, U32], F::Waits),
    f("cuMemAllocHost_v2", &[P, Z], F::Waits),
    f("cuModuleLoad", &[P, P], F::Waits),
    f("cuModuleLoadData", &[P, P], F::Waits),
    f("cuModuleLoadDataEx", &[P, P, U32, P, P], F::Waits),
    f("cuModuleLoadFatBinary", &[P, P], F::Waits),
    f("cuModuleUnload", &[P], F::Waits),
    f("cuLibraryLoadData", LIBRARY_LOAD, F::Waits),
    f("cuLibraryLoadFromFile", LIBRARY_LOAD, F::Waits),
    f("cuDevicePrimaryCtxRelease_v2", &[I32], F::Waits),
    f("cuDevicePrimaryCtxReset_v2", &[I32], F::Waits),
    Fun {
        name: "cudaDeviceSynchronize",
        args: &[],
        family: F::Waits,
        runtime: true,
    },
    Fun {
        name: "cudaThreadSynchronize",
        args: &[],
        family: F::Waits,
        runtime: true,
    },
    f("cuStreamBeginCapture", &[P], F::Watched),
    f("cuStreamBeginCapture_ptsz", &[P], F::Watched),
    f("cuStreamBeginCapture_v2", &[P, U32], F::Watched),
    f("cuStreamBeginCapture_v2_ptsz", &[P, U32], F::Watched),
    f("cuStreamEndCapture", &[P, P], F::Watched),
    f("cuStreamEndCapture_ptsz", &[P, P], F::Watched),
    f("cuStreamQuery", &[P], F::Watched),
    f("cuStreamQuery_ptsz", &[P], F::Watched),
    f("cuLaunchKernel", LAUNCH, F::Watched),
    f("cuLaunchKernel_ptsz", LAUNCH, F::Watched),
];

/// The call named `name`.
pub(crate) fn fun(name: &str) -> &'static Fun {
    FUNS.iter().find(|f| f.name == name).expect(name)
}

/// Device pointers start here (the stand-in's `cuPointerGetAttribute`).
pub(crate) const DEVICE: u64 = 0xd000_0000_0000_0000;
/// Device pointers from a memory pool start here.
pub(crate) const POOL: u64 = 0xe000_0000_0000_0000;
/// The size of the stand-in's page-locked buffer `stand_in_pinned`.
pub(crate) const PINNED_BYTES: u64 = 1 << 20;
/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
pub(crate) const PER_THREAD: u64 = 2;

/// The request `cuGetProcAddress` answers with the exported function `name`: the name asked
/// for, the lowest version that gets this ABI, and whether the per-thread flag is needed.
pub(crate) fn proc_request(name: &str) -> (String, i32, bool) {
    let (stem, pt) = match name.strip_suffix("_ptsz").or(name.strip_suffix("_ptds")) {
        Some(stem) => (stem, true),
        None => (name, false),
    };
    match stem.strip_suffix("_v2") {
        // A function of its own, not a versioned ABI of `cuCtxSynchronize`.
        Some(_) if stem == "cuCtxSynchronize_v2" => (stem.to_owned(), 0, pt),
        Some(base) => {
            let version = match base {
                "cuStreamBeginCapture" => 10010,
                "cuDevicePrimaryCtxRelease" | "cuDevicePrimaryCtxReset" => 11000,
                _ => 3020,
            };
            (base.to_owned(), version, pt)
        }
        None => (stem.to_owned(), 0, pt),
    }
}

/// What the stand-in's `cuGetProcAddress` answers for `name` at `version` with `per_thread`:
/// the exported function, or `None` (not found).
pub(crate) fn proc_answer(name: &str, version: i32, per_thread: bool) -> Option<&'static str> {
    let rows = FUNS
        .iter()
        .filter(|f| !f.runtime)
        .map(|f| (f.name, proc_request(f.name)));
    let candidates: Vec<(&str, i32, bool)> = rows
        .filter(|(_, (base, min, _))| base == name && *min <= version)
        .map(|(n, (_, min, pt))| (n, min, pt))
        .collect();
    let best = |pt: bool| {
        candidates
            .iter()
            .filter(|c| c.2 == pt)
            .max_by_key(|c| c.1)
            .map(|c| c.0)
    };
    per_thread
        .then(|| best(true))
        .flatten()
        .or_else(|| best(false))
}

/// Builds the C library `name` from `text` in `dir` (`-shared -fPIC`, then `args`).
pub(crate) fn cc(dir: &Path, name: &str, text: &str, args: &[&str]) {
    cc_with(dir, name, text, &["-shared", "-fPIC"], args);
}

/// Builds `name` from `text` in `dir` with the flags `first` before the source and `args` after.
pub(crate) fn cc_with(dir: &Path, name: &str, text: &str, first: &[&str], args: &[&str]) {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, text).unwrap();
    let out = Command::new("cc")
        .args(first)
        .args(["-O0", "-o"])
        .arg(dir.join(name))
        .arg(&src)
        .args(args)
        .output()
        .expect("the system's C compiler, `cc` (the Rust toolchain links with it)");
    assert!(
        out.status.success(),
        "cc {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds the stand-in driver, the runtime and the callers into `dir`.
pub(crate) fn build(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    // Bound at load: no slot of the stand-in changes when it first calls the C library.
    cc(
        dir,
        "libcuda.so.1",
        &driver_c(),
        &["-Wl,-soname,libcuda.so.1", "-Wl,-z,now"],
    );
    std::os::unix::fs::symlink("libcuda.so.1", dir.join("libcuda.so")).unwrap();
    let driver = path_of(dir, "libcuda.so.1");
    cc(
        dir,
        "libcudart.so.13",
        CUDART_C,
        &["-Wl,-soname,libcudart.so.13", &driver],
    );
    let runtime = path_of(dir, "libcudart.so.13");
    let callers = callers_c();
    cc(dir, "libcallers_early.so", &callers, &[&driver, &runtime]);
    cc(dir, "libcallers_late.so", &callers, &[&driver, &runtime]);
}

/// `dir/name` as a string, for the compiler's command line.
pub(crate) fn path_of(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// A fresh directory for the stand-in of test `name`.
pub(crate) fn dir_for(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("stand-in-{}-{name}", std::process::id()))
}

/// Runs the ignored test `name` of this test binary in a child with the stand-in in `dir` on
/// `LD_LIBRARY_PATH` and `env` set; fails with the child's output unless it passed.
pub(crate) fn run_child(name: &str, dir: &Path, env: &[(&str, &str)]) {
    let _ = run_child_output(name, dir, env);
}

/// [`run_child`], returning the child's stdout and stderr.
pub(crate) fn run_child_output(name: &str, dir: &Path, env: &[(&str, &str)]) -> (String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            name,
            "--test-threads=1",
            "--nocapture",
        ])
        .env("LD_LIBRARY_PATH", dir)
        .env("NOSYNC_STAND_IN", dir)
        .env_remove("NOSYNC_HOOK")
        .env_remove("NOSYNC_REPORT")
        .env_remove("NOSYNC_MODE")
        .env_remove("NOSYNC_GRANULARITY")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child `{name}` failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    (stdout.into_owned(), stderr.into_owned())
}

/// Builds the stand-in for test `name`, runs it in a child, and removes the directory.
pub(crate) fn in_child(name: &str) {
    let dir = dir_for(name);
    build(&dir);
    run_child(name, &dir, &[]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The stand-in directory, in a child.
pub(crate) fn stand_in() -> PathBuf {
    PathBuf::from(std::env::var_os("NOSYNC_STAND_IN").expect("run by `run_child`"))
}

/// A library of the stand-in directory, loaded with `libloading` (`dlopen` from the test's own
/// object, which the interposer takes over).
pub(crate) fn open(name: &str) -> libloading::Library {
    // SAFETY: the stand-in's libraries run no initialisers but those their test defines.
    unsafe { libloading::Library::new(stand_in().join(name)) }.unwrap_or_else(|e| panic!("{e}"))
}

/// The function or variable `name` of `lib`, as `T`.
pub(crate) fn get<T: Copy>(lib: &libloading::Library, name: &str) -> T {
    // SAFETY: each caller names `T` as the symbol's C type.
    unsafe {
        *lib.get::<T>(name.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// The stand-in driver's recorder.
pub(crate) struct Recorder {
    lib: libloading::Library,
}

type Last = unsafe extern "C" fn(*const std::ffi::c_char, *mut u64) -> u64;

impl Recorder {
    /// The stand-in driver (loaded again: the loader returns the mapped one).
    pub(crate) fn new() -> Recorder {
        Recorder {
            lib: open("libcuda.so.1"),
        }
    }

    /// How many calls of `name` since the last reset, and the latest one's arguments.
    pub(crate) fn last(&self, name: &str) -> (u64, [u64; 12]) {
        let c = std::ffi::CString::new(name).unwrap();
        let mut out = [0u64; 12];
        // SAFETY: `stand_in_last(const char *, unsigned long long[12])`.
        let n = unsafe { get::<Last>(&self.lib, "stand_in_last")(c.as_ptr(), out.as_mut_ptr()) };
        (n, out)
    }

    /// How many calls of `name` since the last reset.
    pub(crate) fn calls(&self, name: &str) -> u64 {
        self.last(name).0
    }

    /// The name of the latest call since the last reset ("" if none).
    pub(crate) fn latest(&self) -> String {
        // SAFETY: `stand_in_latest` returns a static NUL-terminated string.
        unsafe {
            let p = get::<unsafe extern "C" fn() -> *const std::ffi::c_char>(
                &self.lib,
                "stand_in_latest",
            )();
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }

    /// Every call recorded since the last reset.
    pub(crate) fn total(&self) -> u64 {
        // SAFETY: `unsigned long long stand_in_total(void)`.
        unsafe { get::<unsafe extern "C" fn() -> u64>(&self.lib, "stand_in_total")() }
    }

    /// Forgets every call recorded so far.
    pub(crate) fn reset(&self) {
        // SAFETY: `void stand_in_reset(void)`.
        unsafe { get::<unsafe extern "C" fn()>(&self.lib, "stand_in_reset")() }
    }

    /// Sets what every recorded stand-in function returns.
    pub(crate) fn set_result(&self, result: i32) {
        // SAFETY: `int stand_in_result`, written by this single-threaded test only.
        unsafe { *get::<*mut i32>(&self.lib, "stand_in_result") = result };
    }

    /// The start of the page-locked buffer.
    pub(crate) fn pinned(&self) -> u64 {
        get::<*mut u8>(&self.lib, "stand_in_pinned") as u64
    }
}

/// The waits a forbid scope around `f` reported (in `Mode::Log`, under `count_syncs`), by API,
/// sorted; only the sites with forbidden waits.
pub(crate) fn reported(f: impl FnOnce()) -> Vec<(String, usize)> {
    let ((), report) = nosync::count_syncs(|| {
        nosync::with_mode(nosync::Mode::Log, || {
            let _hot = nosync::forbid();
            f();
        })
    });
    let mut sites: Vec<(String, usize)> = report
        .sites()
        .iter()
        .filter(|s| s.forbidden() > 0)
        .map(|s| (s.site().api.to_owned(), s.forbidden()))
        .collect();
    sites.sort();
    sites
}

/// How many waits of `api` a forbid scope around `f` reported.
pub(crate) fn forbidden(api: &str, f: impl FnOnce()) -> usize {
    reported(f)
        .into_iter()
        .filter(|(a, _)| a == api)
        .map(|(_, n)| n)
        .sum()
}

type Stream = unsafe extern "C" fn(*mut std::ffi::c_void) -> i32;

/// A `cuStreamSynchronize`-shaped function at `addr`.
///
/// # Safety
/// `addr` is the address of a function with that signature.
pub(crate) unsafe fn stream_fn(addr: *mut std::ffi::c_void) -> Stream {
    assert!(!addr.is_null(), "a null function");
    // SAFETY: this fn's contract.
    unsafe { std::mem::transmute::<*mut std::ffi::c_void, Stream>(addr) }
}

/// `cuGetProcAddress_v2`'s C type.
pub(crate) type GetProcV2 = unsafe extern "C" fn(
    *const std::ffi::c_char,
    *mut *mut std::ffi::c_void,
    i32,
    u64,
    *mut i32,
) -> i32;
/// `cuGetProcAddress`'s C type (CUDA 11.3).
pub(crate) type GetProcV1 =
    unsafe extern "C" fn(*const std::ffi::c_char, *mut *mut std::ffi::c_void, i32, u64) -> i32;
