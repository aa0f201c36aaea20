//! `idf-verify test PATHS`: run every member concretely and report each distinct
//! concrete failure with the inputs that reached it. Input states come either from
//! [`random_inputs`] by rejection (inputs that do not satisfy a member's precondition
//! do not count, so a precondition few random states satisfy gets few runs), or, with
//! `--paths`, from the symbolic executor's path conditions (`oracle::paths`). A run
//! that exhausts its budget is counted, never reported as a failure. `--save DIR`
//! writes each distinct failure as a regression test (`oracle::save`).
//!
//! Architecture invariant: this sits below the pipeline, beside `replay`; random
//! testing uses the front end and the interpreter only, `--paths` also the verifier's
//! path exploration. It prints (the library modules below it never do).

use crate::decider::Interrupt;
use crate::interp::inputs::random_inputs;
use crate::interp::value::ObjKind;
use crate::interp::{Inputs, Outcome, line_of, run_member};
use crate::source::collect_files;
use crate::source::escape_controls;
use crate::source::front_end;
use crate::source::load;
use crate::source::select_members;
use crate::syntax::ast::{MemberRef, Program};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Options of `idf-verify test`.
#[derive(Clone, Debug, Default)]
pub struct TestOptions {
    pub paths: Vec<PathBuf>,
    /// Random input states tried per member (with `solve`: per member the solver gives
    /// no inputs for).
    pub runs: u64,
    pub seed: u64,
    /// `Class.member` names; empty means all.
    pub methods: Vec<String>,
    /// Inputs solved from the symbolic executor's path conditions (`--paths`).
    pub solve: bool,
    /// Distinct inputs solved per path.
    pub per_path: usize,
    /// The symbolic executor's time budget per member, in seconds.
    pub timeout: Option<f64>,
    /// Write each distinct concrete failure as a regression test into this folder.
    pub save: Option<PathBuf>,
    /// One JSON document instead of lines.
    pub json: bool,
    /// Once set (a signal), no member starts and the member under way is stopped and
    /// left unreported; what finished is reported, marked interrupted.
    pub stop: Option<&'static AtomicBool>,
    /// Members tested at once (worker threads; at least one).
    pub jobs: usize,
}

/// Totals of a run of `idf-verify test`.
#[derive(Clone, Debug, Default)]
pub struct TestSummary {
    pub members: usize,
    pub runs: u64,
    pub accepted: u64,
    pub failures: usize,
    pub out_of_steps: u64,
    pub input_errors: usize,
    /// With `--paths`: path ends, those reached concretely, inputs solved.
    pub paths: u64,
    pub reached: u64,
    pub solved: u64,
    /// Regression tests written (`--save`), and failures that could not be saved.
    pub saved: Vec<PathBuf>,
    pub unsaved: Vec<String>,
    /// Members the symbolic executor failed on (internal errors).
    pub internal: usize,
    /// `TestOptions::stop` was set: members that had not finished are not reported.
    pub interrupted: bool,
}

/// What `--paths` found of one member's paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathCounts {
    /// Path ends of the symbolic executor (completed, failed, out of budget).
    pub paths: u64,
    /// Those an input solved from them reached concretely (`oracle::paths`).
    pub reached: u64,
    /// Inputs solved from path conditions.
    pub solved: u64,
    /// Random input states tried because the solver gave none for some path.
    pub random: u64,
}

/// One distinct concrete failure (id and position) of a member's runs.
#[derive(Clone, Debug)]
pub struct Found {
    pub id: &'static str,
    pub reason: &'static str,
    pub line: usize,
    pub start: u32,
    /// `file:line: id (reason) in `C.m`: message`.
    pub message: String,
    /// The first inputs that reached it, and readably.
    pub inputs: Inputs,
    pub shown: String,
    /// Runs that reached it.
    pub count: usize,
}

