//! Every accepted form and every rejection, with where its error points.

use super::*;
use quote::quote;

fn check(name: AttrName, tokens: TokenStream) -> Result<Args<String>, String> {
    parse(name, tokens, Span::call_site())
        .map(Args::values)
        .map_err(|e| e.to_string())
}

/// Parses `src` as an attribute and returns its error messages with the columns they point at.
fn located(src: &str) -> Vec<(String, usize)> {
    let attr: syn::Attribute = syn::parse_str::<syn::ItemFn>(&format!("{src} fn f() {{}}"))
        .map(|f| f.attrs[0].clone())
        .unwrap_or_else(|e| panic!("{src}: {e}"));
    let name = AttrName::of_path(attr.path()).expect("a nosync attribute");
    match parse_meta(name, &attr.meta) {
        Ok(args) => panic!("{src} parsed: {args:?}"),
        Err(e) => e
            .into_iter()
            .map(|e| (e.to_string(), e.span().start().column))
            .collect(),
    }
}

#[test]
fn no_sync_takes_nothing() {
    assert_eq!(check(AttrName::NoSync, quote!()), Ok(Args::NoSync));
    let err = check(AttrName::NoSync, quote!(reason = "x")).unwrap_err();
    assert_eq!(
        err,
        "#[no_sync] takes no arguments but `capture_safe`; write `#[no_sync]` or `#[no_sync(capture_safe)]`"
    );
    assert_eq!(
        check(AttrName::NoSync, quote!(capture_safe)),
        Ok(Args::NoSyncCaptureSafe)
    );
    for wrong in [
        quote!(capture_safe = true),
        quote!(capture_safe, capture_safe),
    ] {
        assert_eq!(
            check(AttrName::NoSync, wrong).unwrap_err(),
            "#[no_sync] takes no arguments but `capture_safe`; write `#[no_sync]` or `#[no_sync(capture_safe)]`"
        );
    }
    assert_eq!(Args::<String>::NoSyncCaptureSafe.name(), AttrName::NoSync);
}

#[test]
fn synchronizes_forms() {
    let sync = |kind, reason: Option<&str>| {
        Ok(Args::Synchronizes {
            kind,
            reason: reason.map(str::to_owned),
        })
    };
    let s = AttrName::Synchronizes;
    assert_eq!(check(s, quote!()), sync(Kind::Does, None));
    assert_eq!(
        check(s, quote!(reason = "copies")),
        sync(Kind::Does, Some("copies"))
    );
    assert_eq!(check(s, quote!(maybe)), sync(Kind::May, None));
    assert_eq!(
        check(s, quote!(maybe, reason = "when full")),
        sync(Kind::May, Some("when full"))
    );
    assert_eq!(
        check(s, quote!(reason = "r", maybe,)),
        sync(Kind::May, Some("r"))
    );
}

#[test]
fn reasons_are_string_literals() {
    let s = AttrName::Synchronizes;
    let parsed = parse(
        s,
        "reason = \"waits for \\\"the\\\" copy\"".parse().unwrap(),
        Span::call_site(),
    );
    let reason = parsed.map(Args::values).unwrap();
    assert_eq!(reason.sync_reason(), Some("waits for \"the\" copy"));
    let raw = parse(
        s,
        "reason = r#\"a \"raw\" one\"#".parse().unwrap(),
        Span::call_site(),
    );
    assert_eq!(
        raw.map(Args::values).unwrap().sync_reason(),
        Some("a \"raw\" one")
    );
    let unicode = parse(
        s,
        "reason = \"\\u{2192} host\\n\"".parse().unwrap(),
        Span::call_site(),
    );
    assert_eq!(
        unicode.map(Args::values).unwrap().sync_reason(),
        Some("\u{2192} host\n")
    );
}

#[test]
fn default_reasons() {
    let bare = check(AttrName::Synchronizes, quote!()).unwrap();
    assert_eq!(bare.sync_reason(), Some(DEFAULT_REASON));
    let maybe = check(AttrName::Synchronizes, quote!(maybe)).unwrap();
    assert_eq!(maybe.sync_reason(), Some(DEFAULT_REASON_MAYBE));
    assert_eq!(
        Kind::May.default_reason(),
        "declared #[synchronizes(maybe)]"
    );
    assert_eq!(Args::<String>::NoSync.sync_reason(), None);
}

