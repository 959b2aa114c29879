//! `cargo check` every fixture, so that each attribute spelling and every case stays valid
//! Rust against the current `nosync` crate; `cargo metadata --locked` for the fixtures that
//! cannot be built here but must resolve (`fixture::RESOLVE_ONLY`: candle with CUDA).
//!
//! All fixtures share one target directory (`NOSYNC_FIXTURE_TARGET_DIR`, else
//! `$CARGO_TARGET_DIR/fixtures`, else `<repo>/target/fixtures`) and are checked one after the other, so `nosync` and
//! `cudarc` are compiled once. Fixture lock files are committed and used with `--locked`;
//! `NOSYNC_UPDATE_LOCKS=1` refreshes them instead (after `nosync`'s own dependencies change).

use std::path::PathBuf;
use std::process::Command;

use nosync_tests::fixture::{self, Fixture};

fn target_dir() -> PathBuf {
    let set = |var: &str| {
        std::env::var_os(var)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    };
    set("NOSYNC_FIXTURE_TARGET_DIR")
        .or_else(|| set("CARGO_TARGET_DIR").map(|d| d.join("fixtures")))
        .unwrap_or_else(|| fixture::repo_root().join("target").join("fixtures"))
}

/// Runs `cargo check` on one fixture (`cargo metadata` on those that resolve only); `Err`
/// carries cargo's stderr.
fn check(fixture: &Fixture, update_locks: bool) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    if fixture.resolve_only() {
        command.args(["metadata", "--format-version", "1", "--manifest-path"]);
    } else {
        command.args(["check", "--workspace", "--quiet", "--manifest-path"]);
    }
    command
        .arg(fixture.manifest())
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdout(std::process::Stdio::null());
    if !update_locks {
        command.arg("--locked");
    }
    let output = command
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let hint = if stderr.contains("--locked") {
        "\n  the fixture's Cargo.lock is out of date (did nosync's dependencies change?); \
         refresh every fixture lock with `NOSYNC_UPDATE_LOCKS=1 cargo test -p nosync-tests --test fixtures_check`"
    } else {
        ""
    };
    Err(format!("{}{hint}", stderr.trim_end()))
}

#[test]
fn every_fixture_passes_cargo_check() {
    let fixtures = fixture::selected_with_own_tests().unwrap_or_else(|e| panic!("{e}"));
    let update_locks = nosync_tests::updating_locks();
    let (mut checked, mut failures) = (0, Vec::new());
    for fixture in &fixtures {
        if let Some(reason) = fixture.not_checkable().filter(|_| !fixture.resolve_only()) {
            eprintln!("skipped fixtures/{}: {reason}", fixture.name);
            continue;
        }
        match check(fixture, update_locks) {
            Ok(()) => checked += 1,
            Err(stderr) => failures.push(format!("fixtures/{}:\n{stderr}", fixture.name)),
        }
    }
    eprintln!(
        "cargo check: {checked} fixtures passed, {} failed, {} skipped (target dir {})",
        failures.len(),
        fixtures.len() - checked - failures.len(),
        target_dir().display()
    );
    assert!(
        failures.is_empty(),
        "cargo check failed:\n\n{}",
        failures.join("\n\n")
    );
    let all_skipped = fixtures.iter().all(|f| f.not_checkable().is_some());
    assert!(checked > 0 || all_skipped, "no fixture was checked");
}