impl TestSummary {
    /// Count `other` in as well.
    fn add(&mut self, other: TestSummary) {
        self.members += other.members;
        self.runs += other.runs;
        self.accepted += other.accepted;
        self.failures += other.failures;
        self.out_of_steps += other.out_of_steps;
        self.input_errors += other.input_errors;
        self.internal += other.internal;
        self.paths += other.paths;
        self.reached += other.reached;
        self.solved += other.solved;
        self.saved.extend(other.saved);
        self.unsaved.extend(other.unsaved);
        self.interrupted |= other.interrupted;
    }
}

/// After this many runs in a row out of steps, a member gets no further runs: it
/// loops or recurses for ever on the inputs tried (or the interpreter cannot run its
/// contracts), and each such run costs the whole step budget.
pub const DIVERGING: u32 = 16;

/// What testing one member found.
#[derive(Clone, Debug, Default)]
pub struct MemberReport {
    pub runs: u64,
    pub accepted: u64,
    pub out_of_steps: u64,
    /// Its runs were stopped after `DIVERGING` in a row ran out of steps.
    pub diverged: bool,
    pub failures: Vec<Found>,
    /// With `--paths`.
    pub paths: Option<PathCounts>,
}

/// Count failure `f` of a run of `member` from `inputs` among the distinct ones.
pub fn note_failure(
    failures: &mut Vec<Found>,
    program: &Program,
    path: &str,
    text: &str,
    member: MemberRef,
    f: &crate::interp::Failure,
    inputs: &Inputs,
) {
    if let Some(e) = failures.iter_mut().find(|e| e.start == f.span.start && e.id == f.id) {
        e.count += 1;
        return;
    }
    let who = &program.classes[f.member.class].members[f.member.member];
    let line = line_of(text, f.span);
    failures.push(Found {
        id: f.id,
        reason: f.reason,
        line,
        start: f.span.start,
        message: format!(
            "{path}:{line}: {} ({}) in `{}.{}`: {}",
            f.id, f.reason, program.classes[f.member.class].name.name, who.name.name, f.message
        ),
        inputs: inputs.clone(),
        shown: show_inputs(program, member, inputs),
        count: 1,
    });
    failures.sort_by_key(|e| (e.start, e.id));
}

/// How many elements of an array the inputs show.
const SHOWN_ELEMENTS: usize = 16;

/// The inputs of a run, readably: receiver, arguments, then every object.
pub fn show_inputs(program: &Program, member: MemberRef, inputs: &Inputs) -> String {
    let m = &program.classes[member.class].members[member.member];
    let mut parts = vec![];
    if let Some(t) = &inputs.this {
        parts.push(format!("this = {t}"));
    }
    for (p, v) in m.params.iter().zip(&inputs.args) {
        parts.push(format!("{} = {v}", p.name.name));
    }
    let layout = crate::interp::value::Layout::of(program);
    for (o, obj) in inputs.heap.objects.iter().enumerate() {
        let body = match &obj.kind {
            ObjKind::Class(Some(c)) => {
                let fields: Vec<String> = layout.field_names[*c]
                    .iter()
                    .zip(&obj.slots)
                    .map(|(f, v)| format!("{f}: {v}"))
                    .collect();
                format!("{} {{{}}}", program.classes[*c].name.name, fields.join(", "))
            }
            ObjKind::Class(None) => "Object {}".to_string(),
            ObjKind::Array(t) => {
                // A long array by its first elements and its length (a model may make
                // thousands; nobody reads them in a message).
                let n = obj.slots.len();
                let elems: Vec<String> =
                    obj.slots.iter().take(SHOWN_ELEMENTS).map(|v| v.to_string()).collect();
                if n > SHOWN_ELEMENTS {
                    format!("{t}[] {{{}, …}} (length {n})", elems.join(", "))
                } else {
                    format!("{t}[] {{{}}}", elems.join(", "))
                }
            }
        };
        parts.push(format!("o{o} = {body}"));
    }
    if parts.is_empty() { "(no inputs)".to_string() } else { parts.join(", ") }
}

