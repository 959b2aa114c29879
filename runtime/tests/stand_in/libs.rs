//! The libraries of the defect tests (each a few lines of C, built beside the stand-in), and
//! what those tests share: the child runner and the install they start with.

use std::path::Path;

use super::{Recorder, cc, elf, forbidden, get, open, path_of};

/// `int f(void)`.
pub(crate) type Fn0 = unsafe extern "C" fn() -> i32;

/// A preloaded tool: counts its `cuStreamSynchronize` calls and forwards them to the next
/// definition, as GPU-sharing limiters and tracers do.
pub(crate) const SHIM: &str = r#"
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

pub(crate) const SYNC_APP: &str = r#"
int cuStreamSynchronize(void *s);
int app_sync(void) { return cuStreamSynchronize((void *)0); }
"#;

/// The driver's function kept in data: an absolute relocation, writable and read-only.
pub(crate) const ABSOLUTE: &str = r#"
int cuStreamSynchronize(void *s);
void *abs_table[] = { (void *)cuStreamSynchronize };
void *const abs_table_ro[] = { (void *)cuStreamSynchronize };
int abs_call(void) { return ((int (*)(void *))abs_table[0])(0); }
int abs_call_ro(void) { return ((int (*)(void *))abs_table_ro[0])(0); }
"#;

/// An import slot on the page the loader left writable after the read-only-after-load region
/// (the file's `PT_GNU_RELRO` is extended below), beside a global the library writes.
pub(crate) const RELRO_TAIL: &str = r#"
int cuStreamSynchronize(void *s);
int relro_global = 1;
int relro_call(void) { return cuStreamSynchronize((void *)0); }
int relro_write(int v) { relro_global = v; return relro_global; }
"#;

/// The driver's function as a word in the text (a text relocation), beside the code that
/// calls through it.
pub(crate) const TEXTREL: &str = r#"
int cuStreamSynchronize(void *s);
__asm__(".text\n.p2align 3\n.globl textrel_slot\n.hidden textrel_slot\ntextrel_slot: .quad cuStreamSynchronize\n");
extern void *textrel_slot;
int textrel_call(void) { return ((int (*)(void *))textrel_slot)((void *)0); }
"#;

/// The driver's function in a data word at an odd address (an absolute relocation the loader
/// writes byte-wise): no atomic store can rewrite it.
pub(crate) const UNALIGNED: &str = r#"
#include <string.h>
int cuStreamSynchronize(void *s);
__asm__(".pushsection .data\n.p2align 3\n.byte 0\n.globl unaligned_word\n.hidden unaligned_word\nunaligned_word: .quad cuStreamSynchronize\n.popsection\n");
extern char unaligned_word[] __attribute__((visibility("hidden")));
int unaligned_call(void) { void *f; memcpy(&f, unaligned_word, sizeof f); return ((int (*)(void *))f)((void *)0); }
"#;

/// A plugin loader: C code that opens libraries and looks functions up itself (a Python
/// extension, a C++ plugin host).
pub(crate) const PLUGIN: &str = r#"
#include <dlfcn.h>
void *plugin_open(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
void *plugin_sym(void *h, const char *name) { return dlsym(h, name); }
"#;

pub(crate) const USES_RUNTIME: &str = r#"
int cudaDeviceSynchronize(void);
int uses_rt_sync(void) { return cudaDeviceSynchronize(); }
"#;

/// A library whose constructor synchronizes (a library that sets up the device when loaded).
pub(crate) const CONSTRUCTOR: &str = r#"
int cuStreamSynchronize(void *s);
static int result = -1;
__attribute__((constructor)) static void setup(void) { result = cuStreamSynchronize((void *)0); }
int ctor_result(void) { return result; }
int ctor_sync(void) { return cuStreamSynchronize((void *)0); }
"#;

/// The stand-in and the libraries of these tests.
pub(crate) fn build(dir: &Path) {
    super::build(dir);
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
pub(crate) fn defect(name: &str, env: &[(&str, &str)]) {
    let dir = super::dir_for(name);
    build(&dir);
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.replace("$DIR", &dir.display().to_string())))
        .collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (&**k, &**v)).collect();
    super::run_child(name, &dir, &env);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Installs the hook (the interposer: before `cuInit`), then initializes the stand-in.
pub(crate) fn install() -> (nosync::hook::Hook, libloading::Library) {
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
pub(crate) fn sync_seen(rec: &Recorder, f: impl FnOnce() -> i32) -> (usize, u64) {
    rec.reset();
    let mut result = -1;
    let n = forbidden("cuStreamSynchronize", || result = f());
    assert_eq!(result, 0, "the call's result");
    (n, rec.calls("cuStreamSynchronize"))
}
