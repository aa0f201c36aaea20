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
use super::perm::{Loc, flatten, view_holds, view_holds_instance};
use super::value::Value;
use super::{Cx, Interp, grow};
use crate::syntax::ast::{BinOp, Body, CallRecv, Expr, ExprKind, MemberKind, MemberRef, UnOp};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

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
        if e.ty == crate::syntax::ast::Type::Perm {
            // Amounts (LANGUAGE.md section 11) are not interpreted yet: no verdict.
            return Err(Stop::OutOfSteps);
        }
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
            // Quantifiers and sequences (LANGUAGE.md sections 13-14) are not run yet:
            // a run that meets one stops without a verdict, as when its budget ends.
            ExprKind::Quant(_)
            | ExprKind::SeqLit { .. }
            | ExprKind::SeqLen(_)
            | ExprKind::SeqIndex { .. }
            | ExprKind::Slice { .. }
            | ExprKind::SeqConcat(..)
            | ExprKind::SeqContains { .. }
            | ExprKind::SeqUpdated { .. } => Err(super::error::Stop::OutOfSteps),
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
                if !view_holds(cx.view, Loc::Array(o)) {
                    return raw(
                        "insufficient.permission",
                        e.span,
                        "no permission to the array's elements (`acc(a[*])`)",
                    );
                }
                let n = cx.heap.len_of(o).unwrap_or(0);
                match i.to_usize().filter(|&i| i < n) {
                    Some(i) => Ok(cx.heap.get(o, i).cloned().unwrap_or(Value::Null)),
                    None => raw(
                        "index.out.of.bounds",
                        e.span,
                        format!("index {i} is out of bounds for length {n}"),
                    ),
                }
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
                Ok(match op {
                    UnOp::Not => Value::Bool(!truth(&v)),
                    UnOp::Neg => Value::Int(-int_of(v)),
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
                    let ocx = Cx { heap: &old.heap, view: &view, locals: cx.locals, old: cx.old };
                    self.eval(&ocx, x)
                }
                None => self.eval(cx, x),
            },
            ExprKind::Opening { pred, body } => {
                self.instance_present(cx, pred)?;
                self.eval(cx, body)
            }
            ExprKind::Using { call, body } => {
                self.eval(cx, call)?;
                self.eval(cx, body)
            }
            ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Untouched(_) => {
                raw("internal.error", e.span, "a permission in an expression")
            }
            // Fractional permissions (LANGUAGE.md section 11) are not interpreted yet:
            // no verdict, never a wrong one.
            ExprKind::Frac { .. } | ExprKind::Write | ExprKind::NoPerm | ExprKind::PermOf(_) => {
                Err(Stop::OutOfSteps)
            }
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

    /// `opening e.q(a) in ..`: the instance must be held (directly or folded).
    fn instance_present(&self, cx: &Cx<'_>, pred: &'p Expr) -> R<()> {
        let (p, args) = self.instance_args(cx, pred, Some(("receiver.null", pred.span)))?;
        if view_holds_instance(cx.view, p, &args) {
            Ok(())
        } else {
            raw("open.failed", pred.span, "no predicate instance to open")
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
        let ccx = Cx { heap: cx.heap, view: cx.view, locals: &locals, old: None };
        let mut h2 = flatten(cx.view);
        let mut got = super::assertion::Consumed::default();
        self.consume_all(&ccx, &m.requires, &mut h2, &mut got)
            .map_err(|s| s.via_call(call.span))?;
        if self.is_abstract(target) {
            // Dynamically bound (LANGUAGE.md section 10): the class's pure method runs
            // in the state the interface's precondition gave; its precondition must
            // follow from the interface's, and the interface's `ensures` must hold of
            // its result, or the class's member is not a refinement (`override.unsound`).
            let Some(cm) = self.dispatch(cx.heap, target, recv.as_ref()) else {
                return Err(Stop::Rejected(super::exec::UNDISPATCHED.into()));
            };
            let view = [&got.bag];
            let icx = Cx { heap: cx.heap, view: &view, locals: &locals, old: None };
            let result = self.pure_call_in(&icx, cm, recv, args, call)?;
            if !m.ensures.is_empty() {
                locals.insert("result".into(), result.clone());
                let pcx = Cx { heap: cx.heap, view: &view, locals: &locals, old: None };
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
        let ccx = Cx { heap: cx.heap, view: cx.view, locals: &locals, old: None };
        let mut h2 = flatten(cx.view);
        let mut got = super::assertion::Consumed::default();
        let ctx = Ctx { id: "override.unsound", call: None };
        self.consume_all(&ccx, &m.requires, &mut h2, &mut got)
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
        let bcx = Cx { heap, view: &view, locals: &locals, old: None };
        let result = self.eval(&bcx, body).map_err(|s| s.not_wellformed(target))?;
        if !m.ensures.is_empty() {
            locals.insert("result".into(), result.clone());
            let pcx = Cx { heap, view: &view, locals: &locals, old: None };
            let ctx = Ctx { id: "postcondition.violated", call: None };
            self.checked_ensures(target, &locals, || {
                self.check_all(&pcx, &m.ensures)
                    .map(|_| ())
                    .map_err(|s| s.in_assertion(ctx, target))
            })?;
        }
        Ok(result)
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
