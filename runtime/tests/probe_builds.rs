//! nosync builds beside every CUDA stack a user has: `cargo check --locked` of each crate of
//! `runtime/probes/builds`, one at a time (features unify only across the packages checked
//! together), without a GPU or nvcc. Each crate is nosync in one form a user writes beside cudarc
//! configured as candle, cubecl, burn or an application configures it; `CUDARC_CUDA_VERSION`
//! stands in for the toolkit where the stack asks cudarc to take the version from it.
//!
//! The probes share one target directory: `NOSYNC_PROBE_TARGET_DIR`, else `probe-builds` in
//! `CARGO_TARGET_DIR`, else `target/probe-builds` in the repository. Their lock file holds
//! nosync's own dependencies too: after those change, `NOSYNC_UPDATE_LOCKS=1` refreshes it (the
//! check then runs without `--locked`), as for the lint's fixtures.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The stacks, by the prefix of their probes' names, with the toolkit version their cudarc is
/// given (`None`: the stack names a version itself).
const STACKS: [(&str, Option<&str>); 7] = [
    // candle-core 0.9/0.11: `cuda-version-from-build-system` without a fallback (nvcc).
    ("candle-", Some("13000")),
    // cubecl-cuda 0.9 and 0.10 (burn-cuda 0.21): the same, with `fallback-latest`.
    ("cubecl09-", Some("13000")),
    ("cubecl10-", Some("13000")),
    ("raw-default-", None),
    ("raw-loading-", None),
    // `static-linking` is left out: `cargo check` of cudarc itself needs the toolkit's static
    // libraries (rustc looks for `+whole-archive` libraries when it builds the rlib).
    ("raw-linking-", None),
    ("alone-", None),
];

/// The forms of the nosync dependency every stack is checked with.
const FORMS: [&str; 3] = ["default", "cupti", "bare"];

fn probes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("probes/builds")
}

fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("NOSYNC_PROBE_TARGET_DIR") {
        return dir.into();
    }
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("probe-builds"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/probe-builds"),
    }
}

/// Every probe crate (a directory with a `Cargo.toml`), by name.
fn probes() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(probes_dir())
        .expect("runtime/probes/builds exists")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `NOSYNC_UPDATE_LOCKS=1` (any value but `0` or empty).
fn update_locks() -> bool {
    std::env::var_os("NOSYNC_UPDATE_LOCKS").is_some_and(|v| !v.is_empty() && v != "0")
}

fn stack_of(probe: &str) -> Option<(&'static str, Option<&'static str>)> {
    STACKS.iter().copied().find(|(p, _)| probe.starts_with(p))
}

/// `cargo check --locked` of one probe; `Err` with the end of cargo's output.
fn check(probe: &str, toolkit: Option<&str>) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(probes_dir())
        .args(["check", "--quiet", "-p"])
        .arg(format!("probe-{probe}"))
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    if !update_locks() {
        cmd.arg("--locked");
    }
    match toolkit {
        Some(v) => cmd.env("CUDARC_CUDA_VERSION", v),
        None => cmd.env_remove("CUDARC_CUDA_VERSION"),
    };
    let out = cmd
        .output()
        .map_err(|e| format!("cargo did not run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(25).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(tail.join("\n"))
}

#[test]
fn every_probe_belongs_to_a_stack_and_every_stack_has_every_form() {
    let probes = probes();
    let strays: Vec<&String> = probes.iter().filter(|p| stack_of(p).is_none()).collect();
    assert!(strays.is_empty(), "probes of no known stack: {strays:?}");
    for (stack, _) in STACKS.iter().filter(|(s, _)| *s != "alone-") {
        for form in FORMS {
            let name = format!("{stack}{form}");
            assert!(probes.contains(&name), "no probe {name}");
        }
    }
}

#[test]
fn nosync_builds_beside_every_cuda_stack() {
    let mut failures = Vec::new();
    for probe in probes() {
        let Some((_, toolkit)) = stack_of(&probe) else {
            continue; // reported by the test above
        };
        let started = std::time::Instant::now();
        let result = check(&probe, toolkit);
        println!("{probe}: {:?} in {:.1?}", result.is_ok(), started.elapsed());
        if let Err(why) = result {
            failures.push(format!("probe-{probe}:\n{why}"));
        }
    }
    assert!(
        failures.is_empty(),
        "`cargo check --locked` failed in runtime/probes/builds for the crates below (after a change \
         of nosync's dependencies, refresh the lock with NOSYNC_UPDATE_LOCKS=1):\n\n{}",
        failures.join("\n\n")
    );
}
