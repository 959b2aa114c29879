//! Where a workspace's caches live in a target dir, and how they are pruned.
//!
//! One target dir may be shared by several workspaces (one `CARGO_TARGET_DIR` for all of
//! a user's projects is common), and each cache drops the entries its run did not use. So
//! each workspace has a directory of its own, `<target>/nosync-lint/<name>-<hash>/`
//! ([`cache_dir`]: the root's last component, for a reader, and a hash of the whole root):
//! one workspace's run never evicts another's entries. Each run marks its directory used
//! ([`mark_used`]: the modification time of a `used` file in it); [`prune`] removes the
//! directories of workspaces that no longer exist and, past [`KEEP_WORKSPACES`], the least
//! recently used, and in a workspace's directory the cargo metadata answers past
//! [`KEEP_METADATA`] (one per set of options), oldest first. Nothing here is an error: a
//! cache that cannot be written or removed is left as it is.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// How many workspaces' caches one target dir keeps.
pub const KEEP_WORKSPACES: usize = 32;
/// How many cargo metadata answers (sets of options) one workspace's directory keeps.
pub const KEEP_METADATA: usize = 8;

/// The file in a workspace's directory naming its root (to prune it when the root is gone).
const ROOT_FILE: &str = "root";
/// The file whose modification time is the directory's last use.
const USED_FILE: &str = "used";

/// The directory of the caches of the workspace at `root` in the target dir `target`
/// (both absolute; `.` and `..` resolved as `paths::normalize` does).
pub fn cache_dir(target: &Path, root: &Path) -> PathBuf {
    let (target, root) = (
        nosync_lint_core::paths::normalize(target),
        nosync_lint_core::paths::normalize(root),
    );
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    let name: String = (root
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .chars())
    .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    .take(40)
    .collect();
    let name = if name.is_empty() { "workspace" } else { &name };
    base(&target).join(format!("{name}-{:016x}", h.finish()))
}

/// `<target>/nosync-lint`, where every workspace's directory is.
fn base(target: &Path) -> PathBuf {
    target.join("nosync-lint")
}

/// Marks `dir` (a [`cache_dir`]) used now; the first time, creates it and its root file,
/// and says so (`true`).
pub fn mark_used(dir: &Path, root: &Path) -> bool {
    let used = dir.join(USED_FILE);
    let open = || std::fs::OpenOptions::new().write(true).open(&used);
    let (file, created) = match open() {
        Ok(file) => (Ok(file), false),
        Err(_) => {
            let created = std::fs::create_dir_all(dir)
                .and_then(|()| {
                    std::fs::write(dir.join(ROOT_FILE), root.as_os_str().as_encoded_bytes())
                })
                .and_then(|()| std::fs::File::create(&used));
            (created, true)
        }
    };
    match file {
        Ok(file) => {
            let _ = file.set_modified(SystemTime::now());
            created
        }
        Err(_) => false,
    }
}

