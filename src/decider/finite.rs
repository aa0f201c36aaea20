//! Universal goals over a small range of integers written out as their instances.
//!
//! `∀ i, j :: 0 <= i && i < j && j < n ==> a[i] <= a[j]`, asked of a path on which `n`
//! is 3 and `a` a literal array (a client calling a method that requires its array
//! sorted), is the conjunction of its three instances; with literal indices each
//! instance simplifies as it is built (read over write, comparisons of literals), most
//! often to `true`, and what is left is a ground goal. The solver would otherwise
//! skolemise the goal and split cases over the array's writes.

use crate::state::term::{Op, Sort, Term, TermMap};

/// At most this many instances are written out.
pub const MAX_INSTANCES: i64 = 64;

/// At most this many instances may be left once each is simplified: more, and the
/// solver does better with the quantifier (one skolem constant, where each instance
/// left is a goal of its own that instantiates the path's quantified facts: a
/// postcondition over 60 elements written by a callee took longer that way).
pub const MAX_LEFT: usize = 8;

/// The conjunction of the instances of the universal goal `goal` when each of its
/// bound integer variables has literal bounds in the goal's guard (directly, through
/// another bound variable, or through a term `lookup` gives a literal value for), the
/// range has at most [`MAX_INSTANCES`] points, and at most [`MAX_LEFT`] instances do
/// not simplify to `true`. `None` otherwise.
pub fn instances(goal: &Term, lookup: &dyn Fn(&Term) -> Option<i64>) -> Option<Term> {
    let Op::Quant(b) = goal.op() else { return None };
    if !b.forall {
        return None;
    }
    written_out(goal, lookup)
}

/// The quantifier `t` as its instances: a `forall` as the conjunction of those that
/// do not simplify to `true` (its guard, the left side of its `==>`, bounding every
/// variable as [`instances`] says); an `exists` as the disjunction of those that do
/// not simplify to `false`, the bounds among the conjuncts of its body (one that
/// simplifies to `true` makes it `true`). At most [`MAX_LEFT`] left; `None` otherwise.
fn written_out(t: &Term, lookup: &dyn Fn(&Term) -> Option<i64>) -> Option<Term> {
    let Op::Quant(b) = t.op() else { return None };
    let (vars, _, body) = t.quant_parts();
    let guard = match (b.forall, body.op()) {
        (true, Op::Implies) => &body.args()[0],
        (true, _) => return None,
        (false, _) => body,
    };
    let ranges = literal_ranges(vars, guard, lookup)?;
    let left = each_point(vars, &ranges, body, b.forall)?;
    Some(if b.forall { Term::and_all(left) } else { Term::or_all(left) })
}

/// A copy of `t` in which every quantifier reached through its Boolean structure
/// (`∧ ∨ ¬ ⇒`, `ite`, equalities of Booleans) whose bound variables have literal
/// bounds is its conjunction or disjunction of instances ([`written_out`]), by syntax
/// alone. A pure method's definition instantiated at
/// literal arguments (`has(seq(5, 6, 7), 6)` for a body `exists i :: 0 <= i && i <
/// s.length && s[i] == x`) then says what it says without E-matching, which would need
/// a term `s[1]` that folding a literal's index never leaves.
pub fn expand(t: &Term) -> Term {
    match t.op() {
        Op::Quant(_) => match written_out(t, &|_| None) {
            Some(e) => expand(&e),
            None => t.clone(),
        },
        Op::And | Op::Or | Op::Not | Op::Implies | Op::Ite => rebuild_with(t, expand),
        Op::Eq if t.args()[0].sort() == Sort::Bool => rebuild_with(t, expand),
        _ => t.clone(),
    }
}

/// `t` with `f` applied to its arguments (`t` itself when none changed).
fn rebuild_with(t: &Term, f: fn(&Term) -> Term) -> Term {
    let args: Vec<Term> = t.args().iter().map(f).collect();
    if args.iter().zip(t.args()).all(|(a, b)| a == b) {
        return t.clone();
    }
    Term::rebuild(t.op(), t.sort(), args)
}

