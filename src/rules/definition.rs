//! Pure methods as definitions (LANGUAGE.md sections 5 and 6; DESIGN.md, "Pure methods
//! are definitions"). Each pure method `C.p` is translated once (per program and
//! thread: definitions are kept from one member to the next) into axioms over formal
//! symbols (its snapshot, receiver and parameters):
//!
//! - body axioms `guard ⇒ C.p(s, this, x) = value`, one per way of evaluating the
//!   body (the guard is what producing the precondition and evaluating the body
//!   assumed on the way: branch conditions, pure conjuncts, snapshot shapes);
//! - postcondition axioms `guard ⇒ (conds ⇒ facts)` from producing the `ensures`
//!   with `result` = the application;
//! - for an interface's pure method `I.q` (LANGUAGE.md section 10), which has no body,
//!   one dispatch axiom per implementing class `C`:
//!   `this ≠ null ∧ class#(this) = C ∧ guard ⇒ I.q(s, this, x) = C.q(t, this, x)`, where
//!   `t` is the snapshot of `C.q`'s precondition consumed from the state that producing
//!   `I.q`'s precondition from `s` gives (the call site holds `I.q`'s precondition;
//!   the object's own method runs on what of it its precondition takes). When that
//!   consume has to close a predicate by inference (the class's method would run on a
//!   derivation deeper than the interface's, which the termination argument of
//!   section 8 does not cover), there is no dispatch axiom for that path: `I.q` is
//!   then known only through its `ensures`.
//!
//! Each axiom is true of the function whatever the path, so an application met
//! anywhere instantiates them (substituting its arguments for the formals) as facts
//! that never branch and never end a path. Recursion is bounded by fuel, as
//! Silicon's limited functions and Dafny's fuel bound it.
//!
//! Each translation runs in a verifier with a decider of its own (a translator), so
//! nothing the caller's path condition says, and nothing translated before, can shape
//! a definition: it depends on the program alone. Unknown
//! values the translation meets (a bounded open that gives up) become skolem
//! functions of the formals: the axiom still holds for every application. A pure
//! method whose body fails the termination check has no body axioms (its
//! equation could be inconsistent).

use crate::rules::{Mode, Verifier, sort_of};
use crate::state::heap::Heap;
use crate::state::term::{Func, Op, Sort, Term, TermMap};
use crate::state::{State, Store};
use crate::syntax::ast::MemberRef;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Levels of recursive definitions instantiated from an application met in the
/// program. Only applications of recursive pure methods use fuel: a chain of
/// non-recursive calls is unrolled to its end (bounded by `MAX_CHAIN`).
pub const FUEL: u32 = 3;
/// How deep instantiation of recursive definitions goes on snapshots built from
/// known parts (closed predicates): there the definitions fold to known values, as
/// far as the heap determines them.
pub const MAX_DEPTH: u32 = 8;
/// A bound on nested instantiation whatever the fuel (program size bounds acyclic
/// chains anyway; this keeps a pathological program from exhausting memory).
pub const MAX_CHAIN: u32 = 64;
/// At most this many instantiations per member: beyond, applications stay
/// uninterpreted (sound: fewer facts), so no program makes instantiation explode.
pub const MAX_INSTANCES: u64 = 50_000;
/// At most this many applications to values alone are unrolled past the fuel per
/// member: a computation over values that branches (`t(n - 1, 2 * x) + t(n - 1, 2 * x +
/// 1)`) has exponentially many applications; past the bound they get fuel as any other.
pub const MAX_LITERAL: u64 = 2_000;

/// The `instantiated` key of an application's derived axioms (besides `false` and
/// `true`: its other axioms without and with the body).
const DERIVED: u8 = 2;
/// Added to an `instantiated` key when the postcondition axioms were withheld.
const WITHOUT_POST: u8 = 4;

/// The axioms of one pure method, over its formals.
pub struct Definition {
    /// Snapshot, receiver (instance methods), parameters: the function's domain.
    pub formals: Vec<Term>,
    pub body: Vec<Term>,
    pub post: Vec<Term>,
    /// What holding the precondition's chunks implies (`assumed-before ⇒ fact`: snapshot
    /// shapes, opened predicates' facts, non-null receivers, distinct locations): true
    /// only of an application whose precondition was consumed there, so instantiated
    /// only at such a call (never for an application met inside another axiom).
    pub derived: Vec<Term>,
    /// Dispatch axioms of an interface's pure method, by implementing class.
    pub dispatch: Vec<(usize, Vec<Term>)>,
    /// The interner generation the terms belong to (`term::generation`).
    pub generation: u64,
}

