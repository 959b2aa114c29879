//! `[[variant]]` entries: a trait method whose impl for one type returns one enum variant.

use super::{Reader, Value};
use crate::known::models::Variant;

const VARIANT_KEYS: &[&str] = &["path", "for", "returns", "versions", "reason", "source"];

impl Reader {
    pub(super) fn variants(&mut self, list: &Value<'_>) -> Vec<Variant> {
        let Some(items) = self.array(list, "`variant`") else {
            return Vec::new();
        };
        items.iter().filter_map(|item| self.variant(item)).collect()
    }

    fn variant(&mut self, item: &Value<'_>) -> Option<Variant> {
        let t = self.table(item, "an entry of `variant`")?;
        self.unknown_keys(t, VARIANT_KEYS, " in an entry of `variant`");
        let mut required = |key: &str| {
            let v = t.get(key);
            if v.is_none() {
                self.error(item.span(), format!("an entry of `variant` has no `{key}`"));
            }
            v
        };
        let (path_v, for_v, returns_v, reason_v) = (
            required("path"),
            required("for"),
            required("returns"),
            required("reason"),
        );
        let (path_v, for_v, returns_v, reason_v) = (path_v?, for_v?, returns_v?, reason_v?);
        let path = self.path(path_v)?;
        let for_text = self.string(for_v, "`for`")?;
        let (for_ref, for_ty) = match for_text.strip_prefix('&') {
            Some(ty) => (true, ty.trim_start().to_owned()),
            None => (false, for_text),
        };
        if !(for_ty.split("::").count() >= 2 && for_ty.split("::").all(super::is_ident)) {
            let message = format!("`for` is a type by its path, `&` or not, not `{for_ty}`");
            self.error(for_v.span(), message);
            return None;
        }
        let returns = self.path(returns_v)?;
        let versions = match t.get("versions") {
            Some(v) => Some(self.versions(v)?),
            None => None,
        };
        let source = match t.get("source") {
            Some(v) => Some(self.source(v)?),
            None => None,
        };
        Some(Variant {
            path,
            for_ty,
            for_ref,
            returns,
            versions,
            reason: self.string(reason_v, "`reason`")?,
            source,
            span: path_v.span(),
        })
    }
}
