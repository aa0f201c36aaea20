//! The concrete interpreter: runs `.jv` programs on concrete values and checks at run
//! time what the verifier checks statically (LANGUAGE.md sections 3-8), with the same
//! error ids and positions, so that a concrete failure of a verified member refutes
//! the verdict (King's commutativity: issue 11).
//!
//! Architecture invariant: this module imports only `syntax` (and the checked program
//! `check` produces), never `rules`, `state`, `decider` or `verify`: it is the
//! independent opinion. It never panics on a checked program: every way a run ends is
//! an [`Outcome`], and step and depth budgets turn non-termination into
//! [`Outcome::OutOfSteps`], never into a verdict.
//!
//! Layout: `value` (values, heap, field layout), `perm` (bags of permissions and
//! predicate instances), `error` (how failures get their ids), `eval` (expressions and
//! pure calls), `assertion` (consume and produce), `exec` (statements, calls, loops,
//! ghost statements), `inputs` (random input states for a member).
//!
//! Semantics in brief: each activation holds a [`perm::Bag`]. A call consumes the
//! callee's precondition from the caller's bag into the callee's, runs the body, and
//! consumes the postcondition back. Inference (LANGUAGE.md section 6) is maximal and
//! exact rather than bounded: reads look through held predicate instances, writes and
//! consumes open the instances that hold a location, and consuming a missing instance
//! closes it when its body can be consumed. Predicates are recursive assertions over
//! the concrete heap, pure methods run their bodies.

mod assertion;
pub mod error;
mod eval;
mod exec;
pub mod inputs;
pub mod perm;
mod quant;
pub mod rat;
pub mod repair;
pub mod value;

pub use error::Failure;
pub use inputs::Inputs;
pub use value::{Heap, ObjId, Object, Value};

use crate::syntax::ast::{Body, MemberKind, MemberRef, Program, Span};
use error::{Ctx, R, Stop};
use perm::Bag;
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;
use value::Layout;

/// How a concrete run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every check passed.
    Passed,
    /// A check failed; `Failure::member` is the activation it failed in.
    Failed(Failure),
    /// The inputs do not satisfy the member's precondition.
    Rejected(String),
    /// The step or depth budget ran out: no verdict.
    OutOfSteps,
}

/// Budgets of one run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Statements and expression nodes evaluated.
    pub steps: u64,
    /// Nesting of calls, pure calls, predicate bodies and expressions.
    pub depth: u32,
    /// The largest array `new T[n]` may allocate.
    pub max_array: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { steps: 1_000_000, depth: 20_000, max_array: 1_000_000 }
    }
}

/// The heap and permissions on entry to an activation, for `old` and `untouched`.
#[derive(Clone, Debug)]
pub(crate) struct Old {
    pub heap: Heap,
    pub bag: Bag,
}

/// Locals, parameters, `this` and `result` of an activation.
pub(crate) type Locals = HashMap<String, Value>;

/// What evaluation reads: a heap, the permissions it may read through, the locals,
/// and the entry state for `old`.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'a> {
    pub heap: &'a Heap,
    pub view: &'a [&'a Bag],
    pub locals: &'a Locals,
    pub old: Option<&'a Old>,
    /// Where `perm(..)` reads amounts when it is not the view: what is left of the
    /// state an assertion is being consumed from (LANGUAGE.md section 11).
    pub pview: Option<&'a Bag>,
}

