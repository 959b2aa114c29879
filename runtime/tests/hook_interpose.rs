//! The interposer end to end without a GPU: a stand-in driver (`libcuda.so.1`, a few C functions
//! built with the system's C compiler) on `LD_LIBRARY_PATH` of a child process. The child installs
//! the hook before any driver call, then calls the driver as cudarc 0.19 does (`dynamic-loading`:
//! `libloading`, each entry point at its first call) and as a library that links the driver does
//! (an import slot), loaded before the install and after it through `dlopen`, and through
//! `cuGetProcAddress`. Each hooked call inside a forbid scope is reported, outside it is not, and
//! every call reaches the stand-in. The GPU runs (`hook_gpu.rs`) prove the same on the real driver.
#![cfg(target_os = "linux")]

mod stand_in;

use std::path::Path;

use stand_in::stand_in;

const FAKE_DRIVER: &str = r#"
#include <string.h>
#include <dlfcn.h>
static int initialized, syncs, queries;
int cuInit(unsigned f) { (void)f; initialized = 1; return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = "CUDA_ERROR_STAND_IN"; return 0; }
int cuPointerGetAttribute(void *d, unsigned a, unsigned long long p) { (void)d; (void)a; (void)p; return 1; }
int cuCtxGetCurrent(void **c) { *c = 0; return initialized ? 0 : 3; }
int cuStreamSynchronize(void *s) { (void)s; syncs++; return 0; }
int cuStreamQuery(void *s) { (void)s; queries++; return 0; }
int cuGetProcAddress_v2(const char *name, void **pfn, int v, unsigned long long f, void *st) {
  (void)v; (void)f; (void)st;
  *pfn = dlsym(RTLD_DEFAULT, name);
  if (!*pfn && strcmp(name, "cuStreamSynchronize") == 0) *pfn = (void *)cuStreamSynchronize;
  return *pfn ? 0 : 500;
}
int stand_in_syncs(void) { return syncs; }
int stand_in_queries(void) { return queries; }
"#;

const APP: &str = r#"
int cuStreamSynchronize(void *s);
int app_sync(void) { return cuStreamSynchronize((void *)0); }
"#;

/// Builds the small stand-in driver and two libraries that link it into a fresh directory.
fn build(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let c = |name: &str, text: &str, args: &[&str]| stand_in::cc(dir, name, text, args);
    // Its symbols carry a version, for the `dlvsym` lookup.
    std::fs::write(dir.join("driver.map"), "STAND_IN_1.0 { global: *; };\n").unwrap();
    let map = format!(
        "-Wl,--version-script={}",
        stand_in::path_of(dir, "driver.map")
    );
    c(
        "libcuda.so.1",
        FAKE_DRIVER,
        &["-Wl,-soname,libcuda.so.1", "-ldl", &map],
    );
    std::os::unix::fs::symlink("libcuda.so.1", dir.join("libcuda.so")).unwrap();
    let driver = stand_in::path_of(dir, "libcuda.so.1");
    c("libapp_early.so", APP, &[&driver]);
    c("libapp_late.so", APP, &[&driver, "-Wl,-z,now"]);
}

/// Runs the ignored test `name` of this binary in a child with the stand-in driver.
fn in_child(name: &str) {
    let dir = stand_in::dir_for(name);
    build(&dir);
    stand_in::run_child(name, &dir, &[]);
    std::fs::remove_dir_all(&dir).unwrap();
}

type Fn0 = unsafe extern "C" fn() -> i32;
type Sync = unsafe extern "C" fn(*mut std::ffi::c_void) -> i32;

/// A library from the stand-in directory, loaded with `libloading` (through nosync's `dlopen`).
fn open(name: &str) -> libloading::Library {
    // SAFETY: the stand-in libraries run no initialisers.
    unsafe { libloading::Library::new(stand_in().join(name)) }.unwrap()
}

fn get<T: Copy>(lib: &libloading::Library, name: &str) -> T {
    // SAFETY: each name's type is its C signature above.
    unsafe { *lib.get::<T>(name.as_bytes()).unwrap() }
}

/// How many hooked calls of `api` a forbid scope around `f` reported.
fn forbidden(api: &str, f: impl FnOnce()) -> usize {
    let ((), report) = nosync::count_syncs(|| {
        nosync::with_mode(nosync::Mode::Log, || {
            let _hot = nosync::forbid();
            f();
        })
    });
    report
        .sites()
        .iter()
        .filter(|s| s.site().api == api)
        .map(|s| s.forbidden())
        .sum()
}

/// The line of `stand_in_sync`'s driver call.
const STAND_IN_SYNC_LINE: u32 = line!() + 5;

#[nosync::no_sync]
fn stand_in_sync() -> Result<(), nosync::SyncViolation> {
    // SAFETY: the stand-in's `cuStreamSynchronize` accepts a null stream.
    let _ = unsafe { cudarc::driver::sys::cuStreamSynchronize(std::ptr::null_mut()) };
    Ok(())
}

#[test]
fn the_interposer_sees_calls_through_dlsym_import_slots_and_get_proc_address() {
    in_child("child_sees_every_path");
}

