//! The decider: the path condition Σ, kept in step with the solver's push/pop, and the
//! provability checks `Σ ⊢ φ` of the paper (prove = push; assert ¬φ; check; pop).
//!
//! Architecture invariant: the rules see only `Term`s and `Answer`s; syntax decides
//! first (a literal, a conjunct already assumed, a term Z3 already proved on this path)
//! and Z3 is asked only otherwise. What Z3 sees is kept small: axiom instances of pure
//! methods reach it only when a check does not prove unsatisfiability without them.

pub mod entail;
pub mod finite;
mod profile;
pub mod z3;

use crate::state::term::{Term, TermMap};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};
use z3::Backend;
pub use z3::{Interrupt, Sat};

/// The outcome of a proof attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Proved,
    /// Not provable: Z3 found the negation satisfiable.
    Refuted,
    /// Z3 gave up (`unknown` or the timeout): never counted as proved.
    Unknown,
}

/// What a conjunct of the path condition is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A branch condition.
    Branch,
    /// A fact assumed on this path (producing an assertion, holding a chunk).
    Fact,
    /// A fact that follows from holding the chunks produced so far: a snapshot's shape
    /// (`s = combine(first(s), second(s))`), a non-null receiver, two distinct
    /// locations, a fact of an opened predicate's body. True on any path that holds
    /// them; a pure method's definition asserts it for every application.
    Derived,
    /// A fact true on every path: an instance of a pure method's definition or
    /// postcondition axiom. It needs no guard when it leaves a `join`.
    Axiom,
    /// The definition of a fresh symbol (`Decider::define`), assumed when the symbol is
    /// first mentioned: a `join` drops it, and it comes back, unguarded, with the first
    /// entry after the join that mentions the symbol.
    Definition,
}

/// One conjunct of the path condition.
#[derive(Clone, Debug)]
pub struct PcEntry {
    pub term: Term,
    pub kind: Kind,
}

#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub queries: u64,
    pub pushes: u64,
    pub z3_time: Duration,
    /// Axiom instances (`Kind::Axiom`) given to the solver: by a check that needed
    /// them (lazy axioms), again after the frame they were given in was popped, or
    /// as they were assumed (without lazy axioms).
    pub axioms_to_z3: u64,
    /// Checks the solver gave up on (a resource or time limit, an interrupt).
    pub unknowns: u64,
}

pub struct Decider {
    /// Made on first use.
    backend: Option<Backend>,
    pc: Vec<PcEntry>,
    frames: Vec<usize>,
    /// Multiset of the assumed conjuncts, for syntactic proofs, with the canonical form
    /// of each quantifier among them (`Term::alpha_canonical`).
    known: TermMap<Term, u32>,
    /// Definitions of fresh symbols (`define`): each is assumed when its symbol is first
    /// mentioned on the path or in a query, never before.
    definitions: TermMap<Term, Term>,
    /// Multiset of the symbols occurring in the path condition, with the symbols of
    /// each entry (parallel to `pc`) to take them back on pop.
    vars: TermMap<Term, u32>,
    /// How much of the path condition Z3 has seen: frames pushed, entries asserted.
    z3_frames: usize,
    z3_len: usize,
    entry_vars: Vec<Vec<Term>>,
    pub counters: Counters,
    deadline: Option<Instant>,
    /// Z3's resource limit per query (`--rlimit`): deterministic, unlike time.
    rlimit: Option<u32>,
    /// The member's stop request (a cancelled run, a budget run out): once made, every
    /// path stops as on a timeout and every query answers `unknown`.
    interrupt: Option<Interrupt>,
    /// Counts every change to the path condition (push, pop, assumption), so the
    /// executor can tell that nothing changed it between two points (`epoch`).
    epoch: u64,
    /// The epoch at which a check showed the path condition satisfiable (a `Sat`
    /// answer for `Σ ∪ {t}`): until it changes, `check(true)` needs no solver.
    sat_at: Option<u64>,
    /// The solver answered the last check `Sat` (its model may be read until the
    /// next call into it: `prove_probing`).
    solver_sat: bool,
    /// Axiom instances (`Kind::Axiom`) the solver has not been given yet, by index in
    /// `pc`: a check first runs without them and asks again with them only when it
    /// did not prove unsatisfiability (`check`). Definitions unfolded for every
    /// predicate instance are most of a long path's assertions (a list of 1,000
    /// nodes: 9,000 of 15,000) and most queries never need them.
    pending: Vec<usize>,
    /// Axiom instances given to the solver by a check, with the solver frame they were
    /// asserted in: when that frame is popped, those still on the path are pending again.
    flushed: Vec<(usize, usize)>,
    /// Keep axiom instances from the solver until a check needs them (default on).
    pub lazy_axioms: bool,
    /// A quantifier was evaluated in this member: from then on what a check proves is
    /// also assumed, so that the terms it names can instantiate quantifiers later
    /// (LANGUAGE.md section 13: `assert a[1] == 3;` names `a[1]`). Members without
    /// quantifiers keep the path condition as it was.
    pub quantified: bool,
    /// Give Z3 the time left before the deadline with each query (a user's --timeout).
    /// Off, the deadline only stops paths and queries are bounded by the resource
    /// limit: Z3 4.8.12 starts a timer thread for each timed query.
    timed: bool,
    /// Terms the solver proved to follow from the path condition (a check of their
    /// negation was unsatisfiable), as a multiset with a log per frame: while they are
    /// on the path, the same question is answered without the solver.
    entailed: TermMap<Term, u32>,
    entailed_log: Vec<Term>,
    entailed_frames: Vec<usize>,
    /// For each active watcher (a `join` collecting leaves, innermost last): the
    /// least length the path condition had since the watcher last looked
    /// (`take_low`). Entries below it were never popped since, so they are the ones
    /// the watcher saw then: what two leaves share is read without comparing them.
    lows: Vec<usize>,
    /// For each symbol of the path condition, what each entry that mentions it says
    /// of it, in order: a comparison with a literal, or `None` for anything else (for
    /// `unary_feasible`).
    var_entries: TermMap<Term, Vec<Option<Unary>>>,
    /// Count the instances of each named quantifier in the member's solver (`--stats`).
    pub count_instances: bool,
    /// Stop the member, as on a timeout, once a check spent the resource limit: a
    /// member's own check; a definition's translation goes on (its failures only
    /// leave the definition partial).
    pub stop_when_exhausted: bool,
    /// `define` assumes at once (a pure method's translation, whose axioms are the
    /// entries of its paths: a definition assumed later would be missing from them).
    pub eager_definitions: bool,
    /// Give the solver an existential fact with constants for its witnesses
    /// (`∃ i. P(i)` as `P(i#∃1)`, also under a guard `g ⇒ ∃ ..`), so that the ground
    /// terms of the witness are there to match (an existential goal is then proved
    /// with them, see `witness_instances`). Off in a translation, whose entries become
    /// axioms over formal symbols, and while a quantifier's body is evaluated, whose
    /// facts are bound under its binder (one constant would be one witness for all
    /// instances).
    pub skolemize: bool,
    /// Each existential fact so given and its form with witness constants (a fact
    /// assumed again gets the same constants: the same proposition, the same witness).
    skolem_of: TermMap<Term, Term>,
    skolems: u64,
    /// Each universal quantifier the executor evaluated, with its body over the fresh
    /// symbols the evaluation used for its bound variables and the facts that
    /// evaluation gave about them (`record_goal_instance`): a goal that holds it in a
    /// positive position is proved at those symbols (`skolemized_goal`).
    goal_instances: TermMap<Term, Rc<(Term, Vec<Term>)>>,
    /// Those quantifiers in the order recorded, each with the number of frames then
    /// open: the facts may rest on the path's conditions, so a pop below that depth
    /// puts them under what the popped frame assumed.
    goal_log: Vec<(Term, usize)>,
    /// So stopped.
    stopped: bool,
    /// Those counts, from backends dropped so far.
    instances: HashMap<Rc<str>, u64>,
    /// The instances of each named quantifier in the first query the solver gave up
    /// on (asked again of a context that counts them), most first.
    pub gave_up_on: Option<Vec<(Rc<str>, u64)>>,
    /// A query of the last `prove` that the solver stopped at its instance limit
    /// (`z3::MAX_INSTANCES`) without an answer: a failure there is no refutation.
    capped_query: Option<Term>,
}

