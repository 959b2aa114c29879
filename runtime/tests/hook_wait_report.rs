//! `NOSYNC_REPORT=json:PATH` end to end without a GPU: a child process with the stand-in driver
//! on `LD_LIBRARY_PATH` installs the hook (the interposer), waits in planted places (a
//! `#[no_sync]` fn, a `forbid` block, one stack both inside a scope and outside, and outside any
//! scope) through cudarc, and exits; the report it wrote at exit is read here as JSON and each
//! planted site is found with its count, scope and frames.
#![cfg(target_os = "linux")]

mod stand_in;

use serde_json::Value;

/// One wait through cudarc's dynamically loaded `cuStreamSynchronize` (the stand-in accepts a
/// null stream).
fn sync() {
    // SAFETY: the stand-in's `cuStreamSynchronize`, which accepts a null stream.
    let _ = unsafe { cudarc::driver::sys::cuStreamSynchronize(std::ptr::null_mut()) };
}

/// The line of the waits of each planted fn.
const STEP_LINE: u32 = line!() + 5;

#[nosync::no_sync]
fn planted_step() -> Result<(), nosync::SyncViolation> {
    for _ in 0..3 {
        sync();
    }
    Ok(())
}

const BLOCK_LINE: u32 = line!() + 3;
fn planted_block() {
    let _hot = nosync::forbid();
    sync();
}

const EITHER_LINE: u32 = line!() + 3;
fn planted_either(hot: bool) {
    let _hot = if hot { Some(nosync::forbid()) } else { None };
    sync();
}

const OUTSIDE_LINE: u32 = line!() + 2;
fn planted_outside() {
    sync();
}

#[test]
fn the_report_names_every_planted_wait() {
    let name = "child_waits_in_planted_places";
    let dir = stand_in::dir_for(name);
    stand_in::build(&dir);
    let path = dir.join("waits.json");
    let setting = format!("json:{}", path.display());
    stand_in::run_child(
        name,
        &dir,
        &[("NOSYNC_REPORT", &setting), ("NOSYNC_MODE", "log")],
    );
    let text = std::fs::read_to_string(&path).expect("the child wrote the report");
    std::fs::remove_dir_all(&dir).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    check_header(&report);
    let sites = report["sites"].as_array().expect("sites");
    let ours: Vec<&Value> = sites
        .iter()
        .filter(|s| first_frame(s).starts_with("hook_wait_report::"))
        .collect();
    let mut found: Vec<(String, u32, bool, u64)> = ours
        .iter()
        .map(|s| {
            let frame = &s["frames"][1];
            (
                frame["function"].as_str().unwrap().to_owned(),
                u32::try_from(frame["line"].as_u64().unwrap()).unwrap(),
                s["in_scope"].as_bool().unwrap(),
                s["count"].as_u64().unwrap(),
            )
        })
        .collect();
    found.sort();
    let f = |name: &str| format!("hook_wait_report::{name}");
    assert_eq!(
        found,
        [
            (f("planted_block"), BLOCK_LINE, true, 1),
            (f("planted_either"), EITHER_LINE, false, 2),
            (f("planted_either"), EITHER_LINE, true, 1),
            (f("planted_outside"), OUTSIDE_LINE, false, 1),
            (f("planted_step"), STEP_LINE, true, 3),
        ],
        "{text}"
    );
    for site in &ours {
        check_site(site, &text);
    }
}

/// The report's fields outside its sites.
fn check_header(report: &Value) {
    assert_eq!(report["format"], "nosync-wait-report");
    assert_eq!(report["version"], 1);
    assert_eq!(report["line_tables"], true, "a test build has line tables");
    assert_eq!(report["program"]["backend"], "interpose");
    assert!(report["program"]["pid"].as_u64().is_some_and(|p| p > 0));
    let exe = report["program"]["exe"].as_str().unwrap();
    assert!(exe.contains("hook_wait_report"), "{exe}");
}

/// One planted site: its api, frames (the shared `sync` first, then the planted fn, in this
/// file), times and scope.
fn check_site(site: &Value, text: &str) {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hook_wait_report.rs");
    assert_eq!(site["api"], "cuStreamSynchronize", "{text}");
    assert!(site["why"].as_str().is_some_and(|w| !w.is_empty()));
    assert_eq!(site["frames"][0]["file"], file, "{text}");
    assert_eq!(site["frames"][1]["file"], file, "{text}");
    let (total, max) = (site["total_ns"].as_u64(), site["max_ns"].as_u64());
    assert!(total.is_some() && max.is_some() && max <= total, "{text}");
    let planted = site["frames"][1]["function"].as_str().unwrap();
    let scope = &site["scope"];
    match (site["in_scope"].as_bool().unwrap(), planted) {
        (false, _) => assert_eq!(*scope, Value::Null),
        (true, "hook_wait_report::planted_step") => {
            assert_eq!(scope["kind"], "no_sync", "{text}");
            assert_eq!(scope["function"], planted, "{text}");
            // Where the attribute is.
            assert_eq!(scope["file"], "runtime/tests/hook_wait_report.rs");
            assert_eq!(scope["line"], STEP_LINE - 3, "{text}");
        }
        (true, _) => {
            let line = if planted.ends_with("planted_block") {
                BLOCK_LINE - 1
            } else {
                EITHER_LINE - 1
            };
            assert_eq!(scope["kind"], "forbid", "{text}");
            assert_eq!(scope["function"], Value::Null, "{text}");
            assert_eq!(scope["file"], "runtime/tests/hook_wait_report.rs");
            assert_eq!(scope["line"], line, "{text}");
        }
    }
}

fn first_frame(site: &Value) -> &str {
    site["frames"][0]["function"].as_str().unwrap_or_default()
}

#[test]
#[ignore = "run in a child process with the stand-in driver on LD_LIBRARY_PATH by `the_report_names_every_planted_wait`"]
fn child_waits_in_planted_places() {
    let (_hook, _driver) = stand_in::libs::install();
    planted_step().expect("mode log: the violation is logged");
    planted_block();
    // One line, so one stack: a site that waited inside a scope and outside.
    for hot in [true, false, false] {
        planted_either(hot);
    }
    planted_outside();
    let seen = nosync::hook::waits();
    assert_eq!(seen.iter().map(|s| s.count()).sum::<usize>(), 8, "{seen:?}");
}
