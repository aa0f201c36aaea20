//! Repairing an input state the precondition rejects (for testing: `oracle::paths`).
//! A model solved from a path condition fixes the values the path's facts name, but
//! not always those folded inside predicate instances it never opened, or those a
//! quantifier relates through a pure function the solver left uninterpreted: the
//! precondition then rejects the state at a false fact. When that fact compares a
//! field or an array element of the input heap with a value (`x == v`, `buf[k] ==
//! vs[i]`, `lo <= v`, a `forall` whose failing instance does), the location can be
//! set so that the comparison holds, and the run tried again.
//!
//! Architecture invariant: only reads: it proposes one change of one heap slot of the
//! input (an object's field or an array's element) and never decides a verdict; the
//! run on the repaired state is judged like any other.

use super::eval::truth;
use super::value::{ObjId, Value};
use super::{Cx, Interp};
use crate::syntax::ast::{BinOp, Expr, ExprKind, QuantKind, UnOp};
use num_bigint::BigInt;
use num_traits::ToPrimitive;

/// One change of the input heap: slot `slot` of object `obj` (a field, or an array's
/// element) gets `value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    pub obj: ObjId,
    pub slot: usize,
    pub value: Value,
}

impl<'p> Interp<'p> {
    /// A change that makes the false fact `e` (a boolean expression) hold, or one of
    /// the comparisons that made it false, when one side of that comparison is a
    /// field or an array element. `None` when no such location is found (or evaluating
    /// fails: the rejection stands).
    pub(crate) fn repair_of(&self, cx: &Cx<'_>, e: &'p Expr) -> Option<Repair> {
        let holds = |x: &'p Expr| self.eval(cx, x).ok().map(|v| truth(&v));
        match &e.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => match holds(l)? {
                false => self.repair_of(cx, l),
                true => self.repair_of(cx, r),
            },
            ExprKind::Binary { op: BinOp::Or, l, r } => {
                self.repair_of(cx, l).or_else(|| self.repair_of(cx, r))
            }
            ExprKind::Binary { op: BinOp::Implies, r, .. } => self.repair_of(cx, r),
            ExprKind::Cond { c, a, b } => match holds(c)? {
                true => self.repair_of(cx, a),
                false => self.repair_of(cx, b),
            },
            ExprKind::Unary { op: UnOp::Not, e: x } => match &x.kind {
                ExprKind::Binary { op, l, r } => {
                    let flipped = match op {
                        BinOp::Eq => BinOp::Ne,
                        BinOp::Ne => BinOp::Eq,
                        BinOp::Lt => BinOp::Ge,
                        BinOp::Le => BinOp::Gt,
                        BinOp::Gt => BinOp::Le,
                        BinOp::Ge => BinOp::Lt,
                        _ => return None,
                    };
                    self.compare(cx, flipped, l, r)
                }
                _ => None,
            },
            ExprKind::Binary { op, l, r } => self.compare(cx, *op, l, r),
            ExprKind::Quant(q) if q.kind == QuantKind::Forall && !q.permission => {
                // The first instance that is false, repaired in its binding.
                let vars: Vec<String> = q.vars.iter().map(|b| b.name.name.clone()).collect();
                let cons = super::quant::constraints(&q.body, true);
                let ranges = super::quant::ranges(&vars, &cons)?;
                let mut locals = cx.locals.clone();
                let mut failing = None;
                let _ = self.enumerate(cx, &ranges, &mut locals, &mut |it, l| {
                    let bcx = Cx { locals: l, ..*cx };
                    if truth(&it.eval(&bcx, &q.body)?) {
                        return Ok(true);
                    }
                    failing = Some(l.clone());
                    Ok(false)
                });
                let l = failing?;
                let bcx = Cx { locals: &l, ..*cx };
                self.repair_of(&bcx, &q.body)
            }
            _ => None,
        }
    }

    /// Make `l op r` hold by setting the side that is a heap location.
    fn compare(&self, cx: &Cx<'_>, op: BinOp, l: &'p Expr, r: &'p Expr) -> Option<Repair> {
        let lv = self.eval(cx, l).ok()?;
        let rv = self.eval(cx, r).ok()?;
        let int = |v: &Value| match v {
            Value::Int(n) => Some(n.clone()),
            _ => None,
        };
        let one = BigInt::from(1);
        // The value the location on the left (`left`) or the right should get.
        let target = |left: bool| -> Option<Value> {
            let (other, mine) = if left { (&rv, &lv) } else { (&lv, &rv) };
            // `l < r` with `l` set is `l := r - 1`; with `r` set, `r := l + 1`.
            let below = |d: i64| int(other).map(|n| Value::Int(n + BigInt::from(d)));
            Some(match (op, left) {
                (BinOp::Eq, _) => other.clone(),
                (BinOp::Ne, _) => match mine {
                    Value::Bool(b) => Value::Bool(!b),
                    _ => Value::Int(int(other)? + &one),
                },
                (BinOp::Lt, true) | (BinOp::Gt, false) => below(-1)?,
                (BinOp::Lt, false) | (BinOp::Gt, true) => below(1)?,
                (BinOp::Le, _) | (BinOp::Ge, _) => Value::Int(int(other)?),
                _ => return None,
            })
        };
        if let Some((obj, slot)) = self.location(cx, l) {
            return Some(Repair { obj, slot, value: target(true)? });
        }
        let (obj, slot) = self.location(cx, r)?;
        Some(Repair { obj, slot, value: target(false)? })
    }

    /// The heap slot `e` reads, when it is a field read or an array element in bounds.
    fn location(&self, cx: &Cx<'_>, e: &'p Expr) -> Option<(ObjId, usize)> {
        match &e.kind {
            ExprKind::Field { recv, field, class } => {
                let Value::Ref(o) = self.eval(cx, recv).ok()? else { return None };
                Some((o, self.layout.slot((*class)?, &field.name)?))
            }
            ExprKind::Index { arr, idx } => {
                let Value::Ref(o) = self.eval(cx, arr).ok()? else { return None };
                let Value::Int(i) = self.eval(cx, idx).ok()? else { return None };
                let k = i.to_usize()?;
                (k < cx.heap.len_of(o)?).then_some((o, k))
            }
            _ => None,
        }
    }
}