impl Decider {
    pub fn new(timeout: Option<Duration>) -> Decider {
        let mut d = Decider {
            backend: None,
            pc: Vec::new(),
            frames: Vec::new(),
            known: TermMap::default(),
            definitions: TermMap::default(),
            stop_when_exhausted: false,
            eager_definitions: false,
            skolemize: true,
            skolem_of: TermMap::default(),
            skolems: 0,
            goal_instances: TermMap::default(),
            goal_log: Vec::new(),
            stopped: false,
            vars: TermMap::default(),
            z3_frames: 0,
            z3_len: 0,
            entry_vars: Vec::new(),
            counters: Counters::default(),
            deadline: timeout.map(|t| Instant::now() + t),
            rlimit: None,
            interrupt: None,
            epoch: 0,
            sat_at: None,
            solver_sat: false,
            pending: Vec::new(),
            flushed: Vec::new(),
            lazy_axioms: true,
            quantified: false,
            timed: true,
            entailed: TermMap::default(),
            entailed_log: Vec::new(),
            entailed_frames: Vec::new(),
            lows: Vec::new(),
            var_entries: TermMap::default(),
            count_instances: false,
            instances: HashMap::new(),
            gave_up_on: None,
            capped_query: None,
        };
        // Everything a member assumes lives in frames above this one.
        d.push();
        d
    }

    /// Give each later query at most `rlimit` of Z3's resource units (`None`: no
    /// limit). A query that runs out answers `unknown`, reported as a timeout.
    pub fn set_rlimit(&mut self, rlimit: Option<u32>) {
        self.rlimit = rlimit;
        if let (Some(b), Some(n)) = (self.backend.as_mut(), rlimit) {
            b.set_rlimit(n);
        }
    }

    /// Let `interrupt` stop this decider's queries (see [`Interrupt`]); before the first.
    pub fn set_interrupt(&mut self, interrupt: Option<Interrupt>) {
        self.interrupt = interrupt;
    }

    /// Forget the Z3 backend (the next query makes a new one, in a new context).
    /// Only between checks: the path condition must be empty.
    pub fn drop_backend(&mut self) {
        debug_assert!(self.is_pristine());
        if self.is_pristine() {
            self.take_backend();
        }
    }

    /// Forget the Z3 backend, keeping the instance counts it has.
    fn take_backend(&mut self) {
        if let Some(b) = self.backend.take()
            && b.is_traced()
        {
            for (q, n) in b.instances() {
                *self.instances.entry(q).or_default() += n;
            }
        }
        self.z3_frames = 0;
        self.z3_len = 0;
    }

    /// The instances of each named quantifier in this member's queries, most first
    /// (with `count_instances`; empty without). Ends the member's use of the solver:
    /// the path condition is given again to a new context if asked anything after.
    pub fn take_instances(&mut self) -> Vec<(Rc<str>, u64)> {
        self.take_backend();
        // A new context is brought up to the path condition from its start, which
        // makes the axiom instances pending again.
        self.pending.clear();
        self.flushed.clear();
        let mut v: Vec<(Rc<str>, u64)> = std::mem::take(&mut self.instances).into_iter().collect();
        profile::sort(&mut v);
        v
    }

    /// The Z3 backend, made (in a Z3 context of its own) on first use: a member that
    /// syntax decides entirely never touches Z3.
    fn backend(&mut self) -> &mut Backend {
        let (rlimit, interrupt) = (self.rlimit, &self.interrupt);
        let traced = self.count_instances;
        self.backend.get_or_insert_with(|| {
            let mut b = if traced {
                Backend::traced(interrupt.clone())
            } else {
                Backend::stoppable(interrupt.clone())
            };
            if let Some(n) = rlimit {
                b.set_rlimit(n);
            }
            b
        })
    }

    /// Is the path condition empty (nothing assumed above the base frame)?
    pub fn is_pristine(&self) -> bool {
        self.pc.is_empty() && self.frames.len() <= 1
    }

    /// When the member's time budget runs out.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }
    /// Whether queries are given the time left (see `timed`).
    pub fn timed(&self) -> bool {
        self.timed
    }
    /// A new deadline; `timed`: also give each query the time left before it.
    pub fn set_deadline(&mut self, d: Option<Instant>, timed: bool) {
        self.deadline = d;
        self.timed = timed;
    }

    /// Has the member's time budget run out (or was it asked to stop)?
    pub fn out_of_time(&self) -> bool {
        self.stopped
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.interrupt.as_ref().is_some_and(Interrupt::requested)
    }

    /// Was the member stopped because a check spent the resource limit
    /// (`stop_when_exhausted`)?
    pub fn stopped_on_limit(&self) -> bool {
        self.stopped
    }

    /// How many frames are pushed.
    pub fn depth(&self) -> usize {
        self.frames.len()
    }

