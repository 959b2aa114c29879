//! Configuration: `[workspace.metadata.nosync-lint]`, `[package.metadata.nosync-lint]`
//! and `--config FILE`, each a table with `roots`, `sinks` and `allow` (lists of Rust
//! paths: `krate::f`, `krate::Type::method`, `<krate::Type as krate::Trait>::method`;
//! an entry may be `{ path = "..", reason = ".." }`), `models` (library models, read by
//! `known::models`) and `levels`.
//!
//! Read in one place: the file's text comes from the [`SourceMap`], toml parses it into
//! its spanned document, serde reads the table into [`schema::RawTable`], and
//! [`validate`] checks every key, value, level and path syntax, returning the typed
//! [`Config`] and located `config-error`s. Later stages get only valid entries:
//! `resolve::configured` maps the paths to fns, the CLI applies the levels.

mod path;
mod schema;
#[cfg(test)]
mod tests;
mod validate;

pub use path::{ConfigPath, PathKind};

use crate::crate_graph::MetadataTable;
use crate::diagnostics::{Code, Diagnostic, Level};
use crate::levels::Subject;
use crate::source::{FileId, Loader, SourceMap, SpanIr};
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// One configured path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: ConfigPath,
    pub reason: Option<String>,
    /// Where the path string is written.
    pub span: SpanIr,
}

/// One `levels` entry: `"code" = "level"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelEntry {
    pub target: Subject,
    pub level: Level,
    /// Where the code is written.
    pub span: SpanIr,
}

/// One `models` entry: a model of a library function (`known::models`).
#[derive(Debug, Clone)]
pub struct ModelEntry {
    pub model: crate::known::models::Model,
    /// Where its path is written.
    pub span: SpanIr,
}

/// The merged configuration; every entry in it is valid.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub roots: Vec<Entry>,
    pub sinks: Vec<Entry>,
    pub allow: Vec<Entry>,
    /// Models of library functions, applied after the shipped ones (`docs/models.md`).
    pub models: Vec<ModelEntry>,
    /// In the order read; applied by the level overrides before the command line's.
    pub levels: Vec<LevelEntry>,
}

impl Config {
    /// Appends `other`'s entries after this one's.
    pub fn merge(&mut self, other: Config) {
        self.roots.extend(other.roots);
        self.sinks.extend(other.sinks);
        self.allow.extend(other.allow);
        self.models.extend(other.models);
        self.levels.extend(other.levels);
    }
}

/// Where the configuration table of a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// A `--config` file: its `[nosync-lint]` table if it has one, else its top level.
    File,
    /// `[workspace.metadata.nosync-lint]` or `[package.metadata.nosync-lint]` of a manifest.
    Manifest(MetadataTable),
}

/// Reads the configuration in `section` of `file` (already in the source map).
pub fn read(file: FileId, section: Section, sources: &SourceMap) -> (Config, Vec<Diagnostic>) {
    let cx = validate::Cx { file, sources };
    let mut doc = match DeTable::parse(&sources.file(file).text) {
        Ok(doc) => doc,
        Err(e) => {
            let message = format!("invalid TOML: {}", e.message());
            return (
                Config::default(),
                vec![cx.error(e.span().unwrap_or(0..0), message)],
            );
        }
    };
    match table_in(doc.get_mut(), section) {
        Some((name_at, table)) => validate::table(name_at, table, &cx),
        None => {
            let near = misspelt_table(doc.get_ref(), section);
            let diags = near.into_iter().map(|(at, name, header)| {
                let msg = format!(
                    "unknown table `[{header}.{name}]`: did you mean `[{header}.nosync-lint]`?"
                );
                cx.error(at, msg).with_note(
                    "the lint reads its configuration from `nosync-lint` only, so this table is not read",
                    None,
                )
            });
            (Config::default(), diags.collect())
        }
    }
}

/// The keys of `[workspace.metadata]` / `[package.metadata]` that look like a misspelt
/// `nosync-lint` (`nosync_lint`, `nosync-lints`, `no-sync-lint`): where each is, its name,
/// and the table it is in.
fn misspelt_table(
    doc: &DeTable<'_>,
    section: Section,
) -> Vec<(std::ops::Range<usize>, String, &'static str)> {
    let Section::Manifest(table) = section else {
        return Vec::new();
    };
    let header = match table {
        MetadataTable::Workspace => "workspace.metadata",
        MetadataTable::Package => "package.metadata",
    };
    let outer = header.split_once('.').map_or(header, |(o, _)| o);
    let Some(DeValue::Table(t)) = doc.get(outer).map(|v| v.get_ref()) else {
        return Vec::new();
    };
    let Some(DeValue::Table(metadata)) = t.get("metadata").map(|v| v.get_ref()) else {
        return Vec::new();
    };
    let near = crate::diagnostics::suggest::config_table_like;
    (metadata.iter())
        .filter(|(k, _)| near(k.get_ref()))
        .map(|(k, _)| (k.span(), k.get_ref().to_string(), header))
        .collect()
}

/// The configuration table of `doc`, and where its name (or the document) is.
fn table_in<'i>(
    doc: &mut DeTable<'i>,
    section: Section,
) -> Option<(std::ops::Range<usize>, toml::Spanned<DeValue<'i>>)> {
    let outer = match section {
        Section::File => doc,
        Section::Manifest(table) => {
            let name = match table {
                MetadataTable::Workspace => "workspace",
                MetadataTable::Package => "package",
            };
            let DeValue::Table(t) = doc.get_mut(name)?.get_mut() else {
                return None;
            };
            let DeValue::Table(metadata) = t.get_mut("metadata")?.get_mut() else {
                return None;
            };
            metadata
        }
    };
    match outer.remove_entry("nosync-lint") {
        Some((key, value)) => Some((key.span(), value)),
        None if section == Section::File => {
            let whole = std::mem::take(outer);
            Some((0..0, toml::Spanned::new(0..0, DeValue::Table(whole))))
        }
        None => None,
    }
}

pub fn error(sources: &SourceMap, span: SpanIr, msg: String) -> Diagnostic {
    Diagnostic::new(Code::ConfigError, msg, sources.span(span))
}

/// Reads `--config FILE` (through `files`) into the source map and the configuration.
pub fn load_file(
    path: &Path,
    cfg: &mut Config,
    files: &dyn Loader,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let id = sources
        .load(files, path)
        .with_context(|| format!("cannot read config file `{}`", path.display()))?;
    let (read, d) = read(id, Section::File, sources);
    cfg.merge(read);
    diags.extend(d);
    Ok(())
}

/// Adds the `[*.metadata.nosync-lint]` table `table` of manifest `manifest` (its text read
/// through `files`).
pub fn load_manifest(
    manifest: &Path,
    table: MetadataTable,
    cfg: &mut Config,
    files: &dyn Loader,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    if let Ok(id) = sources.load(files, manifest) {
        let (read, d) = read(id, Section::Manifest(table), sources);
        cfg.merge(read);
        diags.extend(d);
    }
}
