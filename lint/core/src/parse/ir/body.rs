//! Fn bodies in the IR: held lowered, lazy or encoded; blocks, statements, patterns and
//! expressions.

use super::*;

/// A fn body: lowered with its file, or kept as its byte range and lowered only when the
/// call graph reaches the fn (see [`crate::parse::lazy`]), or lowered with its file and
/// read back from a cache, kept encoded until the call graph reaches the fn (see
/// [`crate::parse::encoded`]: it is stored as `Lowered`, and two bodies are equal when
/// their blocks are, whichever way each is held).
#[derive(Debug, Clone)]
pub enum Body {
    Lowered(Block),
    Lazy(LazyBody),
    Encoded(crate::parse::encoded::EncodedBody),
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
    /// `return e`, and `bail!(..)`, which returns an error: the fn exits here (a by-value
    /// parameter is dropped with what it still holds).
    Return {
        value: Option<Box<Expr>>,
        span: SpanIr,
    },
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
