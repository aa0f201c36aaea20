//! Running members on worker threads: a queue of members, `--jobs` workers with large
//! stacks, results handed back in the queue's order as soon as every earlier member
//! is done. Each member runs with its own [`Interrupt`]: past its budget (`--timeout`,
//! or the backstop without one) the scheduler interrupts its solver work, again at
//! every poll, and the member ends as a timeout on its own thread. A member that
//! outlives its budget by a margin even so (a solver query that checks neither its
//! limits nor interrupts) is abandoned: reported as `verification.timeout`, its worker
//! left behind and replaced, so every run ends. After Ctrl-C
//! (`crate::pipeline::INTERRUPTED`), or once the run's own `Options::cancel` flag is
//! set, no member starts, the members in flight are interrupted and left unreported
//! (their workers end as soon as Z3 returns), and the caller is told the run was
//! interrupted. Past the run's `--deadline`, nothing starts and every member not
//! finished is a timeout.
//!
//! Architecture invariant: this module owns threads and time; it never looks inside
//! a member's verification (that is `crate::pipeline::schedule::verify_one`).

use crate::decider::Interrupt;
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
/// has at least `RAMP_MEMBERS` members or `RAMP_BYTES` of members' text (a file of
/// 20 members with loops and quantifiers: 57 ms with the ramp, 45 ms without).
const RAMP: Duration = Duration::from_millis(25);
const RAMP_MEMBERS: usize = 24;
const RAMP_BYTES: usize = 3000;

/// The members' indices, file by file, and in each file the largest first (a
/// member's size in its source text, ties in the given order): workers that take a
/// file's long members first end closer together (one long member started last would
/// run alone at the end). Files keep their order, so that results, handed back in the
/// given order, still stream file by file.
fn longest_first(items: &[Item]) -> VecDeque<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| (items[i].file, std::cmp::Reverse(size(&items[i]))));
    order.into()
}

/// A member's size: the length of its source text (contracts and body).
fn size(it: &Item) -> usize {
    let m = &it.program.classes[it.member.class].members[it.member.member];
    m.span.end.saturating_sub(m.span.start) as usize
}

/// How long past its budget a member may run before it is abandoned.
fn grace(timeout: f64) -> Duration {
    Duration::from_secs_f64((timeout * 0.5).clamp(1.0, 10.0))
}

struct Shared {
    queue: Mutex<VecDeque<usize>>,
    /// The members in flight, with when they started, how to stop them and their
    /// fingerprints.
    running: Mutex<std::collections::HashMap<usize, (Instant, Interrupt, Fp)>>,
}

impl Shared {
    /// Interrupt every member in flight (the run stops), and keep at it for a while.
    fn interrupt_all(&self) {
        let members: Vec<(Interrupt, Fp)> = self
            .running
            .lock()
            .map(|r| r.values().map(|(_, i, fp)| (i.clone(), *fp)).collect())
            .unwrap_or_default();
        keep_interrupting(members);
    }
}

/// The members (by [`fingerprint`]) whose solver work could not be stopped in this
/// process: a query that checks neither its limits nor interrupts (Z3 4.8.12 on some
/// nonlinear terms) keeps its thread busy for good. Such a member is not verified
/// again unchanged, nor, while that thread is still busy, in another text of the same
/// name (an edit inside it): it is reported as a timeout at once, so that a server
/// re-verifying a file after each edit leaves at most one busy thread per member name
/// behind, not one more per edit.
static STUCK: Mutex<Vec<(Fp, Interrupt)>> = Mutex::new(Vec::new());

/// A member's keys for `STUCK`: its text, name and settings (`text`), and its name and
/// settings alone (`name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fp {
    text: u64,
    name: u64,
}

/// A member's text, name and the settings its verification depends on.
fn fingerprint(it: &Item, config: &Config) -> Fp {
    use std::hash::{Hash, Hasher};
    let m = &it.program.classes[it.member.class].members[it.member.member];
    let mut h = std::collections::hash_map::DefaultHasher::new();
    it.name.hash(&mut h);
    (config.infer, config.merge, config.smoke, config.rlimit).hash(&mut h);
    config.timeout.map(f64::to_bits).hash(&mut h);
    let name = h.finish();
    it.text.get(m.span.start as usize..m.span.end as usize).unwrap_or_default().hash(&mut h);
    Fp { text: h.finish(), name }
}

