//! Reading models from TOML: the shipped file (`libraries` and `[[model]]`) and the
//! configuration's `models` list, with every check in one place: unknown keys (at the key,
//! with a "did you mean"), value kinds, paths, versions and matchers. Each problem is a
//! [`ReadError`] at its byte range; the rest is still read. `[[flag]]` entries are read in
//! `flag.rs`.

mod derive;
mod flag;
mod variant;

use super::{Library, Matcher, Model, Models, Otherwise, Source, When};
use crate::diagnostics::SinkKind;
use crate::diagnostics::suggest::closest;
use cargo_metadata::semver::{Version, VersionReq};
use std::ops::Range;
use std::sync::Arc;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A problem in a models file or list, at a byte range of its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub span: Range<usize>,
    pub message: String,
    /// A "did you mean".
    pub help: Option<String>,
}

const FILE_KEYS: &[&str] = &["libraries", "model", "flag", "derive", "variant"];
const LIBRARY_KEYS: &[&str] = &["checked"];
const ENTRY_KEYS: &[&str] = &[
    "path", "kind", "reason", "versions", "drop", "when", "follow", "source",
];
const WHEN_KEYS: &[&str] = &["arg", "blocks", "never", "otherwise", "note"];
const MATCHER_KEYS: &[&str] = &["memory", "type", "value", "method"];
const SOURCE_KEYS: &[&str] = &["library", "impl", "fn", "has"];
const KINDS: &[&str] = &["blocks", "may", "setup", "detached"];
const MEMORY: &[&str] = &["pageable", "pinned"];
const OTHERWISE: &[&str] = &["possible", "clean"];

/// Reads a models file: `[libraries.<package>] checked = [..]`, `[[model]]` and `[[flag]]`
/// entries.
pub fn read_file(text: &str) -> (Models, Vec<ReadError>) {
    let mut r = Reader {
        errors: Vec::new(),
        shipped: true,
    };
    let doc = match DeTable::parse(text) {
        Ok(doc) => doc,
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            r.error(span, format!("invalid TOML: {}", e.message()));
            return (Models::default(), r.errors);
        }
    };
    let doc = doc.get_ref();
    r.unknown_keys(doc, FILE_KEYS, "");
    let mut models = Models::default();
    if let Some(libs) = doc.get("libraries").and_then(|v| r.table(v, "`libraries`")) {
        models.libraries = libs.iter().filter_map(|(k, v)| r.library(k, v)).collect();
    }
    if let Some(list) = doc.get("model") {
        models.models = r.entries(list, "model");
    }
    if let Some(list) = doc.get("flag") {
        models.flags = r.flags(list);
    }
    if let Some(list) = doc.get("derive") {
        models.derives = r.derives(list);
    }
    if let Some(list) = doc.get("variant") {
        models.variants = r.variants(list);
    }
    (models, r.errors)
}

/// Reads the configuration's `models`: a list of model tables (no `source`: that is the
/// shipped models' evidence).
pub fn read_entries(value: &Spanned<DeValue<'_>>) -> (Vec<Model>, Vec<ReadError>) {
    let mut r = Reader {
        errors: Vec::new(),
        shipped: false,
    };
    let models = r.entries(value, "models");
    (models, r.errors)
}

struct Reader {
    errors: Vec<ReadError>,
    /// The shipped file: `source` allowed, `reason` required.
    shipped: bool,
}

type Value<'i> = Spanned<DeValue<'i>>;

