//! The symbolic execution rules of the paper's Figures 5-8, in continuation-passing
//! style: `eval`, `produce`, `consume`, `exec`, plus the ghost operations (open,
//! close, use) and their inference.
//!
//! Architecture invariant: the rules never import `z3`; they ask the decider. A
//! continuation may run once per branch, so it is a `&dyn Fn` and all mutation goes
//! through the `&mut Verifier` it receives. Branching is `Verifier::branch`, which
//! pushes and pops the decider around each side when both are feasible (one feasible
//! side goes on in the current frame): nothing else pushes or pops, except `join`,
//! which explores a sub-computation in a pushed frame and returns its leaves.
//! Sequencing is a trampoline (`exec_seq`): a statement whose rule calls its
//! continuation once in the scope it started in hands its state back instead, so
//! straight-line code does not deepen the Rust stack.
//! A failed check is recorded with `Verifier::fail` and its path stops (the
//! continuation is not called); other paths go on.
//!
//! Interfaces (LANGUAGE.md section 10) live in `dispatch.rs` (what is known of an
//! object's class, predicate families as chunk keys, which class body an instance
//! has), `definition.rs` (dispatch axioms of an interface's pure methods) and `info.rs`
//! (families, implementations); the refinement check is a member check in `verify`.
//!
//! Every path ends in the ledger (`ledger.rs`): reaching the end of what is being
//! verified, a recorded failure, a prune the decider proved, a recorded timeout, or
//! a merge into a `join`. Nothing else ends a path; the member's check fails with an
//! internal error when the ledger does not balance.

pub mod amount;
pub mod consume;
pub mod definition;
pub mod dispatch;
pub mod eval;
pub mod exec;
pub mod ghost;
pub mod info;
pub mod interval;
pub mod join;
pub mod ledger;
pub mod paths;
pub mod produce;
pub mod quant;
pub mod render;
pub mod result;
pub mod segment;
pub mod show;

use crate::decider::{Answer, Decider};
use crate::rules::result::{Config, TraceEntry, VerificationError};
use crate::state::State;
use crate::state::term::{Op, Sort, Term, TermMap};
use crate::syntax::ast::{Program, Span, Type};
use info::Info;
use std::cell::RefCell;
use std::collections::HashMap;

/// A continuation.
pub type Q<'a, 'p, T> = &'a dyn Fn(&mut Verifier<'p>, State, T);
/// The inner continuation of a `join`: receives each leaf's value.
pub type Leafer<'a, 'p, T> = &'a dyn Fn(&mut Verifier<'p>, T);

/// How a failure is reported (LANGUAGE.md section 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// In statements: the reason is the id, at the offending expression.
    Stmt,
    /// Consuming an assertion: everything is reported with `id`, at the failing
    /// conjunct, or at `call` (with a note at the conjunct) for call preconditions.
    Consume { id: &'static str, call: Option<Span> },
    /// Checking that a contract, predicate body or pure body is well-defined.
    WellFormed,
}

/// The refinement check under way (LANGUAGE.md section 10), for the message and note
/// of an `override.unsound` failure.
#[derive(Clone, Debug)]
pub struct Refinement {
    /// `C.m` and `I.m`.
    pub class_member: String,
    pub iface_member: String,
    /// Whose conjunct is being consumed: "the class's precondition" or "the
    /// interface's postcondition".
    pub side: &'static str,
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
    /// Facts that follow from the chunks held, assumed since the join started.
    pub derived: Vec<Term>,
    /// Axiom instances assumed since the join started (true on every path).
    pub axioms: Vec<Term>,
    pub value: T,
}

/// One way a sub-computation explored by `join` ended, as `join` returns it: the
/// entries assumed since the join started that this leaf does not share with the
/// previous leaf. Leaves of an `else if` chain share most of their path (a thousand
/// arms: half a million entries in full, two thousand this way); `Leaf` is the
/// expanded form (`expand`).
pub struct JoinLeaf<T> {
    /// How many of its entries (since the join started) this leaf shares with the
    /// previous leaf: the depth at which their paths part (0 for the first leaf).
    pub shared: usize,
    /// The previous leaf's entry at depth `shared`, where the paths part (`None` for
    /// the first leaf, or when the previous leaf's path ended there).
    pub parted: Option<crate::decider::PcEntry>,
    /// This leaf's entries from depth `shared` on.
    pub own: Vec<crate::decider::PcEntry>,
    pub value: T,
}

/// The leaves with every entry since the join started (each leaf's whole path).
pub fn expand<T: Clone>(leaves: &[JoinLeaf<T>]) -> Vec<Leaf<T>> {
    let mut path: Vec<crate::decider::PcEntry> = vec![];
    let mut out = Vec::with_capacity(leaves.len());
    for l in leaves {
        path.truncate(l.shared);
        path.extend(l.own.iter().cloned());
        let (mut conds, mut facts, mut derived, mut axioms) = (vec![], vec![], vec![], vec![]);
        for e in &path {
            let t = e.term.clone();
            match e.kind {
                crate::decider::Kind::Branch => conds.push(t),
                crate::decider::Kind::Fact => facts.push(t),
                crate::decider::Kind::Derived => derived.push(t),
                crate::decider::Kind::Axiom => axioms.push(t),
                // Assumed again with the first entry that mentions its symbol.
                crate::decider::Kind::Definition => {}
            }
        }
        out.push(Leaf { conds, facts, derived, axioms, value: l.value.clone() });
    }
    out
}

/// How many entries the expanded leaves hold in all (`expand`'s cost).
pub fn expanded_len<T>(leaves: &[JoinLeaf<T>]) -> usize {
    leaves.iter().map(|l| l.shared + l.own.len()).sum()
}

