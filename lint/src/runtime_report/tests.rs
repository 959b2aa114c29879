use super::*;
use crate::pipeline::FnIndex;
use std::path::PathBuf;

const FILE: &str = "/w/src/main.rs";

/// A finding of the root `app::step` whose one hop is its call at line 3, to `sink`.
fn finding(sink: &str, kind: SinkKind) -> Diagnostic {
    let mut d = crate::render::grouped::tests::finding(&[("app::step", FILE)], sink);
    if let Some(f) = d.finding.as_mut() {
        f.sink_kind = kind;
    }
    d
}

/// A report of one site in `app::step`, reached through its line 3, of `api` for `why`.
fn report(api: &str, why: &str) -> WaitReport {
    let text = format!(
        r#"{{ "format": "nosync-wait-report", "version": 1,
  "program": {{ "exe": "/w/app", "pid": 1, "backend": "interpose" }}, "line_tables": true,
  "sites": [ {{ "api": "{api}", "why": "{why}", "in_scope": true,
    "scope": {{ "kind": "no_sync", "function": "app::step", "file": "src/main.rs", "line": 2 }},
    "frames": [ {{ "function": "app::step", "file": "{FILE}", "line": 3 }} ],
    "count": 2, "total_ns": 2000, "max_ns": 1500 }} ] }}"#
    );
    serde_json::from_str(&text).expect("a valid report")
}

/// Which findings (by sink) the one site of `report` confirmed.
fn check(report: &WaitReport) -> Vec<&'static str> {
    let step = IndexedFn {
        path: "app::step".into(),
        file: PathBuf::from(FILE),
        lines: (3, 9),
        analysed: true,
        root: true,
        calls: Vec::new(),
    };
    let index = FnIndex {
        fns: vec![step],
        crates: vec!["app".into()],
    };
    let world = World {
        root: Path::new("/w"),
        index: &index,
    };
    let sinks = [
        ("app::load", SinkKind::Setup),
        ("app::read", SinkKind::Blocks),
    ];
    let mut diagnostics: Vec<Diagnostic> = sinks.iter().map(|(s, k)| finding(s, *k)).collect();
    confirm(&mut diagnostics, report, world);
    let observed = |d: &Diagnostic| {
        let runtime = d.finding.as_ref().and_then(|f| f.runtime);
        matches!(runtime, Some(Runtime::Observed { count: 2, .. }))
    };
    let confirmed = diagnostics.iter().zip(sinks).filter(|(d, _)| observed(d));
    confirmed.map(|(_, (sink, _))| sink).collect()
}

/// The sinks are not among the site's frames (cudarc's frames are left out): both findings
/// match its frames, and the one of its kind takes it.
#[test]
fn a_site_whose_frames_match_two_findings_goes_to_the_one_of_its_kind() {
    let setup = "driver setup work (module load, page-locking, context): stalls the host";
    assert_eq!(check(&report("cuModuleLoadData", setup)), ["app::load"]);
    let copy = "a device-to-host copy into pageable memory";
    assert_eq!(check(&report("cuMemcpyDtoH_v2", copy)), ["app::read"]);
}
