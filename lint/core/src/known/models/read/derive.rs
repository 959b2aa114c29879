//! `[[derive]]` entries: what a derive macro writes that calls need (its constructor).

use super::{Reader, Value};
use crate::known::models::Derive;

const DERIVE_KEYS: &[&str] = &["path", "constructor", "defaults", "reason", "source"];

impl Reader {
    pub(super) fn derives(&mut self, list: &Value<'_>) -> Vec<Derive> {
        let Some(items) = self.array(list, "`derive`") else {
            return Vec::new();
        };
        items.iter().filter_map(|item| self.derive(item)).collect()
    }

    fn derive(&mut self, item: &Value<'_>) -> Option<Derive> {
        let t = self.table(item, "an entry of `derive`")?;
        self.unknown_keys(t, DERIVE_KEYS, " in an entry of `derive`");
        let mut required = |key: &str| {
            let v = t.get(key);
            if v.is_none() {
                self.error(item.span(), format!("an entry of `derive` has no `{key}`"));
            }
            v
        };
        let (path_v, ctor_v, reason_v) = (
            required("path"),
            required("constructor"),
            required("reason"),
        );
        let (path_v, ctor_v, reason_v) = (path_v?, ctor_v?, reason_v?);
        let path = self.path(path_v)?;
        let constructor = self.string(ctor_v, "`constructor`")?;
        if !super::is_ident(&constructor) {
            let message = format!("`{constructor}` is not a function name");
            self.error(ctor_v.span(), message);
            return None;
        }
        let defaults = match t.get("defaults") {
            Some(v) => Some(self.string(v, "`defaults`")?),
            None => None,
        };
        let source = match t.get("source") {
            Some(v) => Some(self.source(v)?),
            None => None,
        };
        Some(Derive {
            path,
            constructor,
            defaults,
            reason: self.string(reason_v, "`reason`")?,
            source,
            span: path_v.span(),
        })
    }
}
