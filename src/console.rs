//! Lines for the terminal outside the reports (usage, errors, internal errors): written
//! without ever panicking. `eprintln!` panics when stderr cannot be written (closed,
//! a full disk, a broken pipe), which would turn an input error into a crash; here a
//! failed write is remembered, and the process then exits 3 (`stderr_failed`).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// Write one line on stderr. A closed pipe (`2>&1 | head`) is the reader's choice, as
/// on stdout, not a failure; any other error (a full disk) is.
pub fn err_line(args: std::fmt::Arguments<'_>) {
    let mut e = std::io::stderr().lock();
    match writeln!(e, "{args}").and_then(|()| e.flush()) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(_) => STDERR_FAILED.store(true, Ordering::SeqCst),
    }
}

/// Did a line meant for stderr fail to be written?
pub fn stderr_failed() -> bool {
    STDERR_FAILED.load(Ordering::SeqCst)
}

/// `eprintln!` that never panics (see the module's doc).
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => { $crate::console::err_line(format_args!($($t)*)) };
}
