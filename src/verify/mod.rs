//! Validity of each member (the paper's section 3.5 and 3.6): sets up a fresh
//! symbolic state, produces contracts, runs the rules, and collects errors.
//!
//! Architecture invariant: `verify_member` is the only entry point the pipeline uses;
//! it never prints and never panics on a well-typed program (infrastructure problems
//! come back as `Err(String)`, which the pipeline maps to exit 3).

pub mod member;
pub mod refine;

/// What verifying a member yields lives beside the rules that produce it.
pub use crate::rules::result::{
    Config, DEFAULT_RLIMIT, DEFAULT_TIMEOUT, EntryModel, Fix, MemberResult, ModelValue, Replay,
    Stats, Status, TraceEntry, VerificationError,
};

pub use crate::rules::paths::{PathEnd, PathEndKind, PathInput};

use crate::rules::Verifier;
use crate::rules::info::Info;
use crate::syntax::ast::{MemberRef, Program, Span};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Verify one member of a checked program. Fields are never passed here.
pub fn verify_member(
    program: &Program,
    member: MemberRef,
    config: &Config,
) -> Result<MemberResult, String> {
    let info = Info::new(program);
    verify_member_with(program, &info, member, config)
}

thread_local! {
    /// The `Info` of the program this thread verified last, with the key the caller
    /// gave it: the members of one program share it (and its definitions).
    static LAST_INFO: std::cell::RefCell<Option<(u64, std::rc::Rc<Info>)>> =
        const { std::cell::RefCell::new(None) };
}

/// As `verify_member`, for a caller that verifies many members of one program:
/// `key` identifies the program (unique in the process, e.g. from a counter), and
/// per-program work (its `Info`, its pure methods' definitions) is done once per
/// thread, not once per member.
pub fn verify_member_keyed(
    program: &Program,
    key: u64,
    member: MemberRef,
    config: &Config,
) -> Result<MemberResult, String> {
    let info = LAST_INFO.with(|c| {
        let mut c = c.borrow_mut();
        match &*c {
            Some((k, info)) if *k == key => {
                // Definitions translated for an earlier member are reused: each was
                // translated on a solver of its own, so what a member reports does not
                // depend on what ran before it on this thread.
                info.start_member();
                info.clone()
            }
            _ => {
                let info = std::rc::Rc::new(Info::new(program));
                *c = Some((key, info.clone()));
                info
            }
        }
    });
    verify_member_with(program, &info, member, config)
}