pub struct Verifier<'p> {
    pub prog: &'p Program,
    /// The member being verified (for counterexamples of its entry state).
    pub member: Option<crate::syntax::ast::MemberRef>,
    pub info: &'p Info,
    pub dec: Decider,
    pub config: Config,
    /// The declared type of each local and parameter of the member being verified
    /// (`None` for a name declared twice with different types, in sibling blocks), for
    /// what a fresh value of a local says of its class (section 10).
    pub local_types: HashMap<String, Option<Type>>,
    /// Pure-call termination checking: the pure method whose body is being checked.
    pub termination: Option<crate::syntax::ast::MemberRef>,
    /// The instance `produce_body` opened last (read by `opening`).
    pub last_opened: Option<Opened>,
    /// The pure method whose body and postcondition are being checked: its recursion
    /// group's postconditions are assumed only for calls that passed the termination
    /// check (LANGUAGE.md section 15).
    pub pure_check: Option<crate::syntax::ast::MemberRef>,
    /// Inferred closes so far (to see whether a consume closed anything).
    pub closes: u64,
    /// Set when the member's time budget ran out: every path stops.
    pub timed_out: bool,

    /// Spans of trigger terms of the quantifiers being evaluated, with the first term
    /// each evaluated to (`rules/quant.rs`).
    pub watch: HashMap<Span, Option<Term>>,
    /// The program's quantifiers evaluated so far, by the name the solver counts
    /// their instances under (`rules/quant.rs`), with where each is written.
    pub quant_spans: HashMap<std::rc::Rc<str>, Span>,
    /// The factor every amount of the assertion being produced or consumed is
    /// multiplied by: `write`, or the amount of a predicate instance being opened or
    /// closed (its body is scaled: LANGUAGE.md section 11).
    pub scale: Term,
    /// Consuming a pure call's precondition: every location named with an amount
    /// must be held at some positive amount, and nothing is taken (section 11).
    pub read_mode: bool,
    /// Checking or translating a pure method: its precondition's amounts give no
    /// upper-bound facts (a read-mode caller may pass one location twice).
    pub no_bounds: bool,
    /// The heap `perm(..)` reads while a consumed conjunct is evaluated: what is left
    /// after the conjuncts to its left were consumed.
    pub perm_view: Option<crate::state::heap::Heap>,
    /// Producing an assertion: `perm(..)` is an unknown amount, not the heap's. A
    /// contract is checked in one state and produced in another (the caller's rest
    /// and the callee's part, the frame around a loop, the state a `join` forgets),
    /// so what the checking side read says nothing of the producing side's heap.
    pub perm_unknown: bool,
    /// A callee's postcondition is being produced at its call: `old(..)` there is the
    /// caller's heap before the call, of which the callee saw only what its
    /// precondition took, so `old(perm(..))` reads an unknown amount (the callee's
    /// check read its own entry heap).
    pub call_post: bool,
    /// A termination measure of this recursion group is being evaluated (at a call in
    /// a pure body): a call into the group there is circular.
    pub measuring: Option<crate::syntax::ast::MemberRef>,
    /// The `decreases` measure of the pure method whose body is being checked, as
    /// evaluated on entry (after its precondition), which each call in the body
    /// compares the callee's with.
    pub entry_measure: Option<crate::state::term::Term>,
    /// `if` statements that run inside an enclosing `if`'s join, without a join of
    /// their own (`exec_if_merging`).
    pub flat_ifs: std::collections::HashSet<*const crate::syntax::ast::Stmt>,
    /// Distinct inputs solved per path end, for testing (`paths.rs`); 0: none.
    pub path_inputs: usize,
    /// Whether a loop's body check and its exit go on without asking whether the
    /// loop's condition (or its negation) can hold (`branch_then`), and an operand
    /// evaluated under a guard without asking whether the guard can hold
    /// (`eval_guarded`); a failing member is verified again without
    /// (`verify::verify_member_with`). See `is_lazy`.
    pub lazy: bool,
    /// How many loop sides explored without a feasibility query (`is_lazy`) the
    /// current path runs on: a failure reported while it is positive asks for the
    /// member to be verified again without laziness.
    pub unchecked_depth: u32,
    /// The symbols standing for the bound variables of the quantifiers whose bodies
    /// are being evaluated (innermost last).
    pub quant_vars: Vec<Term>,
    /// The path ends recorded when `path_inputs > 0`, and those past the bound.
    pub path_ends: Vec<paths::PathEnd>,
    pub path_ends_dropped: u64,
    /// When `path_inputs > 0`: each predicate instance opened (by its snapshot) and the
    /// chunks its body produced, so that values folded inside the entry state's
    /// instances are read back into inputs (`paths.rs`).
    pub opened: Vec<(Term, Vec<crate::state::chunk::Chunk>)>,
    /// The goal whose refutation is failing the path now (`check`), so that the inputs
    /// solved for the failed path violate it.
    pub failing_goal: Option<Term>,
    /// When `path_inputs > 0`: for each loop the current path went through, that its
    /// state at the loop head (or after the loop) is the state the loop was entered
    /// in (the invariant's snapshots and the assigned locals equal). Solved inputs
    /// prefer them: a path from the invariant's fresh state then starts from the
    /// entry state's values, which a run can reach (`paths.rs`).
    pub loop_links: Vec<Term>,
    pub stats: Counters,
    pub report: Reporting,
    pub nest: Nesting,
    pub made: Made,
    pub axioms: Axioms,
}

/// What the member's exploration counted (`--stats`) and how every path ended (the ledger).
pub struct Counters {
    /// Paths that reached the end of what was verified (a postcondition, the end of a
    /// pure body or predicate body) or a `join`.
    pub paths: u64,
    /// Paths that reached the end of the member (not counting joins).
    pub ends: u64,
    pub branches: u64,
    pub pruned: u64,
    /// Failures reported on loop sides explored without a feasibility query
    /// (`Verifier::is_lazy`, `Verifier::unchecked_depth`).
    pub unchecked_sides: u64,
    /// Operands evaluated under a guard without a feasibility query (`eval_guarded`).
    pub unchecked_guards: u64,
    pub chunks_max: u64,
    /// How every path ended.
    pub ledger: ledger::Ledger,
    /// `if` statements whose branches were explored in a join (merged or not), and
    /// how many of them merged into one state.
    pub if_joins: u64,
    pub merges: u64,
    /// Statement rules active on the Rust stack now, and at most so far: with the
    /// trampoline of `exec_seq`, straight-line code does not add to it.
    pub exec_depth: u64,
    pub exec_depth_max: u64,
    /// Axiom instances of pure methods' definitions and postconditions assumed on this
    /// member's paths (`--stats`; one per instance and path that assumed it).
    pub axiom_instances: u64,
}

