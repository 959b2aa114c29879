//! The interposer's `dlopen`, taken over in every patched object, answers as the calling object
//! would have been answered without it: a bare name along the caller's own search path
//! (`DT_RUNPATH`), `$ORIGIN` as the caller's directory, and a failure leaves its `dlerror()`
//! message. Without the stand-in's search, the loader would search from nosync's object: the
//! bare name would not be found, and `$ORIGIN` would be the test program's directory. Its
//! `dlsym` answers a lookup in a handle with a wrapper, and leaves `RTLD_DEFAULT` to the loader
//! as the calling library asked it (its own scope).
#![cfg(target_os = "linux")]

mod stand_in;

use stand_in::libs::install;
use stand_in::{cc, dir_for, get, open, path_of, run_child};

const LOADER: &str = r#"
#include <dlfcn.h>
#include <string.h>
int load_bare(void) { return dlopen("libdep_bare.so", RTLD_NOW) != 0; }
int load_origin(void) { return dlopen("$ORIGIN/sub/libdep_origin.so", RTLD_NOW) != 0; }
int load_missing(void) {
  if (dlopen("libnosync_no_such_library.so", RTLD_NOW)) return 0;
  const char *e = dlerror();
  return e != 0 && strstr(e, "libnosync_no_such_library.so") != 0;
}
"#;

/// A library that looks the driver up itself, and whose answers depend on the caller.
const LOOKER: &str = r#"
#include <dlfcn.h>
int looker_marker(void) { return 1; }
int sync_via_handle(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  int (*f)(void *) = (int (*)(void *))dlsym(h, "cuStreamSynchronize");
  return f ? f((void *)0) : -1;
}
/* Opened RTLD_LOCAL: only a lookup made from this library's own scope finds its marker. */
int default_finds_own(void) { return dlsym(RTLD_DEFAULT, "looker_marker") != 0; }
"#;

const DEP: &str = "int dep(void) { return 7; }\n";

#[test]
fn dlopen_from_another_object_searches_as_that_object() {
    let name = "child_search_as_caller";
    let dir = dir_for(name);
    stand_in::build(&dir);
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    cc(&sub, "libdep_bare.so", DEP, &[]);
    cc(&sub, "libdep_origin.so", DEP, &[]);
    // RUNPATH (new dtags): `$ORIGIN/sub` is searched for the library's own bare names only.
    let runpath = "-Wl,-rpath,$ORIGIN/sub,--enable-new-dtags";
    let driver = path_of(&dir, "libcuda.so.1");
    cc(&dir, "libloader_rp.so", LOADER, &[runpath, "-ldl", &driver]);
    cc(&dir, "liblooker.so", LOOKER, &["-ldl"]);
    run_child(name, &dir, &[]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "run in a child by `dlopen_from_another_object_searches_as_that_object`"]
fn child_search_as_caller() {
    let lib = open("libloader_rp.so");
    let (hook, _driver) = install();
    // The library's `dlopen` slot is the hook's now.
    let patched = hook.coverage();
    let loader = patched
        .objects()
        .iter()
        .find(|o| o.name.ends_with("/libloader_rp.so"));
    assert!(loader.is_some_and(|o| o.slots > 0), "{patched}");
    type Fn0 = unsafe extern "C" fn() -> i32;
    for what in ["load_bare", "load_origin", "load_missing"] {
        let f = get::<Fn0>(&lib, what);
        // SAFETY: the library's functions, with their C signatures.
        assert_eq!(unsafe { f() }, 1, "{what}");
    }
    // `dlsym` with a handle, from another library, is answered with a wrapper: seen; with
    // `RTLD_DEFAULT` it still searches that library's own scope.
    let looker = open("liblooker.so");
    let rec = stand_in::Recorder::new();
    let sync = get::<Fn0>(&looker, "sync_via_handle");
    let seen = stand_in::libs::sync_seen(&rec, || {
        // SAFETY: the library's function, C signature.
        unsafe { sync() }
    });
    assert_eq!(seen, (1, 1), "a lookup in a handle from another library");
    let own_scope = get::<Fn0>(&looker, "default_finds_own");
    // SAFETY: as above.
    assert_eq!(unsafe { own_scope() }, 1, "RTLD_DEFAULT from the library");
}
