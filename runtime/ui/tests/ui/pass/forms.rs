//! Every accepted form compiles without a warning, and runs.
#![deny(warnings)]

use std::future::Future;

use nosync::{SyncViolation, allow_sync, no_sync, synchronizes};

#[no_sync]
pub fn free() {}

#[nosync::no_sync]
fn path_spelling() -> u8 {
    #![allow(clippy::let_and_return)]
    let x = 1;
    x
}

#[::nosync::no_sync]
unsafe fn unsafe_fn(p: *const u8) -> u8 {
    // SAFETY: callers pass a valid pointer.
    unsafe { *p }
}

#[no_sync]
extern "C" fn callback(x: i32) -> i32 {
    x + 1
}

#[no_sync]
fn generic<'a, T, const N: usize>(
    items: &'a [T; N],
    f: impl Fn(&T) -> bool + 'a,
) -> impl Iterator<Item = &'a T> + 'a
where
    T: Clone,
{
    items.iter().filter(move |x| f(x))
}

#[no_sync]
fn returns_a_future() -> impl Future<Output = u8> {
    async { 1 }
}

#[no_sync]
async fn async_fn(x: &u8, (a, _): (u8, u8)) -> Result<u8, SyncViolation> {
    let y = sink()?;
    if *x == 0 {
        return Ok(a);
    }
    Ok(y + x)
}

#[no_sync]
async fn async_impl_trait() -> impl Iterator<Item = u8> {
    [1u8].into_iter()
}

#[no_sync]
async unsafe fn async_unsafe() {}

/// The body is checked against the declared return type, so both returns coerce to it.
#[no_sync]
async fn async_coercions(flag: bool) -> Box<dyn std::fmt::Display> {
    if flag {
        return Box::new(1);
    }
    Box::new("one")
}

#[no_sync]
async fn async_question_mark(s: &str) -> Result<u32, Box<dyn std::error::Error>> {
    let x: u32 = s.parse()?;
    Ok(x)
}

#[synchronizes]
fn sink() -> Result<u8, SyncViolation> {
    Ok(1)
}

#[synchronizes(reason = "copies to the host")]
fn sink_with_reason() -> Vec<u8> {
    Vec::new()
}

#[synchronizes(maybe, reason = "waits when the pool is empty")]
fn sink_maybe() -> std::io::Result<()> {
    Ok(())
}

#[synchronizes(maybe)]
fn sink_maybe_default() -> ::core::result::Result<(), Box<dyn std::error::Error>> {
    Ok(())
}

/// A user item with the expansion's internal name does not clash with it.
#[synchronizes]
fn sink_with_items() -> u8 {
    static __NOSYNC_SITE: u8 = 3;
    __NOSYNC_SITE
}

#[synchronizes]
fn sink_generic_error<E: From<SyncViolation>>(mut n: u8) -> Result<u8, E> {
    n += 1;
    Ok(n)
}

#[no_sync]
async fn async_mut_param(mut n: u8) -> u8 {
    n += 1;
    n
}

#[no_sync]
#[track_caller]
fn tracked() {}

#[synchronizes(reason = "waits")]
async fn async_sink() -> std::result::Result<(), SyncViolation> {
    Ok(())
}

#[synchronizes]
unsafe extern "C" fn c_sink() {}

#[allow_sync(reason = "warm-up, before the hot loop")]
fn warm_up() -> u8 {
    sink_with_reason().len() as u8
}

unsafe extern "C" {
    #[synchronizes(reason = "cudaDeviceSynchronize waits for the whole device")]
    pub fn ffi_synchronize() -> i32;
}

struct Stream(u8);

impl Stream {
    #[no_sync]
    pub fn method(&self) -> u8 {
        self.0
    }

    #[no_sync]
    pub fn method_mut(&mut self, by: u8) -> &mut Self {
        self.0 += by;
        self
    }

    #[synchronizes(reason = "waits for the stream")]
    pub fn synchronize(self: &Self) -> Result<(), SyncViolation> {
        Ok(())
    }

    #[no_sync]
    pub async fn async_method(&mut self) -> u8 {
        self.0
    }

    #[allow_sync(reason = "reads the result once")]
    pub fn read(self) -> u8 {
        self.0
    }
}

trait Device {
    #[synchronizes(reason = "waits for the device")]
    fn wait(&self) -> Result<(), SyncViolation>;

    #[synchronizes(maybe)]
    fn maybe_wait(&self);

    #[no_sync]
    fn hot_default(&self) -> Result<(), SyncViolation> {
        self.wait()
    }

    #[synchronizes]
    fn sync_default(&self) -> u8 {
        0
    }

    #[no_sync]
    async fn async_default(&self) -> u8 {
        1
    }
}

impl Device for Stream {
    #[synchronizes(reason = "waits for the device")]
    fn wait(&self) -> Result<(), SyncViolation> {
        Ok(())
    }

    #[synchronizes(maybe)]
    fn maybe_wait(&self) {}
}

fn main() {
    free();
    assert_eq!(path_spelling(), 1);
    // SAFETY: a valid pointer to a local.
    assert_eq!(unsafe { unsafe_fn(&3) }, 3);
    assert_eq!(callback(1), 2);
    assert_eq!(generic(&[1, 2, 3], |x| *x > 1).count(), 2);
    drop(returns_a_future());
    drop(async_fn(&1, (2, 3)));
    drop(async_impl_trait());
    drop((async_coercions(true), async_question_mark("1")));
    // SAFETY: does nothing.
    drop(unsafe { async_unsafe() });
    assert_eq!(sink().unwrap(), 1);
    assert_eq!(sink_with_items(), 3);
    assert_eq!(sink_generic_error::<SyncViolation>(1).unwrap(), 2);
    drop(async_mut_param(1));
    tracked();
    assert!(sink_maybe().is_ok() && sink_maybe_default().is_ok());
    drop(async_sink());
    // SAFETY: does nothing.
    unsafe { c_sink() };
    assert_eq!(warm_up(), 0);
    let _ = ffi_synchronize;
    let mut stream = Stream(1);
    assert_eq!(stream.method_mut(1).method(), 2);
    stream.synchronize().unwrap();
    drop(stream.async_method());
    let hot = nosync::with_mode(nosync::Mode::Error, || stream.hot_default());
    assert_eq!(hot.unwrap_err().scope_function(), Some("hot_default"));
    stream.maybe_wait();
    assert_eq!(stream.sync_default(), 0);
    drop(stream.async_default());
    assert_eq!(stream.read(), 2);
}
