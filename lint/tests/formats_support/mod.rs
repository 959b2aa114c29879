//! Shared by the format tests: the SARIF schema validator and output normalisation.

#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

/// The official SARIF 2.1.0 schema, compiled once.
pub(crate) fn sarif_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sarif-schema-2.1.0.json");
        let text = std::fs::read_to_string(&path).expect("schema copy present");
        // The published schema has one malformed `pattern` (run.language, a stray `]`) that
        // strict regex engines reject; it is replaced by the pattern it evidently means. Nothing
        // this lint writes has a `language` property.
        let broken = r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#;
        assert_eq!(text.matches(broken).count(), 2, "schema copy changed");
        let text = text.replace(broken, r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#);
        let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(&schema)
            .expect("schema compiles")
    })
}

pub(crate) fn assert_valid_sarif(log: &Value) {
    let errors: Vec<String> = sarif_validator()
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF schema violations:\n{}",
        errors.join("\n")
    );
}