    /// A number that changes whenever the path condition does (push, pop, assume).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn push(&mut self) {
        self.epoch += 1;
        self.counters.pushes += 1;
        self.frames.push(self.pc.len());
        self.entailed_frames.push(self.entailed_log.len());
    }

    /// Bring Z3 up to the path condition: push the frames and assert the entries it
    /// has not seen. Z3 is synchronised lazily, only before a check, so paths that
    /// syntax decides never touch it.
    fn sync(&mut self) {
        while self.z3_frames < self.frames.len() {
            let mark = self.frames[self.z3_frames];
            self.assert_upto(mark);
            self.backend().push();
            self.z3_frames += 1;
        }
        self.assert_upto(self.pc.len());
    }

    fn assert_upto(&mut self, end: usize) {
        while self.z3_len < end {
            if self.lazy_axioms && self.pc[self.z3_len].kind == Kind::Axiom {
                self.pending.push(self.z3_len);
            } else {
                if self.pc[self.z3_len].kind == Kind::Axiom {
                    self.counters.axioms_to_z3 += 1;
                }
                let t = self.asserted(self.z3_len);
                self.backend().assert(&t);
            }
            self.z3_len += 1;
        }
    }

    /// Give the solver the pending axiom instances, in the current solver frame.
    fn flush_pending(&mut self) {
        let level = self.z3_frames;
        for i in std::mem::take(&mut self.pending) {
            let t = self.asserted(i);
            self.backend().assert(&t);
            self.counters.axioms_to_z3 += 1;
            self.flushed.push((i, level));
        }
    }

    /// The form in which path entry `i` is given to the solver (its existentials'
    /// witnesses as constants).
    fn asserted(&self, i: usize) -> Term {
        let t = &self.pc[i].term;
        self.skolem_of.get(t).cloned().unwrap_or_else(|| t.clone())
    }

    /// `t` with the witnesses of its existentials as fresh constants, where they
    /// stand as the fact itself, a conjunct or the conclusion of an implication;
    /// `None` when it has none there.
    fn with_witnesses(&mut self, t: &Term) -> Option<Term> {
        use crate::state::term::Op;
        match t.op() {
            Op::Quant(b) if !b.forall => {
                let (vars, _, body) = t.quant_parts();
                let mut map = TermMap::default();
                for v in vars {
                    let Op::Var(n, sort) = v.op() else { return None };
                    self.skolems += 1;
                    let base = n.split('@').next().unwrap_or(n);
                    map.insert(
                        v.clone(),
                        Term::var(&format!("{base}#\u{2203}{}", self.skolems), *sort),
                    );
                }
                let body = body.substitute(&map);
                Some(self.with_witnesses(&body).unwrap_or(body))
            }
            Op::Implies => {
                let c = self.with_witnesses(&t.args()[1])?;
                Some(Term::implies(t.args()[0].clone(), c))
            }
            Op::And => {
                let mut changed = false;
                let mut out = Vec::with_capacity(t.args().len());
                for a in t.args() {
                    match self.with_witnesses(a) {
                        Some(w) => {
                            changed = true;
                            out.push(w);
                        }
                        None => out.push(a.clone()),
                    }
                }
                changed.then(|| Term::and_all(out))
            }
            _ => None,
        }
    }

    /// Remember that the universal quantifier `quant` is `body` at the fresh symbols
    /// of its evaluation, whose `facts` (the body's, each under the guards that led to
    /// it) hold there: they are instances of what holds for every value.
    pub fn record_goal_instance(&mut self, quant: Term, body: Term, facts: Vec<Term>) {
        self.goal_log.push((quant.clone(), self.frames.len()));
        self.goal_instances.insert(quant, Rc::new((body, facts)));
    }

    /// `goal` with each universal quantifier in a positive position that the executor
    /// evaluated replaced by its body at the symbols of that evaluation, whose facts
    /// are added to `facts` (`None` when there is none). Proving it proves `goal`: the
    /// symbols are fresh (mentioned nowhere else on the path), so what holds for all
    /// of their values is the quantifier; and the facts about them are ground, so
    /// none needs a trigger (`forall k :: k > 1 ==> g(k + 1) > 0 && g(k - 1) > 0`:
    /// `g`'s postcondition at both applications, of which a quantified fact could
    /// only have one as its trigger).
    fn skolemized_goal(&self, goal: &Term, facts: &mut Vec<Term>, depth: u32) -> Option<Term> {
        use crate::state::term::Op;
        if depth > 64 {
            return None;
        }
        match goal.op() {
            Op::Quant(b) if b.forall => {
                let instance = self.goal_instances.get(goal)?;
                facts.extend(instance.1.iter().cloned());
                let body = &instance.0;
                Some(self.skolemized_goal(body, facts, depth + 1).unwrap_or_else(|| body.clone()))
            }
            _ => goal.rebuild_positive(|a| self.skolemized_goal(a, facts, depth + 1)),
        }
    }

    /// The instances of the existential goal `goal` at the ground terms of the path
    /// that match one of its triggers (`s[1 + i#∃1]` for a trigger `s[i]`): each
    /// implies the goal, and given with it they spare the solver the match, which its
    /// relevancy filter can miss (a witness term in a fact guarded by a case split).
    /// At most a few, found without descending into quantifiers.
    fn witness_instances(&self, goal: &Term) -> Vec<Term> {
        use crate::state::term::{Op, TermSet};
        const MAX_WITNESSES: usize = 16;
        const MAX_NODES: usize = 20_000;
        let Op::Quant(b) = goal.op() else { return vec![] };
        if b.forall {
            return vec![];
        }
        let (vars, groups, body) = goal.quant_parts();
        let patterns: Vec<&Term> = groups
            .iter()
            .filter(|g| g.len() == 1)
            .map(|g| &g[0])
            .filter(|p| vars.iter().all(|v| p.symbols().contains(v)))
            .collect();
        if patterns.is_empty() {
            return vec![];
        }
        let mut seen = TermSet::default();
        let mut out: Vec<Term> = vec![];
        let mut stack: Vec<Term> = (0..self.pc.len()).map(|i| self.asserted(i)).collect();
        while let Some(t) = stack.pop() {
            if seen.len() >= MAX_NODES || out.len() >= MAX_WITNESSES {
                break;
            }
            if !seen.insert(t.clone()) || matches!(t.op(), Op::Quant(_)) {
                continue;
            }
            for p in &patterns {
                let mut theta: Vec<Option<Term>> = vec![None; vars.len()];
                if match_pattern(p, &t, vars, &mut theta) {
                    let map: TermMap<Term, Term> = vars
                        .iter()
                        .cloned()
                        .zip(theta.into_iter().map(|x| x.unwrap_or_else(Term::tt)))
                        .collect();
                    let inst = body.substitute(&map);
                    if !out.contains(&inst) {
                        out.push(inst);
                    }
                }
            }
            stack.extend(t.args().iter().cloned());
        }
        out
    }

    /// The existential that `goal` is: itself, or the body a path entry gives a
    /// Boolean pure method's application (`hasTwo(t) = ∃ k :: ..`, its definition
    /// instance).
    fn existential_of(&self, goal: &Term) -> Option<Term> {
        use crate::state::term::Op;
        if matches!(goal.op(), Op::Quant(b) if !b.forall) {
            return Some(goal.clone());
        }
        self.quantifier_of(goal, false)
    }

    /// The quantifier (universal when `forall`) that a path entry equates with the
    /// application `goal` (a Boolean pure method's definition instance:
    /// `allPos(s, r) = ∀ i :: ..`).
    pub fn quantifier_of(&self, goal: &Term, forall: bool) -> Option<Term> {
        use crate::state::term::Op;
        let wanted = |t: &Term| matches!(t.op(), Op::Quant(b) if b.forall == forall);
        if !matches!(goal.op(), Op::App(_)) {
            return None;
        }
        self.pc.iter().find_map(|e| {
            let t = &e.term;
            if !matches!(t.op(), Op::Eq) {
                return None;
            }
            let (a, b) = (&t.args()[0], &t.args()[1]);
            if a == goal && wanted(b) {
                Some(b.clone())
            } else if b == goal && wanted(a) {
                Some(a.clone())
            } else {
                None
            }
        })
    }

    pub fn pop(&mut self) {
        let Some(mark) = self.frames.pop() else { return };
        self.epoch += 1;
        let emark = self.entailed_frames.pop().unwrap_or(0);
        for t in self.entailed_log.drain(emark..) {
            take_back(&mut self.entailed, &t);
        }
        // Facts recorded in the popped frame hold under what it assumed.
        let depth = self.frames.len();
        if self.goal_log.last().is_some_and(|(_, d)| *d > depth) {
            let guard = Term::and_all(self.pc[mark..].iter().map(|e| e.term.clone()).collect());
            for (t, d) in self.goal_log.iter_mut().rev() {
                if *d <= depth {
                    break;
                }
                *d = depth;
                if let Some(instance) = self.goal_instances.get_mut(t) {
                    let (body, facts) = &**instance;
                    let lifted = Term::implies(guard.clone(), Term::and_all(facts.clone()));
                    *instance = Rc::new((body.clone(), vec![lifted]));
                }
            }
        }
        for vs in self.entry_vars.drain(mark..) {
            for x in vs {
                // The entries popped are the last of each symbol's list.
                if let Some(list) = self.var_entries.get_mut(&x) {
                    list.pop();
                    if list.is_empty() {
                        self.var_entries.remove(&x);
                    }
                }
                take_back(&mut self.vars, &x);
            }
        }
        for e in self.pc.drain(mark..) {
            take_back(&mut self.known, &e.term);
            if let Some(k) = e.term.alpha_canonical() {
                take_back(&mut self.known, &k);
            }
        }
        for low in &mut self.lows {
            *low = (*low).min(mark);
        }
        self.pending.retain(|&i| i < mark);
        if self.z3_frames > self.frames.len() {
            self.backend().pop();
            self.z3_frames -= 1;
            // Axioms flushed into the popped solver frame left the solver with it.
            let level = self.z3_frames;
            let mut again = vec![];
            self.flushed.retain(|&(i, l)| {
                if l > level && i < mark {
                    again.push(i);
                }
                l <= level
            });
            if !again.is_empty() {
                self.pending.extend(again);
                self.pending.sort_unstable();
            }
        }
        self.z3_len = self.z3_len.min(mark);
    }

    /// The current length of the path condition, to read what was added since.
    pub fn mark(&self) -> usize {
        self.pc.len()
    }
    pub fn entries_since(&self, mark: usize) -> &[PcEntry] {
        &self.pc[mark.min(self.pc.len())..]
    }

    /// Start watching how far the path condition shrinks (see `lows`); returns the
    /// watcher's slot. Watchers nest: `unwatch` the innermost first.
    pub fn watch_low(&mut self) -> usize {
        self.lows.push(self.pc.len());
        self.lows.len() - 1
    }
    /// The least length the path condition had since the watcher's last look (or
    /// its start): every entry below it is the one that was there then.
    pub fn take_low(&mut self, slot: usize) -> usize {
        std::mem::replace(&mut self.lows[slot], self.pc.len())
    }
    pub fn unwatch(&mut self, slot: usize) {
        self.lows.truncate(slot);
    }

    fn add(&mut self, t: Term, kind: Kind) {
        if t.is_true() {
            return;
        }
        self.epoch += 1;
        let conjuncts: Vec<Term> = match t.op() {
            crate::state::term::Op::And => t.args().to_vec(),
            _ => vec![t.clone()],
        };
        let mut due = vec![];
        for c in conjuncts {
            // Already on the path (in this frame or one below, which outlives it). A
            // quantifier also when one that differs only in the names of its bound
            // variables is: Z3 would instantiate both with every match of their
            // triggers (a loop invariant proved on entry from the same precondition).
            let canonical = c.alpha_canonical();
            if self.known.contains_key(&c)
                || canonical.as_ref().is_some_and(|k| self.known.contains_key(k))
            {
                continue;
            }
            if let Some(k) = canonical {
                *self.known.entry(k).or_insert(0) += 1;
            }
            let vs = symbols(&c);
            let said = unary(&c);
            for x in &vs {
                if !self.vars.contains_key(x) {
                    due.extend(self.definitions.get(x).cloned());
                }
                *self.vars.entry(x.clone()).or_insert(0) += 1;
                let of_x = said.as_ref().filter(|(y, _)| y == x).map(|&(_, u)| u);
                self.var_entries.entry(x.clone()).or_default().push(of_x);
            }
            self.entry_vars.push(vs);
            *self.known.entry(c.clone()).or_insert(0) += 1;
            if self.skolemize
                && kind != Kind::Definition
                && !self.skolem_of.contains_key(&c)
                && let Some(w) = self.with_witnesses(&c)
            {
                self.skolem_of.insert(c.clone(), w);
            }
            self.pc.push(PcEntry { term: c, kind });
        }
        for d in due {
            self.add(d, Kind::Definition);
        }
    }

    /// Define the fresh symbol `x` by `def` (a fact that constrains `x` and can hold
    /// whatever the other symbols are: a map's values at every index). Assumed when
    /// `x` is first mentioned on the path or in a query: a definition whose symbol is
    /// never used afterwards (the snapshot of a loop invariant consumed on entry) is
    /// then never given to the solver, whose quantifier it would instantiate with every
    /// read. Leaving it out changes no answer about the terms without `x`.
    pub fn define(&mut self, x: Term, def: Term) {
        if self.eager_definitions {
            self.add(def, Kind::Derived);
        } else {
            self.definitions.insert(x, def);
        }
    }

    /// Assume the definitions of the symbols of `t` not yet on the path.
    fn define_symbols_of(&mut self, t: &Term) {
        if self.definitions.is_empty() {
            return;
        }
        for x in symbols(t) {
            let due = if self.vars.contains_key(&x) { None } else { self.definitions.get(&x) };
            if let Some(d) = due.cloned() {
                self.add(d, Kind::Definition);
            }
        }
    }

    /// Σ := Σ ∪ {t}, a fact.
    pub fn assume(&mut self, t: Term) {
        self.add(t, Kind::Fact)
    }
    /// Σ := Σ ∪ {t}, a branch condition.
    pub fn assume_branch(&mut self, t: Term) {
        self.add(t, Kind::Branch)
    }
    /// Σ := Σ ∪ {t}, a fact that follows from the chunks held.
    pub fn assume_derived(&mut self, t: Term) {
        self.add(t, Kind::Derived)
    }
    /// Σ := Σ ∪ {t}, an axiom instance (true on every path).
    pub fn assume_axiom(&mut self, t: Term) {
        self.add(t, Kind::Axiom)
    }

    /// Is `t` syntactically among the assumptions (or literally true)?
    pub fn known(&self, t: &Term) -> bool {
        t.is_true()
            || self.known.contains_key(t)
            || self.entailed.contains_key(t)
            || t.alpha_canonical().is_some_and(|k| self.known.contains_key(&k))
    }

    /// Is `t`, or each of its conjuncts, syntactically among the assumptions (or
    /// literally true)?
    pub fn known_conjuncts(&self, t: &Term) -> bool {
        self.known(t)
            || matches!(t.op(), crate::state::term::Op::And)
                && t.args().iter().all(|c| self.known(c))
    }

    /// Does `t` follow from the path condition by syntax alone ([`entail`])? The
    /// path's integer comparisons taken are its latest `entail::MAX_ATOMS`.
    pub fn entailed_by_syntax(&self, t: &Term) -> bool {
        use crate::state::term::Op;
        let atoms: Vec<Term> = self
            .pc
            .iter()
            .rev()
            .map(|e| &e.term)
            .filter(|t| match t.op() {
                Op::Le | Op::Lt | Op::Eq => true,
                Op::Not => matches!(t.args()[0].op(), Op::Le | Op::Lt),
                _ => false,
            })
            .take(entail::MAX_ATOMS)
            .cloned()
            .collect();
        entail::entails(&|x| self.known(x), &atoms, t)
    }

    /// Is `t` syntactically among the assumptions (not counting what the solver
    /// proved)? A term assumed is consistent with the path as far as the path is: what
    /// was proved may be so only because the path condition is contradictory.
    pub fn assumed(&self, t: &Term) -> bool {
        t.is_true() || self.known.contains_key(t)
    }

    /// Remember that the solver showed `t` to follow from the path condition.
    fn note_entailed(&mut self, t: Term) {
        *self.entailed.entry(t.clone()).or_insert(0) += 1;
        self.entailed_log.push(t);
    }

    /// Σ ⊢ t ?
    #[track_caller]
    pub fn prove(&mut self, t: &Term) -> Answer {
        self.capped_query = None;
        if self.known_conjuncts(t) || self.entailed_by_syntax(t) {
            return Answer::Proved;
        }
        if self.known(&Term::ff()) {
            return Answer::Proved;
        }
        // A universal goal over a small literal range: its instances.
        if let Some(each) = finite::instances(t, &|x| self.literal_value(x)) {
            return self.prove(&each);
        }
        // The negation is on the path: not provable unless the path is contradictory,
        // and a failure on a contradictory path is pruned when reported (what a caller
        // does on a dead path does not matter). No query: a lookup that compares a
        // receiver known non-null with `null` asked Z3 for a model each time.
        let negation = Term::not(t.clone());
        if !negation.is_true() && self.known(&negation) {
            return Answer::Refuted;
        }
        let mut facts = vec![];
        if let Some(goal) = self.skolemized_goal(t, &mut facts, 0) {
            facts.push(Term::not(goal));
            return match self.check(&Term::and_all(facts)) {
                Sat::Unsat => Answer::Proved,
                Sat::Sat => Answer::Refuted,
                Sat::Unknown => Answer::Unknown,
            };
        }
        let mut witnesses = self.witness_instances(t);
        if let Some(ex) = self.existential_of(t) {
            for w in split_point_instances(&ex) {
                if !witnesses.contains(&w) {
                    witnesses.push(w);
                }
            }
        }
        let negation = if witnesses.is_empty() {
            negation
        } else {
            let mut any = witnesses;
            any.push(t.clone());
            Term::not(Term::or_all(any))
        };
        match self.check(&negation) {
            Sat::Unsat => Answer::Proved,
            Sat::Sat => Answer::Refuted,
            Sat::Unknown => Answer::Unknown,
        }
    }

    /// Σ ⊢ t ? and, when the solver refuted it, which of the Boolean `probes` are false
    /// in the model it found: asked, the solver would refute each such probe too (its
    /// model of Σ ∪ {¬probe} is at hand), so a caller looking for a provable probe
    /// needs no query for those. All `false` (nothing learned) when the answer came
    /// without a model.
    pub fn prove_probing(&mut self, t: &Term, probes: &[Term]) -> (Answer, Vec<bool>) {
        self.solver_sat = false;
        let a = self.prove(t);
        let learned = if a == Answer::Refuted && self.solver_sat && !probes.is_empty() {
            self.backend().false_in_model(probes)
        } else {
            vec![false; probes.len()]
        };
        (a, learned)
    }

    /// Is Σ ∪ {t} satisfiable? (`Unknown` when the solver gives up.)
    #[track_caller]
    pub fn check(&mut self, t: &Term) -> Sat {
        if t.is_false() || self.known(&Term::ff()) {
            return Sat::Unsat;
        }
        let negation = Term::not(t.clone());
        if self.known(&negation) {
            return Sat::Unsat;
        }
        if t.is_true() && self.sat_at == Some(self.epoch) {
            return Sat::Sat;
        }
        if self.stopped || self.interrupt.as_ref().is_some_and(Interrupt::requested) {
            return Sat::Unknown;
        }
        self.define_symbols_of(t);
        match self.unary_check(t) {
            Some(true) => return Sat::Sat,
            Some(false) => {
                self.note_entailed(negation);
                return Sat::Unsat;
            }
            None => {}
        }
        if let Some(d) = self.deadline {
            let left = d.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Sat::Unknown;
            }
            if self.timed {
                self.backend().set_timeout_ms(left.as_millis().min(u32::MAX as u128) as u32);
            }
        }
        self.counters.queries += 1;
        let start = Instant::now();
        self.sync();
        let units = if query_log() { self.backend().rlimit_count() } else { 0 };
        let mut r = self.backend().check_with(t);
        if r != Sat::Unsat && !self.pending.is_empty() {
            // Not refuted without the axiom instances: ask again with them.
            let capped = self.backend().capped;
            self.flush_pending();
            self.counters.queries += 1;
            r = self.backend().check_with(t);
            // A check again after one that stopped at the instance limit makes no
            // instance (the solver keeps those it made): it stopped there too.
            self.backend().capped |= capped && r == Sat::Sat;
        }
        if r == Sat::Sat && self.backend().capped {
            self.capped_query = Some(t.clone());
        }
        self.counters.z3_time += start.elapsed();
        if query_log() {
            // Where the rules asked (`#[track_caller]` up to the rule), the answer, the
            // time in microseconds and the question: a developer's profile.
            let at = std::panic::Location::caller();
            let units = self.backend().rlimit_count().saturating_sub(units);
            eprintln!("query {at} {r:?} {} {units} {t}", start.elapsed().as_micros());
        }
        if r == Sat::Sat && self.out_of_time() {
            // Z3 stopped by the time limit or an interrupt may answer `unknown` with
            // the reason "incomplete", which reads as "not proved": out of time, the
            // answer is no answer (a timeout, not a failure of the program).
            r = Sat::Unknown;
        }
        self.solver_sat = r == Sat::Sat;
        match r {
            Sat::Sat => self.sat_at = Some(self.epoch),
            Sat::Unsat => self.note_entailed(negation),
            Sat::Unknown => {
                self.counters.unknowns += 1;
                // Given up within the time left: the resource limit is spent (a
                // matching loop, most often).
                let exhausted = !self.out_of_time();
                if self.gave_up_on.is_none() && exhausted && self.has_quantifiers(t) {
                    self.gave_up_on = Some(self.instances_of(t));
                }
                if exhausted && self.stop_when_exhausted {
                    // The member stops here, as on a timeout: its other checks share
                    // the facts that made the solver spend its limit (a matching loop
                    // spends it again at each, seconds each).
                    self.stopped = true;
                }
            }
        }
        r
    }

    /// Did the solver stop a query of the last `prove` at its instance limit? Then
    /// the goal was not refuted but given up on, and the quantifiers it instantiated
    /// most are counted (once per member) for the report.
    pub fn gave_up_at_limit(&mut self) -> bool {
        let Some(t) = self.capped_query.take() else { return false };
        if self.gave_up_on.is_none() && self.has_quantifiers(&t) {
            self.gave_up_on = Some(self.instances_of(&t));
        }
        if self.stop_when_exhausted {
            // As at the resource limit: the member's other checks share the facts
            // that made the loop.
            self.stopped = true;
        }
        true
    }

    /// Can the solver instantiate anything in Σ ∪ {t}: a quantifier on the path or in
    /// `t`, or the laws of sequences?
    fn has_quantifiers(&self, t: &Term) -> bool {
        let quantified = |x: &Term| !x.bound_vars().is_empty();
        self.backend.as_ref().is_some_and(Backend::has_axioms)
            || quantified(t)
            || self.pc.iter().any(|e| quantified(&e.term))
    }

    /// The instances of each named quantifier when Σ ∪ {t} is asked again of a new
    /// context that counts them, with a quarter of the resource limit (a matching
    /// loop shows in its first instances) and what is left of the time.
    fn instances_of(&mut self, t: &Term) -> Vec<(Rc<str>, u64)> {
        let Some(mut limits) = self.fresh_limits() else { return vec![] };
        limits.rlimit = Some(self.rlimit.map_or(z3::PROFILE_RLIMIT, |r| (r / 4).max(1)));
        let start = Instant::now();
        let mut sigma: Vec<Term> = self.pc.iter().map(|e| e.term.clone()).collect();
        sigma.push(t.clone());
        let v = z3::fresh_instances(&sigma, limits);
        self.counters.z3_time += start.elapsed();
        v
    }

    /// The integer literal the path condition equates `t` with (`len(a) = 3`), if an
    /// entry says so.
    fn literal_value(&self, t: &Term) -> Option<i64> {
        use crate::state::term::Op;
        self.pc.iter().rev().find_map(|e| {
            let Op::Eq = e.term.op() else { return None };
            let (a, b) = (&e.term.args()[0], &e.term.args()[1]);
            if a == t {
                b.as_int()
            } else if b == t {
                a.as_int()
            } else {
                None
            }
        })
    }

    /// Does some entry of the path condition mention the symbol `x`?
    pub fn mentions(&self, x: &Term) -> bool {
        self.vars.contains_key(x)
    }

    /// Can both `t` and `¬t` hold on this path, by syntax alone? True when `t`
    /// compares a symbol the path condition never mentions with a literal (or is such
    /// a boolean symbol). Should the path condition itself be inconsistent, exploring
    /// both branches is harmless: every proof on them succeeds.
    pub fn independent(&self, t: &Term) -> bool {
        use crate::state::term::Op;
        let t = if let Op::Not = t.op() { &t.args()[0] } else { t };
        let free = |x: &Term| matches!(x.op(), Op::Var(..)) && !self.vars.contains_key(x);
        let lit = |x: &Term| matches!(x.op(), Op::Int(_) | Op::Bool(_) | Op::Null);
        match t.op() {
            Op::Var(..) => free(t),
            Op::Eq | Op::Lt | Op::Le => {
                let (a, b) = (&t.args()[0], &t.args()[1]);
                (free(a) && lit(b)) || (lit(a) && free(b))
            }
            _ => false,
        }
    }

    /// Can `t` hold on this path, by syntax alone? Decided when `t` compares an integer
    /// symbol with a literal and so does every entry of the path condition that
    /// mentions the symbol: whether some integer meets all those comparisons (the
    /// branches of an `else if` chain on one variable: `x == 0`, then `x != 0 && x ==
    /// 1`, ...; Z3 would take time growing with the chain for each). `None` otherwise.
    /// As for `independent`, the rest of the path condition, which does not mention
    /// the symbol, is taken as consistent: if it is not, every proof on the branch
    /// succeeds.
    pub fn unary_feasible(&self, t: &Term) -> Option<bool> {
        let (x, c) = unary(t)?;
        let entries = self.var_entries.get(&x).map_or(&[][..], |v| v.as_slice());
        let mut cs = Vec::with_capacity(entries.len() + 1);
        cs.push(c);
        for u in entries {
            cs.push((*u)?);
        }
        Some(satisfiable(&cs))
    }

    /// Σ ∪ {t} decided by syntax when `t` compares one integer symbol with literals (a
    /// conjunction of such comparisons, or the negation of one: a disjunction) and so
    /// does every entry of the path condition that mentions the symbol, as for
    /// `unary_feasible`. The conditions of quantified permissions over a fresh index
    /// (`29 <= i && i < 30`) are such terms; with many quantifiers on the path, Z3 takes
    /// its time to say so. `None` otherwise.
    fn unary_check(&self, t: &Term) -> Option<bool> {
        use crate::state::term::Op;
        let (negated, atoms) = match t.op() {
            Op::And => (false, t.args()),
            Op::Not if *t.args()[0].op() == Op::And => (true, t.args()[0].args()),
            _ => return self.unary_feasible(t),
        };
        let mut x: Option<Term> = None;
        let mut said = Vec::with_capacity(atoms.len());
        for a in atoms {
            let (y, u) = unary(&if negated { Term::not(a.clone()) } else { a.clone() })?;
            if *x.get_or_insert_with(|| y.clone()) != y {
                return None;
            }
            said.push(u);
        }
        let x = x?;
        let entries = self.var_entries.get(&x).map_or(&[][..], |v| v.as_slice());
        let base: Vec<Unary> = entries.iter().copied().collect::<Option<_>>()?;
        let with = |extra: &[Unary]| {
            let mut cs = base.clone();
            cs.extend_from_slice(extra);
            satisfiable(&cs)
        };
        Some(if negated { said.iter().any(|u| with(std::slice::from_ref(u))) } else { with(&said) })
    }

    /// The limits of a question asked of a new context: what is left of the member's
    /// time, its resource limit, its interrupt. `None` when no time is left.
    fn fresh_limits(&self) -> Option<z3::Limits> {
        let timeout_ms = match self.deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return None;
                }
                // As the member's own queries: a time limit only when the user gave one
                // (`timed`); otherwise the resource limit bounds the question, so that
                // its answer (a counterexample's model) does not depend on the machine's
                // load (the re-run of a merged failure has a deadline of its own).
                self.timed.then(|| left.as_millis().min(u32::MAX as u128) as u32)
            }
            None => None,
        };
        Some(z3::Limits { timeout_ms, rlimit: self.rlimit, interrupt: self.interrupt.clone() })
    }

    /// Values of `terms` in a model of Σ ∪ {t}, printed by Z3.
    /// Asked of a new Z3 context holding exactly Σ (see [`z3::fresh_model_values`]).
    pub fn model_values(
        &mut self,
        t: &Term,
        terms: &[Term],
        prefer: &[Term],
    ) -> Option<Vec<Option<String>>> {
        let limits = self.fresh_limits()?;
        let sigma: Vec<Term> = self.pc.iter().map(|e| e.term.clone()).collect();
        z3::fresh_model_values(&sigma, t, terms, prefer, limits)
    }

    /// Up to `k` distinct models of the path condition (and `also`; satisfying `prefer`
    /// too when some do), read at `terms` (and at what
    /// `more` asks for once those are read): the inputs of a path, for testing
    /// (`z3::fresh_distinct_models`). Empty when the time budget is spent or the path
    /// condition has no model.
    pub fn path_models(
        &mut self,
        also: Option<Term>,
        tiers: &[Vec<Term>],
        terms: &[Term],
        more: &dyn Fn(&[Option<String>]) -> Vec<Term>,
        k: usize,
    ) -> Vec<z3::ModelRead> {
        let Some(limits) = self.fresh_limits() else { return vec![] };
        let mut sigma: Vec<Term> = self.pc.iter().map(|e| e.term.clone()).collect();
        sigma.extend(also);
        // The member's own context, in a solver of its own (not the one whose frames
        // follow the path): a path condition's terms are those the path's checks
        // translated, and one solver serves all the member's path ends.
        let b = self.backend();
        b.swap_solver();
        let out = z3::distinct_models_in(b, &sigma, tiers, terms, more, k, limits);
        b.swap_solver();
        out
    }

    /// The path condition, for traces.
    pub fn path_condition(&self) -> &[PcEntry] {
        &self.pc
    }
}

