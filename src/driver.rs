//! The pipeline: find `.jv` files, load, parse, check, verify every selected member in
//! a rayon pool, and hand back plain results for `crate::report`.
//!
//! Architecture invariant: the driver never prints and never decides how results look.
//! Everything runs on threads with large stacks; a panic or an `Err` from the verifier
//! becomes a [`MemberOutcome::Internal`] (exit 3), never a crash.

use crate::check::check;
use crate::report::Lines;
use crate::syntax::InputError;
use crate::syntax::ast::{MemberKind, MemberRef, Program, Span};
use crate::syntax::parse;
use crate::verify::{Config, MemberResult, verify_member_keyed};
use rayon::prelude::*;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Stack size of every thread that parses, checks or verifies.
pub const STACK_SIZE: usize = 512 * 1024 * 1024;

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `Class.member` names to verify; empty means all.
    pub methods: Vec<String>,
    pub config: Config,
    /// Worker threads; 0 means one per core.
    pub jobs: usize,
    /// `false`: stop after checking (no member is verified).
    pub check_only: bool,
    /// A whole-run time limit in seconds (`--deadline`): past it no member starts,
    /// and members not finished are reported as timeouts.
    pub deadline: Option<f64>,
    /// This run's own stop flag (the language server cancels a run when a newer edit
    /// arrives): once set, it acts on this run as Ctrl-C ([`INTERRUPTED`]) does on all.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The result cache's folder (`crate::cache`); `None`: verify every member.
    pub cache: Option<PathBuf>,
    /// `--shard K/N`: verify only this shard's members (`crate::shard`).
    pub shard: Option<crate::shard::Shard>,
}

impl Options {
    /// Whether this run should stop: Ctrl-C, or its own `cancel` flag.
    pub fn stopped(&self) -> bool {
        stopped(&self.cancel)
    }
}

/// Whether a run with this `cancel` flag should stop (Ctrl-C stops every run).
pub fn stopped(cancel: &Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    INTERRUPTED.load(SeqCst) || cancel.as_ref().is_some_and(|c| c.load(SeqCst))
}

/// A source file as read: its path as given and its text (lossily decoded if it is not
/// UTF-8, for rendering and for reading expectation comments).
#[derive(Clone, Debug)]
pub struct Source {
    pub path: String,
    pub text: String,
}

#[derive(Clone, Debug)]
pub enum MemberOutcome {
    Done(MemberResult),
    /// The verifier returned `Err` or panicked.
    Internal {
        name: String,
        kind: MemberKind,
        span: Span,
        message: String,
    },
}

impl MemberOutcome {
    pub fn name(&self) -> &str {
        match self {
            MemberOutcome::Done(r) => &r.name,
            MemberOutcome::Internal { name, .. } => name,
        }
    }
}

#[derive(Clone, Debug)]
pub enum FileStatus {
    /// Parse, type or I/O errors: nothing was verified.
    Input(Vec<InputError>),
    /// Checked; the selected members' outcomes in program order.
    Checked(Vec<MemberOutcome>),
}

#[derive(Clone, Debug)]
pub struct FileReport {
    pub source: Source,
    pub status: FileStatus,
    /// With `--method`: the spans of the members selected in this file (`--expect` then
    /// looks only at expectations inside them). `None`: the whole file counts.
    pub scope: Option<Vec<Span>>,
}

#[derive(Clone, Debug)]
pub struct Run {
    pub files: Vec<FileReport>,
    pub time_ms: f64,
    /// `--method` names that matched no member of any file.
    pub unmatched_methods: Vec<String>,
    /// Stopped by Ctrl-C or `Options::cancel`: only the members that finished are reported.
    pub interrupted: bool,
    /// With `--shard`: the whole batch's layout (for `idf-verify merge`).
    pub shard: Option<crate::shard::Layout>,
    /// What the result cache did.
    pub cache: crate::cache::CacheStats,
}

/// Files named on the command line, with folders searched recursively for `*.jv`
/// (sorted). A path that does not exist is kept, so that loading reports it.
pub fn collect_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found);
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// Every `*.jv` below `dir`. A folder that cannot be read (or an entry that cannot be
/// listed) is kept as a path, so that loading reports it as an `io.error`: nothing
/// is skipped silently.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(_) => return out.push(dir.to_path_buf()),
    };
    for entry in entries {
        let Ok(entry) = entry else {
            out.push(dir.to_path_buf());
            continue;
        };
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, out),
            _ if path.extension().is_some_and(|e| e == "jv") => out.push(path),
            Ok(_) => {}
            Err(_) => out.push(path),
        }
    }
}