impl<'a> Cx<'a> {
    /// The same locals evaluated in the entry state `old` (`view` is `[&old.bag]`):
    /// what `old(..)` and `untouched(..)` read.
    pub fn in_old(&self, old: &'a Old, view: &'a [&'a Bag]) -> Cx<'a> {
        Cx { heap: &old.heap, view, locals: self.locals, old: self.old, pview: None }
    }
}

/// One activation of a method or constructor.
pub(crate) struct Frame {
    pub member: MemberRef,
    pub locals: Locals,
    /// `this` and the parameters as the caller passed them: the postcondition speaks
    /// of these even when the body assigns to a parameter.
    pub entry: Locals,
    pub bag: Bag,
    pub old: Option<Rc<Old>>,
}

pub(crate) struct Interp<'p> {
    pub prog: &'p Program,
    pub layout: std::sync::Arc<Layout>,
    pub heap: Heap,
    pub limits: Limits,
    steps: Rc<Cell<u64>>,
    depth: Rc<Cell<u32>>,
    /// Per member: does its activation need its entry state (`old`, `untouched`)?
    needs_old: std::sync::Arc<HashMap<MemberRef, bool>>,
    /// The pure calls (member, receiver and arguments) whose `ensures` is being
    /// checked: a call met again inside is not checked again (`eval::checked_ensures`).
    pub(crate) checking: std::cell::RefCell<Vec<EnsuresKey>>,
    /// The predicate instances being produced or closed, outermost first: meeting one
    /// again inside its own unfolding (`predicate loop() { return loop(); }`, or two
    /// that hold each other) would never end (`assertion::unfolding`).
    pub(crate) unfolding: std::cell::RefCell<Vec<(MemberRef, Vec<Value>)>>,
    /// The pure bodies being run, innermost last, with their termination measures
    /// (LANGUAGE.md section 15); `None` while something else runs inside one (a
    /// callee's precondition, an `ensures`), whose calls are not the body's.
    pub(crate) pure_stack: std::cell::RefCell<Vec<Option<PureBody>>>,
    /// Per pure method: the pure methods its body calls.
    pub(crate) calls: std::sync::Arc<HashMap<MemberRef, Vec<MemberRef>>>,
    /// While the member's own precondition is produced from the input state: the
    /// first false fact proposes a change of the input that makes it hold
    /// (`repair`), kept in `repair`.
    pub(crate) repairing: Cell<bool>,
    pub(crate) repair: std::cell::RefCell<Option<repair::Repair>>,
}

/// What every run of a program's members needs of the whole program, computed once
/// per checked program (`Program::memo`): a run costs what it executes, not the
/// program's size.
struct Facts {
    layout: std::sync::Arc<Layout>,
    needs_old: std::sync::Arc<HashMap<MemberRef, bool>>,
    calls: std::sync::Arc<HashMap<MemberRef, Vec<MemberRef>>>,
}

impl Facts {
    fn of(prog: &Program) -> std::sync::Arc<Facts> {
        prog.memo.get_or_init(|| Facts::new(prog))
    }

    fn new(prog: &Program) -> Facts {
        let mut needs_old = HashMap::new();
        let mut calls = HashMap::new();
        for (ci, class) in prog.classes.iter().enumerate() {
            for (mi, m) in class.members.iter().enumerate() {
                if let (MemberKind::Pure, Body::Return(b)) = (m.kind, &m.body) {
                    let mut out = vec![];
                    b.any(&mut |e| {
                        if let crate::syntax::ast::ExprKind::Call { target: Some(t), .. } = &e.kind
                        {
                            out.push(*t);
                        }
                        false
                    });
                    calls.insert(MemberRef { class: ci, member: mi }, out);
                }
                let mut uses = m.ensures.iter().any(value::mentions_old);
                if let Body::Block(b) = &m.body {
                    uses |= exec::stmts_mention_old(&b.stmts);
                }
                needs_old.insert(MemberRef { class: ci, member: mi }, uses);
            }
        }
        Facts {
            layout: std::sync::Arc::new(Layout::new(prog)),
            needs_old: std::sync::Arc::new(needs_old),
            calls: std::sync::Arc::new(calls),
        }
    }
}

/// A pure body being run and the value of its measure (`decreases`), if it has one.
pub(crate) type PureBody = (MemberRef, Option<num_bigint::BigInt>);

/// A pure call whose `ensures` is being checked: the member and its locals, sorted.
pub(crate) type EnsuresKey = (MemberRef, Vec<(String, Value)>);

/// Leaves one level of nesting when dropped.
pub(crate) struct DepthGuard(Rc<Cell<u32>>);

impl Drop for DepthGuard {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

/// Below this much free stack, grow it on the heap (as the verifier's rules do).
const RED_ZONE: usize = 128 * 1024;
const SEGMENT: usize = 4 * 1024 * 1024;

pub(crate) fn grow<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

impl<'p> Interp<'p> {
    pub fn new(prog: &'p Program, heap: Heap, limits: Limits) -> Interp<'p> {
        let facts = Facts::of(prog);
        Interp {
            prog,
            layout: facts.layout.clone(),
            heap,
            limits,
            steps: Rc::new(Cell::new(0)),
            depth: Rc::new(Cell::new(0)),
            needs_old: facts.needs_old.clone(),
            checking: Default::default(),
            unfolding: Default::default(),
            pure_stack: Default::default(),
            calls: facts.calls.clone(),
            repairing: Cell::new(false),
            repair: Default::default(),
        }
    }

    /// Count one step; `OutOfSteps` past the budget.
    pub fn tick(&self) -> R<()> {
        let n = self.steps.get() + 1;
        self.steps.set(n);
        if n > self.limits.steps { Err(Stop::OutOfSteps) } else { Ok(()) }
    }

    /// Count `n` steps at once.
    pub fn tick_n(&self, n: u64) -> R<()> {
        let total = self.steps.get().saturating_add(n);
        self.steps.set(total);
        if total > self.limits.steps { Err(Stop::OutOfSteps) } else { Ok(()) }
    }

    /// Enter one level of nesting; `OutOfSteps` past the depth budget.
    pub fn enter(&self) -> R<DepthGuard> {
        let d = self.depth.get() + 1;
        if d > self.limits.depth {
            return Err(Stop::OutOfSteps);
        }
        self.depth.set(d);
        Ok(DepthGuard(self.depth.clone()))
    }

    pub fn member(&self, m: MemberRef) -> Option<&'p crate::syntax::ast::Member> {
        self.prog.classes.get(m.class).and_then(|c| c.members.get(m.member))
    }