/// Test `member` on `opts.runs` random input states (rejection against the
/// precondition).
pub fn test_member_random(
    program: &Program,
    path: &str,
    text: &str,
    member: MemberRef,
    opts: &TestOptions,
) -> MemberReport {
    let mut report = MemberReport::default();
    let mut streak = 0;
    for k in 0..opts.runs {
        if streak >= DIVERGING {
            report.diverged = true;
            break;
        }
        let seed = opts.seed.wrapping_mul(0x9E37_79B9).wrapping_add(k);
        let inputs = random_inputs(program, member, seed);
        report.runs += 1;
        match run_member(program, member, &inputs) {
            Outcome::Rejected(_) => continue,
            Outcome::Passed => streak = 0,
            Outcome::OutOfSteps => {
                report.out_of_steps += 1;
                streak += 1;
            }
            Outcome::Failed(f) => {
                streak = 0;
                note_failure(&mut report.failures, program, path, text, member, &f, &inputs)
            }
        }
        report.accepted += 1;
    }
    report
}

/// One member's line (and its failures' lines) in human output.
fn render_member(out: &mut dyn Write, name: &str, r: &MemberReport) {
    let verdict = if r.failures.is_empty() { "ok" } else { "FAILED" };
    let n = r.failures.len();
    let paths = match &r.paths {
        Some(p) => format!(
            "{} path{} ({} reached), {} input{} solved, ",
            p.paths,
            if p.paths == 1 { "" } else { "s" },
            p.reached,
            p.solved,
            if p.solved == 1 { "" } else { "s" }
        ),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{verdict} {name}: {paths}{} runs, {} accepted, {n} distinct failure{}{}{}",
        r.runs,
        r.accepted,
        if n == 1 { "" } else { "s" },
        if r.out_of_steps > 0 {
            format!(", {} out of steps", r.out_of_steps)
        } else {
            String::new()
        },
        if r.diverged {
            format!(" (no further runs after {DIVERGING} in a row ran out of steps)")
        } else {
            String::new()
        }
    );
    for f in &r.failures {
        let c = f.count;
        let _ = writeln!(out, "  {} ({c} run{})", f.message, if c == 1 { "" } else { "s" });
        let _ = writeln!(out, "    inputs: {}", f.shown);
    }
    let _ = out.flush();
}

/// One member's record in JSON output.
fn member_json(file: &str, name: &str, r: &MemberReport) -> serde_json::Value {
    let failures: Vec<serde_json::Value> = r
        .failures
        .iter()
        .map(|f| {
            serde_json::json!({
                "id": f.id, "reason": f.reason, "line": f.line, "message": f.message,
                "inputs": f.shown, "runs": f.count,
            })
        })
        .collect();
    let mut m = serde_json::json!({
        "file": file, "name": name,
        "status": if r.failures.is_empty() { "ok" } else { "failed" },
        "runs": r.runs, "accepted": r.accepted, "out_of_steps": r.out_of_steps,
        "diverged": r.diverged, "failures": failures,
    });
    if let Some(p) = &r.paths {
        m["paths"] = serde_json::json!({
            "paths": p.paths, "reached": p.reached, "solved": p.solved, "random": p.random,
        });
    }
    m
}

/// Run `idf-verify test`, printing to `out`; returns the totals.
pub fn run_tests(opts: &TestOptions, out: &mut dyn Write) -> TestSummary {
    let current: Arc<Mutex<Vec<Interrupt>>> = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let watcher = opts.stop.map(|stop| watch(stop, current.clone(), done.clone()));
    let sum = run_tests_watched(opts, out, &current);
    done.store(true, Ordering::SeqCst);
    if let Some(Ok(w)) = watcher {
        let _ = w.join();
    }
    sum
}

