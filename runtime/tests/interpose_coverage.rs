//! What the interposer says it sees and does not see (`Hook::coverage()`, one stderr line at
//! install), and `NOSYNC_HOOK` choosing the backend of every `install()`, on the stand-in driver
//! (`stand_in/`) in child processes.
#![cfg(target_os = "linux")]

mod stand_in;

use std::path::Path;

use nosync::hook::{Backend, HookError};
use stand_in::{Recorder, cc, get, open, path_of, reported, stand_in};

type Fn0 = unsafe extern "C" fn() -> i32;

const USES_RUNTIME: &str = r#"
int cudaDeviceSynchronize(void);
int uses_rt_sync(void) { return cudaDeviceSynchronize(); }
"#;

const PLUGIN: &str = r#"
#include <dlfcn.h>
void *plugin_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
void *plugin_sym(void *h, const char *name) { return dlsym(h, name); }
"#;

/// An absolute relocation at an odd address: no atomic store can rewrite it.
const UNALIGNED: &str = r#"
int cuStreamSynchronize(void *s);
__asm__(".data\n.p2align 3\n.byte 0\n.globl unaligned_word\n.hidden unaligned_word\nunaligned_word: .quad cuStreamSynchronize\n");
"#;

fn build(dir: &Path) {
    stand_in::build(dir);
    let driver = path_of(dir, "libcuda.so.1");
    let runtime = path_of(dir, "libcudart.so.13");
    cc(dir, "libuses_rt.so", USES_RUNTIME, &[&runtime]);
    cc(dir, "libplugin.so", PLUGIN, &["-ldl"]);
    cc(dir, "libunaligned.so", UNALIGNED, &[&driver]);
}

/// Runs child test `name` with `env`: its stdout and stderr.
fn child(name: &str, env: &[(&str, &str)]) -> (String, String) {
    let dir = stand_in::dir_for(name);
    build(&dir);
    let out = stand_in::run_child_output(name, &dir, env);
    std::fs::remove_dir_all(&dir).unwrap();
    out
}

// --- NOSYNC_HOOK picks the backend of every install ---

#[test]
fn nosync_hook_picks_the_backend_of_every_install() {
    child("child_env_backend", &[]);
}

/// Sets `NOSYNC_HOOK` for the next install.
fn set_hook_env(value: &str) {
    // SAFETY: this child runs one test on one thread; nothing reads the environment meanwhile.
    unsafe { std::env::set_var("NOSYNC_HOOK", value) };
}

#[test]
#[ignore = "run in a child by `nosync_hook_picks_the_backend_of_every_install`"]
fn child_env_backend() {
    // The stand-in has no CUPTI: looked for there only, it is not found.
    // SAFETY: as in `set_hook_env`.
    unsafe { std::env::set_var("NOSYNC_CUPTI", stand_in()) };
    for bad in ["yes", "CUPTI", "interposer", "2"] {
        set_hook_env(bad);
        match nosync::hook::install() {
            Err(HookError::Env { .. }) => {}
            other => panic!("NOSYNC_HOOK={bad}: expected HookError::Env, got {other:?}"),
        }
        assert!(!nosync::hook::is_installed());
    }
    // An app that installs the hook itself still gets the backend the variable asks for.
    set_hook_env("cupti");
    match nosync::hook::install() {
        Ok(hook) => assert_eq!(hook.backend(), Backend::Cupti, "NOSYNC_HOOK=cupti"),
        Err(HookError::NoCupti { .. } | HookError::Cupti { .. }) => {}
        Err(e) => panic!("NOSYNC_HOOK=cupti: expected CUPTI or its absence, got {e}"),
    }
    assert_ne!(nosync::hook::backend(), Some(Backend::Interpose));
    for value in ["interpose", "auto", "1"] {
        set_hook_env(value);
        let hook = nosync::hook::install().unwrap_or_else(|e| panic!("NOSYNC_HOOK={value}: {e}"));
        assert_eq!(hook.backend(), Backend::Interpose, "NOSYNC_HOOK={value}");
        assert_eq!(hook.coverage().backend(), Backend::Interpose);
        drop(hook);
    }
}

// --- what the interposer patched, skipped and cannot see ---

