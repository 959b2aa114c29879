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

/// Names std gives methods of slices, `Vec`, `str`, `String`, `Option`, `Result` and
/// iterators (inherent methods and `Iterator`'s, `DoubleEndedIterator`'s and `Peekable`'s),
/// separated by spaces: a method call of one of these names whose receiver's type is
/// unknown is never guessed into a method of another crate (`data[a..b].to_vec()` is
/// std's, not some crate's `Slice::to_vec`). See [`never_guessed`].
const STD_OWNED: &str = "advance_back_by advance_by align_to align_to_mut all and and_then any append \
    array_chunks as_bytes as_bytes_mut as_chunks as_deref as_deref_mut as_flattened \
    as_flattened_mut as_mut as_mut_ptr as_mut_ptr_range as_mut_slice as_mut_str as_ptr \
    as_ptr_range as_rchunks as_ref as_slice as_str binary_search binary_search_by \
    binary_search_by_key by_ref bytes capacity chain char_indices chars chunk_by \
    chunk_by_mut chunks chunks_exact chunks_exact_mut chunks_mut clear clone_from_slice \
    cloned cmp cmp_by collect collect_into concat contains copied copy_from_slice \
    copy_within count cycle dedup dedup_by dedup_by_key drain encode_utf16 ends_with \
    enumerate eq eq_by eq_ignore_ascii_case err escape_ascii escape_debug escape_default \
    escape_unicode expect expect_err extend_from_slice extend_from_within extract_if fill \
    fill_with filter filter_map find find_map first first_chunk first_mut flat_map flatten \
    fold for_each from_raw_parts from_utf8 from_utf8_lossy fuse ge get get_mut \
    get_or_insert get_or_insert_with get_unchecked get_unchecked_mut gt insert insert_str \
    inspect inspect_err intersperse intersperse_with into_boxed_slice into_boxed_str \
    into_bytes into_chars into_err into_flattened into_ok into_string into_vec is_ascii \
    is_char_boundary is_empty is_err is_err_and is_none is_none_or is_ok is_ok_and \
    is_partitioned is_some is_some_and is_sorted is_sorted_by is_sorted_by_key iter \
    iter_mut join last last_chunk last_mut le leak len lines lt make_ascii_lowercase \
    make_ascii_uppercase map map_err map_or map_or_else map_while map_windows match_indices \
    matches max max_by max_by_key min min_by min_by_key ne next next_back next_chunk \
    next_if next_if_eq nth nth_back ok ok_or ok_or_else or or_else parse partial_cmp \
    partial_cmp_by partition partition_in_place partition_point peek peek_mut peekable pop \
    pop_if position product push push_str rchunks rchunks_exact rchunks_exact_mut \
    rchunks_mut reduce remove repeat replace replace_range replacen reserve reserve_exact \
    resize resize_with retain retain_mut rev reverse rfind rfold rmatch_indices rmatches \
    rotate_left rotate_right rposition rsplit rsplit_mut rsplit_once rsplit_terminator \
    rsplitn rsplitn_mut scan select_nth_unstable select_nth_unstable_by \
    select_nth_unstable_by_key set_len shrink_to shrink_to_fit size_hint skip skip_while \
    sort sort_by sort_by_cached_key sort_by_key sort_unstable sort_unstable_by \
    sort_unstable_by_key spare_capacity_mut splice split split_ascii_whitespace split_at \
    split_at_checked split_at_mut split_at_mut_checked split_first split_first_mut \
    split_inclusive split_inclusive_mut split_last split_last_mut split_mut split_off \
    split_once split_terminator split_whitespace splitn splitn_mut starts_with step_by \
    strip_prefix strip_suffix sum swap swap_remove swap_with_slice take take_if take_while \
    to_ascii_lowercase to_ascii_uppercase to_lowercase to_uppercase to_vec transpose trim \
    trim_end trim_end_matches trim_matches trim_start trim_start_matches truncate try_find \
    try_fold try_for_each try_reduce try_reserve try_reserve_exact try_rfold unwrap \
    unwrap_err unwrap_or unwrap_or_default unwrap_or_else unwrap_unchecked unzip windows \
    with_capacity xor zip";

/// Whether a method call named `name` on a receiver of unknown type is never matched by
/// name alone: every type has it through a std trait ([`TRAIT_METHODS`]), or std gives
/// it to slices, `Vec`, `str`, `String`, `Option`, `Result` or iterators ([`STD_OWNED`]).
pub fn never_guessed(name: &str) -> bool {
    static OWNED: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
        std::sync::LazyLock::new(|| STD_OWNED.split_ascii_whitespace().collect());
    TRAIT_METHODS.contains(&name) || OWNED.contains(name)
}

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

