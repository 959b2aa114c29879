//! The item tree and lowered bodies: a small, `Send` mirror of the syn AST.
//!
//! syn's trees hold `proc_macro2` spans, which are only meaningful on the thread that
//! parsed them, so each file is lowered to this IR right where it is parsed (in
//! parallel); everything after parsing works on these plain values.

pub use nosync_syntax::{Args, AttrName, Kind};
use serde::{Deserialize, Serialize};

/// Files and byte ranges are the source stage's (every IR node carries them).
pub use crate::source::{FileId, SpanIr};

/// A path as written: `a::b::<T>::c`, with an optional `<T as Trait>` qualifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PathIr {
    /// `::a::b` (global).
    pub global: bool,
    pub segs: Box<[Seg]>,
    /// `<Ty as Trait>::rest`: `segs` then holds `Trait::rest`. Boxed (rare): a path is
    /// 32 bytes, and it stands in most types and expressions (the memory of a large workspace).
    pub qself: Option<Box<QSelf>>,
}

/// The `<Ty as Trait>` of a qualified path: the type, and the trait's length in `segs`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct QSelf {
    pub ty: TypeRef,
    pub pos: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Seg {
    pub name: Box<str>,
    /// `<..>`, when written (most segments have none: 8 bytes then, which is most of a
    /// path's size).
    pub generics: Option<Box<Generics>>,
}

/// A segment's `<..>`: its type arguments and associated type bindings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Generics {
    pub args: Vec<TypeRef>,
    /// Associated type bindings among the arguments: `Runtime<Server = S>`.
    pub bindings: Vec<(String, TypeRef)>,
}

impl Seg {
    /// Its type arguments (`Vec<T>`: `[T]`).
    pub fn args(&self) -> &[TypeRef] {
        self.generics.as_deref().map_or(&[], |g| &g.args)
    }

    /// Its associated type bindings (`Iterator<Item = T>`: `[("Item", T)]`).
    pub fn bindings(&self) -> &[(String, TypeRef)] {
        self.generics.as_deref().map_or(&[], |g| &g.bindings)
    }
}

impl PathIr {
    /// How many of `segs` name the trait of a `<Ty as Trait>::rest` (0 when unqualified).
    pub fn qself_pos(&self) -> usize {
        self.qself.as_ref().map_or(0, |q| q.pos)
    }

    pub fn last_name(&self) -> &str {
        self.segs.last().map_or("", |s| &*s.name)
    }

    pub fn names(&self) -> Vec<&str> {
        self.segs.iter().map(|s| &*s.name).collect()
    }
}

/// A type as written (unresolved).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TypeRef {
    Path(PathIr),
    /// `&T`, `&mut T`, `*const T`: the lint auto-derefs, so only the pointee matters.
    Ref(Box<TypeRef>),
    Slice(Box<TypeRef>),
    Array(Box<TypeRef>),
    Tuple(Vec<TypeRef>),
    ImplTrait(Vec<PathIr>),
    DynTrait(Vec<PathIr>),
    /// `_`, `!`, fn pointers, macros in type position.
    Unknown,
}

/// One name brought in by a `use` (a group is flattened to several).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UseIr {
    pub path: Vec<String>,
    pub global: bool,
    /// The name in scope (`as` rename or last segment); `None` for a glob.
    pub alias: Option<String>,
    /// `pub use` (a re-export), not `pub(crate)` or private.
    pub is_pub: bool,
    pub span: SpanIr,
}

/// An attribute's path, e.g. `["nosync", "synchronizes"]`, and, when the path may name one of
/// nosync's attributes (its last segment, or a `use nosync::x as y` rename in its module), the
/// attribute it was read as and its arguments as `nosync-syntax` parses them for the macros.
/// Resolution decides whether the path really is nosync's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttrIr {
    pub path: Vec<String>,
    pub nosync: Option<(AttrName, NosyncArgs)>,
}

/// A nosync attribute's typed arguments (reasons unescaped), or the errors the macro would
/// report, each with its location.
pub type NosyncArgs = Result<Args<String>, Vec<(String, SpanIr)>>;

