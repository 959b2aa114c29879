//! `[[flag]]` entries: a library's process-wide switch, its default and its setters.

use super::{Reader, Value};
use crate::known::models::Flag;
use toml::de::DeValue;

const FLAG_KEYS: &[&str] = &["path", "default", "set_by", "versions", "reason"];

impl Reader {
    pub(super) fn flags(&mut self, list: &Value<'_>) -> Vec<Flag> {
        let Some(items) = self.array(list, "`flag`") else {
            return Vec::new();
        };
        items.iter().filter_map(|item| self.flag(item)).collect()
    }

    fn flag(&mut self, item: &Value<'_>) -> Option<Flag> {
        let t = self.table(item, "an entry of `flag`")?;
        self.unknown_keys(t, FLAG_KEYS, " in an entry of `flag`");
        let mut required = |key: &str| {
            let v = t.get(key);
            if v.is_none() {
                self.error(item.span(), format!("an entry of `flag` has no `{key}`"));
            }
            v
        };
        let (path_v, default_v, set_v, reason_v) = (
            required("path"),
            required("default"),
            required("set_by"),
            required("reason"),
        );
        let (path_v, default_v, set_v, reason_v) = (path_v?, default_v?, set_v?, reason_v?);
        let path = self.path(path_v)?;
        let default = match default_v.get_ref() {
            DeValue::Boolean(b) => *b,
            other => {
                let found = other.type_str();
                let message = format!("`default` must be true or false, not {found}");
                self.error(default_v.span(), message);
                return None;
            }
        };
        let mut set_by = Vec::new();
        for v in self.array(set_v, "`set_by`")? {
            set_by.push(self.path(v)?);
        }
        if set_by.is_empty() {
            let message = "`set_by` lists the functions that change the flag: at least one";
            self.error(set_v.span(), message);
            return None;
        }
        let versions = match t.get("versions") {
            Some(v) => Some(self.versions(v)?),
            None => None,
        };
        Some(Flag {
            path,
            default,
            set_by,
            versions,
            reason: self.string(reason_v, "`reason`")?,
            span: path_v.span(),
        })
    }
}