/// Read a file: its source, and its text or an `io.error`. Only regular files are read
/// (a FIFO named `x.jv` would block for ever); a UTF-8 byte-order mark is dropped.
pub fn load(path: &Path) -> (Source, Result<String, InputError>) {
    let shown = shown_path(path);
    let io_error = |message: String| {
        let err =
            InputError { id: "io.error", message, span: None, label: String::new(), notes: vec![] };
        (Source { path: shown.clone(), text: String::new() }, Err(err))
    };
    match std::fs::metadata(path) {
        Err(e) => return io_error(format!("cannot read `{shown}`: {e}")),
        Ok(m) if m.is_dir() => {
            return io_error(format!("cannot read the folder `{shown}` (or one of its entries)"));
        }
        Ok(m) if !m.is_file() => {
            return io_error(format!("`{shown}` is not a regular file"));
        }
        Ok(_) => {}
    }
    match std::fs::read(path) {
        Err(e) => io_error(format!("cannot read `{shown}`: {e}")),
        Ok(mut bytes) => {
            if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
                bytes.drain(..3);
            }
            load_bytes(shown, bytes)
        }
    }
}

/// A path as reports show it: its bytes as UTF-8, each byte that is not shown as
/// `\xNN` (a lossy `U+FFFD` would make two different names look the same).
pub fn shown_path(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in path.as_os_str().as_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        path.display().to_string()
    }
}

