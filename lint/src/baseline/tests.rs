//! The baseline's unit tests: writing, reading, matching, counts.

use super::*;
use crate::diagnostics::{Confidence, Finding, Hop};

fn span(line: usize) -> Span {
    crate::render::grouped::tests::at("src/lib.rs", line)
}

/// A finding of `code` along `functions` (root first) to `sink`, whose calls are on `line`,
/// `line + 1`, ...
fn finding(code: Code, functions: &[&str], sink: &str, line: usize) -> Diagnostic {
    let chain = functions
        .iter()
        .enumerate()
        .map(|(i, f)| Hop {
            function: (*f).to_owned(),
            call_site: span(line + i),
            confidence: Confidence::Exact,
        })
        .collect();
    let mut d = Diagnostic::new(
        code,
        format!("`{}` reaches `{sink}`", functions[0]),
        span(line),
    );
    d.finding = Some(Finding {
        root: functions[0].to_owned(),
        sink: sink.to_owned(),
        sink_reason: "blocks".into(),
        sink_kind: crate::diagnostics::SinkKind::Blocks,
        chain,
        confidence: Confidence::Exact,
        undecided: Vec::new(),
        runtime: None,
        other_chain_count: 0,
        other_chains: Vec::new(),
    });
    d
}

/// Writes a baseline of `old`, applies it to `new`, returns the kept messages and codes.
fn check(old: &[Diagnostic], new: Vec<Diagnostic>) -> (Vec<(Code, String)>, usize, String) {
    let text = write(old);
    let baseline = Baseline::parse(Path::new("nosync-baseline.toml"), text.clone())
        .expect("written baseline parses");
    let applied = baseline.apply(new);
    let kept = applied
        .diagnostics
        .iter()
        .map(|d| (d.code, d.message.clone()))
        .collect();
    (kept, applied.suppressed, text)
}

#[test]
fn written_file_is_sorted_versioned_and_readable() {
    let old = [
        finding(Code::SyncInNoSync, &["c::z", "c::y"], "c::sink", 3),
        finding(Code::SyncInNoSync, &["c::a"], "c::sink", 9),
        finding(Code::SyncInNoSync, &["c::a"], "c::sink", 20),
    ];
    let text = write(&old);
    assert!(text.contains("version = 1\n"), "{text}");
    let a = text.find("root = \"c::a\"").expect("entry a");
    let z = text.find("root = \"c::z\"").expect("entry z");
    assert!(a < z, "sorted: {text}");
    assert_eq!(
        text.matches("[[finding]]").count(),
        2,
        "deduplicated: {text}"
    );
    assert!(text.contains("via = [\"c::y\"]"), "{text}");
    let keys: BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('[') && !l.is_empty())
        .filter_map(|l| l.split(" = ").next())
        .collect();
    let expected = BTreeSet::from(["version", "code", "root", "via", "sink", "count"]);
    assert_eq!(keys, expected, "only keys, no line numbers: {text}");
    assert!(!text.contains("via = []"), "empty `via` left out: {text}");
}

#[test]
fn moved_findings_stay_suppressed() {
    let old = [finding(
        Code::SyncInNoSync,
        &["c::root", "c::mid"],
        "c::sink",
        3,
    )];
    let new = vec![finding(
        Code::SyncInNoSync,
        &["c::root", "c::mid"],
        "c::sink",
        40,
    )];
    let (kept, suppressed, _) = check(&old, new);
    assert_eq!((kept, suppressed), (vec![], 1));
}

#[test]
fn new_findings_are_kept_and_old_ones_reported_stale() {
    let old = [finding(
        Code::SyncInNoSync,
        &["c::root", "c::mid"],
        "c::sink",
        3,
    )];
    let new = vec![
        finding(Code::SyncInNoSync, &["c::root", "c::other"], "c::sink", 3),
        finding(
            Code::PossibleSyncInNoSync,
            &["c::root", "c::mid"],
            "c::sink",
            3,
        ),
    ];
    let (kept, suppressed, _) = check(&old, new);
    assert_eq!(suppressed, 0);
    let codes: Vec<Code> = kept.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        codes,
        [
            Code::SyncInNoSync,
            Code::PossibleSyncInNoSync,
            Code::StaleBaselineEntry
        ]
    );
}

/// The root's call still reaches the sink, through another path further down: the
/// same violation, so the entry still matches and is not stale.
#[test]
fn a_violation_rerouted_below_the_roots_call_stays_suppressed() {
    let old = [finding(
        Code::SyncInNoSync,
        &["c::root", "c::helper", "c::x"],
        "c::sink",
        3,
    )];
    let new = vec![finding(
        Code::SyncInNoSync,
        &["c::root", "c::helper", "c::y", "c::z"],
        "c::sink",
        3,
    )];
    let (kept, suppressed, _) = check(&old, new);
    assert_eq!((kept, suppressed), (vec![], 1));
}

