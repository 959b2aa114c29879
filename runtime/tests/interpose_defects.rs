//! One test per way the interposer can crash a process, cut out another tool or miss calls
//! without saying so, each on the stand-in driver (`stand_in/`) in a child process:
//! `cuGetProcAddress` answering "not found" and asked for itself, a preloaded shim that must keep
//! its calls, a library loaded at a closed library's address, an absolute relocation, a failed
//! install, page protections, a runtime library loaded late, libraries opened by another
//! library's `dlopen` and their constructors. The non-PIE program is `interpose_non_pie.rs`.
#![cfg(target_os = "linux")]

mod stand_in;

use std::ffi::{CString, c_void};
use std::path::Path;

use stand_in::{
    GetProcV1, GetProcV2, Recorder, cc, elf, forbidden, get, open, path_of, reported, stand_in,
    stream_fn,
};

type Fn0 = unsafe extern "C" fn() -> i32;

/// A preloaded tool: counts its `cuStreamSynchronize` calls and forwards them to the next
/// definition, as GPU-sharing limiters and tracers do.
const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
static int calls;
int shim_calls(void) { return calls; }
int cuStreamSynchronize(void *s) {
  calls++;
  int (*next)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "cuStreamSynchronize");
  if (!next) {
    /* The driver is not in the global scope (loaded by a library opened RTLD_LOCAL). */
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (driver) next = (int (*)(void *))dlsym(driver, "cuStreamSynchronize");
  }
  return next ? next(s) : 999;
}
"#;

const SYNC_APP: &str = r#"
int cuStreamSynchronize(void *s);
int app_sync(void) { return cuStreamSynchronize((void *)0); }
"#;

/// The driver's function kept in data: an absolute relocation, writable and read-only.
const ABSOLUTE: &str = r#"
int cuStreamSynchronize(void *s);
void *abs_table[] = { (void *)cuStreamSynchronize };
void *const abs_table_ro[] = { (void *)cuStreamSynchronize };
int abs_call(void) { return ((int (*)(void *))abs_table[0])(0); }
int abs_call_ro(void) { return ((int (*)(void *))abs_table_ro[0])(0); }
"#;

/// An import slot on the page the loader left writable after the read-only-after-load region
/// (the file's `PT_GNU_RELRO` is extended below), beside a global the library writes.
const RELRO_TAIL: &str = r#"
int cuStreamSynchronize(void *s);
int relro_global = 1;
int relro_call(void) { return cuStreamSynchronize((void *)0); }
int relro_write(int v) { relro_global = v; return relro_global; }
"#;

/// The driver's function as a word in the text (a text relocation), beside the code that
/// calls through it.
const TEXTREL: &str = r#"
int cuStreamSynchronize(void *s);
__asm__(".text\n.p2align 3\n.globl textrel_slot\n.hidden textrel_slot\ntextrel_slot: .quad cuStreamSynchronize\n");
extern void *textrel_slot;
int textrel_call(void) { return ((int (*)(void *))textrel_slot)((void *)0); }
"#;

/// The driver's function in a data word at an odd address (an absolute relocation the loader
/// writes byte-wise): no atomic store can rewrite it.
const UNALIGNED: &str = r#"
#include <string.h>
int cuStreamSynchronize(void *s);
__asm__(".data\n.p2align 3\n.byte 0\n.globl unaligned_word\n.hidden unaligned_word\nunaligned_word: .quad cuStreamSynchronize\n");
extern char unaligned_word[] __attribute__((visibility("hidden")));
int unaligned_call(void) { void *f; memcpy(&f, unaligned_word, sizeof f); return ((int (*)(void *))f)((void *)0); }
"#;

/// A plugin loader: C code that opens libraries and looks functions up itself (a Python
/// extension, a C++ plugin host).
const PLUGIN: &str = r#"
#include <dlfcn.h>
void *plugin_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
void *plugin_sym(void *h, const char *name) { return dlsym(h, name); }
"#;

const USES_RUNTIME: &str = r#"
int cudaDeviceSynchronize(void);
int uses_rt_sync(void) { return cudaDeviceSynchronize(); }
"#;

/// A library whose constructor synchronizes (a library that sets up the device when loaded).
const CONSTRUCTOR: &str = r#"
int cuStreamSynchronize(void *s);
static int result = -1;
__attribute__((constructor)) static void setup(void) { result = cuStreamSynchronize((void *)0); }
int ctor_result(void) { return result; }
"#;

