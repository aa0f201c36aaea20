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
    let states: Vec<&State> = arms.iter().map(|a| a.state).collect();
    let guards: Vec<Term> = arms.iter().map(|a| a.guard.clone()).collect();
    merge_states_with(before, assigned, &states, &mut |hint, values| {
        name(hint, by_guards(&guards, values))
    })
}

/// `ite(g1, v1, ite(g2, v2, ... vn))`.
fn by_guards(guards: &[Term], values: &[Term]) -> Term {
    let mut it = guards.iter().zip(values).rev();
    let mut out = it.next().map(|(_, v)| v.clone()).unwrap_or_else(Term::unit);
    for (g, v) in it {
        out = Term::ite(g.clone(), v.clone(), out);
    }
    out
}

/// Names a merged value given its value in each arm (in order): returns the term the
/// merged state holds (the caller defines it).
pub type Chooser<'n> = dyn FnMut(&str, &[Term]) -> Term + 'n;

/// As `merge_states`, with the merged value of each location that differs between
/// the arms made by `name` from the arms' values.
pub fn merge_states_with(
    before: &State,
    assigned: &[&str],
    states: &[&State],
    name: &mut Chooser<'_>,
) -> Option<State> {
    let first = *states.first()?;
    let same_old = |a: &&State| Rc::ptr_eq(&a.old, &first.old) || a.old.identical(&first.old);
    if !states.iter().all(same_old) {
        return None;
    }
    // Check everything before naming anything: a refused merge leaves no facts behind.
    let store_values = store_values(before, assigned, states)?;
    // Branches that leave the heap alone share it (a pointer comparison).
    let unchanged_heap = states.iter().all(|a| a.heap.identical(&first.heap));
    let heap_values = if unchanged_heap { None } else { Some(heap_values(states)?) };
    let mut store = before.store.clone();
    for (x, values) in store_values {
        let merged = merge_values(&values, &x, name);
        store.insert_mut(x, merged);
    }
    let heap = match heap_values {
        None => first.heap.clone(),
        Some(chunks) => build_heap(chunks, name),
    };
    Some(State { heap, old: first.old.clone(), store })
}

/// Can these values merge (equal, or not references)?
fn mergeable(values: &[Term]) -> bool {
    values.iter().all(|v| v == &values[0]) || values[0].sort() != Sort::Ref
}

/// The arms' values, named by `name` (`ite(g1, v1, ite(g2, v2, ... vn))`);
/// equal values stay as they are. Values built by the same operation merge argument
/// by argument (`merge(r + 1, r + 2)` is `r + merge(1, 2)`: the same value, with the
/// shared part outside the `ite`, which the solver then needs no case split to see).
fn merge_values(values: &[Term], hint: &str, name: &mut Chooser<'_>) -> Term {
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
                merge_values(&column, hint, name)
            })
            .collect();
        return Term::rebuild(op, last.sort(), args);
    }
    name(hint, values)
}

/// The leaves of one `join` as a binary branching tree, read from where each leaf's
/// path parts from the previous leaf's (`JoinLeaf`; the `then` side's leaves come
/// before the `else` side's). Which leaf a state belongs to is then an `ite` over the
/// conditions where paths part, as large as the tree (an `else if` chain of n arms:
/// `ite(c1, v1, ite(c2, v2, ... vn))`, n conditions, where the leaves' whole paths
/// hold n²/2), and the entries a subtree shares are assumed once, under the range of
/// leaf numbers the subtree spans (`entry_ranges`).
pub struct Splits {
    /// Split k parts leaves 0..=k from leaves k+1..: the condition on the first side.
    conds: Vec<Term>,
    /// Each split's children (a leaf or another split) and the splits in an order
    /// where children come first.
    left: Vec<Child>,
    right: Vec<Child>,
    order: Vec<usize>,
    root: Option<usize>,
}

#[derive(Clone, Copy)]
enum Child {
    Leaf(usize),
    Split(usize),
}

