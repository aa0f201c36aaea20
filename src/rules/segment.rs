//! Quantified permissions over array elements (LANGUAGE.md section 12): array chunks
//! with an index condition, `t_a[i | c(i)] ↦ V # π`.
//!
//! A condition is a term over the symbol [`Chunk::index`]; `None` is the whole array
//! (`acc(a[*])`, every index in bounds), so programs without segments keep the
//! classic whole-array chunks and the classic lookups (`amount.rs`). Everything here
//! runs only once a heap holds a conditional chunk, or for a quantified permission or
//! a single element `acc(a[e], p)`:
//! - produce adds the chunk (the snapshot is its value map) after checking that every
//!   index of the condition is in bounds (one query over a fresh index);
//! - consume takes `π` at every index of `c` from the chunks of arrays provably equal
//!   to `t_a` that hold at least `π` each, disjointly (a chunk gives only where the
//!   earlier ones do not), after one query that they cover `c`; what is left of a
//!   chunk is its condition minus what was taken, plus the taken part at `π_k − π`.
//!   The snapshot is a fresh map equal to the chunks' values on `c` and to the default
//!   outside (a quantified fact triggered by reads of the map), so two snapshots with
//!   the same condition are equal when the values agree on it;
//! - a read of `a[e]` needs a chunk covering `e` at a positive amount, a write the
//!   covering amounts summing to `write`; both assume that the amounts at `e` of all
//!   arrays that may be `a` sum to at most `write` (the at-most-write fact at indices
//!   the program touches).
//!
//! Architecture invariant: conditions never mention program variables' symbols bound
//! inside a quantifier: the bound variable is replaced by `Chunk::index()` before a
//! chunk is made, and by a fresh symbol in every query.

use crate::decider::Answer;
use crate::rules::consume::QC;
use crate::rules::interval;
use crate::rules::{Q, Verifier, elem_of};
use crate::state::State;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::heap::{Heap, Slot};
use crate::state::term::{Rat, Sort, Term, TermMap};
use crate::syntax::ast::{BinOp, Expr, ExprKind, Quant};

/// A quantified permission's parts: bound variable, condition, array, amount.
pub struct QpParts<'p> {
    pub var: &'p str,
    pub cond: &'p Expr,
    pub arr: &'p Expr,
    pub amount: Option<&'p Expr>,
}

/// The parts of a checked quantified permission (section 12's shape).
pub fn qp_parts(q: &Quant) -> Option<QpParts<'_>> {
    let [b] = q.vars.as_slice() else { return None };
    let ExprKind::Binary { op: BinOp::Implies, l, r } = &q.body.kind else { return None };
    let (acc, amount) = match &r.kind {
        ExprKind::Frac { acc, amount } => (&**acc, Some(&**amount)),
        _ => (&**r, None),
    };
    let ExprKind::Acc(loc) = &acc.kind else { return None };
    let ExprKind::Index { arr, .. } = &loc.kind else { return None };
    Some(QpParts { var: &b.name.name, cond: l, arr, amount })
}

/// `c` with the index symbol replaced by `e`.
pub fn at(c: &Term, e: &Term) -> Term {
    let mut map = TermMap::default();
    map.insert(Chunk::index(), e.clone());
    c.substitute(&map)
}

/// Does the heap hold a conditional array chunk?
pub fn has_segments(h: &Heap) -> bool {
    h.of_kind(&ChunkKind::Array).any(|(_, c)| c.cond.is_some())
}

impl<'p> Verifier<'p> {
    /// Evaluate the condition of a quantified permission over the index symbol.
    pub fn qp_cond(&mut self, s: State, parts: &QpParts<'p>, q: Q<'_, 'p, Term>) {
        let mut inner = s.clone();
        inner.set(parts.var, Chunk::index());
        self.eval(inner, parts.cond, &|v, _s, c| q(v, s.clone(), c))
    }

    /// Every index of `c` is in bounds of `ta` (`index.out.of.bounds` at `a`), and `ta`
    /// is not null when some index satisfies `c` (`receiver.null`).
    pub fn qp_wellformed(&mut self, s: &State, ta: &Term, c: &Term, a: &Expr) -> bool {
        let k = self.fresh("k", Sort::Int);
        let ck = at(c, &k);
        let nn = Term::implies(ck.clone(), Term::ne(ta.clone(), Term::null()));
        if !self.check(s, &nn, a.span, "receiver.null", || {
            "the array of a quantified permission might be null".to_string()
        }) {
            return false;
        }
        let inb = Term::implies(
            ck,
            Term::and(Term::le(Term::int(0), k.clone()), Term::lt(k, Term::len(ta.clone()))),
        );
        self.check(s, &inb, a.span, "index.out.of.bounds", || {
            "an index of the quantified permission might be out of bounds".to_string()
        })
    }

