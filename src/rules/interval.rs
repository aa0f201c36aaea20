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

/// A condition that is exactly a conjunction of bounds on the index: `i >= l` for
/// every `l` of `lows` and `i <= u` for every `u` of `ups`.
#[derive(Clone, Debug, PartialEq)]
pub struct Conj {
    lows: Vec<Bound>,
    ups: Vec<Bound>,
}

/// Does `t` mention the index?
fn mentions(t: &Term, i: &Term) -> bool {
    *t == *i || t.args().iter().any(|a| mentions(a, i))
}

impl Conj {
    /// `c` as bounds on `i`, when every atom of the conjunction is one (else `None`:
    /// the caller keeps the term).
    pub fn of(c: &Term, i: &Term) -> Option<Conj> {
        let mut atoms = vec![c];
        let mut flat = vec![];
        while let Some(t) = atoms.pop() {
            match t.op() {
                Op::And => atoms.extend(t.args().iter()),
                Op::Bool(true) => {}
                _ => flat.push(t),
            }
        }
        let (mut lows, mut ups) = (vec![], vec![]);
        for t in flat {
            let (n_lo, n_up) = (lows.len(), ups.len());
            let (atom, negated) = match t.op() {
                Op::Not => (&t.args()[0], true),
                _ => (t, false),
            };
            if !matches!(atom.op(), Op::Le | Op::Lt | Op::Eq) || (negated && *atom.op() == Op::Eq) {
                return None;
            }
            let other = if atom.args()[0] == *i { &atom.args()[1] } else { &atom.args()[0] };
            if mentions(other, i) {
                return None;
            }
            bounds_of(atom, i, negated, &mut lows, &mut ups);
            // Every atom must give a bound (an atom without the index gives none).
            if lows.len() == n_lo && ups.len() == n_up {
                return None;
            }
        }
        Some(Conj { lows, ups }.tightened())
    }

    /// Keep the tightest bound per base (the largest lower, the smallest upper).
    fn tightened(self) -> Conj {
        fn keep(bs: Vec<Bound>, better: impl Fn(i128, i128) -> bool) -> Vec<Bound> {
            let mut out: Vec<Bound> = vec![];
            for (b, o) in bs {
                match out.iter_mut().find(|(ob, _)| *ob == b) {
                    Some(slot) if better(o, slot.1) => slot.1 = o,
                    Some(_) => {}
                    None => out.push((b, o)),
                }
            }
            out
        }
        Conj { lows: keep(self.lows, |a, b| a > b), ups: keep(self.ups, |a, b| a < b) }
    }

    /// No index satisfies it (by syntax: a lower bound above an upper bound on the
    /// same base).
    pub fn is_empty(&self) -> bool {
        self.lows.iter().any(|(lb, l)| self.ups.iter().any(|(ub, u)| lb == ub && l > u))
    }

    /// Some index satisfies it for every value of every symbol: it is not empty by
    /// syntax and its bounds are all on one base (or all literals), or it is bounded
    /// on one side only.
    pub fn is_inhabited(&self) -> bool {
        let mut bases = self.lows.iter().chain(&self.ups).map(|(b, _)| b);
        let one_base = bases.next().is_none_or(|b0| bases.all(|b| b == b0));
        !self.is_empty() && (one_base || self.lows.is_empty() || self.ups.is_empty())
    }

    /// Both conditions.
    pub fn and(&self, other: &Conj) -> Conj {
        let mut lows = self.lows.clone();
        lows.extend(other.lows.iter().cloned());
        let mut ups = self.ups.clone();
        ups.extend(other.ups.iter().cloned());
        Conj { lows, ups }.tightened()
    }

    /// `self` without `other`, exactly, as disjoint conjunctions (the syntactically
    /// empty ones left out): `x ∧ ¬b1`, `x ∧ b1 ∧ ¬b2`, ... over `other`'s bounds.
    pub fn minus(&self, other: &Conj) -> Vec<Conj> {
        let mut out = vec![];
        let mut so_far = self.clone();
        let bounds =
            other.lows.iter().map(|b| (b, true)).chain(other.ups.iter().map(|b| (b, false)));
        for ((base, off), is_low) in bounds {
            // ¬(i >= l) is i <= l - 1; ¬(i <= u) is i >= u + 1.
            let mut outside = so_far.clone();
            let mut inside = so_far.clone();
            if is_low {
                outside.ups.push((base.clone(), off - 1));
                inside.lows.push((base.clone(), *off));
            } else {
                outside.lows.push((base.clone(), off + 1));
                inside.ups.push((base.clone(), *off));
            }
            let outside = outside.tightened();
            if !outside.is_empty() {
                out.push(outside);
            }
            so_far = inside.tightened();
            if so_far.is_empty() {
                break;
            }
        }
        out
    }

