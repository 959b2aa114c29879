//! The selection the offline fallback would make, computed without waiting for cargo:
//! `cargo metadata --no-deps` (0.03 s on candle), what is on disk ([`super::disk`]) and
//! the fallback's resolution, restricted to the packages that can change the selection
//! ([`super::restrict`]: the lock file says which), then the same selection and root
//! normalisation as after a full run. The engine analyses it while the full `cargo
//! metadata` runs, and keeps that analysis only when cargo's own selection turns out the
//! same (`engine/speculate.rs`). When cargo cannot resolve the graph, the fallback makes
//! exactly this selection, so the guess is right by construction.

use super::{
    Ask, Offline, Workspace, WorkspaceOptions, finish, metadata, offline_start, restrict, select,
    select_shared,
};

/// The most packages a lock file may have for the guess to resolve the whole graph when
/// the lock file cannot restrict it ([`restrict`]): parsing every manifest of a larger
/// graph costs more CPU than the overlap saves on two cores (2.4 s on burn-core's 877).
pub(crate) const FULL_GUESS_MAX: usize = 300;

/// The workspace [`super::load`] selects when `cargo metadata` fails and the fallback
/// answers (without its `workspace-fallback` warning; with `--no-deps`, cargo's own
/// `--no-deps` answer, which is what a full run asks), and the fallback's graph when the
/// guess had to build it whole (the lock file could not restrict it), for `load_with` to
/// take when cargo does fail. `Err` (why) when it cannot be made cheaply: `cargo metadata
/// --no-deps` fails, the offline resolution fails or would be the whole of a large graph,
/// `-p` names no member.
pub fn guess(opts: &WorkspaceOptions) -> Result<(Workspace, Option<Offline>), String> {
    let said = |e: &dyn std::fmt::Display| format!("{e:#}");
    if opts.no_deps {
        let m = metadata(opts, Ask::NoDeps, &mut |_| {}).map_err(|e| said(&e))?;
        let (ws, _) = finish(select(m, opts, None), opts, false).map_err(|e| said(&e))?;
        return Ok((ws, None));
    }
    let (m, disk, req) = offline_start(opts, &mut |_| {}).map_err(|e| said(&e))?;
    let (mut m, report) = restrict::resolve(m, &req, &disk, Some(FULL_GUESS_MAX))?;
    let (selected, offline) = match report {
        // Restricted: a part of the graph, which the fallback cannot take.
        None => (select(m, opts, None), None),
        Some(report) => {
            let selected = select_shared(&mut m, opts);
            let offline = Offline {
                metadata: m,
                report,
            };
            (selected, Some(offline))
        }
    };
    let (ws, _) = finish(selected, opts, false).map_err(|e| said(&e))?;
    Ok((ws, offline))
}