/// Inherent methods of `Option` and `Result`, which a local trait impl for them never
/// shadows (burn's `impl Module for Option<T>` has a `map` too: `opt.map(|x| ..)` is
/// `Option::map`).
const WRAPPER_INHERENT: &[&str] = &[
    "map",
    "map_or",
    "map_or_else",
    "map_err",
    "and",
    "and_then",
    "or",
    "or_else",
    "ok_or",
    "ok_or_else",
    "filter",
    "take",
    "replace",
    "as_ref",
    "as_mut",
    "as_deref",
    "unwrap",
    "unwrap_or",
    "unwrap_or_else",
    "unwrap_or_default",
    "expect",
    "is_some",
    "is_none",
    "is_ok",
    "is_err",
    "ok",
    "err",
    "zip",
    "flatten",
    "cloned",
    "copied",
    "inspect",
    "get_or_insert_with",
];

/// Whether `name` is an inherent method of std type `canon` that is `Option` or `Result`.
pub fn is_wrapper_inherent(canon: &str, name: &str) -> bool {
    matches!(canon, "std::Option" | "std::Result") && WRAPPER_INHERENT.contains(&name)
}

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

/// The primitive types, whose canonical path is their name (`f32`, `usize`, `str`).
pub const PRIMITIVES: &[&str] = &[
    "bool", "char", "str", "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
    "u32", "u64", "u128", "usize",
];

/// The type the lint gives every std iterator (`slice::Iter`, `Map`, `Filter`, `Rev`, ...):
/// `std::Iter<T>`, an iterator of `T`.
pub const ITER: &str = "std::Iter";

/// The type the lint gives a closure: `std::FnOnce<R>`, `R` being what its body gives.
pub const CLOSURE: &str = "std::FnOnce";

/// std collections of one element type (`for x in v` gives a `T`).
pub const SEQUENCES: &[&str] = &[
    "std::Vec",
    "std::VecDeque",
    "std::HashSet",
    "std::BTreeSet",
    "std::BinaryHeap",
    "std::LinkedList",
];

/// std maps, `K` to `V` (`for (k, v) in m`).
pub const MAPS: &[&str] = &["std::HashMap", "std::BTreeMap"];

/// Methods that give an iterator of a collection's elements (of a map's pairs).
pub const ITERATE: &[&str] = &["iter", "iter_mut", "into_iter", "drain"];
/// Methods of maps that give an iterator of their keys.
pub const MAP_KEYS: &[&str] = &["keys", "into_keys"];
/// Methods of maps that give an iterator of their values.
pub const MAP_VALUES: &[&str] = &["values", "values_mut", "into_values"];
/// Methods of maps that give one value, in an `Option`.
pub const MAP_GET: &[&str] = &["get", "get_mut", "remove"];
/// Methods of slices that give an iterator of sub-slices.
pub const SUB_SLICES: &[&str] = &[
    "windows",
    "chunks",
    "chunks_mut",
    "chunks_exact",
    "chunks_exact_mut",
    "rchunks",
    "rchunks_mut",
    "split",
    "split_mut",
];

/// Iterator adapters whose items are the iterator's own.
pub const ITER_SAME: &[&str] = &[
    "filter",
    "skip",
    "take",
    "rev",
    "chain",
    "step_by",
    "peekable",
    "fuse",
    "inspect",
    "skip_while",
    "take_while",
    "cycle",
    "by_ref",
    "copied",
    "cloned",
];

/// Iterator methods that give one of its items, in an `Option`.
pub const ITER_ONE: &[&str] = &[
    "next",
    "last",
    "nth",
    "find",
    "max",
    "min",
    "max_by_key",
    "min_by_key",
    "max_by",
    "min_by",
    "reduce",
    "next_back",
    "nth_back",
    "rfind",
    "peek",
];

/// What a parameter of a closure handed to a std method is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// The receiver's item: an iterator's, a collection's element, `Option`'s or
    /// `Result`'s `Ok` value.
    Item,
    /// `Result`'s `Err` value.
    Err,
    /// The method's first argument (`fold`'s accumulator).
    First,
}

use Param::{Err as E, First as A, Item as T};

