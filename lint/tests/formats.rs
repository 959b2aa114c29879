//! The JSON and SARIF renderers over the diagnostics the engine reports for a small in-memory
//! crate (and a hand-built config error and parse errors, for what that crate cannot show):
//! the JSON parses as cargo messages with every field in place, the SARIF validates against
//! the official 2.1.0 schema, and the fingerprints ignore line numbers. Every test goes
//! through [`check`].

use cargo_metadata::Message;
use cargo_metadata::diagnostic::DiagnosticLevel;
use nosync_lint::{Format, SARIF_FINGERPRINT_KEY, cargo_target, workspace_origin};
use nosync_lint_core::diagnostics::explain::explain;
use nosync_lint_core::diagnostics::{Code, Diagnostic, Level, Origin};
use serde_json::Value;
use std::path::Path;

mod formats_support;
use formats_support::{assert_valid_sarif, sarif_validator};

mod formats_input;
use formats_input::{
    LIB, analysis, check, config_error, finding, origin, render_in, reported, span,
};

#[test]
fn json_lines_are_cargo_compiler_messages() {
    let out = check(&[finding(), config_error()]);
    assert_eq!(out.messages.len(), 3, "{}", out.json);
    let Message::CompilerMessage(msg) = &out.messages[0] else {
        panic!("first line: {:?}", out.messages[0]);
    };
    assert_eq!(msg.package_id.repr, "path+file:///ws/demo#0.1.0");
    assert_eq!(out.lines[0]["manifest_path"], "/ws/demo/Cargo.toml");
    assert_eq!(msg.target.name, "demo");
    assert_eq!(msg.target.src_path.as_str(), "/ws/demo/src/lib.rs");
    let d = &msg.message;
    assert_eq!(d.level, DiagnosticLevel::Error);
    let code = d.code.as_ref().expect("code");
    assert_eq!(code.code, "sync-in-no-sync");
    assert_eq!(code.explanation.as_deref(), explain(Code::SyncInNoSync));
    assert!(d.rendered.as_deref().is_some_and(|r| r.contains("reaches")));
    let [primary] = d.spans.as_slice() else {
        panic!("one primary span: {:?}", d.spans);
    };
    assert!(primary.is_primary);
    assert_eq!(primary.file_name, "src/lib.rs");
    assert_eq!((primary.line_start, primary.column_start), (6, 5));
    assert_eq!((primary.line_end, primary.column_end), (6, 40));
    assert_eq!(
        primary.label.as_deref(),
        Some("this call reaches `demo::metrics::read_loss`, which blocks the host")
    );
    let [line] = primary.text.as_slice() else {
        panic!("one text line: {:?}", primary.text);
    };
    assert_eq!(line.text, "    metrics::log_progress(stream, loss);");
    assert_eq!((line.highlight_start, line.highlight_end), (5, 40));
    assert_eq!(
        &LIB[primary.byte_start as usize..primary.byte_end as usize],
        "metrics::log_progress(stream, loss)"
    );
    // One child per hop, each with its span, then the sink at its definition, then the help.
    let levels: Vec<_> = d.children.iter().map(|c| c.level).collect();
    assert_eq!(
        levels,
        [
            DiagnosticLevel::Note,
            DiagnosticLevel::Note,
            DiagnosticLevel::Note,
            DiagnosticLevel::Help
        ]
    );
    let at = |c: usize| {
        (
            d.children[c].spans[0].file_name.as_str(),
            d.children[c].spans[0].line_start,
        )
    };
    assert_eq!(
        [at(0), at(1), at(2)],
        [
            ("src/lib.rs", 6),
            ("src/metrics.rs", 3),
            ("src/metrics.rs", 7)
        ]
    );
    assert_eq!(
        d.children[2].message,
        "`demo::metrics::read_loss` blocks the host: copies the loss to the host"
    );
    assert!(d.children[3].spans.is_empty());
    assert!(matches!(
        out.messages[2],
        Message::BuildFinished(ref f) if !f.success
    ));
}

#[test]
fn json_columns_count_chars_and_span_text_follows_them() {
    let mut d = Diagnostic::new(
        Code::ParseError,
        "expected item",
        span("src/metrics.rs", "é→ü"),
    );
    d.origin = Some(origin());
    let out = check(&[d]);
    let Message::CompilerMessage(msg) = &out.messages[0] else {
        panic!("{:?}", out.messages[0]);
    };
    let span = &msg.message.spans[0];
    // `// Logging helpers, with a non-ASCII comment: ` is 46 chars.
    assert_eq!((span.column_start, span.column_end), (47, 50));
    assert_eq!((span.byte_end - span.byte_start) as usize, "é→ü".len());
    assert_eq!(span.text[0].highlight_start, 47);
    assert_eq!(msg.message.level, DiagnosticLevel::Warning);
}