    /// The condition as a term over `i` (`l <= i`, `i < u + 1`).
    pub fn term(&self, i: &Term) -> Term {
        let mut parts = vec![];
        for l in &self.lows {
            parts.push(Term::le(bound_term(l), i.clone()));
        }
        for (b, o) in &self.ups {
            parts.push(Term::lt(i.clone(), bound_term(&(b.clone(), o + 1))));
        }
        Term::and_all(parts)
    }
}

/// A bound as a term. An offset past 64 bits is a literal of its own (integers are
/// unbounded: it must never become `false`, which would make a range empty).
fn bound_term((b, o): &Bound) -> Term {
    let o = match i64::try_from(*o) {
        Ok(o) => Term::int(o),
        Err(_) => Term::big_int(&o.to_string()),
    };
    match b {
        Some(b) => Term::add(b.clone(), o),
        None => o,
    }
}

/// `(lo, hi)` when the condition `c` over `i` is one range `lo <= i < hi` (one lower
/// and one upper bound, in whatever form they were written).
pub fn range(c: &Term, i: &Term) -> Option<(Term, Term)> {
    let Conj { lows, ups } = Conj::of(c, i)?;
    let ([lo], [(b, o)]) = (lows.as_slice(), ups.as_slice()) else { return None };
    Some((bound_term(lo), bound_term(&(b.clone(), o + 1))))
}

/// `a` without `b` as conditions over `i`: by bounds where both are conjunctions of
/// bounds (several disjoint conditions, none when `a` lies inside `b`), else the term
/// `a ∧ ¬b`.
pub fn minus(a: &Term, b: &Term, i: &Term) -> Vec<Term> {
    match (Conj::of(a, i), Conj::of(b, i)) {
        (Some(x), Some(y)) => x.minus(&y).iter().map(|c| c.term(i)).collect(),
        _ => vec![Term::and(a.clone(), Term::not(b.clone()))],
    }
}

