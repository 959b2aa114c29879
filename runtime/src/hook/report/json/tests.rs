use std::panic::Location;
use std::time::Duration;

use super::*;
use crate::SyncSite;

static COPY: SyncSite = SyncSite::does("cuMemcpyDtoH_v2", "a device-to-host copy");
static ODD: SyncSite = SyncSite::does("cuOdd", "say \"hi\" \\ to\ttab\nand\u{1}é→");

fn program() -> Program {
    Program {
        exe: String::from("/srv/app"),
        pid: 7,
        backend: "interpose",
    }
}

fn frame(function: &str, file: Option<&str>, line: Option<u32>) -> Frame {
    Frame {
        function: function.to_owned(),
        file: file.map(str::to_owned),
        line,
    }
}

/// Files as `write` places them with `/w` for the working directory, where only `src/` exists.
fn at_w(file: &str) -> Option<String> {
    match file.strip_prefix("./") {
        Some(rest) => rest.starts_with("src/").then(|| format!("/w/{rest}")),
        None => file.starts_with('/').then(|| file.to_owned()),
    }
}

fn waited(count: usize, total_ms: u64, max_ms: u64) -> Waited {
    Waited {
        count,
        total: Duration::from_millis(total_ms),
        max: Duration::from_millis(max_ms),
    }
}

#[test]
fn strings_are_escaped_as_json_asks() {
    let text = Str("q\"b\\n\nr\rt\tb\u{8}f\u{c}c\u{1}\u{1f}é→😀").to_string();
    assert_eq!(
        text,
        "\"q\\\"b\\\\n\\nr\\rt\\tb\\u0008f\\u000cc\\u0001\\u001fé→😀\""
    );
}

#[test]
fn an_empty_report_has_no_sites_and_claims_no_missing_lines() {
    let expected = "\
{
  \"format\": \"nosync-wait-report\",
  \"version\": 1,
  \"program\": { \"exe\": \"/srv/app\", \"pid\": 7, \"backend\": \"interpose\" },
  \"line_tables\": true,
  \"sites\": []
}
";
    assert_eq!(render(&program(), &[], &at_w), expected);
}