fn note_stuck(fp: Fp, interrupt: &Interrupt) {
    let mut stuck = STUCK.lock().unwrap_or_else(|e| e.into_inner());
    if !stuck.iter().any(|(f, _)| *f == fp) {
        stuck.push((fp, interrupt.clone()));
    }
}

fn is_stuck(fp: Fp) -> bool {
    STUCK.lock().is_ok_and(|s| {
        s.iter().any(|(f, i)| f.text == fp.text || (f.name == fp.name && !i.finished()))
    })
}

/// How long stopped members are interrupted again: an interrupt that arrives while
/// no query is under way is lost (`Interrupt`), and a member that has not ended by
/// then is one whose query ignores interrupts.
const REINTERRUPT_FOR: Duration = Duration::from_secs(2);

/// Interrupt `members` now and, on a small thread of its own, every 20 ms until each
/// has ended or `REINTERRUPT_FOR` has passed; those still running then are noted as
/// stuck (`STUCK`).
fn keep_interrupting(members: Vec<(Interrupt, Fp)>) {
    for (m, _) in &members {
        m.interrupt();
    }
    if members.iter().all(|(m, _)| m.finished()) {
        return;
    }
    let _ = std::thread::Builder::new().stack_size(64 << 10).spawn(move || {
        let until = Instant::now() + REINTERRUPT_FOR;
        while Instant::now() < until && !members.iter().all(|(m, _)| m.finished()) {
            std::thread::sleep(Duration::from_millis(20));
            for (m, _) in &members {
                m.interrupt();
            }
        }
        for (m, fp) in &members {
            if !m.finished() {
                note_stuck(*fp, m);
            }
        }
    });
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
                let interrupt = Interrupt::default();
                let it = &items[wi];
                let fp = fingerprint(it, &config);
                if let Ok(mut r) = shared.running.lock() {
                    r.insert(wi, (Instant::now(), interrupt.clone(), fp));
                }
                let member_config = Config { interrupt: Some(interrupt.clone()), ..config.clone() };
                let outcome = if is_stuck(fp) {
                    not_again(it)
                } else {
                    verify_and_replay(it, &member_config)
                };
                if interrupt.requested() && stopped(&cancel) {
                    // Cut short because the run stopped: no verdict, not reported.
                    return;
                }
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
            crate::oracle::replay::replay_member(
                &it.program,
                &it.text,
                &mut replayed,
                config.save.as_deref(),
            )
        });
        if ok.is_ok() {
            *r = replayed;
        }
    }
    outcome
}

/// The outcome of a member whose verification got stuck before (`STUCK`).
fn not_again(it: &Item) -> MemberOutcome {
    timed_out(
        it,
        "not verified again: a solver query of this member could not be stopped earlier in \
         this process (and is still running, or the member is unchanged)"
            .into(),
        0.0,
    )
}

/// A member reported as `verification.timeout` with `message`, at its name.
fn timed_out(it: &Item, message: String, time_ms: f64) -> MemberOutcome {
    let m = &it.program.classes[it.member.class].members[it.member.member];
    MemberOutcome::Done(MemberResult {
        member: it.member,
        name: it.name.clone(),
        kind: m.kind,
        status: Status::Timeout,
        errors: vec![VerificationError::plain(
            "verification.timeout",
            "timeout",
            message,
            m.name.span,
        )],
        warnings: vec![],
        time_ms,
        stats: None,
        cached: false,
    })
}