/// A comparison of an integer symbol with a literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unary {
    Eq(i64),
    Ne(i64),
    /// `x >= k`
    Ge(i64),
    /// `x <= k`
    Le(i64),
}

impl Unary {
    fn holds(self, v: i64) -> bool {
        match self {
            Unary::Eq(k) => v == k,
            Unary::Ne(k) => v != k,
            Unary::Ge(k) => v >= k,
            Unary::Le(k) => v <= k,
        }
    }
}

/// `t` as a comparison of an integer symbol with a literal (`x == k`, `x < k`,
/// `k <= x`, their negations), if it is one.
fn unary(t: &Term) -> Option<(Term, Unary)> {
    use crate::state::term::{Op, Sort};
    let (negated, t) = match t.op() {
        Op::Not => (true, &t.args()[0]),
        _ => (false, t),
    };
    if !matches!(t.op(), Op::Eq | Op::Lt | Op::Le) {
        return None;
    }
    let (a, b) = (&t.args()[0], &t.args()[1]);
    let var = |x: &Term| matches!(x.op(), Op::Var(..)) && x.sort() == Sort::Int;
    // The comparison as `x op k` (`flipped`: it was `k op x`).
    let (x, k, flipped) = match (a.as_int(), b.as_int()) {
        (None, Some(k)) if var(a) => (a, k, false),
        (Some(k), None) if var(b) => (b, k, true),
        _ => return None,
    };
    let c = match (t.op(), flipped, negated) {
        (Op::Eq, _, false) => Unary::Eq(k),
        (Op::Eq, _, true) => Unary::Ne(k),
        // x < k, k < x, and their negations x >= k, x <= k.
        (Op::Lt, false, false) => Unary::Le(k.checked_sub(1)?),
        (Op::Lt, true, false) => Unary::Ge(k.checked_add(1)?),
        (Op::Lt, false, true) => Unary::Ge(k),
        (Op::Lt, true, true) => Unary::Le(k),
        // x <= k, k <= x, and their negations x > k, x < k.
        (Op::Le, false, false) => Unary::Le(k),
        (Op::Le, true, false) => Unary::Ge(k),
        (Op::Le, false, true) => Unary::Ge(k.checked_add(1)?),
        (Op::Le, true, true) => Unary::Le(k.checked_sub(1)?),
        _ => return None,
    };
    Some((x.clone(), c))
}

