//! What the lint knows of std, core and alloc (never parsed): the prelude, the traits
//! the call graph treats specially, smart pointers, and the methods every type has.
//!
//! Every std item has one canonical path (see [`super::canonical`]): `std::` and the
//! segments from its first type or trait on, so `core::ops::Drop`, `std::ops::Drop`,
//! `alloc::…` and the prelude's `Drop` are all `std::Drop`, and `std::sync::Arc::new`
//! is `std::Arc::new`. Paths without a type (`core::mem::drop`) keep their modules,
//! with `core`/`alloc` spelled `std`.

/// `core::ops::Drop`.
pub const DROP: &str = "std::Drop";
/// `core::ops::Deref`.
pub const DEREF: &str = "std::Deref";

/// `core::fmt::Debug`: `{:?}` shows a value with it.
pub const DEBUG: &str = "std::Debug";
/// `core::fmt::Display`: `{}` and `to_string()` show a value with it.
pub const DISPLAY: &str = "std::Display";

/// Whether std's `Debug` for the std type `canonical` shows its type arguments' values
/// with their own `Debug` (`Vec<T>`, `Option<T>`, `Result<T, E>`; not `PhantomData<T>`).
pub fn shows_elements_with_debug(canonical: &str) -> bool {
    matches!(
        canonical,
        "std::Vec"
            | "std::VecDeque"
            | "std::Option"
            | "std::Result"
            | "std::HashMap"
            | "std::BTreeMap"
            | "std::HashSet"
            | "std::BTreeSet"
    )
}

/// The crate names that mean std (`core` and `alloc` are re-exported by it).
pub fn is_std_crate(name: &str) -> bool {
    matches!(name, "std" | "core" | "alloc")
}

/// Names of the std prelude (and common std types) that resolve without a `use`.
pub const PRELUDE: &[&str] = &[
    "Vec", "Box", "Option", "Result", "String", "Some", "None", "Ok", "Err", "Arc", "Rc", "Drop",
    "Clone", "Default", "Iterator", "From", "Into", "TryFrom", "TryInto", "ToString", "ToOwned",
    "AsRef", "AsMut", "Fn", "FnMut", "FnOnce", "Send", "Sync",
];

/// Types a method call auto-derefs through (to their first generic argument).
pub const SMART_POINTERS: &[&str] = &[
    "std::Box",
    "std::Arc",
    "std::Rc",
    "std::MutexGuard",
    "std::RwLockReadGuard",
    "std::RwLockWriteGuard",
    "std::Ref",
    "std::RefMut",
    "std::Cow",
];

/// Types whose `?` / `unwrap` give their first generic argument.
pub const WRAPPERS: &[&str] = &["std::Result", "std::Option", "std::LockResult"];

/// `std::mem::drop` by canonical path.
pub fn is_mem_drop(canonical: &[String]) -> bool {
    matches!(canonical, [s, m, d] if s == "std" && m == "mem" && d == "drop")
}

/// `std::thread::spawn` by canonical path: its closure runs on a new thread, detached,
/// so a wait in it does not block the caller (unlike `std::thread::scope`, which joins).
pub fn is_thread_spawn(canonical: &[String]) -> bool {
    matches!(canonical, [s, t, f] if s == "std" && t == "thread" && f == "spawn")
}

/// Methods every type has through std traits: never matched by name alone.
pub const TRAIT_METHODS: &[&str] = &[
    "clone",
    "fmt",
    "eq",
    "ne",
    "cmp",
    "partial_cmp",
    "hash",
    "drop",
    "deref",
    "deref_mut",
    "from",
    "into",
    "try_from",
    "try_into",
    "default",
    "next",
    "as_ref",
    "as_mut",
    "to_string",
    "to_owned",
    "borrow",
    "borrow_mut",
    "len",
    "is_empty",
    "iter",
    "iter_mut",
    "into_iter",
    "map",
    "unwrap",
    "expect",
];

/// Inherent methods of std types: a local trait impl for a std type never shadows them.
pub const INHERENT: &[&str] = &[
    "get",
    "get_mut",
    "insert",
    "remove",
    "push",
    "pop",
    "contains",
    "contains_key",
    "entry",
    "extend",
    "clear",
    "read",
    "write",
    "lock",
    "try_lock",
    "as_slice",
    "as_ptr",
    "as_mut_ptr",
    "len",
    "is_empty",
    "iter",
    "keys",
    "values",
    "to_vec",
    "split_at",
    "first",
    "last",
    "sort",
    "dedup",
    "retain",
    "truncate",
    "reserve",
    "with_capacity",
];

/// Methods of `Result`/`Option` (and `LockResult`) that give the wrapped value.
pub const UNWRAPPING: &[&str] = &[
    "unwrap",
    "expect",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "unwrap_unchecked",
];

/// Methods that give a value of the receiver's own type (or a reference to it).
pub const SAME_TYPE: &[&str] = &[
    "clone",
    "to_owned",
    "as_ref",
    "as_mut",
    "borrow",
    "borrow_mut",
    "deref",
    "deref_mut",
    "by_ref",
];

/// Constructors `Type::new(x)` that wrap their argument: `Arc::new(x)` is `Arc<X>`.
pub const WRAPPING_NEW: &[&str] = &[
    "std::Arc",
    "std::Rc",
    "std::Box",
    "std::Mutex",
    "std::RwLock",
    "std::RefCell",
];

/// `Mutex`/`RwLock` guards: `lock`, `read`, `write`, `try_lock` give `LockResult<Guard>`.
pub const LOCKS: &[&str] = &["std::Mutex", "std::RwLock"];
pub const LOCK_METHODS: &[&str] = &["lock", "read", "write", "try_lock"];

/// `Vec`/slice accessors that give `Option<&T>`.
pub const VEC_ACCESSORS: &[&str] = &["get", "first", "last", "get_mut", "first_mut", "last_mut"];
