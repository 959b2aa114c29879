//! Parsing: every module file of every analysed crate, read once and parsed in
//! parallel (rayon, large stacks), then lowered to the [`ir`] right on the parsing thread.
//!
//! A file that does not parse becomes a `parse-error` diagnostic and contributes no
//! items; the others go on. Pathologically nested files are rejected by a cheap
//! pre-scan before syn recurses into them, and a panic in one file's work is caught
//! and reported as an `internal-error` diagnostic.

pub mod cfg;
pub mod ir;
pub(crate) mod lower;
mod lower_expr;
mod prescan;

use crate::diagnostics::{Code, Diagnostic};
use crate::source::SourceMap;
use cfg::CfgCtx;
use ir::{FileId, Item, ModKind, SpanIr};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Stack size of the analysis threads (virtual memory, committed only as used): syn
/// recurses once per nesting level, within the pre-scan's limits.
pub const STACK_SIZE: usize = 256 << 20;

/// One file to parse: the file, the `#[cfg]` context (by index) and where its `mod x;` files live.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileJob {
    pub path: PathBuf,
    pub cfg: usize,
    pub mod_dir: PathBuf,
}

/// A parsed file: its id in the source map and its items (empty if it did not parse).
#[derive(Debug)]
pub struct ParsedFile {
    pub file: FileId,
    pub items: Vec<Item>,
}

/// All parsed files, keyed by (path, cfg context).
#[derive(Debug, Default)]
pub struct Parsed {
    pub files: HashMap<(PathBuf, usize), ParsedFile>,
    /// Fns whose bodies were too deep to lower completely.
    pub truncated_files: usize,
}

impl Parsed {
    pub fn get(&self, path: &Path, cfg: usize) -> Option<&ParsedFile> {
        self.files.get(&(path.to_path_buf(), cfg))
    }
}

/// Parses the module trees under `roots` (root file, cfg index), wave by wave.
pub fn parse_all(
    roots: &[(PathBuf, usize)],
    cfgs: &[CfgCtx],
    sources: &mut SourceMap,
) -> (Parsed, Vec<Diagnostic>) {
    let mut parsed = Parsed::default();
    let mut diags = Vec::new();
    let mut wave: Vec<FileJob> = roots
        .iter()
        .map(|(p, cfg)| FileJob {
            path: p.clone(),
            cfg: *cfg,
            mod_dir: p.parent().map(Path::to_path_buf).unwrap_or_default(),
        })
        .collect();
    while !wave.is_empty() {
        wave.retain(|j| !parsed.files.contains_key(&(j.path.clone(), j.cfg)));
        wave.sort_by(|a, b| (&a.path, a.cfg).cmp(&(&b.path, b.cfg)));
        wave.dedup_by(|a, b| a.path == b.path && a.cfg == b.cfg);
        let loaded = load_wave(&wave, sources, &mut diags);
        // Runs on the caller's rayon pool: [`crate::engine`] installs one with large stacks.
        let results: Vec<FileResult> = loaded
            .par_iter()
            .map(|(j, id)| parse_one(j, *id, sources, cfgs))
            .collect();
        let mut next = Vec::new();
        for ((job, id), res) in loaded.into_iter().zip(results) {
            diags.extend(res.diags);
            parsed.truncated_files += usize::from(res.truncated);
            collect_children(&res.items, job.cfg, &mut next);
            parsed.files.insert(
                (job.path, job.cfg),
                ParsedFile {
                    file: id,
                    items: res.items,
                },
            );
        }
        wave = next;
    }
    (parsed, diags)
}

