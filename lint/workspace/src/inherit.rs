//! Workspace inheritance in a manifest the offline fallback reads itself (a path or git
//! package outside the members, whose manifest cargo has not normalised): `version.workspace
//! = true` and the other `[package]` keys from `[workspace.package]`, and `dep = {
//! workspace = true, .. }` from `[workspace.dependencies]` (its path made absolute, the
//! features of both, `optional` the package's own), as cargo reads them. Without it such a
//! package would be version 0.0.0 with dependencies that name no path.

use std::path::{Path, PathBuf};

const DEP_TABLES: [&str; 5] = [
    "dependencies",
    "build-dependencies",
    "build_dependencies",
    "dev-dependencies",
    "dev_dependencies",
];

/// `table` (the manifest at `path`) with what it inherits from its workspace filled in.
pub(crate) fn apply(table: &mut toml::Table, path: &Path) {
    let Some((ws, ws_dir)) = workspace_of(table, path) else {
        return;
    };
    let Some(ws) = ws.get("workspace").and_then(|w| w.as_table()) else {
        return;
    };
    if let (Some(pkg), Some(from)) = (
        table.get_mut("package").and_then(|p| p.as_table_mut()),
        ws.get("package").and_then(|p| p.as_table()),
    ) {
        for (key, value) in pkg.iter_mut() {
            if inherits(value)
                && let Some(v) = from.get(key)
            {
                *value = v.clone();
            }
        }
    }
    let deps = ws.get("dependencies").and_then(|d| d.as_table());
    let Some(deps) = deps else { return };
    for_each_dep_table(table, &mut |t| {
        for (key, value) in t.iter_mut() {
            if inherits(value)
                && let Some(base) = deps.get(key)
            {
                *value = merged(base, value, &ws_dir);
            }
        }
    });
}

/// Whether a value is `{ workspace = true, .. }`.
fn inherits(v: &toml::Value) -> bool {
    v.get("workspace").and_then(|w| w.as_bool()) == Some(true)
}

/// The workspace's dependency `base` as the package declares it (`local`).
fn merged(base: &toml::Value, local: &toml::Value, ws_dir: &Path) -> toml::Value {
    let mut out = match base {
        toml::Value::String(req) => {
            toml::Table::from_iter([("version".to_owned(), req.clone().into())])
        }
        toml::Value::Table(t) => t.clone(),
        _ => toml::Table::new(),
    };
    if let Some(p) = out.get("path").and_then(|p| p.as_str()) {
        let abs = ws_dir.join(p).display().to_string();
        out.insert("path".to_owned(), abs.into());
    }
    let features =
        |v: Option<&toml::Value>| v.and_then(|f| f.as_array()).cloned().unwrap_or_default();
    let mut all = features(out.get("features"));
    all.extend(features(local.get("features")));
    out.insert("features".to_owned(), all.into());
    if let Some(optional) = local.get("optional") {
        out.insert("optional".to_owned(), optional.clone());
    }
    out.into()
}

fn for_each_dep_table(table: &mut toml::Table, f: &mut dyn FnMut(&mut toml::Table)) {
    for key in DEP_TABLES {
        if let Some(t) = table.get_mut(key).and_then(|t| t.as_table_mut()) {
            f(t);
        }
    }
    let targets = table.get_mut("target").and_then(|t| t.as_table_mut());
    for (_, target) in targets.into_iter().flat_map(|t| t.iter_mut()) {
        for key in DEP_TABLES {
            if let Some(t) = target.get_mut(key).and_then(|t| t.as_table_mut()) {
                f(t);
            }
        }
    }
}

/// The manifest of the workspace `path` belongs to (`package.workspace`, else itself when
/// it has `[workspace]`, else the nearest ancestor directory's that has one) and its
/// directory.
fn workspace_of(table: &toml::Table, path: &Path) -> Option<(toml::Table, PathBuf)> {
    let dir = path.parent()?;
    if table.contains_key("workspace") {
        return Some((table.clone(), dir.to_path_buf()));
    }
    let named = table
        .get("package")?
        .get("workspace")
        .and_then(|w| w.as_str());
    if let Some(rel) = named {
        let ws_dir = dir.join(rel);
        return read(&ws_dir.join("Cargo.toml")).map(|t| (t, ws_dir));
    }
    dir.ancestors().skip(1).find_map(|d| {
        read(&d.join("Cargo.toml"))
            .filter(|t| t.contains_key("workspace"))
            .map(|t| (t, d.to_path_buf()))
    })
}

fn read(path: &Path) -> Option<toml::Table> {
    toml::from_str(&std::fs::read_to_string(path).ok()?).ok()
}