    /// Add the array chunk `ta[i | c] ↦ value # pi` (no facts: they are assumed where
    /// elements are read or written).
    pub fn add_segment(
        &mut self,
        s: State,
        ta: Term,
        c: Term,
        value: Term,
        pi: Term,
        q: Q<'_, 'p, ()>,
    ) {
        let mut s = s;
        if pi.as_rat() == Some(Rat::ZERO) || c.is_false() {
            return q(self, s, ());
        }
        self.note_ref(&ta);
        // The same segment (syntactically): amounts add up, values agree on it.
        let same = s
            .heap
            .of_kind(&ChunkKind::Array)
            .find(|(_, o)| o.recv.as_ref() == Some(&ta) && o.cond.as_ref() == Some(&c))
            .map(|(slot, o)| (slot, o.clone()));
        if let Some((slot, o)) = same {
            let x = self.fresh("j", Sort::Int);
            let (r1, r2) =
                (Term::select(o.value.clone(), x.clone()), Term::select(value, x.clone()));
            let groups = read_triggers(&[&r1, &r2], &x);
            if !groups.is_empty() {
                let agree = Term::implies(at(&c, &x), Term::eq(r1, r2));
                self.dec.assume_derived(Term::quant(true, vec![x], groups, agree));
            }
            let sum = Term::add(o.perm.clone(), pi);
            s.heap.replace(&slot, o.at(sum));
            return q(self, s, ());
        }
        let mut chunk = Chunk::array(ta.clone(), value).at(pi);
        chunk.cond = Some(c.clone());
        self.assume_agreement(&s.heap, &chunk);
        s.heap.add(chunk);
        self.note_heap_size(&s);
        // A single element names its index: what it implies there (at most `write` in
        // all) is assumed now, so `acc(a[i]) && acc(a[j])` proves `i != j`.
        if let Some(e) = single_index(&c) {
            self.assume_at_most_write(&s.heap, &ta, &e);
        }
        q(self, s, ())
    }

    /// One location has one value: where the new array chunk `c` and a chunk of the
    /// heap overlap (same array, both conditions, both amounts positive), their value
    /// maps agree. A quantified fact per chunk of the heap, triggered by reads of
    /// either map.
    pub fn assume_agreement(&mut self, h: &Heap, c: &Chunk) {
        let Some(ta) = &c.recv else { return };
        let x = self.fresh("j", Sort::Int);
        for (_, o) in h.of_kind(&ChunkKind::Array) {
            let Some(r) = &o.recv else { continue };
            if o.value.sort() != c.value.sort() {
                continue;
            }
            let guard = Term::and_all(vec![
                Term::eq(r.clone(), ta.clone()),
                Term::lt(Term::none(), o.perm.clone()),
                Term::lt(Term::none(), c.perm.clone()),
                o.covers(&x),
                c.covers(&x),
            ]);
            // Segments that cannot overlap, by their bounds' syntax, need no fact.
            if guard.is_false() || interval::empty(&Term::and(o.covers(&x), c.covers(&x)), &x) {
                continue;
            }
            let (r1, r2) = (
                Term::select(o.value.clone(), x.clone()),
                Term::select(c.value.clone(), x.clone()),
            );
            if r1 == r2 {
                continue;
            }
            let groups = read_triggers(&[&r1, &r2], &x);
            if groups.is_empty() {
                continue;
            }
            let agree = Term::implies(guard, Term::eq(r1, r2));
            self.dec.assume_derived(Term::quant(true, vec![x.clone()], groups, agree));
        }
    }

