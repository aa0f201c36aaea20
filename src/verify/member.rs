//! Validity of one member (the paper's section 3.5, Definitions 3-5; section 3.6 via
//! the termination context): well-defined contracts, bodies that satisfy them.
//!
//! Architecture invariant: every check starts from fresh symbols for `this` and the
//! parameters, inside its own solver frame; failures are values in the verifier.

use crate::rules::paths::PathEndKind;
use crate::rules::{Mode, Verifier, sort_of};
use crate::state::State;
use crate::state::heap::Heap;
use crate::state::term::{Sort, Term};
use crate::syntax::ast::{Body, MemberKind, MemberRef, Span, Type};
use std::rc::Rc;

impl<'p> Verifier<'p> {
    /// The store of a member's entry state: fresh `this` (non-null) and parameters.
    pub(super) fn entry_state(&mut self, r: MemberRef) -> State {
        let m = &self.prog.classes[r.class].members[r.member];
        let mut s = State::default();
        if !m.is_static {
            let this = Term::var("this", Sort::Ref);
            self.dec.assume(Term::ne(this.clone(), Term::null()));
            // In a class's member, `this` is an object of exactly that class.
            self.assume_class(&this, r.class);
            s.set("this", this);
        }
        for p in &m.params {
            let t = Term::var(&p.name.name, sort_of(&p.ty));
            self.assume_typed(&t, &p.ty, false);
            // An argument existed before anything the member allocates.
            self.note_ref(&t);
            s.set(&p.name.name, t);
        }
        s
    }

    /// Check member `r`; failures accumulate in `self.failures`.
    pub fn verify(&mut self, r: MemberRef) {
        self.member = Some(r);
        let m = &self.prog.classes[r.class].members[r.member];
        self.collect_local_types(r);
        self.translate_for(r);
        // A pure method's precondition is checked in read mode at its calls: its
        // amounts give no upper-bound facts (LANGUAGE.md section 11).
        self.no_bounds = m.kind == MemberKind::Pure;
        match m.kind {
            MemberKind::Field => {}
            // An interface's abstract predicate: nothing to check.
            MemberKind::Predicate if matches!(m.body, Body::None) => {
                self.stats.ledger.started += 1;
                self.stats.ledger.completed += 1;
                self.stats.paths += 1;
                self.reach_end();
            }
            // An interface's pure method: its contract is well-defined.
            MemberKind::Pure if matches!(m.body, Body::None) => {
                self.in_frame(|v| v.contract_wellformed(r));
            }
            MemberKind::Predicate => self.in_frame(|v| {
                let s = v.entry_state(r);
                let Body::Return(body) = &m.body else { return };
                let snap = v.fresh("s", Sort::Snap);
                v.nest.mode = Mode::WellFormed;
                v.stats.ledger.started += 1;
                v.produce(s, snap, body, &|v, s, ()| {
                    v.stats.paths += 1;
                    v.reach_end();
                    v.stats.ledger.completed += 1;
                    v.end_path(Some(&s), PathEndKind::Completed);
                });
                v.nest.mode = Mode::Stmt;
            }),
            MemberKind::Pure => self.in_frame(|v| {
                let s = v.entry_state(r);
                let Body::Return(body) = &m.body else { return };
                let snap = v.fresh("s", Sort::Snap);
                v.nest.mode = Mode::WellFormed;
                v.stats.ledger.started += 1;
                v.pure_check = Some(r);
                v.produce_all(s, snap, &m.requires, &|v, s, ()| {
                    v.with_entry_measure(r, s, &|v, s, ()| {
                        v.eval(s, body, &|v, mut s, t| {
                            let outer = v.termination.take();
                            s.set("result", t);
                            v.stats.paths += 1;
                            v.consume_postcondition(s, &m.ensures);
                            v.termination = outer;
                        });
                    });
                });
                v.pure_check = None;
                v.nest.mode = Mode::Stmt;
            }),
            MemberKind::Method | MemberKind::Constructor => {
                let before = self.report.failures.len();
                self.in_frame(|v| v.contract_wellformed(r));
                if self.report.failures.len() == before {
                    self.in_frame(|v| v.body_satisfies_contract(r));
                }
            }
        }
        // A class member that implements interface members refines their contracts.
        self.refinements(r);
    }

