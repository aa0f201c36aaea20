//! Finite ranges for the bound variables of quantifiers (LANGUAGE.md sections 12-13):
//! read from the constraints a quantifier's body puts on them (`lo <= i && i < hi ==>
//! ..` for `forall`, `0 <= i && i < s.length && ..` for `exists`, a quantified
//! permission's condition), then every combination is run.
//!
//! Architecture invariant: a range is an over-approximation of the values that satisfy
//! the constraints (each bound comes from a conjunct every such value satisfies), so a
//! value outside it makes the body trivially true (`forall`) or false (`exists`, a
//! permission's condition) and never needs running. A quantifier whose variables have
//! no readable finite range gives no verdict (`OutOfSteps`), never a failure.

use super::error::{R, Stop};
use super::value::Value;
use super::{Cx, Interp, Locals};
use crate::syntax::ast::{BinOp, Expr, ExprKind};
use num_bigint::BigInt;
use num_traits::ToPrimitive;

/// A bound: the sum of the terms (each added or subtracted) plus an offset.
#[derive(Clone, Debug)]
struct Bound<'p> {
    terms: Vec<(bool, &'p Expr)>,
    off: i64,
}

impl<'p> Bound<'p> {
    fn plus(mut self, k: i64) -> Bound<'p> {
        self.off += k;
        self
    }

    /// The bound variables (of `vars`) it mentions.
    fn mentions(&self, vars: &[String], out: &mut Vec<String>) {
        for (_, e) in &self.terms {
            for v in vars {
                if mentions(e, v) && !out.contains(v) {
                    out.push(v.clone());
                }
            }
        }
    }
}

/// Does `e` mention the local `x`?
pub fn mentions(e: &Expr, x: &str) -> bool {
    e.any(&mut |e| matches!(&e.kind, ExprKind::Local(n) | ExprKind::Name(n) if n == x))
}

/// The top-level `&&` conjuncts of `e`.
pub fn conjuncts<'p>(e: &'p Expr, out: &mut Vec<&'p Expr>) {
    match &e.kind {
        ExprKind::Binary { op: BinOp::And, l, r } => {
            conjuncts(l, out);
            conjuncts(r, out);
        }
        _ => out.push(e),
    }
}

/// The constraints a `forall` body `G1 ==> G2 ==> .. ==> B` puts on its variables
/// (the conjuncts of the guards), or an `exists` body `C1 && C2 && ..` (its conjuncts).
pub fn constraints(body: &Expr, forall: bool) -> Vec<&Expr> {
    let mut out = vec![];
    if forall {
        let mut e = body;
        while let ExprKind::Binary { op: BinOp::Implies, l, r } = &e.kind {
            conjuncts(l, &mut out);
            e = r;
        }
    } else {
        conjuncts(body, &mut out);
    }
    out
}

/// `e` as `x + t` (a term list `t` free of `x`), if it has that shape.
fn linear<'p>(e: &'p Expr, x: &str) -> Option<Vec<(bool, &'p Expr)>> {
    match &e.kind {
        ExprKind::Local(n) if n == x => Some(vec![]),
        ExprKind::Binary { op: BinOp::Add, l, r } => {
            if !mentions(r, x) {
                let mut t = linear(l, x)?;
                t.push((true, r));
                Some(t)
            } else if !mentions(l, x) {
                let mut t = linear(r, x)?;
                t.push((true, l));
                Some(t)
            } else {
                None
            }
        }
        ExprKind::Binary { op: BinOp::Sub, l, r } if !mentions(r, x) => {
            let mut t = linear(l, x)?;
            t.push((false, r));
            Some(t)
        }
        _ => None,
    }
}