/// Closures iterator methods call: (method, argument, its parameters).
pub const ITER_CLOSURES: &[(&str, usize, &[Param])] = &[
    ("map", 0, &[T]),
    ("filter", 0, &[T]),
    ("for_each", 0, &[T]),
    ("filter_map", 0, &[T]),
    ("flat_map", 0, &[T]),
    ("inspect", 0, &[T]),
    ("take_while", 0, &[T]),
    ("skip_while", 0, &[T]),
    ("map_while", 0, &[T]),
    ("any", 0, &[T]),
    ("all", 0, &[T]),
    ("find", 0, &[T]),
    ("find_map", 0, &[T]),
    ("position", 0, &[T]),
    ("max_by_key", 0, &[T]),
    ("min_by_key", 0, &[T]),
    ("partition", 0, &[T]),
    ("try_for_each", 0, &[T]),
    ("max_by", 0, &[T, T]),
    ("min_by", 0, &[T, T]),
    ("reduce", 0, &[T, T]),
    ("fold", 1, &[A, T]),
    ("try_fold", 1, &[A, T]),
];

/// Closures `Option` methods call.
pub const OPTION_CLOSURES: &[(&str, usize, &[Param])] = &[
    ("map", 0, &[T]),
    ("and_then", 0, &[T]),
    ("filter", 0, &[T]),
    ("inspect", 0, &[T]),
    ("is_some_and", 0, &[T]),
    ("is_none_or", 0, &[T]),
    ("take_if", 0, &[T]),
    ("map_or", 1, &[T]),
    ("map_or_else", 1, &[T]),
];

/// Closures `Result` methods call.
pub const RESULT_CLOSURES: &[(&str, usize, &[Param])] = &[
    ("map", 0, &[T]),
    ("and_then", 0, &[T]),
    ("inspect", 0, &[T]),
    ("is_ok_and", 0, &[T]),
    ("map_or", 1, &[T]),
    ("map_or_else", 1, &[T]),
    ("map_or_else", 0, &[E]),
    ("map_err", 0, &[E]),
    ("or_else", 0, &[E]),
    ("inspect_err", 0, &[E]),
    ("is_err_and", 0, &[E]),
    ("unwrap_or_else", 0, &[E]),
];

/// Closures methods of `Vec` and slices call.
pub const SLICE_CLOSURES: &[(&str, usize, &[Param])] = &[
    ("sort_by", 0, &[T, T]),
    ("sort_unstable_by", 0, &[T, T]),
    ("sort_by_key", 0, &[T]),
    ("sort_unstable_by_key", 0, &[T]),
    ("sort_by_cached_key", 0, &[T]),
    ("retain", 0, &[T]),
    ("retain_mut", 0, &[T]),
    ("dedup_by_key", 0, &[T]),
    ("binary_search_by", 0, &[T]),
    ("binary_search_by_key", 1, &[T]),
];

/// The std operator traits, by the method an operator calls (see `parse::ir::Expr::Op`).
pub const OPERATORS: &[(&str, &str)] = &[
    ("add", "std::Add"),
    ("sub", "std::Sub"),
    ("mul", "std::Mul"),
    ("div", "std::Div"),
    ("rem", "std::Rem"),
    ("neg", "std::Neg"),
    ("not", "std::Not"),
    ("bitand", "std::BitAnd"),
    ("bitor", "std::BitOr"),
    ("bitxor", "std::BitXor"),
    ("shl", "std::Shl"),
    ("shr", "std::Shr"),
    ("add_assign", "std::AddAssign"),
    ("sub_assign", "std::SubAssign"),
    ("mul_assign", "std::MulAssign"),
    ("div_assign", "std::DivAssign"),
    ("rem_assign", "std::RemAssign"),
    ("bitand_assign", "std::BitAndAssign"),
    ("bitor_assign", "std::BitOrAssign"),
    ("bitxor_assign", "std::BitXorAssign"),
    ("shl_assign", "std::ShlAssign"),
    ("shr_assign", "std::ShrAssign"),
    ("eq", "std::PartialEq"),
    ("ne", "std::PartialEq"),
    ("lt", "std::PartialOrd"),
    ("le", "std::PartialOrd"),
    ("gt", "std::PartialOrd"),
    ("ge", "std::PartialOrd"),
    ("index", "std::Index"),
];

/// The std operator trait whose method `method` is.
pub fn operator_trait(method: &str) -> Option<&'static str> {
    OPERATORS
        .iter()
        .find(|(m, _)| *m == method)
        .map(|(_, t)| *t)
}
