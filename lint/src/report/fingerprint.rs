//! The fingerprint of a diagnostic: an identity that survives unrelated edits (SARIF's
//! `partialFingerprints`). A finding's is a 64-bit FNV-1a hash of its baseline identity
//! ([`Entry`]: code, root, functions on the chain, sink); a diagnostic that is not a
//! finding hashes its code, file (as a URI) and message. Line numbers never enter it.

use crate::baseline::Entry;
use crate::diagnostics::Diagnostic;
use std::collections::HashMap;
use std::hash::Hasher;

/// The fingerprint of `diagnostic`: 16 hex digits.
pub(crate) fn of(diagnostic: &Diagnostic) -> String {
    let fields: Vec<String> = match Entry::of(diagnostic) {
        Some(entry) => [entry.code, entry.root]
            .into_iter()
            .chain(entry.via)
            .chain([entry.sink])
            .collect(),
        None => vec![
            diagnostic.code.as_str().to_owned(),
            super::uri::file_uri(&diagnostic.primary.file).0,
            diagnostic.message.clone(),
        ],
    };
    format!("{:016x}", fnv1a64(&fields))
}

/// The fingerprints of `diagnostics`, in order. Two findings can share a chain (a root that
/// calls the same helper twice): the second and later get `:2`, `:3`, .. after the
/// fingerprint, so that each one is distinct.
pub(crate) fn numbered(diagnostics: &[&Diagnostic]) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    diagnostics
        .iter()
        .map(|d| {
            let base = of(d);
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            match *n {
                1 => base,
                n => format!("{base}:{n}"),
            }
        })
        .collect()
}

/// 64-bit FNV-1a over the fields, each followed by a unit separator (so that `["ab", "c"]` and
/// `["a", "bc"]` differ). FNV-1a is specified, so fingerprints stay stable across releases of
/// the lint and of Rust (std's and rustc-hash's hashers make no such promise).
fn fnv1a64(fields: &[String]) -> u64 {
    let mut hash = fnv::FnvHasher::default();
    for field in fields {
        // `write`, not `write_str`: the bytes alone, with no length or terminator added.
        hash.write(field.as_bytes());
        hash.write(&[0x1f]);
    }
    hash.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        // FNV-1a 64 of "" and "a" (without our separator) from the reference implementation.
        let plain = |s: &str| {
            let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
            for &b in s.as_bytes() {
                hash ^= u64::from(b);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            hash
        };
        assert_eq!(plain(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(plain("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(plain("foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv1a64(&["a".into()]), plain("a\u{1f}"));
        assert_ne!(
            fnv1a64(&["ab".into(), "c".into()]),
            fnv1a64(&["a".into(), "bc".into()])
        );
    }
}