impl Definition {
    /// The same definition in the current interner generation.
    fn reinterned(&self) -> Definition {
        let all = |ts: &[Term]| ts.iter().map(Term::reintern).collect();
        Definition {
            formals: all(&self.formals),
            body: all(&self.body),
            post: all(&self.post),
            derived: all(&self.derived),
            dispatch: self.dispatch.iter().map(|(c, ts)| (*c, all(ts))).collect(),
            generation: crate::state::term::generation(),
        }
    }
}

/// The definitions computed so far, shared by the verifier and its translator, and
/// by the members of one program verified on one thread (`Info::defs`).
pub type Defs = Rc<RefCell<HashMap<MemberRef, Rc<Definition>>>>;

impl<'p> Verifier<'p> {
    /// The definition of pure method `p`, translating it (and the pure methods it
    /// mentions, first) when needed. The translator itself only reads what is
    /// already translated: a pure method met while translating itself has none.
    pub fn definition(&mut self, p: MemberRef) -> Option<Rc<Definition>> {
        // While translating `t`, the definitions of `t`'s recursion group are not used
        // (they are what is being made), whatever was translated first: so every
        // definition is the same whichever member asked for it first.
        if let Some(t) = self.axioms.target
            && self.info.same_group(t, p)
        {
            return None;
        }
        let cached = self.axioms.defs.borrow().get(&p).cloned();
        if let Some(d) = cached {
            if d.generation == crate::state::term::generation() {
                return Some(d);
            }
            // Translated for an earlier member: rebuild its terms so they are shared.
            let fresh = Rc::new(d.reinterned());
            self.axioms.defs.borrow_mut().insert(p, fresh.clone());
            return Some(fresh);
        }
        if self.axioms.translating {
            return None;
        }
        self.translate_closure(p);
        self.axioms.defs.borrow().get(&p).cloned()
    }

    /// Translate `p` and, before it, what it mentions (post-order; cycles cut).
    fn translate_closure(&mut self, p: MemberRef) {
        let mut order = vec![];
        let mut seen = HashSet::new();
        let mut stack = vec![(p, false)];
        while let Some((m, done)) = stack.pop() {
            if done {
                order.push(m);
                continue;
            }
            if !seen.insert(m) || self.axioms.defs.borrow().contains_key(&m) {
                continue;
            }
            stack.push((m, true));
            for d in self.info.deps.get(&m).into_iter().flatten().rev() {
                if !seen.contains(d) {
                    stack.push((*d, false));
                }
            }
        }
        // Each definition on a translator (and a solver) of its own: what a
        // definition says depends on the program alone, not on what was translated
        // before it or for which member, so definitions are kept from one member to
        // the next (`Info::start_member`).
        for m in order {
            if self.axioms.defs.borrow().contains_key(&m) {
                continue;
            }
            let mut tr = self.translator();
            let d = tr.translate(m);
            if tr.stopped() {
                self.info.defs_partial.set(true);
            }
            self.axioms.defs.borrow_mut().insert(m, Rc::new(d));
        }
    }

    /// Translate the pure methods member `r`'s check may meet (`Info::
    /// pure_methods_reached`), in a fixed order, before the check begins, on its own
    /// solver: what the solver has seen before the member's own queries depends on the
    /// member alone (definitions are forgotten between members), and a file of N
    /// members costs what their own dependencies do, not N times every pure method.
    pub fn translate_for(&mut self, r: MemberRef) {
        if self.axioms.translating {
            return;
        }
        for p in self.info.pure_methods_reached(self.prog, r) {
            if !self.axioms.defs.borrow().contains_key(&p) {
                self.translate_closure(p);
            }
        }
    }

