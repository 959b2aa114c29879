//! Configuration: `[workspace.metadata.nosync-lint]`, `[package.metadata.nosync-lint]`
//! and `--config FILE`, each a table with `roots`, `sinks` and `allow` (lists of Rust
//! paths: `krate::f`, `krate::Type::method`, `<krate::Type as krate::Trait>::method`;
//! a sink may be `{ path = "..", reason = ".." }`). Every entry keeps its location in
//! the TOML text, so that a path matching nothing is reported where it is written.

use crate::diagnostics::{Code, Diagnostic};
use crate::source::{FileId, Loader, SourceMap, SpanIr};
use std::path::Path;

/// One configured path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: String,
    pub reason: Option<String>,
    /// Where the path string is written.
    pub span: SpanIr,
}

/// The merged configuration.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub roots: Vec<Entry>,
    pub sinks: Vec<Entry>,
    pub allow: Vec<Entry>,
    /// `levels = { code = "deny" }`, passed through for the level overrides.
    pub levels: Vec<(String, String, SpanIr)>,
}

const KEYS: &[&str] = &["roots", "sinks", "allow", "levels"];

impl Config {
    /// Adds the table `value` read from file `file` (already in the source map).
    pub fn add_table(
        &mut self,
        value: &serde_json::Value,
        file: FileId,
        sources: &SourceMap,
        diags: &mut Vec<Diagnostic>,
    ) {
        let text = &sources.file(file).text;
        let locate = |needle: &str| locate(text, needle, file);
        let Some(table) = value.as_object() else {
            diags.push(error(
                sources,
                locate("nosync-lint"),
                "the nosync-lint configuration must be a table".into(),
            ));
            return;
        };
        for (key, v) in table {
            let list = match key.as_str() {
                "roots" => &mut self.roots,
                "sinks" => &mut self.sinks,
                "allow" => &mut self.allow,
                "levels" => {
                    for (code, level) in v.as_object().into_iter().flatten() {
                        let level = level.as_str().unwrap_or_default().to_owned();
                        self.levels.push((code.clone(), level, locate(code)));
                    }
                    continue;
                }
                other => {
                    let msg = format!(
                        "unknown key `{other}` (expected one of: {})",
                        KEYS.join(", ")
                    );
                    let mut d = error(sources, locate(other), msg);
                    if let Some(key) =
                        crate::diagnostics::suggest::closest(other, KEYS.iter().copied())
                    {
                        d = d.with_help(format_args!("did you mean `{key}`?"));
                    }
                    diags.push(d);
                    continue;
                }
            };
            entries(v, key, &locate, sources, list, diags);
        }
    }
}

fn entries(
    v: &serde_json::Value,
    key: &str,
    locate: &dyn Fn(&str) -> SpanIr,
    sources: &SourceMap,
    out: &mut Vec<Entry>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(items) = v.as_array() else {
        diags.push(error(
            sources,
            locate(key),
            format!("`{key}` must be a list of Rust paths"),
        ));
        return;
    };
    for item in items {
        let (path, reason) = match item {
            serde_json::Value::String(s) => (s.clone(), None),
            serde_json::Value::Object(o) => match o.get("path").and_then(|p| p.as_str()) {
                Some(p) => (
                    p.to_owned(),
                    o.get("reason").and_then(|r| r.as_str()).map(str::to_owned),
                ),
                None => {
                    diags.push(error(
                        sources,
                        locate(key),
                        format!("an entry of `{key}` has no `path`"),
                    ));
                    continue;
                }
            },
            _ => {
                diags.push(error(
                    sources,
                    locate(key),
                    format!("`{key}` entries must be strings or tables"),
                ));
                continue;
            }
        };
        let span = locate(&path);
        out.push(Entry { path, reason, span });
    }
}

/// The span of `needle` as a quoted string (or bare key) in the TOML text.
fn locate(text: &str, needle: &str, file: FileId) -> SpanIr {
    let quoted = format!("\"{needle}\"");
    let single = format!("'{needle}'");
    let (at, len) = text
        .find(&quoted)
        .or_else(|| text.find(&single))
        .map(|i| (i, quoted.len()))
        .or_else(|| text.find(needle).map(|i| (i, needle.len())))
        .unwrap_or((0, 0));
    SpanIr {
        file,
        lo: at as u32,
        hi: (at + len) as u32,
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
    let text = sources.file(id).text.clone();
    match toml::from_str::<toml::Table>(&text) {
        Ok(table) => {
            let table = table
                .get("nosync-lint")
                .and_then(|t| t.as_table())
                .cloned()
                .unwrap_or(table);
            let value = serde_json::to_value(&table).unwrap_or_default();
            cfg.add_table(&value, id, sources, diags);
        }
        Err(e) => {
            let r = e.span().unwrap_or(0..0);
            let span = SpanIr {
                file: id,
                lo: r.start as u32,
                hi: r.end as u32,
            };
            diags.push(error(
                sources,
                span,
                format!("invalid TOML: {}", e.message()),
            ));
        }
    }
    Ok(())
}

/// Adds a `[*.metadata.nosync-lint]` table of manifest `manifest` (its text read through
/// `files`, for the locations).
pub fn load_manifest_table(
    manifest: &Path,
    value: &serde_json::Value,
    cfg: &mut Config,
    files: &dyn Loader,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    if let Ok(id) = sources.load(files, manifest) {
        cfg.add_table(value, id, sources, diags);
    }
}
