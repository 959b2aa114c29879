//! `--no-deps`: the lint reads only the workspace's members, so a chain that leaves them
//! for a dependency is not followed. The run says so ([`leaving`]: a
//! `chains-leave-workspace` warning when calls reached from the roots could not be
//! followed) rather than report a bare "no findings"; and a configured path into a
//! dependency that is not read ([`unread_deps`]) is dropped from the run's configuration
//! ([`drop_unread`]): it names code this run does not see, which is not a mistake.

use crate::config::{Config, Entry, PathKind};
use crate::diagnostics::{Code, Diagnostic};
use crate::workspace::Workspace;

/// A dependency of a member that the run does not analyse: its extern name (as paths
/// spell it) and its package name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Unread {
    pub extern_name: String,
    pub package: String,
}

/// The members' dependencies (of every kind) that are not analysed, sorted, once each.
pub(super) fn unread_deps(ws: &Workspace) -> Vec<Unread> {
    let Some(m) = &ws.metadata else {
        return Vec::new();
    };
    let analysed = |name: &str| ws.crates.iter().any(|c| c.name == name);
    let members = m
        .packages
        .iter()
        .filter(|p| m.workspace_members.contains(&p.id));
    let mut unread: Vec<Unread> = members
        .flat_map(|p| &p.dependencies)
        .map(|d| Unread {
            extern_name: d.rename.as_deref().unwrap_or(&d.name).replace('-', "_"),
            package: d.name.clone(),
        })
        .filter(|u| !analysed(&u.extern_name))
        .collect();
    unread.sort();
    unread.dedup();
    unread
}

/// `cfg` without the `roots`, `sinks` and `allow` entries whose path starts in an unread
/// dependency other than cudarc (for a qualified path, its type's).
pub(super) fn drop_unread(cfg: &mut Config, unread: &[Unread]) {
    let is_unread = |e: &Entry| {
        let first = match &e.path.kind {
            PathKind::Plain(segs) => segs.first(),
            PathKind::Qualified { self_ty, .. } => self_ty.first(),
        };
        // cudarc's blocking APIs are known without reading cudarc (`known::cudarc`); a
        // version pin (`krate@0.6.0`) names the crate before it.
        let first = first.and_then(|f| f.split('@').next());
        first.is_some_and(|f| f != "cudarc" && unread.iter().any(|u| u.extern_name == f))
    };
    for list in [&mut cfg.roots, &mut cfg.sinks, &mut cfg.allow] {
        list.retain(|e| !is_unread(e));
    }
}

/// Most unread dependencies named in the note.
const LISTED: usize = 8;

/// The `chains-leave-workspace` warning of a `--no-deps` run whose roots reach calls the
/// lint cannot follow (`diags` holds their `unresolved-call-in-no-sync` diagnostics,
/// sorted): at the first of them, with how many there are and the dependencies not read.
/// `None` when there is none, or when the members have no dependency that is not read.
pub(super) fn leaving(diags: &[Diagnostic], unread: &[Unread]) -> Option<Diagnostic> {
    let mut calls = diags
        .iter()
        .filter(|d| d.code == Code::UnresolvedCallInNoSync);
    let first = calls.next()?;
    if unread.is_empty() {
        return None;
    }
    let count = 1 + calls.count();
    let mut packages: Vec<&str> = unread.iter().map(|u| u.package.as_str()).collect();
    packages.dedup();
    let mut listed = packages
        .iter()
        .take(LISTED)
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if packages.len() > LISTED {
        listed.push_str(&format!(" and {} more", packages.len() - LISTED));
    }
    let (s, them) = if count == 1 {
        ("", "it")
    } else {
        ("s", "them")
    };
    let message = format!(
        "with --no-deps, {count} call{s} reached from the no-sync roots could not be followed: \
         the chains leave the workspace, and a wait past {them} is not reported"
    );
    Some(
        Diagnostic::new(Code::ChainsLeaveWorkspace, message, first.primary.clone())
            .with_label("the first call not followed")
            .with_note(
                format!("the members' dependencies are not read with --no-deps: {listed}"),
                None,
            )
            .with_help(
                "run without --no-deps to follow the chains into path dependencies and the \
                 dependencies that use cudarc or nosync; `-W unresolved-call-in-no-sync` lists \
                 every call not followed",
            ),
    )
}
