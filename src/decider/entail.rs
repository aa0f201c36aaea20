//! Entailment by syntax: goals the path condition decides without a solver query.
//! A goal holds when it is on the path, when each of its conjuncts does, when the
//! consequent of an implication holds given its antecedent's conjuncts, and when an
//! integer comparison follows from a chain of comparisons on the path or among those
//! hypotheses (`i < j` and `j < n` give `i < n`; `n == 3` gives `0 < n`). Bounds
//! checks inside quantifier bodies (`0 <= i && i < j && j < a.length ==> a[i] ...`)
//! and the well-formedness of quantified permissions (`0 <= k && k < a.length ==>
//! a != null`) are such goals: many of them in a member, each a query otherwise.
//!
//! Sound by construction: every step is a rule of integer arithmetic (`x + s <= y`
//! chains, `x < y` is `x + 1 <= y` on integers); only integer comparisons are chained
//! (amounts are rationals). `false` means "not decided here", never "refuted".

use crate::state::term::{Op, Sort, Term};
use std::collections::HashMap;

/// How far a chain of comparisons is followed (each round extends every chain by one
/// comparison).
const ROUNDS: usize = 4;

/// At most this many comparisons of the path are chained (its latest): chains are
/// short, and a long straight-line path must not make each goal cost its length.
pub const MAX_ATOMS: usize = 400;

/// Does `goal` follow from what `known` says is on the path and from the integer
/// comparisons `atoms` (the path's), by syntax alone?
pub fn entails(known: &dyn Fn(&Term) -> bool, atoms: &[Term], goal: &Term) -> bool {
    let mut hyps: Vec<Term> = vec![];
    entails_under(known, atoms, &mut hyps, &[], goal)
}

fn entails_under(
    known: &dyn Fn(&Term) -> bool,
    atoms: &[Term],
    hyps: &mut Vec<Term>,
    bound: &[Term],
    goal: &Term,
) -> bool {
    // Inside a quantifier, nothing the path says of its bound symbols counts (they
    // stand for every value there).
    let free = |t: &Term| bound.is_empty() || !t.symbols().iter().any(|x| bound.contains(x));
    if goal.is_true() || hyps.contains(goal) || (free(goal) && known(goal)) {
        return true;
    }
    match goal.op() {
        Op::And => goal.args().iter().all(|c| entails_under(known, atoms, hyps, bound, c)),
        Op::Implies => {
            let n = hyps.len();
            conjuncts(&goal.args()[0], hyps);
            let ok = contradictory(atoms, hyps, bound)
                || entails_under(known, atoms, hyps, bound, &goal.args()[1]);
            hyps.truncate(n);
            ok
        }
        // `¬(a ∧ b)`: `a ∧ b ⇒ false`.
        Op::Not if *goal.args()[0].op() == Op::And => {
            let n = hyps.len();
            conjuncts(&goal.args()[0], hyps);
            let ok = contradictory(atoms, hyps, bound);
            hyps.truncate(n);
            ok
        }
        Op::Quant(b) if b.forall => {
            let (vars, _, body) = goal.quant_parts();
            let mut inner: Vec<Term> = bound.to_vec();
            inner.extend(vars.iter().cloned());
            entails_under(known, atoms, hyps, &inner, body)
        }
        Op::Le | Op::Lt | Op::Eq | Op::Not => match comparison(goal) {
            Some((x, y, strict)) => chain(atoms, hyps, bound, &x, &y, strict as i64),
            None => false,
        },
        _ => false,
    }
}

/// Do the hypotheses contradict each other (with the path): some `x + s <= y` with
/// `y + t <= x` and `s + t >= 1`?
fn contradictory(atoms: &[Term], hyps: &[Term], bound: &[Term]) -> bool {
    hyps.iter().any(|h| match comparison(h) {
        Some((x, y, strict)) => chain(atoms, hyps, bound, &y, &x, 1 - strict as i64),
        None => false,
    })
}

/// `t` as `x <= y` (`false`) or `x < y` (`true`) over integers, negations read as
/// the opposite comparison; equalities are not comparisons here (see `edges`).
fn comparison(t: &Term) -> Option<(Term, Term, bool)> {
    let (negated, a) = match t.op() {
        Op::Not => (true, &t.args()[0]),
        _ => (false, t),
    };
    if !matches!(a.op(), Op::Le | Op::Lt) || a.args()[0].sort() != Sort::Int {
        return None;
    }
    let (x, y) = (a.args()[0].clone(), a.args()[1].clone());
    let strict = *a.op() == Op::Lt;
    Some(if negated { (y, x, !strict) } else { (x, y, strict) })
}

/// The edges `u + w <= v` an atom gives: a comparison one, an integer equality two.
fn edges(t: &Term, out: &mut Vec<(Term, Term, i64)>) {
    if let Some((x, y, strict)) = comparison(t) {
        out.push((x, y, strict as i64));
    } else if *t.op() == Op::Eq && t.args()[0].sort() == Sort::Int {
        let (a, b) = (&t.args()[0], &t.args()[1]);
        out.push((a.clone(), b.clone(), 0));
        out.push((b.clone(), a.clone(), 0));
    }
}

