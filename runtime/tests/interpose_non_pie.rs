//! The interposer in a program that is not position-independent (`-C relocation-model=static`,
//! linked as `ET_EXEC`): there, the address of `dlopen` or `dlsym` taken in the program is the
//! program's own PLT stub (the canonical address every object binds the name to), which jumps
//! through the very import slot the interposer rewrites. A hook that calls that address as "the
//! real `dlopen`" calls itself until the stack overflows.
//!
//! The test builds a small program with nosync (`cargo build --offline`, its own target directory
//! beside the workspace's, the workspace's lock file), checks that it is `ET_EXEC`, and runs it on
//! the stand-in driver: after the install it opens a library and looks a driver function up (each
//! through nosync's `dlopen` and `dlsym` hooks), and a forbid scope must see both calls.
#![cfg(target_os = "linux")]

mod stand_in;

use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = r#"
[package]
name = "non-pie-child"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
nosync = { path = "RUNTIME" }
libloading = "0.9"

[workspace]
"#;

const MAIN: &str = r#"
use std::ffi::c_void;

fn forbidden(f: impl FnOnce()) -> usize {
    let ((), report) = nosync::count_syncs(|| {
        nosync::with_mode(nosync::Mode::Log, || {
            let _hot = nosync::forbid();
            f();
        })
    });
    report.forbidden()
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::var_os("NOSYNC_STAND_IN").unwrap());
    let hook = nosync::hook::install().expect("install");
    // SAFETY: the stand-in's libraries and functions, with their C signatures.
    unsafe {
        let driver = libloading::Library::new(dir.join("libcuda.so.1")).unwrap();
        let init: unsafe extern "C" fn(u32) -> i32 = *driver.get(b"cuInit").unwrap();
        assert_eq!(init(0), 0);
        let app = libloading::Library::new(dir.join("libcallers_late.so")).unwrap();
        let slot: unsafe extern "C" fn(*const u64) -> i32 =
            *app.get(b"call_cuStreamSynchronize").unwrap();
        let looked_up: unsafe extern "C" fn(*mut c_void) -> i32 =
            *driver.get(b"cuStreamSynchronize").unwrap();
        let args = [0u64; 12];
        let through_slot = forbidden(|| assert_eq!(slot(args.as_ptr()), 0));
        let through_dlsym = forbidden(|| assert_eq!(looked_up(std::ptr::null_mut()), 0));
        println!("reported {through_slot} {through_dlsym}");
    }
    drop(hook);
}
"#;

/// Where the program is built: `non-pie` in the workspace's target directory.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("non-pie"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/non-pie"),
    }
}

fn host() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let out = Command::new(rustc).arg("-vV").output().expect("rustc -vV");
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// Builds the program; its path.
fn build_program() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let krate = Path::new(env!("CARGO_TARGET_TMPDIR")).join("non-pie-child");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let manifest = MANIFEST.replace("RUNTIME", &root.display().to_string());
    std::fs::write(krate.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(krate.join("src/main.rs"), MAIN).unwrap();
    if !krate.join("Cargo.lock").exists() {
        std::fs::copy(root.join("../Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    }
    let host = host();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["build", "--offline", "--quiet", "--target", &host])
        .arg("--manifest-path")
        .arg(krate.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir())
        // With `--target`, the flags reach the program's crates, not build scripts or macros.
        .env("RUSTFLAGS", "-C relocation-model=static")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build of the non-PIE program:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir().join(host).join("debug/non-pie-child")
}

#[test]
fn a_non_pie_program_with_the_interposer_sees_its_calls_without_recursing() {
    let program = build_program();
    let header = std::fs::read(&program).unwrap();
    let e_type = u16::from_le_bytes([header[16], header[17]]);
    assert_eq!(
        e_type, 2,
        "the program is ET_EXEC (not position-independent)"
    );
    let dir = stand_in::dir_for("non_pie");
    stand_in::build(&dir);
    let out = Command::new(&program)
        .env("LD_LIBRARY_PATH", &dir)
        .env("NOSYNC_STAND_IN", &dir)
        .env_remove("NOSYNC_HOOK")
        .env_remove("NOSYNC_REPORT")
        .env_remove("NOSYNC_MODE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail = &stderr[stderr.len().saturating_sub(3000)..];
    assert!(
        out.status.success() && stdout.contains("reported 1 1"),
        "the non-PIE program ({}):\n{stdout}\n{tail}",
        out.status
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
