//! The symbolic execution rules of the paper's Figures 5-8, in continuation-passing
//! style: `eval`, `produce`, `consume`, `exec`, plus the ghost operations (open,
//! close, use) and their inference.
//!
//! Architecture invariant: the rules never import `z3`; they ask the decider. A
//! continuation may run once per branch, so it is a `&dyn Fn` and all mutation goes
//! through the `&mut Verifier` it receives. Branching is `Verifier::branch`, which
//! pushes and pops the decider: nothing else pushes or pops, except `join`, which
//! explores a sub-computation in a pushed frame and returns its leaves.
//! A failed check is recorded with `Verifier::fail` and its path stops (the
//! continuation is not called); other paths go on.

pub mod consume;
pub mod eval;
pub mod exec;
pub mod ghost;
pub mod info;
pub mod produce;
pub mod show;

use crate::decider::{Answer, Decider};
use crate::state::State;
use crate::state::term::{Sort, Term};
use crate::syntax::ast::{Program, Span, Type};
use crate::verify::{Config, TraceEntry, VerificationError};
use info::Info;
use std::cell::RefCell;
use std::collections::HashMap;

/// A continuation.
pub type Q<'a, 'p, T> = &'a dyn Fn(&mut Verifier<'p>, State, T);
/// The inner continuation of a `join`: receives each leaf's value.
pub type Leafer<'a, 'p, T> = &'a dyn Fn(&mut Verifier<'p>, T);

/// How a failure is reported (LANGUAGE.md section 8).
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// In statements: the reason is the id, at the offending expression.
    Stmt,
    /// Consuming an assertion: everything is reported with `id`, at the failing
    /// conjunct, or at `call` (with a note at the conjunct) for call preconditions.
    Consume { id: &'static str, call: Option<Span> },
    /// Checking that a contract, predicate body or pure body is well-defined.
    WellFormed,
}

/// A recorded failure, tagged so that tentative work (an inferred close) can take
/// back the failures it caused.
pub struct Failure {
    pub tag: u32,
    pub err: VerificationError,
}

/// One way a sub-computation explored by `join` ended.
pub struct Leaf<T> {
    /// Branch conditions taken since the join started.
    pub conds: Vec<Term>,
    /// Facts assumed since the join started.
    pub facts: Vec<Term>,
    pub value: T,
}

pub struct Verifier<'p> {
    pub prog: &'p Program,
    pub info: &'p Info,
    pub dec: Decider,
    pub config: Config,
    pub failures: Vec<Failure>,
    pub mode: Mode,
    /// The span of the conjunct being consumed, for `Mode::Consume`.
    pub conjunct: Span,
    /// The text of that conjunct, for messages.
    pub conjunct_text: String,
    /// While consuming a pure call's precondition inside a consumed assertion, the
    /// failing conjunct stays the outer assertion's.
    pub conjunct_frozen: bool,
    tag: u32,
    next_tag: u32,
    fresh: HashMap<String, u32>,
    /// Depth of nested pure-method unfoldings (0: not unfolding).
    pub unfold_depth: u32,
    /// Paths ended silently (a failure or give-up inside an unfolding, an undecided
    /// branch below the top unfolding): a join whose paths were cut is not exhaustive.
    pub cuts: u64,
    /// Pure-call termination checking: the pure method whose body is being checked.
    pub termination: Option<crate::syntax::ast::MemberRef>,
    /// Nesting of pure-call preconditions being evaluated.
    pub pre_depth: u32,
    /// Opens in progress (an open producing a body that opens again).
    pub open_nesting: u32,
    /// Depth of explicit `opening` expressions around the current evaluation.
    pub opening_depth: u32,
    /// Inferred closes so far (to see whether a consume closed anything).
    pub closes: u64,
    /// Nesting of inferred closes, bounded.
    pub close_depth: u32,
    /// The failing path so far (for `--trace`).
    pub trace: Vec<TraceEntry>,
    /// Paths explored to their end (a postcondition or a `join`).
    pub paths: u64,
    pub branches: u64,
    pub pruned: u64,
    pub chunks_max: u64,
    /// Set when the member's time budget ran out: every path stops.
    pub timed_out: bool,
    /// The pure methods whose bodies are being unfolded, innermost last.
    pub unfolding: Vec<crate::syntax::ast::MemberRef>,
    /// Pure calls evaluated so far, at any unfolding depth, by snapshot (for
    /// re-unrolling after open/close). Not path-specific: an equation unrolled for a
    /// call met on another path is still true.
    evaluated: HashMap<Term, Vec<eval::EvaluatedCall>>,
    evaluated_terms: std::collections::HashSet<Term>,
    /// A name for the next object `new` allocates (the local it is assigned to).
    pub name_hint: Option<String>,
    /// Pure calls already unfolded on the current path (a set, and the order they
    /// were added in, to forget them when a frame is left).
    unfolded: std::collections::HashSet<Term>,
    unfolded_order: Vec<Term>,
}

