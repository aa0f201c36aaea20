//! `idf-verify lsp`: a language server on stdio. Diagnostics with the error ids of
//! LANGUAGE.md section 8 (with related information, counterexamples and replays),
//! per-member status as code lenses, and the symbolic state of a failing path on hover.
//!
//! Architecture invariant: the server sits beside `pipeline` and `report`, above
//! `verify` (DESIGN.md): it runs the pipeline's pipeline on editor buffers
//! (`crate::pipeline::run::run_front_streaming`) and only views its results. Three threads talk
//! through channels: a reader (frames from stdin), the protocol thread (`server`),
//! a writer (frames to stdout); each verification run has its own (`runner`).

mod actions;
mod analysis;
mod position;
mod runner;
mod server;
mod transport;

use std::sync::mpsc;

/// The allocator settings of a long-lived process. A batch run keeps up to 1 GiB of
/// freed memory at the top of each thread's arena for the next member (`main`'s
/// settings), and `malloc_trim` gives back only the main arena's top, not those: a
/// server whose runs have ended would keep tens of MB per arena its runs' threads used.
/// Here an arena gives back what lies free at its top past 4 MiB as it is freed.
fn server_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TOP_PAD, 1 << 20);
    }
}

/// Run the server on stdin/stdout until `exit`; the process's exit status (0 after
/// `shutdown` then `exit`, 1 otherwise).
pub fn main() -> i32 {
    server_allocator();
    let (tx, rx) = mpsc::channel::<server::Input>();
    let (out_tx, out_rx) = mpsc::channel::<String>();
    let reader_tx = tx.clone();
    let reader =
        std::thread::Builder::new().name("idf-verify-lsp-reader".into()).spawn(move || {
            let stdin = std::io::stdin();
            let mut input = stdin.lock();
            while let Ok(Some(frame)) = transport::read_frame(&mut input) {
                if reader_tx.send(server::Input::Frame(frame)).is_err() {
                    return;
                }
            }
            let _ = reader_tx.send(server::Input::Closed);
        });
    let writer =
        std::thread::Builder::new().name("idf-verify-lsp-writer".into()).spawn(move || {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            for v in out_rx {
                if transport::write_frame(&mut out, &v).is_err() {
                    return;
                }
            }
        });
    let (Ok(_reader), Ok(writer)) = (reader, writer) else {
        crate::say!("error: cannot start the server's threads");
        return 3;
    };
    let code = server::serve(rx, tx, out_tx, server::Settings::default());
    // Everything answered is written before the process ends (the reader may stay
    // blocked on stdin: the process's exit ends it).
    let _ = writer.join();
    code
}
