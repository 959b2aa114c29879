//! The CUPTI hook without a GPU (CI): `install` returns an error naming what it looked for, never
//! panics, and changes nothing; `NOSYNC_HOOK=1` says so once on stderr. On a machine with a
//! driver the same tests check that the error, if any, is not the missing-driver one
//! (`hook_gpu.rs` tests the hook itself there).
#![cfg(all(feature = "hook", not(nosync_off)))]

use std::process::Command;

use nosync::hook::{HOOK_ENV, HookError};
use nosync::{Mode, SyncSite};

static WAIT: SyncSite = SyncSite::does("wait", "blocks");

fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[test]
fn install_without_a_driver_is_an_error_naming_the_library() {
    let result = nosync::hook::install();
    match &result {
        Err(e @ HookError::NoDriver { looked_for }) => {
            assert!(!driver_present(), "a driver is present, yet: {e}");
            assert!(
                looked_for.iter().any(|n| n == "libcuda.so.1"),
                "{looked_for:?}"
            );
            let message = e.to_string();
            assert!(
                message.starts_with(
                    "the CUDA driver library was not found (looked for [\"libcuda.so.1\", \"libcuda.so\"]"
                ),
                "{message}"
            );
            assert!(!nosync::hook::is_installed());
        }
        other => assert!(
            driver_present(),
            "no driver here, yet install gave {other:?}"
        ),
    }
    // Everything else works as before.
    nosync::with_mode(Mode::Error, || {
        let _hot = nosync::forbid();
        assert!(nosync::declare_sync(&WAIT).is_err());
    });
    drop(result);
}

#[test]
fn errors_name_the_cause_and_where_it_looked() {
    let cupti = HookError::NoCupti {
        looked_for: vec!["libcupti.so".into()],
        searched: vec!["/usr/local/cuda-13.0/targets/x86_64-linux/lib".into()],
    };
    assert_eq!(
        cupti.to_string(),
        "libcupti was not found: looked for [\"libcupti.so\"] on the loader's search path and for \
         libcupti.so* in [\"/usr/local/cuda-13.0/targets/x86_64-linux/lib\"]; set NOSYNC_CUPTI to \
         the library or add its directory to LD_LIBRARY_PATH"
    );
    let symbol = HookError::MissingSymbol {
        library: "libcupti.so.11.8".into(),
        symbol: "cuptiSubscribe",
    };
    assert_eq!(
        symbol.to_string(),
        "libcupti.so.11.8 has no `cuptiSubscribe` (a driver or CUPTI older than CUDA 11?)"
    );
    assert!(
        HookError::OtherSubscriber
            .to_string()
            .contains("CUPTI before 13.2 allows only one")
    );
}

#[test]
#[ignore = "probe: run by `nosync_hook_1_without_a_driver_says_why_once` in a subprocess"]
fn probe_env_hook() {
    for _ in 0..3 {
        let _hot = nosync::forbid();
    }
    println!("PROBE installed={}", nosync::hook::is_installed());
}

#[test]
fn nosync_hook_1_without_a_driver_says_why_once() {
    let exe = std::env::current_exe().expect("the test binary");
    let args = [
        "--ignored",
        "--exact",
        "probe_env_hook",
        "--nocapture",
        "--test-threads=1",
    ];
    let out = Command::new(exe)
        .args(args)
        .env(HOOK_ENV, "1")
        .output()
        .expect("re-run");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{stderr}"
    );
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("nosync: "))
        .collect();
    if driver_present() {
        return assert!(
            lines
                .iter()
                .all(|l| !l.contains("driver library was not found")),
            "{stderr}"
        );
    }
    assert!(stdout.contains("PROBE installed=false"), "{stdout}");
    assert_eq!(lines.len(), 1, "one line for three scopes: {stderr}");
    assert!(
        lines[0].starts_with("nosync: NOSYNC_HOOK=1 but the hook was not installed: the CUDA driver library was not found"),
        "{}",
        lines[0]
    );
}

#[test]
fn the_docs_table_lists_every_hooked_call_in_order() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/gpu.md");
    let docs = std::fs::read_to_string(path).expect("docs/gpu.md");
    let section = docs
        .split("### Hooked calls")
        .nth(1)
        .expect("a `### Hooked calls` section");
    let documented: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with("| `"))
        .take_while(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    let hooked: Vec<&str> = nosync::hook::HOOKED.iter().map(|h| h.does.api).collect();
    assert_eq!(documented, hooked);
}