#[test]
fn synchronizes_rejections() {
    let cases = [
        (quote!(maybe, maybe), "duplicate argument `maybe`"),
        (
            quote!(reason = "a", reason = "b"),
            "duplicate argument `reason`",
        ),
        (
            quote!(maybe = true),
            "`maybe` takes no value; write #[synchronizes(maybe, reason = \"...\")]",
        ),
        (
            quote!(reason = 5),
            "`reason` must be a string literal, e.g. reason = \"waits for the copy\"",
        ),
        (
            quote!(reason = " "),
            "`reason` must not be empty: say how this function blocks the host",
        ),
        (quote!(reason), "`reason` needs a value: reason = \"...\""),
        (
            quote!(blocking),
            "unknown argument `blocking`; expected `maybe` or `reason = \"...\"`",
        ),
        (
            quote!(a::b = 1),
            "unknown argument `a::b`; expected `maybe` or `reason = \"...\"`",
        ),
        (
            quote!("copies"),
            "a reason is an argument `reason = \"...\"`, not a bare literal: write \
             #[synchronizes(reason = \"...\")]",
        ),
        (
            quote!(maybe, "x"),
            "unexpected literal in nested attribute, expected ident",
        ),
    ];
    for (tokens, expected) in cases {
        let err = check(AttrName::Synchronizes, tokens.clone()).unwrap_err();
        assert!(err.starts_with(expected), "{tokens}: {err}");
    }
}

#[test]
fn a_mistyped_argument_gets_the_closest_one() {
    let cases = [
        (
            AttrName::Synchronizes,
            quote!(reson = "copies"),
            "unknown argument `reson`; expected `maybe` or `reason = \"...\"`; did you mean `reason`?",
        ),
        (
            AttrName::Synchronizes,
            quote!(mayb, reason = "copies"),
            "unknown argument `mayb`; expected `maybe` or `reason = \"...\"`; did you mean `maybe`?",
        ),
        (
            AttrName::AllowSync,
            quote!(reasons = "warm-up"),
            "unknown argument `reasons`; expected `reason = \"...\"`; did you mean `reason`?",
        ),
        // Too far from every argument: no suggestion.
        (
            AttrName::Synchronizes,
            quote!(blocking),
            "unknown argument `blocking`; expected `maybe` or `reason = \"...\"`",
        ),
    ];
    for (name, tokens, expected) in cases {
        assert_eq!(
            check(name, tokens.clone()),
            Err(expected.to_owned()),
            "{tokens}"
        );
    }
}

#[test]
fn allow_sync_requires_a_reason() {
    assert_eq!(
        check(AttrName::AllowSync, quote!(reason = "warm-up")),
        Ok(Args::AllowSync {
            reason: "warm-up".to_owned()
        })
    );
    for (tokens, expected) in [
        (
            quote!(),
            "#[allow_sync] needs a reason: #[allow_sync(reason = \"why this wait is fine here\")]",
        ),
        (
            quote!(reason = ""),
            "`reason` must not be empty: say why waiting here is fine",
        ),
        (
            quote!(maybe),
            "unknown argument `maybe`; expected `reason = \"...\"`",
        ),
        (
            quote!(reason = WARM_UP),
            "`reason` must be a string literal",
        ),
        (
            quote!("warm-up"),
            "a reason is an argument `reason = \"...\"`, not a bare literal",
        ),
    ] {
        let err = check(AttrName::AllowSync, tokens.clone()).unwrap_err();
        assert!(err.starts_with(expected), "{tokens}: {err}");
    }
}

#[test]
fn errors_point_at_the_offending_tokens() {
    // Columns are 0-based: `#[synchronizes(` is 15 characters.
    assert_eq!(
        located("#[synchronizes(blocking)]"),
        [(
            "unknown argument `blocking`; expected `maybe` or `reason = \"...\"`".to_owned(),
            15
        )]
    );
    assert_eq!(located("#[allow_sync(reason = 5)]")[0].1, 22);
    assert_eq!(located("#[nosync::synchronizes(reason = \"\")]")[0].1, 32);
    assert_eq!(located("#[no_sync(x)]")[0].1, 10);
    // A missing reason belongs to the whole attribute: it points at its start.
    assert_eq!(located("#[allow_sync]")[0].1, 2);
    assert_eq!(located("#[allow_sync()]")[0].1, 2);
}