/// One finished member: its share of the summary and its report, rendered (a JSON
/// record with `--format json`, text otherwise).
struct Finished {
    sum: TestSummary,
    shown: Result<serde_json::Value, Vec<u8>>,
}

/// A file given to `test`: its program and selected members, or its input errors.
struct Loaded {
    /// The path as given, and as messages quote it (control characters escaped).
    path: String,
    shown: String,
    text: Arc<String>,
    program: Option<Arc<Program>>,
    members: Vec<(MemberRef, String)>,
    /// Input errors, rendered (a line each, or JSON records).
    errors: Vec<Result<serde_json::Value, String>>,
}

fn load_file(path: &std::path::Path, opts: &TestOptions) -> Loaded {
    let (source, text) = load(path);
    let shown = escape_controls(&source.path).to_string();
    let mut loaded = Loaded {
        path: source.path.clone(),
        shown,
        text: Arc::new(source.text.clone()),
        program: None,
        members: vec![],
        errors: vec![],
    };
    match text.map_err(|e| vec![e]).and_then(|t| front_end(&t)) {
        Ok(p) => {
            loaded.members = select_members(&p, &opts.methods);
            loaded.program = Some(Arc::new(p));
        }
        Err(errors) => {
            for e in errors {
                let line = e.span.map(|s| line_of(&source.text, s)).unwrap_or(0);
                loaded.errors.push(if opts.json {
                    Ok(serde_json::json!({
                        "file": source.path, "id": e.id, "line": line, "message": e.message,
                    }))
                } else {
                    Err(format!("{}:{line}: {}: {}", loaded.shown, e.id, e.message))
                });
            }
        }
    }
    loaded
}

/// Test the members of `files` on `opts.jobs` worker threads with large stacks (on
/// this thread if none can be made), each taking the next member not yet taken and
/// sending it back finished, with its index; a worker stops before its next member
/// once `opts.stop` is set, and sends nothing for a member that a signal cut short.
/// The members in flight are in `current` (for the signal's watcher to stop).
fn start_members(
    files: &Arc<Vec<Loaded>>,
    jobs: &Arc<Vec<(usize, usize)>>,
    opts: &TestOptions,
    current: &Arc<Mutex<Vec<Interrupt>>>,
) -> std::sync::mpsc::Receiver<(usize, Finished)> {
    let (tx, rx) = std::sync::mpsc::channel();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers = opts.jobs.max(1).min(jobs.len());
    let mut spawned = 0;
    for _ in 0..workers {
        let (files, jobs, opts, current, next, tx) =
            (files.clone(), jobs.clone(), opts.clone(), current.clone(), next.clone(), tx.clone());
        let run = move || test_members(&files, &jobs, &next, &opts, &current, &tx);
        if std::thread::Builder::new().stack_size(crate::guard::STACK_SIZE).spawn(run).is_ok() {
            spawned += 1;
        }
    }
    if spawned == 0 {
        test_members(files, jobs, &next, opts, current, &tx);
    }
    rx
}

/// A worker: the next member of `jobs` (a file's index in `files`, a member's in the
/// file's) until none is left, each sent back finished with its index in `jobs`.
fn test_members(
    files: &[Loaded],
    jobs: &[(usize, usize)],
    next: &std::sync::atomic::AtomicUsize,
    opts: &TestOptions,
    current: &Mutex<Vec<Interrupt>>,
    tx: &std::sync::mpsc::Sender<(usize, Finished)>,
) {
    let stopped = || opts.stop.is_some_and(|s| s.load(Ordering::SeqCst));
    // The program analysis of the file whose member ran last on this worker.
    let mut info: Option<(usize, crate::rules::info::Info)> = None;
    loop {
        let j = next.fetch_add(1, Ordering::SeqCst);
        let Some(&(fi, mi)) = jobs.get(j) else { return };
        if stopped() {
            return;
        }
        let file = &files[fi];
        let Some(program) = &file.program else { continue };
        let (member, name) = &file.members[mi];
        if opts.solve && info.as_ref().is_none_or(|(f, _)| *f != fi) {
            info = Some((fi, crate::rules::info::Info::new(program)));
        }
        let interrupt = Interrupt::default();
        if let Ok(mut c) = current.lock() {
            c.push(interrupt.clone());
        }
        let finished =
            test_one(file, program, *member, name, info.as_ref().map(|(_, i)| i), opts, &interrupt);
        if let Ok(mut c) = current.lock() {
            c.retain(|i| !i.same(&interrupt));
        }
        if stopped() {
            // Cut short: not a result.
            return;
        }
        if tx.send((j, finished)).is_err() {
            // Nobody is listening any more.
            return;
        }
    }
}