    /// Produce a quantified permission `forall i :: c ==> acc(a[i], p)` (`a` its node).
    pub fn produce_qp(
        &mut self,
        s: State,
        snap: Term,
        qn: &'p Quant,
        a: &'p Expr,
        q: Q<'_, 'p, ()>,
    ) {
        let Some(parts) = qp_parts(qn) else {
            return self.internal(&s, a.span, "a quantified permission of another shape");
        };
        let amount = parts.amount;
        let arr = parts.arr;
        self.eval(s, arr, &|v, s, ta| {
            v.eval_amount(s, amount, a, &|v, s, pi| {
                let ta = ta.clone();
                let snap = snap.clone();
                v.qp_cond(s, &qp_parts(qn).expect("checked shape"), &|v, s, c| {
                    if !v.qp_wellformed(&s, &ta, &c, a) {
                        return;
                    }
                    let value = v.unwrap_snap(&snap, Sort::Arr(elem_of(&arr.ty)));
                    v.add_segment(s, ta.clone(), c, value, pi.clone(), q)
                })
            })
        })
    }

    /// Evaluate an optional amount (default `write`), scaled, checked non-negative.
    pub fn eval_amount(
        &mut self,
        s: State,
        amount: Option<&'p Expr>,
        a: &'p Expr,
        q: Q<'_, 'p, Term>,
    ) {
        match amount {
            None => {
                let pi = self.scale.clone();
                q(self, s, pi)
            }
            Some(e) => self.eval(s, e, &|v, s, t| {
                let pi = Term::mul(v.scale.clone(), Term::to_perm(t));
                if !v.check_nonneg(&s, &pi, a) {
                    return;
                }
                q(v, s, pi)
            }),
        }
    }

    /// The array chunks of arrays provably equal to `ta`; `None` when the solver gave up.
    fn array_chunks(&mut self, h: &Heap, ta: &Term) -> Option<Vec<Slot>> {
        self.matching(h, &ChunkKind::Array, Some(ta), &[])
    }

    /// Take `pi` at every index of `c` of array `ta` from `h2` (failures at `a`).
    #[allow(clippy::too_many_arguments)]
    pub fn consume_segment(
        &mut self,
        s: State,
        h2: Heap,
        ta: Term,
        c: Term,
        elem: Sort,
        pi: Term,
        a: &'p Expr,
        q: QC<'_, 'p>,
    ) {
        if pi.as_rat() == Some(Rat::ZERO) || c.is_false() {
            return q(self, s, h2, Term::unit());
        }
        let Some(slots) = self.array_chunks(&h2, &ta) else {
            return self.fail_unknown(&s, a.span);
        };
        let k = self.fresh("k", Sort::Int);
        let mut able = vec![];
        // Read mode: every index of `c` is held (none when the range is empty).
        let mut read = false;
        if self.read_mode {
            // Some positive amount at every index of `c`.
            let sum = slots.iter().fold(Term::none(), |acc, sl| {
                let ch = h2.get(sl);
                Term::add(acc, Term::ite(ch.covers(&k), ch.perm.clone(), Term::none()))
            });
            let goal = Term::implies(at(&c, &k), Term::lt(Term::none(), sum));
            match self.dec.prove(&goal) {
                Answer::Proved => {
                    able = slots.clone();
                    read = true;
                }
                Answer::Unknown => return self.fail_unknown(&s, a.span),
                Answer::Refuted if !h2.identical(&s.heap) => {
                    // Elements an earlier conjunct read (`acc(a[i]) && acc(b[i])` with
                    // `b == a`) are read again from the heap before the consume, as a
                    // field named twice is (`read_location`); what is left stays.
                    let (before, kept) = (s.heap.clone(), h2.clone());
                    return self.consume_segment(
                        s,
                        before,
                        ta,
                        c,
                        elem,
                        pi,
                        a,
                        &|v, s, _, snap| q(v, s, kept.clone(), snap),
                    );
                }
                Answer::Refuted => {}
            }
        } else {
            for sl in &slots {
                let p = h2.get(sl).perm.clone();
                match self.amount_ge(&p, &pi) {
                    Answer::Proved => able.push(sl.clone()),
                    Answer::Unknown => return self.fail_unknown(&s, a.span),
                    Answer::Refuted => {}
                }
            }
            let any = able.iter().fold(Term::ff(), |acc, sl| Term::or(acc, h2.get(sl).covers(&k)));
            let goal = Term::implies(at(&c, &k), any);
            if !able.is_empty() {
                match self.dec.prove(&goal) {
                    Answer::Proved => {}
                    Answer::Unknown => return self.fail_unknown(&s, a.span),
                    Answer::Refuted => able.clear(),
                }
            }
        }
        if able.is_empty() && !self.read_mode {
            // No chunk holds `pi` alone where it is needed: sum the amounts index-wise.
            return match self.take_indexwise(&h2, &slots, &c, &pi) {
                Ok((h2, pieces)) => {
                    let m = self.summary_map(&pieces, &c, elem);
                    q(self, s, h2, Term::wrap(m))
                }
                Err(true) => self.fail_unknown(&s, a.span),
                Err(false) => {
                    let what = self.missing_elements(&s, a, &pi);
                    self.fail(&s, a.span, "insufficient.permission", what)
                }
            };
        }
        if able.is_empty() {
            if !read {
                let what = self.missing_elements(&s, a, &pi);
                return self.fail(&s, a.span, "insufficient.permission", what);
            }
            // An empty range read from nothing: the callee holds a chunk the caller
            // did not (termination may not count on the heap getting smaller).
            self.closes += 1;
        }
        // Take disjointly: chunk j gives where c holds and no earlier chunk covered.
        // Conditions that are bounds on the index stay bounds (`[0, n)` without `[0, 1)`
        // is `[1, n)`), so that later splits are decided by syntax.
        let i = Chunk::index();
        let mut h2 = h2;
        let mut earlier: Vec<Term> = vec![];
        let mut pieces = vec![];
        for sl in &able {
            let ch = h2.get(sl).clone();
            let cov = ch.covers(&i);
            let taken = earlier
                .iter()
                .fold(vec![interval::and(&c, &cov, &i)], |acc, e| without(acc, e, &i));
            earlier.push(cov.clone());
            pieces.extend(taken.iter().map(|t| (t.clone(), ch.value.clone())));
            h2.remove(sl);
            if self.read_mode {
                // What the callee does not read stays (termination rule 2), when an
                // index of it provably exists.
                if self.termination.is_some() {
                    for rest in interval::minus(&cov, &c, &i) {
                        if self.nonempty(&rest) {
                            let mut r = ch.clone();
                            r.cond = Some(rest);
                            h2.add(r);
                        }
                    }
                }
                continue;
            }
            let rest = taken.iter().fold(vec![cov.clone()], |acc, t| without(acc, t, &i));
            for rest in rest {
                let mut r = ch.clone();
                r.cond = Some(rest);
                h2.add(r);
            }
            let left = Term::sub(ch.perm.clone(), pi.clone());
            if left.as_rat() != Some(Rat::ZERO) {
                for taken in taken {
                    let mut r = ch.clone().at(left.clone());
                    r.cond = Some(taken);
                    h2.add(r);
                }
            }
        }
        // The snapshot: a map equal to the values on `c`, the default elsewhere.
        let m = self.summary_map(&pieces, &c, elem);
        q(self, s, h2, Term::wrap(m))
    }