/// `a ∧ b` over `i`, with their bounds tightened where both are conjunctions of bounds.
pub fn and(a: &Term, b: &Term, i: &Term) -> Term {
    match (Conj::of(a, i), Conj::of(b, i)) {
        (Some(x), Some(y)) => {
            let z = x.and(&y);
            if z.is_empty() { Term::ff() } else { z.term(i) }
        }
        _ => Term::and(a.clone(), b.clone()),
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

/// Does some value of `i` satisfy `c` whatever the other symbols are, by its syntax
/// alone (`3 <= i && i < 5`, `k <= i && i < k + 2`)?
pub fn inhabited(c: &Term, i: &Term) -> bool {
    Conj::of(c, i).is_some_and(|k| k.is_inhabited())
}

/// Is `c` a conjunction of bounds on `i` (every atom compares `i` with a term without
/// it) that is not empty by its syntax? Whether it is empty then depends only on
/// the values of the bounds.
pub fn only_bounds(c: &Term, i: &Term) -> bool {
    Conj::of(c, i).is_some_and(|k| !k.is_empty())
}

/// Is `c` a conjunction of integer comparisons each of which mentions a symbol that
/// `fresh` accepts (`0 <= i && i < j && j < n`, with `i` and `j` fresh)?
pub fn compares_fresh(c: &Term, fresh: &dyn Fn(&Term) -> bool) -> bool {
    fn conjuncts<'t>(t: &'t Term, out: &mut Vec<&'t Term>) {
        if *t.op() == Op::And {
            t.args().iter().for_each(|a| conjuncts(a, out));
        } else {
            out.push(t);
        }
    }
    let mut atoms = vec![];
    conjuncts(c, &mut atoms);
    !atoms.is_empty()
        && atoms.iter().all(|a| {
            let a = if *a.op() == Op::Not { &a.args()[0] } else { a };
            matches!(a.op(), Op::Le | Op::Lt | Op::Eq)
                && a.args().iter().all(|x| x.sort() == crate::state::term::Sort::Int)
                && a.symbols().iter().any(fresh)
        })
}

#[cfg(test)]
mod tests {
    use super::empty;
    use crate::state::term::{Sort, Term};

    fn v(name: &str) -> Term {
        Term::var(name, Sort::Int)
    }

    #[test]
    fn comparisons_each_with_a_fresh_symbol() {
        use super::compares_fresh;
        let (i, j, n) = (v("i"), v("j"), v("n"));
        let fresh = |x: &Term| *x == i || *x == j;
        let two = Term::and_all(vec![
            Term::le(Term::int(0), i.clone()),
            Term::lt(i.clone(), j.clone()),
            Term::lt(j.clone(), n.clone()),
        ]);
        assert!(compares_fresh(&two, &fresh));
        // An atom on the path's symbols alone (`0 < n`) may be what makes it empty.
        let with_n = Term::and(two.clone(), Term::lt(Term::int(0), n.clone()));
        assert!(!compares_fresh(&with_n, &fresh));
        // Anything but a comparison of integers is left to the solver.
        let b = Term::var("b", Sort::Bool);
        assert!(!compares_fresh(&Term::and(two, b), &fresh));
        assert!(!compares_fresh(&Term::lt(n.clone(), Term::int(3)), &fresh));
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
    fn differences_partition_exactly() {
        use super::{and, minus};
        let (i, n) = (v("i#"), v("n"));
        let whole = Term::and(Term::le(Term::int(0), i.clone()), Term::lt(i.clone(), n.clone()));
        let first = Term::and(Term::le(Term::int(0), i.clone()), Term::lt(i.clone(), Term::int(1)));
        // [0, n) without [0, 1) is [1, n): one piece.
        let rest = minus(&whole, &first, &i);
        assert_eq!(rest.len(), 1, "{rest:?}");
        let one_to_n = Term::and(Term::le(Term::int(1), i.clone()), Term::lt(i.clone(), n.clone()));
        assert_eq!(rest[0], one_to_n);
        // [1, n) without [0, 1): all of [1, n) (the first piece is empty: no index
        // below 0 in [1, n); the second is [1, n) itself).
        let again = minus(&one_to_n, &first, &i);
        assert_eq!(again, vec![one_to_n.clone()]);
        // [0, 1) and [1, n) meet nowhere.
        assert!(and(&first, &one_to_n, &i).is_false());
        // [0, n) without [2, 5): [0, 2) and [5, n), checked index by index for n = 8.
        let mid = Term::and(Term::le(Term::int(2), i.clone()), Term::lt(i.clone(), Term::int(5)));
        let pieces = minus(&whole, &mid, &i);
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        for k in -2..10 {
            let mut map = crate::state::term::TermMap::default();
            map.insert(i.clone(), Term::int(k));
            map.insert(n.clone(), Term::int(8));
            let holds = |t: &Term| t.substitute(&map).as_bool().expect("closed");
            let expected = (0..8).contains(&k) && !(2..5).contains(&k);
            let count = pieces.iter().filter(|p| holds(p)).count();
            assert_eq!(count, usize::from(expected), "index {k}");
        }
        // Not a conjunction of bounds: the term difference.
        let odd = Term::eq(Term::int(0), Term::sub(i.clone(), i.clone()));
        assert_eq!(minus(&whole, &odd, &i).len(), 1);
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

    #[test]
    fn inhabited_only_when_no_value_can_empty_it() {
        use super::{inhabited, only_bounds};
        let (i, k, n) = (v("i#"), v("k"), v("n"));
        let range = |a: Term, b: Term| Term::and(Term::le(a, i.clone()), Term::lt(i.clone(), b));
        // Literal bounds: [3, 5) has 3; [3, 3) has nothing.
        assert!(inhabited(&range(Term::int(3), Term::int(5)), &i));
        assert!(!inhabited(&range(Term::int(3), Term::int(3)), &i));
        // One base: [k, k + 2) has k, whatever k is.
        assert!(inhabited(&range(k.clone(), Term::add(k.clone(), Term::int(2))), &i));
        // Different bases: [0, n) is empty when n <= 0, so not certain.
        assert!(!inhabited(&range(Term::int(0), n.clone()), &i));
        assert!(!inhabited(&range(k.clone(), n.clone()), &i));
        // Bounded on one side only: some integer is above every lower bound.
        let above = Term::and(Term::le(k.clone(), i.clone()), Term::le(n.clone(), i.clone()));
        assert!(inhabited(&above, &i));
        // Not only bounds: not decided.
        let odd = Term::and(Term::le(Term::int(0), i.clone()), Term::eq(k.clone(), n.clone()));
        assert!(!inhabited(&odd, &i));
        // `only_bounds`: bounds on `i` alone, not syntactically empty.
        assert!(only_bounds(&range(Term::int(0), n.clone()), &i));
        assert!(!only_bounds(&range(Term::int(3), Term::int(3)), &i));
        assert!(!only_bounds(&odd, &i));
    }
}