/// Test one member: on inputs solved from its paths (with `info`), else random ones.
fn test_one(
    file: &Loaded,
    program: &Program,
    member: MemberRef,
    name: &str,
    info: Option<&crate::rules::info::Info>,
    opts: &TestOptions,
    interrupt: &Interrupt,
) -> Finished {
    let (shown, text) = (file.shown.as_str(), file.text.as_str());
    let config = crate::verify::Config {
        timeout: opts.timeout,
        interrupt: Some(interrupt.clone()),
        ..Default::default()
    };
    let mut internal = 0;
    let tested = crate::guard::catch_panic(|| match info {
        Some(info) => match crate::oracle::paths::test_member_paths(
            program,
            info,
            shown,
            text,
            member,
            &config,
            opts.per_path,
            opts.runs,
            opts.seed,
        ) {
            Ok(r) => r,
            Err(e) => {
                internal += 1;
                crate::say!("internal error: {name}: {e}");
                test_member_random(program, shown, text, member, opts)
            }
        },
        None => test_member_random(program, shown, text, member, opts),
    });
    let report = tested.unwrap_or_else(|e| {
        internal += 1;
        crate::say!("internal error: {name}: {e}");
        MemberReport::default()
    });
    let mut sum = TestSummary { internal, ..Default::default() };
    sum.members = 1;
    sum.runs = report.runs;
    sum.accepted = report.accepted;
    sum.out_of_steps = report.out_of_steps;
    sum.failures = report.failures.len();
    if let Some(p) = &report.paths {
        sum.paths = p.paths;
        sum.reached = p.reached;
        sum.solved = p.solved;
    }
    if let Some(dir) = &opts.save {
        for (k, f) in report.failures.iter().enumerate() {
            match crate::oracle::save::save_failure(dir, program, text, member, &f.inputs, k, f.id)
            {
                Ok(p) => sum.saved.push(p),
                Err(why) => sum.unsaved.push(format!("{}: {why}", f.message)),
            }
        }
    }
    let shown = if opts.json {
        Ok(member_json(&file.path, name, &report))
    } else {
        let mut text = vec![];
        render_member(&mut text, name, &report);
        Err(text)
    };
    Finished { sum, shown }
}