/// As `verify_member`, with the program's `Info` computed once by the caller.
pub fn verify_member_with(
    program: &Program,
    info: &Info,
    member: MemberRef,
    config: &Config,
) -> Result<MemberResult, String> {
    let start = Instant::now();
    let m = program
        .classes
        .get(member.class)
        .and_then(|c| c.members.get(member.member))
        .ok_or_else(|| "no such member".to_string())?;
    crate::state::term::reset_interner();
    let mut v = Verifier::new(program, info, config.clone());
    v.dec.count_instances = config.stats && config.quantifier_counts;
    v.verify(member);
    // A failure on a loop's side explored without asking whether it can be taken
    // (`Verifier::lazy`): on a side that cannot be taken, a check may fail where the
    // solver, given more facts, no longer finds the contradiction. After an operand
    // evaluated under a guard without asking, the operand's facts (guarded, so true)
    // stay on the path: they change no model, so they can cost a later proof only by
    // making the solver give up somewhere. Such a member is verified again asking; a
    // verified one stands (more paths only mean more checks).
    let lazily = v.stats.unchecked_sides > 0
        || (v.stats.unchecked_guards > 0 && v.dec.counters.unknowns > 0);
    // A member stopped because a check spent the resource limit is verified again too
    // (the guarded facts may be what made the solver spend it).
    let stopped = v.dec.stopped_on_limit();
    if !v.report.failures.is_empty() && (!v.timed_out || stopped) && lazily {
        crate::state::term::reset_interner();
        info.start_member();
        v.dec.drop_backend();
        let mut again = Verifier::new(program, info, config.clone());
        again.lazy = false;
        again.dec.count_instances = config.stats && config.quantifier_counts;
        // The quantifiers the first run's solver instantiated most where it gave up:
        // counted once (asking again to count them costs another query's limit).
        again.dec.gave_up_on = v.dec.gave_up_on.clone();
        // Within what is left of the member's time (all of it without `--timeout`:
        // the scheduler's backstop bounds the member); should that run out, the first
        // run's failures stand (each was reported only on a feasible path).
        if let Some(t) = config.timeout {
            let left = (t - start.elapsed().as_secs_f64()).max(0.001);
            again.dec.set_deadline(Some(Instant::now() + Duration::from_secs_f64(left)), true);
        }
        again.verify(member);
        if !again.timed_out {
            v = again;
        }
    }
    let detail = config.trace || config.counterexample;
    let rerun = v.stats.merges > 0 || (v.stats.if_joins > 0 && detail);
    if rerun && !v.report.failures.is_empty() && !v.timed_out {
        // A failure after a merge is shown as separate paths show it (its trace, its
        // counterexample, its message's terms): verify again without merging, within
        // what is left of the time budget; should that run out, the merged run's
        // failures stand (the verdict is the same; the trace is then the merged one). Leaves that did not merge went on
        // as separate paths, with the same terms, but their traces lack the branch's
        // steps: with `--trace` or `--counterexample` they are run again too.
        let mut unmerged = config.clone();
        unmerged.merge = false;
        // Separate paths can be exponentially many (`if`s in a row): the re-run gets
        // at most twenty times what the merged run took (and 2 s at least).
        let merged_s = start.elapsed().as_secs_f64();
        let cap = (20.0 * merged_s).max(2.0);
        let left = config.timeout.map_or(cap, |t| (t - merged_s).max(0.001));
        crate::state::term::reset_interner();
        info.start_member();
        // The merged run's Z3 context goes first: the re-run's then reuses its memory
        // (a context made while another is alive costs ~7 ms of fresh memory).
        v.dec.drop_backend();
        let mut again = Verifier::new(program, info, unmerged);
        again.lazy = false;
        // The cap stops the paths (`stopped`); Z3's queries stay bounded by the resource
        // limit alone, unless the user asked for a --timeout: Z3 4.8.12 starts a timer
        // thread for each timed query (a failing member took 8 ms more for it).
        let until = Instant::now() + Duration::from_secs_f64(left.min(cap));
        again.dec.set_deadline(Some(until), config.timeout.is_some());
        again.dec.count_instances = config.stats && config.quantifier_counts;
        again.verify(member);
        if !again.timed_out {
            again.stats.merges = v.stats.merges;
            v = again;
        }
    }
    let timed_out = v.timed_out;
    // Every path must have ended in the ledger: anything else is a bug in the rules,
    // never a verdict.
    if !v.stats.ledger.balanced() {
        let name = info.member_names.get(&member).cloned().unwrap_or_default();
        return Err(format!(
            "internal error in {name}: a path ended outside the ledger ({:?})",
            v.stats.ledger
        ));
    }
    let mut errors: Vec<VerificationError> = Vec::new();
    let mut seen = HashSet::new();
    for f in v.report.failures.drain(..) {
        if f.err.id == "internal.error" {
            return Err(f.err.message);
        }
        if seen.insert((f.err.id, f.err.span)) {
            errors.push(f.err);
        }
    }
    if timed_out && !errors.iter().any(|e| e.id == "verification.timeout") {
        let mut e = VerificationError::plain(
            "verification.timeout",
            "timeout",
            "the member's time budget ran out".into(),
            m.name.span,
        );
        v.name_top_quantifier(&mut e);
        errors.push(e);
    }
    for e in errors.iter_mut().filter(|e| e.id == "verification.timeout") {
        e.span = m.name.span;
    }
    // A failure in a contract the member took from an interface is reported where
    // that contract is written; a note points at the member that inherits it.
    if let Some(from) = m.inherits {
        let from = info.member_names.get(&from).cloned().unwrap_or_default();
        let name = info.member_names.get(&member).cloned().unwrap_or_default();
        for e in errors.iter_mut() {
            if e.span.start < m.span.start || e.span.end > m.span.end {
                let note = format!("`{name}` inherits this contract from `{from}`");
                e.notes.push((m.name.span, note));
            }
        }
    }
    errors.sort_by_key(|e| (e.span.start, e.id));
    let status = if errors.iter().any(|e| e.id == "verification.timeout") {
        Status::Timeout
    } else if errors.is_empty() {
        Status::Verified
    } else {
        Status::Failed
    };
    let quantifiers =
        if config.stats && config.quantifier_counts { v.top_quantifiers() } else { vec![] };
    let time_ms = start.elapsed().as_secs_f64() * 1000.0;
    let stats = config.stats.then_some(Stats {
        paths: v.stats.paths,
        queries: v.dec.counters.queries,
        pushes: v.dec.counters.pushes,
        branches: v.stats.branches,
        pruned: v.stats.pruned,
        ledger: v.stats.ledger,
        chunks_max: v.stats.chunks_max,
        merges: v.stats.merges,
        axioms: v.stats.axiom_instances,
        axioms_to_z3: v.dec.counters.axioms_to_z3,
        exec_depth_max: v.stats.exec_depth_max,
        z3_ms: v.dec.counters.z3_time.as_secs_f64() * 1000.0,
        total_ms: time_ms,
        quantifiers,
        cached: false,
    });
    let name = info.member_names.get(&member).cloned().unwrap_or_default();
    let mut warnings =
        if config.smoke && status == Status::Verified { smoke(&v, m, &name) } else { vec![] };
    warnings.extend(no_trigger(m));
    Ok(MemberResult {
        member,
        name,
        kind: m.kind,
        status,
        errors,
        warnings,
        time_ms,
        stats,
        cached: false,
    })
}