fn load_bytes(shown: String, bytes: Vec<u8>) -> (Source, Result<String, InputError>) {
    match String::from_utf8(bytes) {
        Ok(text) => (Source { path: shown, text: text.clone() }, Ok(text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bad = e.utf8_error().error_len().unwrap_or(1);
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let err = InputError::new(
                "io.error",
                format!("the file is not valid UTF-8 (byte 0x{:02x})", e.as_bytes()[at]),
                // The lossy text holds U+FFFD (3 bytes) where the bad bytes were.
                Span::new(at, at + 3),
                format!("{bad} invalid byte{}", if bad == 1 { "" } else { "s" }),
            );
            (Source { path: shown, text }, Err(err))
        }
    }
}

/// Parse and check one source text. At most one error is kept per line (the first):
/// one mistake often trips several rules at once, and an `// expect:` comment names
/// exactly the errors of its line.
pub fn front_end(text: &str) -> Result<Program, Vec<InputError>> {
    parse(text).and_then(check).map_err(|errors| {
        let lines = Lines::new(text);
        let mut seen = std::collections::HashSet::new();
        errors
            .into_iter()
            .filter(|e| e.span.is_none_or(|s| seen.insert(lines.line(s.start as usize))))
            .collect()
    })
}

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

/// The members to verify (everything but fields), filtered by `--method` names.
pub fn select_members(program: &Program, methods: &[String]) -> Vec<(MemberRef, String)> {
    let mut out = Vec::new();
    for (ci, class) in program.classes.iter().enumerate() {
        for (mi, m) in class.members.iter().enumerate() {
            if m.kind == MemberKind::Field {
                continue;
            }
            let name = if m.kind == MemberKind::Constructor {
                format!("{}.new", class.name.name)
            } else {
                format!("{}.{}", class.name.name, m.name.name)
            };
            if methods.is_empty() || methods.contains(&name) {
                out.push((MemberRef { class: ci, member: mi }, name));
            }
        }
    }
    out
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

/// Verify one member; an `Err` or a panic becomes `Internal`.
pub fn verify_one(
    program: &Program,
    key: u64,
    member: MemberRef,
    name: &str,
    config: &Config,
) -> MemberOutcome {
    let m = &program.classes[member.class].members[member.member];
    match catch_panic(|| verify_member_keyed(program, key, member, config)) {
        Ok(Ok(mut r)) => {
            if r.name.is_empty() {
                r.name = name.to_string();
            }
            MemberOutcome::Done(r)
        }
        Ok(Err(message)) | Err(message) => MemberOutcome::Internal {
            name: name.to_string(),
            kind: m.kind,
            span: m.name.span,
            message,
        },
    }
}

/// The front end of one file, inside the current thread.
fn front_file(path: &Path) -> (Source, Result<Program, Vec<InputError>>) {
    let (source, text) = load(path);
    let program = match text {
        Err(e) => Err(vec![e]),
        Ok(text) => front_text(&text),
    };
    (source, program)
}

/// The front end of a text, inside the current thread (give it a [`STACK_SIZE`]
/// stack); a panic is an `internal.error`.
pub fn front_text(text: &str) -> Result<Program, Vec<InputError>> {
    match catch_panic(|| front_end(text)) {
        Ok(r) => r,
        Err(message) => Err(vec![InputError {
            id: "internal.error",
            message,
            span: None,
            label: String::new(),
            notes: Vec::new(),
        }]),
    }
}

/// A number no other program of this process has.
pub fn next_program_key() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Load, check and verify the given files.
pub fn run(paths: &[PathBuf], opts: &Options) -> Run {
    run_streaming(paths, opts, &mut |_| {})
}

/// What `run_streaming` hands its sink, in a deterministic order (files in order,
/// members in program order) as soon as everything before it is done.
pub enum Event<'a> {
    /// First, once every file's front end is done: how many members of each file (in
    /// order) will be verified (0 for a file with input errors).
    Planned(&'a [usize]),
    /// A file's front end is done: its source, and its input errors if any.
    File(&'a Source, Option<&'a [InputError]>),
    /// A member of the last file announced finished.
    Member(&'a Source, &'a MemberOutcome),
}

/// Announces files in order.
struct Streamer<'a> {
    sources: &'a [Source],
    input: &'a [Option<Vec<InputError>>],
    announced: usize,
}

impl Streamer<'_> {
    fn upto(&mut self, n: usize, sink: &mut dyn FnMut(Event<'_>)) {
        while self.announced < n.min(self.sources.len()) {
            let i = self.announced;
            sink(Event::File(&self.sources[i], self.input[i].as_deref()));
            self.announced += 1;
        }
    }
}

/// Set by the first Ctrl-C: no member starts after it, members in flight are
/// abandoned, and the run reports what finished (every run: see [`Options::cancel`]
/// for stopping one).
pub static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// As `run`, handing each file and member to `sink` as soon as it and everything
/// before it are done (so one slow member hides only what follows it, and only until
/// its budget runs out: a member past its `--timeout` by a margin is abandoned and
/// reported as a timeout, whatever its solver query does).
pub fn run_streaming(paths: &[PathBuf], opts: &Options, sink: &mut dyn FnMut(Event<'_>)) -> Run {
    let start = Instant::now();
    let files = collect_files(paths);
    let threads = worker_count(opts);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.min(files.len().max(1)))
        .stack_size(STACK_SIZE)
        .build()
        .expect("cannot build the thread pool");
    let fronts: Vec<(Source, Result<Program, Vec<InputError>>)> =
        pool.install(|| files.par_iter().map(|p| front_file(p)).collect());
    drop(pool);
    verify_fronts(fronts, start, threads, opts, sink)
}

/// As `run_streaming`, for one file whose front end the caller ran ([`front_text`]
/// on a text held in memory, e.g. an editor's buffer); nothing is read from disk.
pub fn run_front_streaming(
    source: Source,
    front: Result<Program, Vec<InputError>>,
    opts: &Options,
    sink: &mut dyn FnMut(Event<'_>),
) -> Run {
    verify_fronts(vec![(source, front)], Instant::now(), worker_count(opts), opts, sink)
}

/// Worker threads for `opts.jobs` (0: one per core).
fn worker_count(opts: &Options) -> usize {
    if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.jobs
    }
}

/// Verify the selected members of files whose front end is done, streaming to `sink`.
fn verify_fronts(
    fronts: Vec<(Source, Result<Program, Vec<InputError>>)>,
    start: Instant,
    threads: usize,
    opts: &Options,
    sink: &mut dyn FnMut(Event<'_>),
) -> Run {
    let layout = opts.shard.map(|s| crate::shard::layout(s, &fronts, &opts.methods));
    let mut fronts = fronts;
    if let Some(s) = opts.shard {
        // A file's input errors are reported by one shard only (and by file, the shard
        // sees only its files).
        fronts.retain(|(source, p)| (p.is_ok() && !s.by_file) || s.owns_file(&source.path));
    }
    let mut work: Vec<crate::schedule::Item> = Vec::new();
    let mut scopes: Vec<Option<Vec<Span>>> = vec![None; fronts.len()];
    let mut programs: Vec<Option<std::sync::Arc<Program>>> = Vec::new();
    let mut sources: Vec<Source> = Vec::new();
    let mut input: Vec<Option<Vec<InputError>>> = Vec::new();
    for (fi, (source, program)) in fronts.into_iter().enumerate() {
        sources.push(source);
        match program {
            Ok(program) => {
                let program = std::sync::Arc::new(program);
                if !opts.check_only {
                    let selected = select_members(&program, &opts.methods);
                    if !opts.methods.is_empty() {
                        let span = |m: &MemberRef| program.classes[m.class].members[m.member].span;
                        scopes[fi] = Some(selected.iter().map(|(m, _)| span(m)).collect());
                    }
                    let key = next_program_key();
                    let text = std::sync::Arc::new(sources[fi].text.clone());
                    work.extend(selected.into_iter().map(|(member, name)| crate::schedule::Item {
                        file: fi,
                        program: program.clone(),
                        text: text.clone(),
                        key,
                        member,
                        name,
                    }));
                }
                programs.push(Some(program));
                input.push(None);
            }
            Err(errors) => {
                programs.push(None);
                input.push(Some(errors));
            }
        }
    }
    let unmatched: Vec<String> = opts
        .methods
        .iter()
        .filter(|name| !work.iter().any(|w| &w.name == *name))
        .cloned()
        .collect();
    if let Some(s) = opts.shard {
        let checked: Vec<bool> = input.iter().map(Option::is_none).collect();
        crate::shard::restrict(s, &mut work, &mut scopes, &sources, &checked);
    }
    let mut planned = vec![0; sources.len()];
    for w in &work {
        planned[w.file] += 1;
    }
    sink(Event::Planned(&planned));
    // Stream in order: a file is announced when the members of the files before it
    // are done; its members follow in program order.
    let mut per_file: Vec<Vec<MemberOutcome>> = vec![Vec::new(); sources.len()];
    let mut streamer = Streamer { sources: &sources, input: &input, announced: 0 };
    let work_files: Vec<usize> = work.iter().map(|w| w.file).collect();
    let (interrupted, cache) =
        crate::cache::run_members(work, threads, opts, start, &mut |wi, outcome| {
            let fi = work_files[wi];
            streamer.upto(fi + 1, sink);
            sink(Event::Member(&sources[fi], &outcome));
            per_file[fi].push(outcome);
        });
    if !interrupted {
        streamer.upto(sources.len(), sink);
    }
    let reports: Vec<FileReport> = sources
        .into_iter()
        .zip(input)
        .zip(per_file.into_iter().zip(scopes))
        .map(|((source, errors), (members, scope))| FileReport {
            source,
            status: match errors {
                None => FileStatus::Checked(members),
                Some(errors) => FileStatus::Input(errors),
            },
            scope,
        })
        .collect();
    drop(programs);
    let unmatched_methods = if opts.check_only { Vec::new() } else { unmatched };
    Run {
        files: reports,
        time_ms: start.elapsed().as_secs_f64() * 1000.0,
        unmatched_methods,
        interrupted,
        shard: layout,
        cache,
    }
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

    #[test]
    fn a_cancelled_run_verifies_nothing_and_others_run_on() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let text = "class A { void a() { } void b() { assert 1 == 2; } }";
        let source = Source { path: "a.jv".into(), text: text.into() };
        let run_with = |flag: &Arc<AtomicBool>| {
            let opts = Options { jobs: 1, cancel: Some(flag.clone()), ..Options::default() };
            let mut members = Vec::new();
            let run = with_big_stack(|| {
                run_front_streaming(source.clone(), front_text(text), &opts, &mut |ev| {
                    if let Event::Member(_, m) = ev {
                        members.push(m.name().to_string());
                    }
                })
            });
            (run.interrupted, members)
        };
        let cancelled = Arc::new(AtomicBool::new(true));
        assert_eq!(run_with(&cancelled), (true, vec![]));
        // The flag stops its own run only: not every run, as Ctrl-C does.
        assert!(!INTERRUPTED.load(Ordering::SeqCst));
        let fresh = Arc::new(AtomicBool::new(false));
        assert_eq!(run_with(&fresh), (false, vec!["A.a".to_string(), "A.b".to_string()]));
    }

    #[test]
    fn selects_members_by_name() {
        let p = front_end("class A { int f; A() { } void m() { } predicate p() { return true; } }")
            .unwrap();
        let names: Vec<String> = select_members(&p, &[]).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["A.new", "A.m", "A.p"]);
        let only = select_members(&p, &["A.m".to_string()]);
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].0, MemberRef { class: 0, member: 2 });
    }
}