    /// A translator: a verifier with its own decider.
    fn translator(&self) -> Box<Verifier<'p>> {
        let mut config = self.config.clone();
        config.trace = false;
        config.counterexample = false;
        let mut t = Verifier::new(self.prog, self.info, config);
        t.axioms.translating = true;
        t.dec.stop_when_exhausted = false;
        t.dec.eager_definitions = true;
        t.dec.skolemize = false;
        t.no_bounds = true;
        // A definition is what its paths say, each shown feasible.
        t.lazy = false;
        t.axioms.defs = self.axioms.defs.clone();
        t.dec.set_deadline(self.dec.deadline(), self.dec.timed());
        Box::new(t)
    }

    /// Translate pure method `p` into its axioms (run on the translator).
    fn translate(&mut self, p: MemberRef) -> Definition {
        self.axioms.target = Some(p);
        let d = self.translate_target(p);
        self.axioms.target = None;
        d
    }

    fn translate_target(&mut self, p: MemberRef) -> Definition {
        let m = &self.prog.classes[p.class].members[p.member];
        let Some(f) = self.info.funcs.get(&p).cloned() else {
            return Definition {
                formals: vec![],
                body: vec![],
                post: vec![],
                derived: vec![],
                dispatch: vec![],
                generation: crate::state::term::generation(),
            };
        };
        let name = f.name.clone();
        let snap = Term::var(&format!("s#{name}"), Sort::Snap);
        let mut formals = vec![snap.clone()];
        let mut store = Store::new();
        let this = (!m.is_static).then(|| Term::var(&format!("this#{name}"), Sort::Ref));
        if let Some(t) = &this {
            formals.push(t.clone());
            store.insert_mut("this".into(), t.clone());
        }
        for prm in &m.params {
            let t = Term::var(&format!("{}#{name}", prm.name.name), sort_of(&prm.ty));
            formals.push(t.clone());
            store.insert_mut(prm.name.name.as_str().into(), t);
        }
        let app = Term::app(&f, formals.clone());
        let start = State { heap: Heap::new(), old: Rc::new(Heap::new()), store };
        let failures = self.report.failures.len();
        let body_axioms: RefCell<Vec<Term>> = RefCell::new(vec![]);
        let post_axioms: RefCell<Vec<Term>> = RefCell::new(vec![]);
        let derived_axioms: RefCell<Vec<Term>> = RefCell::new(vec![]);
        let add = |to: &RefCell<Vec<Term>>, ts: Vec<Term>| {
            let mut to = to.borrow_mut();
            for t in ts {
                if !to.contains(&t) {
                    to.push(t);
                }
            }
        };
        let saved_mode = self.nest.mode;
        self.nest.mode = Mode::WellFormed;
        if let Some(body) = self.body_of(p) {
            self.in_frame(|v| {
                let base = v.dec.mark();
                if let Some(t) = &this {
                    v.dec.assume(Term::ne(t.clone(), Term::null()));
                }
                v.produce_all(start.clone(), snap.clone(), &m.requires, &|v, s, ()| {
                    v.with_entry_measure(p, s, &|v, s, ()| {
                        v.eval(s, body, &|v, _s, value| {
                            let (derived, _) = v.guard_between(base, v.dec.mark());
                            let guard = v.body_guard(base, v.dec.mark());
                            let eq = Term::eq(app.clone(), value);
                            add(&derived_axioms, derived);
                            add(&body_axioms, vec![Term::implies(guard, eq)]);
                        });
                    });
                });
            });
        }
        let terminates =
            !self.report.failures[failures..].iter().any(|f| f.err.id == "termination.unproven");
        if !m.ensures.is_empty() {
            self.in_frame(|v| {
                let base = v.dec.mark();
                if let Some(t) = &this {
                    v.dec.assume(Term::ne(t.clone(), Term::null()));
                }
                v.produce_all(start.clone(), snap.clone(), &m.requires, &|v, mut s, ()| {
                    let mid = v.dec.mark();
                    s.set("result", app.clone());
                    v.produce_all(s, Term::unit(), &m.ensures, &|v, _s, ()| {
                        let (derived, guard) = v.guard_between(base, mid);
                        let (mut conds, mut facts) = (vec![], vec![]);
                        for e in v.dec.entries_since(mid) {
                            match e.kind {
                                crate::decider::Kind::Branch => conds.push(e.term.clone()),
                                crate::decider::Kind::Fact | crate::decider::Kind::Derived => {
                                    facts.push(e.term.clone())
                                }
                                crate::decider::Kind::Axiom | crate::decider::Kind::Definition => {}
                            }
                        }
                        let concl = Term::implies(Term::and_all(conds), Term::and_all(facts));
                        add(&derived_axioms, derived);
                        add(&post_axioms, vec![Term::implies(guard, concl)]);
                    })
                })
            });
        }
        let dispatch_axioms = self.translate_dispatch(p, &app, &formals, &start, &derived_axioms);
        self.report.failures.truncate(failures);
        self.nest.mode = saved_mode;
        let skolemize = |ts: Vec<Term>| -> Vec<Term> {
            ts.into_iter()
                .map(|t| skolemize(&t, &formals, &name))
                .filter(|t| !t.is_true())
                .collect()
        };
        let body = if terminates { skolemize(body_axioms.into_inner()) } else { vec![] };
        let post = skolemize(post_axioms.into_inner());
        let derived = skolemize(derived_axioms.into_inner());
        let dispatch: Vec<(usize, Vec<Term>)> =
            dispatch_axioms.into_iter().map(|(c, ts)| (c, skolemize(ts))).collect();
        if std::env::var_os("IDF_DEBUG_DEFS").is_some() {
            crate::say!("definition of {name} (terminates: {terminates}):");
            for t in body
                .iter()
                .chain(&post)
                .chain(&derived)
                .chain(dispatch.iter().flat_map(|(_, ts)| ts))
            {
                crate::say!("  {t}");
            }
        }
        Definition {
            formals,
            body,
            post,
            derived,
            dispatch,
            generation: crate::state::term::generation(),
        }
    }

    /// The dispatch axioms of interface pure method `p` (none for a class's), one list
    /// per implementing class; `app` is `p` applied to `formals`, and `start` the state
    /// whose store binds `this` and `p`'s parameters to them.
    fn translate_dispatch(
        &mut self,
        p: MemberRef,
        app: &Term,
        formals: &[Term],
        start: &State,
        derived_out: &RefCell<Vec<Term>>,
    ) -> Vec<(usize, Vec<Term>)> {
        let m = &self.prog.classes[p.class].members[p.member];
        if !self.info.in_interface(p) || m.is_static {
            return vec![];
        }
        let (snap, this, args) = (formals[0].clone(), formals[1].clone(), &formals[2..]);
        let mut out = vec![];
        for c in self.info.implemented_by.get(&p).cloned().unwrap_or_default() {
            let Some(f) = self.info.funcs.get(&c).cloned() else { continue };
            let cm = &self.prog.classes[c.class].members[c.member];
            let axioms: RefCell<Vec<Term>> = RefCell::new(vec![]);
            let cstore = self.callee_store(c, Some(this.clone()), args);
            self.in_frame(|v| {
                let base = v.dec.mark();
                v.dec.assume(Term::ne(this.clone(), Term::null()));
                v.dec.assume(v.is_class(&this, c.class));
                v.produce_all(start.clone(), snap.clone(), &m.requires, &|v, s, ()| {
                    let closes = v.closes;
                    let cs = State { heap: s.heap, old: s.old, store: cstore.clone() };
                    v.consume_with(Mode::WellFormed, cs, &cm.requires, &|v, _rest, t| {
                        if v.closes != closes {
                            return;
                        }
                        let (derived, guard) = v.guard_between(base, v.dec.mark());
                        let mut cargs = vec![t, this.clone()];
                        cargs.extend(args.iter().cloned());
                        let eq = Term::eq(app.clone(), Term::app(&f, cargs));
                        {
                            let mut to = derived_out.borrow_mut();
                            for t in derived {
                                if !to.contains(&t) {
                                    to.push(t);
                                }
                            }
                        }
                        let mut axioms = axioms.borrow_mut();
                        let t = Term::implies(guard, eq);
                        if !axioms.contains(&t) {
                            axioms.push(t);
                        }
                    })
                })
            });
            out.push((c.class, axioms.into_inner()));
        }
        out
    }

    /// The guard of the path-condition entries in `[from, to)`: the conjunction of
    /// all of them (branch conditions, assumed facts, derived facts); and, for each
    /// derived fact (a snapshot's shape, an opened predicate's fact), the axiom
    /// `what came before ⇒ fact`, which holds of an application whose precondition's
    /// chunks are held (`Definition::derived`). Axiom entries hold anyway and are
    /// skipped. The derived facts before one are left out of its guard: each is the
    /// conclusion of an axiom of the same list, always instantiated with it, whose
    /// guard is part of this one, so the axioms say the same (by induction along the
    /// list) with guards that grow linearly, not quadratically (a list predicate's
    /// nested snapshot shapes: each guard repeated every shape before it).
    fn guard_between(&self, from: usize, to: usize) -> (Vec<Term>, Term) {
        let entries = self.dec.entries_since(from);
        let n = to.saturating_sub(from).min(entries.len());
        let mut so_far = vec![];
        let mut underived = vec![];
        let mut derived = vec![];
        for e in &entries[..n] {
            match e.kind {
                crate::decider::Kind::Axiom | crate::decider::Kind::Definition => continue,
                crate::decider::Kind::Derived => {
                    derived.push(Term::implies(Term::and_all(underived.clone()), e.term.clone()))
                }
                _ => underived.push(e.term.clone()),
            }
            so_far.push(e.term.clone());
        }
        (derived, Term::and_all(so_far))
    }

    /// The guard of a body axiom: the branch conditions of the path in `[from, to)`
    /// and the snapshot shapes it assumed, not its other facts. Paths split only at
    /// branches where both sides are feasible, so the guards of two paths exclude each
    /// other whatever the facts (the definition stays consistent), and the shapes make
    /// recursion on proper parts well-founded. A fact the path assumed (a predicate's
    /// pure conjunct, say about a value an `opening` inside it gives) is known at a
    /// call site only where that predicate was opened: in the guard it would keep the
    /// axiom from applying to an instance that was closed instead.
    fn body_guard(&self, from: usize, to: usize) -> Term {
        let entries = self.dec.entries_since(from);
        let n = to.saturating_sub(from).min(entries.len());
        let mut guard = vec![];
        for e in &entries[..n] {
            match e.kind {
                crate::decider::Kind::Axiom | crate::decider::Kind::Definition => {}
                crate::decider::Kind::Branch => guard.push(e.term.clone()),
                _ => guard.extend(shape_part(&e.term)),
            }
        }
        Term::and_all(guard)
    }

    /// Assume the axioms of the pure-method application `app` (postcondition, unless
    /// `pure_check` withholds it; body when `body`), then of the applications they
    /// mention, while fuel lasts. Nothing here branches or ends a path.
    pub fn instantiate(&mut self, app: &Term, fuel: u32, body: bool, depth: u32) {
        self.instantiate_app(app, fuel, body, None, false, depth)
    }

    /// `instantiate` for an application whose precondition was just consumed (a call
    /// evaluated in code, a contract or a body); `admitted` when the call passed the
    /// termination check of the pure body being checked (its postcondition may then be
    /// assumed even in that body's recursion group: it is about a smaller instance).
    pub fn instantiate_call(&mut self, app: &Term, fuel: u32, body: bool, admitted: bool) {
        self.instantiate_app(app, fuel, body, Some(Term::bool(true)), admitted, 0)
    }

    /// `consumed`: the guard under which `app`'s precondition was consumed (`true` at
    /// a call; a dispatch axiom's guard for the class's application it names), so
    /// what holding the precondition implies is assumed under it.
    fn instantiate_app(
        &mut self,
        app: &Term,
        fuel: u32,
        body: bool,
        consumed: Option<Term>,
        admitted: bool,
        depth: u32,
    ) {
        let Op::App(f) = app.op() else { return };
        let Some(&p) = self.info.func_members.get(&f.name) else { return };
        if fuel == 0 {
            return;
        }
        if let Some(guard) = &consumed {
            self.assume_derived_of(app, p, guard);
        }
        // While a pure method's postcondition is checked, its recursion group's
        // postconditions hold only of calls shown to be smaller (LANGUAGE.md section
        // 15): assuming them of the instance being checked would assume what is to be
        // proved.
        let in_group = self.pure_check.is_some_and(|r| self.info.same_group(r, p));
        let post = admitted || !in_group;
        // A postcondition admitted for a smaller call in the group being checked is the
        // induction hypothesis at this call: it holds where the call was shown to be
        // smaller (the path, and the operand's guard that led to the call), not of the
        // function everywhere. Assumed as a fact, a join guards it with its branch
        // conditions; as an axiom, `n <= 0 ? 0 : p(n - 1)` with `ensures result > 0`
        // assumed `p(n - 1) > 0` for n <= 0 too, and proved itself.
        let hypothesis = admitted && in_group;
        let code = u8::from(body) | if post { 0 } else { WITHOUT_POST };
        let covered = |v: &Self, code: u8| {
            v.axioms.instantiated.get(&(app.clone(), code)).is_some_and(|&k| k >= fuel)
        };
        if covered(self, code) || (!post && covered(self, code & !WITHOUT_POST)) {
            return;
        }
        let key = (app.clone(), code);
        if self.axioms.instances >= MAX_INSTANCES {
            return;
        }
        self.axioms.instances += 1;
        let prev = self.axioms.instantiated.insert(key.clone(), fuel);
        self.axioms.inst_log.push((key, prev));
        self.record_app(app);
        let Some(d) = self.definition(p) else { return };
        let map: TermMap<Term, Term> =
            d.formals.iter().cloned().zip(app.args().iter().cloned()).collect();
        // Nested applications, each with whether it may get its body: one that a
        // postcondition of `p`'s recursion group names is instantiated without its
        // body (Silicon's limited functions): two postconditions that name each
        // other's methods must not meet both bodies, or a wrong pair of them would
        // make every client's path condition contradictory.
        let mut nested: Vec<(Term, bool)> = vec![];
        let mut seen = crate::state::term::TermSet::default();
        let posts: &[Term] = if post { &d.post } else { &[] };
        let bodies: &[Term] = if body { &d.body } else { &[] };
        for (ax, from_post) in
            posts.iter().map(|a| (a, true)).chain(bodies.iter().map(|a| (a, false)))
        {
            // Quantifiers over literal ranges (a definition applied to a literal) are
            // written out as their instances.
            let t = crate::decider::finite::expand(&ax.substitute(&map));
            if t.is_true() {
                continue;
            }
            let bound = t.bound_vars();
            for a in t.apps() {
                self.assume_map_axiom(&a);
                if !bound.is_empty() && a.symbols().iter().any(|x| bound.contains(x)) {
                    // Under a quantifier of the instance: its instance at a bound
                    // variable's symbol would be one ground term nothing else names.
                    if seen.insert(a.clone()) {
                        self.instantiate_under_binder(&a, &bound);
                    }
                    continue;
                }
                if a != *app && seen.insert(a.clone()) {
                    let limited = from_post && self.same_group_app(&a, p);
                    nested.push((a, !limited));
                }
            }
            self.assume_instance(t, from_post && hypothesis);
        }
        // Dispatch (an interface's pure method): every axiom holds, but only the class
        // the receiver is known to be has its own definition instantiated in turn, with
        // this application's fuel (the step from `I.q` to `C.q` is no recursion).
        let recv = app.args().get(1).cloned();
        let mut dispatched: Vec<(Term, Option<Term>)> = vec![];
        for (c, axioms) in &d.dispatch {
            let known = recv.as_ref().is_some_and(|o| !self.known_classes(o, &[*c]).is_empty());
            for ax in axioms {
                let t = ax.substitute(&map);
                if t.is_true() {
                    continue;
                }
                if known {
                    // The class's precondition was consumed from the interface's under
                    // this axiom's guard only (its other paths name other snapshots,
                    // `unit` for a precondition that holds nothing there).
                    let guard = match t.op() {
                        Op::Implies => t.args()[0].clone(),
                        _ => Term::bool(true),
                    };
                    for a in t.apps() {
                        if a == *app || !seen.insert(a.clone()) {
                            continue;
                        }
                        let of_class = matches!(a.op(), Op::App(g)
                            if self.info.func_members.get(&g.name).is_some_and(|m| m.class == *c));
                        if of_class && a.args().get(1) == recv.as_ref() {
                            let g = consumed.as_ref().map(|c| Term::and(c.clone(), guard.clone()));
                            dispatched.push((a, g))
                        } else {
                            nested.push((a, true))
                        }
                    }
                }
                self.assume_instance(t, false);
            }
        }
        for (a, guard) in dispatched {
            self.instantiate_app(&a, fuel, body && self.config.infer, guard, admitted, depth);
        }
        let nested_body = body && self.config.infer;
        if depth >= MAX_CHAIN {
            return;
        }
        for (n, full) in nested {
            let recursive = match n.op() {
                Op::App(g) => self
                    .info
                    .func_members
                    .get(&g.name)
                    .is_some_and(|m| self.info.recursive.contains(m)),
                _ => false,
            };
            let built = n.args().first().is_some_and(built_snapshot);
            // An application to values alone (`sum(seq(1, 2, 3))`, `fib(10)` on the
            // empty snapshot) computes: each unfolding folds to the next such
            // application or to a value, so it is unrolled to its end like a chain of
            // non-recursive calls (Dafny's literal arguments), within `MAX_CHAIN`.
            let literal = recursive
                && built
                && self.axioms.literal < MAX_LITERAL
                && n.args().iter().all(|a| a.symbols().is_empty());
            if literal {
                self.axioms.literal += 1;
            }
            let next = if !recursive || literal {
                fuel
            } else if built && depth < MAX_DEPTH {
                fuel.max(2) - 1
            } else {
                fuel - 1
            };
            self.instantiate(&n, next, nested_body && full, depth + 1);
        }
    }

    /// The definition of the application `a`, which names variables `bound` by a
    /// quantifier of an axiom instance (`dbl(i)` in `allDbl(n) == ∀i. .. dbl(i) >= i`),
    /// assumed for every value of them with `a` as the trigger: what Silicon's axiom
    /// for the function gives the solver's instances of that quantifier (its
    /// skolem constant when a goal negates it). Only for a method outside any
    /// recursion: its definition names no application of itself to match again.
    fn instantiate_under_binder(&mut self, a: &Term, bound: &[Term]) {
        let Op::App(f) = a.op() else { return };
        let Some(&p) = self.info.func_members.get(&f.name) else { return };
        if self.info.recursive.contains(&p) || !a.nodes_ite_free() {
            return;
        }
        let vars: Vec<Term> = a.symbols().into_iter().filter(|x| bound.contains(x)).collect();
        if self.axioms.instances >= MAX_INSTANCES {
            return;
        }
        self.axioms.instances += 1;
        let Some(d) = self.definition(p) else { return };
        let map: TermMap<Term, Term> =
            d.formals.iter().cloned().zip(a.args().iter().cloned()).collect();
        for ax in d.post.iter().chain(&d.body) {
            let t = ax.substitute(&map);
            for b in t.apps() {
                self.assume_map_axiom(&b);
            }
            if !t.is_true() {
                let q = Term::quant(true, vars.clone(), vec![vec![a.clone()]], t);
                if !self.dec.known(&q) {
                    self.assume_instance(q, false);
                }
            }
        }
    }

    /// The axiom of `elem#E` when `a` applies it: a definition instance names the
    /// snapshot map its method's precondition made of one element, which the caller
    /// may never have made itself.
    fn assume_map_axiom(&mut self, a: &Term) {
        if let Op::App(f) = a.op()
            && crate::rules::segment::is_element_func(f)
        {
            self.assume_element_axiom(f.range);
        }
    }

    /// Is `a` an application of a pure method in `p`'s recursion group?
    fn same_group_app(&self, a: &Term, p: MemberRef) -> bool {
        matches!(a.op(), Op::App(g)
            if self.info.func_members.get(&g.name).is_some_and(|&m| self.info.same_group(m, p)))
    }

    /// Assume an axiom instance `guard ⇒ conclusion`. When the path condition has
    /// every conjunct of the guard syntactically, the conclusion alone is assumed, as
    /// a fact of this path (not an axiom: a `join` then guards it with the branch
    /// conditions it depends on). The translator keeps axioms whole. A `fact` (an
    /// induction hypothesis) is a fact of the path either way.
    fn assume_instance(&mut self, t: Term, fact: bool) {
        self.stats.axiom_instances += 1;
        if !self.axioms.translating
            && let Op::Implies = t.op()
        {
            let (g, c) = (&t.args()[0], &t.args()[1]);
            let known = match g.op() {
                Op::And => g.args().iter().all(|x| self.dec.known(x)),
                _ => self.dec.known(g),
            };
            if known {
                return self.dec.assume(c.clone());
            }
        }
        if fact { self.dec.assume(t) } else { self.dec.assume_axiom(t) }
    }

    /// Assume what holding `app`'s precondition implies (its definition's derived
    /// axioms) under `guard`, the condition under which that precondition was
    /// consumed; once per application on a path when the guard is `true`. As derived
    /// facts: in a translation they become the enclosing definition's derived axioms,
    /// under what led to this call.
    fn assume_derived_of(&mut self, app: &Term, p: MemberRef, guard: &Term) {
        let unguarded = guard.is_true();
        let key = (app.clone(), DERIVED);
        if self.axioms.instantiated.contains_key(&key) {
            return;
        }
        if unguarded {
            self.axioms.instantiated.insert(key.clone(), 1);
            self.axioms.inst_log.push((key, None));
        }
        let Some(d) = self.definition(p) else { return };
        let map: TermMap<Term, Term> =
            d.formals.iter().cloned().zip(app.args().iter().cloned()).collect();
        for ax in &d.derived {
            let t = ax.substitute(&map);
            let t = if unguarded { t } else { Term::implies(guard.clone(), t) };
            if !t.is_true() {
                self.dec.assume_derived(t);
            }
        }
    }

    /// Remember an application by its snapshot, for `after_ghost`.
    fn record_app(&mut self, app: &Term) {
        if self.axioms.recorded.insert(app.clone())
            && let Some(s) = app.args().first()
        {
            self.axioms.apps_by_snap.entry(s.clone()).or_default().push(app.clone());
        }
    }

    /// After a predicate instance with snapshot `snap` was opened or closed: give the
    /// applications met on that snapshot fresh fuel (LANGUAGE.md section 6, as
    /// Silicon's predicate-triggered function definitions). Axioms hold on every
    /// path, so applications met on other paths may be instantiated here too.
    pub fn after_ghost(&mut self, snap: &Term) {
        // A snapshot without symbols (`unit`: the instance holds nothing; a value
        // built of constants) says all it can already: opening or closing it teaches
        // nothing new, and refuelling its applications (every heap-free method's is on
        // `unit`) at each such ghost step only makes instances grow.
        if !self.config.infer || snap.symbols().is_empty() {
            return;
        }
        let apps = self.axioms.apps_by_snap.get(snap).cloned().unwrap_or_default();
        for a in apps {
            self.instantiate(&a, FUEL, true, 0);
        }
    }
}