#[test]
fn meta_forms() {
    let meta = |src: &str| -> Meta { syn::parse_str(src).unwrap() };
    let path = parse_meta(AttrName::Synchronizes, &meta("synchronizes"));
    assert_eq!(
        path.map(Args::values).unwrap().sync_reason(),
        Some(DEFAULT_REASON)
    );
    let list = parse_meta(AttrName::NoSync, &meta("nosync::no_sync()"));
    assert_eq!(list.map(Args::values).unwrap(), Args::NoSync);
    let err = parse_meta(AttrName::Synchronizes, &meta("synchronizes = \"x\"")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "#[synchronizes = ..] is not a form of #[synchronizes]; write the arguments in parentheses"
    );
}

#[test]
fn recognises_attribute_spellings() {
    let name = |path: Path| AttrName::of_path(&path);
    assert_eq!(name(syn::parse_quote!(no_sync)), Some(AttrName::NoSync));
    assert_eq!(
        name(syn::parse_quote!(nosync::synchronizes)),
        Some(AttrName::Synchronizes)
    );
    assert_eq!(
        name(syn::parse_quote!(::nosync::allow_sync)),
        Some(AttrName::AllowSync)
    );
    assert_eq!(name(syn::parse_quote!(::no_sync)), None);
    assert_eq!(name(syn::parse_quote!(other::no_sync)), None);
    assert_eq!(name(syn::parse_quote!(inline)), None);
    for a in AttrName::ALL {
        assert_eq!(AttrName::from_name(a.as_str()), Some(a));
    }
}

#[test]
fn model_maps_reasons() {
    let args = check(AttrName::AllowSync, quote!(reason = "x")).unwrap();
    assert_eq!(args.name(), AttrName::AllowSync);
    assert_eq!(args.map_reason(|r| r.len()), Args::AllowSync { reason: 1 });
}

#[test]
fn escapes_by_name() {
    assert_eq!(Escape::of_fn_name("allow_sync"), Some(Escape::AllowSync));
    assert_eq!(
        Escape::of_fn_name("allow_sync_once"),
        Some(Escape::AllowSyncOnce)
    );
    assert_eq!(Escape::of_fn_name("allow_sync_expr"), None);
    assert_eq!(
        Escape::of_macro_name("allow_sync_expr"),
        Some(Escape::AllowSyncExpr)
    );
    // `allow_sync!` does not exist: an attribute and a macro cannot share the name (E0255).
    assert_eq!(Escape::of_macro_name("allow_sync"), None);
}

#[test]
fn escape_macro_body_is_one_expression() {
    let ok = Escape::parse_macro_body(quote!(stream.synchronize()?), Span::call_site());
    assert!(matches!(ok, Ok(Expr::Try(_))), "{ok:?}");
    assert!(
        Escape::parse_macro_body(
            quote!({
                a();
                b()
            }),
            Span::call_site()
        )
        .is_ok()
    );
    let empty = Escape::parse_macro_body(quote!(), Span::call_site()).unwrap_err();
    assert_eq!(
        empty.to_string(),
        "allow_sync_expr! needs an expression: allow_sync_expr!(stream.synchronize()?)"
    );
    let two = Escape::parse_macro_body(quote!(a(), b()), Span::call_site()).unwrap_err();
    assert!(
        two.to_string()
            .starts_with("allow_sync_expr! takes one expression (wrap several in a block"),
        "{two}"
    );
}

#[test]
fn escape_fn_takes_one_closure() {
    let call: syn::ExprCall = syn::parse_quote!(allow_sync(|| wait()));
    assert!(
        Escape::AllowSync
            .check_fn_args(&call.args, Span::call_site())
            .is_ok()
    );
    let call: syn::ExprCall = syn::parse_quote!(allow_sync_once());
    let err = Escape::AllowSyncOnce
        .check_fn_args(&call.args, Span::call_site())
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "allow_sync_once(..) takes one argument, the closure to run (`allow_sync_once(|| ..)`), not 0"
    );
}