impl Splits {
    /// The tree of `leaves`, or `None` when they are not the leaves of one binary
    /// tree whose two sides of each split assume a condition and its negation (the
    /// caller then does not use it).
    pub fn of<T>(leaves: &[crate::rules::JoinLeaf<T>]) -> Option<Splits> {
        use crate::decider::Kind;
        let m = leaves.len().checked_sub(1)?;
        let (mut conds, mut depths) = (Vec::with_capacity(m), Vec::with_capacity(m));
        for l in &leaves[1..] {
            let before = l.parted.as_ref()?;
            let after = l.own.first()?;
            let negated = Term::not(before.term.clone()) == after.term
                || Term::not(after.term.clone()) == before.term;
            if before.kind != Kind::Branch || after.kind != Kind::Branch || !negated {
                return None;
            }
            conds.push(before.term.clone());
            depths.push(l.shared);
        }
        // The Cartesian tree of the depths (the shallowest split at the root). Two
        // splits at one depth with no shallower one between would be one node split
        // three ways: not a binary tree.
        let (mut left, mut right) = (vec![None; m], vec![None; m]);
        let mut stack: Vec<usize> = vec![];
        for j in 0..m {
            let mut last = None;
            while let Some(&top) = stack.last()
                && depths[top] > depths[j]
            {
                last = stack.pop();
            }
            if let Some(&top) = stack.last() {
                if depths[top] == depths[j] {
                    return None;
                }
                right[top] = Some(j);
            }
            left[j] = last;
            stack.push(j);
        }
        // A child is deeper than its parent: deepest first is children first.
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by_key(|&j| std::cmp::Reverse(depths[j]));
        Some(Splits {
            conds,
            left: (0..m).map(|j| left[j].map_or(Child::Leaf(j), Child::Split)).collect(),
            right: (0..m).map(|j| right[j].map_or(Child::Leaf(j + 1), Child::Split)).collect(),
            order,
            root: stack.first().copied(),
        })
    }

    /// `values[i]` under the conditions of leaf i's path (one value per leaf).
    pub fn choose(&self, values: &[Term]) -> Term {
        let Some(root) = self.root else { return values[0].clone() };
        let mut at: Vec<Option<Term>> = vec![None; self.conds.len()];
        for &j in &self.order {
            let side = |c: Child, at: &mut Vec<Option<Term>>| match c {
                Child::Leaf(i) => values[i].clone(),
                Child::Split(k) => at[k].take().unwrap_or_else(Term::unit),
            };
            let (a, b) = (side(self.left[j], &mut at), side(self.right[j], &mut at));
            at[j] = Some(Term::ite(self.conds[j].clone(), a, b));
        }
        at[root].take().unwrap_or_else(Term::unit)
    }
}

