//! gdscan's border against panics of the code it calls.
//!
//! Some third-party decoders (arrow-rs's page decoders among them) panic on
//! corrupt input instead of returning an error. gdscan runs such code
//! through [`catch`] (or [`CatchPanic`] for a future): the panic becomes a
//! typed [`Panicked`] error, and nothing is printed. Rust prints a panic's
//! message and backtrace from the process's panic hook *before* unwinding
//! reaches any `catch_unwind`, so catching alone is not silent: the first
//! call here wraps the process's hook once, and the wrapper stays quiet
//! while the panicking thread is inside [`catch`] or a poll of
//! [`CatchPanic`]. Panics anywhere else reach the previous hook as before.
//!
//! ```
//! let caught = gdscan::border::catch(|| {
//!     let v: Vec<u8> = Vec::new();
//!     v[3] // an index out of bounds, as a corrupt page can cause
//! });
//! let err = caught.unwrap_err();
//! assert!(err.to_string().contains("index out of bounds"));
//! ```

use std::cell::Cell;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

thread_local! {
    /// How many [`catch`] scopes (or polls of [`CatchPanic`]) this thread
    /// is inside: the hook stays quiet while it is above zero.
    static QUIET: Cell<u32> = const { Cell::new(0) };
}

static WRAP_HOOK: Once = Once::new();

/// Wraps the process's panic hook once: quiet inside a border scope, the
/// previous hook everywhere else.
fn install_quiet_hook() {
    WRAP_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// Marks this thread as inside a border scope until dropped (also when
/// unwinding passes through it).
struct QuietScope;

impl QuietScope {
    fn enter() -> Self {
        install_quiet_hook();
        QUIET.with(|q| q.set(q.get() + 1));
        QuietScope
    }
}

impl Drop for QuietScope {
    fn drop(&mut self) {
        QUIET.with(|q| q.set(q.get().saturating_sub(1)));
    }
}

/// A panic caught at gdscan's border, with the panic's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stopped by an internal check (a panic, caught): {message}")]
pub struct Panicked {
    message: String,
}

impl Panicked {
    /// The panic's message (its `&str` or `String` payload; a placeholder
    /// for any other payload).
    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn from_payload(payload: Box<dyn std::any::Any + Send>) -> Self {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a panic without a message".to_string()
        };
        Panicked { message }
    }
}

/// Runs `f`; a panic inside it becomes [`Panicked`], and the process's
/// panic hook prints nothing for it.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    let _quiet = QuietScope::enter();
    catch_unwind(AssertUnwindSafe(f)).map_err(Panicked::from_payload)
}

/// A future whose polls run inside [`catch`]: a panic while polling it
/// resolves it to `Err(Panicked)`, silently.
#[derive(Debug)]
pub struct CatchPanic<F> {
    inner: F,
}

impl<F> CatchPanic<F> {
    /// Wraps `inner`.
    pub fn new(inner: F) -> Self {
        CatchPanic { inner }
    }
}

impl<F: Future + Unpin> Future for CatchPanic<F> {
    type Output = Result<F::Output, Panicked>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.inner;
        match catch(|| Pin::new(inner).poll(cx)) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(p) => Poll::Ready(Err(p)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_typed_error_with_its_message() {
        let err = catch(|| -> u32 { panic!("page {} is corrupt", 7) }).unwrap_err();
        assert_eq!(err.message(), "page 7 is corrupt");
        assert_eq!(catch(|| 5).unwrap(), 5);
    }

    #[test]
    fn the_scope_ends_after_a_panic() {
        let _ = catch(|| panic!("inner"));
        assert_eq!(QUIET.with(Cell::get), 0);
        let nested = catch(|| catch(|| panic!("deep")).is_err());
        assert_eq!(nested, Ok(true));
        assert_eq!(QUIET.with(Cell::get), 0);
    }

    #[test]
    fn a_future_that_panics_resolves_to_an_error() {
        let fut = CatchPanic::new(Box::pin(async { panic!("in a poll") }));
        let out: Result<(), Panicked> = futures::executor::block_on(fut);
        assert_eq!(out.unwrap_err().message(), "in a poll");
        let ok = futures::executor::block_on(CatchPanic::new(Box::pin(async { 3 })));
        assert_eq!(ok, Ok(3));
    }
}
