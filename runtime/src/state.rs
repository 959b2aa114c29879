//! The per-thread state every check reads (compiled out with `--cfg nosync_off`).
//!
//! Two thread-locals, both `const`-initialised and `Cell`-based (no `RefCell`, so no borrow panics):
//! - `FLAGS`, a `Cell<u32>` without destructor: the only thing `declare_sync` reads on its fast path.
//!   Bit 0: the innermost live scope forbids. Bit 1: a `count_syncs` is recording on this thread.
//! - `STACK`, the live scopes, innermost last. Each guard owns a token and removes exactly its own
//!   frame, so dropping guards out of order never corrupts the state: the innermost *live* scope
//!   always decides.

use std::cell::Cell;
use std::panic::Location;

pub(crate) const FORBID: u32 = 1;
pub(crate) const RECORD: u32 = 2;

/// One live scope.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Frame {
    token: u64,
    pub(crate) forbid: bool,
    pub(crate) location: &'static Location<'static>,
    pub(crate) function: Option<&'static str>,
}

#[derive(Debug, Default)]
struct Stack {
    frames: Vec<Frame>,
    next_token: u64,
}

thread_local! {
    static FLAGS: Cell<u32> = const { Cell::new(0) };
    static STACK: Cell<Stack> = const { Cell::new(Stack { frames: Vec::new(), next_token: 0 }) };
}

/// The fast-path flags of this thread.
#[inline(always)]
pub(crate) fn flags() -> u32 {
    FLAGS.with(Cell::get)
}

pub(crate) fn set_flag(bit: u32, on: bool) {
    FLAGS.with(|f| f.set(if on { f.get() | bit } else { f.get() & !bit }));
}

/// Runs `f` on this thread's stack; `None` once the thread-locals are being destroyed.
/// `f` never calls user code, so taking the stack out of its cell cannot be observed.
fn with_stack<R>(f: impl FnOnce(&mut Stack) -> R) -> Option<R> {
    STACK
        .try_with(|cell| {
            let mut stack = cell.take();
            let r = f(&mut stack);
            cell.set(stack);
            r
        })
        .ok()
}

/// Opens a scope; the token closes it again. `None` when the thread is shutting down.
pub(crate) fn push(
    forbid: bool,
    location: &'static Location<'static>,
    function: Option<&'static str>,
) -> Option<u64> {
    let token = with_stack(|s| {
        let token = s.next_token;
        s.next_token = s.next_token.wrapping_add(1);
        s.frames.push(Frame {
            token,
            forbid,
            location,
            function,
        });
        token
    })?;
    set_flag(FORBID, forbid);
    Some(token)
}

/// Closes the scope opened with `token`, wherever it is on the stack.
pub(crate) fn pop(token: u64) {
    let top_forbids = with_stack(|s| {
        if let Some(i) = s.frames.iter().rposition(|f| f.token == token) {
            s.frames.remove(i);
        }
        s.frames.last().is_some_and(|f| f.forbid)
    });
    if let Some(forbid) = top_forbids {
        set_flag(FORBID, forbid);
    }
}

/// The innermost live scope of this thread.
pub(crate) fn innermost() -> Option<Frame> {
    with_stack(|s| s.frames.last().copied()).flatten()
}