/// What failures report: the failures so far, the conjunct being consumed, the failing
/// path's trace, the statements some path reached (`--smoke`), the refinement under way.
pub struct Reporting {
    /// The `return` that ended the current path, set just before the method's return
    /// continuation runs (which takes it at once); `None` at the end of the body.
    pub exit: Option<Span>,
    /// While a method's postcondition is consumed: where its path left the body (a
    /// secondary label of a `postcondition.violated` failure).
    pub post_note: Option<(Span, String)>,
    pub failures: Vec<Failure>,
    /// The span of the conjunct being consumed, for `Mode::Consume`.
    pub conjunct: Span,
    /// The text of that conjunct, for messages.
    pub conjunct_text: String,
    /// The refinement check under way, if any.
    pub refining: Option<Refinement>,
    /// The failing path so far (for `--trace`).
    pub trace: Vec<TraceEntry>,
    /// The `assert` and `return` statements some path reached (for `--smoke`).
    pub reached: std::collections::HashSet<Span>,
}

/// An instance opened by an `opening` expression: its predicate (of the receiver's
/// class), receiver, arguments and snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    pub snap: Term,
    pub pred: crate::syntax::ast::MemberRef,
    pub recv: Option<Term>,
    pub args: std::rc::Rc<[Term]>,
}

/// The modes and nesting counters that rules set around their continuations: the
/// trampoline of `exec_seq` saves and compares them as one unit (`Scope`).
#[derive(Clone, PartialEq)]
pub struct Nesting {
    pub mode: Mode,
    /// While consuming a pure call's precondition inside a consumed assertion, the
    /// failing conjunct stays the outer assertion's.
    pub conjunct_frozen: bool,
    pub(in crate::rules) tag: u32,
    /// Nesting of pure-call preconditions being evaluated.
    pub pre_depth: u32,
    /// Opens in progress (an open producing a body that opens again).
    pub open_nesting: u32,
    /// The instances opened by the explicit `opening` expressions around the current
    /// evaluation, innermost last (termination rules (2) and (3)).
    pub openings: Vec<Opened>,
    /// Nesting of inferred closes, bounded.
    pub close_depth: u32,
}

/// What the member has made so far (on any path): fresh symbols and when each was born,
/// objects allocated by `new`, the references chunks held, tags.
pub struct Made {
    pub(in crate::rules) next_tag: u32,
    pub(in crate::rules) fresh: HashMap<String, u32>,
    /// A name for the next object `new` allocates (the local it is assigned to).
    pub name_hint: Option<String>,
    /// Objects allocated by `new` so far (any path), each numbered by `alloc#`.
    pub allocated: crate::state::term::TermSet,
    /// The references chunks held so far (any path), for `new` (`note_ref`).
    pub chunk_refs: Vec<Term>,
    /// For each of them, how many objects had been allocated when it was first noted.
    pub(in crate::rules) chunk_refs_seen: crate::state::term::TermMap<Term, usize>,
    /// The objects allocated so far (any path), each with its symbol's birth.
    pub allocations: Vec<(Term, u64)>,
    /// When each fresh symbol was made (a counter over the member): a reference built
    /// only from symbols older than an allocated object denotes an object that existed
    /// before it, so not that one.
    pub(in crate::rules) births: crate::state::term::TermMap<Term, u64>,
    /// The values a loop gives the locals it assigns and its invariants do not
    /// mention, by the local's name: a message about one says why it is unknown.
    pub(in crate::rules) unconstrained: crate::state::term::TermMap<Term, String>,
}

/// Pure methods' definitions (translated by the translator) and the axiom instances
/// assumed on the current path.
pub struct Axioms {
    /// The definitions of pure methods translated so far.
    pub defs: definition::Defs,
    /// This verifier translates definitions (it never translates on demand).
    pub translating: bool,
    /// The pure method being translated (by the translator).
    pub target: Option<crate::syntax::ast::MemberRef>,
    /// Applications whose axioms are assumed on the current path, with the fuel used
    /// (`body` tells whether the body axioms were included), and the log to undo
    /// that when a frame is left.
    pub(in crate::rules) instantiated: crate::state::term::TermMap<(Term, u8), u32>,
    pub(in crate::rules) inst_log: Vec<((Term, u8), Option<u32>)>,
    /// Applications met so far (any path), by snapshot, for `after_ghost`.
    pub(in crate::rules) apps_by_snap: crate::state::term::TermMap<Term, Vec<Term>>,
    pub(in crate::rules) recorded: crate::state::term::TermSet,
    /// Instantiations so far (bounded by `definition::MAX_INSTANCES`).
    pub(in crate::rules) instances: u64,
    /// Applications to values alone unrolled past the fuel so far (bounded by
    /// `definition::MAX_LITERAL`).
    pub(in crate::rules) literal: u64,
}

/// When less than this much stack is left, the rules continue on a new segment.
pub const STACK_RED_ZONE: usize = 1 << 20;
/// The size of each new stack segment.
pub const STACK_SEGMENT: usize = 64 << 20;

/// Bound on nested evaluations of pure-call preconditions.
pub const MAX_PRE_DEPTH: u32 = 32;
/// Bound on opens nested inside the production of an opened body.
pub const MAX_NESTED_OPENS: u32 = 6;
/// Bound on nested inferred closes.
pub const MAX_CLOSE: u32 = 4;
/// Bound on nested inferred opens for one access.
pub const MAX_OPEN: u32 = 4;

use crate::state::term::Elem;

