//! Running members on worker threads: a queue of members, `--jobs` workers with large
//! stacks, results handed back in the queue's order as soon as every earlier member
//! is done. A member that outlives its `--timeout` by a margin (a solver query that
//! ignores its timeout) is abandoned: reported as `verification.timeout`, its worker
//! left behind and replaced, so every run ends. After Ctrl-C
//! (`crate::pipeline::INTERRUPTED`), or once the run's own `Options::cancel` flag is set, no
//! member starts, members in flight are abandoned unreported, and the caller is told
//! the run was interrupted. Past the run's
//! `--deadline`, nothing starts and every member not finished is a timeout.
//!
//! Architecture invariant: this module owns threads and time; it never looks inside
//! a member's verification (that is `crate::pipeline::schedule::verify_one`).

use crate::guard::STACK_SIZE;
use crate::guard::catch_panic;
use crate::pipeline::MemberOutcome;
use crate::pipeline::stopped;
use crate::syntax::ast::{MemberRef, Program};
use crate::verify::verify_member_keyed;
use crate::verify::{Config, MemberResult, Status, VerificationError};
use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One member to verify.
pub struct Item {
    pub file: usize,
    pub program: Arc<Program>,
    /// Its source text (for replaying counterexamples).
    pub text: Arc<String>,
    /// The program's key for per-program caches (`verify::verify_member_keyed`).
    pub key: u64,
    pub member: MemberRef,
    pub name: String,
}

/// A worker's first Z3 context costs ~7 ms more than later ones (fresh memory, page
/// by page): a run of a few members is often done by one worker in less. So other
/// workers start after `RAMP`, if members are still queued, or at once when the run
/// has at least `RAMP_MEMBERS` members.
const RAMP: Duration = Duration::from_millis(25);
const RAMP_MEMBERS: usize = 24;

/// How long past its budget a member may run before it is abandoned.
fn grace(timeout: f64) -> Duration {
    Duration::from_secs_f64((timeout * 0.5).clamp(1.0, 10.0))
}

struct Shared {
    queue: Mutex<VecDeque<usize>>,
    /// The members in flight, with when they started.
    running: Mutex<std::collections::HashMap<usize, Instant>>,
}

fn spawn_worker(
    shared: &Arc<Shared>,
    items: &Arc<Vec<Item>>,
    config: &Config,
    cancel: &Option<Arc<AtomicBool>>,
    tx: &mpsc::Sender<(usize, MemberOutcome)>,
) -> bool {
    let (shared, items, config, tx) = (shared.clone(), items.clone(), config.clone(), tx.clone());
    let cancel = cancel.clone();
    std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .spawn(move || {
            loop {
                if stopped(&cancel) {
                    return;
                }
                let next = shared.queue.lock().ok().and_then(|mut q| q.pop_front());
                let Some(wi) = next else { return };
                if let Ok(mut r) = shared.running.lock() {
                    r.insert(wi, Instant::now());
                }
                let it = &items[wi];
                let outcome = verify_and_replay(it, &config);
                if tx.send((wi, outcome)).is_err() {
                    return;
                }
            }
        })
        .is_ok()
}

/// Verify one member; with `--counterexample`, replay each model's entry state
/// concretely (`replay`); with `Config::fixes`, suggest fixes (`fix`).
fn verify_and_replay(it: &Item, config: &Config) -> MemberOutcome {
    let mut outcome = verify_one(&it.program, it.key, it.member, &it.name, config);
    if config.fixes
        && let MemberOutcome::Done(r) = &mut outcome
    {
        crate::pipeline::fix::suggest(&it.program, &it.text, r, config);
    }
    if config.counterexample
        && let MemberOutcome::Done(r) = &mut outcome
    {
        let mut replayed = r.clone();
        let ok = crate::guard::catch_panic(|| {
            crate::oracle::replay::replay_member(&it.program, &it.text, &mut replayed)
        });
        if ok.is_ok() {
            *r = replayed;
        }
    }
    outcome
}

/// The outcome of a member abandoned past its budget (or the run's deadline).
fn abandoned(it: &Item, elapsed: Duration, run_deadline: bool) -> MemberOutcome {
    let m = &it.program.classes[it.member.class].members[it.member.member];
    MemberOutcome::Done(MemberResult {
        member: it.member,
        name: it.name.clone(),
        kind: m.kind,
        status: Status::Timeout,
        errors: vec![VerificationError::plain(
            "verification.timeout",
            "timeout",
            if run_deadline {
                format!(
                    "the run's --deadline passed ({:.1} s) before this member finished",
                    elapsed.as_secs_f64()
                )
            } else {
                format!(
                    "the member's time budget ran out (its solver query was abandoned after {:.1} s)",
                    elapsed.as_secs_f64()
                )
            },
            m.name.span,
        )],
        warnings: vec![],
        time_ms: if run_deadline { 0.0 } else { elapsed.as_secs_f64() * 1000.0 },
        stats: None,
    })
}