/// The literal range `[lo, hi]` of each of `vars` bounded by the conjuncts of
/// `guard` (directly, through another bound variable, or a term `lookup` gives a
/// value for), when every variable has both bounds and the box has at most
/// [`MAX_INSTANCES`] points.
fn literal_ranges(
    vars: &[Term],
    guard: &Term,
    lookup: &dyn Fn(&Term) -> Option<i64>,
) -> Option<Vec<(i64, i64)>> {
    if vars.iter().any(|v| v.sort() != Sort::Int) {
        return None;
    }
    let n = vars.len();
    let index = |t: &Term| vars.iter().position(|v| v == t);
    let value = |t: &Term| t.as_int().or_else(|| lookup(t));
    let mut lo: Vec<Option<i64>> = vec![None; n];
    let mut hi: Vec<Option<i64>> = vec![None; n];
    // `x < y` between bound variables, as (x, y, strict).
    let mut order: Vec<(usize, usize, bool)> = vec![];
    let conjuncts: Vec<&Term> =
        if let Op::And = guard.op() { guard.args().iter().collect() } else { vec![guard] };
    for c in conjuncts {
        let strict = match c.op() {
            Op::Lt => true,
            Op::Le => false,
            _ => continue,
        };
        let (x, y) = (&c.args()[0], &c.args()[1]);
        match (index(x), index(y)) {
            (Some(i), Some(j)) => order.push((i, j, strict)),
            (Some(i), None) => {
                if let Some(k) = value(y) {
                    let k = if strict { k.checked_sub(1)? } else { k };
                    hi[i] = Some(hi[i].map_or(k, |h| h.min(k)));
                }
            }
            (None, Some(j)) => {
                if let Some(k) = value(x) {
                    let k = if strict { k.checked_add(1)? } else { k };
                    lo[j] = Some(lo[j].map_or(k, |l| l.max(k)));
                }
            }
            (None, None) => {}
        }
    }
    // Bounds through the order among the variables (`i < j`, `j < 3`: `i < 2`).
    for _ in 0..n {
        for &(i, j, strict) in &order {
            let d = if strict { 1 } else { 0 };
            if let Some(h) = hi[j] {
                let h = h.checked_sub(d)?;
                hi[i] = Some(hi[i].map_or(h, |x| x.min(h)));
            }
            if let Some(l) = lo[i] {
                let l = l.checked_add(d)?;
                lo[j] = Some(lo[j].map_or(l, |x| x.max(l)));
            }
        }
    }
    let mut size: i64 = 1;
    let mut ranges = Vec::with_capacity(n);
    for k in 0..n {
        let (l, h) = (lo[k]?, hi[k]?);
        let width = if h < l { 0 } else { h.checked_sub(l)?.checked_add(1)? };
        size = size.checked_mul(width)?;
        if size > MAX_INSTANCES {
            return None;
        }
        ranges.push((l, h));
    }
    if size == 0 {
        return Some(vec![]);
    }
    Some(ranges)
}