/// The scope opens in this file, where no frame of the site is: the fn is named by its name
/// alone (`a_no_sync_fn_with_line_tables_is_the_frame_of_that_name_in_its_file`).
#[test]
fn a_site_seen_inside_and_outside_a_scope_is_two_entries() {
    let at = Location::caller();
    let site = WaitSite {
        site: &COPY,
        frames: vec![
            frame("app::metrics::loss", Some("./src/metrics.rs"), Some(12)),
            frame("app::train::step", Some("/abs/src/train.rs"), Some(55)),
            frame("app::main", None, None),
            frame("__libc_start_main", Some("./csu/libc-start.c"), Some(360)),
        ],
        scope: Some(WaitScope {
            function: Some("step"),
            location: Some(at),
        }),
        forbidden: waited(3, 6, 3),
        allowed: waited(1, 1, 1),
    };
    let expected = format!(
        "\
{{
  \"format\": \"nosync-wait-report\",
  \"version\": 1,
  \"program\": {{ \"exe\": \"/srv/app\", \"pid\": 7, \"backend\": \"interpose\" }},
  \"line_tables\": true,
  \"sites\": [
    {{
      \"api\": \"cuMemcpyDtoH_v2\",
      \"why\": \"a device-to-host copy\",
      \"in_scope\": true,
      \"scope\": {{ \"kind\": \"no_sync\", \"function\": \"step\", \"file\": \"{file}\", \"line\": {line} }},
      \"frames\": [
        {{ \"function\": \"app::metrics::loss\", \"file\": \"/w/src/metrics.rs\", \"line\": 12 }},
        {{ \"function\": \"app::train::step\", \"file\": \"/abs/src/train.rs\", \"line\": 55 }},
        {{ \"function\": \"app::main\", \"file\": null, \"line\": null }},
        {{ \"function\": \"__libc_start_main\", \"file\": null, \"line\": null }}
      ],
      \"count\": 3,
      \"total_ns\": 6000000,
      \"max_ns\": 3000000
    }},
    {{
      \"api\": \"cuMemcpyDtoH_v2\",
      \"why\": \"a device-to-host copy\",
      \"in_scope\": false,
      \"scope\": null,
      \"frames\": [
        {{ \"function\": \"app::metrics::loss\", \"file\": \"/w/src/metrics.rs\", \"line\": 12 }},
        {{ \"function\": \"app::train::step\", \"file\": \"/abs/src/train.rs\", \"line\": 55 }},
        {{ \"function\": \"app::main\", \"file\": null, \"line\": null }},
        {{ \"function\": \"__libc_start_main\", \"file\": null, \"line\": null }}
      ],
      \"count\": 1,
      \"total_ns\": 1000000,
      \"max_ns\": 1000000
    }}
  ]
}}
",
        file = at.file(),
        line = at.line()
    );
    assert_eq!(render(&program(), &[&site], &at_w), expected);
}

#[test]
fn a_forbid_block_is_located_and_frames_without_lines_say_so() {
    let at = Location::caller();
    let site = WaitSite {
        site: &ODD,
        frames: vec![frame("app::main::{{closure}}", None, None)],
        scope: Some(WaitScope {
            function: None,
            location: Some(at),
        }),
        forbidden: waited(2, 4, 3),
        allowed: Waited::default(),
    };
    let text = render(&program(), &[&site], &at_w);
    let scope = format!(
        "\"scope\": {{ \"kind\": \"forbid\", \"function\": null, \"file\": \"{}\", \"line\": {} }},",
        at.file(),
        at.line()
    );
    assert!(text.contains(&scope), "{text}");
    assert!(text.contains("\"line_tables\": false,"), "{text}");
    assert!(
        text.contains("\"why\": \"say \\\"hi\\\" \\\\ to\\ttab\\nand\\u0001é→\","),
        "{text}"
    );
    assert_eq!(text.matches("\"in_scope\"").count(), 1, "{text}");
}

#[test]
fn a_no_sync_fn_is_named_by_its_innermost_frame_of_that_name() {
    let frames = [
        frame("app::helper", None, None),
        frame("<app::Mlp as app::Layer>::step::{{closure}}", None, None),
        frame("app::outer::step", None, None),
    ];
    assert_eq!(
        fn_path("step", None, &frames),
        "<app::Mlp as app::Layer>::step"
    );
    assert_eq!(fn_path("gone", None, &frames), "gone");
    assert_eq!(trimmed("app::f::h0123456789abcdef"), "app::f");
    assert_eq!(trimmed("app::f::<f32>"), "app::f");
}

#[test]
fn a_no_sync_fn_with_line_tables_is_the_frame_of_that_name_in_its_file() {
    let frames = [
        frame(
            "<cd::Dev as cd::Backend>::synchronize",
            Some("/r/cd/src/dev.rs"),
            Some(812),
        ),
        frame(
            "cd::Device::synchronize",
            Some("/r/cd/src/device.rs"),
            Some(514),
        ),
        frame("app::synchronize", Some("/w/app/src/main.rs"), Some(71)),
        frame("app::main", Some("/w/app/src/main.rs"), Some(171)),
    ];
    let file = Some("src/main.rs");
    assert_eq!(fn_path("synchronize", file, &frames), "app::synchronize");
    // A frame's file from the working directory, the scope's from the workspace root.
    let here = [frame("app::synchronize", Some("./src/main.rs"), Some(71))];
    assert_eq!(
        fn_path("synchronize", Some("app/src/main.rs"), &here),
        "app::synchronize"
    );
    // The frames end before the scope's fn: its name alone, not a library's namesake.
    assert_eq!(fn_path("synchronize", file, &frames[..2]), "synchronize");
    assert_eq!(
        fn_path("synchronize", None, &frames),
        "<cd::Dev as cd::Backend>::synchronize"
    );
}

#[test]
fn a_relative_file_is_placed_under_the_working_directory_when_it_is_there() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = here.join("Cargo.toml").display().to_string();
    assert_eq!(place("./Cargo.toml", Some(here)), Some(manifest.clone()));
    assert_eq!(place("Cargo.toml", Some(here)), Some(manifest));
    assert_eq!(place("./csu/../csu/libc-start.c", Some(here)), None);
    assert_eq!(place("./Cargo.toml", None), None);
    assert_eq!(place("/abs/x.rs", None), Some(String::from("/abs/x.rs")));
}
