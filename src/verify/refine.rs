//! Refinement (behavioural subtyping, LANGUAGE.md section 10): a class member that
//! implements an interface member, and wrote a contract of its own, is checked against
//! the interface's: produce the interface's precondition, consume the class's, produce
//! the class's postcondition, consume the interface's (`old` is the state after the
//! first step). For a pure method, the interface's `ensures` must hold of the class's
//! result, `C.q(t, this, x)` with `t` the snapshot of the class's precondition and the
//! class's definition (body and `ensures`) instantiated. A member that took the
//! interface member's contract (it wrote none) is not checked against that member
//! (the check would compare a contract with itself), but it is against any other
//! interface member of the same name its class implements.
//!
//! A failure is `override.unsound` at the class member's name, with a note at the
//! failing conjunct (of the class's precondition or of the interface's
//! postcondition); it is one of that member's errors.
//!
//! Architecture invariant: each check starts from fresh symbols in its own solver
//! frame and counts its path in the ledger like the member's other checks.

use crate::rules::{Mode, Verifier, sort_of};
use crate::state::State;
use crate::state::heap::Heap;
use crate::state::term::{Sort, Term};
use crate::syntax::ast::{MemberKind, MemberRef, Type};
use std::rc::Rc;

impl<'p> Verifier<'p> {
    /// Check class member `r` against each interface member it implements.
    pub fn refinements(&mut self, r: MemberRef) {
        let m = &self.prog.classes[r.class].members[r.member];
        if !matches!(m.kind, MemberKind::Method | MemberKind::Pure) {
            return;
        }
        for i in self.info.implements.get(&r).cloned().unwrap_or_default() {
            if m.inherits == Some(i) {
                continue;
            }
            self.in_frame(|v| v.refines(r, i));
        }
    }

    fn refines(&mut self, r: MemberRef, i: MemberRef) {
        let m = &self.prog.classes[r.class].members[r.member];
        let im = &self.prog.classes[i.class].members[i.member];
        let class_name = self.info.member_names.get(&r).cloned().unwrap_or_default();
        let iface_name = self.info.member_names.get(&i).cloned().unwrap_or_default();
        let entry = self.entry_state(r);
        let Some(this) = entry.get("this").cloned() else { return };
        let args: Vec<Term> =
            m.params.iter().filter_map(|p| entry.get(&p.name.name).cloned()).collect();
        let istore = self.callee_store(i, Some(this.clone()), &args);
        let cstore = entry.store.clone();
        let mode = Mode::Consume { id: "override.unsound", call: Some(m.name.span) };
        let saved = (self.nest.mode, self.report.refining.take());
        self.nest.mode = mode;
        self.report.refining = Some(crate::rules::Refinement {
            class_member: class_name,
            iface_member: iface_name,
            side: "the class's precondition",
        });
        self.stats.ledger.started += 1;
        let snap = self.fresh("s", Sort::Snap);
        let start = State { heap: Heap::new(), old: Rc::new(Heap::new()), store: istore.clone() };
        self.produce_all(start, snap, &im.requires, &|v, s1, ()| {
            let old = Rc::new(s1.heap.clone());
            let cs = State { heap: s1.heap.clone(), old: old.clone(), store: cstore.clone() };
            v.set_refining_side("the class's precondition");
            if m.kind == MemberKind::Pure {
                let pre_heap = s1.heap.clone();
                v.consume_with(mode, cs, &m.requires, &|v, _rest, t| {
                    let Some(f) = v.info.funcs.get(&r).cloned() else {
                        return v.internal(&s1, m.name.span, "a pure method without a function");
                    };
                    let mut fargs = vec![t, this.clone()];
                    fargs.extend(args.iter().cloned());
                    let result = Term::app(&f, fargs);
                    let body = v.config.infer;
                    v.instantiate_call(&result, crate::rules::definition::FUEL, body, false);
                    v.assume_typed(&result, &m.ty, false);
                    let mut store = istore.clone();
                    store.insert_mut("result".into(), result);
                    let post = State { heap: pre_heap.clone(), old: old.clone(), store };
                    v.set_refining_side("the interface's postcondition");
                    v.consume_with(mode, post, &im.ensures, &|v, _, _| {
                        v.stats.ledger.completed += 1
                    });
                });
                return;
            }
            v.consume_with(mode, cs, &m.requires, &|v, rest, _| {
                let (mut cpost, mut ipost) = (cstore.clone(), istore.clone());
                if m.ty != Type::Void {
                    let res = v.fresh("result", sort_of(&m.ty));
                    v.assume_typed(&res, &m.ty, false);
                    cpost.insert_mut("result".into(), res.clone());
                    ipost.insert_mut("result".into(), res);
                }
                let after = State { heap: rest.heap, old: old.clone(), store: cpost };
                let snap = v.fresh("s", Sort::Snap);
                v.produce_all(after, snap, &m.ensures, &|v, s2, ()| {
                    let post = State { heap: s2.heap, old: old.clone(), store: ipost.clone() };
                    v.set_refining_side("the interface's postcondition");
                    v.consume_with(mode, post, &im.ensures, &|v, _, _| {
                        v.stats.ledger.completed += 1
                    });
                })
            });
        });
        self.nest.mode = saved.0;
        self.report.refining = saved.1;
    }

    fn set_refining_side(&mut self, side: &'static str) {
        if let Some(r) = &mut self.report.refining {
            r.side = side;
        }
    }
}
