//! The protocol thread: the documents the client has open, the requests and
//! notifications of the Language Server Protocol, and when each document is verified
//! (on open and save at once, on change after a pause of `debounce`).
//!
//! Architecture invariant: this thread never verifies and never blocks on a run: it
//! answers every request at once from the latest results, starts runs with
//! `runner::start`, and cancels a document's run (its `Options::cancel` flag) as soon
//! as a newer edit arrives.
//!
//! Runs in flight are bounded: at most `jobs` at once (cancelled runs count until
//! their thread ends), each with `jobs` divided by the runs in flight as its workers;
//! a document due while every slot is taken waits its turn (oldest first) and is
//! verified in its newest version when its turn comes; a closed document's waiting
//! run is dropped with the document. When the last run ends after documents were
//! closed, the allocator is asked to give the freed memory back to the system. Every message is handled under `catch_panic`: a request
//! that panics gets an `InternalError` response and the server goes on.

use super::analysis::Analysis;
use super::position::LineIndex;
use super::runner::{self, Progress, RunEvent, RunRequest};
use super::transport::{self, Incoming};
use crate::pipeline::Options;
use crate::verify::Config;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    CodeLensOptions, CodeLensParams, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, Hover, HoverContents, HoverParams,
    HoverProviderCapability, InitializeParams, InitializeResult, LogMessageParams, MarkupContent,
    MarkupKind, MessageType, PublishDiagnosticsParams, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Uri,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// What the protocol thread waits for.
pub enum Input {
    /// A frame from the client.
    Frame(Incoming),
    /// The client's stream ended.
    Closed,
    /// A run's progress.
    Run(Box<RunEvent>),
}

/// How documents are verified (`initializationOptions`: `timeout` in seconds or
/// `null` for none, `jobs`, `debounceMs`, `smoke`).
#[derive(Clone, Debug)]
pub struct Settings {
    /// Per-member time limit in seconds.
    pub timeout: Option<f64>,
    /// Members verified in parallel (0: one per core).
    pub jobs: usize,
    /// The pause after an edit before a run starts.
    pub debounce: Duration,
    /// Vacuity warnings (`--smoke`).
    pub smoke: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            timeout: Some(10.0),
            jobs: 0,
            debounce: Duration::from_millis(300),
            smoke: false,
        }
    }
}