    /// Take `pi` at every index of `c` from the chunks `slots` together, each giving
    /// what it holds where the earlier ones did not give enough (Silicon's greedy
    /// removal over quantified chunks). The amount still needed is tracked per region:
    /// a list of (condition over the index, amount), starting with `(c, pi)`. A chunk
    /// `k` meeting a region `r` needing `n` gives `t = min(π_k, n)` on `r ∧ c_k`; the
    /// region splits into `r ∧ ¬c_k` (still `n`) and `r ∧ c_k` (`n − t`), and the chunk
    /// into its part outside every region (still `π_k`) and its parts inside (`π_k − t`).
    /// Every amount stays uniform over its condition. In the end every region must need
    /// nothing (one query). Returns what is left and the pieces the values come from;
    /// `Err(true)` when the solver gave up, `Err(false)` when some index is not held.
    /// Why the quantified permission `a` (amount `pi`) cannot be consumed, in the
    /// program's terms: some element of its range is held at less than it asks.
    fn missing_elements(&self, s: &State, a: &Expr, pi: &Term) -> String {
        let shown = crate::rules::show::expr(a);
        if self.read_mode {
            return format!(
                "no permission to read every element of `{shown}`: some element in its range might not be held at all"
            );
        }
        let amount = if pi.op() == &crate::state::term::Op::Rat(1, 1) || pi.as_int() == Some(1) {
            "`write`".to_string()
        } else {
            match self.names(s).render_here(pi) {
                Some(p) => format!("`{p}`"),
                None => "the amount it asks for".to_string(),
            }
        };
        format!(
            "not enough permission to the elements of `{shown}`: some element in its range might be held at less than {amount}"
        )
    }