/// Replace every symbol of `t` other than the formals by a skolem function of the
/// formals (`sk#C.p#x@1(s, this, ..)`): an unknown value the translation met, which
/// depends only on the application's arguments.
fn skolemize(t: &Term, formals: &[Term], name: &str) -> Term {
    // A quantifier's bound variables are not unknowns of the translation.
    let bound = t.bound_vars();
    let foreign: Vec<Term> =
        t.symbols().into_iter().filter(|x| !formals.contains(x) && !bound.contains(x)).collect();
    if foreign.is_empty() {
        return t.clone();
    }
    let domain: Rc<[Sort]> = formals.iter().map(|f| f.sort()).collect();
    let map: TermMap<Term, Term> = foreign
        .into_iter()
        .filter_map(|x| {
            let Op::Var(n, sort) = x.op() else { return None };
            let f = Func {
                name: format!("sk#{name}#{n}").into(),
                domain: domain.clone(),
                range: *sort,
            };
            let app = Term::app(&f, formals.to_vec());
            Some((x, app))
        })
        .collect();
    t.substitute(&map)
}

/// The snapshot shapes a fact states (`s = combine(first(s), second(s))`,
/// `s = fromT(toT(s))`), under the implications and within the conjunctions it has.
fn shape_part(t: &Term) -> Option<Term> {
    match t.op() {
        Op::Eq => {
            let (a, b) = (&t.args()[0], &t.args()[1]);
            let shape = |x: &Term, y: &Term| match y.op() {
                Op::Combine => matches!(y.args()[0].op(), Op::First) && y.args()[0].args()[0] == *x,
                Op::Wrap(_) => {
                    matches!(y.args()[0].op(), Op::Unwrap(_)) && y.args()[0].args()[0] == *x
                }
                _ => false,
            };
            (shape(a, b) || shape(b, a)).then(|| t.clone())
        }
        Op::Implies => shape_part(&t.args()[1]).map(|c| Term::implies(t.args()[0].clone(), c)),
        Op::And => {
            let parts: Vec<Term> = t.args().iter().filter_map(shape_part).collect();
            (!parts.is_empty()).then(|| Term::and_all(parts))
        }
        _ => None,
    }
}