/// Does some integer meet every comparison?
fn satisfiable(cs: &[Unary]) -> bool {
    // Integers are unbounded: no bound means none (not `i64::MIN` or `i64::MAX`, past
    // which `x >= 2^63 - 1 && x != 2^63 - 1` still has solutions).
    let (mut lo, mut hi, mut eq): (Option<i64>, Option<i64>, Option<i64>) = (None, None, None);
    for c in cs {
        match *c {
            Unary::Eq(k) => eq = Some(k),
            Unary::Ge(k) => lo = Some(lo.map_or(k, |l| l.max(k))),
            Unary::Le(k) => hi = Some(hi.map_or(k, |h| h.min(k))),
            Unary::Ne(_) => {}
        }
    }
    if let Some(v) = eq {
        return cs.iter().all(|c| c.holds(v));
    }
    let (Some(lo), Some(hi)) = (lo, hi) else { return true };
    if lo > hi {
        return false;
    }
    // Each `!=` excludes one value: more values in [lo, hi] than exclusions leave one.
    let excluded: std::collections::BTreeSet<i64> = cs
        .iter()
        .filter_map(|c| match *c {
            Unary::Ne(k) if lo <= k && k <= hi => Some(k),
            _ => None,
        })
        .collect();
    (hi as i128) - (lo as i128) + 1 > excluded.len() as i128
}

