//! Evaluating expressions on concrete values: Java's truncating `/` and `%` on
//! unbounded integers, short-circuit `&&`, `||`, `==>` and `?:`, field and array reads
//! checked against the permissions in view, `old`, `opening`, `using`, and pure calls
//! (precondition consumed for the callee's view, body run, `ensures` checked).
//!
//! Architecture invariant: evaluation never changes the heap or any bag. A failure is
//! [`Raw`](super::error::Raw) at the offending sub-expression, except inside a pure
//! body (final, `not.wellformed` of that pure method) and a pure postcondition (final,
//! `postcondition.violated` of that pure method).

use super::error::{Ctx, R, Stop, raw};
use super::perm::{Bag, Loc, flatten, view_holds, view_instance_total, view_total};
use super::rat::Rat;
use super::value::Value;
use super::{Cx, Interp, grow};
use crate::syntax::ast::{
    BinOp, Body, CallRecv, Expr, ExprKind, MemberKind, MemberRef, QuantKind, Type, UnOp,
};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use std::rc::Rc;

/// The largest integers arithmetic works on (in bits, both operands together).
const MAX_BITS: u64 = 1 << 20;

/// The boolean a checked boolean expression yields.
pub fn truth(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

fn int_of(v: Value) -> BigInt {
    match v {
        Value::Int(n) => n,
        _ => BigInt::zero(),
    }
}

impl<'p> Interp<'p> {
    pub fn eval(&self, cx: &Cx<'_>, e: &'p Expr) -> R<Value> {
        self.tick()?;
        let _g = self.enter()?;
        grow(|| self.eval_kind(cx, e))
    }

    fn local(&self, cx: &Cx<'_>, x: &str, e: &Expr) -> R<Value> {
        match cx.locals.get(x) {
            Some(v) => Ok(v.clone()),
            None => raw("internal.error", e.span, format!("no value for `{x}`")),
        }
    }

    fn eval_kind(&self, cx: &Cx<'_>, e: &'p Expr) -> R<Value> {
        match &e.kind {
            ExprKind::Quant(q) if !q.permission => self.quantifier(cx, q),
            ExprKind::Quant(_) => {
                raw("internal.error", e.span, "a quantified permission in an expression")
            }
            ExprKind::SeqLit { .. }
            | ExprKind::SeqLen(_)
            | ExprKind::SeqIndex { .. }
            | ExprKind::Slice { .. }
            | ExprKind::SeqConcat(..)
            | ExprKind::SeqContains { .. }
            | ExprKind::SeqUpdated { .. } => self.sequence(cx, e),
            ExprKind::Int(n) => Ok(Value::int(*n)),
            ExprKind::BigInt(s) => Ok(Value::Int(s.parse::<BigInt>().unwrap_or_default())),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Null => Ok(Value::Null),
            ExprKind::This => self.local(cx, "this", e),
            ExprKind::Result => self.local(cx, "result", e),
            ExprKind::Local(x) | ExprKind::Name(x) => self.local(cx, x, e),
            ExprKind::Field { recv, field, class } => {
                let r = self.eval(cx, recv)?;
                let loc = self.field_loc(&r, *class, &field.name, e)?;
                self.read(cx, loc, e)
            }
            ExprKind::Length(a) => match self.eval(cx, a)? {
                Value::Ref(o) => match cx.heap.len_of(o) {
                    Some(n) => Ok(Value::int(n as i64)),
                    None => raw("internal.error", a.span, "not an array"),
                },
                _ => raw("receiver.null", a.span, "the array is null"),
            },
            ExprKind::Index { arr, idx } => {
                let a = self.eval(cx, arr)?;
                let i = int_of(self.eval(cx, idx)?);
                let Value::Ref(o) = a else {
                    return raw("insufficient.permission", e.span, "the array is null");
                };
                let n = cx.heap.len_of(o).unwrap_or(0);
                let k = i.to_usize().filter(|&k| k < n);
                if let Some(k) = k
                    && view_holds(cx.view, Loc::Elem(o, k))
                {
                    return Ok(cx.heap.get(o, k).cloned().unwrap_or(Value::Null));
                }
                // As the verifier without segments: no permission to the array at all
                // comes before the bounds.
                if n > 0 && !(0..n).any(|j| view_holds(cx.view, Loc::Elem(o, j))) {
                    return raw(
                        "insufficient.permission",
                        e.span,
                        "no permission to any of the array's elements",
                    );
                }
                let Some(k) = k else {
                    return raw(
                        "index.out.of.bounds",
                        e.span,
                        format!("index {i} is out of bounds for length {n}"),
                    );
                };
                raw(
                    "insufficient.permission",
                    e.span,
                    format!("no permission to read element {k} of the array"),
                )
            }
            ExprKind::Call { recv, args, target: Some(t), .. } => {
                let recv_v = self.receiver(cx, recv, e)?;
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(cx, a)?);
                }
                self.pure_call(cx, *t, recv_v, vals, e)
            }
            ExprKind::Call { target: None, .. } => raw("internal.error", e.span, "unresolved call"),
            ExprKind::Unary { op, e: x } => {
                let v = self.eval(cx, x)?;
                Ok(match (op, v) {
                    (UnOp::Not, v) => Value::Bool(!truth(&v)),
                    (UnOp::Neg, Value::Perm(r)) => Value::Perm(r.neg()),
                    (UnOp::Neg, v) => Value::Int(-int_of(v)),
                })
            }
            ExprKind::Binary { op, l, r } => self.binary(cx, *op, l, r, e),
            ExprKind::Cond { c, a, b } => {
                if truth(&self.eval(cx, c)?) {
                    self.eval(cx, a)
                } else {
                    self.eval(cx, b)
                }
            }
            ExprKind::Old(x) => match cx.old {
                Some(old) => {
                    let view = [&old.bag];
                    let ocx = cx.in_old(old, &view);
                    self.eval(&ocx, x)
                }
                None => self.eval(cx, x),
            },
            ExprKind::Opening { pred, body } => {
                self.instance_present(cx, pred, e)?;
                self.eval(cx, body)
            }
            ExprKind::Using { call, body } => {
                self.eval(cx, call)?;
                self.eval(cx, body)
            }
            ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Untouched(_) => {
                raw("internal.error", e.span, "a permission in an expression")
            }
            ExprKind::Write => Ok(Value::int(1)),
            ExprKind::NoPerm => Ok(Value::int(0)),
            ExprKind::PermOf(loc) => self.perm_of(cx, loc),
            ExprKind::Frac { .. } => raw("internal.error", e.span, "a permission in an expression"),
        }
    }

    fn binary(&self, cx: &Cx<'_>, op: BinOp, l: &'p Expr, r: &'p Expr, e: &Expr) -> R<Value> {
        let lv = self.eval(cx, l)?;
        match op {
            BinOp::And if !truth(&lv) => return Ok(Value::Bool(false)),
            BinOp::Or if truth(&lv) => return Ok(Value::Bool(true)),
            BinOp::Implies if !truth(&lv) => return Ok(Value::Bool(true)),
            BinOp::And | BinOp::Or | BinOp::Implies => {
                return Ok(Value::Bool(truth(&self.eval(cx, r)?)));
            }
            _ => {}
        }
        let rv = self.eval(cx, r)?;
        match op {
            BinOp::Eq => return Ok(Value::Bool(lv == rv)),
            BinOp::Ne => return Ok(Value::Bool(lv != rv)),
            _ => {}
        }
        // Amounts (LANGUAGE.md section 11): exact rationals where a `perm` is involved;
        // `/` is exact division exactly when the expression or an operand is a `perm`.
        let exact = e.ty == Type::Perm || l.ty == Type::Perm || r.ty == Type::Perm;
        if exact || matches!(lv, Value::Perm(_)) || matches!(rv, Value::Perm(_)) {
            let (Some(a), Some(b)) = (lv.rat(), rv.rat()) else {
                return raw("internal.error", e.span, "an amount that is not a number");
            };
            if a.bits() + b.bits() > MAX_BITS {
                return Err(Stop::OutOfSteps);
            }
            return Ok(match op {
                BinOp::Add => Value::amount(a.add(&b)),
                BinOp::Sub => Value::amount(a.sub(&b)),
                BinOp::Mul => Value::amount(a.mul(&b)),
                BinOp::Div => match a.div(&b) {
                    Some(q) => Value::amount(q),
                    None => return raw("division.by.zero", e.span, "the divisor is zero"),
                },
                BinOp::Lt => Value::Bool(a < b),
                BinOp::Le => Value::Bool(a <= b),
                BinOp::Gt => Value::Bool(a > b),
                BinOp::Ge => Value::Bool(a >= b),
                _ => return raw("internal.error", e.span, "unexpected operator on amounts"),
            });
        }
        let (a, b) = (int_of(lv), int_of(rv));
        if a.bits() + b.bits() > MAX_BITS {
            // Integers this large only come from runaway loops: a budget, not a verdict.
            return Err(Stop::OutOfSteps);
        }
        Ok(match op {
            BinOp::Add => Value::Int(a + b),
            BinOp::Sub => Value::Int(a - b),
            BinOp::Mul => Value::Int(a * b),
            BinOp::Div | BinOp::Mod => {
                if b.is_zero() {
                    return raw("division.by.zero", e.span, "the divisor is zero");
                }
                // BigInt's `/` and `%` truncate toward zero, as Java's do.
                if op == BinOp::Div { Value::Int(a / b) } else { Value::Int(a % b) }
            }
            BinOp::Lt => Value::Bool(a < b),
            BinOp::Le => Value::Bool(a <= b),
            BinOp::Gt => Value::Bool(a > b),
            BinOp::Ge => Value::Bool(a >= b),
            _ => return raw("internal.error", e.span, "unexpected operator"),
        })
    }

    /// The location of field `name` (declared in class `class`) of the object `r`.
    pub fn field_loc(&self, r: &Value, class: Option<usize>, name: &str, e: &Expr) -> R<Loc> {
        let Value::Ref(o) = r else {
            return raw(
                "insufficient.permission",
                e.span,
                format!("no permission to access `{name}` of null"),
            );
        };
        match class.and_then(|c| self.layout.slot(c, name)) {
            Some(slot) => Ok(Loc::Field(*o, slot)),
            None => raw("internal.error", e.span, format!("unknown field `{name}`")),
        }
    }

    /// Read a field location held in view.
    fn read(&self, cx: &Cx<'_>, loc: Loc, e: &Expr) -> R<Value> {
        let Loc::Field(o, slot) = loc else {
            return raw("internal.error", e.span, "not a field");
        };
        if !view_holds(cx.view, loc) {
            return raw(
                "insufficient.permission",
                e.span,
                format!("no permission to read `{}`", self.field_name(o, slot, &cx.heap.objects)),
            );
        }
        Ok(cx.heap.get(o, slot).cloned().unwrap_or(Value::Null))
    }

    pub fn field_name(&self, o: usize, slot: usize, objs: &[super::Object]) -> String {
        let class = match objs.get(o).map(|x| &x.kind) {
            Some(super::value::ObjKind::Class(Some(c))) => *c,
            _ => return format!("o{o}.?"),
        };
        let f = self.layout.field_names[class].get(slot).cloned().unwrap_or_default();
        format!("o{o}.{f}")
    }

    /// A call's receiver: `None` for static members; a null one is `receiver.null`.
    pub fn receiver(&self, cx: &Cx<'_>, recv: &'p CallRecv, call: &Expr) -> R<Option<Value>> {
        match recv {
            CallRecv::Expr(r) => match self.eval(cx, r)? {
                Value::Null => raw("receiver.null", call.span, "the receiver is null"),
                v => Ok(Some(v)),
            },
            CallRecv::Static(_) | CallRecv::Implicit => Ok(None),
        }
    }

    /// A predicate call's receiver and arguments, receiver first.
    pub fn instance_args(
        &self,
        cx: &Cx<'_>,
        call: &'p Expr,
        null: Option<(&'static str, crate::syntax::ast::Span)>,
    ) -> R<(MemberRef, Vec<Value>)> {
        let ExprKind::Call { recv, args, target: Some(t), .. } = &call.kind else {
            return raw("internal.error", call.span, "not a predicate instance");
        };
        let mut vals = Vec::with_capacity(args.len() + 1);
        if let CallRecv::Expr(r) = recv {
            match (self.eval(cx, r)?, null) {
                (Value::Null, Some((reason, span))) => {
                    return raw(reason, span, "the receiver is null");
                }
                (v, _) => vals.push(v),
            }
        }
        for a in args {
            vals.push(self.eval(cx, a)?);
        }
        // A predicate family's instance is the receiver's class's predicate.
        let t = match self.dispatch(cx.heap, *t, vals.first()) {
            Some(c) if matches!(recv, CallRecv::Expr(_)) => c,
            _ => *t,
        };
        Ok((t, vals))
    }

    /// `opening e.q(a) in ..` (or `opening acc(e.q(a), p) in ..`): the instance must
    /// be held at the amount (directly or folded).
    fn instance_present(&self, cx: &Cx<'_>, pred: &'p Expr, at: &Expr) -> R<()> {
        let (call, amount) = match &pred.kind {
            ExprKind::Frac { acc, amount } => (&**acc, self.amount_of(cx, amount, at)?),
            _ => (pred, Rat::one()),
        };
        let call = match &call.kind {
            ExprKind::Acc(inner) => &**inner,
            _ => call,
        };
        let (p, args) = self.instance_args(cx, call, Some(("receiver.null", pred.span)))?;
        if amount.is_zero() {
            return Ok(());
        }
        let held = view_instance_total(cx.view, p, &args);
        // In a pure body or a pure call's precondition, some amount of the instance is
        // enough (its body is read at an unknown positive amount, as the verifier does).
        let pure = !self.pure_stack.borrow().is_empty();
        if held >= amount || (pure && held > Rat::zero()) {
            Ok(())
        } else {
            raw("open.failed", pred.span, "no predicate instance (at this amount) to open")
        }
    }

    /// Evaluate an amount; a negative one is `negative.permission` at `at`.
    pub fn amount_of(&self, cx: &Cx<'_>, amount: &'p Expr, at: &Expr) -> R<Rat> {
        let v = self.eval(cx, amount)?;
        let Some(r) = v.rat() else {
            return raw("internal.error", amount.span, "an amount that is not a number");
        };
        if r.is_negative() {
            return raw("negative.permission", at.span, format!("the amount {r} is negative"));
        }
        Ok(r)
    }

    /// `perm(loc)`: the amount of `loc` held where `perm` reads (the view, or what is
    /// left of a state being consumed). A location partly folded inside a predicate
    /// instance has an amount that depends on how far inference unfolded it, which
    /// the verifier may have done differently: no verdict then.
    fn perm_of(&self, cx: &Cx<'_>, loc: &'p Expr) -> R<Value> {
        let bags: Vec<&Bag> = match cx.pview {
            Some(b) => vec![b],
            None => cx.view.to_vec(),
        };
        match &loc.kind {
            ExprKind::Field { recv, field, class } => {
                let r = self.eval(cx, recv)?;
                if r == Value::Null {
                    return Ok(Value::int(0));
                }
                let l = self.field_loc(&r, *class, &field.name, loc)?;
                if bags.iter().any(|b| b.folded(l)) {
                    return Err(Stop::OutOfSteps);
                }
                Ok(Value::amount(view_total(&bags, l)))
            }
            ExprKind::Index { arr, idx } => {
                let a = self.eval(cx, arr)?;
                let i = int_of(self.eval(cx, idx)?);
                let Value::Ref(o) = a else {
                    return raw("receiver.null", arr.span, "the array is null");
                };
                let n = cx.heap.len_of(o).unwrap_or(0);
                let Some(k) = i.to_usize().filter(|&k| k < n) else {
                    return raw(
                        "index.out.of.bounds",
                        loc.span,
                        format!("index {i} is out of bounds for length {n}"),
                    );
                };
                let l = Loc::Elem(o, k);
                if bags.iter().any(|b| b.folded(l)) {
                    return Err(Stop::OutOfSteps);
                }
                Ok(Value::amount(view_total(&bags, l)))
            }
            ExprKind::Call { .. } => {
                let (p, args) = self.instance_args(cx, loc, None)?;
                if self.member(p).is_some_and(|m| !m.is_static)
                    && args.first() == Some(&Value::Null)
                {
                    return Ok(Value::int(0));
                }
                if bags.iter().any(|b| b.instance_folded(p, &args)) {
                    return Err(Stop::OutOfSteps);
                }
                Ok(Value::amount(view_instance_total(&bags, p, &args)))
            }
            _ => raw("internal.error", loc.span, "`perm` of a non-location"),
        }
    }

    /// A value quantifier (LANGUAGE.md section 13), run over the ranges its body's
    /// constraints give its variables; no verdict when there are none.
    fn quantifier(&self, cx: &Cx<'_>, q: &'p crate::syntax::ast::Quant) -> R<Value> {
        let forall = q.kind == QuantKind::Forall;
        let vars: Vec<String> = q.vars.iter().map(|b| b.name.name.clone()).collect();
        let cons = super::quant::constraints(&q.body, forall);
        let Some(ranges) = super::quant::ranges(&vars, &cons) else {
            return Err(Stop::OutOfSteps);
        };
        let mut locals = cx.locals.clone();
        let mut found = false;
        let completed = self.enumerate(cx, &ranges, &mut locals, &mut |it, l| {
            let bcx = Cx { locals: l, ..*cx };
            let v = truth(&it.eval(&bcx, &q.body)?);
            if v != forall {
                found = true;
                return Ok(false);
            }
            Ok(true)
        })?;
        let _ = completed;
        // `forall` is false when a counterexample was found; `exists` true on a witness.
        Ok(Value::Bool(if forall { !found } else { found }))
    }

    /// The sequence operations of LANGUAGE.md section 14, with their "defined when"
    /// column checked (`index.out.of.bounds` at the expression).
    fn sequence(&self, cx: &Cx<'_>, e: &'p Expr) -> R<Value> {
        let seq = |v: Value| -> Rc<Vec<Value>> {
            match v {
                Value::Seq(xs) => xs,
                _ => Rc::new(vec![]),
            }
        };
        let out_of = |what: String| raw::<Value>("index.out.of.bounds", e.span, what);
        match &e.kind {
            ExprKind::SeqLit { elems, .. } => {
                self.tick_n(elems.len() as u64)?;
                let mut xs = Vec::with_capacity(elems.len());
                for x in elems {
                    xs.push(self.eval(cx, x)?);
                }
                Ok(Value::Seq(Rc::new(xs)))
            }
            ExprKind::SeqLen(s) => Ok(Value::int(seq(self.eval(cx, s)?).len() as i64)),
            ExprKind::SeqIndex { seq: s, idx } => {
                let xs = seq(self.eval(cx, s)?);
                let i = int_of(self.eval(cx, idx)?);
                match i.to_usize().filter(|&k| k < xs.len()) {
                    Some(k) => Ok(xs[k].clone()),
                    None => out_of(format!("index {i} is out of range for length {}", xs.len())),
                }
            }
            ExprKind::Slice { seq: s, lo, hi } => {
                let xs = seq(self.eval(cx, s)?);
                let n = BigInt::from(xs.len());
                let lo = match lo {
                    Some(x) => int_of(self.eval(cx, x)?),
                    None => BigInt::zero(),
                };
                let hi = match hi {
                    Some(x) => int_of(self.eval(cx, x)?),
                    None => n.clone(),
                };
                if lo.is_negative() || lo > hi || hi > n {
                    return out_of(format!(
                        "the slice [{lo}..{hi}) is out of range for length {n}"
                    ));
                }
                let (lo, hi) = (lo.to_usize().unwrap_or(0), hi.to_usize().unwrap_or(0));
                self.tick_n((hi - lo) as u64)?;
                Ok(Value::Seq(Rc::new(xs[lo..hi].to_vec())))
            }
            ExprKind::SeqConcat(a, b) => {
                let xs = seq(self.eval(cx, a)?);
                let ys = seq(self.eval(cx, b)?);
                self.tick_n((xs.len() + ys.len()) as u64)?;
                let mut zs = Vec::with_capacity(xs.len() + ys.len());
                zs.extend(xs.iter().cloned());
                zs.extend(ys.iter().cloned());
                Ok(Value::Seq(Rc::new(zs)))
            }
            ExprKind::SeqContains { seq: s, elem } => {
                let xs = seq(self.eval(cx, s)?);
                let x = self.eval(cx, elem)?;
                self.tick_n(xs.len() as u64)?;
                Ok(Value::Bool(xs.contains(&x)))
            }
            ExprKind::SeqUpdated { seq: s, idx, val } => {
                let xs = seq(self.eval(cx, s)?);
                let i = int_of(self.eval(cx, idx)?);
                let v = self.eval(cx, val)?;
                let Some(k) = i.to_usize().filter(|&k| k < xs.len()) else {
                    return out_of(format!("index {i} is out of range for length {}", xs.len()));
                };
                self.tick_n(xs.len() as u64)?;
                let mut ys = (*xs).clone();
                ys[k] = v;
                Ok(Value::Seq(Rc::new(ys)))
            }
            _ => raw("internal.error", e.span, "not a sequence operation"),
        }
    }

    /// The locals of a predicate's body for the instance `args` (receiver first).
    pub fn pred_locals(&self, p: MemberRef, args: &[Value]) -> super::Locals {
        let is_static = self.member(p).is_none_or(|m| m.is_static);
        if is_static {
            self.callee_locals(p, None, args)
        } else {
            let (this, rest) =
                args.split_first().map(|(t, r)| (Some(t.clone()), r)).unwrap_or((None, &[]));
            self.callee_locals(p, this, rest)
        }
    }

    /// A pure call: its precondition is consumed (without removing anything) from the
    /// view, which gives the callee's view; the body runs there; `ensures` is checked.
    pub fn pure_call(
        &self,
        cx: &Cx<'_>,
        target: MemberRef,
        recv: Option<Value>,
        args: Vec<Value>,
        call: &Expr,
    ) -> R<Value> {
        let _g = self.enter()?;
        let Some(m) = self.member(target) else {
            return raw("internal.error", call.span, "no such member");
        };
        if m.kind != MemberKind::Pure {
            return raw("internal.error", call.span, "not a pure method");
        }
        let mut locals = self.callee_locals(target, recv.clone(), &args);
        let ccx = Cx { heap: cx.heap, view: cx.view, locals: &locals, old: None, pview: None };
        // Read mode (LANGUAGE.md section 11): some positive amount of each location.
        let mut h2 = flatten(cx.view);
        let mut got = super::assertion::Consumed::default();
        let read = super::assertion::Mode::read();
        self.in_pure(None, || self.consume_all_in(&ccx, &m.requires, &mut h2, &mut got, &read))
            .map_err(|s| s.via_call(call.span))?;
        self.check_measure(cx, target, &locals, call)?;
        if self.is_abstract(target) {
            // Dynamically bound (LANGUAGE.md section 10): the class's pure method runs
            // in the state the interface's precondition gave; its precondition must
            // follow from the interface's, and the interface's `ensures` must hold of
            // its result, or the class's member is not a refinement (`override.unsound`).
            let Some(cm) = self.dispatch(cx.heap, target, recv.as_ref()) else {
                return Err(Stop::Rejected(super::exec::UNDISPATCHED.into()));
            };
            let view = [&got.bag];
            let icx = Cx { heap: cx.heap, view: &view, locals: &locals, old: None, pview: None };
            let result = self.pure_call_in(&icx, cm, recv, args, call)?;
            if !m.ensures.is_empty() {
                locals.insert("result".into(), result.clone());
                let pcx =
                    Cx { heap: cx.heap, view: &view, locals: &locals, old: None, pview: None };
                let ctx = Ctx { id: "override.unsound", call: None };
                self.checked_ensures(target, &locals, || {
                    self.check_all(&pcx, &m.ensures)
                        .map(|_| ())
                        .map_err(|s| s.in_assertion(ctx, cm))
                })?;
            }
            return Ok(result);
        }
        self.pure_body(cx.heap, target, got, locals)
    }

    /// A call of the class's pure method `target` on behalf of an interface's call:
    /// its precondition, consumed from the view the interface's gave, failing is the
    /// class member's `override.unsound`.
    fn pure_call_in(
        &self,
        cx: &Cx<'_>,
        target: MemberRef,
        recv: Option<Value>,
        args: Vec<Value>,
        call: &Expr,
    ) -> R<Value> {
        let _g = self.enter()?;
        let Some(m) = self.member(target) else {
            return raw("internal.error", call.span, "no such member");
        };
        let locals = self.callee_locals(target, recv, &args);
        let ccx = Cx { heap: cx.heap, view: cx.view, locals: &locals, old: None, pview: None };
        let mut h2 = flatten(cx.view);
        let mut got = super::assertion::Consumed::default();
        let ctx = Ctx { id: "override.unsound", call: None };
        let read = super::assertion::Mode::read();
        self.consume_all_in(&ccx, &m.requires, &mut h2, &mut got, &read)
            .map_err(|s| s.in_assertion(ctx, target))?;
        self.pure_body(cx.heap, target, got, locals)
    }

    /// Run a pure method's body in the state its precondition gave (`got`), then check
    /// its `ensures`.
    fn pure_body(
        &self,
        heap: &super::Heap,
        target: MemberRef,
        got: super::assertion::Consumed,
        mut locals: super::Locals,
    ) -> R<Value> {
        let Some(m) = self.member(target) else { return Err(Stop::OutOfSteps) };
        let Body::Return(body) = &m.body else {
            return Err(Stop::Rejected(super::exec::UNDISPATCHED.into()));
        };
        let view = [&got.bag];
        let bcx = Cx { heap, view: &view, locals: &locals, old: None, pview: None };
        let measure = self.measure(&bcx, target)?;
        let result = self
            .in_pure(Some((target, measure)), || self.eval(&bcx, body))
            .map_err(|s| s.not_wellformed(target))?;
        if !m.ensures.is_empty() {
            locals.insert("result".into(), result.clone());
            let pcx = Cx { heap, view: &view, locals: &locals, old: None, pview: None };
            let ctx = Ctx { id: "postcondition.violated", call: None };
            self.in_pure(None, || {
                self.checked_ensures(target, &locals, || {
                    self.check_all(&pcx, &m.ensures)
                        .map(|_| ())
                        .map_err(|s| s.in_assertion(ctx, target))
                })
            })?;
        }
        Ok(result)
    }

    /// Run `f` with `entry` as the innermost pure body being run (`None`: not a body).
    pub fn in_pure<T>(
        &self,
        entry: Option<(MemberRef, Option<BigInt>)>,
        f: impl FnOnce() -> R<T>,
    ) -> R<T> {
        self.pure_stack.borrow_mut().push(entry);
        let r = f();
        self.pure_stack.borrow_mut().pop();
        r
    }

    /// The value of a pure method's `decreases` measure in `cx` (its precondition's
    /// state), if it declares one; a measure not defined there is `not.wellformed`.
    pub fn measure(&self, cx: &Cx<'_>, target: MemberRef) -> R<Option<BigInt>> {
        let Some(d) = self.member(target).and_then(|m| m.decreases.first()) else {
            return Ok(None);
        };
        let v = self.in_pure(None, || self.eval(cx, d)).map_err(|s| s.not_wellformed(target))?;
        Ok(Some(int_of(v)))
    }

    /// Does pure method `a` reach `b` through the calls of pure bodies?
    fn reaches(&self, a: MemberRef, b: MemberRef) -> bool {
        let mut seen = vec![a];
        let mut stack = vec![a];
        while let Some(x) = stack.pop() {
            for &y in self.calls.get(&x).map(|v| v.as_slice()).unwrap_or(&[]) {
                if y == b {
                    return true;
                }
                if !seen.contains(&y) {
                    seen.push(y);
                    stack.push(y);
                }
            }
        }
        false
    }

    /// Termination rule (4) of LANGUAGE.md section 15 at run time: a pure call in the
    /// body of a pure method of its recursion group, both with measures, where the
    /// measure is negative or does not go down, is `termination.unproven` at the call
    /// (the caller's failure). Judged only where no other rule could admit the call:
    /// the callee is not declared before the caller (rule 1) and the caller holds no
    /// permission at all (rules 2 and 3 need a chunk left over or an opened instance).
    fn check_measure(
        &self,
        cx: &Cx<'_>,
        callee: MemberRef,
        locals: &super::Locals,
        call: &Expr,
    ) -> R<()> {
        let top = self.pure_stack.borrow().last().cloned().flatten();
        let Some((caller, Some(dc))) = top else { return Ok(()) };
        if callee < caller || !self.reaches(callee, caller) || !cx.view.iter().all(|b| b.is_empty())
        {
            return Ok(());
        }
        let Some(d) = self.member(callee).and_then(|m| m.decreases.first()) else {
            return Ok(());
        };
        let empty = super::perm::Bag::default();
        let view = [&empty];
        let mcx = Cx { heap: cx.heap, view: &view, locals, old: None, pview: None };
        let dd = match self.in_pure(None, || self.eval(&mcx, d)) {
            Ok(v) => int_of(v),
            // The callee's measure is judged where the callee is run.
            Err(Stop::OutOfSteps) => return Err(Stop::OutOfSteps),
            Err(_) => return Ok(()),
        };
        let why = if dc.is_negative() {
            "the measure may be negative"
        } else if dd >= dc {
            "the measure may not decrease"
        } else {
            return Ok(());
        };
        Err(Stop::Fail(super::Failure {
            id: "termination.unproven",
            reason: "termination.unproven",
            span: call.span,
            member: caller,
            message: format!("{why}: {dd} at the call, {dc} at the caller"),
        }))
    }

    /// Check a pure call's `ensures` with `check`, unless the same call's (the same
    /// member, receiver and arguments) is being checked already, further out: pure
    /// postconditions that call each other (`size() ensures result == count()`,
    /// `count() ensures result == size()`) would otherwise check each other forever.
    /// The inner call still yields its body's value, so a false postcondition fails
    /// where it is checked (LANGUAGE.md section 15: they are not circular).
    fn checked_ensures(
        &self,
        target: MemberRef,
        locals: &super::Locals,
        check: impl FnOnce() -> R<()>,
    ) -> R<()> {
        let mut key: Vec<(String, Value)> = locals
            .iter()
            .filter(|(k, _)| k.as_str() != "result")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        key.sort();
        let key = (target, key);
        if self.checking.borrow().contains(&key) {
            return Ok(());
        }
        self.checking.borrow_mut().push(key);
        let r = check();
        self.checking.borrow_mut().pop();
        r
    }
}

/// Is `n` negative?
pub fn negative(n: &BigInt) -> bool {
    n.is_negative()
}

impl Stop {
    /// Is this a failure of the current context (not a budget or a rejection)?
    pub fn is_failure(&self) -> bool {
        matches!(self, Stop::Raw(_) | Stop::Fail(_))
    }
}