/// The stand-in and the libraries of these tests.
fn build(dir: &Path) {
    stand_in::build(dir);
    let driver = path_of(dir, "libcuda.so.1");
    let runtime = path_of(dir, "libcudart.so.13");
    cc(dir, "libshim.so", SHIM, &["-ldl"]);
    cc(dir, "libapp.so", SYNC_APP, &[&driver]);
    cc(dir, "libapp9.so", SYNC_APP, &[&driver]);
    cc(
        dir,
        "libapp_now.so",
        SYNC_APP,
        &[&driver, "-Wl,-z,relro,-z,now"],
    );
    for i in 0..8 {
        cc(dir, &format!("libreuse_{i}.so"), SYNC_APP, &[&driver]);
    }
    cc(dir, "libabs.so", ABSOLUTE, &[&driver]);
    cc(
        dir,
        "libprot_relro.so",
        RELRO_TAIL,
        &[&driver, "-Wl,-z,relro,-z,lazy"],
    );
    elf::extend_relro(&dir.join("libprot_relro.so"), elf::page() as u64);
    cc(
        dir,
        "libprot_textrel.so",
        TEXTREL,
        &[&driver, "-Wl,-z,notext"],
    );
    cc(dir, "libplugin.so", PLUGIN, &["-ldl"]);
    cc(dir, "libunaligned.so", UNALIGNED, &[&driver]);
    cc(dir, "libuses_rt.so", USES_RUNTIME, &[&runtime]);
    cc(dir, "libctor.so", CONSTRUCTOR, &[&driver]);
}

/// Builds the libraries for child test `name`, runs it with `env`, removes them.
fn defect(name: &str, env: &[(&str, &str)]) {
    let dir = stand_in::dir_for(name);
    build(&dir);
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.replace("$DIR", &dir.display().to_string())))
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (&**k, &**v)).collect();
    stand_in::run_child(name, &dir, &env);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Installs the hook (the interposer: before `cuInit`), then initializes the stand-in.
fn install() -> (nosync::hook::Hook, libloading::Library) {
    let hook = nosync::hook::install().expect("install");
    assert_eq!(hook.backend(), nosync::hook::Backend::Interpose);
    let driver = open("libcuda.so.1");
    let init = get::<unsafe extern "C" fn(u32) -> i32>(&driver, "cuInit");
    // SAFETY: the stand-in's `cuInit`.
    assert_eq!(unsafe { init(0) }, 0);
    (hook, driver)
}

/// Calls `f` in a forbid scope: how many `cuStreamSynchronize` waits were reported, and how many
/// calls reached the stand-in.
fn sync_seen(rec: &Recorder, f: impl FnOnce() -> i32) -> (usize, u64) {
    rec.reset();
    let mut result = -1;
    let n = forbidden("cuStreamSynchronize", || result = f());
    assert_eq!(result, 0, "the call's result");
    (n, rec.calls("cuStreamSynchronize"))
}

// --- 1. cuGetProcAddress: not found, and asked for itself ---

#[test]
fn get_proc_address_passes_not_found_through_and_maps_itself() {
    defect("child_get_proc_address", &[]);
}

