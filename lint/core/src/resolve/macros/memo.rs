//! Expansions kept by content, within a run and between runs (`expansions.bin` beside the
//! cache of lowered files, through [`SharedCache`]): what expanding one invocation with one
//! definition gives is a function of the definition's rules, the invocation's tokens, what
//! `$crate` becomes, the `#[cfg]` context, the position and the directories a `mod x;` of
//! the expansion is looked for in, so that is the key. Every span of an expansion is the
//! invocation's ([`crate::parse::lower_macro::lower_expansion`]), so an entry is stored
//! without spans and comes back with every span at the invocation as it stands in this run
//! ([`with_fixed_span`]): a line inserted above it moves them all.

use crate::parse::cfg::CfgCtx;
use crate::parse::ir::{MacroCallIr, SpanIr};
use crate::parse::lower_macro::{Expanded, Position};
use crate::source::{Key, SharedCache, with_fixed_span};

/// What one definition made of one invocation: `None` when no rule matched, else the
/// length of the text, the rule that matched, and the lowered expansion (`None` when the
/// text does not parse as items of its position).
pub(super) type Outcome = Option<(usize, usize, Option<Expanded>)>;

/// The digest of a definition's rules as written (the first part of every key).
pub(super) fn rules_key(rules: &str) -> Key {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(b"macro_rules");
    h.update(rules.as_bytes());
    h.digest128()
}

/// The key of expanding `call` with the definition `rules` (its [`rules_key`]), `$crate`
/// as `krate`, in `cfg`, at `pos`.
pub(super) fn key(rules: Key, call: &MacroCallIr, krate: &str, cfg: &CfgCtx, pos: Position) -> Key {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut field = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(b"expansion");
    field(&rules.to_le_bytes());
    field(call.tokens.as_bytes());
    field(krate.as_bytes());
    field(&[pos as u8, u8::from(cfg.test)]);
    field(call.mod_dir.as_os_str().as_encoded_bytes());
    field(call.path_base.as_os_str().as_encoded_bytes());
    let mut features: Vec<&str> = cfg.features.iter().map(String::as_str).collect();
    features.sort_unstable();
    field(&features.len().to_le_bytes());
    for f in features {
        field(f.as_bytes());
    }
    field(&cfg.target.key().to_le_bytes());
    h.digest128()
}

/// The outcome stored under `key`, every span at `at`; `None` when absent or unreadable.
pub(super) fn get(cache: &SharedCache, key: Key, at: SpanIr) -> Option<Outcome> {
    let bytes = cache.get(key)?;
    with_fixed_span(at, || postcard::from_bytes(&bytes)).ok()
}

/// Stores `outcome` under `key` when every span in it is `at` (else nothing is stored).
pub(super) fn put(cache: &SharedCache, key: Key, outcome: &Outcome, at: SpanIr) {
    if let Ok(bytes) = with_fixed_span(at, || postcard::to_stdvec(outcome)) {
        cache.insert(key, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ir::{Item, MacroCallIr};
    use crate::source::LoweredCache;
    use std::path::PathBuf;

    fn call(tokens: &str, lo: u32) -> MacroCallIr {
        MacroCallIr {
            path: vec!["m".to_owned()],
            tokens: tokens.to_owned(),
            span: SpanIr {
                file: 0,
                lo,
                hi: lo + 10,
            },
            mod_dir: PathBuf::from("/w/src"),
            path_base: PathBuf::from("/w/src"),
        }
    }

    /// Each input of an expansion changes the key; where the invocation stands does not.
    #[test]
    fn every_input_is_in_the_key_but_the_position_in_the_file() {
        let (cfg, rules) = (CfgCtx::default(), rules_key("() => {}"));
        let base = key(rules, &call("a", 0), "crate", &cfg, Position::Module);
        assert_eq!(
            base,
            key(rules, &call("a", 99), "crate", &cfg, Position::Module)
        );
        let other_rules = rules_key("() => {fn f() {}}");
        let mut in_dir = call("a", 0);
        in_dir.mod_dir = PathBuf::from("/w/src/x");
        let mut based = call("a", 0);
        based.path_base = PathBuf::from("/w");
        let mut featured = CfgCtx::default();
        featured.features.insert("cuda".to_owned());
        let windows = CfgCtx {
            target: std::sync::Arc::new(crate::parse::cfg::TargetCfg::new([(
                "windows".to_owned(),
                None,
            )])),
            ..CfgCtx::default()
        };
        let keys = [
            key(rules, &call("a", 0), "crate", &windows, Position::Module),
            key(other_rules, &call("a", 0), "crate", &cfg, Position::Module),
            key(rules, &call("b", 0), "crate", &cfg, Position::Module),
            key(rules, &call("a", 0), ":: gpu", &cfg, Position::Module),
            key(rules, &call("a", 0), "crate", &featured, Position::Module),
            key(rules, &call("a", 0), "crate", &cfg, Position::Impl),
            key(rules, &in_dir, "crate", &cfg, Position::Module),
            key(rules, &based, "crate", &cfg, Position::Module),
        ];
        for (i, k) in keys.iter().enumerate() {
            assert_ne!(*k, base, "input {i}");
        }
    }

    /// An entry comes back with every span at the invocation as it stands now; one holding
    /// another span is not stored.
    #[test]
    fn spans_come_back_at_the_invocation() {
        let cache = SharedCache::new(LoweredCache::default());
        let (before, after) = (call("a", 0), call("a", 40));
        let item = |span| Item::ExternCrate {
            name: "x".to_owned(),
            alias: None,
            span,
        };
        let made: Outcome = Some((
            7,
            1,
            Some(Expanded {
                items: vec![item(before.span)],
                ..Expanded::default()
            }),
        ));
        put(&cache, 1, &made, before.span);
        let back = get(&cache, 1, after.span).expect("the stored entry");
        let moved = Some((
            7,
            1,
            Some(Expanded {
                items: vec![item(after.span)],
                ..Expanded::default()
            }),
        ));
        assert_eq!(back, moved);
        put(&cache, 2, &made, after.span);
        assert_eq!(get(&cache, 2, after.span), None);
        put(&cache, 3, &None, after.span);
        assert_eq!(get(&cache, 3, before.span), Some(None));
    }
}
