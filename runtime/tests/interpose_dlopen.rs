//! The interposer's `dlopen`, taken over in every patched object, answers as the calling object
//! would have been answered without it: a bare name along the caller's own search path
//! (`DT_RUNPATH`), `$ORIGIN` as the caller's directory, and a failure leaves its `dlerror()`
//! message. Without the stand-in's search, the loader would search from nosync's object: the
//! bare name would not be found, and `$ORIGIN` would be the test program's directory.
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
}