/// The lower (inclusive) and upper (exclusive) bounds one constraint gives `x`.
fn bounds_of<'p>(c: &'p Expr, x: &str, lo: &mut Vec<Bound<'p>>, hi: &mut Vec<Bound<'p>>) {
    let ExprKind::Binary { op, l, r } = &c.kind else { return };
    // Put `x` on the left: `x + t op other`, i.e. `x op other - t`.
    let (op, t, other) = match (linear(l, x), linear(r, x)) {
        (Some(t), None) if !mentions(r, x) => (*op, t, &**r),
        (None, Some(t)) if !mentions(l, x) => {
            let flipped = match op {
                BinOp::Lt => BinOp::Gt,
                BinOp::Le => BinOp::Ge,
                BinOp::Gt => BinOp::Lt,
                BinOp::Ge => BinOp::Le,
                o => *o,
            };
            (flipped, t, &**l)
        }
        _ => return,
    };
    let mut terms = vec![(true, other)];
    terms.extend(t.into_iter().map(|(s, e)| (!s, e)));
    let b = Bound { terms, off: 0 };
    match op {
        BinOp::Lt => hi.push(b),
        BinOp::Le => hi.push(b.plus(1)),
        BinOp::Gt => lo.push(b.plus(1)),
        BinOp::Ge => lo.push(b),
        BinOp::Eq => {
            lo.push(b.clone());
            hi.push(b.plus(1));
        }
        _ => {}
    }
}

/// The ranges of several bound variables, in the order they are enumerated.
pub struct Ranges<'p> {
    order: Vec<(String, Vec<Bound<'p>>, Vec<Bound<'p>>)>,
}

/// Read finite ranges for `vars` from `cons`; `None` if some variable has none.
pub fn ranges<'p>(vars: &[String], cons: &[&'p Expr]) -> Option<Ranges<'p>> {
    let mut lo: Vec<Vec<Bound<'p>>> = vec![vec![]; vars.len()];
    let mut hi: Vec<Vec<Bound<'p>>> = vec![vec![]; vars.len()];
    for (k, v) in vars.iter().enumerate() {
        for c in cons {
            bounds_of(c, v, &mut lo[k], &mut hi[k]);
        }
    }
    // `i < j` with `j < n` gives `i < n`: bounds through another bound variable.
    for _ in 0..vars.len() {
        for k in 0..vars.len() {
            for (w, wv) in vars.iter().enumerate() {
                if w == k {
                    continue;
                }
                let via = |b: &Bound<'p>| matches!(b.terms.as_slice(), [(true, e)] if matches!(&e.kind, ExprKind::Local(n) if n == wv));
                let extra_hi: Vec<Bound<'p>> = hi[k]
                    .iter()
                    .filter(|b| via(b))
                    .flat_map(|b| hi[w].iter().map(move |u| u.clone().plus(b.off - 1)))
                    .collect();
                let extra_lo: Vec<Bound<'p>> = lo[k]
                    .iter()
                    .filter(|b| via(b))
                    .flat_map(|b| lo[w].iter().map(move |u| u.clone().plus(b.off)))
                    .collect();
                for b in extra_hi {
                    if hi[k].len() < 16 {
                        hi[k].push(b);
                    }
                }
                for b in extra_lo {
                    if lo[k].len() < 16 {
                        lo[k].push(b);
                    }
                }
            }
        }
    }
    // An order in which each variable's bounds mention only variables before it.
    let mut order = vec![];
    let mut done: Vec<String> = vec![];
    let mut left: Vec<usize> = (0..vars.len()).collect();
    while !left.is_empty() {
        let usable = |bs: &[Bound<'p>], done: &[String]| -> Vec<Bound<'p>> {
            bs.iter()
                .filter(|b| {
                    let mut m = vec![];
                    b.mentions(vars, &mut m);
                    m.iter().all(|x| done.contains(x))
                })
                .cloned()
                .collect()
        };
        let pick = left.iter().position(|&k| {
            !usable(&lo[k], &done).is_empty() && !usable(&hi[k], &done).is_empty()
        })?;
        let k = left.remove(pick);
        order.push((vars[k].clone(), usable(&lo[k], &done), usable(&hi[k], &done)));
        done.push(vars[k].clone());
    }
    Some(Ranges { order })
}

