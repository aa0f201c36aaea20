//! Index conditions decided by syntax: the bounds a conjunction of comparisons puts on
//! the index symbol `i#`, read off without the solver. Array chunks carry conditions
//! such as `lo <= i# && i# < mid`; splitting and recombining segments asks whether
//! such conditions overlap, and most of the time two bounds on the same term with
//! literal offsets (`mid` and `mid`, `k` and `k + 1`) already say they do not.
//! Only a certain answer is given: `true` means empty for every value of every
//! symbol; `false` means "not known here", and the caller asks the solver.

use crate::state::term::{Op, Term};

/// A bound `base + offset` (`base` absent for a literal).
type Bound = (Option<Term>, i128);

/// `t` as a term plus a literal offset (`k + 1` is `(k, 1)`, `7` is `(None, 7)`).
fn split(t: &Term) -> Bound {
    if let Some(n) = t.as_int() {
        return (None, i128::from(n));
    }
    match t.op() {
        Op::Add | Op::Sub => {
            let (a, b) = (&t.args()[0], &t.args()[1]);
            let sign = if *t.op() == Op::Add { 1 } else { -1 };
            if let Some(n) = b.as_int() {
                let (base, off) = split(a);
                return (base, off + sign * i128::from(n));
            }
            if let (Some(n), Op::Add) = (a.as_int(), t.op()) {
                let (base, off) = split(b);
                return (base, off + i128::from(n));
            }
            (Some(t.clone()), 0)
        }
        _ => (Some(t.clone()), 0),
    }
}

/// Lower and upper bounds on `i` that the atom `t` (or its negation when `negated`)
/// states: `(lowers, uppers)` with `i >= l` and `i <= u`.
fn bounds_of(t: &Term, i: &Term, negated: bool, lo: &mut Vec<Bound>, hi: &mut Vec<Bound>) {
    let shift = |(b, o): Bound, d: i128| (b, o + d);
    match (t.op(), negated) {
        (Op::Not, _) => bounds_of(&t.args()[0], i, !negated, lo, hi),
        (Op::And, false) | (Op::Or, true) => {
            t.args().iter().for_each(|a| bounds_of(a, i, negated, lo, hi))
        }
        (Op::Le | Op::Lt, _) => {
            let (x, y) = (&t.args()[0], &t.args()[1]);
            // `x <= y`, or `x < y` as `x <= y - 1`; negated: `y < x`, or `y <= x`.
            let strict = *t.op() == Op::Lt;
            let (small, big, gap) = match (negated, strict) {
                (false, false) => (x, y, 0),
                (false, true) => (x, y, -1),
                (true, false) => (y, x, -1),
                (true, true) => (y, x, 0),
            };
            // Now `small <= big + gap`.
            if *big == *i && *small != *i {
                lo.push(shift(split(small), -gap));
            } else if *small == *i && *big != *i {
                hi.push(shift(split(big), gap));
            }
        }
        (Op::Eq, false) => {
            let (x, y) = (&t.args()[0], &t.args()[1]);
            let other = match (*x == *i, *y == *i) {
                (true, false) => y,
                (false, true) => x,
                _ => return,
            };
            lo.push(split(other));
            hi.push(split(other));
        }
        _ => {}
    }
}

/// Is no value of `i` in the condition `c`, by its syntax alone?
pub fn empty(c: &Term, i: &Term) -> bool {
    if c.is_false() {
        return true;
    }
    let (mut lo, mut hi) = (vec![], vec![]);
    bounds_of(c, i, false, &mut lo, &mut hi);
    lo.iter().any(|(lb, l)| hi.iter().any(|(ub, u)| lb == ub && l > u))
}

#[cfg(test)]
mod tests {
    use super::empty;
    use crate::state::term::{Sort, Term};

    fn v(name: &str) -> Term {
        Term::var(name, Sort::Int)
    }

    #[test]
    fn adjacent_segments_do_not_overlap() {
        let (i, lo, mid, hi) = (v("i#"), v("lo"), v("mid"), v("hi"));
        let left = Term::and(Term::le(lo.clone(), i.clone()), Term::lt(i.clone(), mid.clone()));
        let right = Term::and(Term::le(mid.clone(), i.clone()), Term::lt(i.clone(), hi.clone()));
        assert!(empty(&Term::and(left.clone(), right.clone()), &i));
        // `mid + 1 <= i` against `i < mid`: empty; against `i <= mid`: `mid + 1 > mid`.
        let after = Term::le(Term::add(mid.clone(), Term::int(1)), i.clone());
        assert!(empty(&Term::and(after.clone(), Term::le(i.clone(), mid.clone())), &i));
        // Unknown relations between different terms are left to the solver.
        assert!(!empty(&Term::and(left, Term::le(hi.clone(), i.clone())), &i));
        assert!(!empty(&right, &i));
    }

    #[test]
    fn negations_and_equalities_bound_the_index() {
        let (i, k) = (v("i#"), v("k"));
        // i = k and not (k <= i): empty.
        let c =
            Term::and(Term::eq(i.clone(), k.clone()), Term::not(Term::le(k.clone(), i.clone())));
        assert!(empty(&c, &i));
        // i = k and not (k < i): i <= k holds, not empty.
        let c =
            Term::and(Term::eq(i.clone(), k.clone()), Term::not(Term::lt(k.clone(), i.clone())));
        assert!(!empty(&c, &i));
        // A negated conjunction says nothing certain.
        let c = Term::and(
            Term::eq(i.clone(), k.clone()),
            Term::not(Term::and(Term::le(k.clone(), i.clone()), Term::le(i.clone(), k.clone()))),
        );
        assert!(!empty(&c, &i));
        // Literal bounds: 3 <= i < 3.
        let c = Term::and(Term::le(Term::int(3), i.clone()), Term::lt(i.clone(), Term::int(3)));
        assert!(empty(&c, &i));
        // k - 1 < i <= k - 1 (k - 1 written as a subtraction).
        let km1 = Term::sub(k.clone(), Term::int(1));
        let c = Term::and(Term::lt(km1.clone(), i.clone()), Term::le(i.clone(), km1));
        assert!(empty(&c, &i));
    }
}
