//! Which files a crate's module tree is loaded from, and where.
//!
//! One file may be several modules of one crate (`#[path = "../common/macros.rs"] mod
//! macros;` in each bench, one `common/glam_matrix.rs` per glam version in nalgebra): each
//! inclusion is its own module, as rustc makes it. Refused are a file that is already one
//! of the module's ancestors (it would include itself forever) and, so that a lattice of
//! files including each other twice cannot grow the tree exponentially, a file loaded
//! [`MAX_LOADS`] times in one crate.

use super::{ModId, ModuleData};
use crate::diagnostics::{Code, Diagnostic};
use crate::parse::ir::SpanIr;
use crate::source::SourceMap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Most modules one file may be in one crate.
pub(super) const MAX_LOADS: usize = 64;

/// Why a module file is not loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// The file is an ancestor module's own file.
    Recursive,
    /// The file is [`MAX_LOADS`] modules of the crate already.
    TooMany,
}

/// The files of one crate's module tree.
#[derive(Debug, Default)]
pub(super) struct ModuleFiles {
    file_of: HashMap<ModId, PathBuf>,
    loads: HashMap<PathBuf, usize>,
}

impl ModuleFiles {
    /// The tree of a crate whose root module `root` is the file `path`.
    pub(super) fn new(root: ModId, path: PathBuf) -> Self {
        let mut files = ModuleFiles::default();
        files.loads.insert(path.clone(), 1);
        files.file_of.insert(root, path);
        files
    }

    /// Records module `child` of `parent` as loaded from `path`, unless refused.
    pub(super) fn enter(
        &mut self,
        modules: &[ModuleData<'_>],
        parent: ModId,
        child: ModId,
        path: &Path,
    ) -> Result<(), Refused> {
        let mut at = Some(parent);
        while let Some(m) = at {
            if self.file_of.get(&m).is_some_and(|p| p == path) {
                return Err(Refused::Recursive);
            }
            at = modules[m as usize].parent;
        }
        let n = self.loads.entry(path.to_path_buf()).or_default();
        if *n >= MAX_LOADS {
            return Err(Refused::TooMany);
        }
        *n += 1;
        self.file_of.insert(child, path.to_path_buf());
        Ok(())
    }
}

/// The diagnostic for a refused module file.
pub(super) fn refused(
    why: Refused,
    name: &str,
    path: &Path,
    span: SpanIr,
    sources: &SourceMap,
) -> Diagnostic {
    let shown = sources.display(path);
    let (msg, label, note) = match why {
        Refused::Recursive => (
            format!(
                "module `{name}` names `{}`, which is the file of a module that contains it",
                shown.display()
            ),
            "loaded again here",
            "a `#[path]` that points back up the tree would recurse forever; it is not loaded again"
                .to_owned(),
        ),
        Refused::TooMany => (
            format!(
                "module `{name}` names `{}`, which is already {MAX_LOADS} modules of this crate",
                shown.display()
            ),
            "not loaded again here",
            format!("each inclusion is a copy of the module; past {MAX_LOADS} copies the file is not loaded again"),
        ),
    };
    Diagnostic::new(Code::MissingModule, msg, sources.span(span))
        .with_label(label)
        .with_note(note, None)
}
