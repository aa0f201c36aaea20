//! Automatic state merging at the join point of an `if` (Kuznetsov et al., "Efficient
//! state merging in symbolic execution", PLDI 2012; Silicon's `--moreJoins`): the
//! states in which the branches of one `if` end become one state whose values are
//! `ite(guard, v1, v2)`, so the code after the `if` runs once instead of once per path.
//!
//! Architecture invariant: a merge is exact or it does not happen. The leaves' guards
//! (their branch conditions) are pairwise exclusive (they are the leaves of one binary
//! branching tree) and, with every other path of the `if` ended in the ledger, cover
//! what can continue; each leaf's facts are re-assumed under its guard by the caller
//! (`Verifier::assume_leaf_facts`). Only states with the same chunks (kind, receiver
//! and arguments, syntactically, in the same order) and the same `old` heap merge;
//! values may differ, except references: a reference `ite` would defeat the syntactic
//! chunk lookup (`ite(c, a, b).f` matches neither chunk), a loss of precision this
//! module refuses rather than risks.

use crate::state::State;
use crate::state::chunk::Chunk;
use crate::state::heap::Heap;
use crate::state::term::{Op, Sort, Term};
use std::rc::Rc;

/// One state to merge and the guard under which it is the state.
pub struct Arm<'a> {
    pub guard: Term,
    pub state: &'a State,
}

/// Names a merged value: given a name hint and `ite(g1, v1, ...)`, returns the term
/// the merged state holds. The verifier gives a fresh symbol defined by that `ite` (a
/// fact of the path), so merged values stay small however many `if`s follow one
/// another; the tests keep the `ite` itself.
pub type Namer<'n> = dyn FnMut(&str, Term) -> Term + 'n;

