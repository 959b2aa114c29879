//! The configuration table as written, read by serde from toml's spanned document: every
//! value a diagnostic may point at is [`Spanned`], and every value that may have the wrong
//! type is [`Checked`], so that one bad value is one located error and the rest of the table
//! is still read. serde ignores unknown keys here; `validate` reports each at its own span,
//! with a "did you mean" (`deny_unknown_fields` would stop at the first, without one).

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use toml::Spanned;

/// The keys of a configuration table.
pub(super) const KEYS: &[&str] = &["roots", "sinks", "allow", "models", "levels"];
/// The keys of a table entry of `roots`, `sinks` or `allow`.
pub(super) const ENTRY_KEYS: &[&str] = &["path", "reason"];

/// `[workspace.metadata.nosync-lint]`, `[package.metadata.nosync-lint]` or a `--config` file.
#[derive(Debug, Default, Deserialize)]
pub(super) struct RawTable {
    pub roots: Option<List>,
    pub sinks: Option<List>,
    pub allow: Option<List>,
    pub levels: Option<Levels>,
}

/// `roots`, `sinks` or `allow`: a list of entries.
pub(super) type List = Spanned<Checked<Vec<Spanned<Checked<RawEntry>>>>>;

/// `levels = { "code" = "level" }`: each code (the key) and its level, both located.
pub(super) type Levels = Spanned<Checked<BTreeMap<Spanned<String>, Spanned<Checked<String>>>>>;

/// A value of type `T`, or serde's account of why the value written is not one (its location
/// is the enclosing [`Spanned`]'s). Deserializing a `Checked` never fails, so neither does the
/// table around it.
#[derive(Debug)]
pub(super) enum Checked<T> {
    Valid(T),
    Invalid(String),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Checked<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match T::deserialize(d) {
            Ok(value) => Checked::Valid(value),
            Err(e) => Checked::Invalid(e.to_string().trim().to_owned()),
        })
    }
}

/// An entry of `roots`, `sinks` or `allow`: a path, or `{ path = "..", reason = ".." }`.
#[derive(Debug)]
pub(super) enum RawEntry {
    Path(String),
    Table(EntryTable),
}

/// `{ path = "..", reason = ".." }`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct EntryTable {
    pub path: Option<Spanned<Checked<String>>>,
    pub reason: Option<Spanned<Checked<String>>>,
}

impl<'de> Deserialize<'de> for RawEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(EntryVisitor)
    }
}

/// A string or a table, deserialized as [`RawEntry`]; anything else is a type error.
struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = RawEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Rust path or a table `{ path = \"..\", reason = \"..\" }`")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawEntry, E> {
        Ok(RawEntry::Path(v.to_owned()))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawEntry, A::Error> {
        EntryTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(RawEntry::Table)
    }
}