    fn take_indexwise(
        &mut self,
        h2: &Heap,
        slots: &[Slot],
        c: &Term,
        pi: &Term,
    ) -> Result<(Heap, Vec<(Term, Term)>), bool> {
        /// Regions beyond this many are not tracked (the consume then fails).
        const MAX_REGIONS: usize = 32;
        let i = Chunk::index();
        let mut h = h2.clone();
        let mut needs: Vec<(Term, Term)> = vec![(c.clone(), pi.clone())];
        let mut pieces = vec![];
        for sl in slots {
            if needs.is_empty() {
                break;
            }
            let ch = h2.get(sl).clone();
            let cov = ch.covers(&i);
            let pk = ch.perm.clone();
            // The regions this chunk meets (an empty overlap leaves both alone).
            let mut meets = vec![];
            for (r, _) in &needs {
                let ov = interval::and(r, &cov, &i);
                meets.push(!self.empty(&ov)?);
            }
            if !meets.contains(&true) {
                continue;
            }
            let outside = needs.iter().fold(vec![cov.clone()], |acc, (r, _)| without(acc, r, &i));
            let mut parts: Vec<(Term, Term)> =
                outside.into_iter().map(|o| (o, pk.clone())).collect();
            let mut next = vec![];
            for ((r, n), meet) in needs.into_iter().zip(meets) {
                let ov = interval::and(&r, &cov, &i);
                if !meet {
                    next.push((r, n));
                    continue;
                }
                let t = match (self.amount_ge(&n, &pk), self.amount_ge(&pk, &n)) {
                    (Answer::Unknown, _) | (_, Answer::Unknown) => return Err(true),
                    (Answer::Proved, _) => pk.clone(),
                    (_, Answer::Proved) => n.clone(),
                    _ => Term::ite(Term::le(pk.clone(), n.clone()), pk.clone(), n.clone()),
                };
                // The values on the overlap come from this chunk where it holds some.
                pieces.push((
                    Term::and(ov.clone(), Term::lt(Term::none(), pk.clone())),
                    ch.value.clone(),
                ));
                parts.push((ov.clone(), Term::sub(pk.clone(), t.clone())));
                for rest in without(vec![r], &cov, &i) {
                    if !self.empty(&rest)? {
                        next.push((rest, n.clone()));
                    }
                }
                let left = Term::sub(n, t);
                if left.as_rat() != Some(Rat::ZERO) {
                    next.push((ov, left));
                }
            }
            needs = next.into_iter().filter(|(r, _)| !r.is_false()).collect();
            if needs.len() > MAX_REGIONS {
                return Err(false);
            }
            h.remove(sl);
            for (cond, amount) in parts {
                if cond.is_false() || amount.as_rat() == Some(Rat::ZERO) {
                    continue;
                }
                let mut r = ch.clone().at(amount);
                r.cond = Some(cond);
                h.add(r);
            }
        }
        let k = self.fresh("k", Sort::Int);
        let goal = Term::and_all(
            needs
                .iter()
                .map(|(r, n)| Term::implies(at(r, &k), Term::le(n.clone(), Term::none())))
                .collect(),
        );
        match self.dec.prove(&goal) {
            Answer::Proved => Ok((h, pieces)),
            Answer::Unknown => Err(true),
            Answer::Refuted => Err(false),
        }
    }

    /// Is the condition `c` (over the index symbol) provably empty? `Err(true)` when
    /// the solver gave up.
    fn empty(&mut self, c: &Term) -> Result<bool, bool> {
        if interval::empty(c, &Chunk::index()) {
            return Ok(true);
        }
        if interval::inhabited(c, &Chunk::index()) {
            return Ok(false);
        }
        let k = self.fresh("k", Sort::Int);
        match self.dec.prove(&Term::not(at(c, &k))) {
            Answer::Proved => Ok(true),
            Answer::Unknown => Err(true),
            Answer::Refuted => Ok(false),
        }
    }

    /// Does some index satisfy `c` provably? Tried at the bounds `c`'s comparisons name.
    pub(crate) fn nonempty(&mut self, c: &Term) -> bool {
        let i = Chunk::index();
        let mut cands = vec![];
        let mut stack = vec![c.clone()];
        while let Some(t) = stack.pop() {
            match t.op() {
                crate::state::term::Op::And => stack.extend(t.args().iter().cloned()),
                crate::state::term::Op::Le
                | crate::state::term::Op::Lt
                | crate::state::term::Op::Eq => {
                    let (x, y) = (&t.args()[0], &t.args()[1]);
                    let strict = matches!(t.op(), crate::state::term::Op::Lt);
                    if *y == i && *x != i {
                        cands.push(if strict {
                            Term::add(x.clone(), Term::int(1))
                        } else {
                            x.clone()
                        });
                    } else if *x == i && *y != i {
                        cands.push(if strict {
                            Term::sub(y.clone(), Term::int(1))
                        } else {
                            y.clone()
                        });
                    }
                }
                _ => {}
            }
        }
        cands.into_iter().take(4).any(|w| self.dec.prove(&at(c, &w)) == Answer::Proved)
    }

