//! Every check of a configuration table, in one place: unknown keys (at the key, with a
//! "did you mean"), the kind of each value, the path syntax of `roots`, `sinks` and
//! `allow`, and the codes and levels of `levels`. What passes becomes the typed [`Config`];
//! each problem is a located `config-error`, and the rest of the table is still read.

use super::schema::{Checked, ENTRY_KEYS, KEYS, Levels, List, RawEntry, RawTable};
use super::{Config, Entry, LevelEntry, ModelEntry, path};
use crate::diagnostics::suggest::closest;
use crate::diagnostics::{Code, Diagnostic};
use crate::levels::{self, LevelError};
use crate::source::{FileId, SourceMap, SpanIr};
use serde::Deserialize;
use serde::de::IntoDeserializer;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The file being read, for locating diagnostics.
pub(super) struct Cx<'a> {
    pub file: FileId,
    pub sources: &'a SourceMap,
}

impl Cx<'_> {
    fn span(&self, r: Range<usize>) -> SpanIr {
        SpanIr {
            file: self.file,
            lo: r.start as u32,
            hi: r.end as u32,
        }
    }

    pub(super) fn error(&self, r: Range<usize>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Code::ConfigError, message, self.sources.span(self.span(r)))
    }
}

/// Checks the configuration table `value`, named at `name_at`.
pub(super) fn table(
    name_at: Range<usize>,
    value: Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
) -> (Config, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let DeValue::Table(t) = value.get_ref() else {
        let d = cx.error(name_at, "the nosync-lint configuration must be a table");
        return (Config::default(), vec![d]);
    };
    unknown_keys(t, cx, &mut diags);
    let models = t.get("models").map(|v| models(v, cx, &mut diags));
    // Every value of `RawTable` is `Checked`: reading a table cannot fail.
    let raw = RawTable::deserialize(value.into_deserializer()).unwrap_or_default();
    let cfg = Config {
        roots: list(raw.roots, "roots", cx, &mut diags),
        sinks: list(raw.sinks, "sinks", cx, &mut diags),
        allow: list(raw.allow, "allow", cx, &mut diags),
        models: models.unwrap_or_default(),
        levels: levels(raw.levels, cx, &mut diags),
    };
    (cfg, diags)
}

/// The keys of the table, and of the tables in its lists, that serde ignored.
fn unknown_keys(t: &DeTable<'_>, cx: &Cx<'_>, diags: &mut Vec<Diagnostic>) {
    for (key, value) in t {
        let name: &str = key.get_ref();
        if !KEYS.contains(&name) {
            diags.push(unknown_key(key, "", KEYS, cx));
            continue;
        }
        if name == "models" {
            continue; // its keys are checked where it is read
        }
        let DeValue::Array(items) = value.get_ref() else {
            continue;
        };
        let entry_tables = items.iter().filter_map(|item| match item.get_ref() {
            DeValue::Table(entry) => Some(entry),
            _ => None,
        });
        for entry in entry_tables {
            let unknown = entry
                .keys()
                .filter(|k| !ENTRY_KEYS.contains(&&**k.get_ref()));
            let place = format!(" in an entry of `{name}`");
            diags.extend(unknown.map(|k| unknown_key(k, &place, ENTRY_KEYS, cx)));
        }
    }
}

fn unknown_key(
    key: &Spanned<std::borrow::Cow<'_, str>>,
    place: &str,
    known: &[&str],
    cx: &Cx<'_>,
) -> Diagnostic {
    let name: &str = key.get_ref();
    let message = format!(
        "unknown key `{name}`{place} (expected one of: {})",
        known.join(", ")
    );
    with_suggestion(cx.error(key.span(), message), name, known.iter().copied())
}

fn with_suggestion<'a>(
    d: Diagnostic,
    wrong: &str,
    known: impl IntoIterator<Item = &'a str>,
) -> Diagnostic {
    match closest(wrong, known) {
        Some(near) => d.with_help(format_args!("did you mean `{near}`?")),
        None => d,
    }
}

/// `roots`, `sinks` or `allow` (named `key`): its valid entries.
fn list(raw: Option<List>, key: &str, cx: &Cx<'_>, diags: &mut Vec<Diagnostic>) -> Vec<Entry> {
    let Some(raw) = raw else {
        return Vec::new();
    };
    let at = raw.span();
    match raw.into_inner() {
        Checked::Valid(items) => items
            .into_iter()
            .filter_map(|item| entry(item, key, cx, diags))
            .collect(),
        Checked::Invalid(why) => {
            let message = format!("`{key}` must be a list of Rust paths");
            diags.push(cx.error(at, message).with_note(why, None));
            Vec::new()
        }
    }
}