impl Reader {
    fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.errors.push(ReadError {
            span,
            message: message.into(),
            help: None,
        });
    }

    fn error_near(&mut self, span: Range<usize>, message: String, wrong: &str, known: &[&str]) {
        let help = closest(wrong, known.iter().copied()).map(|n| format!("did you mean `{n}`?"));
        self.errors.push(ReadError {
            span,
            message,
            help,
        });
    }

    fn unknown_keys(&mut self, t: &DeTable<'_>, known: &[&str], place: &str) {
        for key in t.keys() {
            let name: &str = key.get_ref();
            if !known.contains(&name) {
                let message = format!(
                    "unknown key `{name}`{place} (expected one of: {})",
                    known.join(", ")
                );
                self.error_near(key.span(), message, name, known);
            }
        }
    }

    fn table<'v, 'i>(&mut self, v: &'v Value<'i>, what: &str) -> Option<&'v DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Some(t),
            other => {
                let found = other.type_str();
                self.error(v.span(), format!("{what} must be a table, not {found}"));
                None
            }
        }
    }

    fn string(&mut self, v: &Value<'_>, what: &str) -> Option<String> {
        match v.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            other => {
                let found = other.type_str();
                self.error(v.span(), format!("{what} must be a string, not {found}"));
                None
            }
        }
    }

    fn array<'v, 'i>(&mut self, v: &'v Value<'i>, what: &str) -> Option<&'v [Value<'i>]> {
        match v.get_ref() {
            DeValue::Array(a) => Some(a),
            other => {
                let found = other.type_str();
                self.error(v.span(), format!("{what} must be a list, not {found}"));
                None
            }
        }
    }

    /// A string that must be one of `known`.
    fn choice<'k>(&mut self, v: &Value<'_>, what: &str, known: &[&'k str]) -> Option<&'k str> {
        let s = self.string(v, what)?;
        let hit = known.iter().find(|k| **k == s).copied();
        if hit.is_none() {
            let message = format!("{what} must be one of: {}", known.join(", "));
            self.error_near(v.span(), message, &s, known);
        }
        hit
    }

    fn library(
        &mut self,
        name: &Spanned<std::borrow::Cow<'_, str>>,
        v: &Value<'_>,
    ) -> Option<Library> {
        let t = self.table(v, &format!("`libraries.{}`", name.get_ref()))?;
        self.unknown_keys(
            t,
            LIBRARY_KEYS,
            &format!(" in `libraries.{}`", name.get_ref()),
        );
        let checked = match t.get("checked") {
            Some(list) => self.array(list, "`checked`")?,
            None => &[],
        };
        let checked = checked
            .iter()
            .filter_map(|v| {
                let s = self.string(v, "a checked version")?;
                Version::parse(&s)
                    .map_err(|e| self.error(v.span(), format!("`{s}` is not a version: {e}")))
                    .ok()
            })
            .collect();
        Some(Library {
            name: name.get_ref().to_string(),
            checked,
        })
    }

    fn entries(&mut self, list: &Value<'_>, key: &str) -> Vec<Model> {
        let Some(items) = self.array(list, &format!("`{key}`")) else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| self.entry(item, key))
            .collect()
    }

    fn entry(&mut self, item: &Value<'_>, key: &str) -> Option<Model> {
        let t = self.table(item, &format!("an entry of `{key}`"))?;
        let keys = match self.shipped {
            true => ENTRY_KEYS,
            false => &ENTRY_KEYS[..ENTRY_KEYS.len() - 1],
        };
        self.unknown_keys(t, keys, &format!(" in an entry of `{key}`"));
        let Some(path_v) = t.get("path") else {
            self.error(item.span(), format!("an entry of `{key}` has no `path`"));
            return None;
        };
        let path = self.path(path_v)?;
        let kind = match t.get("kind") {
            None => "blocks",
            Some(v) => self.choice(v, "`kind`", KINDS)?,
        };
        let detached = kind == "detached";
        let kind = match kind {
            "may" => SinkKind::May,
            "setup" => SinkKind::Setup,
            _ => SinkKind::Blocks,
        };
        let reason = match t.get("reason") {
            Some(v) => self.string(v, "`reason`")?,
            None if self.shipped => {
                self.error(item.span(), "a shipped model needs a `reason`");
                return None;
            }
            None => "it is modelled in the configuration's `models`".to_owned(),
        };
        let versions = match t.get("versions") {
            Some(v) => Some(self.versions(v)?),
            None => None,
        };
        let on_drop = self.boolean(t, "drop")?;
        let follow = self.boolean(t, "follow")?;
        if follow && (kind != SinkKind::May || on_drop || t.get("when").is_some()) {
            self.error(
                path_v.span(),
                "a `follow` model is `kind = \"may\"`, without `drop` or `when`",
            );
            return None;
        }
        if on_drop && !path.ends_with("::drop") {
            self.error(
                path_v.span(),
                "a `drop` model's path ends in `::drop` (`krate::Type::drop`)",
            );
            return None;
        }
        if detached && (on_drop || t.get("when").is_some()) {
            self.error(
                path_v.span(),
                "a `detached` model waits for nothing: it takes no `drop` or `when`",
            );
            return None;
        }
        let name = path.rsplit("::").next().unwrap_or_default().to_owned();
        let when = match t.get("when") {
            Some(v) => Some(Arc::new(self.when(v, &name)?)),
            None => None,
        };
        let source = match t.get("source") {
            Some(v) => Some(self.source(v)?),
            None => None,
        };
        Some(Model {
            path,
            kind,
            detached,
            reason,
            versions,
            on_drop,
            follow,
            when,
            source,
            span: path_v.span(),
        })
    }

    /// The boolean `key` of table `t` (false when it is absent).
    fn boolean(&mut self, t: &DeTable<'_>, key: &str) -> Option<bool> {
        match t.get(key).map(|v| (v, v.get_ref())) {
            None => Some(false),
            Some((_, DeValue::Boolean(b))) => Some(*b),
            Some((v, other)) => {
                let found = other.type_str();
                self.error(
                    v.span(),
                    format!("`{key}` must be true or false, not {found}"),
                );
                None
            }
        }
    }

    /// A Rust path of two segments or more, each an identifier.
    fn path(&mut self, v: &Value<'_>) -> Option<String> {
        let s = self.string(v, "`path`")?;
        let ok = s.split("::").count() >= 2 && s.split("::").all(is_ident);
        if !ok {
            let message = format!(
                "`{s}` is not a path like `krate::Type::method` or `krate::module::function`"
            );
            self.error(v.span(), message);
            return None;
        }
        Some(s)
    }

    fn versions(&mut self, v: &Value<'_>) -> Option<VersionReq> {
        let s = self.string(v, "`versions`")?;
        VersionReq::parse(&s)
            .map_err(|e| {
                let message =
                    format!("`{s}` is not a version requirement like `>=0.9, <0.12`: {e}");
                self.error(v.span(), message)
            })
            .ok()
    }

    fn when(&mut self, v: &Value<'_>, name: &str) -> Option<When> {
        let t = self.table(v, "`when`")?;
        self.unknown_keys(t, WHEN_KEYS, " in `when`");
        let Some(arg_v) = t.get("arg") else {
            self.error(
                v.span(),
                "`when` needs `arg`: the argument that decides (0-based, not counting `self`)",
            );
            return None;
        };
        let arg = match arg_v.get_ref() {
            DeValue::Integer(i) => i.as_str().parse::<usize>().ok().filter(|n| *n < 64),
            _ => None,
        };
        let Some(arg) = arg else {
            self.error(
                arg_v.span(),
                "`arg` must be an argument's position: 0 to 63, not counting `self`",
            );
            return None;
        };
        let blocks = self.matchers(t.get("blocks"))?;
        let never = self.matchers(t.get("never"))?;
        if blocks.is_empty() && never.is_empty() {
            self.error(
                v.span(),
                "`when` needs `blocks` or `never`: the arguments that decide",
            );
            return None;
        }
        let otherwise = match t.get("otherwise") {
            None => Otherwise::Possible,
            Some(v) => match self.choice(v, "`otherwise`", OTHERWISE)? {
                "clean" => Otherwise::Clean,
                _ => Otherwise::Possible,
            },
        };
        let note = match t.get("note") {
            Some(v) => self.string(v, "`note`")?,
            None => format!(
                "the argument that decides is not known here: `{name}` blocks only for some arguments"
            ),
        };
        Some(When {
            arg,
            blocks,
            never,
            otherwise,
            note,
        })
    }

    fn matchers(&mut self, v: Option<&Value<'_>>) -> Option<Vec<Matcher>> {
        let Some(v) = v else {
            return Some(Vec::new());
        };
        let items = self.array(v, "`blocks` and `never`")?;
        let mut out = Vec::new();
        for item in items {
            out.push(self.matcher(item)?);
        }
        Some(out)
    }

    /// `{ memory = "pageable" }`, `{ type = ".." }`, `{ value = ".." }`, `{ method = ".." }`.
    fn matcher(&mut self, v: &Value<'_>) -> Option<Matcher> {
        let t = self.table(v, "a matcher")?;
        self.unknown_keys(t, MATCHER_KEYS, " in a matcher");
        let mut entries = t
            .iter()
            .filter(|(k, _)| MATCHER_KEYS.contains(&&**k.get_ref()));
        let (Some((key, value)), None) = (entries.next(), entries.next()) else {
            self.error(
                v.span(),
                "a matcher has one key: `memory`, `type`, `value` or `method`",
            );
            return None;
        };
        Some(match &**key.get_ref() {
            "memory" => match self.choice(value, "`memory`", MEMORY)? {
                "pinned" => Matcher::Pinned,
                _ => Matcher::Pageable,
            },
            "type" => Matcher::Type(self.path(value)?),
            "value" => Matcher::Value(self.path(value)?),
            _ => {
                let name = self.string(value, "`method`")?;
                if !is_ident(&name) {
                    self.error(value.span(), format!("`{name}` is not a method name"));
                    return None;
                }
                Matcher::Method(name)
            }
        })
    }

    fn source(&mut self, v: &Value<'_>) -> Option<Source> {
        let t = self.table(v, "`source`")?;
        self.unknown_keys(t, SOURCE_KEYS, " in `source`");
        let mut s = Source::default();
        for (key, value) in t {
            match &**key.get_ref() {
                "library" => s.library = Some(self.string(value, "`source.library`")?),
                "impl" => s.impl_ = Some(self.string(value, "`source.impl`")?),
                "fn" => s.fn_ = Some(self.string(value, "`source.fn`")?),
                "has" => {
                    for item in self.array(value, "`source.has`")? {
                        s.has.push(self.string(item, "an entry of `source.has`")?);
                    }
                }
                _ => {}
            }
        }
        Some(s)
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}