/// The state that is `arms[i].state` under `arms[i].guard` (the last arm's state when
/// no earlier guard holds), or `None` when the states do not merge exactly. `before`
/// is the state before the `if`: only its locals outlive the branches, and of those
/// only `assigned` (the locals the branches assign, `exec::assigned_in`) can differ:
/// the others keep their value, whatever the number of locals.
pub fn merge_states(
    before: &State,
    assigned: &[&str],
    arms: &[Arm<'_>],
    name: &mut Namer<'_>,
) -> Option<State> {
    let first = arms.first()?.state;
    let same_old =
        |a: &Arm<'_>| Rc::ptr_eq(&a.state.old, &first.old) || a.state.old.identical(&first.old);
    if !arms.iter().all(same_old) {
        return None;
    }
    // Check everything before naming anything: a refused merge leaves no facts behind.
    let store_values = store_values(before, assigned, arms)?;
    // Branches that leave the heap alone share it (a pointer comparison).
    let unchanged_heap = arms.iter().all(|a| a.state.heap.identical(&first.heap));
    let heap_values = if unchanged_heap { None } else { Some(heap_values(arms)?) };
    let mut store = before.store.clone();
    for (x, values) in store_values {
        let merged = merge_values(arms, &values, &x, name);
        store.insert_mut(x, merged);
    }
    let heap = match heap_values {
        None => first.heap.clone(),
        Some(chunks) => build_heap(arms, chunks, name),
    };
    Some(State { heap, old: first.old.clone(), store })
}

/// Can these values merge (equal, or not references)?
fn mergeable(values: &[Term]) -> bool {
    values.iter().all(|v| v == &values[0]) || values[0].sort() != Sort::Ref
}

/// `ite(g1, v1, ite(g2, v2, ... vn))`, named; equal values stay as they are. Values
/// built by the same operation merge argument by argument (`merge(r + 1, r + 2)` is
/// `r + merge(1, 2)`: the same value, with the shared part outside the `ite`, which
/// the solver then needs no case split to see).
fn merge_values(arms: &[Arm<'_>], values: &[Term], hint: &str, name: &mut Namer<'_>) -> Term {
    let last = values[values.len() - 1].clone();
    if values.iter().all(|v| v == &last) {
        return last;
    }
    let op = last.op();
    let n = last.args().len();
    let same_op = n > 0
        && !matches!(op, Op::Ite)
        && values.iter().all(|v| v.op() == op && v.args().len() == n && v.sort() == last.sort());
    if same_op {
        let args: Vec<Term> = (0..n)
            .map(|i| {
                let column: Vec<Term> = values.iter().map(|v| v.args()[i].clone()).collect();
                merge_values(arms, &column, hint, name)
            })
            .collect();
        return Term::rebuild(op, last.sort(), args);
    }
    let mut out = last;
    for (a, v) in arms.iter().zip(values).rev().skip(1) {
        out = Term::ite(a.guard.clone(), v.clone(), out);
    }
    name(hint, out)
}

/// The least and the greatest value of an integer `ite` whose leaves are all literals:
/// facts the caller assumes beside the definition, so that the solver bounds a sum
/// of merged values by linear arithmetic instead of a case split per `ite`.
pub fn literal_bounds(t: &Term) -> Option<(Term, Term)> {
    fn walk(t: &Term, out: &mut Vec<Term>) -> bool {
        match t.op() {
            Op::Ite => walk(&t.args()[1], out) && walk(&t.args()[2], out),
            _ if t.as_int().is_some() => {
                out.push(t.clone());
                true
            }
            _ => false,
        }
    }
    let mut leaves = vec![];
    if t.sort() != Sort::Int || !matches!(t.op(), Op::Ite) || !walk(t, &mut leaves) {
        return None;
    }
    let key = |x: &Term| x.as_int();
    let lo = leaves.iter().min_by_key(|x| key(x))?.clone();
    let hi = leaves.iter().max_by_key(|x| key(x))?.clone();
    Some((lo, hi))
}

type Values = Vec<(Rc<str>, Vec<Term>)>;

/// Each assigned local of `before`, with its value in each arm.
fn store_values(before: &State, assigned: &[&str], arms: &[Arm<'_>]) -> Option<Values> {
    let mut out = vec![];
    for x in assigned {
        let Some((x, _)) = before.store.get_key_value(*x) else { continue };
        let values: Vec<Term> =
            arms.iter().map(|a| a.state.get(x).cloned()).collect::<Option<_>>()?;
        if !mergeable(&values) {
            return None;
        }
        out.push((x.clone(), values));
    }
    Some(out)
}

/// Same chunk, value aside?
fn same_place(a: &Chunk, b: &Chunk) -> bool {
    a.kind == b.kind && a.recv == b.recv && a.args == b.args && a.perm == b.perm && a.cond == b.cond
}

/// Each chunk of the first arm's heap, with its value in each arm, when every heap
/// holds the same chunks in the same order.
fn heap_values(arms: &[Arm<'_>]) -> Option<Vec<(Chunk, Vec<Term>)>> {
    let heaps: Vec<Vec<&Chunk>> = arms.iter().map(|a| a.state.heap.iter().collect()).collect();
    let n = heaps[0].len();
    if heaps.iter().any(|h| h.len() != n) {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let c0 = heaps[0][i];
        if heaps.iter().any(|h| !same_place(h[i], c0)) {
            return None;
        }
        let values: Vec<Term> = heaps.iter().map(|h| h[i].value.clone()).collect();
        if !mergeable(&values) {
            return None;
        }
        out.push((c0.clone(), values));
    }
    Some(out)
}

fn build_heap(arms: &[Arm<'_>], chunks: Vec<(Chunk, Vec<Term>)>, name: &mut Namer<'_>) -> Heap {
    let mut heap = Heap::new();
    for (c, values) in chunks {
        let hint = match &c.kind {
            crate::state::chunk::ChunkKind::Field(f) => {
                f.rsplit('.').next().unwrap_or(f).to_string()
            }
            _ => "snap".to_string(),
        };
        let value = merge_values(arms, &values, &hint, name);
        heap.add(Chunk { value, ..c });
    }
    heap
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_var(x: &str) -> Term {
        Term::var(x, Sort::Int)
    }

    fn state_with(x: Term, f: Term, recv: Term) -> State {
        let mut s = State::default();
        s.set("x", x);
        s.heap.add(Chunk::field("C.f".into(), recv, f));
        s
    }

    #[test]
    fn values_become_ites_under_the_guards() {
        let c = Term::var("c", Sort::Bool);
        let o = Term::var("o", Sort::Ref);
        let before = state_with(Term::int(0), Term::int(0), o.clone());
        let a = state_with(Term::int(1), Term::int(5), o.clone());
        let b = state_with(Term::int(2), Term::int(5), o.clone());
        let arms =
            [Arm { guard: c.clone(), state: &a }, Arm { guard: Term::not(c.clone()), state: &b }];
        let m =
            merge_states(&before, &["x", "r", "inner"], &arms, &mut |_, t| t).expect("mergeable");
        assert_eq!(m.get("x"), Some(&Term::ite(c, Term::int(1), Term::int(2))));
        let chunk = m.heap.iter().next().unwrap();
        assert_eq!(chunk.value, Term::int(5), "equal values stay as they are");
    }

    #[test]
    fn different_chunks_or_references_do_not_merge() {
        let c = Term::var("c", Sort::Bool);
        let (o, p) = (Term::var("o", Sort::Ref), Term::var("p", Sort::Ref));
        let before = state_with(Term::int(0), Term::int(0), o.clone());
        let a = state_with(int_var("y"), Term::int(5), o.clone());
        let b = state_with(int_var("y"), Term::int(5), p.clone());
        let arms =
            [Arm { guard: c.clone(), state: &a }, Arm { guard: Term::not(c.clone()), state: &b }];
        assert!(
            merge_states(&before, &["x", "r", "inner"], &arms, &mut |_, t| t).is_none(),
            "o.f and p.f are different chunks"
        );
        let mut a = State::default();
        a.set("r", o);
        let mut b = State::default();
        b.set("r", p);
        let mut before = State::default();
        before.set("r", Term::null());
        let arms = [Arm { guard: c.clone(), state: &a }, Arm { guard: Term::not(c), state: &b }];
        assert!(
            merge_states(&before, &["x", "r", "inner"], &arms, &mut |_, t| t).is_none(),
            "a reference ite is refused"
        );
    }

    #[test]
    fn locals_of_the_branches_are_dropped() {
        let c = Term::var("c", Sort::Bool);
        let before = State::default();
        let mut a = State::default();
        a.set("inner", Term::int(1));
        let b = State::default();
        let arms = [Arm { guard: c.clone(), state: &a }, Arm { guard: Term::not(c), state: &b }];
        let m =
            merge_states(&before, &["x", "r", "inner"], &arms, &mut |_, t| t).expect("mergeable");
        assert!(m.get("inner").is_none());
    }
}
