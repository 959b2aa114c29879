//! The item tree and lowered bodies: a small, `Send` mirror of the syn AST.
//!
//! syn's trees hold `proc_macro2` spans, which are only meaningful on the thread that
//! parsed them, so each file is lowered to this IR right where it is parsed (in
//! parallel); everything after parsing works on these plain values.

pub use nosync_syntax::{Args, AttrName, Kind};
use serde::{Deserialize, Serialize};

/// Files and byte ranges are the source stage's (every IR node carries them).
pub use crate::source::{FileId, SpanIr};

mod body;
pub use body::*;

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
