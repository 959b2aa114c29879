//! Attribute macros of [`nosync`](https://docs.rs/nosync): `#[no_sync]`, `#[synchronizes]` and
//! `#[allow_sync]`. Use them through the `nosync` crate, which re-exports them; the expansions
//! name `::nosync::__private`, so the `nosync` crate must be a dependency under that name (a
//! renamed dependency, `package = "nosync"` under another key, does not work).
//!
//! Each attribute runs the same pipeline: `args::parse` reads the arguments into a typed
//! `args::Args`, `item::FnItem::parse` reads the item, `item::check` rejects misuse, then
//! `expand::expand` writes the instrumented function. On any error the expansion is the
//! `compile_error!`s followed by the item exactly as written, so one mistake gives one error.

// A proc macro reports through `compile_error!`, never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod args;
mod expand;
mod item;

use proc_macro::TokenStream;
use proc_macro2::Span;

use crate::args::{Args, AttrName};
use crate::item::FnItem;

/// Marks a hot path: the function body runs inside a forbid scope, so every
/// `#[synchronizes]` function or checked GPU operation that blocks the host while it runs is a
/// violation, reported according to `nosync::Mode` (the message names this function).
///
/// ```
/// use nosync::{Mode, SyncViolation, no_sync, synchronizes};
///
/// #[synchronizes(reason = "copies the result to the host")]
/// fn download(x: &[f32]) -> Result<Vec<f32>, SyncViolation> {
///     Ok(x.to_vec())
/// }
///
/// #[no_sync]
/// fn train_step(x: &[f32]) -> Result<Vec<f32>, SyncViolation> {
///     download(x) // a hidden host wait in the hot path
/// }
///
/// let err = nosync::with_mode(Mode::Error, || train_step(&[1.0])).unwrap_err();
/// assert_eq!((err.site().api, err.scope_function()), ("download", Some("train_step")));
/// assert!(download(&[1.0]).is_ok(), "outside the hot path it is fine");
/// ```
///
/// # Expansion
///
/// On a function or method (free, in an `impl`, or a trait's default body; also `unsafe`,
/// `extern "C"` and generic functions), the body starts with
/// `let guard = ::nosync::__private::forbid_fn("train_step");`; the scope ends when the body
/// returns or unwinds. The scope's location (the violation's "where the scope began") is this
/// attribute, or the caller when the function is `#[track_caller]` too.
///
/// On an `async fn`, the signature is unchanged and the body becomes
/// `::nosync::__private::no_sync_future(async move { body }, "name").await`: the scope holds
/// during each poll of the body, on whichever thread polls it, and never between polls. `?` and
/// `return` in the body behave as before.
///
/// A non-async function that *returns* a future is instrumented while it builds the future,
/// not while the future runs; use `nosync::FutureExt::no_sync` on the future for that.
///
/// `#[no_sync(capture_safe)]` opens a `nosync::capture_safe` scope instead
/// (`capture_safe_fn("name")`): the same forbid scope, and the CUPTI hook also reports every
/// call that would break a CUDA-graph capture. Not on an `async fn`.
///
/// # Rejected
///
/// Any argument but `capture_safe`; items that are not functions; `const fn`; a declaration without a body (put
/// the attribute on each implementation instead; an attribute on a trait declaration would not
/// reach the implementations); a function also marked `#[synchronizes]`, `#[allow_sync]` or a
/// second `#[no_sync]`.
#[proc_macro_attribute]
pub fn no_sync(args: TokenStream, item: TokenStream) -> TokenStream {
    run(AttrName::NoSync, args.into(), item.into()).into()
}