    /// A path reached the end of the member. With `--smoke` it counts only when its
    /// path condition is satisfiable: a contradictory one proves everything on the way,
    /// so it reaches the end without a branch noticing (`--smoke` warns that nothing
    /// did).
    /// Consume a member's postcondition `ensures` at the end of a path, which then
    /// ends completed.
    fn consume_postcondition(&mut self, s: State, ensures: &'p [crate::syntax::ast::Expr]) {
        self.consume_with(
            Mode::Consume { id: "postcondition.violated", call: None },
            s,
            ensures,
            &|v, s, _| {
                // After the postcondition: the vacuity query must not change the
                // solver's state before its checks.
                v.reach_end();
                v.stats.ledger.completed += 1;
                v.end_path(Some(&s), PathEndKind::Completed);
            },
        );
    }

    fn reach_end(&mut self) {
        if !self.config.smoke || self.path_feasible() {
            self.stats.ends += 1;
        }
    }

    /// Heap on entry to a constructor: every field of the new object, at its default.
    fn constructor_heap(&self, r: MemberRef, s: &State) -> Heap {
        let mut h = Heap::new();
        if let Some(this) = s.get("this") {
            for c in self.field_chunks(r.class, this) {
                h.add(c);
            }
        }
        h
    }

    /// Definition 3, first part: pre well-defined; post well-defined given pre.
    fn contract_wellformed(&mut self, r: MemberRef) {
        let m = &self.prog.classes[r.class].members[r.member];
        let mut s = self.entry_state(r);
        if m.kind == MemberKind::Constructor {
            s.heap = self.constructor_heap(r, &s);
        }
        if m.ty != Type::Void && matches!(m.kind, MemberKind::Method | MemberKind::Pure) {
            let res = self.fresh("result", sort_of(&m.ty));
            self.assume_typed(&res, &m.ty, false);
            s.set("result", res);
        }
        // An interface's member has no body: this is all there is to check of it.
        let signature = matches!(m.body, Body::None);
        self.nest.mode = Mode::WellFormed;
        let snap = self.fresh("s", Sort::Snap);
        self.stats.ledger.started += 1;
        self.produce_all(s, snap, &m.requires, &|v, s, ()| {
            // A pure method's postcondition speaks of the heap its precondition holds.
            let heap = if m.kind == MemberKind::Pure { s.heap.clone() } else { Heap::new() };
            let post = State { heap, old: Rc::new(s.heap.clone()), store: s.store.clone() };
            let snap = v.fresh("s", Sort::Snap);
            v.produce_all(post, snap, &m.ensures, &|v, _, ()| {
                v.stats.ledger.completed += 1;
                if signature {
                    v.stats.paths += 1;
                    v.reach_end();
                }
            });
        });
        self.nest.mode = Mode::Stmt;
    }

    /// Definition 3, second part: produce pre, execute the body, consume post.
    fn body_satisfies_contract(&mut self, r: MemberRef) {
        let m = &self.prog.classes[r.class].members[r.member];
        let Body::Block(body) = &m.body else { return };
        let mut s = self.entry_state(r);
        if m.kind == MemberKind::Constructor {
            s.heap = self.constructor_heap(r, &s);
        }
        let snap = self.fresh("s", Sort::Snap);
        let returns_value = m.ty != Type::Void && m.kind == MemberKind::Method;
        // The postcondition speaks of the parameters' values on entry, as callers read
        // it with the arguments' values (the body may assign to a parameter).
        let entry = s.store.clone();
        self.stats.ledger.started += 1;
        self.produce_all(s, snap, &m.requires, &|v, s, ()| {
            let mut s = s;
            s.old = Rc::new(s.heap.clone());
            v.trace_step(&s, || "produce the precondition".to_string(), m.name.span);
            let post = |v: &mut Verifier<'p>, s: State| {
                let mut s = s;
                // Where this path left the body: a failing postcondition points there.
                let end =
                    Span::new(body.span.end.saturating_sub(1) as usize, body.span.end as usize);
                v.report.post_note = Some(match v.report.exit.take() {
                    Some(at) => (at, "this `return` reaches the postcondition".to_string()),
                    None => (end, "the end of the body reaches the postcondition".to_string()),
                });
                for p in &m.params {
                    if let Some(t) = entry.get(p.name.name.as_str()) {
                        s.set(&p.name.name, t.clone());
                    }
                }
                if returns_value && s.get("result").is_none() {
                    let res = v.fresh("result", sort_of(&m.ty));
                    s.set("result", res);
                }
                v.stats.paths += 1;
                v.trace_step(&s, || "consume the postcondition".to_string(), m.name.span);
                v.consume_postcondition(s, &m.ensures);
                v.report.post_note = None;
            };
            v.exec_block(s, &body.stmts, &post, &|v, s, ()| {
                v.report.exit = None;
                post(v, s)
            });
        });
    }
}
