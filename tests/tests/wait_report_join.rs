//! The two halves end to end, without a GPU: a small program on cudarc with two planted waits in
//! a `#[no_sync]` fn (one through cudarc, which the lint models; one through the program's own
//! FFI declaration of the driver, which it cannot resolve) is built against the current `nosync`
//! and run on a stand-in driver (a C library built with the system's C compiler) with
//! `NOSYNC_REPORT=json:PATH`. The report the hook writes is joined with the lint's analysis of
//! the same sources: the cudarc wait is a confirmed finding, the FFI wait a `missed-wait` whose
//! advice, applied, makes it a confirmed finding too. The three outputs of the join are insta
//! snapshots (`tests/tests/snapshots/`), times and paths replaced; the stand-in `cuCtxSynchronize`
//! takes 2 ms, so that the order by time waited is the same in every run. A changed output is
//! blessed with `INSTA_UPDATE=always cargo test -p nosync-tests --test wait_report_join`.
//!
//! The program is built in the fixtures' target directory (as `fixtures_check.rs` does), from a
//! copy of the workspace's lock file, so that its dependencies are the versions nosync is tested with.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::Command;

use nosync_tests::fixture::repo_root;
use nosync_tests::golden;
use nosync_tests::run::lint;

const DRIVER_C: &str = r#"
#include <dlfcn.h>
#include <unistd.h>
static int initialized;
int cuInit(unsigned f) { (void)f; initialized = 1; return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = "CUDA_ERROR_STAND_IN"; return 0; }
int cuPointerGetAttribute(void *d, unsigned a, unsigned long long p) { (void)d; (void)a; (void)p; return 1; }
int cuCtxGetCurrent(void **c) { *c = 0; return initialized ? 0 : 3; }
int cuStreamSynchronize(void *s) { (void)s; return 0; }
int cuCtxSynchronize(void) { usleep(2000); return 0; }
int cuGetProcAddress_v2(const char *name, void **pfn, int v, unsigned long long f, void *st) {
  (void)v; (void)f; (void)st;
  *pfn = dlsym(RTLD_DEFAULT, name);
  return *pfn ? 0 : 500;
}
"#;

const MAIN_RS: &str = r#"//! Two planted waits in a `#[no_sync]` step, five steps.

mod driver;

fn loss_value() {
    // SAFETY: the stand-in driver accepts a null stream.
    let _ = unsafe { cudarc::driver::sys::cuStreamSynchronize(std::ptr::null_mut()) };
}

#[nosync::no_sync]
fn step() -> Result<(), nosync::SyncViolation> {
    loss_value();
    driver::wait_idle();
    Ok(())
}

fn main() {
    let _hook = nosync::hook::install().expect("install");
    nosync::set_mode(nosync::Mode::Log);
    for _ in 0..5 {
        let _ = step();
    }
}
"#;

const DRIVER_RS: &str = r#"#[link(name = "cuda")]
unsafe extern "C" {
    fn cuCtxSynchronize() -> i32;
}

/// Waits until the device is idle; the lint cannot resolve the FFI call.
pub fn wait_idle() -> i32 {
    // SAFETY: the driver's entry point takes no argument.
    unsafe { cuCtxSynchronize() }
}
"#;

const BUILD_RS: &str = r#"fn main() {
    let dir = std::env::var("WAIT_REPORT_STAND_IN").expect("the stand-in driver's directory");
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rerun-if-env-changed=WAIT_REPORT_STAND_IN");
}
"#;

fn manifest(runtime: &Path) -> String {
    format!(
        r#"[package]
name = "wait-report-app"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
nosync = {{ path = "{}", features = ["hook", "cuda-13000"] }}
cudarc = {{ version = "0.19", default-features = false, features = ["std", "driver", "cuda-13000", "fallback-dynamic-loading"] }}

[workspace]
"#,
        runtime.display()
    )
}

/// Writes the program and the stand-in driver under `dir`; returns the program's directory.
fn write_program(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    let (app, driver) = (dir.join("app"), dir.join("driver"));
    std::fs::create_dir_all(app.join("src")).unwrap();
    std::fs::create_dir_all(&driver).unwrap();
    let files = [
        ("Cargo.toml", manifest(&repo_root().join("runtime"))),
        ("build.rs", BUILD_RS.to_owned()),
        ("src/main.rs", MAIN_RS.to_owned()),
        ("src/driver.rs", DRIVER_RS.to_owned()),
    ];
    for (name, text) in files {
        std::fs::write(app.join(name), text).unwrap();
    }
    // The workspace's lock: cudarc and the rest at the versions nosync is tested with.
    std::fs::copy(repo_root().join("Cargo.lock"), app.join("Cargo.lock")).unwrap();
    std::fs::write(driver.join("driver.c"), DRIVER_C).unwrap();
    let cc = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(driver.join("libcuda.so.1"))
        .arg(driver.join("driver.c"))
        .args(["-Wl,-soname,libcuda.so.1", "-ldl"])
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    std::os::unix::fs::symlink("libcuda.so.1", driver.join("libcuda.so")).unwrap();
    app
}

