use super::*;

#[test]
fn shipped_models_are_valid() {
    let (models, errors) = shipped();
    assert_eq!(errors, &[], "models.toml");
    let libs: Vec<&str> = models.libraries.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        libs,
        [
            "burn-derive",
            "candle-core",
            "cubecl-common",
            "cudarc",
            "derive-new"
        ]
    );
    // Every model of a library names a function that a test reads in that library's
    // sources, except the driver's own FFI declarations (free fns, or from cudarc 0.11
    // methods of the library loaded at run time, `Lib`).
    for m in &models.models {
        let has = m.source.as_ref().map_or(0, |s| s.has.len());
        let ffi = ["cudarc::driver::sys::", "cudarc::driver::Lib::"]
            .iter()
            .any(|p| m.path.starts_with(p));
        assert!(has > 0 || ffi, "{} has no `source.has`", m.path);
    }
    let to_device = models
        .models
        .iter()
        .find(|m| m.path == "candle_core::Tensor::to_device")
        .expect("the to_device model");
    let when = to_device.when.as_deref().expect("its condition");
    assert_eq!(
        (when.arg, &when.blocks[..], &when.never[..], when.otherwise),
        (
            0,
            &[Matcher::Value("candle_core::Device::Cpu".into())][..],
            &[Matcher::Method("device".into())][..],
            Otherwise::Possible
        )
    );
    assert!(to_device.holds_for(Some(&Version::new(0, 9, 2))));
    assert!(to_device.holds_for(Some(&Version::new(0, 11, 1))));
    // Before 0.9 an upload synchronizes: `to_device(x.device())` may wait there.
    assert!(!to_device.holds_for(Some(&Version::new(0, 8, 3))));
    assert!(!to_device.holds_for(Some(&Version::new(0, 12, 0))));
    assert!(to_device.holds_for(None));
}

#[test]
fn the_cudarc_table_is_split_by_version_where_the_api_differs() {
    let (models, _) = shipped();
    let v017 = Version::new(0, 17, 8);
    let v019 = Version::new(0, 19, 10);
    let holds = |path: &str, v: &Version| {
        models
            .models
            .iter()
            .filter(|m| m.path == path)
            .any(|m| m.holds_for(Some(v)))
    };
    // `clone_dtoh` came after 0.17; `memcpy_dtov` is in both.
    assert!(!holds("cudarc::driver::CudaStream::clone_dtoh", &v017));
    assert!(holds("cudarc::driver::CudaStream::clone_dtoh", &v019));
    assert!(holds("cudarc::driver::CudaStream::memcpy_dtov", &v017));
    assert!(holds("cudarc::driver::CudaStream::memcpy_dtov", &v019));
    // cuModuleGetFunction does not wait: `load_function` is no model.
    assert!(!holds("cudarc::driver::CudaModule::load_function", &v019));
    // `CudaDevice` is the API before 0.16, `CudaStream`'s waits from 0.16.
    let (v013, v016) = (Version::new(0, 13, 9), Version::new(0, 16, 6));
    assert!(holds("cudarc::driver::CudaDevice::dtoh_sync_copy", &v013));
    assert!(!holds("cudarc::driver::CudaDevice::dtoh_sync_copy", &v016));
    assert!(!holds("cudarc::driver::CudaStream::synchronize", &v013));
    assert!(holds("cudarc::driver::CudaStream::synchronize", &v016));
}

fn errors(text: &str) -> Vec<(String, String, Option<String>)> {
    let (_, errors) = read_file(text);
    errors
        .into_iter()
        .map(|e| (text[e.span].to_owned(), e.message, e.help))
        .collect()
}