/// Two calls of the root reach the sink: fixing one leaves the other's entry valid and
/// makes the fixed one's stale.
#[test]
fn each_call_of_the_root_is_its_own_entry() {
    let old = [
        finding(Code::SyncInNoSync, &["c::root", "c::a"], "c::sink", 3),
        finding(Code::SyncInNoSync, &["c::root", "c::b"], "c::sink", 5),
    ];
    let new = vec![finding(
        Code::SyncInNoSync,
        &["c::root", "c::b"],
        "c::sink",
        5,
    )];
    let (kept, suppressed, text) = check(&old, new);
    assert_eq!(text.matches("[[finding]]").count(), 2, "{text}");
    assert_eq!(suppressed, 1);
    let codes: Vec<Code> = kept.iter().map(|(c, _)| *c).collect();
    assert_eq!(codes, [Code::StaleBaselineEntry], "{kept:?}");
}

#[test]
fn stale_entries_point_at_their_entry() {
    let old = [
        finding(Code::SyncInNoSync, &["c::a"], "c::sink", 1),
        finding(Code::SyncInNoSync, &["c::b"], "c::sink", 1),
    ];
    let text = write(&old);
    let baseline =
        Baseline::parse(Path::new("b.toml"), text.clone()).expect("written baseline parses");
    let applied = baseline.apply(vec![finding(Code::SyncInNoSync, &["c::a"], "c::sink", 1)]);
    let [stale] = applied.diagnostics.as_slice() else {
        panic!("one stale entry expected: {:?}", applied.diagnostics);
    };
    let line = text
        .lines()
        .nth(stale.primary.line_start - 1)
        .unwrap_or_default();
    let entry_start = text.find("root = \"c::b\"").expect("entry b");
    assert!(stale.primary.byte_start <= entry_start, "{stale:?}\n{text}");
    assert!(
        line.starts_with("[[finding]]") || line.starts_with("code"),
        "points at `{line}`"
    );
    assert!(stale.message.contains("`c::b`"), "{}", stale.message);
}

#[test]
fn allowed_and_finding_less_diagnostics_are_not_recorded() {
    let mut allowed = finding(Code::SyncInNoSync, &["c::a"], "c::sink", 1);
    allowed.level = Level::Allow;
    let parse = Diagnostic::new(Code::ParseError, "expected `;`", span(2));
    let text = write(&[allowed, parse.clone()]);
    assert!(!text.contains("[[finding]]"), "{text}");
    let (kept, _, _) = check(&[], vec![parse]);
    assert_eq!(kept, [(Code::ParseError, "expected `;`".to_owned())]);
}

#[test]
fn bad_files_are_located_errors() {
    let err = Baseline::parse(Path::new("b.toml"), "version = 2\n".into()).unwrap_err();
    assert!(format!("{err:#}").contains("version 2"), "{err:#}");
    let err = Baseline::parse(
        Path::new("b.toml"),
        "version = 1\n[[finding]]\ncode = 1\n".into(),
    )
    .unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains("b.toml") && text.contains("line 3"), "{text}");
    let err = Baseline::parse(Path::new("b.toml"), "version = 1\nextra = 1\n".into()).unwrap_err();
    assert!(format!("{err:#}").contains("extra"), "{err:#}");
}

/// A second finding of a baselined chain (the root's call reaches the sink twice, or a new
/// call of the same callee) is new: the entry counts one.
#[test]
fn a_finding_past_its_entry_s_count_is_new() {
    let old = [finding(Code::SyncInNoSync, &["c::root"], "c::sink", 3)];
    let new = vec![
        finding(Code::SyncInNoSync, &["c::root"], "c::sink", 3),
        finding(Code::SyncInNoSync, &["c::root"], "c::sink", 9),
    ];
    let (kept, suppressed, text) = check(&old, new);
    assert!(text.contains("count = 1\n"), "{text}");
    assert_eq!(suppressed, 1);
    assert_eq!(
        kept,
        [(Code::SyncInNoSync, "`c::root` reaches `c::sink`".to_owned())]
    );
}

/// Two findings of one chain are one entry of count 2; with one of them fixed, the entry
/// is stale (its count is too high) and the other stays suppressed.
#[test]
fn fewer_findings_than_counted_make_the_entry_stale() {
    let twice = || [3, 9].map(|line| finding(Code::SyncInNoSync, &["c::root"], "c::sink", line));
    let (kept, suppressed, text) = check(&twice(), twice().into());
    assert_eq!(text.matches("[[finding]]").count(), 1, "{text}");
    assert!(text.contains("count = 2\n"), "{text}");
    assert_eq!((kept.len(), suppressed), (0, 2));
    let one = vec![finding(Code::SyncInNoSync, &["c::root"], "c::sink", 3)];
    let (kept, suppressed, _) = check(&twice(), one);
    assert_eq!(suppressed, 1);
    let expected =
        "baseline accepts 2 findings of `c::root` reaching `c::sink` this way; the run has 1";
    assert_eq!(kept, [(Code::StaleBaselineEntry, expected.to_owned())]);
}

/// An entry written before counts were recorded has no `count`: it accepts any number.
#[test]
fn an_entry_without_a_count_accepts_any_number() {
    let text = "version = 1\n\n[[finding]]\ncode = \"sync-in-no-sync\"\nroot = \"c::root\"\nsink = \"c::sink\"\n";
    let baseline = Baseline::parse(Path::new("b.toml"), text.to_owned()).expect("parses");
    let new = [3, 9, 12].map(|line| finding(Code::SyncInNoSync, &["c::root"], "c::sink", line));
    let applied = baseline.apply(new.into());
    assert_eq!((applied.diagnostics.len(), applied.suppressed), (0, 3));
}
