//! "Did you mean": the closest of some known names to a mistyped one, as cargo and
//! rustc suggest (edit distance at most a third of the name's length).

/// Names longer than this are not compared (a hostile config can list very long paths).
const MAX_LEN: usize = 256;

/// The candidate closest to `wrong` by edit distance, if it is close enough: at most
/// `max(1, len / 3)` edits, and not `wrong` itself. Ties go to the first candidate.
pub fn closest<'a>(wrong: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if wrong.len() > MAX_LEN {
        return None;
    }
    let limit = (wrong.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == wrong || c.len() > MAX_LEN || c.len().abs_diff(wrong.len()) > limit {
            continue;
        }
        let d = strsim::levenshtein(wrong, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The diagnostic code (or one of `extra`, such as `warnings`) meant by a mistyped `name`:
/// the [`closest`] by edit distance, else the first whose name starts with it
/// (`setup-sync` for `setup-sync-in-no-sync`).
pub fn closest_code(name: &str, extra: &[&'static str]) -> Option<&'static str> {
    let name = name.trim();
    let names = || (super::Code::ALL.iter().map(|c| c.as_str())).chain(extra.iter().copied());
    closest(name, names()).or_else(|| {
        let long_enough = name.chars().count() >= 4;
        names().find(|n| long_enough && *n != name && n.starts_with(name))
    })
}

/// The name of the lint's table in `[workspace.metadata]` and `[package.metadata]`.
pub const CONFIG_TABLE: &str = "nosync-lint";

/// Whether a key of `[*.metadata]` is the lint's table or looks like a misspelling of it
/// (`nosync_lint`, `nosync-lints`, `no-sync-lint`, `nosnyc-lint`): case, `-`, `_` and
/// spaces aside, at most two edits (a swap of two letters is one).
pub fn config_table_like(key: &str) -> bool {
    if key.len() > MAX_LEN {
        return false;
    }
    let squashed = key.to_lowercase().replace(['-', '_', ' '], "");
    strsim::damerau_levenshtein(&squashed, "nosynclint") <= 2
}

#[cfg(test)]
mod tests {
    use super::{closest, closest_code};

    #[test]
    fn a_mistyped_or_shortened_code_is_suggested() {
        assert_eq!(closest_code("sync-in-nosync", &[]), Some("sync-in-no-sync"));
        assert_eq!(
            closest_code("setup-sync", &[]),
            Some("setup-sync-in-no-sync")
        );
        assert_eq!(closest_code("warning", &["warnings"]), Some("warnings"));
        assert_eq!(closest_code("E0308", &[]), None);
        assert_eq!(closest_code("sync", &[]), Some("sync-in-no-sync"));
        assert_eq!(closest_code("syn", &[]), None);
    }

    #[test]
    fn close_names_are_suggested_and_far_ones_not() {
        let keys = ["roots", "sinks", "allow", "levels"];
        assert_eq!(closest("root", keys), Some("roots"));
        assert_eq!(closest("sinkz", keys), Some("sinks"));
        assert_eq!(closest("allowed", keys), Some("allow"));
        assert_eq!(closest("entries", keys), None);
        assert_eq!(closest("roots", keys), None);
    }
}