pub fn sort_of(ty: &Type) -> Sort {
    match ty {
        Type::Int => Sort::Int,
        Type::Bool => Sort::Bool,
        Type::Perm => Sort::Perm,
        // A sequence sort per element sort (LANGUAGE.md section 14); nesting beyond
        // 255 levels cannot be written within the parser's depth bound.
        Type::Seq(t) => sort_of(t).seq_of().unwrap_or(Sort::Seq(Elem::Int, 1)),
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

/// The error ids of checks that an expression is defined (not of what the program
/// asserts).
const WELLDEFINEDNESS: [&str; 5] = [
    "receiver.null",
    "index.out.of.bounds",
    "division.by.zero",
    "negative.permission",
    "not.wellformed",
];

impl<'p> Verifier<'p> {
    pub fn new(prog: &'p Program, info: &'p Info, config: Config) -> Verifier<'p> {
        let timeout = config.timeout.map(std::time::Duration::from_secs_f64);
        let defs = info.defs[usize::from(config.infer)].clone();
        Verifier {
            prog,
            member: None,
            info,
            dec: {
                let mut d = Decider::new(timeout);
                d.set_rlimit(config.rlimit);
                d.set_interrupt(config.interrupt.clone());
                d.stop_when_exhausted = true;
                d
            },
            config,
            local_types: HashMap::new(),
            termination: None,
            last_opened: None,
            pure_check: None,
            closes: 0,
            timed_out: false,
            watch: HashMap::new(),
            quant_spans: HashMap::new(),
            flat_ifs: std::collections::HashSet::new(),
            scale: Term::write(),
            read_mode: false,
            no_bounds: false,
            perm_view: None,
            call_post: false,
            measuring: None,
            entry_measure: None,
            perm_unknown: false,
            path_inputs: 0,
            lazy: true,
            unchecked_depth: 0,
            quant_vars: vec![],
            path_ends: Vec::new(),
            path_ends_dropped: 0,
            opened: Vec::new(),
            failing_goal: None,
            loop_links: Vec::new(),
            stats: Counters {
                paths: 0,
                branches: 0,
                pruned: 0,
                unchecked_sides: 0,
                unchecked_guards: 0,
                chunks_max: 0,
                ends: 0,
                ledger: ledger::Ledger::default(),
                if_joins: 0,
                merges: 0,
                exec_depth: 0,
                exec_depth_max: 0,
                axiom_instances: 0,
            },
            report: Reporting {
                exit: None,
                post_note: None,
                failures: Vec::new(),
                conjunct: Span::default(),
                conjunct_text: String::new(),
                refining: None,
                trace: Vec::new(),
                reached: std::collections::HashSet::new(),
            },
            nest: Nesting {
                mode: Mode::Stmt,
                conjunct_frozen: false,
                tag: 0,
                pre_depth: 0,
                open_nesting: 0,
                openings: Vec::new(),
                close_depth: 0,
            },
            made: Made {
                next_tag: 1,
                fresh: HashMap::new(),
                name_hint: None,
                allocated: Default::default(),
                chunk_refs: Vec::new(),
                chunk_refs_seen: Default::default(),
                allocations: Vec::new(),
                births: Default::default(),
                unconstrained: Default::default(),
            },
            axioms: Axioms {
                defs,
                translating: false,
                target: None,
                instantiated: Default::default(),
                inst_log: Vec::new(),
                apps_by_snap: Default::default(),
                recorded: Default::default(),
                instances: 0,
                literal: 0,
            },
        }
    }

    /// A fresh symbol named after `base` (`x@3`).
    pub fn fresh(&mut self, base: &str, sort: Sort) -> Term {
        let n = self.made.fresh.entry(base.to_string()).or_insert(0);
        *n += 1;
        let t = Term::var(&format!("{base}@{n}"), sort);
        let birth = self.made.births.len() as u64 + 1;
        self.made.births.insert(t.clone(), birth);
        t
    }

    /// The birth of the youngest fresh symbol in `t` (0 when it has none: `this`,
    /// parameters and constants exist before anything the member makes).
    pub fn birth(&self, t: &Term) -> u64 {
        t.symbols().iter().filter_map(|x| self.made.births.get(x).copied()).max().unwrap_or(0)
    }

    /// Should this path stop because the member ran out of time? When it says so,
    /// the path ends (as a timeout, in the ledger): the caller returns.
    pub fn stopped(&mut self) -> bool {
        if !self.timed_out && self.dec.out_of_time() {
            self.timed_out = true;
        }
        if self.timed_out {
            self.stats.ledger.timeout += 1;
            self.end_path(None, paths::PathEndKind::OutOfBudget);
        }
        self.timed_out
    }

    /// Record a failure at `span` (the offending expression) for `reason`, reported
    /// according to the current mode. The caller stops its path: in the ledger, the
    /// path ends as failed (or as pruned, when the path turns out infeasible).
    pub fn fail(&mut self, state: &State, span: Span, reason: &'static str, what: String) {
        if self.report(state, span, reason, what) {
            self.stats.ledger.failed += 1;
            if let Some(f) = self.report.failures.last() {
                let how = paths::PathEndKind::Failed { id: f.err.id, span: f.err.span };
                self.end_path(Some(state), how);
            }
        } else {
            self.stats.ledger.pruned += 1;
        }
    }

    /// Record a failure without ending a path (the path already ended: a tentative
    /// close whose own failures were taken back is reported once for them). False
    /// when the path is infeasible and nothing was recorded.
    pub fn report(
        &mut self,
        state: &State,
        span: Span,
        reason: &'static str,
        what: String,
    ) -> bool {
        if self.axioms.translating {
            // A translation's failures only leave its definition partial; the member's
            // own check reports them to the user.
            self.report.failures.push(Failure {
                tag: self.nest.tag,
                err: VerificationError::plain(reason, reason, String::new(), span),
            });
            return true;
        }
        // Producing a fact can make a path infeasible without a branch noticing
        // (`r != null ==> acc(r.val)` then `r != null`): a dead path has no failures.
        if !self.path_feasible() {
            return false;
        }
        if self.unchecked_depth > 0 {
            // On a loop's side taken without asking: the member is verified again
            // asking.
            self.stats.unchecked_sides += 1;
        }
        let (id, at, message, notes) = match self.nest.mode {
            Mode::Stmt => (reason, span, what, vec![]),
            Mode::WellFormed => ("not.wellformed", span, what, vec![]),
            Mode::Consume { id, call: None } => {
                let msg = format!("{}: {what}", show::describe(id, &self.report.conjunct_text));
                let notes = match &self.report.post_note {
                    Some(n) if id == "postcondition.violated" => vec![n.clone()],
                    _ => vec![],
                };
                (id, self.report.conjunct, msg, notes)
            }
            Mode::Consume { id: "override.unsound", call: Some(call) } => {
                let (msg, note) = match &self.report.refining {
                    Some(r) => (
                        format!(
                            "`{}` does not refine `{}`: {} conjunct `{}` might not hold: {what}",
                            r.class_member, r.iface_member, r.side, self.report.conjunct_text
                        ),
                        format!("{} conjunct `{}` fails here", r.side, self.report.conjunct_text),
                    ),
                    None => (
                        format!("`{}` might not hold: {what}", self.report.conjunct_text),
                        format!("the conjunct `{}` fails here", self.report.conjunct_text),
                    ),
                };
                ("override.unsound", call, msg, vec![(self.report.conjunct, note)])
            }
            Mode::Consume { id, call: Some(call) } => {
                let msg = format!("{}: {what}", show::describe(id, &self.report.conjunct_text));
                let note = if id == "close.failed" {
                    format!(
                        "the predicate body conjunct `{}` fails here",
                        self.report.conjunct_text
                    )
                } else {
                    format!("the callee's conjunct `{}` fails here", self.report.conjunct_text)
                };
                (id, call, msg, vec![(self.report.conjunct, note)])
            }
        };
        let trace = if self.config.trace {
            Some(self.trace_with_state(state, &format!("fails: {id}"), at))
        } else {
            None
        };
        self.report.failures.push(Failure {
            tag: self.nest.tag,
            err: VerificationError {
                id,
                reason,
                message,
                span: at,
                notes,
                trace,
                counterexample: None,
                entry: None,
                replay: None,
                fix: None,
            },
        });
        true
    }

    /// The source names `s` gives to terms (for messages).
    pub fn names(&self, s: &State) -> crate::rules::render::Names<'p> {
        let mut entry = vec![];
        if let Some(r) = self.member {
            let m = &self.prog.classes[r.class].members[r.member];
            if !m.is_static {
                entry.push("this".to_string());
            }
            entry.extend(m.params.iter().map(|p| p.name.name.clone()));
        }
        crate::rules::render::Names::new(self.prog, s, &entry)
    }

    /// Why a boolean check `t` of the conjunct `shown` failed, in source terms: its
    /// value computed from the member's inputs, when that says more than the conjunct.
    pub fn why_false(&self, s: &State, t: &Term, shown: &str) -> String {
        if t.is_false() {
            return "it is false on this path".to_string();
        }
        // Said the way the conjunct says it: `this.` and spaces aside, the same text
        // says nothing more.
        let squash = |x: &str| {
            x.replace("this.", "").chars().filter(|c| !c.is_whitespace()).collect::<String>()
        };
        let names = self.names(s);
        let read = |t: &Term| names.render(t).or_else(|| names.render_here(t));
        // A comparison the way round the conjunct writes it: `result > n` reads
        // `k + i > n`, not `n < k + i`.
        let (lt, le) = (shown.contains(" < ") || shown.contains(" <= "), shown.contains(" >= "));
        let flip = match t.op() {
            Op::Lt if shown.contains(" > ") && !lt => Some(">"),
            Op::Le if le && !lt => Some(">="),
            _ => None,
        };
        let flipped = flip.and_then(|op| {
            let a = t.args();
            Some(format!("{} {op} {}", read(&a[1])?, read(&a[0])?))
        });
        // `3 == y` is the conjunct `y == 3`, `5 != i` is `i != 5`.
        let swap = |t: &Term, op: &str| {
            let a = t.args();
            read(&a[1]).zip(read(&a[0])).map(|(b, a)| format!("{b} {op} {a}"))
        };
        let swapped = match t.op() {
            Op::Eq => swap(t, "=="),
            Op::Not if t.args()[0].op() == &Op::Eq => swap(&t.args()[0], "!="),
            _ => None,
        };
        if swapped.is_some_and(|w| squash(&w) == squash(shown)) {
            return "it might be false on this path".to_string();
        }
        let why = match flipped.or_else(|| read(t)) {
            Some(r) if squash(&r) != squash(shown) => {
                format!("on this path it reads `{r}`, which might be false")
            }
            _ => "it might be false on this path".to_string(),
        };
        format!("{why}{}", self.unconstrained_note(t))
    }

    /// `; `s` is changed by a loop ...` when `t` reads a value a loop gave a local its
    /// invariants do not mention (the usual reason such a check fails); else empty.
    pub fn unconstrained_note(&self, t: &Term) -> String {
        let mut locals: Vec<&String> =
            t.symbols().iter().filter_map(|x| self.made.unconstrained.get(x)).collect();
        locals.sort();
        locals.dedup();
        match locals.as_slice() {
            [] => String::new(),
            [x] => format!(
                "; `{x}` is changed by a loop whose invariants do not mention it, so nothing is known of its value there"
            ),
            xs => format!(
                "; {} are changed by a loop whose invariants do not mention them, so nothing is known of their values there",
                xs.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// Attach a counterexample to the most recent failure (a false boolean `goal`).
    pub fn attach_counterexample(&mut self, state: &State, goal: &Term) {
        if !self.config.counterexample || self.axioms.translating {
            return;
        }
        let cex = crate::rules::show::counterexample(self, state, goal);
        if let Some(f) = self.report.failures.last_mut()
            && let Some((lines, entry)) = cex
        {
            f.err.counterexample = Some(lines);
            f.err.entry = entry;
        }
    }

    /// Record a solver give-up on this path.
    pub fn fail_unknown(&mut self, state: &State, span: Span) {
        self.timed_out = self.timed_out || self.dec.out_of_time();
        let save = self.nest.mode;
        self.nest.mode = Mode::Stmt;
        let failures = self.report.failures.len();
        self.fail(
            state,
            span,
            "verification.timeout",
            "the solver gave up (unknown or timeout)".into(),
        );
        self.nest.mode = save;
        if self.report.failures.len() > failures
            && let Some(mut f) = self.report.failures.pop()
        {
            self.name_top_quantifier(&mut f.err);
            self.report.failures.push(f);
        }
    }

    /// Name in a timeout's message the quantifier the solver instantiated most in
    /// the first query it gave up on, with a note where the program writes it.
    pub fn name_top_quantifier(&self, e: &mut VerificationError) {
        let Some((name, n)) = self.dec.gave_up_on.as_ref().and_then(|v| v.first()) else {
            return;
        };
        e.message = format!(
            "{}: the quantifier instantiated most was {name} ({n} instance{} when the query was asked again with a quarter of its resource limit; a matching loop, whose instances make terms that match it again?)",
            e.message,
            if *n == 1 { "" } else { "s" }
        );
        if let Some(span) = self.quant_spans.get(name) {
            e.notes.push((
                *span,
                format!(
                    "the solver instantiated this quantifier {n} time{}",
                    if *n == 1 { "" } else { "s" }
                ),
            ));
        }
    }

    /// The quantifiers the solver instantiated most in this member's queries (with
    /// `Decider::count_instances`), most first.
    pub fn top_quantifiers(&mut self) -> Vec<crate::rules::result::QuantInstances> {
        self.dec
            .take_instances()
            .into_iter()
            .take(crate::rules::result::TOP_QUANTIFIERS)
            .map(|(name, instances)| crate::rules::result::QuantInstances {
                span: self.quant_spans.get(&name).copied(),
                name: name.to_string(),
                instances,
            })
            .collect()
    }

    /// Prove `goal`; on failure record it (with `reason`) and return false.
    #[track_caller]
    pub fn check(
        &mut self,
        state: &State,
        goal: &Term,
        span: Span,
        reason: &'static str,
        what: impl FnOnce() -> String,
    ) -> bool {
        self.check_with(state, goal, span, reason, |_| what())
    }

    /// [`Verifier::check`], with a message that may read the verifier (to name terms).
    #[track_caller]
    pub fn check_with(
        &mut self,
        state: &State,
        goal: &Term,
        span: Span,
        reason: &'static str,
        what: impl FnOnce(&Self) -> String,
    ) -> bool {
        if self.axioms.translating {
            // A translation takes the body as well-defined (the member's own check
            // reports where it is not): its axioms stay consistent either way, as
            // each holds under its own branch conditions. This spares the
            // translator's solver most queries.
            return true;
        }
        let mut answer = self.dec.prove(goal);
        // Not refuted but given up on at the instance limit (a matching loop): giving
        // up, as at the resource limit, only sooner; asked of the decider before
        // anything else is proved (it answers for the last `prove`).
        let capped = answer == Answer::Refuted && self.dec.gave_up_at_limit();
        if answer == Answer::Refuted
            && !capped
            && let Some(unfolded) = self.unfold_universal_goal(goal)
            && self.dec.prove(&unfolded) == Answer::Proved
        {
            answer = Answer::Proved;
        }
        match answer {
            Answer::Proved => {
                // Also an equation between sequences: the laws are quantifiers, which
                // the fact's terms can instantiate later (`assert s[2..] == t;` makes
                // `f(s[2..])` and `f(t)` one value through extensionality). Not every
                // check that reads a sequence (bounds, lengths): each fact kept is
                // carried by every later query.
                let seq_equation = |t: &Term| {
                    *t.op() == Op::Eq && t.args().iter().any(|a| matches!(a.sort(), Sort::Seq(..)))
                };
                // Not a well-definedness check (an index in bounds) inside a
                // quantifier's body about its bound variables: kept, it becomes a
                // quantified fact over the body's triggers, instantiated again with
                // every instance of them (binary search's sortedness, n² pairs), and
                // it says nothing the path lacks.
                let under_binder = WELLDEFINEDNESS.contains(&reason)
                    && !self.quant_vars.is_empty()
                    && goal.symbols().iter().any(|x| self.quant_vars.contains(x));
                if (self.dec.quantified && !under_binder)
                    || !goal.nodes_where(seq_equation).is_empty()
                {
                    self.dec.assume(goal.clone());
                }
                true
            }
            Answer::Refuted if capped => {
                self.fail_unknown(state, span);
                false
            }
            Answer::Refuted => {
                let what = what(self);
                if self.path_inputs > 0 {
                    self.failing_goal = Some(goal.clone());
                }
                self.fail(state, span, reason, what);
                self.failing_goal = None;
                if reason == "assertion.false"
                    || reason == "receiver.null"
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

    /// A Boolean pure method's application whose definition instance on the path is a
    /// universal quantifier (`allPos() = ∀ i :: .. itemAt(i) > 0`), as its body at
    /// fresh symbols, with the definitions of the applications there instantiated as at
    /// any ground application: proving it proves the goal (the symbols are fresh, the
    /// definitions hold for every value). The solver's own skolem constant for the
    /// quantifier would meet the applications' definitions only as quantified axioms,
    /// which a recursive method (`itemAt`, recursing into `next`) does not have.
    fn unfold_universal_goal(&mut self, goal: &Term) -> Option<Term> {
        self.unfold_positive(goal, 0)
    }

    /// `goal` with each such application in a positive position (a conjunct, a
    /// disjunct, a consequent, a branch of `?:`) unfolded at fresh symbols of its own:
    /// what the others say names none of them, so proving it proves `goal`.
    fn unfold_positive(&mut self, goal: &Term, depth: u32) -> Option<Term> {
        if depth > 32 {
            return None;
        }
        if let Op::App(_) = goal.op() {
            return self.unfold_application(goal);
        }
        goal.rebuild_positive(|a| self.unfold_positive(a, depth + 1))
    }

    /// The application `goal` unfolded at fresh symbols (see `unfold_universal_goal`).
    fn unfold_application(&mut self, goal: &Term) -> Option<Term> {
        let q = self.dec.quantifier_of(goal, true)?;
        let (vars, _, body) = q.quant_parts();
        let mut map = TermMap::default();
        for v in vars {
            let Op::Var(n, sort) = v.op() else { return None };
            let base = n.split('@').next().unwrap_or(n).to_string();
            map.insert(v.clone(), self.fresh(&base, *sort));
        }
        let instance = body.substitute(&map);
        for a in instance.apps() {
            self.instantiate(&a, crate::rules::definition::FUEL, true, 0);
        }
        Some(instance)
    }

    /// Check the body of pure method `r` from state `s` (its precondition produced):
    /// its `decreases` measure, if any, is evaluated first, there, as Viper evaluates
    /// it (well-defined under the precondition, `not.wellformed` otherwise; calls in the
    /// body compare with this value, not with one at the call, where an `opening`
    /// around it changed the heap); then `q` runs with termination checking on.
    pub fn with_entry_measure(
        &mut self,
        r: crate::syntax::ast::MemberRef,
        s: State,
        q: Q<'_, 'p, ()>,
    ) {
        let m = &self.prog.classes[r.class].members[r.member];
        let Some(dt) = m.decreases.first() else {
            let outer = (self.entry_measure.take(), self.termination.replace(r));
            q(self, s, ());
            (self.entry_measure, self.termination) = outer;
            return;
        };
        let outer = self.measuring.replace(r);
        // The body starts from the state before: an instance the measure's evaluation
        // opened by inference (to read `d` through `valid()`) is still closed there.
        let entry = s.clone();
        self.eval(s, dt, &|v, _, t| {
            let measuring = std::mem::replace(&mut v.measuring, outer);
            let saved = (v.entry_measure.replace(t), v.termination.replace(r));
            q(v, entry.clone(), ());
            (v.entry_measure, v.termination) = saved;
            v.measuring = measuring;
        });
        self.measuring = outer;
    }

    /// Run `f` with a different reporting mode.
    pub fn with_mode<R>(&mut self, mode: Mode, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved =
            (self.nest.mode, self.report.conjunct, std::mem::take(&mut self.report.conjunct_text));
        self.nest.mode = mode;
        let r = f(self);
        self.nest.mode = saved.0;
        self.report.conjunct = saved.1;
        self.report.conjunct_text = saved.2;
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
            self.stats.pruned += 1;
            if !then_ok && !else_ok {
                // Neither side is feasible: the path itself is.
                self.stats.ledger.pruned += 1;
            }
        } else {
            self.stats.branches += 1;
            self.stats.ledger.started += 1;
        }
        match (then_ok, else_ok) {
            (true, true) => {
                self.in_frame(|v| {
                    v.dec.assume_branch(cond.clone());
                    then(v, state.clone(), ())
                });
                self.in_frame(|v| {
                    v.dec.assume_branch(neg.clone());
                    els(v, state, ())
                });
            }
            // One side: the path goes on in this frame (its condition follows from
            // the path condition), so code after it runs flat (`exec_seq`).
            (true, false) => {
                self.dec.assume_branch(cond);
                then(self, state, ())
            }
            (false, true) => {
                self.dec.assume_branch(neg);
                els(self, state, ())
            }
            (false, false) => {}
        }
    }

    /// As `branch`, for an `els` that only ends its path (another part of the rule
    /// covers that side, as a loop's body check and the code after the loop cover each
    /// other's side of the condition): when `cond` can hold, `then` goes on under it and
    /// the other side is not asked about (one feasibility query instead of two: both
    /// sides of a loop's condition usually can hold, and each query reads every
    /// quantified fact of the path). Only when `cond` cannot hold does `els` run.
    pub fn branch_then(
        &mut self,
        state: State,
        cond: Term,
        then: Q<'_, 'p, ()>,
        els: Q<'_, 'p, ()>,
    ) {
        if self.stopped() {
            return;
        }
        let decided = cond.is_true()
            || cond.is_false()
            || self.dec.known(&cond)
            || self.dec.known(&Term::not(cond.clone()));
        // Lazily: whether a loop's side can be taken is not asked (it almost always
        // can, and the solver takes longest to say so: every quantifier instantiated
        // until nothing new matches). A side that cannot is then explored on a
        // contradictory path, where checks hold; a failure there is reported only if
        // the path is feasible, and a member that fails is verified again without
        // laziness, so what solver incompleteness could make of such a path never
        // reaches the user.
        if !decided && self.is_lazy() {
            self.dec.assume_branch(cond);
            self.unchecked_depth += 1;
            then(self, state, ());
            self.unchecked_depth -= 1;
            return;
        }
        if !decided && (self.dec.independent(&cond) || self.feasible(&cond)) {
            // The side not taken would have ended at once: neither started nor ended.
            self.dec.assume_branch(cond);
            return then(self, state, ());
        }
        // Decided, or `cond` shown infeasible (remembered: `branch` asks nothing more).
        self.branch(state, cond, then, els)
    }

    /// Whether a side whose feasibility is unknown is explored without asking
    /// (`lazy`): not under `--smoke` (whether a path can be taken is then the
    /// question) nor when testing (a path end needs inputs that reach it).
    pub fn is_lazy(&self) -> bool {
        self.lazy && !self.config.smoke && self.path_inputs == 0
    }

    /// Is this path's condition satisfiable? (`unknown` counts as satisfiable.)
    #[track_caller]
    pub fn path_feasible(&mut self) -> bool {
        self.dec.check(&Term::tt()) != crate::decider::Sat::Unsat
    }

    /// Can `cond` hold on this path? (`unknown` counts as feasible.)
    #[track_caller]
    pub fn feasible(&mut self, cond: &Term) -> bool {
        match self.feasible_by_syntax(cond) {
            Some(answer) => answer,
            None => self.dec.check(cond) != crate::decider::Sat::Unsat,
        }
    }

    /// Whether `cond` can hold on this path, when that is decided without the solver.
    pub fn feasible_by_syntax(&self, cond: &Term) -> Option<bool> {
        if self.dec.assumed(cond) || self.dec.independent(cond) {
            return Some(true);
        }
        self.dec.unary_feasible(cond)
    }

    /// Run `f` inside a solver frame (and a trace frame).
    pub fn in_frame<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.dec.push();
        let trace_len = self.report.trace.len();
        let inst_len = self.axioms.inst_log.len();
        let r = f(self);
        self.report.trace.truncate(trace_len);
        let undo: Vec<_> = self.axioms.inst_log.drain(inst_len..).rev().collect();
        for (key, prev) in undo {
            match prev {
                Some(k) => self.axioms.instantiated.insert(key, k),
                None => self.axioms.instantiated.remove(&key),
            };
        }
        self.dec.pop();
        r
    }

    /// Explore `run` in a pushed frame and return its leaves: for each path that
    /// reached the inner continuation, the entries (branch conditions, facts) assumed
    /// on the way, as far as they differ from the previous leaf's (`JoinLeaf`), and
    /// the value passed. The caller re-assumes what it needs. Each leaf ends its path
    /// as merged; a caller that goes on after the join starts one path.
    pub fn join<T: Clone>(
        &mut self,
        run: &dyn Fn(&mut Verifier<'p>, Leafer<'_, 'p, T>),
    ) -> Vec<JoinLeaf<T>> {
        let leaves: RefCell<Vec<JoinLeaf<T>>> = RefCell::new(Vec::new());
        // The previous leaf's entries since the join started.
        let path: RefCell<Vec<crate::decider::PcEntry>> = RefCell::new(Vec::new());
        self.in_frame(|v| {
            let mark = v.dec.mark();
            let slot = v.dec.watch_low();
            run(v, &|v: &mut Verifier<'p>, value: T| {
                // Entries below the least length the path condition had since the
                // previous leaf are that leaf's: not popped since.
                let low = v.dec.take_low(slot);
                let mut path = path.borrow_mut();
                let shared = low.saturating_sub(mark).min(path.len());
                let parted = path.get(shared).cloned();
                path.truncate(shared);
                let own = v.dec.entries_since(mark + shared).to_vec();
                path.extend(own.iter().cloned());
                v.stats.ledger.merged += 1;
                leaves.borrow_mut().push(JoinLeaf { shared, parted, own, value });
            });
            v.dec.unwatch(slot);
        });
        leaves.into_inner()
    }

    /// Assume each leaf's facts, guarded by its branch conditions (axiom instances
    /// unguarded: they hold on every path).
    pub fn assume_leaf_facts<T>(&mut self, leaves: &[Leaf<T>]) {
        let mut seen = std::collections::HashSet::new();
        for l in leaves {
            for a in &l.axioms {
                if seen.insert(a.clone()) {
                    self.dec.assume_axiom(a.clone());
                }
            }
            let guard = Term::and_all(l.conds.clone());
            for f in &l.facts {
                let t = Term::implies(guard.clone(), f.clone());
                if seen.insert(t.clone()) {
                    self.dec.assume(t);
                }
            }
            for f in &l.derived {
                // A fact true in every state needs no guard (a guard would make its
                // symbols look constrained: `rules::eval::bounds_fresh`).
                let t = if f.is_valid_fact() {
                    f.clone()
                } else {
                    Term::implies(guard.clone(), f.clone())
                };
                if seen.insert(t.clone()) {
                    self.dec.assume_derived(t);
                }
            }
        }
    }

    /// Start tentative work: failures recorded until `end_tentative` can be taken back.
    pub fn begin_tentative(&mut self) -> (u32, usize) {
        let saved = self.nest.tag;
        self.nest.tag = self.made.next_tag;
        self.made.next_tag += 1;
        (saved, self.report.failures.len())
    }
    /// The tag of the current tentative work, to restore it around continuations.
    pub fn current_tag(&self) -> u32 {
        self.nest.tag
    }
    pub fn set_tag(&mut self, tag: u32) {
        self.nest.tag = tag;
    }
    /// End tentative work: remove and return the failures it recorded.
    pub fn end_tentative(&mut self, saved: (u32, usize)) -> Vec<VerificationError> {
        let tag = self.nest.tag;
        self.nest.tag = saved.0;
        let mut taken = vec![];
        let mut kept = vec![];
        for f in self.report.failures.drain(saved.1..) {
            if f.tag == tag { taken.push(f.err) } else { kept.push(f) }
        }
        self.report.failures.extend(kept);
        taken
    }

    pub fn note_heap_size(&mut self, state: &State) {
        self.stats.chunks_max = self.stats.chunks_max.max(state.heap.len() as u64);
    }

    /// Append a trace entry for the current path (when tracing).
    pub fn trace_step(&mut self, state: &State, what: impl FnOnce() -> String, span: Span) {
        self.note_heap_size(state);
        if !self.config.trace || self.axioms.translating {
            return;
        }
        let e = self.trace_with_state(state, &what(), span);
        self.report.trace = e;
    }

    fn trace_with_state(&self, state: &State, what: &str, span: Span) -> Vec<TraceEntry> {
        let mut t = self.report.trace.clone();
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
            store: state
                .store
                .iter()
                .map(|(k, v)| match self.class_label(v) {
                    Some(c) => format!("{k} ↦ {v} : {c}"),
                    None => format!("{k} ↦ {v}"),
                })
                .collect(),
            heap: state.heap.iter().map(|c| c.to_string()).collect(),
            path_condition: pc,
        });
        t
    }
}
