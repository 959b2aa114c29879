//! The restricted resolution selects exactly what the full one does: on a small synthetic
//! workspace (written to a temp dir, with its own cargo home) and, in ignored tests, on
//! real lock files.

use super::super::offline::{self, FeatureRequest};
use super::super::*;
use std::path::Path;

/// What a selection is compared by (its crates' features are sets).
#[derive(Debug, PartialEq)]
struct Compared {
    crates: Vec<CrateSpec>,
    config_tables: Vec<(PathBuf, MetadataTable)>,
    metadata: serde_json::Value,
}

fn compared(s: Selected) -> Compared {
    Compared {
        metadata: serde_json::to_value(&s.metadata).unwrap(),
        crates: s.crates,
        config_tables: s.config_tables,
    }
}

/// The first difference of two selections, in words (`None`: equal).
fn difference(a: &Compared, b: &Compared) -> Option<String> {
    if a.crates.len() != b.crates.len() {
        let names = |c: &Compared| {
            c.crates
                .iter()
                .map(|c| c.origin.package_id.clone())
                .collect::<Vec<_>>()
        };
        return Some(format!("crates {:?} against {:?}", names(a), names(b)));
    }
    if let Some((x, y)) = a.crates.iter().zip(&b.crates).find(|(x, y)| x != y) {
        return Some(format!("{x:#?}\nagainst\n{y:#?}"));
    }
    if a.config_tables != b.config_tables {
        return Some(format!(
            "{:?} against {:?}",
            a.config_tables, b.config_tables
        ));
    }
    (a.metadata != b.metadata).then(|| "the metadata".to_owned())
}

/// The selection of the full resolution and of the guess's (restricted unless the lock
/// file cannot vouch for it), and whether the guess's was restricted.
fn both(opts: &WorkspaceOptions, home: &Path) -> (Compared, Compared, bool) {
    let m = metadata(opts, Ask::NoDeps, &mut |_| {}).unwrap();
    let root = m.workspace_root.as_std_path();
    let disk = disk::Disk::scan(root, home.to_path_buf(), manifest::read_patches(root));
    let req = FeatureRequest {
        features: opts.features.clone(),
        all_features: opts.all_features,
        no_default_features: opts.no_default_features,
    };
    let (mut full, _) = offline::resolve(m.clone(), &req, &disk).unwrap();
    let (part, report) = super::resolve_as_lock_allows(m, &req, &disk, None).unwrap();
    let shared = compared(select_shared(&mut full, opts));
    let full = compared(select(full, opts, None));
    assert_eq!(
        difference(&shared, &full),
        None,
        "select_shared differs from select"
    );
    (full, compared(select(part, opts, None)), report.is_none())
}

/// Real workspaces, `:`-separated manifests in `NOSYNC_RESTRICT_WORKSPACES`, with their
/// dependencies in the cargo home: with `--all-features` and with the defaults, the
/// guess's selection is restricted and is the full resolution's.
#[test]
#[ignore = "needs real workspaces with their dependencies downloaded: NOSYNC_RESTRICT_WORKSPACES=<manifest>:<manifest>"]
fn the_restriction_is_exact_on_real_lock_files() {
    let list = std::env::var("NOSYNC_RESTRICT_WORKSPACES")
        .expect("NOSYNC_RESTRICT_WORKSPACES names no workspace");
    let mut failed = Vec::new();
    for manifest in list.split(':').filter(|m| !m.is_empty()) {
        for all_features in [true, false] {
            let opts = WorkspaceOptions {
                manifest_path: Some(PathBuf::from(manifest)),
                all_features,
                ..WorkspaceOptions::default()
            };
            let (full, part, restricted) = both(&opts, &cargo_home());
            if !restricted {
                failed.push(format!(
                    "{manifest} (all features: {all_features}): not restricted"
                ));
            }
            if let Some(d) = difference(&full, &part) {
                failed.push(format!("{manifest} (all features: {all_features}): {d}"));
            }
        }
    }
    assert!(failed.is_empty(), "the selections differ: {failed:?}");
}