impl<'p> Interp<'p> {
    fn bound_value(&self, cx: &Cx<'_>, b: &Bound<'p>) -> R<BigInt> {
        let mut v = BigInt::from(b.off);
        for (add, e) in &b.terms {
            match self.eval(cx, e)? {
                Value::Int(n) if *add => v += n,
                Value::Int(n) => v -= n,
                // A bound that is not an integer: no range can be read.
                _ => return Err(Stop::OutOfSteps),
            }
        }
        Ok(v)
    }

    /// Run `f` on every combination of values of the ranges (in `locals`, which hold
    /// the quantifier's context); `f` returns false to stop early. False if stopped.
    pub fn enumerate(
        &self,
        cx: &Cx<'_>,
        ranges: &Ranges<'p>,
        locals: &mut Locals,
        f: &mut dyn FnMut(&Interp<'p>, &Locals) -> R<bool>,
    ) -> R<bool> {
        self.enumerate_from(cx, ranges, 0, locals, f)
    }

    fn enumerate_from(
        &self,
        cx: &Cx<'_>,
        ranges: &Ranges<'p>,
        k: usize,
        locals: &mut Locals,
        f: &mut dyn FnMut(&Interp<'p>, &Locals) -> R<bool>,
    ) -> R<bool> {
        let Some((name, los, his)) = ranges.order.get(k) else {
            self.tick()?;
            return f(self, locals);
        };
        let (mut lo, mut hi) = (None::<BigInt>, None::<BigInt>);
        {
            let bcx = Cx { locals, ..*cx };
            for b in los {
                let v = self.bound_value(&bcx, b)?;
                lo = Some(lo.map_or(v.clone(), |l| l.max(v)));
            }
            for b in his {
                let v = self.bound_value(&bcx, b)?;
                hi = Some(hi.map_or(v.clone(), |h| h.min(v)));
            }
        }
        let (Some(lo), Some(hi)) = (lo, hi) else { return Err(Stop::OutOfSteps) };
        if hi <= lo {
            return Ok(true);
        }
        // A range larger than the budget could never be run to its end.
        let width = (&hi - &lo).to_u64().ok_or(Stop::OutOfSteps)?;
        if width > self.limits.steps {
            return Err(Stop::OutOfSteps);
        }
        let mut i = lo;
        while i < hi {
            locals.insert(name.clone(), Value::Int(i.clone()));
            if !self.enumerate_from(cx, ranges, k + 1, locals, f)? {
                return Ok(false);
            }
            i += 1;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::interp::{Outcome, run_main};
    use crate::source::front_end;

    fn run(body: &str) -> Outcome {
        let src = format!("class Main {{\n  static void main() {{\n{body}\n  }}\n}}\n");
        let program = front_end(&src).expect("a well-typed program");
        run_main(&program, "Main")
    }

    #[test]
    fn ranges_are_read_from_guards_and_conjuncts() {
        let ok = [
            "seq<int> s = seq(1, 2, 2, 5); assert forall int i, int j :: 0 <= i && i < j && j < s.length ==> s[i] <= s[j];",
            "seq<int> s = seq(1, 2, 3); assert forall int i :: 0 <= i && i + 1 < s.length ==> s[i] < s[i + 1];",
            "seq<int> s = seq(1, 2, 3); assert exists int i :: 0 <= i && i < s.length && s[i] == 3;",
            "seq<int> s = seq(1, 2, 3); assert forall int i :: i >= 1 ==> i <= 2 ==> s[i] > 1;",
            "assert exists int i :: i == 4 && i * i == 16;",
            "assert !(exists int i :: 0 < i && i < 0);",
        ];
        for b in ok {
            assert_eq!(run(b), Outcome::Passed, "{b}");
        }
        // No range for `i`: no verdict, never a failure.
        assert_eq!(run("assert forall int i :: i * i >= 0;"), Outcome::OutOfSteps);
        assert_eq!(run("assert exists int i :: i * i == 4;"), Outcome::OutOfSteps);
        // A false one fails with the assertion's id.
        match run(
            "seq<int> s = seq(3, 1); assert forall int i :: 0 <= i && i < s.length ==> s[i] > 1;",
        ) {
            Outcome::Failed(f) => assert_eq!(f.id, "assert.failed"),
            o => panic!("{o:?}"),
        }
    }
}