/// Marks a function that blocks the host (`#[synchronizes]`) or may block it
/// (`#[synchronizes(maybe)]`): calling it inside a `#[no_sync]` scope is a violation, and the
/// lint reports every chain from a `#[no_sync]` root to it.
///
/// ```
/// use nosync::{Mode, SyncKind, synchronizes};
///
/// #[synchronizes(maybe, reason = "waits only when the pool is empty")]
/// fn acquire() -> u32 {
///     7
/// }
///
/// let (value, report) = nosync::count_syncs(acquire);
/// assert_eq!((value, report.of_kind(SyncKind::May)), (7, 1));
/// // Not a `Result`: inside a forbid scope even `Mode::Error` panics.
/// let caught = std::panic::catch_unwind(|| nosync::with_mode(Mode::Error, || nosync::no_sync(acquire)));
/// assert!(caught.is_err());
/// ```
///
/// Arguments: `reason = "..."` (a non-empty string literal, shown in the violation's message;
/// default `declared #[synchronizes]`) and `maybe` (the function may block, e.g. only when a
/// buffer is full: `nosync::SyncKind::May` instead of `SyncKind::Does`).
///
/// # Expansion
///
/// The body starts with a block holding
/// `static SITE: SyncSite = SyncSite::new("download", reason, SyncKind::Does)` (the api is the
/// function's name) and the check of that site:
///
/// - When the return type is **spelled** `Result<T, E>`, `std::result::Result<T, E>` or
///   `core::result::Result<T, E>`, the check is `::nosync::__private::declare_sync(&SITE)?;`: in
///   `Mode::Error` the function returns `Err(E::from(violation))` before doing anything. `E` must
///   implement `From<nosync::SyncViolation>` (a compile error says so otherwise).
/// - For **any other return type** the check is `__private::declare_sync_or_panic(&SITE)`: in
///   `Mode::Error` the violation panics, as in `Mode::Panic`. This includes aliases such as
///   `io::Result<T>`, `anyhow::Result<T>` or a crate's own `Result<T>`: a macro sees only the
///   spelling, not what an alias means. Spell the return type out as `Result<T, E>` to get the
///   error returned.
///
/// On an `async fn` the check runs when the future is first polled. In an `extern "C" fn` a
/// panicking violation aborts the process, as any panic does there.
///
/// On a trait method declaration without a body the item is emitted unchanged: a marker the
/// lint reads (calls through the trait reach a sink); each implementation that blocks should
/// carry `#[synchronizes]` too for the run-time check.
///
/// # Rejected
///
/// Unknown, duplicate or valueless arguments; a non-string or empty `reason`; items that are not
/// functions; `const fn`; a function also marked `#[no_sync]`, `#[allow_sync]` or a second
/// `#[synchronizes]`.
#[proc_macro_attribute]
pub fn synchronizes(args: TokenStream, item: TokenStream) -> TokenStream {
    run(AttrName::Synchronizes, args.into(), item.into()).into()
}

/// Allows host waits inside this function even when it is called from a `#[no_sync]` scope;
/// the lint stops a chain here. The reason is required and documents why the wait is fine.
///
/// ```
/// use nosync::{Mode, SyncViolation, allow_sync, no_sync, synchronizes};
///
/// #[synchronizes]
/// fn synchronize() -> Result<(), SyncViolation> {
///     Ok(())
/// }
///
/// #[allow_sync(reason = "once per epoch, after the hot loop")]
/// fn end_epoch() -> Result<(), SyncViolation> {
///     synchronize()
/// }
///
/// #[no_sync]
/// fn epoch() -> Result<(), SyncViolation> {
///     end_epoch()
/// }
///
/// assert!(nosync::with_mode(Mode::Error, epoch).is_ok());
/// ```
///
/// # Expansion
///
/// The body starts with `let guard = ::nosync::__private::allow_fn("warm_up", reason);`; a
/// `#[no_sync]` scope opened further in (a `#[no_sync]` function it calls) forbids again.
/// To allow a single expression instead of a whole function, use
/// `nosync::allow_sync_expr!(expr)`.
///
/// # Rejected
///
/// A missing, empty or non-string `reason`; any other argument; items that are not functions;
/// `const fn`; `async fn` (an allow scope cannot be held across `.await`; wrap the waiting
/// expressions in `nosync::allow_sync_expr!` instead); a declaration without a body; a function
/// also marked `#[no_sync]`, `#[synchronizes]` or a second `#[allow_sync]`.
#[proc_macro_attribute]
pub fn allow_sync(args: TokenStream, item: TokenStream) -> TokenStream {
    run(AttrName::AllowSync, args.into(), item.into()).into()
}

/// A checked attribute use, ready to expand.
struct Model {
    args: Args,
    item: FnItem,
}

/// The whole pipeline: on error, the `compile_error!`s and then the item as written.
fn run(
    name: AttrName,
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    match parse(name, args, item.clone()) {
        Ok(model) => expand::expand(model),
        Err(errors) => {
            let mut out = errors.to_compile_error();
            out.extend(item);
            out
        }
    }
}

/// Parses the arguments and the item, reporting the problems of both together.
fn parse(
    name: AttrName,
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> syn::Result<Model> {
    let args = args::parse(name, args);
    let item = FnItem::parse(item).ok_or_else(|| {
        let msg = format!(
            "#[{}] can only be used on a function or method",
            name.as_str()
        );
        syn::Error::new(Span::call_site(), msg)
    });
    let checked = item.as_ref().map_or(Ok(()), |item| item::check(name, item));
    let errors = [
        args.as_ref().err(),
        item.as_ref().err(),
        checked.as_ref().err(),
    ];
    let combined = errors.into_iter().flatten().cloned().reduce(|mut all, e| {
        all.combine(e);
        all
    });
    match combined {
        Some(errors) => Err(errors),
        None => Ok(Model {
            args: args?,
            item: item?,
        }),
    }
}