/// Until `done`, interrupt the members under way (`current`) once `stop` is set.
fn watch(
    stop: &'static AtomicBool,
    current: Arc<Mutex<Vec<Interrupt>>>,
    done: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().stack_size(64 << 10).spawn(move || {
        while !done.load(Ordering::SeqCst) {
            if stop.load(Ordering::SeqCst)
                && let Ok(c) = current.lock()
            {
                c.iter().for_each(Interrupt::interrupt);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    })
}

fn run_tests_watched(
    opts: &TestOptions,
    out: &mut dyn Write,
    current: &Arc<Mutex<Vec<Interrupt>>>,
) -> TestSummary {
    let mut sum = TestSummary::default();
    let mut records = vec![];
    let mut input_errors = vec![];
    let stopped = || opts.stop.is_some_and(|s| s.load(Ordering::SeqCst));
    let mut files = vec![];
    for path in collect_files(&opts.paths) {
        if stopped() {
            break;
        }
        files.push(load_file(&path, opts));
    }
    let jobs: Vec<(usize, usize)> = files
        .iter()
        .enumerate()
        .flat_map(|(fi, f)| (0..f.members.len()).map(move |mi| (fi, mi)))
        .collect();
    let (files, jobs) = (Arc::new(files), Arc::new(jobs));
    // The members run on worker threads, which report each finished member here;
    // reports go out in the files' and members' order. After a signal this loop stops
    // at once, even while a solver query that ignores interrupts keeps a worker busy
    // (it is left behind).
    let reports = start_members(&files, &jobs, opts, current);
    let mut slots: Vec<Option<Finished>> = (0..jobs.len()).map(|_| None).collect();
    let mut shown_files = 0;
    let mut emitted = 0;
    let mut emit_errors = |upto: usize,
                           out: &mut dyn Write,
                           input_errors: &mut Vec<serde_json::Value>,
                           sum: &mut TestSummary| {
        while shown_files < upto {
            let f = &files[shown_files];
            if f.program.is_none() {
                sum.input_errors += 1;
            }
            for e in &f.errors {
                match e {
                    Ok(record) => input_errors.push(record.clone()),
                    Err(line) => {
                        let _ = writeln!(out, "{line}");
                    }
                }
            }
            shown_files += 1;
        }
    };
    while emitted < jobs.len() {
        // Files before the next member's (input errors, or no member selected).
        emit_errors(jobs[emitted].0, out, &mut input_errors, &mut sum);
        if let Some(finished) = slots[emitted].take() {
            sum.add(finished.sum);
            match finished.shown {
                Ok(record) => records.push(record),
                Err(text) => {
                    let _ = out.write_all(&text);
                }
            }
            emitted += 1;
            continue;
        }
        match reports.recv_timeout(std::time::Duration::from_millis(20)) {
            Ok((j, f)) if !stopped() => slots[j] = Some(f),
            // What finishes after the signal is not reported.
            Ok(_) => {
                sum.interrupted = true;
                break;
            }
            Err(_) if stopped() => {
                sum.interrupted = true;
                break;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(_) => continue,
        }
    }
    if !sum.interrupted {
        emit_errors(files.len(), out, &mut input_errors, &mut sum);
    }
    if stopped() {
        sum.interrupted = true;
    }
    if opts.json {
        let mut summary = serde_json::json!({
            "members": sum.members, "runs": sum.runs, "accepted": sum.accepted,
            "failures": sum.failures, "out_of_steps": sum.out_of_steps,
            "input_errors": sum.input_errors,
        });
        if sum.interrupted {
            summary["interrupted"] = true.into();
        }
        if opts.solve {
            summary["paths"] = sum.paths.into();
            summary["reached"] = sum.reached.into();
            summary["solved"] = sum.solved.into();
        }
        if opts.save.is_some() {
            let saved: Vec<String> = sum.saved.iter().map(|p| p.display().to_string()).collect();
            summary["saved"] = saved.into();
            summary["unsaved"] = sum.unsaved.clone().into();
        }
        let doc = serde_json::json!({
            "version": 1, "members": records, "input_errors": input_errors, "summary": summary,
        });
        let _ = writeln!(out, "{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return sum;
    }
    for p in &sum.saved {
        let _ = writeln!(out, "saved {}", p.display());
    }
    for why in &sum.unsaved {
        let _ = writeln!(out, "not saved: {why}");
    }
    let coverage = if opts.solve {
        format!(
            ", {}/{} paths reached concretely, {} inputs solved",
            sum.reached, sum.paths, sum.solved
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} members, {} runs, {} accepted, {} distinct failures, {} out of steps{coverage}",
        sum.members, sum.runs, sum.accepted, sum.failures, sum.out_of_steps
    );
    if sum.interrupted {
        let _ = writeln!(out, "interrupted: members that had not finished are not reported");
    }
    sum
}
