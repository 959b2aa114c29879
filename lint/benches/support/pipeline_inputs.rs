//! The bench's inputs: the demo fixture, registry crates (`syn`, `cudarc`, candle) as
//! `cargo metadata` would describe them, and the generated crate.

use super::{Input, synth};
use nosync_lint_core::crate_graph::{CrateSpec, DepTarget};
use nosync_lint_core::diagnostics::Origin;
use nosync_lint_workspace::{WorkspaceOptions, load as load_workspace};
use std::path::{Path, PathBuf};

/// Roots of the candle input (paths checked by reading candle's sources).
const CANDLE_ROOTS: &str = r#"roots = [
    "candle_core::Tensor::to_vec1",
    "candle_core::Tensor::matmul",
    "candle_nn::ops::softmax_last_dim",
    "candle_nn::loss::cross_entropy",
    "<candle_nn::Linear as candle_core::Module>::forward",
]
"#;

fn origin(name: &str, root: &Path) -> Origin {
    Origin {
        package_id: name.to_owned(),
        package_name: name.to_owned(),
        manifest_path: root.join("Cargo.toml"),
        target_name: name.to_owned(),
        target_kind: vec!["lib".to_owned()],
        target_src_path: root.join("src/lib.rs"),
    }
}

/// The lib target of a crate at `dir`, as `cargo metadata` would describe it.
fn lib_spec(
    name: &str,
    dir: &Path,
    features: &[&str],
    deps: Vec<(String, DepTarget)>,
) -> CrateSpec {
    CrateSpec {
        name: name.to_owned(),
        root: dir.join("src/lib.rs"),
        features: features.iter().map(|f| (*f).to_owned()).collect(),
        deps,
        check_roots: true,
        origin: origin(name, dir),
        versions: Default::default(),
    }
}

fn external(name: &str) -> DepTarget {
    DepTarget::External(name.to_owned())
}

/// The extern names of a registry crate's `[dependencies]`, as `cargo metadata` gives
/// them (the engine resolves `half::f16` to an external crate only when it knows it).
fn manifest_deps(dir: &Path) -> Vec<(String, DepTarget)> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    let table: toml::Table = toml::from_str(&text).unwrap_or_default();
    let deps = table.get("dependencies").and_then(|d| d.as_table());
    deps.into_iter()
        .flat_map(|d| d.iter())
        .map(|(name, spec)| {
            let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(name);
            (name.replace('-', "_"), external(&package.replace('-', "_")))
        })
        .collect()
}

/// `$CARGO_HOME/registry/src/*/<name>-<version>` with the highest `<major>.x.y`.
fn registry_crate(name: &str, major: &str) -> Result<PathBuf, String> {
    let home = home::cargo_home().map_err(|e| format!("no cargo home: {e}"))?;
    let src = home.join("registry/src");
    let version = |p: &Path| -> Option<Vec<u64>> {
        let file = p.file_name()?.to_str()?;
        let v = file.strip_prefix(name)?.strip_prefix('-')?;
        let v = v.strip_prefix(major)?.strip_prefix('.').map(|_| v)?;
        v.split('.').map(|n| n.parse().ok()).collect()
    };
    let indexes = std::fs::read_dir(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    indexes
        .flatten()
        .flat_map(|index| {
            std::fs::read_dir(index.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter_map(|p| Some((version(&p)?, p)))
        .max()
        .map(|(_, p)| p)
        .ok_or_else(|| format!("no {name} {major}.x under {}", src.display()))
}

pub(crate) fn demo() -> Result<Input, String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/Cargo.toml");
    let opts = WorkspaceOptions {
        manifest_path: Some(manifest),
        ..WorkspaceOptions::default()
    };
    let (ws, _) =
        load_workspace(&opts, &mut |_| {}).map_err(|e| format!("cargo metadata: {e:#}"))?;
    Ok(Input::new("demo", ws.root, ws.crates))
}

pub(crate) fn syn_crate() -> Result<Input, String> {
    let dir = registry_crate("syn", "2")?;
    let features = [
        "default",
        "full",
        "derive",
        "parsing",
        "printing",
        "clone-impls",
        "extra-traits",
        "visit",
        "visit-mut",
        "fold",
        "proc-macro",
    ];
    let spec = lib_spec("syn", &dir, &features, manifest_deps(&dir));
    Ok(Input::new("syn", dir, vec![spec]))
}

pub(crate) fn cudarc_crate() -> Result<Input, String> {
    let dir = registry_crate("cudarc", "0.19")?;
    // The features the nosync workspace enables.
    let features = ["std", "driver", "nvrtc", "dynamic-loading", "cuda-13000"];
    let spec = lib_spec("cudarc", &dir, &features, manifest_deps(&dir));
    Ok(Input::new("cudarc", dir, vec![spec]))
}

pub(crate) fn candle() -> Result<Input, String> {
    let fetch = "fetch it: cargo new /tmp/bench-candle && cd /tmp/bench-candle && \
                 cargo add candle-core@0.9 --features cuda && cargo fetch";
    let core = registry_crate("candle-core", "0.9").map_err(|e| format!("{e} ({fetch})"))?;
    let nn = registry_crate("candle-nn", "0.9").map_err(|e| format!("{e} ({fetch})"))?;
    let features = ["cuda", "cudarc", "candle-kernels"];
    let core_spec = lib_spec("candle_core", &core, &features, manifest_deps(&core));
    // candle-nn's `candle` is candle-core: the analysed crate 0, not an external one.
    let mut nn_deps = manifest_deps(&nn);
    for (name, target) in &mut nn_deps {
        if name == "candle" {
            *target = DepTarget::Analysed(0);
        }
    }
    let nn_spec = lib_spec("candle_nn", &nn, &["cuda"], nn_deps);
    let root = core.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(Input::new("candle", root, vec![core_spec, nn_spec]).with_config(CANDLE_ROOTS))
}

/// A generated crate: `mods` modules of `fns` call chains, with calls by path (`use`
/// aliases, absolute paths), methods on parameters, fields, locals, constructors and
/// return types, trait methods, and macro arguments; the method names are shared by
/// every module's type, so resolution must go by type. Four roots in all (the cost of
/// analysis is roots × reachable graph), and sinks at the end of every tenth chain.
///
/// With `NOSYNC_BENCH_SYNTH_DIR` set, the crates are written there, each with a
/// `Cargo.toml`, and kept (to run `cargo nosync-lint -v` on them).
pub(crate) fn synthetic(mods: usize, fns: usize) -> Result<Input, String> {
    let name = format!("synth_{mods}x{fns}");
    let (dir, temp) = match std::env::var_os("NOSYNC_BENCH_SYNTH_DIR") {
        Some(out) => (PathBuf::from(out).join(&name), None),
        None => {
            let t = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
            (t.path().to_owned(), Some(t))
        }
    };
    synth::write_crate(&dir, mods, fns)?;
    let spec = lib_spec(
        "synth",
        &dir,
        &[],
        vec![("nosync".into(), external("nosync"))],
    );
    let mut input = Input::new(&name, dir, vec![spec]);
    input._dir = temp;
    Ok(input)
}
