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

/// Run the server on stdin/stdout until `exit`; the process's exit status (0 after
/// `shutdown` then `exit`, 1 otherwise).
pub fn main() -> i32 {
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