const APP: &str = r#"[package]
name = "app"
version = "0.1.0"
edition = "2021"

[workspace]

[features]
gpu = ["mid/cuda"]

[dependencies]
mid = "1.0"
other = "1.0"
plain = "1.0"
unrelated = "1.0"
"#;

/// Registry crates: `mid` uses cudarc under a feature that also asks `leaf` for one;
/// `other` depends on `mid` (so it is GPU-dependent when `mid` is) and asks it for a
/// feature; `plain` is published from `mid`'s repository (spelled otherwise) and has a
/// dependency of its own; `unrelated` leads only to `deep2`, which nothing needs.
const CRATES: &[(&str, &str)] = &[
    (
        "mid",
        "repository = \"https://github.com/org/mid\"\n[features]\ncuda = [\"dep:cudarc\", \"leaf/x\"]\nextra = []\n[dependencies]\ncudarc = { version = \"0.19\", optional = true }\nleaf = \"1.0\"\n",
    ),
    ("leaf", "[lib]\nname = \"leaf_lib\"\n[features]\nx = []\n"),
    (
        "other",
        "repository = \"https://github.com/org/other\"\n[dependencies]\nmid = { version = \"1.0\", features = [\"extra\"] }\n",
    ),
    (
        "plain",
        "repository = \"https://www.GitHub.com/Org/mid.git\"\n[dependencies]\ndeep = \"1.0\"\n",
    ),
    ("deep", ""),
    (
        "unrelated",
        "repository = \"https://github.com/org/unrelated\"\n[dependencies]\ndeep2 = \"1.0\"\n",
    ),
    ("deep2", ""),
    ("fresh", ""),
];

/// Each registry package of the lock file, with its dependencies.
const LOCKED: &[(&str, &[&str])] = &[
    ("cudarc", &[]),
    ("deep", &[]),
    ("deep2", &[]),
    ("leaf", &[]),
    ("mid", &["cudarc", "leaf"]),
    ("other", &["mid"]),
    ("plain", &["deep"]),
    ("unrelated", &["deep2"]),
];

fn lock_file(app_deps: &[&str], source_of: &dyn Fn(&str) -> String) -> String {
    let list = |deps: &[&str]| {
        let quoted: Vec<String> = deps.iter().map(|d| format!("\"{d}\"")).collect();
        quoted.join(", ")
    };
    let mut lock = format!(
        "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [{}]\n",
        list(app_deps)
    );
    for (name, deps) in LOCKED {
        let version = if *name == "cudarc" { "0.19.0" } else { "1.0.0" };
        lock += &format!(
            "\n[[package]]\nname = \"{name}\"\nversion = \"{version}\"\nsource = \"{}\"\ndependencies = [{}]\n",
            source_of(name),
            list(deps)
        );
    }
    lock
}

const CRATES_IO: &str = "registry+https://github.com/rust-lang/crates.io-index";

