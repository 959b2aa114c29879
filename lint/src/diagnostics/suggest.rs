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

#[cfg(test)]
mod tests {
    use super::closest;

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