impl Settings {
    /// These settings with the client's `initializationOptions` applied (a value of the
    /// wrong type or out of range is ignored).
    fn with(mut self, o: &Value) -> Settings {
        match o.get("timeout") {
            Some(Value::Null) => self.timeout = None,
            Some(v) => {
                if let Some(t) = v.as_f64().filter(|t| t.is_finite() && *t > 0.0 && *t <= 604_800.0)
                {
                    self.timeout = Some(t);
                }
            }
            None => {}
        }
        if let Some(j) = o.get("jobs").and_then(Value::as_u64).filter(|j| *j <= 256) {
            self.jobs = j as usize;
        }
        if let Some(ms) = o.get("debounceMs").and_then(Value::as_u64).filter(|ms| *ms <= 60_000) {
            self.debounce = Duration::from_millis(ms);
        }
        if let Some(b) = o.get("smoke").and_then(Value::as_bool) {
            self.smoke = b;
        }
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Uninitialized,
    Running,
    ShutDown,
}

/// A run in flight.
struct Running {
    generation: u64,
    cancel: Arc<AtomicBool>,
    version: i32,
    text: Arc<String>,
    /// When the edit it verifies arrived.
    edited: Instant,
}

struct Doc {
    version: i32,
    text: Arc<String>,
    /// A run is wanted from this time on.
    due: Option<Instant>,
    /// When the latest edit arrived.
    edited: Instant,
    running: Option<Running>,
    /// The latest run's results (kept until the next run has some).
    analysis: Option<Analysis>,
    /// `analysis` holds diagnostics the client has not been sent.
    unpublished: bool,
}

impl Doc {
    fn cancel(&mut self) {
        if let Some(r) = self.running.take() {
            r.cancel.store(true, Ordering::SeqCst);
        }
    }
}

type Failure = (i32, String);

struct Server {
    out: Sender<String>,
    events: Sender<Input>,
    docs: HashMap<Uri, Doc>,
    settings: Settings,
    phase: Phase,
    generation: u64,
    /// The client can be asked to refresh its code lenses.
    refresh_lenses: bool,
    next_request: i32,
    /// Runs started whose `Done` has not arrived (cancelled ones included).
    live_runs: usize,
    /// A document was closed since memory was last handed back (`release_memory`).
    closed_since_trim: bool,
}

/// Serve until `exit` (0 after `shutdown`, else 1) or the end of the input.
pub fn serve(
    rx: Receiver<Input>,
    events: Sender<Input>,
    out: Sender<String>,
    settings: Settings,
) -> i32 {
    let mut s = Server {
        out,
        events,
        docs: HashMap::new(),
        settings,
        phase: Phase::Uninitialized,
        generation: 0,
        refresh_lenses: false,
        next_request: 1,
        live_runs: 0,
        closed_since_trim: false,
    };
    let code = loop {
        let now = Instant::now();
        // With every slot taken, only a run's end (or a message) can change anything.
        let wait = (s.live_runs < s.max_runs())
            .then(|| s.docs.values().filter_map(|d| d.due).min())
            .flatten()
            .map(|t| t.saturating_duration_since(now));
        match rx.recv_timeout(wait.unwrap_or(Duration::from_secs(3600))) {
            Ok(Input::Frame(f)) => {
                if let Some(code) = s.frame(f) {
                    break code;
                }
            }
            Ok(Input::Run(ev)) => {
                if let Err(message) = crate::guard::catch_panic(|| s.run_event(*ev)) {
                    s.log(MessageType::ERROR, format!("internal error: {message}"));
                }
            }
            Ok(Input::Closed) | Err(RecvTimeoutError::Disconnected) => {
                break if s.phase == Phase::ShutDown { 0 } else { 1 };
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
        s.start_due_runs();
    };
    for d in s.docs.values_mut() {
        d.cancel();
    }
    code
}

impl Server {
    fn send(&self, m: Message) {
        let _ = self.out.send(transport::to_text(&m));
    }

    fn notify(&self, method: &str, params: impl serde::Serialize) {
        self.send(Message::Notification(Notification::new(method.into(), params)));
    }

    fn log(&self, typ: MessageType, message: String) {
        self.notify("window/logMessage", LogMessageParams { typ, message });
    }

    /// Handle one frame; `Some(code)` on `exit`.
    fn frame(&mut self, f: Incoming) -> Option<i32> {
        match f {
            Incoming::Invalid { id, code, message } => {
                let _ = self.out.send(transport::error_response(id.as_ref(), code, &message));
                None
            }
            Incoming::Ignored => None,
            Incoming::Message(Message::Request(req)) => {
                let id = req.id.clone();
                let method = req.method.clone();
                let result =
                    crate::guard::catch_panic(|| self.request(req)).unwrap_or_else(|message| {
                        Err((
                            ErrorCode::InternalError as i32,
                            format!("internal error in {method}: {message}"),
                        ))
                    });
                let response = match result {
                    Ok(v) => Response::new_ok(id, v),
                    Err((code, message)) => Response::new_err(id, code, message),
                };
                self.send(Message::Response(response));
                None
            }
            Incoming::Message(Message::Notification(n)) => {
                let method = n.method.clone();
                crate::guard::catch_panic(|| self.notification(n)).unwrap_or_else(|message| {
                    self.log(MessageType::ERROR, format!("internal error in {method}: {message}"));
                    None
                })
            }
            // Answers to our own requests (`workspace/codeLens/refresh`): nothing to do.
            Incoming::Message(Message::Response(_)) => None,
        }
    }

    fn request(&mut self, req: Request) -> Result<Value, Failure> {
        match (self.phase, req.method.as_str()) {
            (Phase::Uninitialized, "initialize") => self.initialize(req.params),
            (_, "initialize") => {
                Err((ErrorCode::InvalidRequest as i32, "the server is already initialized".into()))
            }
            (Phase::Uninitialized, m) => {
                Err((ErrorCode::ServerNotInitialized as i32, format!("`{m}` before `initialize`")))
            }
            (Phase::ShutDown, m) => {
                Err((ErrorCode::InvalidRequest as i32, format!("`{m}` after `shutdown`")))
            }
            (Phase::Running, "shutdown") => {
                self.phase = Phase::ShutDown;
                for d in self.docs.values_mut() {
                    d.cancel();
                    d.due = None;
                }
                Ok(Value::Null)
            }
            (Phase::Running, "textDocument/codeLens") => {
                let p: CodeLensParams = params(req.params)?;
                let lenses = self
                    .docs
                    .get(&p.text_document.uri)
                    .and_then(|d| d.analysis.as_ref())
                    .map(Analysis::code_lenses)
                    .unwrap_or_default();
                Ok(to_json(&lenses))
            }
            (Phase::Running, "textDocument/codeAction") => {
                let p: lsp_types::CodeActionParams = params(req.params)?;
                let actions = self
                    .docs
                    .get(&p.text_document.uri)
                    .and_then(|d| {
                        // Ranges are in the client's text: only when that was verified.
                        let a = d.analysis.as_ref()?;
                        (a.index.text().as_str() == d.text.as_str()).then_some(a)
                    })
                    .map(|a| super::actions::code_actions(a, &p.text_document.uri, p.range))
                    .unwrap_or_default();
                Ok(to_json(&actions))
            }
            (Phase::Running, "textDocument/hover") => {
                let p: HoverParams = params(req.params)?;
                let at = &p.text_document_position_params;
                Ok(to_json(&self.hover(&at.text_document.uri, at.position)))
            }
            (Phase::Running, m) => {
                Err((ErrorCode::MethodNotFound as i32, format!("unknown method `{m}`")))
            }
        }
    }

    fn initialize(&mut self, raw: Value) -> Result<Value, Failure> {
        let p: InitializeParams = params(raw)?;
        if let Some(o) = &p.initialization_options {
            self.settings = self.settings.clone().with(o);
        }
        self.refresh_lenses = p
            .capabilities
            .workspace
            .and_then(|w| w.code_lens)
            .and_then(|c| c.refresh_support)
            .unwrap_or(false);
        self.phase = Phase::Running;
        let capabilities = ServerCapabilities {
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::FULL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                        include_text: Some(true),
                    })),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
            code_action_provider: Some(lsp_types::CodeActionProviderCapability::Simple(true)),
            ..ServerCapabilities::default()
        };
        Ok(to_json(&InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "idf-verify".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        }))
    }

    fn hover(&self, uri: &Uri, position: lsp_types::Position) -> Option<Hover> {
        let doc = self.docs.get(uri)?;
        let analysis = doc.analysis.as_ref()?;
        // Positions are in the client's current text: only when that is what was verified.
        if analysis.index.text().as_str() != doc.text.as_str() {
            return None;
        }
        let value = analysis.hover(analysis.index.offset(position))?;
        Some(Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }),
            range: None,
        })
    }

    /// Handle one notification; `Some(code)` on `exit`.
    fn notification(&mut self, n: Notification) -> Option<i32> {
        if n.method == "exit" {
            return Some(if self.phase == Phase::ShutDown { 0 } else { 1 });
        }
        if self.phase != Phase::Running {
            // Before `initialize` and after `shutdown`, notifications are dropped.
            return None;
        }
        let now = Instant::now();
        let handled = match n.method.as_str() {
            "textDocument/didOpen" => params::<DidOpenTextDocumentParams>(n.params).map(|p| {
                let d = p.text_document;
                let doc = Doc {
                    version: d.version,
                    text: Arc::new(d.text),
                    due: Some(now),
                    edited: now,
                    running: None,
                    analysis: None,
                    unpublished: false,
                };
                if let Some(mut old) = self.docs.insert(d.uri, doc) {
                    old.cancel();
                }
            }),
            "textDocument/didChange" => params::<DidChangeTextDocumentParams>(n.params).map(|p| {
                let debounce = self.settings.debounce;
                let Some(doc) = self.docs.get_mut(&p.text_document.uri) else { return };
                let mut text = doc.text.to_string();
                for c in p.content_changes {
                    match c.range {
                        None => text = c.text,
                        Some(r) => {
                            let ix = LineIndex::new(Arc::new(std::mem::take(&mut text)));
                            let (a, b) = (ix.offset(r.start), ix.offset(r.end));
                            text = ix.text().to_string();
                            text.replace_range(a.min(b)..b.max(a), &c.text);
                        }
                    }
                }
                doc.text = Arc::new(text);
                doc.version = p.text_document.version;
                doc.edited = now;
                doc.due = Some(now + debounce);
                // The run of an older text is of no use any more.
                doc.cancel();
            }),
            "textDocument/didSave" => params::<DidSaveTextDocumentParams>(n.params).map(|p| {
                let Some(doc) = self.docs.get_mut(&p.text_document.uri) else { return };
                if let Some(text) = p.text
                    && text != *doc.text
                {
                    doc.text = Arc::new(text);
                    doc.edited = now;
                }
                doc.due = Some(now);
                doc.cancel();
            }),
            "textDocument/didClose" => params::<DidCloseTextDocumentParams>(n.params).map(|p| {
                let uri = p.text_document.uri;
                if let Some(mut d) = self.docs.remove(&uri) {
                    d.cancel();
                }
                self.closed_since_trim = true;
                if self.live_runs == 0 {
                    self.closed_since_trim = false;
                    release_memory();
                }
                self.notify(
                    "textDocument/publishDiagnostics",
                    PublishDiagnosticsParams { uri, diagnostics: vec![], version: None },
                );
            }),
            _ => Ok(()),
        };
        if let Err((_, message)) = handled {
            self.log(MessageType::ERROR, format!("ignored `{}`: {message}", n.method));
        }
        None
    }

    /// Members verified in parallel in all: `jobs`, or one per core (capped as the
    /// command line's `--jobs` is).
    fn jobs(&self) -> usize {
        let opts = Options { jobs: self.settings.jobs, ..Options::default() };
        crate::pipeline::run::worker_count(&opts)
    }

    /// How many runs may be in flight at once.
    fn max_runs(&self) -> usize {
        self.jobs()
    }

    fn start_due_runs(&mut self) {
        let now = Instant::now();
        let mut due: Vec<(Instant, Uri)> = self
            .docs
            .iter()
            .filter_map(|(uri, d)| d.due.filter(|t| *t <= now).map(|t| (t, uri.clone())))
            .collect();
        // Oldest first; the URI breaks ties, so the order never depends on hashing.
        due.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.as_str().cmp(b.1.as_str())));
        let s = &self.settings;
        let config = Config {
            timeout: s.timeout,
            trace: true,
            counterexample: true,
            smoke: s.smoke,
            fixes: true,
            ..Config::default()
        };
        let (jobs, max_runs) = (self.jobs(), self.max_runs());
        for (_, uri) in due {
            if self.live_runs >= max_runs {
                // The rest wait, still due, for a run to end.
                break;
            }
            let Some(doc) = self.docs.get_mut(&uri) else { continue };
            doc.due = None;
            doc.cancel();
            self.generation += 1;
            self.live_runs += 1;
            let cancel = Arc::new(AtomicBool::new(false));
            let opts = Options {
                methods: vec![],
                config: config.clone(),
                // The members in flight in all stay near `jobs`.
                jobs: (jobs / self.live_runs).max(1),
                check_only: false,
                deadline: None,
                cancel: Some(cancel.clone()),
                cache: None,
                shard: None,
            };
            doc.running = Some(Running {
                generation: self.generation,
                cancel,
                version: doc.version,
                text: doc.text.clone(),
                edited: doc.edited,
            });
            let req = RunRequest {
                uri: uri.clone(),
                generation: self.generation,
                path: uri.as_str().to_string(),
                text: doc.text.clone(),
                opts,
            };
            runner::start(req, self.events.clone(), |ev| Input::Run(Box::new(ev)));
        }
    }

    fn run_event(&mut self, ev: RunEvent) {
        if let Progress::Done { .. } = ev.progress {
            // Every run ends with one `Done`, whether it is still wanted or not.
            self.live_runs = self.live_runs.saturating_sub(1);
            if self.live_runs == 0 && self.closed_since_trim {
                self.closed_since_trim = false;
                release_memory();
            }
        }
        let Some(doc) = self.docs.get_mut(&ev.uri) else { return };
        let Some(run) = doc.running.as_ref().filter(|r| r.generation == ev.generation) else {
            // A run that was replaced or cancelled.
            return;
        };
        let (version, text, edited) = (run.version, run.text.clone(), run.edited);
        let new_analysis = |checked| Analysis::new(version, LineIndex::new(text.clone()), checked);
        let mut done = None;
        let publish = match ev.progress {
            Progress::Checked(checked) => {
                // The old diagnostics stay shown until this run has something to say.
                let input_errors = checked.is_err();
                doc.analysis = Some(new_analysis(checked));
                doc.unpublished = true;
                input_errors
            }
            Progress::Member(outcome) => doc.analysis.as_mut().is_some_and(|a| a.record(*outcome)),
            Progress::Done { time_ms, failure } => {
                if doc.analysis.is_none() || failure.is_some() {
                    doc.unpublished = true;
                }
                let analysis = doc.analysis.get_or_insert_with(|| new_analysis(Ok(vec![])));
                analysis.done = true;
                analysis.failure = failure;
                let since_edit = edited.elapsed().as_secs_f64() * 1000.0;
                done = Some(format!(
                    "{} v{version}: {} in {time_ms:.1} ms ({since_edit:.1} ms after the edit)",
                    ev.uri.as_str(),
                    analysis.counts(),
                ));
                doc.running = None;
                doc.unpublished
            }
        };
        if publish {
            self.publish(&ev.uri);
        }
        if let Some(message) = done {
            self.log(MessageType::INFO, message);
            if self.refresh_lenses {
                let id = RequestId::from(format!("idf-verify-{}", self.next_request));
                self.next_request += 1;
                self.send(Message::Request(Request::new(
                    id,
                    "workspace/codeLens/refresh".into(),
                    (),
                )));
            }
        }
    }

    fn publish(&mut self, uri: &Uri) {
        let Some(doc) = self.docs.get_mut(uri) else { return };
        doc.unpublished = false;
        let Some(a) = doc.analysis.as_ref() else { return };
        let params = PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics: a.diagnostics(uri),
            version: Some(a.version),
        };
        self.notify("textDocument/publishDiagnostics", params);
    }
}

/// Hand the memory freed by closed documents and ended runs back to the system: the
/// process keeps freed memory for reuse (`main`'s allocator settings, made for short
/// batch runs), which a long-lived server must not hold after its documents close.
fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn params<P: DeserializeOwned>(v: Value) -> Result<P, Failure> {
    serde_json::from_value(v)
        .map_err(|e| (ErrorCode::InvalidParams as i32, format!("invalid params: {e}")))
}

fn to_json(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}