#[test]
fn json_carries_the_finding_for_machines() {
    let out = check(&[reported(Code::PossibleSyncInNoSync)]);
    let nosync = &out.lines[0]["nosync"];
    assert_eq!(nosync["root"], "demo::peek_step");
    assert_eq!(nosync["sink"], "demo::metrics::peek_loss");
    assert_eq!(nosync["sink_reason"], "reads the loss when it is ready");
    assert_eq!(nosync["confidence"], "exact");
    let chain = nosync["chain"].as_array().expect("chain");
    let hops: Vec<(String, String, u64, u64)> = chain
        .iter()
        .map(|h| {
            (
                h["function"].as_str().unwrap_or("").to_owned(),
                h["file"].as_str().unwrap_or("").to_owned(),
                h["line"].as_u64().unwrap_or(0),
                h["column"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        hops,
        [
            ("demo::peek_step".into(), "src/lib.rs".into(), 11, 5),
            (
                "demo::metrics::log_peek".into(),
                "src/metrics.rs".into(),
                12,
                25
            ),
        ]
    );
    assert_eq!(out.lines[0]["message"]["level"], "warning");
    assert_eq!(out.lines[0]["message"]["$message_type"], "diagnostic");
    assert!(matches!(
        out.messages.last(),
        Some(Message::BuildFinished(f)) if f.success
    ));
}

#[test]
fn json_gives_diagnostics_without_origin_the_workspace_and_a_full_target() {
    let out = check(&[config_error()]);
    let line = &out.lines[0];
    assert_eq!(line["package_id"], "path+file:///ws#workspace");
    assert_eq!(line["manifest_path"], "/ws/Cargo.toml");
    assert_eq!(line["nosync"], Value::Null);
    let target = line["target"].as_object().expect("target");
    let keys: Vec<&str> = target.keys().map(String::as_str).collect();
    for key in [
        "kind",
        "crate_types",
        "name",
        "src_path",
        "edition",
        "doc",
        "doctest",
        "test",
    ] {
        assert!(keys.contains(&key), "target lacks {key}: {keys:?}");
    }
    let span = &line["message"]["spans"][0];
    for key in [
        "file_name",
        "byte_start",
        "byte_end",
        "line_start",
        "line_end",
        "column_start",
        "column_end",
        "is_primary",
        "text",
        "label",
        "suggested_replacement",
        "suggestion_applicability",
        "expansion",
    ] {
        assert!(span.get(key).is_some(), "span lacks {key}: {span}");
    }
}

#[test]
fn allowed_diagnostics_are_not_rendered() {
    // The calls the engine cannot follow (`launch`, methods on values of unknown type).
    let allowed: Vec<Diagnostic> = analysis()
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::UnresolvedCallInNoSync)
        .cloned()
        .collect();
    assert!(!allowed.is_empty());
    assert!(
        allowed.iter().all(|d| d.level == Level::Allow),
        "{allowed:#?}"
    );
    let out = check(&allowed);
    assert_eq!(out.messages.len(), 1, "{}", out.json);
    let results = &out.sarif["runs"][0]["results"];
    assert_eq!(results.as_array().map(Vec::len), Some(0));
}

#[test]
fn target_objects_come_from_cargo_metadata_when_it_knows_the_target() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let metadata = cargo_metadata::MetadataCommand::new()
        .manifest_path(&manifest)
        .no_deps()
        .exec()
        .expect("cargo metadata of this package");
    let origin = workspace_origin(Some(&metadata), &manifest);
    assert_eq!(origin.target_name, "nosync_lint");
    let target = cargo_target(&origin, Some(&metadata));
    assert_eq!(target.kind, ["lib"]);
    assert_eq!(target.edition, "2024");
    assert!(target.doctest && target.doc && target.test);
    let bin = Origin {
        target_name: "cargo-nosync-lint".into(),
        target_kind: vec!["bin".into()],
        ..origin
    };
    let target = cargo_target(&bin, Some(&metadata));
    assert_eq!(
        (target.crate_types.as_slice(), target.doctest),
        (&["bin".to_owned()][..], false)
    );
}

#[test]
fn sarif_validates_and_describes_every_rule() {
    let out = check(&[finding(), config_error()]);
    let run = &out.sarif["runs"][0];
    assert_eq!(out.sarif["version"], "2.1.0");
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "cargo-nosync-lint");
    assert_eq!(driver["version"], nosync_lint::VERSION);
    // No URI that could name a page that does not exist: each rule's help is its text.
    assert!(driver.get("informationUri").is_none(), "{driver}");
    let rules = driver["rules"].as_array().expect("rules");
    let ids: Vec<&str> = rules.iter().filter_map(|r| r["id"].as_str()).collect();
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(ids, codes);
    for (rule, code) in rules.iter().zip(Code::ALL) {
        assert_eq!(rule["help"]["markdown"].as_str(), explain(*code));
        assert!(rule.get("helpUri").is_none(), "{rule}");
        assert_eq!(rule["shortDescription"]["text"], code.summary());
        let full = rule["fullDescription"]["text"].as_str().unwrap_or("");
        assert!(!full.is_empty() && !full.contains("###"), "{full}");
    }
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    for result in results {
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
    }
    let first = &results[0];
    assert_eq!(first["level"], "error");
    assert_eq!(results[1]["level"], "error");
    let location = &first["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "src/lib.rs");
    assert_eq!(location["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    let region = &location["region"];
    assert_eq!(
        [
            &region["startLine"],
            &region["startColumn"],
            &region["endLine"],
            &region["endColumn"]
        ],
        [6, 5, 6, 40]
    );
    let flow = first["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .expect("thread flow");
    assert_eq!(flow.len(), 2, "one location per hop");
    assert_eq!(
        flow[1]["location"]["physicalLocation"]["artifactLocation"]["uri"],
        "src/metrics.rs"
    );
    assert!(results[1].get("codeFlows").is_none());
}

#[test]
fn sarif_schema_check_rejects_invalid_logs() {
    // The validator is live: a wrong level and a missing driver name fail.
    let out = check(&[finding()]);
    let mut bad = out.sarif.clone();
    bad["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!sarif_validator().is_valid(&bad));
    let mut bad = out.sarif;
    if let Some(driver) = bad["runs"][0]["tool"]["driver"].as_object_mut() {
        driver.remove("name");
    }
    assert!(!sarif_validator().is_valid(&bad));
}

#[test]
fn sarif_fingerprints_ignore_lines_but_not_the_chain() {
    let fingerprint = |d: &Diagnostic| {
        let out = check(std::slice::from_ref(d));
        out.sarif["runs"][0]["results"][0]["partialFingerprints"][SARIF_FINGERPRINT_KEY]
            .as_str()
            .expect("fingerprint")
            .to_owned()
    };
    let original = finding();
    let mut moved = original.clone();
    moved.primary.line_start += 10;
    moved.primary.line_end += 10;
    if let Some(f) = moved.finding.as_mut() {
        for hop in &mut f.chain {
            hop.call_site.line_start += 10;
            hop.call_site.line_end += 10;
        }
    }
    let mut rerouted = original.clone();
    if let Some(f) = rerouted.finding.as_mut() {
        f.chain[1].function = "demo::metrics::log_summary".into();
    }
    assert_eq!(fingerprint(&original), fingerprint(&moved));
    assert_ne!(fingerprint(&original), fingerprint(&rerouted));
    assert_ne!(fingerprint(&original), fingerprint(&config_error()));
    assert_eq!(fingerprint(&original).len(), 16);
}

/// Two calls of one helper in a root are two findings with the same chain: the second
/// one's fingerprint gets `:2`, so code scanning does not merge them into one alert.
#[test]
fn sarif_fingerprints_of_findings_sharing_a_chain_are_numbered() {
    let first = finding();
    let mut second = first.clone();
    second.primary.line_start += 1;
    second.primary.line_end += 1;
    let out = check(&[first, second]);
    let prints: Vec<&str> = (0..2)
        .map(|i| {
            out.sarif["runs"][0]["results"][i]["partialFingerprints"][SARIF_FINGERPRINT_KEY]
                .as_str()
                .expect("fingerprint")
        })
        .collect();
    assert_eq!(prints[0].len(), 16, "{prints:?}");
    assert_eq!(prints[1], format!("{}:2", prints[0]), "{prints:?}");
}

#[test]
fn sarif_paths_outside_the_workspace_are_file_uris() {
    let mut d = finding();
    d.primary.file = "/users/me/.cargo/registry/src/candle core/lib.rs".into();
    let log = render_in(&[d], Format::Sarif, Some(Path::new("/ws/demo")));
    let log: Value = serde_json::from_str(&log).expect("SARIF is JSON");
    assert_valid_sarif(&log);
    let run = &log["runs"][0];
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///ws/demo/"
    );
    let artifact = &run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(
        artifact["uri"],
        "file:///users/me/.cargo/registry/src/candle%20core/lib.rs"
    );
    assert!(artifact.get("uriBaseId").is_none());
}

#[test]
fn json_span_text_covers_multi_line_spans_and_survives_bad_offsets() {
    let mut multi = Diagnostic::new(
        Code::MissingModule,
        "spans three lines",
        span(
            "src/metrics.rs",
            "read_loss(stream: &Stream, loss: &Loss) -> f32 {\n    stream.clone_dtoh(loss)[0]\n}",
        ),
    );
    multi.origin = Some(origin());
    let mut bad = config_error();
    bad.primary.byte_start = 10_000;
    bad.primary.byte_end = 10_004;
    let out = check(&[multi, bad]);
    // Errors come first: the warning is found by its message.
    let line = out
        .lines
        .iter()
        .find(|l| l["message"]["message"] == "spans three lines")
        .expect("the multi-line diagnostic");
    let text = &line["message"]["spans"][0]["text"];
    let lines: Vec<(&str, u64, u64)> = text
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["text"].as_str().unwrap_or(""),
                l["highlight_start"].as_u64().unwrap_or(0),
                l["highlight_end"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                "pub fn read_loss(stream: &Stream, loss: &Loss) -> f32 {",
                8,
                56
            ),
            ("    stream.clone_dtoh(loss)[0]", 1, 31),
            ("}", 1, 2),
        ]
    );
    // The error whose span lies past its file's end: no text, no panic.
    assert_eq!(
        out.lines[0]["message"]["spans"][0]["text"],
        Value::Array(vec![])
    );
}