    /// A fresh map `M` of sort `sort` with `∀j. M[j] = (c(j) ? V_1[j] where c_1(j), else
    /// V_2[j] where c_2(j), ..., : default)` for the pieces `(c_k, V_k)` (conditions over
    /// the index symbol), triggered by reads of `M`.
    fn summary_map(&mut self, pieces: &[(Term, Term)], c: &Term, sort: Sort) -> Term {
        // One element, from one piece (which then covers it: the consumption proved
        // it): a map of the piece and the index alone.
        if let [(_, v1)] = pieces
            && let Some(e) = single_index(c)
        {
            return self.element_map(v1, &e, sort);
        }
        let x = self.fresh("j", Sort::Int);
        let mut value = Term::default_of(Sort::of_elem(elem_of_sort(sort)));
        for (ck, vk) in pieces.iter().rev() {
            value = Term::ite(at(ck, &x), Term::select(vk.clone(), x.clone()), value);
        }
        let value =
            Term::ite(at(c, &x), value, Term::default_of(Sort::of_elem(elem_of_sort(sort))));
        let m = self.fresh("V", sort);
        let read = Term::select(m.clone(), x.clone());
        // Also triggered by reads of the piece's map when the snapshot is one piece: a
        // fact about the snapshot (a pure method's body over its segment) then applies
        // at the indices the program reads in the heap, as Silicon's snapshot maps do.
        // Not for several pieces: each read of any piece would then instantiate every
        // snapshot made from it, and a chain of calls on neighbouring segments
        // (divide and conquer) makes Z3 time out on what it otherwise proves in a second.
        let mut triggers = vec![vec![read.clone()]];
        if let [(_, vk)] = pieces {
            let piece = Term::select(vk.clone(), x.clone());
            for g in read_triggers(&[&piece], &x) {
                if !triggers.contains(&g) {
                    triggers.push(g);
                }
            }
        }
        let mut def = Term::quant(true, vec![x], triggers, Term::eq(read, value));
        // One piece over a range `lo <= i < hi`: the map is also `seg#E(v, lo, hi)`, one
        // term for the same piece and bounds wherever the snapshot is made, so that
        // `sum(a, 0, 2)` in the code and `sum(a, 0, k)` under a quantifier at `k = 2`
        // meet (E-matching works modulo this equation; two fresh maps never would).
        if let [(_, v1)] = pieces
            && let Some((lo, hi)) = interval::range(c, &Chunk::index())
        {
            def = Term::and(def, Term::eq(m.clone(), self.range_map(v1, &lo, &hi, sort)));
        }
        if self.quant_vars.is_empty() {
            // Given to the solver only once the snapshot is used.
            self.dec.define(m.clone(), def);
        } else {
            // Inside a quantifier's body, where the facts about its bound variables are
            // gathered under the binder as they are assumed.
            self.dec.assume_derived(def);
        }
        m
    }

    /// `seg#E(v, lo, hi)`: an uninterpreted name for the map equal to `v` on
    /// `lo <= i < hi` and to the default elsewhere. It has no axiom: each snapshot
    /// made over such a range is defined pointwise where it is made and equated with
    /// it (a global axiom instantiated at every read of `v` made divide-and-conquer
    /// programs time out).
    fn range_map(&mut self, v: &Term, lo: &Term, hi: &Term, sort: Sort) -> Term {
        let f = crate::state::term::Func {
            name: format!("seg#{:?}", elem_of_sort(sort)).into(),
            domain: vec![sort, Sort::Int, Sort::Int].into(),
            range: sort,
        };
        Term::app(&f, vec![v.clone(), lo.clone(), hi.clone()])
    }