/// The instances of `body` at every point of the box `ranges` (none for an empty box)
/// that do not simplify to `neutral` (`true` for a conjunction), or `None` past
/// [`MAX_LEFT`] of them; for a disjunction (`neutral` false), an instance that
/// simplifies to `true` is the only one returned.
fn each_point(
    vars: &[Term],
    ranges: &[(i64, i64)],
    body: &Term,
    neutral: bool,
) -> Option<Vec<Term>> {
    let mut out = vec![];
    if ranges.is_empty() {
        return Some(out);
    }
    let n = vars.len();
    let mut point: Vec<i64> = ranges.iter().map(|r| r.0).collect();
    loop {
        let map: TermMap<Term, Term> =
            vars.iter().cloned().zip(point.iter().map(|&v| Term::int(v))).collect();
        let instance = body.substitute(&map);
        match instance.as_bool() {
            Some(b) if b == neutral => {}
            Some(_) if !neutral => return Some(vec![instance]),
            _ => {
                if out.len() == MAX_LEFT {
                    return None;
                }
                out.push(instance);
            }
        }
        // The next point of the box, the last variable fastest.
        let mut k = n;
        loop {
            if k == 0 {
                return Some(out);
            }
            k -= 1;
            if point[k] < ranges[k].1 {
                point[k] += 1;
                break;
            }
            point[k] = ranges[k].0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted_goal(arr: &Term, n: &Term) -> Term {
        let (i, j) = (Term::var("i", Sort::Int), Term::var("j", Sort::Int));
        let guard = Term::and_all(vec![
            Term::le(Term::int(0), i.clone()),
            Term::lt(i.clone(), j.clone()),
            Term::lt(j.clone(), n.clone()),
        ]);
        let ai = Term::select(arr.clone(), i.clone());
        let aj = Term::select(arr.clone(), j.clone());
        let body = Term::implies(guard, Term::le(ai.clone(), aj.clone()));
        Term::quant(true, vec![i, j], vec![vec![ai, aj]], body)
    }

    fn literal_array(values: &[i64]) -> Term {
        let mut a = Term::const_arr(crate::state::term::Elem::Int, Term::int(0));
        for (k, v) in values.iter().enumerate() {
            a = Term::store(a, Term::int(k as i64), Term::int(*v));
        }
        a
    }

    #[test]
    fn a_sorted_literal_array_is_sorted_by_syntax() {
        let n = Term::var("n", Sort::Int);
        let three = |t: &Term| (*t == Term::var("n", Sort::Int)).then_some(3);
        let goal = sorted_goal(&literal_array(&[1, 3, 5]), &n);
        assert_eq!(instances(&goal, &three), Some(Term::tt()));
        // Unsorted: the instance (1, 2) is left, its guard over `n` kept (the path
        // says `n` is 3: the solver then refutes it at once).
        let goal = sorted_goal(&literal_array(&[1, 5, 3]), &n);
        let left = Term::not(Term::lt(Term::int(2), n.clone()));
        assert_eq!(instances(&goal, &three), Some(left));
    }

    #[test]
    fn an_unbounded_or_large_range_is_left_to_the_solver() {
        let n = Term::var("n", Sort::Int);
        let arr = literal_array(&[1, 3, 5]);
        // No value for `n`.
        assert_eq!(instances(&sorted_goal(&arr, &n), &|_| None), None);
        // 100 elements: 4,950 pairs.
        assert_eq!(instances(&sorted_goal(&arr, &n), &|_| Some(100)), None);
        // An empty range: nothing to prove.
        assert_eq!(instances(&sorted_goal(&arr, &n), &|_| Some(0)), Some(Term::tt()));
        // Ten elements of an unknown array: 45 pairs, none decided by syntax.
        let unknown = Term::var("b", Sort::Arr(crate::state::term::Elem::Int));
        assert_eq!(instances(&sorted_goal(&unknown, &n), &|_| Some(10)), None);
        // Three: three pairs left to the solver, as ground goals.
        let three = instances(&sorted_goal(&unknown, &n), &|_| Some(3));
        assert!(three.is_some_and(|t| *t.op() == Op::And && t.args().len() == 3));
    }

    #[test]
    fn each_instance_keeps_what_the_guard_does_not_bound() {
        // ∀ i :: 0 <= i && i < 2 ==> f(i) > m: two instances over a symbol `m`.
        let (i, m) = (Term::var("i", Sort::Int), Term::var("m", Sort::Int));
        let guard = Term::and(Term::le(Term::int(0), i.clone()), Term::lt(i.clone(), Term::int(2)));
        let body = Term::implies(guard, Term::lt(m.clone(), i.clone()));
        let goal = Term::quant(true, vec![i], vec![], body);
        let want = Term::and(Term::lt(m.clone(), Term::int(0)), Term::lt(m, Term::int(1)));
        assert_eq!(instances(&goal, &|_| None), Some(want));
    }

    #[test]
    fn quantifiers_over_literal_ranges_in_a_definition_are_written_out() {
        // has(s, x) = ∃ i :: 0 <= i && i < 3 && a[i] == x over a literal array.
        let i = Term::var("i", Sort::Int);
        let arr = literal_array(&[5, 6, 7]);
        let has = |x: i64| {
            let body = Term::and_all(vec![
                Term::le(Term::int(0), i.clone()),
                Term::lt(i.clone(), Term::int(3)),
                Term::eq(Term::select(arr.clone(), i.clone()), Term::int(x)),
            ]);
            Term::quant(false, vec![i.clone()], vec![], body)
        };
        let f = Term::var("f", Sort::Bool);
        // Under the Boolean structure of a definition: `f == ∃ ..`.
        assert_eq!(expand(&Term::eq(f.clone(), has(6))), f);
        assert_eq!(expand(&Term::eq(f.clone(), has(8))), Term::not(f.clone()));
        // A bound that is not a literal: left to the solver.
        let n = Term::var("n", Sort::Int);
        let body = Term::and(
            Term::le(Term::int(0), i.clone()),
            Term::eq(Term::select(arr.clone(), i.clone()), n.clone()),
        );
        let open =
            Term::quant(false, vec![i.clone()], vec![], Term::and(Term::lt(i.clone(), n), body));
        assert_eq!(expand(&open), open);
    }
}
