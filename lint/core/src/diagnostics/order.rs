//! The order diagnostics are printed in: by file, line, column, code and message.

use super::Diagnostic;

/// Deterministic order: by file, position, code, message. The files are ranked once (in
/// `Path` order) and compared by rank: comparing paths component by component at every
/// step was most of sorting a run's thousands of diagnostics.
pub fn sort(diags: &mut [Diagnostic]) {
    let ranks = file_ranks(diags);
    let mut order: Vec<u32> = (0..diags.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&diags[a as usize], &diags[b as usize]);
        (
            ranks[a as usize],
            x.primary.line_start,
            x.primary.column_start,
            x.code,
            &x.message,
        )
            .cmp(&(
                ranks[b as usize],
                y.primary.line_start,
                y.primary.column_start,
                y.code,
                &y.message,
            ))
    });
    permute(diags, &order);
}

/// Each diagnostic's file's rank among the diagnostics' files in `Path` order (equal paths,
/// equal ranks). The files' texts are told apart by a hash of their bytes first (paths
/// of the same bytes are equal), so that only the few distinct ones are compared as paths.
fn file_ranks(diags: &[Diagnostic]) -> Vec<u32> {
    use std::collections::{BTreeMap, HashMap};
    use std::path::Path;
    let mut texts: HashMap<&[u8], u32, fnv::FnvBuildHasher> = HashMap::default();
    // One path of each text, in the order first seen.
    let mut distinct: Vec<&Path> = Vec::new();
    let text_of: Vec<u32> = diags
        .iter()
        .map(|d| {
            let file = d.primary.file.as_path();
            *texts
                .entry(file.as_os_str().as_encoded_bytes())
                .or_insert_with(|| {
                    distinct.push(file);
                    (distinct.len() - 1) as u32
                })
        })
        .collect();
    let mut rank: BTreeMap<&Path, u32> = distinct.iter().map(|&p| (p, 0)).collect();
    for (i, r) in rank.values_mut().enumerate() {
        *r = i as u32;
    }
    let of_text: Vec<u32> = distinct.iter().map(|p| rank[p]).collect();
    text_of.iter().map(|&t| of_text[t as usize]).collect()
}

/// Puts `items[order[i]]` at `i` (`order` a permutation), in place.
fn permute<T>(items: &mut [T], order: &[u32]) {
    let mut done = vec![false; items.len()];
    for start in 0..items.len() {
        if done[start] {
            continue;
        }
        // Walk the cycle through `start`: each place takes the item the order puts there.
        let mut at = start;
        loop {
            done[at] = true;
            let from = order[at] as usize;
            if from == start {
                break;
            }
            items.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::{Code, Diagnostic, Span};
    use std::path::PathBuf;

    /// Sorting by ranked files orders as comparing the paths themselves does: `Path`
    /// order (by components, so `a/b` before `a-b` and `a//b` equal to `a/b`), then line,
    /// column, code and message, equal keys kept in their order.
    #[test]
    fn ranked_files_sort_as_the_paths_do() {
        let files = [
            "a-b/x.rs",
            "a/b/x.rs",
            "a//b/x.rs",
            "a/b.rs",
            "b.rs",
            "a/b/x.rs",
        ];
        let mut diags = Vec::new();
        for (i, f) in files.iter().cycle().take(40).enumerate() {
            let mut at = Span::start_of(PathBuf::from(f));
            at.line_start = (i * 7) % 3 + 1;
            let code = [Code::ParseError, Code::MissingModule][i % 2];
            diags.push(Diagnostic::new(code, format!("m{}", i % 4), at));
        }
        let mut expected = diags.clone();
        expected.sort_by(|a, b| {
            let key = |d: &Diagnostic| {
                let p = &d.primary;
                (
                    p.file.clone(),
                    p.line_start,
                    p.column_start,
                    d.code,
                    d.message.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        super::sort(&mut diags);
        assert_eq!(diags, expected);
    }
}