/// Is `x + need <= y`, following at most `ROUNDS` comparisons of `atoms` and `hyps`?
fn chain(atoms: &[Term], hyps: &[Term], bound: &[Term], x: &Term, y: &Term, need: i64) -> bool {
    if x == y {
        return need <= 0;
    }
    let mut es = vec![];
    for a in atoms {
        if bound.is_empty() || !a.symbols().iter().any(|s| bound.contains(s)) {
            edges(a, &mut es);
        }
    }
    for h in hyps {
        edges(h, &mut es);
    }
    // For each node reached, the largest s known with x + s <= node.
    let mut nodes: HashMap<Term, i64> = HashMap::new();
    nodes.insert(x.clone(), 0);
    if let Some(k) = x.as_int() {
        // The literal k is `k + (m - k) <= m` for every literal m.
        for (u, v, _) in &es {
            for l in [u, v] {
                if let Some(m) = l.as_int() {
                    nodes.insert(l.clone(), m.saturating_sub(k));
                }
            }
        }
    }
    let reached = |nodes: &HashMap<Term, i64>| match y.as_int() {
        // Some literal k reached with x + s <= k <= m - need.
        Some(m) => nodes.iter().any(|(n, s)| {
            n.as_int().is_some_and(|k| s.saturating_add(m.saturating_sub(k)) >= need)
        }),
        None => nodes.get(y).is_some_and(|s| *s >= need),
    };
    if reached(&nodes) {
        return true;
    }
    for _ in 0..ROUNDS {
        let mut changed = false;
        for (u, v, w) in &es {
            let Some(su) = nodes.get(u).copied() else { continue };
            let s = su.saturating_add(*w);
            let sv = nodes.entry(v.clone()).or_insert(i64::MIN);
            if *sv < s {
                *sv = s;
                changed = true;
            }
        }
        if reached(&nodes) {
            return true;
        }
        if !changed {
            break;
        }
    }
    false
}

fn conjuncts(t: &Term, out: &mut Vec<Term>) {
    if *t.op() == Op::And {
        t.args().iter().for_each(|a| conjuncts(a, out));
    } else {
        out.push(t.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::entails;
    use crate::state::term::{Sort, Term};

    fn v(name: &str) -> Term {
        Term::var(name, Sort::Int)
    }

    fn nothing(_: &Term) -> bool {
        false
    }

    #[test]
    fn chains_of_comparisons() {
        let (i, j, n) = (v("i"), v("j"), v("n"));
        let path = vec![
            Term::le(Term::int(0), i.clone()),
            Term::lt(i.clone(), j.clone()),
            Term::lt(j.clone(), n.clone()),
        ];
        let inb = Term::and(Term::le(Term::int(0), i.clone()), Term::lt(i.clone(), n.clone()));
        assert!(entails(&nothing, &path, &inb));
        // `i + 2 <= n`, not `i + 3 <= n`.
        assert!(entails(&nothing, &path, &Term::lt(Term::add(i.clone(), Term::int(0)), n.clone())));
        assert!(entails(&nothing, &path, &Term::lt(Term::int(0), n.clone())));
        assert!(entails(&nothing, &path, &Term::le(Term::int(2), n.clone())));
        assert!(!entails(&nothing, &path, &Term::le(Term::int(3), n.clone())));
        assert!(!entails(&nothing, &path, &Term::lt(n.clone(), j.clone())));
        assert!(!entails(&nothing, &path, &Term::le(Term::int(1), i.clone())));
        // Equalities with literals.
        let three = vec![Term::eq(n.clone(), Term::int(3))];
        assert!(entails(&nothing, &three, &Term::lt(Term::int(2), n.clone())));
        assert!(!entails(&nothing, &three, &Term::lt(Term::int(3), n.clone())));
        assert!(entails(&nothing, &three, &Term::le(n.clone(), Term::int(3))));
        assert!(!entails(&nothing, &three, &Term::lt(n.clone(), Term::int(3))));
    }

    #[test]
    fn implications_use_their_antecedent() {
        let (k, n, a) = (v("k"), v("n"), Term::var("a", Sort::Ref));
        let guard = Term::and(Term::le(Term::int(0), k.clone()), Term::lt(k.clone(), n.clone()));
        let nn = Term::ne(a.clone(), Term::null());
        let known = |t: &Term| *t == nn;
        assert!(entails(&known, &[], &Term::implies(guard.clone(), nn.clone())));
        assert!(!entails(&nothing, &[], &Term::implies(guard.clone(), nn.clone())));
        let inb = Term::implies(guard.clone(), Term::lt(k.clone(), n.clone()));
        assert!(entails(&nothing, &[], &inb));
        let beyond =
            Term::implies(guard.clone(), Term::lt(k.clone(), Term::sub(n.clone(), Term::int(1))));
        assert!(!entails(&nothing, &[], &beyond));
        // A contradictory antecedent (an empty range) entails anything.
        let empty = Term::and(Term::le(Term::int(0), k.clone()), Term::lt(k.clone(), Term::int(0)));
        assert!(entails(&nothing, &[], &Term::implies(empty, Term::ff())));
        let empty2 = Term::and(Term::le(n.clone(), k.clone()), Term::lt(k.clone(), n.clone()));
        assert!(entails(&nothing, &[], &Term::implies(empty2, Term::ff())));
    }

    #[test]
    fn a_quantifier_ignores_what_the_path_says_of_its_symbol() {
        let (i, n) = (v("i"), v("n"));
        // The path mentions `i` (a symbol of the same name outside the binder).
        let path = vec![Term::lt(i.clone(), n.clone())];
        let body = Term::lt(i.clone(), n.clone());
        let all = Term::quant(true, vec![i.clone()], vec![], body.clone());
        assert!(entails(&nothing, &path, &body));
        if *all.op() != crate::state::term::Op::Bool(true) {
            assert!(!entails(&nothing, &path, &all));
        }
        let known = |t: &Term| *t == body;
        assert!(!entails(&known, &[], &all));
    }
}