#[test]
#[ignore = "run in a child by `get_proc_address_passes_not_found_through_and_maps_itself`"]
fn child_get_proc_address() {
    let (_hook, driver) = install();
    let rec = Recorder::new();
    let v2 = get::<GetProcV2>(&driver, "cuGetProcAddress_v2");
    let v1 = get::<GetProcV1>(&driver, "cuGetProcAddress");
    let missing = c"cuNoSuchThing";
    for version in [11030, 12000, 13000] {
        let mut pfn: *mut c_void = std::ptr::null_mut();
        let mut status = -1;
        // SAFETY: the stand-in's `cuGetProcAddress_v2`, with its C signature.
        let r = unsafe { v2(missing.as_ptr(), &mut pfn, version, 0, &mut status) };
        assert_eq!(
            (r, pfn, status),
            (0, std::ptr::null_mut(), 1),
            "cuGetProcAddress_v2(cuNoSuchThing) at {version}: success, no function, not found"
        );
    }
    let mut pfn: *mut c_void = std::ptr::null_mut();
    // SAFETY: as above, CUDA 11.3's signature.
    let r = unsafe { v1(missing.as_ptr(), &mut pfn, 11030, 0) };
    assert_eq!((r, pfn), (0, std::ptr::null_mut()), "cuGetProcAddress");
    // Asked for itself: the getter it returns answers with functions the hook sees.
    for (getter, version, v2_answer) in [
        ("cuGetProcAddress_v2", 13000, true),
        ("cuGetProcAddress_v2", 11080, false),
        ("cuGetProcAddress", 12000, true),
        ("cuGetProcAddress", 11080, false),
    ] {
        let asker = if getter == "cuGetProcAddress_v2" {
            lookup_v2(v2, "cuGetProcAddress", version)
        } else {
            lookup_v1(v1, "cuGetProcAddress", version)
        };
        let what = format!("{getter}(\"cuGetProcAddress\", {version})");
        let sync = if v2_answer {
            // SAFETY: at 12000 and later the driver answers with `cuGetProcAddress_v2`.
            let again: GetProcV2 = unsafe { std::mem::transmute(asker) };
            let missing = lookup_v2(again, "cuNoSuchThing", 13000);
            assert!(missing.is_null(), "{what}, then cuNoSuchThing: {missing:?}");
            lookup_v2(again, "cuStreamSynchronize", 13000)
        } else {
            // SAFETY: before 12000, with `cuGetProcAddress`.
            let again: GetProcV1 = unsafe { std::mem::transmute(asker) };
            lookup_v1(again, "cuStreamSynchronize", 11080)
        };
        // SAFETY: `cuStreamSynchronize`, which accepts a null stream.
        let sync = unsafe { stream_fn(sync) };
        // SAFETY: as above.
        let seen = sync_seen(&rec, || unsafe { sync(std::ptr::null_mut()) });
        assert_eq!(
            seen,
            (1, 1),
            "{what}, then cuStreamSynchronize: (reported, called)"
        );
    }
}

fn lookup_v2(f: GetProcV2, name: &str, version: i32) -> *mut c_void {
    let c = CString::new(name).unwrap();
    let (mut pfn, mut status) = (std::ptr::null_mut(), -1);
    // SAFETY: `cuGetProcAddress_v2`'s C signature.
    let r = unsafe { f(c.as_ptr(), &mut pfn, version, 0, &mut status) };
    assert_eq!(r, 0, "cuGetProcAddress_v2({name})");
    pfn
}

fn lookup_v1(f: GetProcV1, name: &str, version: i32) -> *mut c_void {
    let c = CString::new(name).unwrap();
    let mut pfn = std::ptr::null_mut();
    // SAFETY: `cuGetProcAddress`'s C signature.
    let r = unsafe { f(c.as_ptr(), &mut pfn, version, 0) };
    assert_eq!(r, 0, "cuGetProcAddress({name})");
    pfn
}

// --- 3. a preloaded shim keeps its calls ---

#[test]
fn a_preloaded_shim_keeps_seeing_its_calls() {
    defect("child_preloaded_shim", &[("LD_PRELOAD", "$DIR/libshim.so")]);
}

#[test]
#[ignore = "run in a child with LD_PRELOAD by `a_preloaded_shim_keeps_seeing_its_calls`"]
fn child_preloaded_shim() {
    let early = open("libapp.so");
    // SAFETY: the preloaded shim's counter, found in the global scope.
    let shim_calls = unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, c"shim_calls".as_ptr());
        assert!(!f.is_null(), "the shim is preloaded");
        std::mem::transmute::<*mut c_void, Fn0>(f)
    };
    let app = get::<Fn0>(&early, "app_sync");
    // SAFETY: the shim's and the library's functions, C signatures.
    unsafe {
        assert_eq!((app(), shim_calls()), (0, 1), "before the install");
    }
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    let late = open("libapp9.so");
    // SAFETY: the global scope's definition: the shim's.
    let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"cuStreamSynchronize".as_ptr()) };
    let late_app = get::<Fn0>(&late, "app_sync");
    // SAFETY: what the global scope binds `cuStreamSynchronize` to.
    let global = unsafe { stream_fn(global) };
    for (what, path) in [
        "the import slot of a library loaded before the install",
        "the import slot of a library loaded after it",
        "dlsym(RTLD_DEFAULT)",
    ]
    .into_iter()
    .enumerate()
    .map(|(i, w)| (w, i))
    {
        // SAFETY: the libraries' functions and the shim's, C signatures; a null stream.
        let call = || unsafe {
            match path {
                0 => app(),
                1 => late_app(),
                _ => global(std::ptr::null_mut()),
            }
        };
        // SAFETY: the shim's counter.
        let before = unsafe { shim_calls() };
        let seen = sync_seen(&rec, call);
        // SAFETY: as above.
        let shim = unsafe { shim_calls() } - before;
        assert_eq!(
            (seen.0, shim, seen.1),
            (1, 1, 1),
            "{what}: (reported by the hook, seen by the shim, reached the driver)"
        );
    }
}

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