#[test]
fn coverage_lists_patched_objects_skipped_slots_and_what_is_unseen() {
    let (_, stderr) = child("child_coverage", &[]);
    let advice: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("nosync: ") && l.contains("NOSYNC_HOOK=cupti"))
        .collect();
    assert_eq!(
        advice.len(),
        1,
        "one stderr line at install says what is unseen and the advice:\n{stderr}"
    );
}

#[test]
#[ignore = "run in a child by `coverage_lists_patched_objects_skipped_slots_and_what_is_unseen`"]
fn child_coverage() {
    // Both link the driver; the callers also the runtime, so the runtime is loaded.
    let _callers = open("libcallers_early.so");
    let _unaligned = open("libunaligned.so");
    let hook = nosync::hook::install().expect("install");
    let coverage = hook.coverage();
    assert_eq!(coverage.backend(), Backend::Interpose);
    let callers = coverage
        .objects()
        .iter()
        .find(|o| o.name.ends_with("/libcallers_early.so"))
        .unwrap_or_else(|| panic!("the callers library is patched: {coverage}"));
    assert_eq!(
        callers.slots,
        stand_in::FUNS.len(),
        "one slot per hooked call it imports: {coverage}"
    );
    assert!(
        coverage
            .objects()
            .iter()
            .all(|o| !o.name.contains("libcuda.so")),
        "the driver itself is not patched: {coverage}"
    );
    let skipped = coverage
        .skipped()
        .iter()
        .find(|s| s.object.ends_with("/libunaligned.so"))
        .unwrap_or_else(|| panic!("the unaligned slot is listed as skipped: {coverage}"));
    assert_eq!(skipped.symbol, "cuStreamSynchronize");
    assert!(!skipped.reason.is_empty());
    assert!(
        coverage.unseen().iter().any(|s| s.contains("runtime")),
        "the runtime's own driver calls are said to be unseen: {:?}",
        coverage.unseen()
    );
    let text = coverage.to_string();
    for part in [
        "libcallers_early.so",
        "libunaligned.so",
        "NOSYNC_HOOK=cupti",
    ] {
        assert!(text.contains(part), "{part} in:\n{text}");
    }
}

// --- a runtime library loaded late: seen, or said to be unseen ---

#[test]
fn runtime_calls_of_a_library_loaded_late_are_seen_or_said_unseen() {
    child("child_runtime_late", &[]);
}

#[test]
#[ignore = "run in a child by `runtime_calls_of_a_library_loaded_late_are_seen_or_said_unseen`"]
fn child_runtime_late() {
    type Open = unsafe extern "C" fn(*const libc::c_char) -> *mut std::ffi::c_void;
    type Sym =
        unsafe extern "C" fn(*mut std::ffi::c_void, *const libc::c_char) -> *mut std::ffi::c_void;
    let plugin = open("libplugin.so");
    let hook = nosync::hook::install().expect("install");
    let rec = Recorder::new();
    let path =
        std::ffi::CString::new(stand_in().join("libuses_rt.so").display().to_string()).unwrap();
    // SAFETY: the plugin loader's functions; `uses_rt_sync` is `int (void)`.
    let f: Fn0 = unsafe {
        let h = get::<Open>(&plugin, "plugin_open")(path.as_ptr());
        assert!(!h.is_null());
        let f = get::<Sym>(&plugin, "plugin_sym")(h, c"uses_rt_sync".as_ptr());
        std::mem::transmute::<*mut std::ffi::c_void, Fn0>(f)
    };
    rec.reset();
    // SAFETY: as above.
    let sites = reported(|| assert_eq!(unsafe { f() }, 0));
    assert_eq!(rec.calls("cudaDeviceSynchronize"), 1);
    if sites == [("cudaDeviceSynchronize".to_owned(), 1)] {
        return;
    }
    let coverage = hook.coverage();
    let said = coverage
        .unseen()
        .iter()
        .any(|s| s.contains("cudaDeviceSynchronize"))
        || coverage
            .skipped()
            .iter()
            .any(|s| s.symbol == "cudaDeviceSynchronize");
    assert!(
        said,
        "reported {sites:?}, and the coverage does not say cudaDeviceSynchronize is unseen:\n{coverage}"
    );
}
