//! Every run isolated: a panic inside the model is a found bug, never a lost campaign.
//!
//! Protocol logic panics on a broken internal invariant (`unreachable!`, `assert!`): the
//! simulator is a test tool, and a crash names the rule that broke. Campaign commands run each
//! seed inside [`isolated`], which turns such a panic into a value ([`Panic`]: the message and
//! the source location), so the campaign goes on, reports the seed, and shrinks it like any
//! violation. While a run is isolated the panic hook records the panic instead of printing it,
//! so nothing is sprayed over the progress bar; outside [`isolated`] the default hook applies.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

/// A panic caught in an isolated run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Panic {
    /// `file:line:column` of the `panic!`, `assert!` or `unwrap` that fired. The shrinker keeps
    /// a candidate only if it panics at the same location (another location is another bug).
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for Panic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "panicked at {}: {}", self.location, self.message)
    }
}

thread_local! {
    /// How deep this thread is in [`isolated`] calls (they may nest: a shrink inside a
    /// campaign worker).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The last panic recorded on this thread while isolated.
    static CAUGHT: RefCell<Option<Panic>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs, once per process, a hook that records panics of isolated threads and leaves the
/// others to the hook that was there before.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) == 0 {
                previous(info);
                return;
            }
            let location = info.location().map_or_else(
                || "unknown location".to_owned(),
                |l| format!("{}:{}:{}", l.file(), l.line(), l.column()),
            );
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(a panic without a message)".to_owned());
            CAUGHT.with(|c| *c.borrow_mut() = Some(Panic { location, message }));
        }));
    });
}

/// Runs `f`; a panic inside it comes back as `Err(Panic)` instead of unwinding further.
///
/// A run owns all of its state (the world is built inside `f` and dropped with it), so nothing
/// half-updated by the panic is seen afterwards: that is why `AssertUnwindSafe` is sound here.
pub fn isolated<R>(f: impl FnOnce() -> R) -> Result<R, Panic> {
    install_hook();
    DEPTH.with(|d| d.set(d.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    result.map_err(|_| {
        CAUGHT
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| Panic {
                location: "unknown location".to_owned(),
                message: "(the panic hook recorded nothing)".to_owned(),
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_value_with_its_location_and_message() {
        let caught = isolated(|| -> u32 { panic!("broken invariant {}", 7) }).unwrap_err();
        assert_eq!(caught.message, "broken invariant 7");
        assert!(
            caught.location.starts_with("src/fuzz/isolate.rs:"),
            "{caught}"
        );
        assert_eq!(isolated(|| 41 + 1), Ok(42));
    }

    #[test]
    fn nested_isolation_reports_the_inner_panic_and_keeps_the_outer_run() {
        let outer = isolated(|| {
            let inner = isolated(|| unreachable!("inner")).unwrap_err();
            assert!(inner.message.contains("inner"));
            "outer survived"
        });
        assert_eq!(outer, Ok("outer survived"));
    }
}