    /// `elem#E(v[e], e)`: the map equal to `v` at `e` and to the default elsewhere (the
    /// snapshot of one element, `acc(a[i])` in a pure method's precondition), a function
    /// of the element's value and index: one term for the same element wherever it is
    /// made (`get(a, 1)` in the code and `get(a, k)` under a quantifier at `k = 1` are one
    /// application, which E-matching needs), and one for the same value after a write
    /// elsewhere in the array (`get(a, j)` before and after `a[i] = 0`, `j != i`: the
    /// array theory equates `store(v, i, 0)[j]` with `v[j]`, so a quantified fact about
    /// the reads before the write matches the reads after it, as Silicon's scalar
    /// snapshots of one location do).
    fn element_map(&mut self, v: &Term, e: &Term, sort: Sort) -> Term {
        let f = element_func(sort);
        self.assume_element_axiom(sort);
        Term::app(&f, vec![Term::select(v.clone(), e.clone()), e.clone()])
    }

    /// Assume the axiom of `elem#E` for array sort `sort` (once per path): wherever a
    /// term names it, also in a definition instance that a caller receives from a
    /// pure method whose precondition holds one element.
    pub fn assume_element_axiom(&mut self, sort: Sort) {
        let elem = elem_of_sort(sort);
        let f = element_func(sort);
        let value_sort = Sort::of_elem(elem);
        let (ww, ee) = (Term::var("w#elem", value_sort), Term::var("e#elem", Sort::Int));
        let x = Term::var("x#elem", Sort::Int);
        let read = Term::select(Term::app(&f, vec![ww.clone(), ee.clone()]), x.clone());
        let value =
            Term::ite(Term::eq(x.clone(), ee.clone()), ww.clone(), Term::default_of(value_sort));
        let def = Term::quant_named(
            true,
            vec![ww, ee, x],
            vec![vec![read.clone()]],
            Term::eq(read, value),
            Some("the snapshot of one array element".into()),
        );
        if !self.dec.known(&def) {
            self.dec.assume_axiom(def);
        }
    }

    /// The chunk value of `a[e]` where some chunk of `ta` covers `e` at a positive
    /// amount; `Err(true)` when the solver gave up, `Err(false)` when there is none.
    pub fn read_segment(&mut self, h: &Heap, ta: &Term, e: &Term) -> Result<Term, bool> {
        self.assume_at_most_write(h, ta, e);
        let slots = self.array_chunks(h, ta).ok_or(true)?;
        // A chunk that provably covers `e` gives the value. Each chunk that does not
        // costs a satisfiable query, the slowest kind when many quantified facts are on
        // the path (a fresh index among N one-element segments: seconds each at
        // N = 30). So chunks are asked about one by one only when they are few, and
        // the model of each refuted question spares the questions about the chunks
        // it shows not to cover `e`; with many, a chunk whose condition at `e` is
        // already known gives the value, else the amounts are summed (one question,
        // which holds whenever some chunk covers `e`) and the value read through a
        // map over every chunk. Whatever is skipped, the sum counts every chunk.
        const ASK_EACH: usize = 4;
        let goals: Vec<Term> = slots
            .iter()
            .map(|sl| {
                let ch = h.get(sl);
                Term::and(ch.covers(e), Term::lt(Term::none(), ch.perm.clone()))
            })
            .collect();
        let direct = |j: usize| Term::select(h.get(&slots[j]).value.clone(), e.clone());
        if let Some(j) = goals.iter().position(|g| self.dec.known_conjuncts(g)) {
            return Ok(direct(j));
        }
        let mut open: std::collections::VecDeque<usize> =
            if slots.len() <= ASK_EACH { (0..slots.len()).collect() } else { Default::default() };
        while let Some(j) = open.pop_front() {
            let rest: Vec<Term> = open.iter().map(|&k| goals[k].clone()).collect();
            let (answer, uncovered) = self.dec.prove_probing(&goals[j], &rest);
            match answer {
                Answer::Proved => return Ok(direct(j)),
                Answer::Unknown => return Err(true),
                Answer::Refuted => {
                    let mut it = uncovered.into_iter();
                    open.retain(|_| !it.next().unwrap_or(false));
                }
            }
        }
        let sum = self.held_elem(h, ta, e);
        if slots.len() > 1 {
            match self.amount_positive(&sum) {
                Answer::Proved => {
                    let pieces: Vec<(Term, Term)> = slots
                        .iter()
                        .map(|sl| {
                            let ch = h.get(sl);
                            (ch.covers(&Chunk::index()), ch.value.clone())
                        })
                        .collect();
                    let sort = h.get(&slots[0]).value.sort();
                    let m = self.summary_map(&pieces, &Term::tt(), sort);
                    return Ok(Term::select(m, e.clone()));
                }
                Answer::Unknown => return Err(true),
                Answer::Refuted => {}
            }
        }
        Err(false)
    }