/// Prunes the target dir of `dir` (a [`cache_dir`]): what an older lint left at the top
/// (caches not in a workspace's directory), the directories of workspaces whose manifest
/// is gone, the least recently used ones past [`KEEP_WORKSPACES`] (never `dir`), and
/// `dir`'s metadata answers past [`KEEP_METADATA`].
pub fn prune(dir: &Path) {
    prune_metadata(dir);
    let Some(base) = dir.parent() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let mut kept = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path == dir {
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir {
            let _ = std::fs::remove_file(&path);
        } else if workspace_gone(&path) {
            let _ = std::fs::remove_dir_all(&path);
        } else {
            kept.push((last_used(&path), path));
        }
    }
    // Newest first; `dir` itself is the one more kept.
    kept.sort_by_key(|k| std::cmp::Reverse(k.0));
    for (_, path) in kept.iter().skip(KEEP_WORKSPACES.saturating_sub(1)) {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// Whether the workspace of a cache directory no longer has a manifest (a directory with
/// no root file is not a workspace's: an older lint's, or foreign, and gone too).
fn workspace_gone(dir: &Path) -> bool {
    let Ok(root) = std::fs::read(dir.join(ROOT_FILE)) else {
        return true;
    };
    let root = String::from_utf8_lossy(&root);
    !Path::new(root.as_ref()).join("Cargo.toml").is_file()
}

/// When a cache directory was last used (its `used` file's time; the epoch without one).
fn last_used(dir: &Path) -> SystemTime {
    std::fs::metadata(dir.join(USED_FILE))
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Keeps the newest [`KEEP_METADATA`] `metadata-*.json` files of `dir`.
fn prune_metadata(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut found: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("metadata-") && name.ends_with(".json")
        })
        .map(|e| {
            let time = e.metadata().and_then(|m| m.modified());
            (time.unwrap_or(SystemTime::UNIX_EPOCH), e.path())
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    for (_, path) in found.iter().skip(KEEP_METADATA) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("nosync-cache-dir-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    #[test]
    fn each_workspace_has_its_own_directory() {
        let target = Path::new("/t");
        let a = cache_dir(target, Path::new("/src/app"));
        let b = cache_dir(target, Path::new("/other/app"));
        assert_ne!(a, b);
        assert_eq!(a.parent(), Some(Path::new("/t/nosync-lint")));
        let name = a.file_name().map(|n| n.to_string_lossy().into_owned());
        assert!(name.is_some_and(|n| n.starts_with("app-") && n.len() == 4 + 16));
        assert_eq!(a, cache_dir(target, Path::new("/src/app")));
    }

    #[test]
    fn prune_removes_gone_workspaces_old_files_and_the_least_recently_used() {
        let tmp = scratch("prune");
        let target = tmp.join("target");
        let workspace = |i: usize| {
            let root = tmp.join(format!("ws{i}"));
            std::fs::create_dir_all(&root).expect("a workspace");
            std::fs::write(root.join("Cargo.toml"), "").expect("a manifest");
            let dir = cache_dir(&target, &root);
            mark_used(&dir, &root);
            let time = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
            let used = std::fs::File::options()
                .write(true)
                .open(dir.join(USED_FILE));
            used.and_then(|f| f.set_modified(time))
                .expect("a used time");
            (root, dir)
        };
        let all: Vec<_> = (0..KEEP_WORKSPACES + 2).map(workspace).collect();
        let (gone_root, gone_dir) = &all[KEEP_WORKSPACES + 1];
        std::fs::remove_dir_all(gone_root).expect("a removed workspace");
        std::fs::write(base(&target).join("lowered.bin"), "old").expect("an old cache");
        let current = &all[0].1;
        for i in 0..KEEP_METADATA + 3 {
            std::fs::write(current.join(format!("metadata-{i}.json")), "{}").expect("metadata");
            let time = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
            let file = std::fs::File::options()
                .write(true)
                .open(current.join(format!("metadata-{i}.json")));
            file.and_then(|f| f.set_modified(time))
                .expect("a metadata time");
        }
        prune(current);
        assert!(
            current.is_dir(),
            "the current workspace's directory is kept"
        );
        assert!(!gone_dir.exists(), "a workspace that is gone is pruned");
        assert!(
            !base(&target).join("lowered.bin").exists(),
            "an old layout's file is pruned"
        );
        // The oldest others (ws1, ws2) past the limit are removed, the newest kept.
        let left: Vec<bool> = all.iter().map(|(_, d)| d.is_dir()).collect();
        assert_eq!(left.iter().filter(|&&k| k).count(), KEEP_WORKSPACES);
        assert!(!all[1].1.exists() && all[KEEP_WORKSPACES].1.is_dir());
        let metadata: Vec<_> = (0..KEEP_METADATA + 3)
            .filter(|i| current.join(format!("metadata-{i}.json")).exists())
            .collect();
        assert_eq!(metadata, (3..KEEP_METADATA + 3).collect::<Vec<_>>());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