    /// Is `m` a member of an interface (a signature without a body)?
    pub fn is_abstract(&self, m: MemberRef) -> bool {
        self.layout.is_interface.get(m.class).copied().unwrap_or(false)
    }

    /// Dynamic dispatch (LANGUAGE.md section 10): the member of the receiver's class
    /// that a call of the interface member `m` on `recv` runs (a predicate family's
    /// instance for that class). `m` itself when it is a class's member; `None` when
    /// the receiver is not an object of a class that has such a member.
    pub fn dispatch(&self, heap: &Heap, m: MemberRef, recv: Option<&Value>) -> Option<MemberRef> {
        if !self.is_abstract(m) {
            return Some(m);
        }
        let name = &self.member(m)?.name.name;
        let ci = Layout::class_of(heap, recv?)?;
        if self.layout.is_interface.get(ci).copied().unwrap_or(true) {
            return None;
        }
        let mi = self.prog.classes[ci].members.iter().position(|x| {
            &x.name.name == name && x.kind != crate::syntax::ast::MemberKind::Field
        })?;
        Some(MemberRef { class: ci, member: mi })
    }

    pub fn needs_old(&self, m: MemberRef) -> bool {
        self.needs_old.get(&m).copied().unwrap_or(true)
    }

    /// The locals a member's contract or body starts with: `this` and its parameters.
    pub fn callee_locals(&self, m: MemberRef, this: Option<Value>, args: &[Value]) -> Locals {
        let mut locals = Locals::new();
        if let Some(t) = this {
            locals.insert("this".into(), t);
        }
        if let Some(mem) = self.member(m) {
            for (p, a) in mem.params.iter().zip(args) {
                locals.insert(p.name.name.clone(), a.clone());
            }
        }
        locals
    }