fn entry(
    item: Spanned<Checked<RawEntry>>,
    key: &str,
    cx: &Cx<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Entry> {
    let at = item.span();
    let (text, text_at, reason) = match item.into_inner() {
        Checked::Valid(RawEntry::Path(text)) => (text, at, None),
        Checked::Valid(RawEntry::Table(t)) => {
            let reason = t.reason.and_then(|r| string(r, "reason", key, cx, diags));
            let Some(path) = t.path else {
                diags.push(cx.error(at, format!("an entry of `{key}` has no `path`")));
                return None;
            };
            let path_at = path.span();
            (string(path, "path", key, cx, diags)?, path_at, reason)
        }
        Checked::Invalid(why) => {
            let message = format!("`{key}` entries must be strings or tables");
            diags.push(cx.error(at, message).with_note(why, None));
            return None;
        }
    };
    let d = match crate::panics::catch(|| path::parse(&text)) {
        Ok(Ok(path)) => {
            let span = cx.span(text_at);
            return Some(Entry { path, reason, span });
        }
        Ok(Err(why)) => cx.error(text_at, format!("`{text}` {why}")),
        Err(caught) => {
            let subject = format!("the configured path `{text}`");
            let at = cx.sources.span(cx.span(text_at));
            caught.diagnostic("reading", &subject, "it is not applied", at)
        }
    };
    diags.push(d);
    None
}

/// The string `field` (`path`, `reason`) of a table entry of `key`.
fn string(
    value: Spanned<Checked<String>>,
    field: &str,
    key: &str,
    cx: &Cx<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    let at = value.span();
    match value.into_inner() {
        Checked::Valid(s) => Some(s),
        Checked::Invalid(why) => {
            let message = format!("the `{field}` of an entry of `{key}` must be a string");
            diags.push(cx.error(at, message).with_note(why, None));
            None
        }
    }
}

/// `models = [{ path = "..", .. }]`: the valid models, read as the shipped ones are.
fn models(
    value: &Spanned<DeValue<'_>>,
    cx: &Cx<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<ModelEntry> {
    let (models, errors) = crate::known::models::read_entries(value);
    for e in errors {
        let d = cx.error(e.span, e.message);
        diags.push(match e.help {
            Some(help) => d.with_help(help),
            None => d,
        });
    }
    models
        .into_iter()
        .map(|model| ModelEntry {
            span: cx.span(model.span.clone()),
            model,
        })
        .collect()
}

/// `levels = { "code" = "level" }`: its valid entries.
fn levels(raw: Option<Levels>, cx: &Cx<'_>, diags: &mut Vec<Diagnostic>) -> Vec<LevelEntry> {
    let Some(raw) = raw else {
        return Vec::new();
    };
    let at = raw.span();
    match raw.into_inner() {
        Checked::Valid(table) => {
            // In the order written (the map is sorted by code).
            let mut entries: Vec<_> = table.into_iter().collect();
            entries.sort_by_key(|(code, _)| code.span().start);
            let entries = entries.into_iter();
            entries
                .filter_map(|(code, level)| level_entry(code, level, cx, diags))
                .collect()
        }
        Checked::Invalid(why) => {
            let message = "`levels` must be a table of codes and levels, like \
                           `{ \"sync-in-no-sync\" = \"warn\" }`";
            diags.push(cx.error(at, message).with_note(why, None));
            Vec::new()
        }
    }
}

/// The names a level may be written as (`warning`, `forbid`, `error` are accepted too).
const LEVEL_NAMES: &[&str] = &["allow", "warn", "deny"];

fn level_entry(
    code: Spanned<String>,
    level: Spanned<Checked<String>>,
    cx: &Cx<'_>,
    diags: &mut Vec<Diagnostic>,
) -> Option<LevelEntry> {
    let target = levels::parse_target(code.get_ref()).map_err(|e| {
        let d = level_error(&e, code.span(), cx);
        diags.push(match levels::closest_code(code.get_ref()) {
            Some(near) => d.with_help(format_args!("did you mean `{near}`?")),
            None => d,
        });
    });
    let level_at = level.span();
    let parsed = match level.into_inner() {
        Checked::Valid(name) => levels::parse_level(code.get_ref(), &name).map_err(|e| {
            let wrong = name.trim().to_ascii_lowercase();
            let d = level_error(&e, level_at, cx);
            diags.push(with_suggestion(d, &wrong, LEVEL_NAMES.iter().copied()));
        }),
        Checked::Invalid(why) => {
            let message = format!(
                "the level of `{}` must be a string: `allow`, `warn` or `deny`",
                code.get_ref()
            );
            diags.push(cx.error(level_at, message).with_note(why, None));
            Err(())
        }
    };
    Some(LevelEntry {
        target: target.ok()?,
        level: parsed.ok()?,
        span: cx.span(code.span()),
    })
}

fn level_error(e: &LevelError, at: Range<usize>, cx: &Cx<'_>) -> Diagnostic {
    cx.error(at, e.to_string())
        .with_label("in this `levels` entry")
}
