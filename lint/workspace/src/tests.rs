//! The offline fallback's resolution, on small workspaces written to a temp dir: cargo's
//! feature rules, and where dependencies are found on disk.

use super::cargo::cargo_error;
use super::offline::{self, FeatureRequest};
use super::*;
use cargo_metadata::MetadataCommand;
use std::fs;

const APP: &str = r#"[package]
name = "app"
version = "0.1.0"
edition = "2021"

[workspace]

[features]
default = ["std"]
std = []
cuda = ["dep:cudarc", "gpu-lib/cuda"]
extra = ["helper?/fast"]

[dependencies]
gpu-lib = { path = "../gpu-lib" }
helper = { version = "1.0", optional = true }
cudarc = { version = "0.19", optional = true }
"#;

const GPU_LIB: &str = r#"[package]
name = "gpu-lib"
version = "0.2.0"

[lib]
name = "gpu"

[features]
cuda = ["dep:cudarc"]

[dependencies]
cudarc = { version = "0.19", optional = true }
"#;

const HELPER: &str = "[package]\nname = \"helper\"\nversion = \"VERSION\"\n[features]\nfast = []\n";

/// A workspace `app` (path dependency `gpu-lib`) and a cargo home whose registry has
/// `helper` 1.0.0 and 1.2.0; `lock` is written as `app/Cargo.lock` when given.
fn setup(name: &str, lock: Option<&str>) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("nosync-offline-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let write = |p: &str, text: &str| {
        let p = dir.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    write("app/Cargo.toml", APP);
    write("app/src/lib.rs", "");
    write("gpu-lib/Cargo.toml", GPU_LIB);
    write("gpu-lib/src/lib.rs", "");
    for v in ["1.0.0", "1.2.0"] {
        write(
            &format!("home/registry/src/index/helper-{v}/Cargo.toml"),
            &HELPER.replace("VERSION", v),
        );
        write(
            &format!("home/registry/src/index/helper-{v}/src/lib.rs"),
            "",
        );
    }
    if let Some(lock) = lock {
        write("app/Cargo.lock", lock);
    }
    (dir.join("app"), dir.join("home"))
}