// --- 5. an absolute relocation ---

#[test]
fn an_absolute_relocation_is_rewritten() {
    defect("child_absolute_relocation", &[]);
}

#[test]
#[ignore = "run in a child by `an_absolute_relocation_is_rewritten`"]
fn child_absolute_relocation() {
    let lib = open("libabs.so");
    let absolute = elf::slots(|n| n.ends_with("/libabs.so"))
        .into_iter()
        .filter(|s| s.symbol == "cuStreamSynchronize" && s.kind == elf::ABSOLUTE)
        .count();
    assert_eq!(absolute, 2, "the two data words are absolute relocations");
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    for name in ["abs_call", "abs_call_ro"] {
        let f = get::<Fn0>(&lib, name);
        // SAFETY: the library's function, C signature.
        assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1), "{name}");
    }
}

// --- 6. a failed install leaves nothing behind ---

#[test]
fn a_failed_install_leaves_nothing_behind() {
    defect("child_failed_install", &[("STAND_IN_INIT_RESULT", "100")]);
}

/// The values of every slot of the stand-in's libraries and of this test's program.
fn slot_values() -> Vec<(elf::Slot, usize)> {
    let dir = stand_in().display().to_string();
    elf::slots(|n| n.is_empty() || n.starts_with(&dir))
        .into_iter()
        .map(|s| {
            let v = elf::value(&s);
            (s, v)
        })
        .collect()
}

#[test]
#[ignore = "run in a child whose stand-in cuInit fails by `a_failed_install_leaves_nothing_behind`"]
fn child_failed_install() {
    let early = open("libapp.so");
    let before = slot_values();
    assert!(
        before
            .iter()
            .any(|(s, _)| s.symbol == "cuStreamSynchronize"),
        "the library's slot is found"
    );
    match nosync::hook::install() {
        Err(nosync::hook::HookError::Driver { call, .. }) => assert_eq!(call, "cuInit"),
        other => panic!("expected the driver's error from cuInit, got {other:?}"),
    }
    assert!(!nosync::hook::is_installed());
    let after = slot_values();
    let changed: Vec<String> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|((s, b), (_, a))| {
            format!(
                "{} {} at {:#x}: {b:#x} -> {a:#x}",
                s.object, s.symbol, s.addr
            )
        })
        .collect();
    assert_eq!(before.len(), after.len());
    assert!(
        changed.is_empty(),
        "slots rewritten by a failed install:\n{}",
        changed.join("\n")
    );
    let rec = Recorder::new();
    let app = get::<Fn0>(&early, "app_sync");
    // SAFETY: the library's function, C signature.
    let seen = sync_seen(&rec, || unsafe { app() });
    assert_eq!(seen, (0, 1), "no hook: nothing reported, the call made");
}

// --- 7. page protections ---

#[test]
fn every_page_keeps_its_protection() {
    defect("child_page_protections", &[]);
}

#[test]
fn a_relro_tail_page_and_a_text_relocation_keep_their_protection() {
    defect("child_page_protections_edges", &[]);
}

/// The protection of every page of the stand-in's libraries and of this program.
fn our_pages() -> std::collections::BTreeMap<usize, String> {
    let dir = stand_in().display().to_string();
    let exe = std::env::current_exe().unwrap().display().to_string();
    elf::pages(|p| p.starts_with(&dir) || p == exe)
}

/// The address of the `cuStreamSynchronize` slot of the loaded library `file`.
fn sync_slot(file: &str) -> usize {
    elf::slots(|n| n.ends_with(file))
        .into_iter()
        .find(|s| s.symbol == "cuStreamSynchronize")
        .unwrap_or_else(|| panic!("{file}'s slot"))
        .addr
}

/// The protection of the page of `at` in `pages`.
fn perms_at(pages: &std::collections::BTreeMap<usize, String>, at: usize) -> String {
    pages[&(at & !(elf::page() - 1))].clone()
}

/// Installs the hook; fails with every page whose protection changed.
fn install_keeping(before: &std::collections::BTreeMap<usize, String>) -> nosync::hook::Hook {
    let (hook, _driver) = install();
    let after = our_pages();
    let changed: Vec<String> = before
        .iter()
        .filter(|(at, p)| after.get(at) != Some(p))
        .map(|(at, p)| format!("{at:#x}: {p} -> {:?}", after.get(at)))
        .collect();
    assert!(
        changed.is_empty(),
        "pages whose protection changed:\n{}",
        changed.join("\n")
    );
    hook
}

