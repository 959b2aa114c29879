//! The selection the offline fallback would make, computed without waiting for cargo:
//! `cargo metadata --no-deps` (0.03 s on candle), what is on disk ([`super::disk`]) and
//! the fallback's resolution ([`super::offline`]), then the same selection and root
//! normalisation as after a full run. The engine analyses it while the full `cargo
//! metadata` runs, and keeps that analysis only when cargo's own selection turns out the
//! same (`engine/speculate.rs`). When cargo cannot resolve the graph, the fallback makes
//! exactly this selection, so the guess is right by construction.

use super::{
    Ask, CargoFailed, Offline, Workspace, WorkspaceOptions, fallback, finish, metadata, select,
};

/// The workspace [`super::load`] selects when `cargo metadata` fails and the fallback
/// answers (without its `workspace-fallback` warning; with `--no-deps`, cargo's own
/// `--no-deps` answer, which is what a full run asks), and the fallback's graph, for
/// `load_with` to take when cargo does fail. `None` when it cannot be made: `cargo
/// metadata --no-deps` fails, the offline resolution fails, `-p` names no member.
pub fn guess(opts: &WorkspaceOptions) -> Option<(Workspace, Option<Offline>)> {
    let (m, offline) = if opts.no_deps {
        (metadata(opts, Ask::NoDeps, &mut |_| {}).ok()?, None)
    } else {
        // What cargo said goes into the warning only, which the guess does not make.
        let unsaid = CargoFailed(String::new());
        let (metadata, report) = fallback(opts, &unsaid, &mut |_| {}).ok()?;
        let offline = Offline {
            metadata: metadata.clone(),
            report,
        };
        (metadata, Some(offline))
    };
    let (ws, _) = finish(select(m, opts, None), opts, false).ok()?;
    Some((ws, offline))
}