    /// Run one member from an input state.
    fn run(&mut self, member: MemberRef, inputs: &Inputs) -> R<()> {
        let Some(m) = self.member(member) else {
            return Err(Stop::Rejected("no such member".into()));
        };
        if m.params.len() != inputs.args.len() {
            return Err(Stop::Rejected("wrong number of inputs".into()));
        }
        if self.is_abstract(member) {
            return Err(Stop::Rejected("an interface's member has no body to run".into()));
        }
        let mut bag = Bag::default();
        let this = match m.kind {
            MemberKind::Constructor => {
                let o = self.heap.alloc(self.layout.new_object(member.class));
                for slot in 0..self.layout.field_types[member.class].len() {
                    bag.add(perm::Loc::Field(o, slot), &rat::Rat::one());
                }
                Some(Value::Ref(o))
            }
            _ if m.is_static => None,
            _ => match &inputs.this {
                Some(Value::Ref(o)) if *o < self.heap.objects.len() => Some(Value::Ref(*o)),
                _ => return Err(Stop::Rejected("`this` must be an object".into())),
            },
        };
        let mut locals = self.callee_locals(member, this, &inputs.args);
        match m.kind {
            MemberKind::Field => Ok(()),
            MemberKind::Predicate => {
                let Body::Return(body) = &m.body else { return Ok(()) };
                let heap = self.heap.clone();
                self.produce(&heap, body, &mut bag, &[], &locals)
                    .map_err(|e| e.not_wellformed(member))
            }
            MemberKind::Pure => {
                let heap = self.heap.clone();
                let this = locals.get("this").cloned();
                let own = self
                    .produce_all(&heap, &m.requires, &mut bag, &locals)
                    .map_err(|e| e.not_wellformed(member));
                if let Err(Stop::Rejected(why)) = own {
                    // The interface's precondition may hold where the class's does not.
                    self.refines(member, &heap, this, &inputs.args)?;
                    return Err(Stop::Rejected(why));
                }
                own?;
                let Body::Return(body) = &m.body else { return Ok(()) };
                let view = [&bag];
                let cx = Cx { heap: &heap, view: &view, locals: &locals, old: None, pview: None };
                let measure = self.measure(&cx, member)?;
                let r = self
                    .in_pure(Some((member, measure)), || self.eval(&cx, body))
                    .map_err(|e| e.not_wellformed(member))?;
                locals.insert("result".into(), r);
                let cx = Cx { heap: &heap, view: &view, locals: &locals, old: None, pview: None };
                let ctx = Ctx { id: "postcondition.violated", call: None };
                self.check_all(&cx, &m.ensures)
                    .map(|_| ())
                    .map_err(|e| e.in_assertion(ctx, member))?;
                self.refines(member, &heap, this, &inputs.args)
            }
            MemberKind::Method | MemberKind::Constructor => {
                let heap = self.heap.clone();
                self.repairing.set(true);
                let produced = self.produce_all(&heap, &m.requires, &mut bag, &locals);
                self.repairing.set(false);
                produced.map_err(|e| e.not_wellformed(member))?;
                let old = Some(Rc::new(Old { heap, bag: bag.clone() }));
                let mut frame = Frame { member, entry: locals.clone(), locals, bag, old };
                self.run_body(&mut frame)?;
                Ok(())
            }
        }
    }
}

impl Interp<'_> {
    /// A class's pure method with a contract of its own, run from a state that
    /// satisfies the precondition of an interface member it implements: its own
    /// precondition must hold there and the interface's `ensures` of its result, or it
    /// does not refine that member (`override.unsound`, LANGUAGE.md section 10). States
    /// the interface's precondition rejects are not judged.
    fn refines(
        &self,
        member: MemberRef,
        heap: &Heap,
        this: Option<Value>,
        args: &[Value],
    ) -> R<()> {
        let Some(m) = self.member(member) else { return Ok(()) };
        if m.inherits.is_some() || m.kind != MemberKind::Pure {
            return Ok(());
        }
        let Body::Return(body) = &m.body else { return Ok(()) };
        let interfaces: Vec<usize> = (0..self.layout.implementers.len())
            .filter(|&i| {
                self.layout.is_interface[i] && self.layout.implementers[i].contains(&member.class)
            })
            .collect();
        for i in interfaces {
            let Some(mi) = self.prog.classes[i]
                .members
                .iter()
                .position(|x| x.kind == MemberKind::Pure && x.name.name == m.name.name)
            else {
                continue;
            };
            let im = MemberRef { class: i, member: mi };
            let Some(imem) = self.member(im) else { continue };
            let mut ilocals = self.callee_locals(im, this.clone(), args);
            let mut given = Bag::default();
            match self.produce_all(heap, &imem.requires, &mut given, &ilocals) {
                Ok(()) => {}
                Err(Stop::OutOfSteps) => return Err(Stop::OutOfSteps),
                Err(_) => continue,
            }
            let ctx = Ctx { id: "override.unsound", call: None };
            let locals = self.callee_locals(member, this.clone(), args);
            let view = [&given];
            let cx = Cx { heap, view: &view, locals: &locals, old: None, pview: None };
            let got =
                self.check_all_read(&cx, &m.requires).map_err(|e| e.in_assertion(ctx, member))?;
            let bview = [&got.bag];
            let bcx = Cx { heap, view: &bview, locals: &locals, old: None, pview: None };
            let r = self.eval(&bcx, body).map_err(|e| e.not_wellformed(member))?;
            ilocals.insert("result".into(), r);
            let icx = Cx { heap, view: &view, locals: &ilocals, old: None, pview: None };
            self.check_all(&icx, &imem.ensures).map_err(|e| e.in_assertion(ctx, member))?;
        }
        Ok(())
    }
}

/// The program's layout (`value::Layout::of`), shared with every run of it.
pub(crate) fn layout_of(prog: &Program) -> std::sync::Arc<Layout> {
    Facts::of(prog).layout.clone()
}

/// Run `member` of a checked program on `inputs`, with the default budgets.
pub fn run_member(program: &Program, member: MemberRef, inputs: &Inputs) -> Outcome {
    run_member_with(program, member, inputs, Limits::default())
}

/// Run `member` on `inputs` with the given budgets.
pub fn run_member_with(
    program: &Program,
    member: MemberRef,
    inputs: &Inputs,
    limits: Limits,
) -> Outcome {
    run_member_counted(program, member, inputs, limits).0
}

/// As [`run_member_with`], with the steps the run took (for a caller that shares one
/// budget among many runs).
pub fn run_member_counted(
    program: &Program,
    member: MemberRef,
    inputs: &Inputs,
    limits: Limits,
) -> (Outcome, u64) {
    let mut it = Interp::new(program, inputs.heap.clone(), limits);
    let outcome = outcome_of(member, grow(|| it.run(member, inputs)));
    (outcome, it.steps.get())
}

fn outcome_of(member: MemberRef, r: R<()>) -> Outcome {
    match r {
        Ok(()) => Outcome::Passed,
        Err(Stop::Fail(f)) => Outcome::Failed(f),
        Err(Stop::Rejected(why)) => Outcome::Rejected(why),
        Err(Stop::OutOfSteps) => Outcome::OutOfSteps,
        // A raw failure always meets a context; should one escape, it is the member's.
        Err(s @ Stop::Raw(_)) => match s.in_stmt(member) {
            Stop::Fail(f) => Outcome::Failed(f),
            _ => Outcome::OutOfSteps,
        },
    }
}

/// As [`run_member_with`]; when the precondition rejects `inputs` at a false fact
/// that a change of one heap slot makes true (`repair`), that change is made and the
/// run tried again, at most `rounds` times. The outcome and the inputs of the last run.
pub fn run_member_repaired(
    program: &Program,
    member: MemberRef,
    inputs: &Inputs,
    limits: Limits,
    rounds: usize,
) -> (Outcome, Inputs) {
    let mut inputs = inputs.clone();
    for _ in 0..rounds {
        let it = Interp::new(program, inputs.heap.clone(), limits);
        let mut it = it;
        let outcome = outcome_of(member, grow(|| it.run(member, &inputs)));
        let fix = it.repair.borrow_mut().take();
        match (outcome, fix) {
            (Outcome::Rejected(_), Some(r)) if inputs.heap.get(r.obj, r.slot) != Some(&r.value) => {
                inputs.heap.set(r.obj, r.slot, r.value);
            }
            (outcome, _) => return (outcome, inputs),
        }
    }
    (run_member_with(program, member, &inputs, limits), inputs)
}

/// Run `static void main()` of the named class.
pub fn run_main(program: &Program, class_name: &str) -> Outcome {
    match find_main(program, class_name) {
        Some(m) => run_member(program, m, &Inputs::default()),
        None => Outcome::Rejected(format!("class `{class_name}` has no `static void main()`")),
    }
}

/// The `static void main()` of a class, if it has one.
pub fn find_main(program: &Program, class_name: &str) -> Option<MemberRef> {
    let ci = program.classes.iter().position(|c| c.name.name == class_name)?;
    let mi = program.classes[ci].members.iter().position(|m| {
        m.kind == MemberKind::Method && m.is_static && m.name.name == "main" && m.params.is_empty()
    })?;
    Some(MemberRef { class: ci, member: mi })
}

/// A failure's position as `line` (1-based) in `text`.
pub fn line_of(text: &str, span: Span) -> usize {
    let end = (span.start as usize).min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}
