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
use super::perm::{Bag, Instance, Loc, flatten, view_total};
use super::rat::Rat;
use super::value::{Heap, Value};
use super::{Cx, Interp, Locals, grow};
use crate::syntax::ast::{BinOp, Body, Expr, ExprKind, MemberKind, MemberRef};
use num_bigint::BigInt;
use num_traits::ToPrimitive;

/// How a consume takes permissions: every amount multiplied by `scale` (a predicate
/// body closed at an amount, LANGUAGE.md section 11), and in `read` mode (a pure
/// method's precondition) only checking that some positive amount is held.
#[derive(Clone, Debug)]
pub struct Mode {
    pub scale: Rat,
    pub read: bool,
}

impl Mode {
    pub fn exact() -> Mode {
        Mode { scale: Rat::one(), read: false }
    }

    pub fn read() -> Mode {
        Mode { scale: Rat::one(), read: true }
    }
}

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
        self.consume_all_in(cx, es, h2, out, &Mode::exact())
    }

    /// Consume several assertions in order, in `mode`.
    pub fn consume_all_in(
        &self,
        cx: &Cx<'_>,
        es: &'p [Expr],
        h2: &mut Bag,
        out: &mut Consumed,
        mode: &Mode,
    ) -> R<()> {
        for e in es {
            self.consume_in(cx, e, h2, out, mode)?;
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

    /// Check a pure method's precondition in read mode (LANGUAGE.md section 11).
    pub fn check_all_read(&self, cx: &Cx<'_>, es: &'p [Expr]) -> R<Consumed> {
        let mut h2 = flatten(cx.view);
        let mut out = Consumed::default();
        self.consume_all_in(cx, es, &mut h2, &mut out, &Mode::read())?;
        Ok(out)
    }

    pub fn consume(&self, cx: &Cx<'_>, a: &'p Expr, h2: &mut Bag, out: &mut Consumed) -> R<()> {
        self.consume_in(cx, a, h2, out, &Mode::exact())
    }

    pub fn consume_in(
        &self,
        cx: &Cx<'_>,
        a: &'p Expr,
        h2: &mut Bag,
        out: &mut Consumed,
        mode: &Mode,
    ) -> R<()> {
        self.tick()?;
        let _g = self.enter()?;
        grow(|| self.consume_kind(cx, a, h2, out, mode))
    }

    fn consume_kind(
        &self,
        cx: &Cx<'_>,
        a: &'p Expr,
        h2: &mut Bag,
        out: &mut Consumed,
        mode: &Mode,
    ) -> R<()> {
        let at = |s: Stop| s.in_conjunct(a.span);
        if !self.impure(a) && !matches!(a.kind, ExprKind::Binary { op: BinOp::And, .. }) {
            // `perm(..)` reads what is left of the state being consumed.
            let pcx = Cx { pview: Some(&*h2), ..*cx };
            let v = self.eval(&pcx, a).map_err(at)?;
            if !truth(&v) {
                return raw("assertion.false", a.span, "it is false").map_err(at);
            }
            return Ok(());
        }
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => {
                self.consume_in(cx, l, h2, out, mode)?;
                self.consume_in(cx, r, h2, out, mode)
            }
            ExprKind::Binary { op: BinOp::Implies, l, r } => {
                let c = truth(&self.eval(&Cx { pview: Some(&*h2), ..*cx }, l).map_err(at)?);
                if c {
                    self.consume_in(cx, r, h2, out, mode)?;
                }
                Ok(())
            }
            ExprKind::Cond { c, a: x, b: y } => {
                let c = truth(&self.eval(&Cx { pview: Some(&*h2), ..*cx }, c).map_err(at)?);
                if c {
                    self.consume_in(cx, x, h2, out, mode)
                } else {
                    self.consume_in(cx, y, h2, out, mode)
                }
            }
            ExprKind::Frac { acc, amount } => {
                let pcx = Cx { pview: Some(&*h2), ..*cx };
                let pi = self.amount_of(&pcx, amount, a).map_err(at)?;
                let pi = mode.scale.mul(&pi);
                self.consume_loc(cx, acc, a, &pi, h2, out, mode).map_err(at)
            }
            ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Call { .. } => {
                self.consume_loc(cx, a, a, &mode.scale, h2, out, mode).map_err(at)
            }
            ExprKind::Quant(q) => {
                let Some((elems, pi)) = self.segment(cx, q, a, Some(&*h2), mode).map_err(at)?
                else {
                    return Ok(());
                };
                for (o, k) in elems {
                    self.take_loc(cx, Loc::Elem(o, k), &pi, a, h2, out, mode).map_err(at)?;
                }
                Ok(())
            }
            ExprKind::Untouched(inner) => {
                let now = self.check_snapshot(cx, inner).map_err(at)?;
                let then = match cx.old {
                    Some(old) => {
                        let view = [&old.bag];
                        let ocx = cx.in_old(old, &view);
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
            _ => raw("internal.error", a.span, "an assertion that cannot be consumed").map_err(at),
        }
    }

    /// The elements a quantified permission `forall int i :: c ==> acc(a[i], p)` is
    /// about (LANGUAGE.md section 12), and its amount (scaled); `None` when the amount
    /// is `none`. Every index satisfying `c` must be in bounds and `a` not null when
    /// there is one. No finite range for `i` in `c`: no verdict.
    #[allow(clippy::type_complexity)]
    pub fn segment(
        &self,
        cx: &Cx<'_>,
        q: &'p crate::syntax::ast::Quant,
        a: &Expr,
        pview: Option<&Bag>,
        mode: &Mode,
    ) -> R<Option<(Vec<(usize, usize)>, Rat)>> {
        let [b] = q.vars.as_slice() else { return Err(Stop::OutOfSteps) };
        let ExprKind::Binary { op: BinOp::Implies, l: cond, r: body } = &q.body.kind else {
            return Err(Stop::OutOfSteps);
        };
        let (acc, amount) = match &body.kind {
            ExprKind::Frac { acc, amount } => (&**acc, Some(&**amount)),
            _ => (&**body, None),
        };
        let ExprKind::Acc(loc) = &acc.kind else { return Err(Stop::OutOfSteps) };
        let ExprKind::Index { arr, .. } = &loc.kind else { return Err(Stop::OutOfSteps) };
        let pcx = Cx { pview: pview.or(cx.pview), ..*cx };
        let av = self.eval(&pcx, arr)?;
        let pi = match amount {
            Some(x) => mode.scale.mul(&self.amount_of(&pcx, x, a)?),
            None => mode.scale.clone(),
        };
        let var = b.name.name.clone();
        let mut cons = vec![];
        super::quant::conjuncts(cond, &mut cons);
        let Some(ranges) = super::quant::ranges(std::slice::from_ref(&var), &cons) else {
            return Err(Stop::OutOfSteps);
        };
        let mut idx: Vec<BigInt> = vec![];
        let mut locals = cx.locals.clone();
        self.enumerate(&pcx, &ranges, &mut locals, &mut |it, l| {
            let ccx = Cx { locals: l, ..pcx };
            if truth(&it.eval(&ccx, cond)?)
                && let Some(Value::Int(i)) = l.get(&var)
            {
                idx.push(i.clone());
            }
            Ok(true)
        })?;
        if idx.is_empty() {
            return Ok(None);
        }
        let Value::Ref(o) = av else {
            return raw("receiver.null", a.span, "the array of a quantified permission is null");
        };
        let n = cx.heap.len_of(o).unwrap_or(0);
        let mut elems = Vec::with_capacity(idx.len());
        for i in idx {
            match i.to_usize().filter(|&k| k < n) {
                Some(k) => elems.push((o, k)),
                None => {
                    return raw(
                        "index.out.of.bounds",
                        a.span,
                        format!(
                            "the index {i} of the quantified permission is out of bounds for length {n}"
                        ),
                    );
                }
            }
        }
        if pi.is_zero() {
            return Ok(None);
        }
        Ok(Some((elems, pi)))
    }

    /// Consume the permission `loc` (`acc(e.f)`, `acc(a[i])`, `acc(a[*])`, a
    /// predicate instance) at amount `pi` (already scaled); failures at `a`.
    #[allow(clippy::too_many_arguments)]
    fn consume_loc(
        &self,
        cx: &Cx<'_>,
        loc: &'p Expr,
        a: &'p Expr,
        pi: &Rat,
        h2: &mut Bag,
        out: &mut Consumed,
        mode: &Mode,
    ) -> R<()> {
        match &loc.kind {
            ExprKind::Acc(f) => match &f.kind {
                ExprKind::Field { recv, field, class } => {
                    let r = self.eval(cx, recv)?;
                    if pi.is_zero() {
                        return Ok(());
                    }
                    let l = self.field_loc(&r, *class, &field.name, a)?;
                    self.take_loc(cx, l, pi, a, h2, out, mode)
                }
                ExprKind::Index { arr, idx } => {
                    let l = self.element(cx, arr, idx, a)?;
                    if pi.is_zero() {
                        return Ok(());
                    }
                    self.take_loc(cx, l, pi, a, h2, out, mode)
                }
                ExprKind::Call { .. } => self.consume_loc(cx, f, a, pi, h2, out, mode),
                _ => Err(Stop::OutOfSteps),
            },
            ExprKind::AccArray(arr) => match self.eval(cx, arr)? {
                Value::Ref(o) => {
                    let n = cx.heap.len_of(o).unwrap_or(0);
                    if pi.is_zero() {
                        return Ok(());
                    }
                    self.tick_n(n as u64)?;
                    for k in 0..n {
                        self.take_loc(cx, Loc::Elem(o, k), pi, a, h2, out, mode)?;
                    }
                    Ok(())
                }
                _ => raw("insufficient.permission", a.span, "the array is null"),
            },
            ExprKind::Call { .. } => {
                let (p, args) =
                    self.instance_args(cx, loc, Some(("insufficient.permission", a.span)))?;
                if pi.is_zero() {
                    return Ok(());
                }
                self.take_instance(cx.heap, p, args, pi, a, h2, out, mode)
            }
            _ => raw("internal.error", a.span, "an assertion that cannot be consumed"),
        }
    }

    /// The element `arr[idx]` of `acc(arr[idx], p)`: the array not null and the index
    /// in bounds (LANGUAGE.md section 12), reported at `a`.
    fn element(&self, cx: &Cx<'_>, arr: &'p Expr, idx: &'p Expr, a: &Expr) -> R<Loc> {
        let av = self.eval(cx, arr)?;
        let iv = self.eval(cx, idx)?;
        let Value::Ref(o) = av else {
            return raw("receiver.null", a.span, "the array is null");
        };
        let n = cx.heap.len_of(o).unwrap_or(0);
        let i = match iv {
            Value::Int(i) => i,
            _ => BigInt::from(-1),
        };
        match i.to_usize().filter(|&k| k < n) {
            Some(k) => Ok(Loc::Elem(o, k)),
            None => raw(
                "index.out.of.bounds",
                a.span,
                format!("index {i} is out of bounds for length {n}"),
            ),
        }
    }

    fn check_snapshot(&self, cx: &Cx<'_>, inner: &'p Expr) -> R<Vec<Value>> {
        let mut h2 = flatten(cx.view);
        let mut out = Consumed::default();
        self.consume(cx, inner, &mut h2, &mut out)?;
        Ok(out.snap)
    }

    /// Take `pi` of `loc` from `h2` into `out` (in read mode: check that some is held,
    /// and let `out` see all of it, removing nothing).
    #[allow(clippy::too_many_arguments)]
    fn take_loc(
        &self,
        cx: &Cx<'_>,
        loc: Loc,
        pi: &Rat,
        a: &Expr,
        h2: &mut Bag,
        out: &mut Consumed,
        mode: &Mode,
    ) -> R<()> {
        if mode.read {
            let held = h2.total(loc);
            if !held.is_positive() {
                return raw("insufficient.permission", a.span, "the permission is not held");
            }
            if !out.bag.holds(loc) {
                out.bag.add(loc, &held);
            }
        } else {
            if !h2.take(loc, pi) {
                return raw(
                    "insufficient.permission",
                    a.span,
                    format!("the permission is not held at amount {pi}"),
                );
            }
            out.bag.add(loc, pi);
        }
        match loc {
            Loc::Field(o, slot) => {
                out.snap.push(cx.heap.get(o, slot).cloned().unwrap_or(Value::Null))
            }
            Loc::Elem(o, k) => {
                out.snap.push(Value::int(k as i64));
                out.snap.push(cx.heap.get(o, k).cloned().unwrap_or(Value::Null));
            }
        }
        Ok(())
    }

    /// Take `pi` of a predicate instance from `h2`, closing what is missing from `h2`
    /// (inference 1 with amounts: the amount still missing is closed).
    #[allow(clippy::too_many_arguments)]
    fn take_instance(
        &self,
        heap: &Heap,
        p: MemberRef,
        args: Vec<Value>,
        pi: &Rat,
        a: &Expr,
        h2: &mut Bag,
        out: &mut Consumed,
        mode: &Mode,
    ) -> R<()> {
        if mode.read {
            if let Some(inst) = h2.copy_instance(p, &args) {
                out.snap.extend(self.instance_snapshot(heap, &inst)?);
                if !out.bag.holds_instance(p, &args) {
                    out.bag.preds.push(inst);
                }
                return Ok(());
            }
            // Read through the body: a close that changes nothing.
            let mut scratch = h2.clone();
            return match self.close(heap, p, &args, &mut scratch, mode) {
                Ok(got) => {
                    out.snap.extend(got.snap);
                    if !out.bag.holds_instance(p, &args) {
                        out.bag.preds.push(Instance {
                            pred: p,
                            args,
                            amount: Rat::one(),
                            contents: got.bag,
                        });
                    }
                    Ok(())
                }
                Err(Stop::Raw(r)) => raw(
                    "insufficient.permission",
                    a.span,
                    format!("no predicate instance, and its body does not hold: {}", r.message),
                ),
                Err(e) => Err(e),
            };
        }
        let held = h2.take_instance(p, &args, pi);
        let have = held.as_ref().map(|i| i.amount.clone()).unwrap_or_else(Rat::zero);
        let mut inst = held.unwrap_or(Instance {
            pred: p,
            args: args.clone(),
            amount: Rat::zero(),
            contents: Bag::default(),
        });
        if have < *pi {
            let missing = pi.sub(&have);
            let m = Mode { scale: missing.clone(), read: false };
            match self.close(heap, p, &args, h2, &m) {
                Ok(got) => {
                    inst.amount = inst.amount.add(&missing);
                    inst.contents.merge(got.bag);
                }
                Err(Stop::Raw(r)) => {
                    return raw(
                        "insufficient.permission",
                        a.span,
                        format!(
                            "the predicate instance is not held at amount {pi}, and closing it failed: {}",
                            r.message
                        ),
                    );
                }
                Err(e) => return Err(e),
            }
        }
        out.snap.extend(self.instance_snapshot(heap, &inst)?);
        out.bag.add_instance(inst);
        Ok(())
    }

    /// Close the amount `mode.scale` of the instance `p(args)` from `h2`: consume its
    /// body scaled by it (evaluated in `h2` as it is now); on failure `h2` is unchanged.
    pub fn close(
        &self,
        heap: &Heap,
        p: MemberRef,
        args: &[Value],
        h2: &mut Bag,
        mode: &Mode,
    ) -> R<Consumed> {
        let Some(body) = self.body_of(p) else {
            return Err(Stop::Rejected(super::exec::UNDISPATCHED.into()));
        };
        // Closing an instance that needs itself closed first never ends: no verdict.
        // Once is tried: the outer close has taken its body's permissions, so the inner
        // one fails when it needs them again (a cyclic list is not a list); only an
        // instance met a second time inside itself has no verdict.
        self.unfolding(p, args, 1, Stop::OutOfSteps, || {
            self.close_body(heap, p, body, args, h2, mode)
        })
    }

    /// Run `f` with the instance `p(args)` marked as being unfolded; `again` if it
    /// already is, more than `nested` times (an unfolding that keeps reaching its own
    /// instance has no finite end).
    fn unfolding<T>(
        &self,
        p: MemberRef,
        args: &[Value],
        nested: usize,
        again: Stop,
        f: impl FnOnce() -> R<T>,
    ) -> R<T> {
        let key = (p, args.to_vec());
        if self.unfolding.borrow().iter().filter(|k| **k == key).count() > nested {
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
        mode: &Mode,
    ) -> R<Consumed> {
        let locals = self.pred_locals(p, args);
        let before = h2.clone();
        let view = [&before];
        let cx = Cx { heap, view: &view, locals: &locals, old: None, pview: None };
        let mut work = h2.clone();
        let mut got = Consumed::default();
        self.consume_in(&cx, body, &mut work, &mut got, mode)?;
        *h2 = work;
        Ok(got)
    }

    /// The snapshot of a held instance: its body's values, consumed (scaled by its
    /// amount) from its contents.
    fn instance_snapshot(&self, heap: &Heap, inst: &Instance) -> R<Vec<Value>> {
        let Some(body) = self.body_of(inst.pred) else { return Ok(vec![]) };
        let locals = self.pred_locals(inst.pred, &inst.args);
        let view = [&inst.contents];
        let cx = Cx { heap, view: &view, locals: &locals, old: None, pview: None };
        let mut h2 = inst.contents.clone();
        let mut got = Consumed::default();
        // Only the values matter: read mode takes whatever part is there.
        match self.consume_in(&cx, body, &mut h2, &mut got, &Mode::read()) {
            Ok(()) => Ok(got.snap),
            Err(Stop::OutOfSteps) => Err(Stop::OutOfSteps),
            Err(_) => {
                // Cannot happen for an instance that was closed here; a fallback that
                // still compares the covered values.
                let mut locs = vec![];
                inst.contents.all_locs(&mut locs);
                locs.sort();
                locs.dedup();
                Ok(locs
                    .into_iter()
                    .filter_map(|l| match l {
                        Loc::Field(o, s) => heap.get(o, s).cloned(),
                        Loc::Elem(o, k) => heap.get(o, k).cloned(),
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
        self.produce_scaled(heap, a, target, outer, locals, &Rat::one())
    }

    /// Produce `a` with every amount multiplied by `scale`.
    pub fn produce_scaled(
        &self,
        heap: &Heap,
        a: &'p Expr,
        target: &mut Bag,
        outer: &[&Bag],
        locals: &Locals,
        scale: &Rat,
    ) -> R<()> {
        self.tick()?;
        let _g = self.enter()?;
        grow(|| self.produce_kind(heap, a, target, outer, locals, scale))
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
        let cx = Cx { heap, view: &view, locals, old: None, pview: None };
        self.eval(&cx, e)
    }

    fn produce_kind(
        &self,
        heap: &Heap,
        a: &'p Expr,
        target: &mut Bag,
        outer: &[&Bag],
        locals: &Locals,
        scale: &Rat,
    ) -> R<()> {
        if !self.impure(a) {
            let v = self.eval_in(heap, a, target, outer, locals)?;
            if truth(&v) {
                return Ok(());
            }
            if self.repairing.get() && self.repair.borrow().is_none() {
                let view: Vec<&Bag> = outer.iter().copied().chain([&*target]).collect();
                let cx = Cx { heap, view: &view, locals, old: None, pview: None };
                let r = self.repair_of(&cx, a);
                *self.repair.borrow_mut() = r;
            }
            return Err(Stop::Rejected("a fact is false".into()));
        }
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => {
                self.produce_scaled(heap, l, target, outer, locals, scale)?;
                self.produce_scaled(heap, r, target, outer, locals, scale)
            }
            ExprKind::Binary { op: BinOp::Implies, l, r } => {
                if truth(&self.eval_in(heap, l, target, outer, locals)?) {
                    self.produce_scaled(heap, r, target, outer, locals, scale)?;
                }
                Ok(())
            }
            ExprKind::Cond { c, a: x, b: y } => {
                if truth(&self.eval_in(heap, c, target, outer, locals)?) {
                    self.produce_scaled(heap, x, target, outer, locals, scale)
                } else {
                    self.produce_scaled(heap, y, target, outer, locals, scale)
                }
            }
            ExprKind::Frac { acc, amount } => {
                let pi = {
                    let view: Vec<&Bag> = outer.iter().copied().chain([&*target]).collect();
                    let cx = Cx { heap, view: &view, locals, old: None, pview: None };
                    self.amount_of(&cx, amount, a)?
                };
                let pi = scale.mul(&pi);
                self.produce_loc(heap, acc, a, &pi, target, outer, locals)
            }
            ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Call { .. } => {
                self.produce_loc(heap, a, a, scale, target, outer, locals)
            }
            ExprKind::Quant(q) => {
                let got = {
                    let view: Vec<&Bag> = outer.iter().copied().chain([&*target]).collect();
                    let cx = Cx { heap, view: &view, locals, old: None, pview: None };
                    let mode = Mode { scale: scale.clone(), read: false };
                    self.segment(&cx, q, a, None, &mode)?
                };
                if let Some((elems, pi)) = got {
                    for (o, k) in elems {
                        self.add_produced(Loc::Elem(o, k), &pi, target, outer)?;
                    }
                }
                Ok(())
            }
            // `untouched` stands only in postconditions, which are never produced here.
            ExprKind::Untouched(_) => Ok(()),
            _ => raw("internal.error", a.span, "an assertion that cannot be produced"),
        }
    }

    /// Produce the permission `loc` at amount `pi` (already scaled).
    #[allow(clippy::too_many_arguments)]
    fn produce_loc(
        &self,
        heap: &Heap,
        loc: &'p Expr,
        a: &'p Expr,
        pi: &Rat,
        target: &mut Bag,
        outer: &[&Bag],
        locals: &Locals,
    ) -> R<()> {
        match &loc.kind {
            ExprKind::Acc(f) => match &f.kind {
                ExprKind::Field { recv, field, class } => {
                    let r = self.eval_in(heap, recv, target, outer, locals)?;
                    if pi.is_zero() {
                        return Ok(());
                    }
                    let Value::Ref(_) = r else {
                        return Err(Stop::Rejected("acc of null".into()));
                    };
                    let l = self.field_loc(&r, *class, &field.name, a)?;
                    self.add_produced(l, pi, target, outer)
                }
                ExprKind::Index { arr, idx } => {
                    let l = {
                        let view: Vec<&Bag> = outer.iter().copied().chain([&*target]).collect();
                        let cx = Cx { heap, view: &view, locals, old: None, pview: None };
                        self.element(&cx, arr, idx, a)?
                    };
                    self.add_produced(l, pi, target, outer)
                }
                ExprKind::Call { .. } => self.produce_loc(heap, f, a, pi, target, outer, locals),
                _ => Err(Stop::OutOfSteps),
            },
            ExprKind::AccArray(arr) => match self.eval_in(heap, arr, target, outer, locals)? {
                Value::Ref(o) => {
                    let n = heap.len_of(o).unwrap_or(0);
                    self.tick_n(n as u64)?;
                    for k in 0..n {
                        self.add_produced(Loc::Elem(o, k), pi, target, outer)?;
                    }
                    Ok(())
                }
                _ => Err(Stop::Rejected("acc of a null array".into())),
            },
            ExprKind::Call { .. } => {
                let (p, args) = {
                    let view: Vec<&Bag> = outer.iter().copied().chain([&*target]).collect();
                    let cx = Cx { heap, view: &view, locals, old: None, pview: None };
                    self.instance_args(&cx, loc, None)?
                };
                if pi.is_zero() {
                    return Ok(());
                }
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
                    self.unfolding(p, &args, 0, again, || {
                        self.produce_scaled(heap, body, &mut inner, &outer2, &pl, pi)
                            .map_err(|s| s.not_wellformed(p))
                    })?;
                }
                target.add_instance(Instance {
                    pred: p,
                    args,
                    amount: pi.clone(),
                    contents: inner,
                });
                Ok(())
            }
            _ => raw("internal.error", a.span, "an assertion that cannot be produced"),
        }
    }

    /// Add `pi` of `loc` to an input state: more than `write` of one location in the
    /// whole state is not a state (LANGUAGE.md section 11).
    fn add_produced(&self, loc: Loc, pi: &Rat, target: &mut Bag, outer: &[&Bag]) -> R<()> {
        if pi.is_zero() {
            return Ok(());
        }
        let held = view_total(outer, loc).add(&target.total(loc));
        if held.add(pi) > Rat::one() {
            return Err(Stop::Rejected("a location is held at more than write".into()));
        }
        target.add(loc, pi);
        Ok(())
    }
}