fn load_wave(
    wave: &[FileJob],
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(FileJob, FileId)> {
    let mut out = Vec::new();
    for job in wave {
        match sources.load(&job.path) {
            Ok(id) => out.push((job.clone(), id)),
            Err(e) => {
                let id = sources.add(job.path.clone(), String::new());
                let msg = format!("cannot read `{}`: {e}", job.path.display());
                diags.push(Diagnostic::new(
                    Code::ParseError,
                    msg,
                    sources.span_of(id, 0, 0),
                ));
            }
        }
    }
    out
}

/// Schedules the files of `mod x;` items (also inside inline modules).
fn collect_children(items: &[Item], cfg: usize, next: &mut Vec<FileJob>) {
    let mut stack: Vec<&[Item]> = vec![items];
    while let Some(items) = stack.pop() {
        for item in items {
            if let Item::Mod { kind, .. } = item {
                match kind {
                    ModKind::Inline(inner) => stack.push(inner),
                    ModKind::File { path, owns_dir } => next.push(FileJob {
                        path: path.clone(),
                        cfg,
                        mod_dir: child_dir(path, *owns_dir),
                    }),
                    ModKind::Missing(_) => {}
                }
            }
        }
    }
}

/// Where the `mod y;` items of module file `path` live.
pub fn child_dir(path: &Path, owns_dir: bool) -> PathBuf {
    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
    if owns_dir {
        parent
    } else {
        parent.join(path.file_stem().unwrap_or_default())
    }
}

struct FileResult {
    items: Vec<Item>,
    diags: Vec<Diagnostic>,
    truncated: bool,
}

fn parse_one(job: &FileJob, id: FileId, sources: &SourceMap, cfgs: &[CfgCtx]) -> FileResult {
    let text = &sources.file(id).text;
    let default_cfg = CfgCtx::default();
    let cfg = cfgs.get(job.cfg).unwrap_or(&default_cfg);
    let run = std::panic::AssertUnwindSafe(|| parse_text(job, id, text, cfg));
    match std::panic::catch_unwind(run) {
        Ok(Ok((items, truncated))) => FileResult {
            items,
            diags: Vec::new(),
            truncated,
        },
        Ok(Err((msg, lo, hi))) => FileResult {
            items: Vec::new(),
            diags: vec![Diagnostic::new(
                Code::ParseError,
                msg,
                sources.span_of(id, floor_char(text, lo), floor_char(text, hi.max(lo))),
            )],
            truncated: false,
        },
        Err(_) => FileResult {
            items: Vec::new(),
            diags: vec![Diagnostic::new(
                Code::InternalError,
                "internal error while analysing this file; it was skipped",
                sources.span_of(id, 0, 0),
            )],
            truncated: false,
        },
    }
}

type ParseErr = (String, usize, usize);

/// Parses and lowers one file's text; errors carry a message and a byte range.
pub fn parse_text(
    job: &FileJob,
    id: FileId,
    text: &str,
    cfg: &CfgCtx,
) -> Result<(Vec<Item>, bool), ParseErr> {
    let (body, offset) = strip_prelude(text);
    match prescan::too_deep(&body) {
        Some(prescan::TooDeep::Nesting(at)) => {
            let msg = format!(
                "nesting deeper than {} levels; file skipped",
                prescan::MAX_NESTING
            );
            return Err((msg, at + offset, at + offset + 1));
        }
        Some(prescan::TooDeep::Segment(at)) => {
            let msg = format!(
                "more than {} tokens in one expression or type; file skipped",
                prescan::MAX_SEGMENT_TOKENS
            );
            return Err((msg, at + offset, at + offset + 1));
        }
        None => {}
    }
    let file = syn::parse_file(&body).map_err(|e| {
        let r = e.span().byte_range();
        (
            format!("syntax error: {e}"),
            r.start + offset,
            r.end + offset,
        )
    })?;
    let mut lower = lower::Lower {
        file: id,
        offset: offset as u32,
        cfg,
        mod_dir: job.mod_dir.clone(),
        file_dir: job.path.parent().map(Path::to_path_buf).unwrap_or_default(),
        depth: 0,
        truncated: false,
        inner: Vec::new(),
        fixed: None,
    };
    let dir = job.mod_dir.clone();
    let items = lower.items(&file.items, &dir, true);
    Ok((items, lower.truncated))
}

/// The largest char boundary of `text` at or before `at` (spans never split a char).
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Strips a BOM and blanks a shebang line, so that syn's offsets stay file offsets.
fn strip_prelude(text: &str) -> (std::borrow::Cow<'_, str>, usize) {
    let (body, offset) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest, 3),
        None => (text, 0),
    };
    if body.starts_with("#!") && !body.starts_with("#![") {
        let end = body.find('\n').unwrap_or(body.len());
        let blanked = format!("{}{}", " ".repeat(end), &body[end..]);
        return (std::borrow::Cow::Owned(blanked), offset);
    }
    (std::borrow::Cow::Borrowed(body), offset)
}

/// A span for a whole item given by its IR span (helper for diagnostics).
pub fn span_ir(file: FileId, lo: usize, hi: usize) -> SpanIr {
    SpanIr {
        file,
        lo: lo as u32,
        hi: hi as u32,
    }
}
