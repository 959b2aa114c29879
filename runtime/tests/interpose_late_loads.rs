//! Libraries loaded after the install: at a closed library's address, by another library's
//! `dlopen` (a plugin host), with a constructor that calls the driver, and one that links the
//! CUDA runtime. Each one's calls must be seen (or, for the runtime, `interpose_coverage.rs`
//! accepts the coverage saying they are not).
#![cfg(target_os = "linux")]

mod stand_in;

use std::ffi::{CString, c_void};

use stand_in::libs::{Fn0, defect, install, sync_seen};
use stand_in::{Recorder, forbidden, get, open, reported, stand_in};

// --- 4. a library loaded at a closed library's address ---

#[test]
fn a_library_loaded_at_a_closed_library_s_address_is_patched() {
    defect("child_reload_at_same_address", &[]);
}

/// The load base of the object that holds `addr`.
fn base_of(addr: *const c_void) -> usize {
    // SAFETY: `dladdr` fills `info` for an address of a loaded object.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        assert_ne!(libc::dladdr(addr, &mut info), 0);
        info.dli_fbase as usize
    }
}

#[test]
#[ignore = "run in a child by `a_library_loaded_at_a_closed_library_s_address_is_patched`"]
fn child_reload_at_same_address() {
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    let first = open("libreuse_0.so");
    let sync = get::<Fn0>(&first, "app_sync");
    let base = base_of(sync as *const c_void);
    // SAFETY: the library's function, C signature.
    assert_eq!(sync_seen(&rec, || unsafe { sync() }), (1, 1), "libreuse_0");
    drop(first);
    let mut bases = Vec::new();
    for i in 1..8 {
        let name = format!("libreuse_{i}.so");
        let lib = open(&name);
        let sync = get::<Fn0>(&lib, "app_sync");
        let at = base_of(sync as *const c_void);
        if at == base {
            // SAFETY: as above.
            let seen = sync_seen(&rec, || unsafe { sync() });
            assert_eq!(
                seen,
                (1, 1),
                "{name}, loaded at {at:#x} where libreuse_0 was"
            );
            return;
        }
        bases.push(at);
        drop(lib);
    }
    panic!("the loader did not reuse {base:#x} (bases {bases:#x?}): the test proves nothing");
}

// --- 8. a runtime library loaded late ---

#[test]
fn runtime_calls_of_a_library_loaded_late_by_nosync_s_dlopen_are_seen() {
    defect("child_runtime_late_own_dlopen", &[]);
}

#[test]
fn runtime_calls_of_a_library_loaded_late_by_another_library_are_seen() {
    defect("child_runtime_late_plugin", &[]);
}

/// Calls `uses_rt_sync` (`cudaDeviceSynchronize`, which calls `cuCtxSynchronize`) in a forbid
/// scope: what was reported, and how many runtime calls reached the stand-in.
fn runtime_seen(rec: &Recorder, f: Fn0) -> (Vec<(String, usize)>, u64) {
    rec.reset();
    // SAFETY: the library's function, C signature.
    let sites = reported(|| assert_eq!(unsafe { f() }, 0));
    (sites, rec.calls("cudaDeviceSynchronize"))
}

fn runtime_expected() -> (Vec<(String, usize)>, u64) {
    (vec![("cudaDeviceSynchronize".to_owned(), 1)], 1)
}

#[test]
#[ignore = "run in a child by `runtime_calls_of_a_library_loaded_late_by_nosync_s_dlopen_are_seen`"]
fn child_runtime_late_own_dlopen() {
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    let lib = open("libuses_rt.so");
    let f = get::<Fn0>(&lib, "uses_rt_sync");
    assert_eq!(runtime_seen(&rec, f), runtime_expected());
}

#[test]
#[ignore = "run in a child by `runtime_calls_of_a_library_loaded_late_by_another_library_are_seen`"]
fn child_runtime_late_plugin() {
    let plugin = open("libplugin.so");
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    let f = plugin_function(&plugin, "libuses_rt.so", "uses_rt_sync");
    assert_eq!(runtime_seen(&rec, f), runtime_expected());
}

/// `name` of the library `file` of the stand-in directory, opened and looked up by the plugin
/// loader's own `dlopen` and `dlsym`.
fn plugin_function(plugin: &libloading::Library, file: &str, name: &str) -> Fn0 {
    type Open = unsafe extern "C" fn(*const libc::c_char) -> *mut c_void;
    type Sym = unsafe extern "C" fn(*mut c_void, *const libc::c_char) -> *mut c_void;
    let path = CString::new(stand_in().join(file).display().to_string()).unwrap();
    let name = CString::new(name).unwrap();
    // SAFETY: the plugin loader's functions, C signatures; the function found is `int f(void)`.
    unsafe {
        let handle = get::<Open>(plugin, "plugin_open")(path.as_ptr());
        assert!(!handle.is_null(), "{file} opened");
        let f = get::<Sym>(plugin, "plugin_sym")(handle, name.as_ptr());
        assert!(!f.is_null(), "{name:?} found");
        std::mem::transmute::<*mut c_void, Fn0>(f)
    }
}

// --- 9. libraries opened by another library's dlopen, and constructors ---

#[test]
fn a_library_opened_by_another_library_after_the_install_is_patched() {
    defect("child_dlopen_by_another_library", &[]);
}

#[test]
#[ignore = "run in a child by `a_library_opened_by_another_library_after_the_install_is_patched`"]
fn child_dlopen_by_another_library() {
    let plugin = open("libplugin.so");
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    let f = plugin_function(&plugin, "libapp9.so", "app_sync");
    // SAFETY: the library's function, C signature.
    assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1));
}

/// A constructor runs inside `dlopen`, before the loader returns the object to anyone who could
/// patch it (only an audit library, `LD_AUDIT`, set before the process starts, sees an object
/// between its relocation and its constructors): its call reaches the driver unseen, and the
/// coverage says that such calls are not seen.
#[test]
fn a_constructor_s_calls_reach_the_driver_and_are_said_unseen() {
    defect("child_constructor", &[]);
}

#[test]
#[ignore = "run in a child by `a_constructor_s_calls_reach_the_driver_and_are_said_unseen`"]
fn child_constructor() {
    let (hook, _driver) = install();
    let rec = Recorder::new();
    rec.reset();
    let mut lib = None;
    let n = forbidden("cuStreamSynchronize", || lib = Some(open("libctor.so")));
    let ran = get::<Fn0>(lib.as_ref().unwrap(), "ctor_result");
    // SAFETY: the library's function, C signature.
    assert_eq!(unsafe { ran() }, 0, "the constructor ran");
    assert_eq!(
        (n, rec.calls("cuStreamSynchronize")),
        (0, 1),
        "the constructor's sync, made inside dlopen: (reported, called)"
    );
    let unseen = hook.coverage().unseen().join("\n");
    assert!(unseen.contains("constructors"), "{unseen}");
    // Once loaded, the object is patched: its later calls are seen.
    let f = get::<Fn0>(lib.as_ref().unwrap(), "ctor_sync");
    // SAFETY: the library's function, C signature.
    assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1));
}