/// A trait's associated type: its name and bounds (`type Server: ComputeServer;`).
pub type AssocTypeDecl = (String, Vec<PathIr>);
/// A trait's associated const: its name and type (`const V: Self;`).
pub type AssocConstDecl = (String, TypeRef);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenericParam {
    pub name: String,
    pub bounds: Vec<PathIr>,
    /// A type parameter's default (`K = Float`).
    pub default: Option<TypeRef>,
    /// A const parameter (`const D: usize`): a value, of no type the lint follows.
    pub is_const: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// The binding name when the pattern is a plain identifier.
    pub name: Option<String>,
    pub ty: TypeRef,
    /// The body may change the value: bound `mut` (`mut x: T`), or a `&mut T` / `*mut T`.
    pub mutable: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FnIr {
    pub name: String,
    pub span: SpanIr,
    pub attrs: Vec<AttrIr>,
    pub generics: Vec<GenericParam>,
    /// `Some(by_ref)` for methods taking `self`.
    pub self_param: Option<bool>,
    /// `mut self` or `&mut self`: the body may change the receiver.
    pub self_mutable: bool,
    pub params: Vec<Param>,
    pub ret: Option<TypeRef>,
    pub is_async: bool,
    /// `None` for a declaration without a body (`fn f();`).
    pub body: Option<Body>,
    /// Items declared inside the body, in any of its blocks (nested fns, impls, structs).
    pub nested: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImplIr {
    pub self_ty: TypeRef,
    pub trait_: Option<PathIr>,
    pub generics: Vec<GenericParam>,
    pub fns: Vec<FnIr>,
    /// `type Target = T;` and other associated types.
    pub assoc_types: Vec<(String, TypeRef)>,
    pub span: SpanIr,
    /// Macro invocations among the impl items, replaced by their expansion's fns and
    /// associated types before the def map is built.
    pub macros: Vec<MacroCallIr>,
}

/// A `macro_rules!` definition, kept as text to expand its invocations later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacroRulesIr {
    pub name: String,
    /// The rules' tokens as text: `(matcher) => {body};` ...
    pub rules: String,
    /// `#[macro_export]`: invocable from other crates as `krate::name!` / `$crate::name!`.
    pub exported: bool,
    /// The `macro_rules!` item.
    pub span: SpanIr,
    /// Each rule body's first token (for the note on the items it generates), in rule order.
    pub bodies: Vec<SpanIr>,
}

/// A macro invocation in item position (module, impl or trait body), kept as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacroCallIr {
    pub path: Vec<String>,
    pub tokens: String,
    pub span: SpanIr,
    /// Where a `mod x;` in a module-position expansion is looked for: the directory of
    /// the module holding the call, and what a `#[path]` is relative to (the file's
    /// directory at a file's top level, else that same directory), as for a `mod`
    /// written there (empty in impl and trait position, where no `mod` can stand).
    pub mod_dir: std::path::PathBuf,
    pub path_base: std::path::PathBuf,
}