/// Builds the program (in the fixtures' target directory) and returns its binary.
fn build(app: &Path, driver: &Path) -> PathBuf {
    let target = std::env::var_os("NOSYNC_FIXTURE_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target").join("fixtures"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(app.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env("WAIT_REPORT_STAND_IN", driver)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug").join("wait-report-app")
}

/// Runs the program on the stand-in driver; returns the report's path.
fn run(binary: &Path, app: &Path, driver: &Path) -> PathBuf {
    let report = app.join("waits.json");
    let out = Command::new(binary)
        .current_dir(app)
        .env("LD_LIBRARY_PATH", driver)
        .env("NOSYNC_REPORT", format!("json:{}", report.display()))
        .env_remove("NOSYNC_HOOK")
        .env_remove("NOSYNC_MODE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("nosync: wait report of 2 sync sites written to"),
        "{stderr}"
    );
    report
}

/// The lint's human output on the program joined with `report`, and its exit code.
fn join(app: &Path, report: &Path, extra: &[&str]) -> (i32, String) {
    let mut args: Vec<String> = [
        "cargo-nosync-lint",
        "--manifest-path",
        &app.join("Cargo.toml").display().to_string(),
        "--color",
        "never",
        "--runtime-report",
        &report.display().to_string(),
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let (exit, out, err) = lint(&args, |_| false);
    (exit, format!("{out}{err}"))
}

/// Each diagnostic's first line with what the run observed (its count: times vary), sorted
/// (confirmed findings are ordered by time waited, which varies from run to run).
fn verdicts(text: &str) -> Vec<(&str, &str)> {
    let mut found: Vec<(&str, &str)> = Vec::new();
    for line in text.lines() {
        if line.starts_with("error[") || line.starts_with("warning[") {
            found.push((line, ""));
        } else if let (Some(observed), Some(last)) = (line.find("observed: "), found.last_mut()) {
            last.1 = line[observed..].split(", ").next().unwrap_or_default();
        }
    }
    found.sort_unstable();
    found
}

/// Compares one output of the join with its snapshot: paths, times and the codes' documentation
/// replaced (they change from machine to machine, run to run, or with the docs).
fn snapshot(name: &str, text: &str, app: &Path) {
    // The program's directory first: it is under the target directory, wherever that is.
    let text = text.replace(&app.display().to_string(), "$APP");
    let text = golden::normalise(&text, &golden::placeholders(&repo_root()), false);
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    for (time, to) in [
        (r"\d+(\.\d+)? (ms|µs|ns|s)\b", "[time]"),
        (r#""(total_ns|max_ns)":(\s*)\d+"#, r#""$1":$2"[ns]""#),
        (r#""rank":(\s*)\d+(\.\d+)?"#, r#""rank":$1"[rank]""#),
        // The code's documentation, which `--explain` prints: not the join's.
        (
            r#""explanation":"(?:[^"\\]|\\.)*""#,
            r#""explanation":"[docs]""#,
        ),
        (
            r#"("(?:fullDescription|help)": \{\s*"(?:text|markdown)": )"(?:[^"\\]|\\.)*""#,
            r#"$1"[docs]""#,
        ),
        (r#"("markdown": )"(?:[^"\\]|\\.)*""#, r#"$1"[docs]""#),
        (r"\b\d+(\.\d+)? ?%", "[share]"),
    ] {
        settings.add_filter(time, to);
    }
    settings.bind(|| insta::assert_snapshot!(name, text));
}

#[test]
fn the_hooks_report_joins_the_lints_findings_and_its_advice_closes_the_gap() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wait-report-join");
    let app = write_program(&dir);
    let driver = dir.join("driver");
    let binary = build(&app, &driver);
    let report = run(&binary, &app, &driver);

    let (exit, text) = join(&app, &report, &[]);
    assert_eq!(exit, 1, "{text}");
    assert_eq!(
        verdicts(&text),
        [
            (
                "error[sync-in-no-sync]: `step` is #[no_sync] but reaches a host-blocking call: `sys::cuStreamSynchronize`",
                "observed: 5 waits"
            ),
            (
                "warning[missed-wait]: `step` is #[no_sync] and waited in `cuCtxSynchronize` (an explicit synchronization: waits for the device), which no finding explains",
                "observed: 5 waits"
            ),
        ],
        "{text}"
    );
    let advice = "sinks = [\"wait_report_app::driver::wait_idle\"]";
    assert!(
        text.contains("an unresolved call (cannot resolve `cuCtxSynchronize`)"),
        "{text}"
    );
    assert!(text.contains(&format!("`{advice}`")), "{text}");
    snapshot("join-human", &text, &app);
    for format in ["json", "sarif"] {
        let (exit, text) = join(&app, &report, &["--format", format]);
        assert_eq!(exit, 1, "{text}");
        snapshot(&format!("join-{format}"), &text, &app);
    }

    let config = dir.join("sinks.toml");
    std::fs::write(&config, format!("{advice}\n")).unwrap();
    let (exit, text) = join(&app, &report, &["--config", &config.display().to_string()]);
    assert_eq!(exit, 1, "{text}");
    assert_eq!(
        verdicts(&text),
        [
            (
                "error[sync-in-no-sync]: `step` is #[no_sync] but reaches a host-blocking call: `sys::cuStreamSynchronize`",
                "observed: 5 waits"
            ),
            (
                "error[sync-in-no-sync]: `step` is #[no_sync] but reaches a host-blocking call: `wait_idle`",
                "observed: 5 waits"
            ),
        ],
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