/// When less than this much stack is left, the rules continue on a new segment.
pub const STACK_RED_ZONE: usize = 1 << 20;
/// The size of each new stack segment.
pub const STACK_SEGMENT: usize = 64 << 20;

/// Bound on nested unfoldings of pure methods.
pub const MAX_UNFOLD: u32 = 6;
/// Bound on nested evaluations of pure-call preconditions.
pub const MAX_PRE_DEPTH: u32 = 32;
/// Bound on opens nested inside the production of an opened body.
pub const MAX_NESTED_OPENS: u32 = 6;
/// Bound on nested inferred closes.
pub const MAX_CLOSE: u32 = 4;
/// Bound on nested inferred opens for one access.
pub const MAX_OPEN: u32 = 4;

pub fn sort_of(ty: &Type) -> Sort {
    match ty {
        Type::Int => Sort::Int,
        Type::Bool => Sort::Bool,
        _ => Sort::Ref,
    }
}

pub fn elem_of(array_ty: &Type) -> crate::state::term::Elem {
    use crate::state::term::Elem;
    match array_ty {
        Type::Array(t) => match **t {
            Type::Int => Elem::Int,
            Type::Bool => Elem::Bool,
            _ => Elem::Ref,
        },
        _ => Elem::Int,
    }
}

impl<'p> Verifier<'p> {
    pub fn new(prog: &'p Program, info: &'p Info, config: Config) -> Verifier<'p> {
        let timeout = config.timeout.map(std::time::Duration::from_secs_f64);
        Verifier {
            prog,
            info,
            dec: Decider::new(timeout),
            config,
            failures: Vec::new(),
            mode: Mode::Stmt,
            conjunct: Span::default(),
            conjunct_text: String::new(),
            conjunct_frozen: false,
            tag: 0,
            next_tag: 1,
            fresh: HashMap::new(),
            unfold_depth: 0,
            cuts: 0,
            termination: None,
            pre_depth: 0,
            open_nesting: 0,
            opening_depth: 0,
            closes: 0,
            close_depth: 0,
            trace: Vec::new(),
            paths: 0,
            branches: 0,
            pruned: 0,
            chunks_max: 0,
            timed_out: false,
            unfolding: Vec::new(),
            evaluated: HashMap::new(),
            evaluated_terms: std::collections::HashSet::new(),
            name_hint: None,
            unfolded: std::collections::HashSet::new(),
            unfolded_order: Vec::new(),
        }
    }

    /// A fresh symbol named after `base` (`x@3`).
    pub fn fresh(&mut self, base: &str, sort: Sort) -> Term {
        let n = self.fresh.entry(base.to_string()).or_insert(0);
        *n += 1;
        Term::var(&format!("{base}@{n}"), sort)
    }

    /// Should this path stop because the member ran out of time?
    pub fn stopped(&mut self) -> bool {
        if self.timed_out {
            return true;
        }
        if self.dec.out_of_time() {
            self.timed_out = true;
            return true;
        }
        false
    }

    /// Record a failure at `span` (the offending expression) for `reason`, reported
    /// according to the current mode. The caller stops its path.
    pub fn fail(&mut self, state: &State, span: Span, reason: &'static str, what: String) {
        if self.unfold_depth > 0 {
            // Failures while unfolding a pure method are not the user's: the unfolding
            // simply yields nothing on that path.
            self.cuts += 1;
            return;
        }
        // Producing a fact can make a path infeasible without a branch noticing
        // (`r != null ==> acc(r.val)` then `r != null`): a dead path has no failures.
        if self.dec.check(&Term::tt()) == crate::decider::Sat::Unsat {
            return;
        }
        let (id, at, message, notes) = match self.mode {
            Mode::Stmt => (reason, span, what, vec![]),
            Mode::WellFormed => ("not.wellformed", span, what, vec![]),
            Mode::Consume { id, call: None } => {
                let msg = format!("{}: {what}", show::describe(id, &self.conjunct_text));
                (id, self.conjunct, msg, vec![])
            }
            Mode::Consume { id, call: Some(call) } => {
                let msg = format!("{}: {what}", show::describe(id, &self.conjunct_text));
                let note = format!("the callee's conjunct `{}` fails here", self.conjunct_text);
                (id, call, msg, vec![(self.conjunct, note)])
            }
        };
        let trace = if self.config.trace {
            Some(self.trace_with_state(state, &format!("fails: {id}"), at))
        } else {
            None
        };
        self.failures.push(Failure {
            tag: self.tag,
            err: VerificationError {
                id,
                reason,
                message,
                span: at,
                notes,
                trace,
                counterexample: None,
            },
        });
    }

    /// Attach a counterexample to the most recent failure (a false boolean `goal`).
    pub fn attach_counterexample(&mut self, state: &State, goal: &Term) {
        if !self.config.counterexample || self.unfold_depth > 0 {
            return;
        }
        let cex = crate::rules::show::counterexample(self, state, goal);
        if let Some(f) = self.failures.last_mut() {
            f.err.counterexample = cex;
        }
    }

    /// Record a solver give-up on this path.
    pub fn fail_unknown(&mut self, state: &State, span: Span) {
        if self.unfold_depth > 0 {
            self.cuts += 1;
            return;
        }
        self.timed_out = self.timed_out || self.dec.out_of_time();
        let save = self.mode;
        self.mode = Mode::Stmt;
        self.fail(
            state,
            span,
            "verification.timeout",
            "the solver gave up (unknown or timeout)".into(),
        );
        self.mode = save;
    }

    /// Prove `goal`; on failure record it (with `reason`) and return false.
    pub fn check(
        &mut self,
        state: &State,
        goal: &Term,
        span: Span,
        reason: &'static str,
        what: impl FnOnce() -> String,
    ) -> bool {
        match self.dec.prove(goal) {
            Answer::Proved => true,
            Answer::Refuted => {
                self.fail(state, span, reason, what());
                if reason == "assertion.false"
                    || reason == "division.by.zero"
                    || reason == "index.out.of.bounds"
                {
                    self.attach_counterexample(state, goal);
                }
                false
            }
            Answer::Unknown => {
                self.fail_unknown(state, span);
                false
            }
        }
    }

    /// Run `f` with a different reporting mode.
    pub fn with_mode<R>(&mut self, mode: Mode, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = (self.mode, self.conjunct, std::mem::take(&mut self.conjunct_text));
        self.mode = mode;
        let r = f(self);
        self.mode = saved.0;
        self.conjunct = saved.1;
        self.conjunct_text = saved.2;
        r
    }

    /// Split on `cond`: run `then` under it and `els` under its negation, each in its
    /// own solver frame, skipping a branch the path condition shows infeasible.
    pub fn branch(&mut self, state: State, cond: Term, then: Q<'_, 'p, ()>, els: Q<'_, 'p, ()>) {
        if self.stopped() {
            return;
        }
        if cond.is_true() {
            return then(self, state, ());
        }
        if cond.is_false() {
            return els(self, state, ());
        }
        let neg = Term::not(cond.clone());
        let (then_ok, else_ok) = if self.dec.known(&cond) {
            (true, false)
        } else if self.dec.known(&neg) {
            (false, true)
        } else if self.dec.independent(&cond) {
            (true, true)
        } else {
            (self.feasible(&cond), self.feasible(&neg))
        };
        if !then_ok || !else_ok {
            self.pruned += 1;
        } else {
            self.branches += 1;
            if self.unfold_depth > 1 {
                // Below the top unfolding, unroll only as far as the path condition
                // determines: an undecided branch abandons the unfolding.
                self.cuts += 1;
                return;
            }
        }
        if then_ok {
            self.in_frame(|v| {
                v.dec.assume_branch(cond.clone());
                then(v, state.clone(), ())
            });
        }
        if else_ok {
            self.in_frame(|v| {
                v.dec.assume_branch(neg.clone());
                els(v, state, ())
            });
        }
    }

    /// Can `cond` hold on this path? (`unknown` counts as feasible.)
    pub fn feasible(&mut self, cond: &Term) -> bool {
        if self.dec.known(cond) || self.dec.independent(cond) {
            return true;
        }
        self.dec.check(cond) != crate::decider::Sat::Unsat
    }

    /// Run `f` inside a solver frame (and a trace frame).
    pub fn in_frame<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.dec.push();
        let trace_len = self.trace.len();
        let unfolded_len = self.unfolded_order.len();
        let r = f(self);
        self.trace.truncate(trace_len);
        for t in self.unfolded_order.drain(unfolded_len..) {
            self.unfolded.remove(&t);
        }
        self.dec.pop();
        r
    }

    /// Explore `run` in a pushed frame and return its leaves: for each path that
    /// reached the inner continuation, the branch conditions and facts assumed on the
    /// way and the value passed. The caller re-assumes what it needs.
    pub fn join<T: Clone>(
        &mut self,
        run: &dyn Fn(&mut Verifier<'p>, Leafer<'_, 'p, T>),
    ) -> Vec<Leaf<T>> {
        let leaves: RefCell<Vec<Leaf<T>>> = RefCell::new(Vec::new());
        self.in_frame(|v| {
            let mark = v.dec.mark();
            run(v, &|v: &mut Verifier<'p>, value: T| {
                let mut conds = vec![];
                let mut facts = vec![];
                for e in v.dec.entries_since(mark) {
                    if e.branch {
                        conds.push(e.term.clone());
                    } else {
                        facts.push(e.term.clone());
                    }
                }
                leaves.borrow_mut().push(Leaf { conds, facts, value });
            });
        });
        leaves.into_inner()
    }

    /// Assume each leaf's facts, guarded by its branch conditions.
    pub fn assume_leaf_facts<T>(&mut self, leaves: &[Leaf<T>]) {
        let mut seen = std::collections::HashSet::new();
        for l in leaves {
            let guard = Term::and_all(l.conds.clone());
            for f in &l.facts {
                let t = Term::implies(guard.clone(), f.clone());
                if seen.insert(t.clone()) {
                    self.dec.assume(t);
                }
            }
        }
    }

    /// Start tentative work: failures recorded until `end_tentative` can be taken back.
    pub fn begin_tentative(&mut self) -> (u32, usize) {
        let saved = self.tag;
        self.tag = self.next_tag;
        self.next_tag += 1;
        (saved, self.failures.len())
    }
    /// The tag of the current tentative work, to restore it around continuations.
    pub fn current_tag(&self) -> u32 {
        self.tag
    }
    pub fn set_tag(&mut self, tag: u32) {
        self.tag = tag;
    }
    /// End tentative work: remove and return the failures it recorded.
    pub fn end_tentative(&mut self, saved: (u32, usize)) -> Vec<VerificationError> {
        let tag = self.tag;
        self.tag = saved.0;
        let mut taken = vec![];
        let mut kept = vec![];
        for f in self.failures.drain(saved.1..) {
            if f.tag == tag { taken.push(f.err) } else { kept.push(f) }
        }
        self.failures.extend(kept);
        taken
    }

    /// Remember an evaluated pure call.
    pub fn record_call(&mut self, c: eval::EvaluatedCall) {
        if self.config.infer && self.evaluated_terms.insert(c.term.clone()) {
            self.evaluated.entry(c.snap.clone()).or_default().push(c);
        }
    }

    /// The pure calls evaluated so far on snapshot `snap`.
    pub fn calls_on(&self, snap: &Term) -> Vec<eval::EvaluatedCall> {
        self.evaluated.get(snap).cloned().unwrap_or_default()
    }

    /// Has this pure call been unfolded on the current path? Marks it if not.
    pub fn first_unfolding(&mut self, call: &Term) -> bool {
        if !self.unfolded.insert(call.clone()) {
            return false;
        }
        self.unfolded_order.push(call.clone());
        true
    }

    pub fn note_heap_size(&mut self, state: &State) {
        self.chunks_max = self.chunks_max.max(state.heap.len() as u64);
    }

    /// Append a trace entry for the current path (when tracing).
    pub fn trace_step(&mut self, state: &State, what: impl FnOnce() -> String, span: Span) {
        self.note_heap_size(state);
        if !self.config.trace || self.unfold_depth > 0 {
            return;
        }
        let e = self.trace_with_state(state, &what(), span);
        self.trace = e;
    }

    fn trace_with_state(&self, state: &State, what: &str, span: Span) -> Vec<TraceEntry> {
        let mut t = self.trace.clone();
        // Only the conjuncts no earlier entry showed.
        let mut shown: std::collections::HashSet<String> =
            t.iter().flat_map(|e| e.path_condition.iter().cloned()).collect();
        let mut pc = vec![];
        for e in self.dec.path_condition() {
            let text = e.term.to_string();
            if shown.insert(text.clone()) {
                pc.push(text);
            }
        }
        t.push(TraceEntry {
            what: what.to_string(),
            span,
            line: 0,
            store: state.store.iter().map(|(k, v)| format!("{k} ↦ {v}")).collect(),
            heap: state.heap.iter().map(|c| c.to_string()).collect(),
            path_condition: pc,
        });
        t
    }
}