#[test]
#[ignore = "run in a child by `every_page_keeps_its_protection`"]
fn child_page_protections() {
    // Slots in read-only-after-load pages (`-z now`, and this program's own) and in writable ones.
    let now = open("libapp_now.so");
    let lazy = open("libapp.so");
    let before = our_pages();
    let slot = sync_slot("/libapp_now.so");
    let (from, to) = elf::relro("/libapp_now.so").unwrap();
    assert!(
        (from..to).contains(&slot),
        "{slot:#x} in {from:#x}..{to:#x}"
    );
    assert!(
        perms_at(&before, slot).starts_with("r--"),
        "{}",
        perms_at(&before, slot)
    );
    let _hook = install_keeping(&before);
    let rec = Recorder::new();
    for (lib, what) in [(&now, "bound at load"), (&lazy, "bound lazily")] {
        let f = get::<Fn0>(lib, "app_sync");
        // SAFETY: the library's function, C signature.
        assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1), "{what}");
    }
}

#[test]
#[ignore = "run in a child by `a_relro_tail_page_and_a_text_relocation_keep_their_protection`"]
fn child_page_protections_edges() {
    let relro = open("libprot_relro.so");
    let textrel = open("libprot_textrel.so");
    let before = our_pages();
    // The layout the test needs: the relro library's slot inside its `PT_GNU_RELRO` but on a
    // page the loader left writable; the text library's slot on an executable page.
    let (relro_slot, textrel_slot) = (
        sync_slot("/libprot_relro.so"),
        sync_slot("/libprot_textrel.so"),
    );
    let (from, to) = elf::relro("/libprot_relro.so").unwrap();
    assert!(
        (from..to).contains(&relro_slot),
        "{relro_slot:#x} in {from:#x}..{to:#x}"
    );
    let (tail, text) = (
        perms_at(&before, relro_slot),
        perms_at(&before, textrel_slot),
    );
    assert!(tail.starts_with("rw-"), "{tail}");
    assert!(text.starts_with("r-x"), "{text}");
    let _hook = install_keeping(&before);
    let rec = Recorder::new();
    let write = get::<unsafe extern "C" fn(i32) -> i32>(&relro, "relro_write");
    // SAFETY: the library's function: the global beside the slot stays writable.
    assert_eq!(unsafe { write(7) }, 7);
    for (lib, name) in [(&relro, "relro_call"), (&textrel, "textrel_call")] {
        let f = get::<Fn0>(lib, name);
        // SAFETY: the library's function, C signature (its page stays executable).
        assert_eq!(sync_seen(&rec, || unsafe { f() }), (1, 1), "{name}");
    }
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

#[test]
fn a_constructor_s_calls_are_seen() {
    defect("child_constructor", &[]);
}

#[test]
#[ignore = "run in a child by `a_constructor_s_calls_are_seen`"]
fn child_constructor() {
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    rec.reset();
    let mut lib = None;
    let n = forbidden("cuStreamSynchronize", || lib = Some(open("libctor.so")));
    let ran = get::<Fn0>(lib.as_ref().unwrap(), "ctor_result");
    // SAFETY: the library's function, C signature.
    assert_eq!(unsafe { ran() }, 0, "the constructor ran");
    assert_eq!(
        (n, rec.calls("cuStreamSynchronize")),
        (1, 1),
        "the constructor's sync, made inside dlopen: (reported, called)"
    );
}

// --- an unaligned slot ---

#[test]
fn an_unaligned_slot_is_left_alone() {
    defect("child_unaligned_slot", &[]);
}

#[test]
#[ignore = "run in a child by `an_unaligned_slot_is_left_alone`"]
fn child_unaligned_slot() {
    let lib = open("libunaligned.so");
    let odd = elf::slots(|n| n.ends_with("/libunaligned.so"))
        .into_iter()
        .filter(|s| s.symbol == "cuStreamSynchronize" && s.addr % 8 != 0)
        .count();
    assert_eq!(odd, 1, "the library has an unaligned slot");
    let (_hook, _driver) = install();
    let rec = Recorder::new();
    rec.reset();
    let f = get::<Fn0>(&lib, "unaligned_call");
    // SAFETY: the library's function, C signature.
    assert_eq!(unsafe { f() }, 0);
    assert_eq!(
        rec.calls("cuStreamSynchronize"),
        1,
        "the call reached the driver"
    );
}