/// Remove one occurrence of `t` from the multiset `m`.
fn take_back(m: &mut TermMap<Term, u32>, t: &Term) {
    if let Some(n) = m.get_mut(t) {
        *n -= 1;
        if *n == 0 {
            m.remove(t);
        }
    }
}

/// Whether `IDF_QUERY_LOG` is set: each solver query is then printed on standard error
/// with the rule that asked it (a developer's profile; see README "Performance").
fn query_log() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("IDF_QUERY_LOG").is_some())
}

/// The symbols occurring in `t`.
fn symbols(t: &Term) -> Vec<Term> {
    t.symbols()
}

/// Does the trigger term `p` (over the bound variables `vars`) match the ground term
/// `t` syntactically, extending the binding `theta` (one slot per variable)?
/// Instances of the existential `ex` at the split points of its body: where a bound
/// integer variable is compared with a term free of bound variables (`k < e`), the
/// last value on one side and the first on the other (`e - 1`, `e`). A witness often
/// sits there (the element a concatenation or an update put at `|a|`, whose read the
/// body's simplification turned into a branch of `ite(k < |a|, a[k], x)`), where no
/// ground read matches a trigger. Each instance implies `ex`; at most a few.
fn split_point_instances(ex: &Term) -> Vec<Term> {
    use crate::state::term::{Op, Sort};
    const MAX_INSTANCES: usize = 16;
    const MAX_NODES: usize = 2_000;
    let (vars, _, body) = ex.quant_parts();
    if vars.iter().any(|v| v.sort() != Sort::Int) {
        return vec![];
    }
    let mut points: Vec<Vec<Term>> = vec![vec![]; vars.len()];
    let mut stack = vec![body.clone()];
    let mut seen = 0;
    while let Some(t) = stack.pop() {
        seen += 1;
        if seen > MAX_NODES {
            break;
        }
        if matches!(t.op(), Op::Quant(_)) {
            continue;
        }
        let args = t.args();
        let bound = |x: &Term| vars.iter().any(|v| x.symbols().contains(v));
        let mut add = |i: usize, cands: [Term; 2]| {
            for c in cands {
                if !points[i].contains(&c) {
                    points[i].push(c);
                }
            }
        };
        let one = || Term::int(1);
        match t.op() {
            Op::Lt | Op::Le | Op::Eq if args.len() == 2 => {
                // Comparisons inside the sides (`ite(k < 3, ..) == 2`).
                stack.extend(args.iter().cloned());
                for (side, other) in [(0, 1), (1, 0)] {
                    let e = &args[other];
                    if bound(e) || e.sort() != Sort::Int {
                        continue;
                    }
                    let Some((i, e)) = vars
                        .iter()
                        .enumerate()
                        .find_map(|(i, v)| Some((i, solve(&args[side], v, e)?)))
                    else {
                        continue;
                    };
                    let e = &e;
                    // The value just inside and just outside the comparison.
                    let (lo, hi) = match (t.op(), side) {
                        (Op::Lt, 0) | (Op::Le, 1) => (Term::sub(e.clone(), one()), e.clone()),
                        (Op::Lt, _) | (Op::Le, _) => (e.clone(), Term::add(e.clone(), one())),
                        _ => (e.clone(), e.clone()),
                    };
                    add(i, [lo, hi]);
                }
            }
            _ => stack.extend(args.iter().cloned()),
        }
    }
    if points.iter().any(Vec::is_empty) {
        return vec![];
    }
    let mut out: Vec<TermMap<Term, Term>> = vec![TermMap::default()];
    for (v, cands) in vars.iter().zip(&points) {
        let mut next = vec![];
        for m in &out {
            for c in cands {
                if next.len() >= MAX_INSTANCES {
                    break;
                }
                let mut m = m.clone();
                m.insert(v.clone(), c.clone());
                next.push(m);
            }
        }
        out = next;
    }
    out.iter().map(|m| body.substitute(m)).filter(|t| !t.is_false()).collect()
}

/// The value of `v` at which `x` (`v` plus or minus terms free of it) equals `e`.
fn solve(x: &Term, v: &Term, e: &Term) -> Option<Term> {
    use crate::state::term::Op;
    if x == v {
        return Some(e.clone());
    }
    let free = |t: &Term| !t.symbols().contains(v);
    let a = x.args();
    match x.op() {
        Op::Add if a.len() == 2 && free(&a[1]) => {
            solve(&a[0], v, &Term::sub(e.clone(), a[1].clone()))
        }
        Op::Add if a.len() == 2 && free(&a[0]) => {
            solve(&a[1], v, &Term::sub(e.clone(), a[0].clone()))
        }
        Op::Sub if a.len() == 2 && free(&a[1]) => {
            solve(&a[0], v, &Term::add(e.clone(), a[1].clone()))
        }
        _ => None,
    }
}

