//! The in-memory crate `demo` of the format tests, the engine's analysis of it, and the
//! helpers that render its diagnostics and check what the renderers produce.

use crate::formats_support::assert_valid_sarif;
use cargo_metadata::Message;
use nosync_lint::{Analysis, Format, Report, ReportContext, analyze_crates, render};
use nosync_lint_core::config::Config;
use nosync_lint_core::crate_graph::{CrateSpec, DepTarget};
use nosync_lint_core::diagnostics::{Code, Diagnostic, Origin, Span};
use nosync_lint_core::source::{MemLoader, SourceMap};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub(crate) const LIB: &str = "\
pub mod metrics;

#[nosync::no_sync]
pub fn train_step(stream: &Stream, loss: &Loss) {
    launch(stream);
    metrics::log_progress(stream, loss);
}

#[nosync::no_sync]
pub fn peek_step(stream: &Stream, loss: &Loss) {
    metrics::log_peek(stream, loss);
}
";

pub(crate) const METRICS: &str = "\
// Logging helpers, with a non-ASCII comment: é→ü.
pub fn log_progress(stream: &Stream, loss: &Loss) {
    println!(\"loss {}\", read_loss(stream, loss));
}

#[nosync::synchronizes(reason = \"copies the loss to the host\")]
pub fn read_loss(stream: &Stream, loss: &Loss) -> f32 {
    stream.clone_dtoh(loss)[0]
}

pub fn log_peek(stream: &Stream, loss: &Loss) {
    println!(\"loss {}\", peek_loss(stream, loss));
}

#[nosync::synchronizes(maybe, reason = \"reads the loss when it is ready\")]
pub fn peek_loss(stream: &Stream, loss: &Loss) -> f32 {
    stream.peek(loss)
}
";

/// The files of the crate `demo`, by the path the engine's spans carry.
pub(crate) fn source(path: &Path) -> Option<&'static str> {
    match path.to_str()? {
        "src/lib.rs" => Some(LIB),
        "src/metrics.rs" => Some(METRICS),
        _ => None,
    }
}

/// The span of the `nth` occurrence of `needle` in `file`, as the engine would compute it.
pub(crate) fn span(file: &str, needle: &str) -> Span {
    let text = source(Path::new(file)).unwrap_or("");
    let start = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} in {file}"));
    let end = start + needle.len();
    let line_col = |byte: usize| {
        let before = &text[..byte];
        let line_begin = before.rfind('\n').map_or(0, |i| i + 1);
        (
            before.matches('\n').count() + 1,
            text[line_begin..byte].chars().count() + 1,
        )
    };
    let (line_start, column_start) = line_col(start);
    let (line_end, column_end) = line_col(end);
    Span {
        file: PathBuf::from(file),
        byte_start: start,
        byte_end: end,
        line_start,
        column_start,
        line_end,
        column_end,
    }
}

pub(crate) fn origin() -> Origin {
    Origin {
        package_id: "path+file:///ws/demo#0.1.0".into(),
        package_name: "demo".into(),
        manifest_path: "/ws/demo/Cargo.toml".into(),
        target_name: "demo".into(),
        target_kind: vec!["lib".into()],
        target_src_path: "/ws/demo/src/lib.rs".into(),
    }
}

/// The engine's analysis of the crate `demo` (`/ws/src/lib.rs` = [`LIB`], `src/metrics.rs`
/// = [`METRICS`], in memory, with `nosync` as an external dependency), computed once.
pub(crate) fn analysis() -> &'static Analysis {
    static ANALYSIS: OnceLock<Analysis> = OnceLock::new();
    ANALYSIS.get_or_init(|| {
        let root = PathBuf::from("/ws");
        let mut files = MemLoader::new();
        for file in ["src/lib.rs", "src/metrics.rs"] {
            files.insert(root.join(file), source(Path::new(file)).unwrap_or_default());
        }
        let spec = CrateSpec {
            name: "demo".into(),
            root: root.join("src/lib.rs"),
            features: Default::default(),
            deps: vec![("nosync".into(), DepTarget::External("nosync".into()))],
            check_roots: true,
            origin: origin(),
            versions: Default::default(),
        };
        let sources = SourceMap::new(&root);
        analyze_crates(root, vec![spec], &Config::default(), &files, sources)
    })
}

/// The one diagnostic with `code` the engine reports for `demo`.
pub(crate) fn reported(code: Code) -> Diagnostic {
    let found: Vec<&Diagnostic> = analysis()
        .diagnostics
        .iter()
        .filter(|d| d.code == code)
        .collect();
    let [one] = found[..] else {
        panic!("one {code:?}: {:#?}", analysis().diagnostics);
    };
    one.clone()
}

/// The finding `train_step → log_progress → read_loss`, as the engine reports it.
pub(crate) fn finding() -> Diagnostic {
    reported(Code::SyncInNoSync)
}

/// `diagnostics` rendered in `format`, in the workspace `/ws` (no cargo metadata) with
/// `srcroot` as SARIF's `%SRCROOT%`.
pub(crate) fn render_in(
    diagnostics: &[Diagnostic],
    format: Format,
    srcroot: Option<&Path>,
) -> String {
    let sources = &analysis().sources;
    let workspace = ReportContext {
        manifest_path: Path::new("/ws/Cargo.toml"),
        metadata: None,
        srcroot,
    };
    let report = Report::new(diagnostics, sources, &workspace);
    let mut out = Vec::new();
    let rendered = render(format, &report, &mut out).expect("writing to a Vec");
    assert!(rendered.complete, "every diagnostic rendered");
    String::from_utf8(out).expect("UTF-8 output")
}

/// A diagnostic that is not a finding and has no origin (a config error).
pub(crate) fn config_error() -> Diagnostic {
    Diagnostic::new(
        Code::ConfigError,
        "root `demo::trian_step` matches no function",
        span("src/lib.rs", "pub fn train_step"),
    )
}

/// Everything the renderers produced for `diagnostics`, parsed.
pub(crate) struct Rendered {
    pub(crate) json: String,
    pub(crate) messages: Vec<Message>,
    pub(crate) lines: Vec<Value>,
    pub(crate) sarif: Value,
}

/// Renders `diagnostics` in JSON and SARIF; checks that every JSON line parses as a cargo
/// message and that the SARIF validates against the schema.
pub(crate) fn check(diagnostics: &[Diagnostic]) -> Rendered {
    let plain_json = Format::Json {
        ansi: false,
        short: false,
    };
    let json = render_in(diagnostics, plain_json, None);
    let messages: Vec<Message> = Message::parse_stream(json.as_bytes())
        .collect::<Result<_, _>>()
        .expect("JSON lines parse as cargo messages");
    for message in &messages {
        assert!(
            !matches!(message, Message::TextLine(_)),
            "not a cargo message: {message:?}"
        );
    }
    let lines = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let sarif_text = render_in(diagnostics, Format::Sarif, None);
    let sarif: Value = serde_json::from_str(&sarif_text).expect("SARIF is JSON");
    assert_valid_sarif(&sarif);
    Rendered {
        json,
        messages,
        lines,
        sarif,
    }
}