/// Where items generated by a macro come from: the macro and the body of its rule that
/// matched (keyed by the invocation's span, which every generated item carries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacroOrigin {
    pub name: String,
    pub body: SpanIr,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModKind {
    Inline(Vec<Item>),
    /// `mod x;` as lowered, before its file is looked for (lowering reads no file system:
    /// [`crate::parse`] turns each into `File` or `Missing` through its loader): the files
    /// it may name, in the order rustc tries them, and whether they come from `#[path]`.
    Declared {
        candidates: Vec<std::path::PathBuf>,
        path_attr: bool,
    },
    /// `mod x;` resolved to a file, parsed separately; `owns_dir` when its own `mod y;`
    /// items live next to it (`mod.rs`, `#[path]` files) rather than in `x/`.
    File {
        path: std::path::PathBuf,
        owns_dir: bool,
    },
    /// `mod x;` whose file does not exist: the candidates tried.
    Missing(Vec<std::path::PathBuf>),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Item {
    /// Boxed, as `Impl`: an `Item` is as large as its largest variant, and most items are
    /// neither (the memory of a large workspace).
    Fn(Box<FnIr>),
    Use(UseIr),
    Struct {
        name: String,
        span: SpanIr,
        fields: Vec<(String, TypeRef)>,
        generics: Vec<GenericParam>,
        /// The paths of its `#[derive(..)]` (`#[cfg_attr]`s evaluated).
        derives: Vec<PathIr>,
        /// Its fields' `#[<attr>(default = <value>)]` (burn's `#[config(default = ..)]`),
        /// for a derive that writes them into the value its constructor makes.
        defaults: Vec<FieldDefault>,
    },
    /// Enums (and unions, without variants): each variant's fields, positional ones
    /// named `0`, `1`, ...
    Enum {
        name: String,
        span: SpanIr,
        variants: Vec<(String, Vec<(String, TypeRef)>)>,
        /// The paths of its `#[derive(..)]`.
        derives: Vec<PathIr>,
    },
    /// `type Name<T, E = Default> = ty;`: the type parameters with their defaults.
    TypeAlias {
        name: String,
        span: SpanIr,
        params: Vec<(String, Option<TypeRef>)>,
        ty: TypeRef,
    },
    /// A `static` or `const`, for the type of paths that name it.
    Value {
        name: String,
        ty: TypeRef,
    },
    Trait {
        name: String,
        span: SpanIr,
        supertraits: Vec<PathIr>,
        fns: Vec<FnIr>,
        /// Associated types declared with their bounds: `type Server: ComputeServer;`.
        assoc_types: Vec<AssocTypeDecl>,
        /// Associated consts declared with their types: `const V: Self;`.
        assoc_consts: Vec<AssocConstDecl>,
        attrs: Vec<AttrIr>,
        /// Macro invocations among the trait items (expanded into `fns` later).
        macros: Vec<MacroCallIr>,
    },
    Impl(Box<ImplIr>),
    Mod {
        name: String,
        span: SpanIr,
        kind: ModKind,
        /// `pub mod`, not `pub(crate)` or private.
        is_pub: bool,
    },
    ExternCrate {
        name: String,
        alias: Option<String>,
        span: SpanIr,
    },
    MacroRules(MacroRulesIr),
    /// An item-position macro call (`foo! { .. }`), kept as text to expand later.
    MacroCall(MacroCallIr),
}

/// A fn body: lowered with its file, or kept as its byte range and lowered only when the
/// call graph reaches the fn (see [`crate::parse::lazy`]), or lowered with its file and
/// read back from a cache, kept encoded until the call graph reaches the fn (see
/// [`crate::parse::encoded`]: it is stored as `Lowered`, and two bodies are equal when
/// their blocks are, whichever way each is held).
#[derive(Debug, Clone)]
pub enum Body {
    Lowered(Block),
    Lazy(LazyBody),
    Encoded(super::encoded::EncodedBody),
}

/// A body not lowered yet: where it is and what lowering it needs. Only a body that can
/// define no item, carries no attribute and names no escape is kept so (its `nested`
/// items are then only statement macro calls, see [`LazyBody::macros`]; and its lowering
/// reads no `#[cfg]`, which only attributes carry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LazyBody {
    /// The body, braces included.
    pub span: SpanIr,
    /// The directory of the module holding the fn (for the statement macros' `mod x;`):
    /// one allocation shared by the bodies of a module, also when read back from a cache
    /// ([`shared_dir`]).
    #[serde(with = "shared_dir")]
    pub mod_dir: std::sync::Arc<std::path::Path>,
    /// The last segment of every `name!` invoked in the body, at any depth, sorted and
    /// deduplicated: a body invoking a `macro_rules!` name is lowered before expansion.
    pub macros: Vec<String>,
    /// The hash of the body's text, braces included (`source::text_hash`): its key in the
    /// cache of lazy bodies ([`crate::parse::cache::body_key`]), known without reading the
    /// file's text. Not in a file's digest, which counts a lazy body by the macros it names.
    #[serde(with = "body_text")]
    pub text: u128,
}

/// A lowered block: its statements and the span of its closing brace (drops happen there).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub close: Option<SpanIr>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stmt {
    /// Boxed: a statement is then no larger than an expression.
    Let(Box<LetStmt>),
    Expr(Expr),
}