/// The paths of one member as the symbolic executor ran them, for testing: each
/// path's end with up to `per_path` distinct inputs solved from its path condition.
#[derive(Clone, Debug, Default)]
pub struct Paths {
    pub ends: Vec<PathEnd>,
    /// Path ends past the recording bound (counted, without inputs).
    pub dropped: u64,
    /// The branches of some `if` were merged (a merged path ends at its first failure,
    /// so a failure only another branch meets later ends no path).
    pub merged: bool,
}

/// Run the symbolic executor on `member` (as `verify_member_with` does; with `merge`
/// false, the branches of every `if` are explored as separate paths) and return its
/// path ends with inputs solved from their path conditions.
pub fn explore_paths(
    program: &Program,
    info: &Info,
    member: MemberRef,
    config: &Config,
    per_path: usize,
    merge: bool,
) -> Result<Paths, String> {
    program
        .classes
        .get(member.class)
        .and_then(|c| c.members.get(member.member))
        .ok_or_else(|| "no such member".to_string())?;
    crate::state::term::reset_interner();
    // As for a member verified (definitions are the program's, whichever member
    // translated them first).
    info.start_member();
    let mut config = config.clone();
    config.merge = merge;
    let mut v = Verifier::new(program, info, config);
    v.path_inputs = per_path.max(1);
    v.verify(member);
    if !v.stats.ledger.balanced() {
        return Err(format!(
            "internal error: a path ended outside the ledger ({:?})",
            v.stats.ledger
        ));
    }
    if let Some(f) = v.report.failures.iter().find(|f| f.err.id == "internal.error") {
        return Err(f.err.message.clone());
    }
    Ok(Paths {
        ends: std::mem::take(&mut v.path_ends),
        dropped: v.path_ends_dropped,
        merged: v.stats.if_joins > 0,
    })
}

/// LANGUAGE.md section 13, step 6: a value quantifier of the member for which no
/// trigger was written or inferred; where it is assumed, nothing instantiates it.
fn no_trigger(m: &crate::syntax::ast::Member) -> Vec<VerificationError> {
    use crate::syntax::ast::{Body, Expr, ExprKind, Rhs, StmtKind};
    let mut roots: Vec<&Expr> = m.requires.iter().chain(&m.ensures).chain(&m.decreases).collect();
    match &m.body {
        Body::Return(e) => roots.push(e),
        Body::Block(b) => crate::syntax::ast::each_stmt(&b.stmts, &mut |st| match &st.kind {
            StmtKind::Local { init: Some(Rhs::Expr(e)), .. }
            | StmtKind::Assign { rhs: Rhs::Expr(e), .. }
            | StmtKind::Call(e)
            | StmtKind::Assert(e)
            | StmtKind::Open(e)
            | StmtKind::Close(e)
            | StmtKind::Use(e)
            | StmtKind::Join(e)
            | StmtKind::Return(Some(e)) => roots.push(e),
            StmtKind::While { invariants, .. } => roots.extend(invariants),
            _ => {}
        }),
        Body::None => {}
    }
    let mut out = vec![];
    for r in roots {
        r.any(&mut |x| {
            if let ExprKind::Quant(q) = &x.kind
                && !q.permission
                && q.triggers.is_empty()
            {
                out.push(VerificationError::plain(
                    "no.trigger",
                    "no.trigger",
                    format!(
                        "no trigger for `{}`: where it is assumed, the verifier will not use it; name its bound variables in an array read, a sequence index or a pure-method call (or write a trigger `{{ .. }}`)",
                        crate::rules::show::expr(x)
                    ),
                    crate::syntax::ast::Span { start: x.span.start, end: x.span.start + q.kind.keyword().len() as u32 },
                ));
            }
            false
        });
    }
    out
}

/// `--smoke`: a verified member no path ran to its end (its precondition may be
/// contradictory), and each `assert` or `return` no path reached.
fn smoke(v: &Verifier<'_>, m: &crate::syntax::ast::Member, name: &str) -> Vec<VerificationError> {
    let warn =
        |span, message: String| VerificationError::plain("vacuous", "vacuous", message, span);
    let mut out = vec![];
    if v.stats.ends == 0 {
        out.push(warn(
            m.name.span,
            format!(
                "no path reaches the end of `{name}`: it verifies vacuously (is its precondition contradictory, or does every path loop for ever?)"
            ),
        ));
    }
    if let crate::syntax::ast::Body::Block(b) = &m.body {
        let mut points = vec![];
        asserts_and_returns(&b.stmts, &mut points);
        for (span, what) in points {
            if !v.report.reached.contains(&span) {
                out.push(warn(span, format!("no path reaches this `{what}`")));
            }
        }
    }
    out
}

/// The `assert` and `return` statements in `stmts`, nested ones included.
fn asserts_and_returns(stmts: &[crate::syntax::ast::Stmt], out: &mut Vec<(Span, &'static str)>) {
    use crate::syntax::ast::StmtKind;
    crate::syntax::ast::each_stmt(stmts, &mut |st| match &st.kind {
        StmtKind::Assert(_) => out.push((st.span, "assert")),
        StmtKind::Return(_) => out.push((st.span, "return")),
        _ => {}
    });
}
