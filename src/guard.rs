//! Threads with stacks large enough for deep programs, and panics turned into
//! messages: whatever runs the front end, the verifier or the interpreter does it
//! under these, so a bug is an internal error (exit 3), never a crash.
//!
//! Architecture invariant: a leaf (imports nothing of this crate).

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Stack size of every thread that parses, checks or verifies.
pub const STACK_SIZE: usize = 512 * 1024 * 1024;

/// Run `f` on a fresh thread with a [`STACK_SIZE`] stack (for callers outside the pool).
pub fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(STACK_SIZE)
            .spawn_scoped(s, f)
            .expect("cannot spawn a thread")
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Replace the default panic output (message and backtrace on stderr) by a quiet hook
/// that remembers the message and location, for [`MemberOutcome::Internal`].
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = panic_message(info.payload());
        let text = match info.location() {
            Some(l) => format!("{msg} ({}:{})", l.file(), l.line()),
            None => msg,
        };
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
    }));
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Run `f`, turning a panic into `Err(message)`.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    LAST_PANIC.with(|p| p.borrow_mut().take());
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let recorded = LAST_PANIC.with(|p| p.borrow_mut().take());
        format!("panic: {}", recorded.unwrap_or_else(|| panic_message(payload.as_ref())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_messages() {
        install_panic_hook();
        let r: Result<(), String> = catch_panic(|| panic!("boom {}", 1));
        let msg = r.unwrap_err();
        assert!(msg.starts_with("panic: boom 1"), "{msg}");
        assert_eq!(catch_panic(|| 7), Ok(7));
        let _ = std::panic::take_hook();
    }
}