/// `let pat: ty = init else { diverge };`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LetStmt {
    /// The binding when the pattern is a plain identifier (`let x`, `let mut x: T`).
    pub name: Option<String>,
    /// Any other pattern (`let (a, b)`, `let Some(x)`).
    pub pat: Option<Box<Pat>>,
    pub ty: Option<TypeRef>,
    pub init: Option<Box<Expr>>,
    /// `let .. else { .. }`.
    pub diverge: Option<Box<Expr>>,
    pub span: SpanIr,
}

/// A pattern, for the bindings it introduces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Pat {
    /// `x`, `ref mut x`, `x @ sub`.
    Bind(String, Option<Box<Pat>>),
    /// `Path(a, b)`: an enum variant or tuple struct.
    TupleStruct(PathIr, Vec<Pat>),
    /// `Path { f: p, .. }`.
    Struct(PathIr, Vec<(String, Pat)>),
    /// `Path`: a unit variant or a constant.
    Path(PathIr),
    Tuple(Vec<Pat>),
    /// `a | b`: the first alternative's bindings.
    Or(Box<Pat>),
    /// `_`: the value is dropped right away.
    Wild,
    Other,
}

/// A field's `#[<attr>(default = <value>)]` whose value is a `bool` or a path (a unit
/// variant), written as such or in a string (`default = "LinearLayout::Row"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldDefault {
    pub field: String,
    pub attr: String,
    pub value: DefaultValue,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DefaultValue {
    Bool(bool),
    Path(PathIr),
}

/// A lowered expression: only what call resolution and receiver typing need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Expr {
    /// `f(args)` where `f` is a path.
    CallPath {
        path: PathIr,
        args: Vec<Expr>,
        span: SpanIr,
    },
    /// `(expr)(args)`: a call through a value (closure, fn pointer).
    CallValue {
        callee: Box<Expr>,
        args: Vec<Expr>,
        span: SpanIr,
    },
    MethodCall {
        recv: Box<Expr>,
        name: Box<str>,
        args: Vec<Expr>,
        span: SpanIr,
        /// The first type of `::<..>` when written (`collect::<Vec<_>>()`).
        turbofish: Option<Box<TypeRef>>,
    },
    /// A path used as a value (a local, a const, a unit struct).
    Path(PathIr),
    Field {
        base: Box<Expr>,
        name: String,
    },
    /// `&e`, `&mut e`: typed as `e` (the lint auto-derefs), but it moves nothing.
    Ref(Box<Expr>),
    /// `e?` (unwraps `Result`/`Option`).
    Try(Box<Expr>),
    /// `e.await`.
    Await(Box<Expr>),
    /// `match scrutinee { pat if guard => body, .. }`.
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<(Pat, Option<Expr>, Expr)>,
    },
    /// `let pat = expr` in an `if`/`while` condition.
    Let {
        pat: Box<Pat>,
        expr: Box<Expr>,
    },
    /// `T { a: x, b, ..rest }`: the fields' values in order (`rest` last), and the names
    /// of the named ones (`names[i]` is `fields[i]`'s).
    Struct {
        path: Box<PathIr>,
        fields: Vec<Expr>,
        names: Box<[Box<str>]>,
    },
    /// `(a, b, ..)`, typed as the tuple of its elements' types.
    Tuple(Vec<Expr>),
    /// `[a, b, ..]`, typed as an array of its first element's type.
    Array(Vec<Expr>),
    Block(Block),
    /// `if cond { then } else { els }` (`if let` too: the condition's `let` binds in `then`
    /// only); typed as the first branch whose type is known.
    If {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Option<Box<Expr>>,
    },
    /// `|params| body`: each parameter's pattern and written type.
    Closure {
        params: Vec<(Pat, Option<TypeRef>)>,
        body: Box<Expr>,
    },
    /// `for pat in iter { body }`.
    For {
        pat: Box<Pat>,
        iter: Box<Expr>,
        body: Block,
    },
    /// `base[index]`: a std container's element, or `Index::index` of the base's type.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
        span: SpanIr,
    },
    /// `a..b` and the other ranges: std's range type `kind` (`Range`, `RangeInclusive`,
    /// `RangeFrom`, `RangeTo`, `RangeToInclusive`, `RangeFull`) of its bounds.
    Range {
        kind: String,
        bounds: Vec<Expr>,
    },
    /// An operator: `-a`, `!a` (one operand), `a + b`, `a += b`, `a < b` (two), by the
    /// method of the std trait it calls (`neg`, `not`, `add`, `add_assign`, `lt`); `&&`
    /// and `||` have none (`""`).
    Op {
        method: String,
        args: Vec<Expr>,
        span: SpanIr,
    },
    /// A literal: the primitive type it has when that is written in it (`1f32`, `"s"`,
    /// `true`); an unsuffixed number, which takes its type from its context, is `{integer}`
    /// or `{float}` ([`UNSUFFIXED_INT`], [`UNSUFFIXED_FLOAT`]); `None` for a byte
    /// string or any other literal.
    Lit(Option<String>),
    /// `true` or `false`.
    Bool(bool),
    Cast {
        expr: Box<Expr>,
        ty: TypeRef,
    },
    /// A call inside an escape (`allow_sync(|| ..)`): not followed.
    Escape,
    /// The message arguments of macro `name!`, which builds an error value or panics
    /// (`bail!`, `anyhow!`, `ensure!`, `panic!`, `assert!`, ...): evaluated only on a path
    /// that fails.
    Failing {
        name: String,
        args: Vec<Expr>,
    },
    /// Anything else: its sub-expressions in order, of unknown type.
    Other(Vec<Expr>),
}