/// Each entry of the leaves' paths once, with the first and the last leaf whose path
/// holds it (a subtree's leaves are consecutive), and whether it is a condition where
/// two leaves' paths part (what `Splits` encodes).
pub fn entry_ranges<T>(
    leaves: &[crate::rules::JoinLeaf<T>],
) -> Vec<(crate::decider::PcEntry, usize, usize, bool)> {
    let mut out = vec![];
    // The current path: each entry, the first leaf holding it, whether a split's.
    let mut open: Vec<(crate::decider::PcEntry, usize, bool)> = vec![];
    for (t, l) in leaves.iter().enumerate() {
        while open.len() > l.shared {
            let (e, lo, split) = open.pop().expect("non-empty");
            // The entry at the depth where leaf t's path parts from the previous one.
            let split = split || (t > 0 && open.len() == l.shared);
            out.push((e, lo, t - 1, split));
        }
        open.extend(l.own.iter().enumerate().map(|(i, e)| (e.clone(), t, t > 0 && i == 0)));
    }
    let last = leaves.len().saturating_sub(1);
    out.extend(open.into_iter().map(|(e, lo, split)| (e, lo, last, split)));
    out
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
fn store_values(before: &State, assigned: &[&str], arms: &[&State]) -> Option<Values> {
    let mut out = vec![];
    for x in assigned {
        let Some((x, _)) = before.store.get_key_value(*x) else { continue };
        let values: Vec<Term> = arms.iter().map(|a| a.get(x).cloned()).collect::<Option<_>>()?;
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
fn heap_values(arms: &[&State]) -> Option<Vec<(Chunk, Vec<Term>)>> {
    let heaps: Vec<Vec<&Chunk>> = arms.iter().map(|a| a.heap.iter().collect()).collect();
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

fn build_heap(chunks: Vec<(Chunk, Vec<Term>)>, name: &mut Chooser<'_>) -> Heap {
    let mut heap = Heap::new();
    for (c, values) in chunks {
        let hint = match &c.kind {
            crate::state::chunk::ChunkKind::Field(f) => {
                f.rsplit('.').next().unwrap_or(f).to_string()
            }
            _ => "snap".to_string(),
        };
        let value = merge_values(&values, &hint, name);
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

    use crate::decider::{Kind, PcEntry};
    use crate::rules::JoinLeaf;

    fn entry(t: &Term, kind: Kind) -> PcEntry {
        PcEntry { term: t.clone(), kind }
    }

    /// The leaves of an `else if` chain on `x` of `n` arms (the last the `else`), as
    /// `join` gives them: leaf i took `x != 0 .. x != i-1` and `x == i`, and holds
    /// the fact `f_i`.
    fn chain(n: usize) -> Vec<JoinLeaf<i64>> {
        let x = int_var("x");
        let c = |i: usize| Term::eq(x.clone(), Term::int(i as i64));
        let fact = |i: usize| entry(&Term::eq(int_var(&format!("f{i}")), Term::int(1)), Kind::Fact);
        (0..n)
            .map(|i| {
                let last = i == n - 1;
                let mut own = vec![];
                if i > 0 {
                    own.push(entry(&Term::not(c(i - 1)), Kind::Branch));
                }
                if !last {
                    own.push(entry(&c(i), Kind::Branch));
                }
                own.push(fact(i));
                let parted = (i > 0).then(|| entry(&c(i - 1), Kind::Branch));
                JoinLeaf { shared: i.saturating_sub(1), parted, own, value: i as i64 }
            })
            .collect()
    }

    #[test]
    fn a_chain_chooses_by_its_conditions_in_order() {
        let leaves = chain(3);
        let sp = Splits::of(&leaves).expect("a binary tree");
        let v: Vec<Term> = (0..3).map(|i| int_var(&format!("v{i}"))).collect();
        let x = int_var("x");
        let c = |i: i64| Term::eq(x.clone(), Term::int(i));
        assert_eq!(
            sp.choose(&v),
            Term::ite(c(0), v[0].clone(), Term::ite(c(1), v[1].clone(), v[2].clone()))
        );
        // Each fact once, under the one leaf that holds it; the conditions where the
        // paths part are flagged.
        let ranges = entry_ranges(&leaves);
        let facts: Vec<(usize, usize)> = ranges
            .iter()
            .filter(|(e, ..)| e.kind == Kind::Fact)
            .map(|&(_, lo, hi, _)| (lo, hi))
            .collect();
        assert_eq!(facts, vec![(0, 0), (1, 1), (2, 2)]);
        assert!(ranges.iter().filter(|r| r.0.kind == Kind::Branch).all(|r| r.3));
        // `x != 0` is shared by leaves 1 and 2.
        let ne0 = Term::not(c(0));
        assert!(ranges.iter().any(|(e, lo, hi, _)| e.term == ne0 && (*lo, *hi) == (1, 2)));
    }

    #[test]
    fn a_node_split_three_ways_or_without_a_negation_is_no_tree() {
        let mut leaves = chain(3);
        // Leaf 2 parts from leaf 1 at leaf 1's depth as well: three ways at one node.
        leaves[2].shared = 0;
        leaves[2].parted = leaves[1].own.first().cloned();
        leaves[2].own = vec![entry(&Term::eq(int_var("x"), Term::int(0)), Kind::Branch)];
        assert!(Splits::of(&leaves).is_none());
        let mut leaves = chain(2);
        leaves[1].own[0] = entry(&Term::var("b", Sort::Bool), Kind::Branch);
        assert!(Splits::of(&leaves).is_none(), "the sides are not c and !c");
    }

    #[test]
    fn a_balanced_tree_chooses_by_its_nodes() {
        // Leaves [a, b], [a, !b], [!a, c], [!a, !c].
        let (a, b, c) =
            (Term::var("a", Sort::Bool), Term::var("b", Sort::Bool), Term::var("c", Sort::Bool));
        let br = |t: &Term| entry(t, Kind::Branch);
        let leaves = vec![
            JoinLeaf { shared: 0, parted: None, own: vec![br(&a), br(&b)], value: 0 },
            JoinLeaf {
                shared: 1,
                parted: Some(br(&b)),
                own: vec![br(&Term::not(b.clone()))],
                value: 1,
            },
            JoinLeaf {
                shared: 0,
                parted: Some(br(&a)),
                own: vec![br(&Term::not(a.clone())), br(&c)],
                value: 2,
            },
            JoinLeaf {
                shared: 1,
                parted: Some(br(&c)),
                own: vec![br(&Term::not(c.clone()))],
                value: 3,
            },
        ];
        let sp = Splits::of(&leaves).expect("a binary tree");
        let v: Vec<Term> = (0..4).map(Term::int).collect();
        assert_eq!(
            sp.choose(&v),
            Term::ite(
                a,
                Term::ite(b, v[0].clone(), v[1].clone()),
                Term::ite(c, v[2].clone(), v[3].clone())
            )
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
