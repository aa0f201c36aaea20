//! Assertions on concrete states: `consume` checks an assertion and removes the
//! permissions it demands (returning them and its snapshot: the values it covers),
//! `produce` builds the permissions of an input state from a precondition.
//!
//! Architecture invariant: as in the paper's Figure 7, a consume evaluates every
//! expression in the state as it was when the consume began (the `view`) and removes
//! from what is left (`h2`); `&&` is separating. A missing predicate instance is
//! closed when its body can be consumed (tentatively, on a copy: a failed close leaves
//! `h2` as it was). Production is only for input states: a false fact or a location
//! produced twice is a [`Stop::Rejected`] input, never a failure.

use super::error::{R, Stop, raw};
use super::eval::truth;
use super::perm::{Bag, Instance, Loc, flatten, view_holds};
use super::value::{Heap, Value};
use super::{Cx, Interp, Locals, grow};
use crate::syntax::ast::{BinOp, Body, Expr, ExprKind, MemberKind, MemberRef};

/// What a consume removed, and the values it covered in order (its snapshot).
#[derive(Clone, Debug, Default)]
pub struct Consumed {
    pub bag: Bag,
    pub snap: Vec<Value>,
}

impl<'p> Interp<'p> {
    /// Does the assertion hold permissions (in a position where they may stand)?
    pub fn impure(&self, a: &Expr) -> bool {
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => self.impure(l) || self.impure(r),
            ExprKind::Binary { op: BinOp::Implies, r, .. } => self.impure(r),
            ExprKind::Cond { a, b, .. } => self.impure(a) || self.impure(b),
            ExprKind::Acc(_)
            | ExprKind::AccArray(_)
            | ExprKind::Untouched(_)
            | ExprKind::Frac { .. } => true,
            // Quantified permissions (section 12) are not interpreted yet: no verdict.
            ExprKind::Quant(q) => q.permission,
            ExprKind::Call { target: Some(t), .. } => {
                self.member(*t).is_some_and(|m| m.kind == MemberKind::Predicate)
            }
            _ => false,
        }
    }

    pub fn body_of(&self, p: MemberRef) -> Option<&'p Expr> {
        match self.member(p).map(|m| &m.body) {
            Some(Body::Return(e)) => Some(e),
            _ => None,
        }
    }

    /// Consume several assertions in order.
    pub fn consume_all(
        &self,
        cx: &Cx<'_>,
        es: &'p [Expr],
        h2: &mut Bag,
        out: &mut Consumed,
    ) -> R<()> {
        for e in es {
            self.consume(cx, e, h2, out)?;
        }
        Ok(())
    }

    /// Check assertions without removing anything from the state in view.
    pub fn check_all(&self, cx: &Cx<'_>, es: &'p [Expr]) -> R<Consumed> {
        let mut h2 = flatten(cx.view);
        let mut out = Consumed::default();
        self.consume_all(cx, es, &mut h2, &mut out)?;
        Ok(out)
    }

    pub fn consume(&self, cx: &Cx<'_>, a: &'p Expr, h2: &mut Bag, out: &mut Consumed) -> R<()> {
        self.tick()?;
        let _g = self.enter()?;
        grow(|| self.consume_kind(cx, a, h2, out))
    }

    fn consume_kind(&self, cx: &Cx<'_>, a: &'p Expr, h2: &mut Bag, out: &mut Consumed) -> R<()> {
        let at = |s: Stop| s.in_conjunct(a.span);
        if !self.impure(a) && !matches!(a.kind, ExprKind::Binary { op: BinOp::And, .. }) {
            let v = self.eval(cx, a).map_err(at)?;
            if !truth(&v) {
                return raw("assertion.false", a.span, "it is false").map_err(at);
            }
            return Ok(());
        }
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => {
                self.consume(cx, l, h2, out)?;
                self.consume(cx, r, h2, out)
            }
            ExprKind::Binary { op: BinOp::Implies, l, r } => {
                if truth(&self.eval(cx, l).map_err(at)?) {
                    self.consume(cx, r, h2, out)?;
                }
                Ok(())
            }
            ExprKind::Cond { c, a: x, b: y } => {
                if truth(&self.eval(cx, c).map_err(at)?) {
                    self.consume(cx, x, h2, out)
                } else {
                    self.consume(cx, y, h2, out)
                }
            }
            ExprKind::Acc(f) => {
                let ExprKind::Field { recv, field, class } = &f.kind else {
                    return Err(at(Stop::OutOfSteps));
                };
                let r = self.eval(cx, recv).map_err(at)?;
                let loc = self.field_loc(&r, *class, &field.name, a).map_err(at)?;
                self.take_loc(cx, loc, a, h2, out).map_err(at)
            }
            ExprKind::AccArray(arr) => match self.eval(cx, arr).map_err(at)? {
                Value::Ref(o) => self.take_loc(cx, Loc::Array(o), a, h2, out).map_err(at),
                _ => raw("insufficient.permission", a.span, "the array is null").map_err(at),
            },
            ExprKind::Call { .. } => {
                let (p, args) = self
                    .instance_args(cx, a, Some(("insufficient.permission", a.span)))
                    .map_err(at)?;
                self.take_instance(cx.heap, p, args, a, h2, out).map_err(at)
            }
            ExprKind::Untouched(inner) => {
                let now = self.check_snapshot(cx, inner).map_err(at)?;
                let then = match cx.old {
                    Some(old) => {
                        let view = [&old.bag];
                        let ocx =
                            Cx { heap: &old.heap, view: &view, locals: cx.locals, old: cx.old };
                        self.check_snapshot(&ocx, inner).map_err(at)?
                    }
                    None => now.clone(),
                };
                if now != then {
                    return raw("assertion.false", a.span, "the locations have changed")
                        .map_err(at);
                }
                Ok(())
            }
            // Amounts and segments (sections 11, 12) are not interpreted yet: no verdict.
            ExprKind::Quant(_) | ExprKind::Frac { .. } => Err(Stop::OutOfSteps),
            _ => raw("internal.error", a.span, "an assertion that cannot be consumed").map_err(at),
        }
    }

    fn check_snapshot(&self, cx: &Cx<'_>, inner: &'p Expr) -> R<Vec<Value>> {
        let mut h2 = flatten(cx.view);
        let mut out = Consumed::default();
        self.consume(cx, inner, &mut h2, &mut out)?;
        Ok(out.snap)
    }

    fn take_loc(&self, cx: &Cx<'_>, loc: Loc, a: &Expr, h2: &mut Bag, out: &mut Consumed) -> R<()> {
        if !h2.take(loc) {
            return raw("insufficient.permission", a.span, "the permission is not held");
        }
        out.bag.locs.insert(loc);
        match loc {
            Loc::Field(o, slot) => {
                out.snap.push(cx.heap.get(o, slot).cloned().unwrap_or(Value::Null))
            }
            Loc::Array(o) => {
                let elems = cx.heap.objects.get(o).map(|x| x.slots.clone()).unwrap_or_default();
                out.snap.push(Value::int(elems.len() as i64));
                out.snap.extend(elems);
            }
        }
        Ok(())
    }

    /// Take a predicate instance from `h2`, or close it from `h2` (inference).
    fn take_instance(
        &self,
        heap: &Heap,
        p: MemberRef,
        args: Vec<Value>,
        a: &Expr,
        h2: &mut Bag,
        out: &mut Consumed,
    ) -> R<()> {
        if let Some(inst) = h2.take_instance(p, &args) {
            out.snap.extend(self.instance_snapshot(heap, &inst)?);
            out.bag.preds.push(inst);
            return Ok(());
        }
        match self.close(heap, p, &args, h2) {
            Ok(got) => {
                out.snap.extend(got.snap);
                out.bag.preds.push(Instance { pred: p, args, contents: got.bag });
                Ok(())
            }
            Err(Stop::Raw(r)) => raw(
                "insufficient.permission",
                a.span,
                format!("no predicate instance, and closing it failed: {}", r.message),
            ),
            Err(e) => Err(e),
        }
    }

    /// Close the instance `p(args)` from `h2`: consume its body (evaluated in `h2` as
    /// it is now); on failure `h2` is unchanged.
    pub fn close(&self, heap: &Heap, p: MemberRef, args: &[Value], h2: &mut Bag) -> R<Consumed> {
        let Some(body) = self.body_of(p) else {
            return Err(Stop::Rejected(super::exec::UNDISPATCHED.into()));
        };
        // Closing an instance that needs itself closed first never ends: no verdict.
        self.unfolding(p, args, Stop::OutOfSteps, || self.close_body(heap, p, body, args, h2))
    }

    /// Run `f` with the instance `p(args)` marked as being unfolded; `again` if it
    /// already is (an unfolding that reaches its own instance has no finite end).
    fn unfolding<T>(
        &self,
        p: MemberRef,
        args: &[Value],
        again: Stop,
        f: impl FnOnce() -> R<T>,
    ) -> R<T> {
        let key = (p, args.to_vec());
        if self.unfolding.borrow().contains(&key) {
            return Err(again);
        }
        self.unfolding.borrow_mut().push(key);
        let r = f();
        self.unfolding.borrow_mut().pop();
        r
    }

    fn close_body(
        &self,
        heap: &Heap,
        p: MemberRef,
        body: &'p Expr,
        args: &[Value],
        h2: &mut Bag,
    ) -> R<Consumed> {
        let locals = self.pred_locals(p, args);
        let before = h2.clone();
        let view = [&before];
        let cx = Cx { heap, view: &view, locals: &locals, old: None };
        let mut work = h2.clone();
        let mut got = Consumed::default();
        self.consume(&cx, body, &mut work, &mut got)?;
        *h2 = work;
        Ok(got)
    }

    /// The snapshot of a held instance: its body's values, consumed from its contents.
    fn instance_snapshot(&self, heap: &Heap, inst: &Instance) -> R<Vec<Value>> {
        let Some(body) = self.body_of(inst.pred) else { return Ok(vec![]) };
        let locals = self.pred_locals(inst.pred, &inst.args);
        let view = [&inst.contents];
        let cx = Cx { heap, view: &view, locals: &locals, old: None };
        let mut h2 = inst.contents.clone();
        let mut got = Consumed::default();
        match self.consume(&cx, body, &mut h2, &mut got) {
            Ok(()) => Ok(got.snap),
            Err(Stop::OutOfSteps) => Err(Stop::OutOfSteps),
            Err(_) => {
                // Cannot happen for an instance that was closed here; a fallback that
                // still compares the covered values.
                let mut locs = vec![];
                inst.contents.all_locs(&mut locs);
                locs.sort();
                Ok(locs
                    .into_iter()
                    .filter_map(|l| match l {
                        Loc::Field(o, s) => heap.get(o, s).cloned(),
                        Loc::Array(o) => heap.len_of(o).map(|n| Value::int(n as i64)),
                    })
                    .collect())
            }
        }
    }

    /// Produce several assertions into `target` (an input state).
    pub fn produce_all(
        &self,
        heap: &Heap,
        es: &'p [Expr],
        target: &mut Bag,
        locals: &Locals,
    ) -> R<()> {
        for e in es {
            self.produce(heap, e, target, &[], locals)?;
        }
        Ok(())
    }

    /// Produce `a` into `target`; expressions read `outer` and `target`.
    pub fn produce(
        &self,
        heap: &Heap,
        a: &'p Expr,
        target: &mut Bag,
        outer: &[&Bag],
        locals: &Locals,
    ) -> R<()> {
        self.tick()?;
        let _g = self.enter()?;
        grow(|| self.produce_kind(heap, a, target, outer, locals))
    }

    fn eval_in(
        &self,
        heap: &Heap,
        e: &'p Expr,
        target: &Bag,
        outer: &[&Bag],
        locals: &Locals,
    ) -> R<Value> {
        let view: Vec<&Bag> = outer.iter().copied().chain([target]).collect();
        let cx = Cx { heap, view: &view, locals, old: None };
        self.eval(&cx, e)
    }

    fn produce_kind(
        &self,
        heap: &Heap,
        a: &'p Expr,
        target: &mut Bag,
        outer: &[&Bag],
        locals: &Locals,
    ) -> R<()> {
        if !self.impure(a) {
            let v = self.eval_in(heap, a, target, outer, locals)?;
            return if truth(&v) { Ok(()) } else { Err(Stop::Rejected("a fact is false".into())) };
        }
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => {
                self.produce(heap, l, target, outer, locals)?;
                self.produce(heap, r, target, outer, locals)
            }
            ExprKind::Binary { op: BinOp::Implies, l, r } => {
                if truth(&self.eval_in(heap, l, target, outer, locals)?) {
                    self.produce(heap, r, target, outer, locals)?;
                }
                Ok(())
            }
            ExprKind::Cond { c, a: x, b: y } => {
                if truth(&self.eval_in(heap, c, target, outer, locals)?) {
                    self.produce(heap, x, target, outer, locals)
                } else {
                    self.produce(heap, y, target, outer, locals)
                }
            }
            ExprKind::Acc(f) => {
                let ExprKind::Field { recv, field, class } = &f.kind else {
                    return Err(Stop::OutOfSteps);
                };
                let r = self.eval_in(heap, recv, target, outer, locals)?;
                let Value::Ref(_) = r else { return Err(Stop::Rejected("acc of null".into())) };
                let loc = self.field_loc(&r, *class, &field.name, a)?;
                self.add_produced(loc, target, outer)
            }
            ExprKind::AccArray(arr) => match self.eval_in(heap, arr, target, outer, locals)? {
                Value::Ref(o) => self.add_produced(Loc::Array(o), target, outer),
                _ => Err(Stop::Rejected("acc of a null array".into())),
            },
            ExprKind::Call { .. } => {
                let (p, args) = {
                    let view: Vec<&Bag> = outer.iter().copied().chain([&*target]).collect();
                    let cx = Cx { heap, view: &view, locals, old: None };
                    self.instance_args(&cx, a, None)?
                };
                let Some(body) = self.body_of(p) else {
                    return Err(Stop::Rejected(super::exec::UNDISPATCHED.into()));
                };
                if matches!(args.first(), Some(Value::Null))
                    && self.member(p).is_some_and(|m| !m.is_static)
                {
                    return Err(Stop::Rejected("a predicate instance of null".into()));
                }
                let pl = self.pred_locals(p, &args);
                let mut inner = Bag::default();
                {
                    let outer2: Vec<&Bag> = outer.iter().copied().chain([&*target]).collect();
                    // An instance met again inside its own unfolding has no finite
                    // model: no input state holds it.
                    let again = Stop::Rejected("a predicate instance that holds itself".into());
                    self.unfolding(p, &args, again, || {
                        self.produce(heap, body, &mut inner, &outer2, &pl)
                            .map_err(|s| s.not_wellformed(p))
                    })?;
                }
                target.preds.push(Instance { pred: p, args, contents: inner });
                Ok(())
            }
            // `untouched` stands only in postconditions, which are never produced here.
            ExprKind::Untouched(_) => Ok(()),
            ExprKind::Quant(_) | ExprKind::Frac { .. } => Err(Stop::OutOfSteps),
            _ => raw("internal.error", a.span, "an assertion that cannot be produced"),
        }
    }

    fn add_produced(&self, loc: Loc, target: &mut Bag, outer: &[&Bag]) -> R<()> {
        if view_holds(outer, loc) || !target.add(loc) {
            return Err(Stop::Rejected("a location is held twice".into()));
        }
        Ok(())
    }
}