#[test]
#[ignore = "run in a child process with the stand-in driver on LD_LIBRARY_PATH by `the_interposer_sees_calls_through_dlsym_import_slots_and_get_proc_address`"]
fn child_sees_every_path() {
    // Loaded before the install: its slot is rewritten by the install's pass.
    let early = open("libapp_early.so");
    let hook = nosync::hook::install().expect("install");
    assert_eq!(
        hook.backend(),
        nosync::hook::Backend::Interpose,
        "Auto before cuInit"
    );
    let driver = open("libcuda.so.1");
    let syncs = || get::<Fn0>(&driver, "stand_in_syncs");
    // SAFETY: the stand-in's functions, with their C signatures; a null stream is accepted.
    unsafe {
        assert_eq!(
            get::<unsafe extern "C" fn(u32) -> i32>(&driver, "cuInit")(0),
            0
        );
        // cudarc 0.19 with dynamic loading: the entry point is looked up at its first call.
        let before = syncs()();
        let n = forbidden("cuStreamSynchronize", || {
            let _ = cudarc::driver::sys::cuStreamSynchronize(std::ptr::null_mut());
        });
        assert_eq!((n, syncs()() - before), (1, 1), "cudarc's dynamic loading");
        // A violation names the caller, below the wrapper (debug builds: full names).
        let err = nosync::with_mode(nosync::Mode::Error, stand_in_sync).unwrap_err();
        let first = err
            .frames()
            .first()
            .expect("a frame outside cudarc and nosync");
        assert!(first.function.ends_with("stand_in_sync"), "{first}");
        assert_eq!(first.line, Some(STAND_IN_SYNC_LINE), "{first}");
        // Outside every scope: not reported, still called.
        let (_, report) = nosync::count_syncs(|| {
            let _ = cudarc::driver::sys::cuStreamSynchronize(std::ptr::null_mut());
        });
        assert_eq!((report.forbidden(), syncs()() - before), (0, 3));
        // Import slots: a library loaded before the install, and one loaded after it.
        let late = open("libapp_late.so");
        for (lib, what) in [(&early, "before"), (&late, "after")] {
            let app = get::<Fn0>(lib, "app_sync");
            let n = forbidden("cuStreamSynchronize", || {
                let _ = app();
            });
            assert_eq!(
                n, 1,
                "a library that links the driver, loaded {what} the install"
            );
        }
        // cuGetProcAddress, looked up with dlsym, answers with the wrapper too.
        type GetProc = unsafe extern "C" fn(
            *const i8,
            *mut *mut std::ffi::c_void,
            i32,
            u64,
            *mut std::ffi::c_void,
        ) -> i32;
        let get_proc = get::<GetProc>(&driver, "cuGetProcAddress_v2");
        let mut f: *mut std::ffi::c_void = std::ptr::null_mut();
        assert_eq!(
            get_proc(
                c"cuStreamSynchronize".as_ptr(),
                &mut f,
                13000,
                0,
                std::ptr::null_mut()
            ),
            0
        );
        let via_proc: Sync = std::mem::transmute(f);
        assert_eq!(
            forbidden("cuStreamSynchronize", || {
                let _ = via_proc(std::ptr::null_mut());
            }),
            1
        );
        // `dlvsym`, a versioned lookup, answers with a wrapper as `dlsym` does.
        let handle = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        let versioned = libc::dlvsym(
            handle,
            c"cuStreamSynchronize".as_ptr(),
            c"STAND_IN_1.0".as_ptr(),
        );
        assert!(!versioned.is_null(), "dlvsym found it");
        let via_dlvsym: Sync = std::mem::transmute(versioned);
        assert_eq!(
            forbidden("cuStreamSynchronize", || {
                let _ = via_dlvsym(std::ptr::null_mut());
            }),
            1,
            "a function found by dlvsym is seen"
        );
        libc::dlclose(handle);
        // Launches and queries are watched only while a capture is live: not reported here.
        let query = get::<Sync>(&driver, "cuStreamQuery");
        assert_eq!(
            forbidden("cuStreamQuery", || {
                let _ = query(std::ptr::null_mut());
            }),
            0
        );
    }
    // Uninstalled, the wrappers call straight through; installed again (the driver is
    // initialized by now), Auto takes the interposer, which has seen every lookup.
    drop(hook);
    let again = nosync::hook::install().expect("install again");
    assert_eq!(again.backend(), nosync::hook::Backend::Interpose);
    drop(again);
    // SAFETY: the stand-in's counter.
    let before = unsafe { syncs()() };
    let n = forbidden("cuStreamSynchronize", || {
        // SAFETY: as above.
        let _ = unsafe { cudarc::driver::sys::cuStreamSynchronize(std::ptr::null_mut()) };
    });
    // SAFETY: as above.
    let after = unsafe { syncs()() };
    assert_eq!((n, after - before), (0, 1));
}

#[test]
fn auto_chooses_cupti_once_the_driver_is_initialized() {
    in_child("child_after_cu_init");
}

#[test]
#[ignore = "run in a child process with the stand-in driver on LD_LIBRARY_PATH by `auto_chooses_cupti_once_the_driver_is_initialized`"]
fn child_after_cu_init() {
    let driver = open("libcuda.so.1");
    let init = get::<unsafe extern "C" fn(u32) -> i32>(&driver, "cuInit");
    // SAFETY: the stand-in's `cuInit`.
    assert_eq!(unsafe { init(0) }, 0);
    // Some code may hold driver functions now: Auto takes CUPTI, which the stand-in lacks.
    // SAFETY: this child runs one test on one thread; nothing reads the environment meanwhile.
    unsafe { std::env::set_var("NOSYNC_CUPTI", stand_in()) };
    match nosync::hook::install() {
        Err(nosync::hook::HookError::NoCupti { .. }) => {}
        other => panic!("expected NoCupti, got {other:?}"),
    }
    // Asked for, the interposer refuses: what was looked up before would go unseen.
    match nosync::hook::install_with(nosync::hook::Backend::Interpose) {
        Err(nosync::hook::HookError::Interpose { reason }) => {
            assert!(
                reason.contains("install before the first CUDA call"),
                "{reason}"
            )
        }
        other => panic!("expected HookError::Interpose, got {other:?}"),
    }
}