fn match_pattern(p: &Term, t: &Term, vars: &[Term], theta: &mut [Option<Term>]) -> bool {
    if let Some(k) = vars.iter().position(|v| v == p) {
        return match &theta[k] {
            Some(bound) => bound == t,
            None => {
                theta[k] = Some(t.clone());
                true
            }
        };
    }
    if p.op() != t.op() || p.args().len() != t.args().len() || p.sort() != t.sort() {
        return false;
    }
    if p.args().is_empty() {
        return p == t;
    }
    p.args().iter().zip(t.args()).all(|(a, b)| match_pattern(a, b, vars, theta))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::term::{Func, Sort};

    #[test]
    fn proves_from_the_path_condition_and_forgets_on_pop() {
        let mut d = Decider::new(None);
        let x = Term::var("x", Sort::Int);
        let goal = Term::lt(Term::int(0), x.clone());
        assert_eq!(d.prove(&goal), Answer::Refuted);
        d.push();
        d.assume(Term::lt(Term::int(5), x.clone()));
        assert_eq!(d.prove(&goal), Answer::Proved);
        d.pop();
        assert_eq!(d.prove(&goal), Answer::Refuted);
    }

    #[test]
    fn syntax_decides_without_the_solver() {
        let mut d = Decider::new(None);
        let b = Term::var("b", Sort::Bool);
        d.assume(b.clone());
        let before = d.counters.queries;
        assert_eq!(d.prove(&b), Answer::Proved);
        assert_eq!(d.prove(&Term::tt()), Answer::Proved);
        assert_eq!(d.counters.queries, before);
    }

    #[test]
    fn a_definition_is_assumed_once_its_symbol_is_mentioned() {
        let mut d = Decider::new(None);
        let (m, n) = (Term::var("M", Sort::Int), Term::var("n", Sort::Int));
        d.push();
        d.define(m.clone(), Term::eq(m.clone(), Term::int(7)));
        // Not on the path while nothing mentions `M`.
        assert!(d.path_condition().is_empty());
        d.assume(Term::lt(n.clone(), Term::int(3)));
        assert_eq!(d.path_condition().len(), 1);
        // A query about `M` brings it in.
        assert_eq!(d.prove(&Term::eq(m.clone(), Term::int(7))), Answer::Proved);
        assert_eq!(d.path_condition().len(), 2);
        d.pop();
        // Popped with the frame, and assumed again by the next fact that mentions `M`.
        assert!(d.path_condition().is_empty());
        d.push();
        d.assume(Term::lt(n.clone(), m.clone()));
        assert_eq!(d.path_condition().len(), 2);
        assert_eq!(d.prove(&Term::lt(n, Term::int(7))), Answer::Proved);
        d.pop();
        // The translator's decider assumes at once.
        let mut t = Decider::new(None);
        t.eager_definitions = true;
        t.define(m.clone(), Term::eq(m, Term::int(7)));
        assert_eq!(t.path_condition().len(), 1);
    }

    #[test]
    fn a_quantifier_is_known_up_to_the_names_of_its_bound_variables() {
        let f = Func { name: "f".into(), domain: vec![Sort::Int].into(), range: Sort::Int };
        let all = |i: &str, lo: i64| {
            let i = Term::var(i, Sort::Int);
            let fi = Term::app(&f, vec![i.clone()]);
            let body = Term::implies(
                Term::le(Term::int(lo), i.clone()),
                Term::lt(Term::int(0), fi.clone()),
            );
            Term::quant(true, vec![i], vec![vec![fi]], body)
        };
        let mut d = Decider::new(None);
        d.push();
        d.assume(all("i@1", 0));
        let before = d.counters.queries;
        // The same fact over another bound variable: proved by syntax, and not added
        // to the path again.
        assert_eq!(d.prove(&all("i@2", 0)), Answer::Proved);
        assert_eq!(d.counters.queries, before);
        let len = d.pc.len();
        d.assume(all("i@3", 0));
        assert_eq!(d.pc.len(), len);
        // A different bound is a different fact: asked of the solver (and it holds).
        assert_eq!(d.prove(&all("i@4", 1)), Answer::Proved);
        assert!(d.counters.queries > before);
        // Popped with the fact: the same quantifier is unknown again.
        d.pop();
        let before = d.counters.queries;
        assert_eq!(d.prove(&all("i@5", 0)), Answer::Refuted);
        assert!(d.counters.queries > before);
    }

    #[test]
    fn snapshots_are_injective() {
        // combine(a, b) = combine(c, d) implies a = c, and wrap is injective.
        let mut d = Decider::new(None);
        let s = |n: &str| Term::var(n, Sort::Snap);
        d.assume(Term::eq(Term::combine(s("a"), s("b")), Term::combine(s("c"), s("d"))));
        assert_eq!(d.prove(&Term::eq(s("a"), s("c"))), Answer::Proved);
        let (i, j) = (Term::var("i", Sort::Int), Term::var("j", Sort::Int));
        d.assume(Term::eq(Term::wrap(i.clone()), Term::wrap(j.clone())));
        assert_eq!(d.prove(&Term::eq(i, j)), Answer::Proved);
    }

    #[test]
    fn a_snapshot_shape_means_what_it_says() {
        // `s = combine(first(s), second(s))` (sent to Z3 as the tester is-combine(s)).
        let mut d = Decider::new(None);
        let s = |n: &str| Term::var(n, Sort::Snap);
        let shape = Term::eq(s("s"), Term::combine(Term::first(s("s")), Term::second(s("s"))));
        d.assume(shape.clone());
        d.assume(Term::eq(Term::first(s("s")), s("a")));
        d.assume(Term::eq(Term::second(s("s")), s("b")));
        assert_eq!(d.prove(&Term::eq(s("s"), Term::combine(s("a"), s("b")))), Answer::Proved);
        assert_eq!(d.prove(&Term::eq(s("s"), Term::unit())), Answer::Refuted);
        // Its negation: s is no combination.
        let mut d = Decider::new(None);
        d.assume(Term::not(shape));
        assert_eq!(d.prove(&Term::ne(s("s"), Term::combine(s("a"), s("b")))), Answer::Proved);
        // A wrapped value's shape.
        let mut d = Decider::new(None);
        let i = Term::var("i", Sort::Int);
        d.assume(Term::eq(s("t"), Term::wrap(Term::unwrap(s("t"), Sort::Int))));
        d.assume(Term::eq(Term::unwrap(s("t"), Sort::Int), i.clone()));
        assert_eq!(d.prove(&Term::eq(s("t"), Term::wrap(i))), Answer::Proved);
        assert_eq!(d.prove(&Term::ne(s("t"), Term::unit())), Answer::Proved);
    }

    #[test]
    fn pure_functions_are_functions_of_their_snapshot() {
        let mut d = Decider::new(None);
        let f = Func {
            name: "C.p".into(),
            domain: vec![Sort::Snap, Sort::Ref].into(),
            range: Sort::Int,
        };
        let (s1, s2, r) =
            (Term::var("s1", Sort::Snap), Term::var("s2", Sort::Snap), Term::var("r", Sort::Ref));
        let a = Term::app(&f, vec![s1.clone(), r.clone()]);
        let b = Term::app(&f, vec![s2.clone(), r]);
        assert_eq!(d.prove(&Term::eq(a.clone(), b.clone())), Answer::Refuted);
        d.assume(Term::eq(s1, s2));
        assert_eq!(d.prove(&Term::eq(a, b)), Answer::Proved);
    }

    #[test]
    fn java_division_truncates() {
        let mut d = Decider::new(None);
        let (x, y) = (Term::var("x", Sort::Int), Term::var("y", Sort::Int));
        d.assume(Term::eq(x.clone(), Term::int(-7)));
        d.assume(Term::eq(y.clone(), Term::int(2)));
        assert_eq!(
            d.prove(&Term::eq(Term::div(x.clone(), y.clone()), Term::int(-3))),
            Answer::Proved
        );
        assert_eq!(d.prove(&Term::eq(Term::rem(x, y), Term::int(-1))), Answer::Proved);
    }

    #[test]
    fn independence_is_syntactic_and_follows_the_path_condition() {
        let mut d = Decider::new(None);
        let x = Term::var("x", Sort::Int);
        let c = Term::eq(x.clone(), Term::int(0));
        assert!(d.independent(&c));
        assert!(d.independent(&Term::not(c.clone())));
        d.push();
        d.assume(Term::lt(Term::int(5), x.clone()));
        assert!(!d.independent(&c));
        d.pop();
        assert!(d.independent(&c));
        let y = Term::var("y", Sort::Int);
        assert!(!d.independent(&Term::eq(x, y)));
    }

    #[test]
    fn bounds_on_one_symbol_are_decided_without_the_solver() {
        let mut d = Decider::new(None);
        let (i, k) = (Term::var("i", Sort::Int), Term::var("k", Sort::Int));
        let range = |lo: i64, hi: i64| {
            Term::and(Term::le(Term::int(lo), i.clone()), Term::lt(i.clone(), Term::int(hi)))
        };
        assert_eq!(d.check(&range(29, 30)), Sat::Sat);
        assert_eq!(d.check(&range(3, 3)), Sat::Unsat);
        d.assume(Term::le(Term::int(10), i.clone()));
        assert_eq!(d.check(&range(0, 10)), Sat::Unsat);
        assert_eq!(d.prove(&Term::not(range(0, 10))), Answer::Proved);
        // The negation of a range is a disjunction: one side is enough.
        assert_eq!(d.check(&Term::not(range(10, 12))), Sat::Sat);
        d.assume(Term::lt(i.clone(), Term::int(12)));
        assert_eq!(d.check(&Term::not(range(10, 12))), Sat::Unsat);
        assert_eq!(d.counters.queries, 0);
        // A path condition entry relating the symbol to another symbol: the solver.
        d.assume(Term::lt(i.clone(), k.clone()));
        assert_eq!(d.check(&range(10, 11)), Sat::Sat);
        assert_eq!(d.counters.queries, 1);
    }

    #[test]
    fn a_satisfiable_path_condition_is_not_asked_again_until_it_changes() {
        let mut d = Decider::new(None);
        // Comparisons of two symbols (a symbol and a literal would be decided by syntax).
        let (x, y) = (Term::var("x", Sort::Int), Term::var("y", Sort::Int));
        d.assume(Term::lt(y.clone(), x.clone()));
        assert_eq!(
            d.prove(&Term::lt(Term::add(y.clone(), Term::int(1)), x.clone())),
            Answer::Refuted
        );
        let asked = d.counters.queries;
        assert!(asked > 0);
        assert_eq!(d.check(&Term::tt()), Sat::Sat);
        assert_eq!(d.counters.queries, asked);
        // A new assumption makes it contradictory: asked again, and unsatisfiable.
        d.assume(Term::lt(x, y));
        assert_eq!(d.check(&Term::tt()), Sat::Unsat);
        assert_eq!(d.counters.queries, asked + 1);
    }

    #[test]
    fn axiom_instances_reach_the_solver_when_a_check_needs_them_and_again_after_a_pop() {
        let mut d = Decider::new(None);
        let (x, y) = (Term::var("x", Sort::Int), Term::var("y", Sort::Int));
        // x = 1 is a fact; x = 1 ⇒ y = 2 an axiom instance; the goal y = 2 needs both.
        d.assume(Term::eq(x.clone(), Term::int(1)));
        d.assume_axiom(Term::implies(
            Term::eq(x.clone(), Term::int(1)),
            Term::eq(y.clone(), Term::int(2)),
        ));
        let goal = Term::eq(y.clone(), Term::int(2));
        assert_eq!(d.prove(&Term::eq(x.clone(), Term::int(1))), Answer::Proved);
        d.push();
        d.assume(Term::lt(Term::int(0), y.clone()));
        // Refuted without the axiom, so asked again with it: proved (two checks).
        let asked = d.counters.queries;
        assert_eq!(d.prove(&goal), Answer::Proved);
        assert_eq!(d.counters.queries, asked + 2);
        // Given to the solver in the pushed frame: popping it takes the axiom out of
        // the solver, but not off the path, so the goal is still proved.
        d.pop();
        assert_eq!(d.prove(&goal), Answer::Proved);
        // A goal the axiom does not give is still refuted, with it.
        assert_eq!(d.prove(&Term::eq(y.clone(), Term::int(3))), Answer::Refuted);
        // Without lazy axioms the same answers.
        let mut e = Decider::new(None);
        e.lazy_axioms = false;
        e.assume(Term::eq(x.clone(), Term::int(1)));
        e.assume_axiom(Term::implies(Term::eq(x, Term::int(1)), Term::eq(y, Term::int(2))));
        assert_eq!(e.prove(&goal), Answer::Proved);
    }

    #[test]
    fn bounds_in_a_quantifier_body_need_no_query() {
        let mut d = Decider::new(None);
        let (i, j) = (Term::var("i", Sort::Int), Term::var("j", Sort::Int));
        let a = Term::var("a", Sort::Ref);
        let len = Term::len(a.clone());
        d.assume(Term::ne(a.clone(), Term::null()));
        d.push();
        d.assume_branch(Term::and_all(vec![
            Term::le(Term::int(0), i.clone()),
            Term::lt(i.clone(), j.clone()),
            Term::lt(j.clone(), len.clone()),
        ]));
        let inb = Term::and(Term::le(Term::int(0), i.clone()), Term::lt(i.clone(), len.clone()));
        assert_eq!(d.prove(&inb), Answer::Proved);
        let guard = Term::and(Term::le(Term::int(0), j.clone()), Term::lt(j.clone(), len.clone()));
        let nn = Term::implies(guard, Term::ne(a.clone(), Term::null()));
        assert_eq!(d.prove(&nn), Answer::Proved);
        assert_eq!(d.counters.queries, 0);
        // Not entailed: the solver is asked, and refutes it.
        let beyond = Term::lt(Term::add(j.clone(), Term::int(1)), len.clone());
        assert_eq!(d.prove(&beyond), Answer::Refuted);
        assert!(d.counters.queries > 0);
        d.pop();
        assert_eq!(d.prove(&inb), Answer::Refuted);
    }

    #[test]
    fn what_the_solver_proved_is_known_until_its_frame_is_popped() {
        let mut d = Decider::new(None);
        let x = Term::var("x", Sort::Int);
        let goal = Term::lt(Term::int(0), x.clone());
        d.push();
        // A disjunction: syntax alone does not decide the goal.
        d.assume(Term::or(Term::lt(Term::int(5), x.clone()), Term::lt(Term::int(7), x.clone())));
        assert_eq!(d.prove(&goal), Answer::Proved);
        let asked = d.counters.queries;
        assert!(asked > 0);
        assert_eq!(d.prove(&goal), Answer::Proved);
        assert!(d.known(&goal));
        assert_eq!(d.counters.queries, asked);
        d.pop();
        assert!(!d.known(&goal));
        assert_eq!(d.prove(&goal), Answer::Refuted);
    }

    #[test]
    fn comparisons_of_one_symbol_with_literals_are_decided_by_syntax() {
        let mut d = Decider::new(None);
        let x = Term::var("x", Sort::Int);
        let eq = |k: i64| Term::eq(x.clone(), Term::int(k));
        // An `else if` chain: x is none of 0..3.
        for k in 0..3 {
            d.assume(Term::not(eq(k)));
        }
        assert_eq!(d.unary_feasible(&eq(3)), Some(true));
        assert_eq!(d.unary_feasible(&eq(1)), Some(false));
        assert_eq!(d.unary_feasible(&Term::not(eq(7))), Some(true));
        // Bounds: 0 <= x <= 3 and none of 0..3 leaves x = 3 only.
        d.push();
        d.assume(Term::le(Term::int(0), x.clone()));
        d.assume(Term::lt(x.clone(), Term::int(4)));
        assert_eq!(d.unary_feasible(&eq(3)), Some(true));
        assert_eq!(d.unary_feasible(&Term::not(eq(3))), Some(false));
        assert_eq!(d.unary_feasible(&Term::lt(x.clone(), Term::int(3))), Some(false));
        assert_eq!(d.unary_feasible(&Term::not(Term::le(x.clone(), Term::int(2)))), Some(true));
        d.pop();
        assert_eq!(d.unary_feasible(&Term::not(eq(3))), Some(true));
        // Another symbol in an entry that mentions x: not decided.
        let y = Term::var("y", Sort::Int);
        d.assume(Term::lt(x.clone(), y.clone()));
        assert_eq!(d.unary_feasible(&eq(5)), None);
        assert_eq!(d.unary_feasible(&Term::eq(y, x.clone())), None);
        // Each answer agrees with the solver's.
        let mut e = Decider::new(None);
        e.assume(Term::le(Term::int(2), x.clone()));
        e.assume(Term::not(eq(2)));
        e.assume(Term::le(x.clone(), Term::int(3)));
        for t in [eq(2), eq(3), Term::not(eq(3)), Term::lt(x.clone(), Term::int(3))] {
            let by_syntax = e.unary_feasible(&t).expect("decided");
            assert_eq!(by_syntax, e.check(&t) != Sat::Unsat, "{t}");
        }
    }

    #[test]
    fn an_inconsistent_path_proves_anything() {
        let mut d = Decider::new(None);
        let x = Term::var("x", Sort::Int);
        d.assume(Term::lt(x.clone(), Term::int(0)));
        d.assume(Term::lt(Term::int(0), x));
        assert_eq!(d.prove(&Term::ff()), Answer::Proved);
    }

    #[test]
    fn a_goal_whose_negation_is_on_the_path_is_refuted_without_a_query() {
        let mut d = Decider::new(None);
        let r = Term::var("r", Sort::Ref);
        d.assume(Term::ne(r.clone(), Term::null()));
        let before = d.counters.queries;
        assert_eq!(d.prove(&Term::eq(r.clone(), Term::null())), Answer::Refuted);
        assert_eq!(d.counters.queries, before);
        assert_eq!(d.prove(&Term::ne(r, Term::null())), Answer::Proved);
    }
}