/// A fresh temporary directory for `name`, and a writer of files below it.
fn scratch(name: &str) -> (PathBuf, impl Fn(&str, &str)) {
    let dir = std::env::temp_dir().join(format!("nosync-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let root = dir.clone();
    let write = move |p: &str, text: &str| {
        let p = root.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    (dir, write)
}

/// Resolves `app` offline with `req`: each package's enabled features and extern names,
/// one line each (`name: features | deps`), and the report.
fn resolve(name: &str, req: FeatureRequest, lock: Option<&str>) -> (Vec<String>, offline::Account) {
    let (app, home) = setup(name, lock);
    let m = MetadataCommand::new()
        .manifest_path(app.join("Cargo.toml"))
        .no_deps()
        .exec()
        .unwrap();
    let disk = disk::Disk::scan(&app, home.clone(), manifest::read_patches(&app));
    let (m, report) = offline::resolve(m, &req, &disk).unwrap();
    let resolve = m.resolve.unwrap();
    let mut lines: Vec<String> = resolve
        .nodes
        .iter()
        .map(|n| {
            let pkg = m.packages.iter().find(|p| p.id == n.id).unwrap();
            let deps: Vec<&str> = n.deps.iter().map(|d| d.name.as_str()).collect();
            let features: Vec<String> = n.features.iter().map(|f| f.to_string()).collect();
            format!(
                "{} {}: {} | {}",
                pkg.name,
                pkg.version,
                features.join(","),
                deps.join(",")
            )
        })
        .collect();
    lines.sort();
    let _ = fs::remove_dir_all(app.parent().unwrap());
    (lines, report)
}

fn req(features: &[&str], all: bool, no_default: bool) -> FeatureRequest {
    FeatureRequest {
        features: features.iter().map(|f| f.to_string()).collect(),
        all_features: all,
        no_default_features: no_default,
    }
}

#[test]
fn the_defaults_apply_and_optional_dependencies_stay_off() {
    let (lines, report) = resolve("defaults", req(&[], false, false), None);
    assert_eq!(
        lines,
        ["app 0.1.0: default,std | gpu", "gpu-lib 0.2.0:  | "]
    );
    assert_eq!(report.found.iter().collect::<Vec<_>>(), ["gpu-lib 0.2.0"]);
    assert!(report.missing.is_empty());
}

#[test]
fn a_feature_enables_dep_colon_and_a_dependency_s_feature() {
    let (lines, _) = resolve("cuda", req(&["cuda"], false, false), None);
    assert_eq!(
        lines,
        [
            "app 0.1.0: cuda,default,std | cudarc,gpu",
            "cudarc 0.0.0:  | ",
            "gpu-lib 0.2.0: cuda | cudarc",
        ]
    );
}

#[test]
fn all_features_enable_every_optional_dependency_and_weak_features_follow() {
    let (lines, report) = resolve("all", req(&[], true, false), None);
    assert_eq!(
        lines,
        [
            // `helper` is the implicit feature of the optional dependency (cudarc has
            // none: `dep:cudarc` is written).
            "app 0.1.0: cuda,default,extra,helper,std | cudarc,gpu,helper",
            "cudarc 0.0.0:  | ",
            "gpu-lib 0.2.0: cuda | cudarc",
            // The highest version on disk that satisfies `1.0`; `helper?/fast` applies.
            "helper 1.2.0: fast | ",
        ]
    );
    // cudarc is the built-in table, never looked for on disk.
    assert!(report.missing.is_empty(), "{report:?}");
}

/// As `cargo metadata` (cargo 1.9x) prints it: its resolve graph comes from the dependency
/// resolver, which reads `x?/feat` as `x/feat` (rust-lang/cargo#10801, #15784), so the
/// dependency is in the graph with `feat`, though the package's features do not name
/// it (checked with cargo on a path dependency: `app: ["extra"] | ["helper"]`, `helper:
/// ["fast"]`).
#[test]
fn a_weak_feature_puts_its_dependency_in_the_graph_as_cargo_metadata_does() {
    let (lines, _) = resolve("weak", req(&["extra"], false, true), None);
    assert_eq!(
        lines,
        [
            "app 0.1.0: extra | gpu,helper",
            "gpu-lib 0.2.0:  | ",
            "helper 1.2.0: fast | "
        ]
    );
}

#[test]
fn the_lock_file_picks_the_version() {
    let lock = "version = 4\n[[package]]\nname = \"helper\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
    let (lines, _) = resolve("lock", req(&["helper"], false, false), Some(lock));
    assert!(lines.contains(&"helper 1.0.0:  | ".to_owned()), "{lines:?}");
}

/// Two locked versions of one package, both matching the requirement: a package gets the
/// one its own lock entry lists (cargo's choice for it), not the newest.
#[test]
fn each_package_gets_the_version_its_lock_entry_lists() {
    let registry = "source = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
    let lock = format!(
        "version = 4\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n\
         dependencies = [\"helper 1.0.0\"]\n\
         [[package]]\nname = \"helper\"\nversion = \"1.0.0\"\n{registry}\
         [[package]]\nname = \"helper\"\nversion = \"1.2.0\"\n{registry}"
    );
    let (lines, _) = resolve("two-locked", req(&["helper"], false, false), Some(&lock));
    assert!(lines.contains(&"helper 1.0.0:  | ".to_owned()), "{lines:?}");
}

/// A lock file cargo cannot read (a merge conflict) is not read at all: each version comes
/// from the registry (the newest that matches), and a warning at the conflict says so.
#[test]
fn an_unreadable_lock_file_is_a_located_warning_and_the_registry_decides() {
    let lock = "version = 4\n\n[[package]]\nname = \"helper\"\n<<<<<<< HEAD\nversion = \"1.0.0\"\n\
                =======\nversion = \"1.1.0\"\n>>>>>>> other\n\
                source = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
    let (lines, report) = resolve("conflict", req(&["helper"], false, false), Some(lock));
    assert!(lines.contains(&"helper 1.2.0:  | ".to_owned()), "{lines:?}");
    let warning = lock_warning(
        report
            .lock_unread
            .as_ref()
            .expect("the lock file is unread"),
    );
    assert_eq!(
        serde_json::to_value(&warning).unwrap(),
        serde_json::json!({
            "code": "WorkspaceFallback",
            "level": "warn",
            "message": "`Cargo.lock` could not be read; dependency versions come from the local registry instead",
            "primary": {
                "file": "Cargo.lock",
                "byte_start": 49, "byte_end": 49,
                "line_start": 5, "column_start": 9, "line_end": 5, "column_end": 9
            },
            "label": "key with no value, expected `=`",
            "notes": [
                {
                    "message": "each dependency is the newest version on disk that its requirement accepts; \
                                the rest of the workspace is analysed",
                    "span": null
                },
                {
                    "message": "help: resolve the lock file's conflict, or delete it for cargo to write it again",
                    "span": null
                }
            ],
            "finding": null,
            "origin": null
        })
    );
}

#[test]
fn an_unknown_feature_is_an_error_as_in_cargo() {
    let (app, home) = setup("unknown", None);
    let m = MetadataCommand::new()
        .manifest_path(app.join("Cargo.toml"))
        .no_deps()
        .exec()
        .unwrap();
    let disk = disk::Disk::scan(&app, home, manifest::read_patches(&app));
    let err =
        offline::resolve(m, &req(&["nonexistent", "app/std"], false, false), &disk).unwrap_err();
    assert_eq!(
        err.to_string(),
        "none of the selected packages contains these features: nonexistent"
    );
    let _ = fs::remove_dir_all(app.parent().unwrap());
}

#[test]
fn cargo_s_error_line_is_quoted_not_its_progress() {
    let stderr = "    Updating crates.io index\nerror: failed to select a version for the requirement `wgpu = \"^0.18.0\"`\n  version 0.18.0 is yanked\nlocation searched: crates.io index\nrequired by package `x`\n";
    assert_eq!(
        cargo_error(stderr),
        "error: failed to select a version for the requirement `wgpu = \"^0.18.0\"`; version 0.18.0 is yanked; location searched: crates.io index"
    );
}

#[test]
fn cargo_s_status_lines_are_told_from_its_warnings() {
    assert!(is_status_line("    Updating crates.io index"));
    assert!(is_status_line(
        "    Blocking waiting for file lock on package cache"
    ));
    assert!(!is_status_line(
        "warning: spurious network error (3 tries remaining)"
    ));
    assert!(!is_status_line(
        "error: failed to get `gone` as a dependency"
    ));
    assert!(!is_status_line("  version 0.18.0 is yanked"));
}

#[test]
fn repositories_compare_by_host_owner_and_name() {
    let key = |u| select::repository_key(u);
    assert_eq!(
        key("https://github.com/tracel-ai/cubecl/tree/main/crates/cubecl-cuda").as_deref(),
        Some("github.com/tracel-ai/cubecl")
    );
    assert_eq!(
        key("https://www.GitHub.com/a/b.git").as_deref(),
        Some("github.com/a/b")
    );
    assert_eq!(key("https://example.com/x"), None);
}

/// A lock file that lacks a dependency makes `cargo metadata --frozen` fail; the lint then
/// asks cargo as the user would, which updates the lock file: the answer is cargo's online
/// one, not the fallback's.
#[test]
fn a_stale_lock_file_gets_cargo_s_online_answer() {
    let (dir, write) = scratch("stale-lock");
    write(
        "app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n[dependencies]\nlib-b = { path = \"../lib-b\" }\n",
    );
    write("app/src/lib.rs", "");
    write(
        "lib-b/Cargo.toml",
        "[package]\nname = \"lib-b\"\nversion = \"0.3.0\"\nedition = \"2021\"\n",
    );
    write("lib-b/src/lib.rs", "");
    // Written before `lib-b` was a dependency.
    let stale = "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n";
    write("app/Cargo.lock", stale);
    let opts = WorkspaceOptions {
        manifest_path: Some(dir.join("app/Cargo.toml")),
        ..WorkspaceOptions::default()
    };
    let frozen = metadata(&opts, Ask::Frozen, &mut |_| {});
    assert!(frozen.is_err(), "--frozen accepted a stale lock file");
    let (ws, diags) = load(&opts, &mut |_| {}).unwrap();
    let names: Vec<&str> = ws.crates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["app", "lib_b"]);
    assert!(diags.is_empty(), "{diags:?}");
    let lock = fs::read_to_string(dir.join("app/Cargo.lock")).unwrap();
    assert!(lock.contains("name = \"lib-b\""), "{lock}");
    // Now complete, the lock file is enough: `--frozen` answers as cargo online did.
    let offline = metadata(&opts, Ask::Frozen, &mut |_| {}).unwrap();
    let online = metadata(&opts, Ask::Online, &mut |_| {}).unwrap();
    assert_eq!(
        serde_json::to_value(&offline).unwrap(),
        serde_json::to_value(&online).unwrap()
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_patch_in_the_root_manifest_replaces_a_git_dependency() {
    let (dir, write) = scratch("offline-patch");
    write(
        "app/Cargo.toml",
        r#"[package]
name = "app"
version = "0.1.0"
edition = "2021"

[workspace]

[dependencies]
gpu = { git = "https://example.com/Org/gpu.git", rev = "0123abc", package = "gpu-core" }

[patch."https://example.com/org/gpu"]
gpu-core = { path = "../local/gpu-core" }
"#,
    );
    write("app/src/lib.rs", "");
    write(
        "local/gpu-core/Cargo.toml",
        "[package]\nname = \"gpu-core\"\nversion = \"0.3.0\"\n",
    );
    write("local/gpu-core/src/lib.rs", "");
    let app = dir.join("app");
    let m = MetadataCommand::new()
        .manifest_path(app.join("Cargo.toml"))
        .no_deps()
        .exec()
        .unwrap();
    let disk = disk::Disk::scan(&app, dir.join("home"), manifest::read_patches(&app));
    let (m, report) = offline::resolve(m, &req(&[], false, false), &disk).unwrap();
    let gpu = m.packages.iter().find(|p| p.name.as_str() == "gpu-core");
    let gpu = gpu.expect("the patched package is in the graph");
    let local = nosync_lint_core::paths::normalize(&dir.join("local/gpu-core"));
    assert_eq!(
        gpu.id.repr,
        format!("path+file://{}#0.3.0", local.display())
    );
    assert!(report.missing.is_empty(), "{:?}", report.missing);
    let _ = fs::remove_dir_all(&dir);
}

/// The crates (name: features) cargo selects and the fallback selects for the workspace
/// of `files` (path dependencies only: cargo needs no network, and writes the lock file).
fn cargo_and_fallback(name: &str, files: &[(&str, String)]) -> (Vec<String>, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("nosync-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for (p, text) in files {
        let p = dir.join(p);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    let opts = WorkspaceOptions {
        manifest_path: Some(dir.join("app/Cargo.toml")),
        ..WorkspaceOptions::default()
    };
    let shown = |s: Selected| -> Vec<String> {
        let crates = s.crates.iter().map(|c| {
            let mut f: Vec<&str> = c.features.iter().map(String::as_str).collect();
            f.sort();
            format!("{}: {}", c.name, f.join(","))
        });
        crates.collect()
    };
    let cargo = metadata(&opts, Ask::Online, &mut |_| {}).unwrap();
    let (offline, _) = fallback(&opts, &CargoFailed(String::new()), &mut |_| {}).unwrap();
    let _ = fs::remove_dir_all(&dir);
    (
        shown(select(cargo, &opts, None)),
        shown(select(offline, &opts, None)),
    )
}

fn package(name: &str) -> String {
    format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
}

/// Cargo's answer (`cargo metadata --filter-platform <host>`): the features a dependency
/// of another platform's `[target.X]` table asks for are on (its dependency resolver
/// unifies every platform's), but a package only that table names is not in the graph.
/// The fallback selects the same.
#[test]
fn another_platform_s_dependencies_add_features_but_no_packages() {
    let app = package("app")
        + "[workspace]\n[dependencies]\nlib-b = { path = \"../lib-b\" }\n\
           [target.'cfg(any())'.dependencies]\nlib-b = { path = \"../lib-b\", features = [\"x\"] }\n\
           lib-c = { path = \"../lib-c\" }\n";
    let files = [
        ("app/Cargo.toml", app),
        (
            "lib-b/Cargo.toml",
            package("lib-b") + "[features]\nx = []\n",
        ),
        ("lib-c/Cargo.toml", package("lib-c")),
        ("app/src/lib.rs", String::new()),
        ("lib-b/src/lib.rs", String::new()),
        ("lib-c/src/lib.rs", String::new()),
    ];
    let (cargo, offline) = cargo_and_fallback("other-platform", &files);
    assert_eq!(cargo, ["app: ", "lib_b: x"]);
    assert_eq!(offline, cargo);
}

/// `x/feat` on an optional dependency `x` turns on `x`'s implicit feature too, in
/// cargo's features list (burn-ndarray's `blas-src`).
#[test]
fn a_dependency_feature_turns_on_the_optional_dependency_s_implicit_feature() {
    let app = package("app")
        + "[workspace]\n[features]\ndefault = [\"f\"]\nf = [\"lib-b/x\"]\n\
           [dependencies]\nlib-b = { path = \"../lib-b\", optional = true }\n";
    let files = [
        ("app/Cargo.toml", app),
        (
            "lib-b/Cargo.toml",
            package("lib-b") + "[features]\nx = []\n",
        ),
        ("app/src/lib.rs", String::new()),
        ("lib-b/src/lib.rs", String::new()),
    ];
    let (cargo, offline) = cargo_and_fallback("implicit-feature", &files);
    assert_eq!(cargo, ["app: default,f,lib-b", "lib_b: x"]);
    assert_eq!(offline, cargo);
}