/// The workspace `app` (its manifest `app`, its lock file `lock`) and a cargo home with
/// the registry crates (cudarc is never read: it is built in); the options with
/// `--all-features` as asked.
fn setup(name: &str, app: &str, lock: &str, all_features: bool) -> (WorkspaceOptions, PathBuf) {
    let dir = std::env::temp_dir().join(format!("nosync-restrict-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let write = |p: &str, text: &str| {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("app/Cargo.toml", app);
    write("app/src/lib.rs", "");
    write("app/Cargo.lock", lock);
    for (name, rest) in CRATES {
        let crate_dir = format!("home/registry/src/index/{name}-1.0.0");
        let package =
            format!("[package]\nname = \"{name}\"\nversion = \"1.0.0\"\nedition = \"2021\"\n");
        write(&format!("{crate_dir}/Cargo.toml"), &(package + rest));
        write(&format!("{crate_dir}/src/lib.rs"), "");
    }
    let opts = WorkspaceOptions {
        manifest_path: Some(dir.join("app/Cargo.toml")),
        all_features,
        ..WorkspaceOptions::default()
    };
    (opts, dir)
}

fn crate_names(c: &Compared) -> Vec<String> {
    c.crates
        .iter()
        .map(|c| c.origin.package_name.clone())
        .collect()
}

#[test]
fn the_restricted_resolution_selects_what_the_full_one_does_and_reads_less() {
    let lock = lock_file(&["mid", "other", "plain", "unrelated"], &|_| {
        CRATES_IO.to_owned()
    });
    for all_features in [true, false] {
        let (opts, dir) = setup(&format!("exact-{all_features}"), APP, &lock, all_features);
        let home = dir.join("home");
        let (full, part, restricted) = both(&opts, &home);
        assert!(restricted, "the lock file vouches for this graph");
        assert_eq!(difference(&full, &part), None);
        let expected: &[&str] = match all_features {
            true => &["app", "mid", "other", "plain"],
            false => &["app"],
        };
        assert_eq!(crate_names(&full), expected);
        if all_features {
            // Features from both dependents of `mid`, the lib name of a leaf.
            let mid = &full.crates[1];
            let mut features: Vec<&str> = mid.features.iter().map(String::as_str).collect();
            features.sort();
            assert_eq!(features, ["cuda", "extra"]);
            let deps: Vec<&str> = mid.deps.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(deps, ["cudarc", "leaf_lib"]);
        }
        // `deep2` is reached only through `unrelated`, which nothing selected needs.
        let m = metadata(&opts, Ask::NoDeps, &mut |_| {}).unwrap();
        let root = m.workspace_root.as_std_path();
        let disk = disk::Disk::scan(root, home, manifest::read_patches(root));
        let req = FeatureRequest {
            all_features,
            ..FeatureRequest::default()
        };
        let (full, _) = offline::resolve(m.clone(), &req, &disk).unwrap();
        let (part, _) = super::resolve_as_lock_allows(m.clone(), &req, &disk, None).unwrap();
        let has = |m: &Metadata, name: &str| m.packages.iter().any(|p| p.name.as_str() == name);
        assert!(has(&full, "deep2") && !has(&part, "deep2"));
        assert!(
            has(&part, "unrelated"),
            "a dependency of a member is read as a leaf"
        );
        // cudarc is in the lock file, not on disk: cargo would fail here, and the guess
        // builds the whole graph for the fallback to take.
        let (whole, report) = super::resolve(m, &req, &disk, Some(1)).unwrap();
        assert!(report.is_some() && has(&whole, "deep2"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_lock_file_that_cannot_vouch_for_the_graph_gets_the_full_resolution() {
    // A dependency added since the lock file was written.
    let stale_app = APP.replace("[dependencies]\n", "[dependencies]\nfresh = \"1.0\"\n");
    let stale = lock_file(&["mid", "other", "plain", "unrelated"], &|_| {
        CRATES_IO.to_owned()
    });
    // `leaf` patched to a git checkout (that is not there): `mid`, a registry package,
    // is locked to depend on it.
    let patched = lock_file(
        &["mid", "other", "plain", "unrelated"],
        &|name| match name {
            "leaf" => "git+https://github.com/org/leaf#0123456789abcdef".to_owned(),
            _ => CRATES_IO.to_owned(),
        },
    );
    for (name, app, lock) in [
        ("stale", stale_app.as_str(), stale),
        ("patched", APP, patched),
    ] {
        let (opts, dir) = setup(name, app, &lock, true);
        let (full, part, restricted) = both(&opts, &dir.join("home"));
        assert!(!restricted, "{name}: restricted");
        assert_eq!(difference(&full, &part), None, "{name}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