    /// `a[e] = v` on segments: the amounts covering `e` must sum to `write`; every chunk
    /// of the array gets the new value at `e` (outside its condition it is irrelevant).
    pub fn write_segment(
        &mut self,
        h: &mut Heap,
        ta: &Term,
        e: &Term,
        v: &Term,
    ) -> Result<(), bool> {
        self.assume_at_most_write(h, ta, e);
        let slots = self.array_chunks(h, ta).ok_or(true)?;
        let sum = slots.iter().fold(Term::none(), |acc, sl| {
            let ch = h.get(sl);
            Term::add(acc, Term::ite(ch.covers(e), ch.perm.clone(), Term::none()))
        });
        match self.amount_ge(&sum, &Term::write()) {
            Answer::Proved => {}
            Answer::Unknown => return Err(true),
            Answer::Refuted => return Err(false),
        }
        for sl in &slots {
            let mut ch = h.get(sl).clone();
            ch.value = Term::store(ch.value.clone(), e.clone(), v.clone());
            h.replace(sl, ch);
        }
        Ok(())
    }

    /// The amount of `a[e]` held (arrays possibly equal to `ta` included).
    pub fn held_elem(&self, h: &Heap, ta: &Term, e: &Term) -> Term {
        let mut sum = Term::none();
        for (_, ch) in h.of_kind(&ChunkKind::Array) {
            let Some(r) = &ch.recv else { continue };
            let g = Term::and(Term::eq(r.clone(), ta.clone()), ch.covers(e));
            if g.is_false() {
                continue;
            }
            sum = Term::add(sum, Term::ite(g, ch.perm.clone(), Term::none()));
        }
        sum
    }

    /// At index `e`, the arrays that may be `ta` hold at most `write` in all.
    fn assume_at_most_write(&mut self, h: &Heap, ta: &Term, e: &Term) {
        let sum = self.held_elem(h, ta, e);
        if !self.no_bounds {
            let bound = Term::le(sum, Term::write());
            if !bound.is_true() {
                self.dec.assume_derived(bound);
            }
        }
    }
}

/// The conditions `cs` without `b` (over the index `i`), as bounds where they are
/// bounds; past a few pieces, as one term (`c ∧ ¬b` per condition) to keep chunks few.
fn without(cs: Vec<Term>, b: &Term, i: &Term) -> Vec<Term> {
    const MAX_PIECES: usize = 8;
    let split: Vec<Term> = cs.iter().flat_map(|c| interval::minus(c, b, i)).collect();
    if split.len() <= MAX_PIECES {
        return split;
    }
    cs.into_iter().map(|c| Term::and(c, Term::not(b.clone()))).filter(|c| !c.is_false()).collect()
}

/// One trigger group per map read that mentions the bound `x` (a read of a constant
/// map, such as `new int[n]`'s defaults, simplifies to a constant: no trigger).
fn read_triggers(reads: &[&Term], x: &Term) -> Vec<Vec<Term>> {
    reads.iter().filter(|t| t.symbols().contains(x)).map(|t| vec![(*t).clone()]).collect()
}

/// `e` when the condition `c` is `i# = e` (a single element's chunk).
fn single_index(c: &Term) -> Option<Term> {
    if *c.op() != crate::state::term::Op::Eq {
        return None;
    }
    let (x, y) = (&c.args()[0], &c.args()[1]);
    let i = Chunk::index();
    match (*x == i, *y == i) {
        (true, false) => Some(y.clone()),
        (false, true) => Some(x.clone()),
        _ => None,
    }
}

fn elem_of_sort(s: Sort) -> crate::state::term::Elem {
    match s {
        Sort::Arr(e) => e,
        _ => crate::state::term::Elem::Int,
    }
}

/// Is `f` an `elem#E` function ([`element_func`])?
pub fn is_element_func(f: &crate::state::term::Func) -> bool {
    f.name.starts_with("elem#")
}

/// The function `elem#E` of array sort `sort` (`element_map`): from an element's value
/// and index to the map holding it there.
fn element_func(sort: Sort) -> crate::state::term::Func {
    crate::state::term::Func {
        name: format!("elem#{:?}", elem_of_sort(sort)).into(),
        domain: vec![Sort::of_elem(elem_of_sort(sort)), Sort::Int].into(),
        range: sort,
    }
}