/// Verify `items` on `threads` workers, calling `done(index, outcome)` in the items'
/// order. True when Ctrl-C or the run's cancel flag stopped it (then only the members
/// that finished were reported, still in order).
pub fn run_members(
    items: Vec<Item>,
    threads: usize,
    opts: &crate::pipeline::Options,
    start: Instant,
    done: &mut dyn FnMut(usize, MemberOutcome),
) -> bool {
    let config = &opts.config;
    let deadline = opts.deadline.map(|d| start + Duration::from_secs_f64(d));
    let n = items.len();
    if n == 0 {
        return opts.stopped();
    }
    let items = Arc::new(items);
    let shared = Arc::new(Shared {
        queue: Mutex::new((0..n).collect()),
        running: Mutex::new(std::collections::HashMap::new()),
    });
    let (tx, rx) = mpsc::channel();
    // Workers beyond the first start only when there is work for them (`RAMP`).
    let wanted = threads.clamp(1, n);
    let mut workers = 0;
    let first = if n >= RAMP_MEMBERS { wanted } else { 1 };
    for _ in 0..first {
        if spawn_worker(&shared, &items, config, &opts.cancel, &tx) {
            workers += 1;
        }
    }
    let mut ramped = first == wanted;
    let ramp_at = Instant::now() + RAMP;
    if workers == 0 {
        // No thread could be made: verify here, in order.
        for (wi, it) in items.iter().enumerate() {
            done(wi, verify_and_replay(it, config));
        }
        return false;
    }
    // Without --timeout, a member is still abandoned past the backstop: every run
    // ends, and no solver query pays for a timer (Z3 starts one per timed query).
    let limit = config.timeout.unwrap_or(crate::verify::DEFAULT_TIMEOUT);
    let budget = Duration::from_secs_f64(limit) + grace(limit);
    let mut results: Vec<Option<MemberOutcome>> = (0..n).map(|_| None).collect();
    let mut next = 0;
    let mut last_check = Instant::now();
    while next < n {
        if opts.stopped() {
            // Report what finished (in order, skipping what did not), then stop.
            while let Ok((wi, outcome)) = rx.try_recv() {
                if results[wi].is_none() && wi >= next {
                    results[wi] = Some(outcome);
                }
            }
            for (wi, r) in results.iter_mut().enumerate().skip(next) {
                if let Some(o) = r.take() {
                    done(wi, o);
                }
            }
            return true;
        }
        if !ramped && Instant::now() >= ramp_at {
            ramped = true;
            let queued = shared.queue.lock().map(|q| q.len()).unwrap_or(0);
            for _ in 0..(wanted - 1).min(queued) {
                spawn_worker(&shared, &items, config, &opts.cancel, &tx);
            }
        }
        let wait = if ramped {
            Duration::from_millis(50)
        } else {
            ramp_at.saturating_duration_since(Instant::now()).min(Duration::from_millis(50))
        };
        match rx.recv_timeout(wait) {
            Ok((wi, outcome)) => {
                if let Ok(mut r) = shared.running.lock() {
                    r.remove(&wi);
                }
                if results[wi].is_none() && wi >= next {
                    results[wi] = Some(outcome);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            // The run's deadline: nothing more starts; what has not finished is a
            // timeout (in flight: abandoned; not started: never run).
            if let Ok(mut q) = shared.queue.lock() {
                q.clear();
            }
            while let Ok((wi, outcome)) = rx.try_recv() {
                if results[wi].is_none() && wi >= next {
                    results[wi] = Some(outcome);
                }
            }
            for (wi, r) in results.iter_mut().enumerate().skip(next) {
                let o = r.take().unwrap_or_else(|| abandoned(&items[wi], start.elapsed(), true));
                done(wi, o);
            }
            return false;
        }
        if last_check.elapsed() > Duration::from_millis(50) {
            last_check = Instant::now();
            let late: Vec<(usize, Duration)> = shared
                .running
                .lock()
                .map(|r| {
                    r.iter()
                        .filter(|(_, t)| t.elapsed() > budget)
                        .map(|(wi, t)| (*wi, t.elapsed()))
                        .collect()
                })
                .unwrap_or_default();
            for (wi, elapsed) in late {
                if let Ok(mut r) = shared.running.lock() {
                    r.remove(&wi);
                }
                if results[wi].is_none() && wi >= next {
                    results[wi] = Some(abandoned(&items[wi], elapsed, false));
                }
                // Its worker is stuck: another takes its place.
                spawn_worker(&shared, &items, config, &opts.cancel, &tx);
            }
        }
        while next < n {
            let Some(o) = results[next].take() else { break };
            done(next, o);
            next += 1;
        }
    }
    if opts.stopped() {
        return next < n;
    }
    // Every worker is gone with members unreported: never a silent gap.
    for (wi, it) in items.iter().enumerate().skip(next) {
        let m = &it.program.classes[it.member.class].members[it.member.member];
        let outcome = results[wi].take().unwrap_or_else(|| MemberOutcome::Internal {
            name: it.name.clone(),
            kind: m.kind,
            span: m.name.span,
            message: "its worker thread stopped before reporting".into(),
        });
        done(wi, outcome);
    }
    false
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