/// The type of an unsuffixed integer or float literal as [`Expr::Lit`] holds it (rustc's
/// names of its inference variables): its context decides it.
pub const UNSUFFIXED_INT: &str = "{integer}";
pub const UNSUFFIXED_FLOAT: &str = "{float}";

/// A lazy body's [`LazyBody::text`], serialized as 0 where spans are erased (a digest: a
/// statement edited in the body leaves the file's digest as it was).
mod body_text {
    use crate::source::{SpanCtx, span_ctx};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(text: &u128, s: S) -> Result<S::Ok, S::Error> {
        let erased = span_ctx() == Some(SpanCtx::Erased);
        (if erased { 0 } else { *text }).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        u128::deserialize(d)
    }
}

/// A directory shared by many values (every lazy body of a module holds its module's):
/// stored as the path's text, read back as the one `Arc` of the last directory this thread
/// read when it is the same (bodies are read file by file), so that a cached file's bodies
/// do not allocate and validate a path each (a twentieth of a warm run).
mod shared_dir {
    use serde::de::{self, Deserializer, Visitor};
    use serde::{Serialize, Serializer};
    use std::cell::RefCell;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    thread_local! {
        static LAST: RefCell<Option<Arc<Path>>> = const { RefCell::new(None) };
    }

    pub(super) fn serialize<S: Serializer>(dir: &Arc<Path>, s: S) -> Result<S::Ok, S::Error> {
        dir.as_ref().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Path>, D::Error> {
        d.deserialize_str(Dir)
    }

    /// The shared `Arc` of `text`.
    fn shared(text: &str) -> Arc<Path> {
        LAST.with_borrow_mut(|last| match last {
            Some(dir) if dir.as_os_str() == text => dir.clone(),
            _ => last.insert(Arc::from(PathBuf::from(text))).clone(),
        })
    }

    struct Dir;

    impl Visitor<'_> for Dir {
        type Value = Arc<Path>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a directory")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Arc<Path>, E> {
            Ok(shared(v))
        }
    }
}

// The sizes the memory goal rests on (rustc's `static_assert_size!`): a node
// that grows fails the build here, so that the growth is a decision.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(size_of::<Seg>() == 24);
    assert!(size_of::<PathIr>() == 32);
    assert!(size_of::<TypeRef>() == 32);
    assert!(size_of::<Expr>() == 72);
    assert!(size_of::<Stmt>() == 72);
    assert!(size_of::<Item>() <= 184);
};