/// Is snapshot `s` built from known parts (a closed predicate's fields, a unit), so
/// that unrolling a definition on it folds to known values? An array's value map
/// wrapped is not, unless its elements are written out: unrolling a definition over a
/// segment (`sumOf(a, lo, hi)`) on an unknown map only makes new restrictions of it,
/// each with a quantified definition, for Z3 to instantiate against every index.
fn built_snapshot(s: &Term) -> bool {
    match s.op() {
        Op::Combine | Op::Unit => true,
        Op::Wrap(Sort::Arr(_)) => {
            matches!(s.args()[0].op(), Op::Store | Op::ConstArr(_))
        }
        Op::Wrap(_) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::info::Info;
    use crate::syntax::ast::MemberRef;
    use crate::verify::{Config, verify_member_with};

    const PROGRAM: &str = "class A {
        static pure int f(int n) requires n >= 0; ensures result >= 0; decreases n; {
          return n == 0 ? 0 : 1 + A.f(n - 1);
        }
        static pure int g(int n) requires n >= 0; { return A.f(n) + A.f(n + 1); }
        static void useF() { assert A.f(2) == 2; }
        static void useG() { assert A.g(1) == 3; }
      }";

    /// The definitions, printed, after verifying `members` in order on one `Info`.
    fn definitions_after(members: &[usize]) -> Vec<String> {
        let p = crate::source::front_end(PROGRAM).expect("checks");
        let info = Info::new(&p);
        let config = Config::default();
        for &m in members {
            let r = verify_member_with(&p, &info, MemberRef { class: 0, member: m }, &config)
                .expect("verifies");
            assert!(r.errors.is_empty(), "member {m} fails: {:?}", r.errors);
        }
        let defs = info.defs[usize::from(config.infer)].borrow();
        let mut out: Vec<String> = defs
            .iter()
            .map(|(k, d)| {
                let all: Vec<String> =
                    d.body.iter().chain(&d.post).chain(&d.derived).map(|t| t.to_string()).collect();
                format!("{k:?}: {}", all.join(" ; "))
            })
            .collect();
        out.sort();
        out
    }

    /// A definition is kept from one member to the next, and is the same whichever
    /// member translated it first (each is translated on a solver of its own).
    #[test]
    fn definitions_are_kept_and_do_not_depend_on_which_member_came_first() {
        let g_first = definitions_after(&[3, 2]);
        let f_first = definitions_after(&[2, 3]);
        assert_eq!(g_first.len(), 2, "{g_first:?}");
        assert_eq!(g_first, f_first);
    }
}