#[test]
fn each_problem_is_located_and_the_rest_is_read() {
    let text = r#"
[[model]]
path = "cudarc::driver::CudaStream::synchronize"
reason = "waits"
kindd = "may"

[[model]]
path = "not a path"
reason = "x"

[[model]]
path = "krate::f"
reason = "x"
versions = "0.9 or so"

[[model]]
path = "krate::g"
reason = "x"
when = { arg = 0, blocks = [{ memory = "pagable" }] }

[[model]]
path = "krate::h"
kind = "setup"
reason = "x"
when = { arg = 1, never = [{ method = "device" }], otherwise = "clean" }
"#;
    let (models, _) = read_file(text);
    let paths: Vec<&str> = models.models.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(
        paths,
        ["cudarc::driver::CudaStream::synchronize", "krate::h"]
    );
    assert_eq!(models.models[1].kind, SinkKind::Setup);
    assert_eq!(
        errors(text),
        [
            (
                "kindd".to_owned(),
                "unknown key `kindd` in an entry of `model` (expected one of: path, kind, reason, versions, drop, when, follow, source)".to_owned(),
                Some("did you mean `kind`?".to_owned())
            ),
            (
                "\"not a path\"".to_owned(),
                "`not a path` is not a path like `krate::Type::method` or `krate::module::function`".to_owned(),
                None
            ),
            (
                "\"0.9 or so\"".to_owned(),
                "`0.9 or so` is not a version requirement like `>=0.9, <0.12`: expected comma after minor version number, found 'o'".to_owned(),
                None
            ),
            (
                "\"pagable\"".to_owned(),
                "`memory` must be one of: pageable, pinned".to_owned(),
                Some("did you mean `pageable`?".to_owned())
            ),
        ]
    );
}

#[test]
fn a_user_model_has_no_source_and_may_leave_out_its_reason() {
    let text = r#"models = [
  { path = "app::Buffer::read", when = { arg = 0, blocks = [{ type = "app::Host" }] } },
  { path = "app::f", source = { has = ["x"] } },
]"#;
    let doc = toml::de::DeTable::parse(text).unwrap();
    let (models, errors) = read_entries(doc.get_ref().get("models").unwrap());
    let paths: Vec<&str> = models.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(paths, ["app::Buffer::read", "app::f"]);
    assert_eq!(
        models[0].reason,
        "it is modelled in the configuration's `models`"
    );
    let when = models[0].when.as_deref().unwrap();
    assert_eq!(when.blocks, [Matcher::Type("app::Host".into())]);
    assert_eq!(
        when.note,
        "the argument that decides is not known here: `read` blocks only for some arguments"
    );
    let located: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (&text[e.span.clone()], e.message.as_str()))
        .collect();
    assert_eq!(
        located,
        [(
            "source",
            "unknown key `source` in an entry of `models` (expected one of: path, kind, reason, versions, drop, when, follow)"
        )]
    );
}

/// `follow` is for a `may` model only, without `drop` or `when`; it must be a boolean.
#[test]
fn a_follow_model_is_a_may_model_without_drop_or_when() {
    let text = r#"models = [
  { path = "app::a", kind = "may", follow = true },
  { path = "app::b", follow = true },
  { path = "app::c", kind = "may", follow = true, when = { arg = 0, never = [{ method = "device" }] } },
  { path = "app::d", kind = "may", follow = "yes" },
]"#;
    let doc = toml::de::DeTable::parse(text).unwrap();
    let (models, errors) = read_entries(doc.get_ref().get("models").unwrap());
    let read: Vec<(&str, bool)> = models.iter().map(|m| (m.path.as_str(), m.follow)).collect();
    assert_eq!(read, [("app::a", true)]);
    let located: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (&text[e.span.clone()], e.message.as_str()))
        .collect();
    let mixed = "a `follow` model is `kind = \"may\"`, without `drop` or `when`";
    assert_eq!(
        located,
        [
            ("\"app::b\"", mixed),
            ("\"app::c\"", mixed),
            ("\"yes\"", "`follow` must be true or false, not string"),
        ]
    );
}

#[test]
fn package_names_are_crate_names_with_dashes() {
    assert!(is_package("candle_core", "candle-core"));
    assert!(is_package("cudarc", "cudarc"));
    assert!(!is_package("candle_nn", "candle-core"));
}

#[test]
fn a_detached_model_is_no_sink_and_takes_no_condition() {
    let text = "[[model]]\npath = \"std::H::submit\"\nkind = \"detached\"\nreason = \"x\"\n\
        [[model]]\npath = \"k::H::post\"\nkind = \"detached\"\nreason = \"x\"\n\
        when = { arg = 0, blocks = [{ memory = \"pageable\" }] }\n";
    let (models, _) = read_file(text);
    let read: Vec<(&str, bool)> = models
        .models
        .iter()
        .map(|m| (&*m.path, m.detached))
        .collect();
    assert_eq!(read, [("std::H::submit", true)]);
    assert!(!crate::known::sinks::is_builtin(&models.models[0]));
    assert_eq!(
        errors(text),
        [(
            "\"k::H::post\"".to_owned(),
            "a `detached` model waits for nothing: it takes no `drop` or `when`".to_owned(),
            None
        )]
    );
}