/// The outcome of a member abandoned past its budget (or the run's deadline).
fn abandoned(it: &Item, elapsed: Duration, run_deadline: bool) -> MemberOutcome {
    // The message names no measured time: the same input gives the same report (the
    // time is in `time_ms`).
    if run_deadline {
        let message = "the run's --deadline passed before this member finished".to_string();
        return timed_out(it, message, 0.0);
    }
    let message = "the member's time budget ran out (its solver query was abandoned)".to_string();
    timed_out(it, message, elapsed.as_secs_f64() * 1000.0)
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
        queue: Mutex::new(longest_first(&items)),
        running: Mutex::new(std::collections::HashMap::new()),
    });
    let (tx, rx) = mpsc::channel();
    // Workers beyond the first start only when there is work for them (`RAMP`).
    let wanted = threads.clamp(1, n);
    let mut workers = 0;
    let sized: usize = items.iter().map(size).sum();
    let first = if n >= RAMP_MEMBERS || sized >= RAMP_BYTES { wanted } else { 1 };
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
    let over = Duration::from_secs_f64(limit);
    let budget = over + grace(limit);
    let mut results: Vec<Option<MemberOutcome>> = (0..n).map(|_| None).collect();
    let mut next = 0;
    let mut last_check = Instant::now();
    while next < n {
        if opts.stopped() {
            // Stop the members in flight; report what finished (in order, skipping
            // what did not), then stop.
            shared.interrupt_all();
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
            shared.interrupt_all();
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
                    for (t, i, _) in r.values() {
                        if t.elapsed() > over {
                            // Past its budget: stop its solver work (again, should
                            // the last interrupt have come between two queries).
                            i.interrupt();
                        }
                    }
                    r.iter()
                        .filter(|(_, (t, _, _))| t.elapsed() > budget)
                        .map(|(wi, (t, i, fp))| {
                            note_stuck(*fp, i);
                            (*wi, t.elapsed())
                        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::with_big_stack;
    use crate::syntax::ast::MemberRef;

    /// A query Z3 works on for minutes, ignoring its resource limit (nonlinear
    /// arithmetic), which an interrupt stops: the member ends as a timeout (never as a
    /// failure: the assertion holds), on its own thread, soon after the interrupt.
    #[test]
    fn an_interrupt_stops_a_member_inside_its_query() {
        let text = "class N {\n  static void m(int x, int y, int z, int w)\n    requires x > 1 && y > 1 && z > 1 && w > 1;\n  {\n    assert x * y * z * w != 1000000016000000063;\n  }\n}\n";
        let program = crate::source::front_text(text).unwrap();
        let interrupt = Interrupt::default();
        let config = Config { interrupt: Some(interrupt.clone()), ..Config::default() };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let member = MemberRef { class: 0, member: 0 };
            let outcome = with_big_stack(|| verify_one(&program, 1, member, "N.m", &config));
            let _ = tx.send(outcome);
        });
        std::thread::sleep(Duration::from_millis(500));
        keep_interrupting(vec![(interrupt.clone(), Fp { text: 0, name: 0 })]);
        // Without the interrupt, the query runs on for minutes.
        let outcome = rx.recv_timeout(Duration::from_secs(120)).expect("the member ends");
        let MemberOutcome::Done(r) = outcome else { panic!("{outcome:?}") };
        assert_eq!(r.status, Status::Timeout, "{r:?}");
        assert!(r.errors.iter().all(|e| e.id == "verification.timeout"), "{r:?}");
        assert!(interrupt.finished(), "its Z3 context is gone");
    }

    /// Workers take the largest members first; ties keep the program's order.
    #[test]
    fn the_largest_members_are_taken_first() {
        let text = "class A {\n  static void a() { }\n  static void b(int x) requires x > 0; ensures x > 0; { assert x > 0; }\n  static void c() { }\n  static void d(int x) { assert x == x; }\n}\n";
        let program = Arc::new(crate::source::front_text(text).unwrap());
        let items: Vec<Item> = (0..4)
            .map(|i| Item {
                file: 0,
                program: program.clone(),
                text: Arc::new(text.to_string()),
                key: 0,
                member: MemberRef { class: 0, member: i },
                name: String::new(),
            })
            .collect();
        assert_eq!(longest_first(&items), VecDeque::from(vec![1, 3, 0, 2]));
        // Files keep their order.
        let mut items = items;
        items[1].file = 1;
        assert_eq!(longest_first(&items), VecDeque::from(vec![3, 0, 2, 1]));
    }

    /// An interrupt made before the member starts: it never asks Z3 anything.
    #[test]
    fn an_interrupted_member_asks_nothing() {
        let program =
            crate::source::front_text("class A { static void m(int x) { assert x * x >= 0; } }")
                .unwrap();
        let interrupt = Interrupt::default();
        interrupt.interrupt();
        let config = Config { interrupt: Some(interrupt), stats: true, ..Config::default() };
        let member = MemberRef { class: 0, member: 0 };
        let outcome = with_big_stack(|| verify_one(&program, 2, member, "A.m", &config));
        let MemberOutcome::Done(r) = outcome else { panic!("{outcome:?}") };
        assert_eq!(r.status, Status::Timeout, "{r:?}");
        assert_eq!(r.stats.map(|s| s.queries), Some(0));
    }
}
