//! Verification runs, off the protocol thread: one thread per run (with the pipeline's
//! large stack) runs the front end, then `crate::pipeline::run::run_front_streaming`, and sends
//! what it finds, member by member, to the server's event channel.
//!
//! Architecture invariant: a run never touches the server's state; it only sends
//! [`RunEvent`]s tagged with its generation, and the server drops those of a run it
//! has replaced. A run stops when its `Options::cancel` flag is set (no member
//! starts; the scheduler abandons the ones in flight), so a newer edit never waits
//! for an older run.

use super::analysis::MemberInfo;
use crate::pipeline::Event;
use crate::pipeline::MemberOutcome;
use crate::pipeline::Options;
use crate::source::Source;
use crate::syntax::InputError;
use crate::syntax::ast::Program;
use lsp_types::Uri;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// What a run found, in order: `Checked` first, `Done` last.
#[derive(Debug)]
pub enum Progress {
    /// The front end is done: the members to verify, or the input errors.
    Checked(Result<Vec<MemberInfo>, Vec<InputError>>),
    Member(Box<MemberOutcome>),
    Done {
        /// From the start of the run (front end included).
        time_ms: f64,
        /// The run itself failed (a panic outside any member).
        failure: Option<String>,
    },
}

#[derive(Debug)]
pub struct RunEvent {
    pub uri: Uri,
    pub generation: u64,
    pub progress: Progress,
}

/// A run to start.
pub struct RunRequest {
    pub uri: Uri,
    pub generation: u64,
    /// The name the pipeline gives the text (in `io.error`-like messages).
    pub path: String,
    pub text: Arc<String>,
    /// Verification options; `cancel` is the run's own flag.
    pub opts: Options,
}

/// Start a run on its own thread; `to_event` wraps each event for the server's
/// channel. False when no thread could be made (then a `Done` with a failure was
/// sent).
pub fn start<E: Send + 'static>(
    req: RunRequest,
    tx: Sender<E>,
    to_event: fn(RunEvent) -> E,
) -> bool {
    let (uri, generation) = (req.uri.clone(), req.generation);
    let send_tx = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("idf-verify-lsp-run".into())
        .stack_size(crate::guard::STACK_SIZE)
        .spawn(move || {
            let send = |progress: Progress| {
                let _ =
                    send_tx.send(to_event(RunEvent { uri: req.uri.clone(), generation, progress }));
            };
            let start = Instant::now();
            let result = crate::guard::catch_panic(|| run(&req, &send));
            let failure = result.err();
            send(Progress::Done { time_ms: start.elapsed().as_secs_f64() * 1000.0, failure });
        });
    if spawned.is_err() {
        let progress = Progress::Done {
            time_ms: 0.0,
            failure: Some("cannot start a thread for the run".into()),
        };
        let _ = tx.send(to_event(RunEvent { uri, generation, progress }));
    }
    spawned.is_ok()
}

/// The run itself (a cancelled run just ends: the server no longer listens to it).
fn run(req: &RunRequest, send: &dyn Fn(Progress)) {
    let front = crate::source::front_text(&req.text);
    match &front {
        Ok(program) => send(Progress::Checked(Ok(members(program)))),
        Err(errors) => {
            send(Progress::Checked(Err(errors.clone())));
            return;
        }
    }
    if req.opts.stopped() {
        return;
    }
    let source = Source::new(req.path.clone(), req.text.to_string());
    crate::pipeline::run::run_front_streaming(source, front, &req.opts, &mut |ev| {
        if let Event::Member(_, outcome) = ev {
            send(Progress::Member(Box::new(outcome.clone())));
        }
    });
}

/// The members the pipeline verifies, in its order.
fn members(program: &Program) -> Vec<MemberInfo> {
    crate::source::select_members(program, &[])
        .into_iter()
        .map(|(r, name)| {
            let m = &program.classes[r.class].members[r.member];
            MemberInfo { name, name_span: m.name.span, span: m.span }
        })
        .collect()
}
