//! `produce` (the paper's Figure 6): adding an assertion's chunks to the heap and its
//! facts to the path condition, with the snapshot that determines the chunks' values.
//!
//! Snapshots are split by the assertion's shape: a pure conjunct takes no part, so
//! `acc(x) && x > 0` has the snapshot of `acc(x)`; two impure conjuncts split
//! `s` into `first(s)`, `second(s)`. Producing from a snapshot that is not literally
//! of that shape assumes it is (`s = combine(first(s), second(s))`,
//! `s = fromInt(toInt(s))`): every snapshot a consume yields has that shape, and it
//! makes open-then-close give back a provably equal snapshot.

use crate::rules::{Q, Verifier, elem_of, sort_of};
use crate::state::State;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::term::{Op, Sort, Term};
use crate::syntax::ast::{BinOp, CallRecv, Expr, ExprKind};

impl<'p> Verifier<'p> {
    /// Does the assertion hold permissions (acc, predicate instances, untouched)?
    pub fn impure(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Acc(_)
            | ExprKind::AccArray(_)
            | ExprKind::Untouched(_)
            | ExprKind::Frac { .. } => true,
            ExprKind::Quant(qn) => qn.permission,
            ExprKind::Call { .. } => self.is_pred(e),
            ExprKind::Binary { op: BinOp::And | BinOp::Implies, l, r } => {
                self.impure(l) || self.impure(r)
            }
            ExprKind::Cond { a, b, .. } => self.impure(a) || self.impure(b),
            _ => false,
        }
    }

    /// Is `e` a predicate instance?
    pub fn is_pred(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call { target: Some(t), .. } => self.info.preds.contains_key(t),
            _ => false,
        }
    }

    /// Produce several assertions as their separating conjunction, in order.
    pub fn produce_all(&mut self, s: State, snap: Term, es: &'p [Expr], q: Q<'_, 'p, ()>) {
        let impure: Vec<&'p Expr> = es.iter().filter(|e| self.impure(e)).collect();
        let snaps = self.split_n(&snap, impure.len());
        self.produce_list(s, es, snaps, 0, q)
    }

    fn produce_list(
        &mut self,
        s: State,
        es: &'p [Expr],
        snaps: Vec<Term>,
        next: usize,
        q: Q<'_, 'p, ()>,
    ) {
        match es.split_first() {
            None => q(self, s, ()),
            Some((e, rest)) => {
                let (snap, next2) = if self.impure(e) {
                    (snaps[next].clone(), next + 1)
                } else {
                    (Term::unit(), next)
                };
                self.produce(s, snap, e, &|v, s, ()| {
                    v.produce_list(s, rest, snaps.clone(), next2, q)
                })
            }
        }
    }

    /// Split `s` into `n` parts, right-nested: `combine(a, combine(b, c))`.
    fn split_n(&mut self, s: &Term, n: usize) -> Vec<Term> {
        match n {
            0 => vec![],
            1 => vec![s.clone()],
            _ => {
                let (a, b) = self.split(s);
                let mut out = vec![a];
                out.extend(self.split_n(&b, n - 1));
                out
            }
        }
    }

    /// `(first(s), second(s))`, assuming `s` is a combination.
    pub fn split(&mut self, s: &Term) -> (Term, Term) {
        let (a, b) = (Term::first(s.clone()), Term::second(s.clone()));
        if !matches!(s.op(), Op::Combine) {
            self.dec.assume_derived(Term::eq(s.clone(), Term::combine(a.clone(), b.clone())));
        }
        (a, b)
    }

    /// The value of sort `sort` a snapshot stands for, assuming it wraps one.
    pub fn unwrap_snap(&mut self, s: &Term, sort: Sort) -> Term {
        let v = Term::unwrap(s.clone(), sort);
        if !matches!(s.op(), Op::Wrap(_)) {
            self.dec.assume_derived(Term::eq(s.clone(), Term::wrap(v.clone())));
        }
        v
    }

    /// A branch of an implication or conditional that holds no permission has the
    /// snapshot consume gives it, `unit`: so a predicate opened and closed again
    /// on a path where its conditional part is absent gets back its snapshot
    /// (the part is a function of the snapshot's own fields and arguments, so
    /// every opening of one snapshot takes the same branch).
    fn assume_no_snapshot(&mut self, snap: &Term) {
        let unit = Term::unit();
        if *snap == unit || snap.sort() != unit.sort() {
            return;
        }
        let eq = Term::eq(snap.clone(), unit);
        if self.nest.open_nesting > 0 {
            self.dec.assume_derived(eq);
        } else {
            self.dec.assume(eq);
        }
    }

    pub fn produce(&mut self, s: State, snap: Term, a: &'p Expr, q: Q<'_, 'p, ()>) {
        if self.stopped() {
            return;
        }
        // Evaluation while producing reads the heap without changing it: a field read
        // that opens a predicate (inference) opens it only for the read, as Viper's
        // `unfolding` does, so producing a predicate body that reads its successor's
        // fields leaves the successor closed.
        let h0 = s.heap.clone();
        let keep = |mut s: State| {
            s.heap = h0.clone();
            s
        };
        if !self.impure(a) {
            return self.eval_produced(s, a, &|v, s, t| {
                let s = keep(s);
                if t.is_false() {
                    // An assumption that is false: the path is infeasible.
                    v.stats.ledger.pruned += 1;
                    return;
                }
                // In an opened predicate body, a fact holds of every instance held.
                if v.nest.open_nesting > 0 {
                    v.dec.assume_derived(t);
                } else {
                    v.dec.assume(t);
                }
                q(v, s, ())
            });
        }
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => {
                let (sl, sr) = match (self.impure(l), self.impure(r)) {
                    (true, true) => self.split(&snap),
                    (true, false) => (snap.clone(), Term::unit()),
                    _ => (Term::unit(), snap.clone()),
                };
                self.produce(s, sl, l, &|v, s, ()| v.produce(s, sr.clone(), r, q))
            }
            ExprKind::Binary { op: BinOp::Implies, l, r } => {
                self.eval_produced(s, l, &|v, s, c| {
                    let s = keep(s);
                    let snap = snap.clone();
                    v.branch(s, c, &|v, s, ()| v.produce(s, snap.clone(), r, q), &|v, s, ()| {
                        v.assume_no_snapshot(&snap);
                        q(v, s, ())
                    })
                })
            }
            ExprKind::Cond { c, a: x, b: y } => self.eval_produced(s, c, &|v, s, tc| {
                let s = keep(s);
                let snap = snap.clone();
                let side = |v: &mut Self, s: State, e: &'p Expr| {
                    if !v.impure(e) {
                        v.assume_no_snapshot(&snap);
                    }
                    v.produce(s, snap.clone(), e, q)
                };
                v.branch(s, tc, &|v, s, ()| side(v, s, x), &|v, s, ()| side(v, s, y))
            }),
            ExprKind::Frac { acc, amount } => self.eval_produced(s, amount, &|v, s, t| {
                let s = keep(s);
                let pi = Term::mul(v.scale.clone(), Term::to_perm(t));
                if !v.check_nonneg(&s, &pi, a) {
                    return;
                }
                v.produce_loc(s, snap.clone(), acc, pi, q)
            }),
            ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Call { .. } => {
                let pi = self.scale.clone();
                self.produce_loc(s, snap, a, pi, q)
            }
            ExprKind::Quant(qn) => {
                // Its condition and amount are evaluated while producing, too.
                let outer = std::mem::replace(&mut self.perm_unknown, true);
                self.produce_qp(s, snap, qn, a, &|v, s, ()| {
                    let inner = std::mem::replace(&mut v.perm_unknown, outer);
                    q(v, s, ());
                    v.perm_unknown = inner;
                });
                self.perm_unknown = outer;
            }
            ExprKind::Untouched(inner) => {
                // Consuming `inner` in the current and in the old heap yields equal snapshots.
                let original = s.clone();
                self.untouched_snapshots(s, inner, &|v, now, then| {
                    v.dec.assume(Term::eq(now, then));
                    q(v, original.clone(), ())
                })
            }
            _ => self.internal(&s, a.span, "an assertion form that cannot be produced"),
        }
    }

    /// Evaluate `e` of an assertion being produced: `perm(..)` in it is an unknown
    /// amount (`Verifier::perm_unknown`); the continuation runs as before.
    fn eval_produced(&mut self, s: State, e: &'p Expr, q: Q<'_, 'p, Term>) {
        let outer = std::mem::replace(&mut self.perm_unknown, true);
        self.eval(s, e, &|v, s, t| {
            let inner = std::mem::replace(&mut v.perm_unknown, outer);
            q(v, s, t);
            v.perm_unknown = inner;
        });
        self.perm_unknown = outer;
    }

    /// `π ≥ none`, else failure `negative.permission` at `a` (LANGUAGE.md section 11).
    pub fn check_nonneg(&mut self, s: &State, pi: &Term, a: &Expr) -> bool {
        if pi.as_rat().is_some_and(|r| !r.is_negative()) {
            return true;
        }
        let goal = Term::le(Term::none(), pi.clone());
        self.check(s, &goal, a.span, "negative.permission", || {
            format!("the permission amount `{pi}` might be negative")
        })
    }

    /// Produce the permission `a` (`acc(e.f)`, `acc(a[*])`, a predicate instance) at
    /// amount `pi` (already scaled), with snapshot `snap`.
    fn produce_loc(&mut self, s: State, snap: Term, a: &'p Expr, pi: Term, q: Q<'_, 'p, ()>) {
        // Receivers, indices and arguments are evaluated while producing.
        let outer = std::mem::replace(&mut self.perm_unknown, true);
        self.produce_loc_now(s, snap, a, pi, &|v, s, ()| {
            let inner = std::mem::replace(&mut v.perm_unknown, outer);
            q(v, s, ());
            v.perm_unknown = inner;
        });
        self.perm_unknown = outer;
    }

    fn produce_loc_now(&mut self, s: State, snap: Term, a: &'p Expr, pi: Term, q: Q<'_, 'p, ()>) {
        if pi.as_rat().is_some_and(|r| r == crate::state::term::Rat::ZERO) {
            // Nothing is held at `none`.
            return q(self, s, ());
        }
        let h0 = s.heap.clone();
        let keep = move |mut s: State| {
            s.heap = h0.clone();
            s
        };
        match &a.kind {
            ExprKind::Acc(f) => {
                if let ExprKind::Index { arr, idx } = &f.kind {
                    // One element: the segment `i == e` (LANGUAGE.md section 12).
                    return self.eval(s, arr, &|v, s, ta| {
                        v.eval(s, idx, &|v, s, te| {
                            let s = keep(s);
                            let c = Term::eq(crate::state::chunk::Chunk::index(), te.clone());
                            if !v.qp_wellformed(&s, &ta, &c, a) {
                                return;
                            }
                            let value = v.unwrap_snap(&snap, Sort::Arr(elem_of(&arr.ty)));
                            v.add_segment(s, ta.clone(), c, value, pi.clone(), q)
                        })
                    });
                }
                let ExprKind::Field { recv, field, class } = &f.kind else {
                    return self.internal(&s, a.span, "acc of a non-location");
                };
                let name = self.info.field(class.unwrap_or(0), &field.name);
                let sort = sort_of(&f.ty);
                self.eval(s, recv, &|v, s, t| {
                    let s = keep(s);
                    let value = v.unwrap_snap(&snap, sort);
                    // A field of class type holds null or an object of that class.
                    v.assume_typed(&value, &f.ty, true);
                    v.add_chunk(s, Chunk::field(name.clone(), t, value).at(pi.clone()), q)
                })
            }
            ExprKind::AccArray(arr) => self.eval(s, arr, &|v, s, t| {
                let s = keep(s);
                let value = v.unwrap_snap(&snap, Sort::Arr(elem_of(&arr.ty)));
                v.add_chunk(s, Chunk::array(t, value).at(pi.clone()), q)
            }),
            ExprKind::Call { recv, args, target: Some(p), .. } => {
                let p = *p;
                let recv_expr = match recv {
                    CallRecv::Expr(r) => Some(&**r),
                    _ => None,
                };
                self.eval_opt(s, recv_expr, &|v, s, t0| {
                    v.eval_list(s, args, &|v, s, targs| {
                        let s = keep(s);
                        let c = v.pred_chunk(p, t0.clone(), targs, snap.clone()).at(pi.clone());
                        v.add_chunk(s, c, q)
                    })
                })
            }
            _ => self.internal(&s, a.span, "a permission form that cannot be produced"),
        }
    }

    /// Evaluate an optional expression (a call's receiver).
    pub fn eval_opt(&mut self, s: State, e: Option<&'p Expr>, q: Q<'_, 'p, Option<Term>>) {
        match e {
            Some(e) => self.eval(s, e, &|v, s, t| q(v, s, Some(t))),
            None => q(self, s, None),
        }
    }

    /// Add a chunk, assuming what holding it implies (LANGUAGE.md section 11): a
    /// non-null receiver; for a field or array, at most `write` held of the location
    /// (a receiver distinct from every chunk whose constant amount would sum above it,
    /// a bounded sum otherwise) and one value per location. A chunk of the same
    /// location (syntactically) absorbs it: amounts add up, values are equal.
    pub fn add_chunk(&mut self, s: State, c: Chunk, q: Q<'_, 'p, ()>) {
        let mut s = s;
        let zero = crate::state::term::Rat::ZERO;
        let pi = c.perm.clone();
        if pi.as_rat() == Some(zero) {
            return q(self, s, ());
        }
        self.note_refs(&c);
        let constant = pi.as_rat();
        if let Some(r) = &c.recv {
            let nn = Term::ne(r.clone(), Term::null());
            if constant.is_some() {
                if nn.is_false() {
                    self.stats.ledger.pruned += 1;
                    return;
                }
                self.dec.assume_derived(nn);
            } else {
                self.dec.assume_derived(Term::implies(Term::lt(Term::none(), pi.clone()), nn));
            }
        }
        let bounded = !matches!(c.kind, ChunkKind::Pred(..));
        let one = crate::state::term::Rat::ONE;
        if c.kind == ChunkKind::Array && crate::rules::segment::has_segments(&s.heap) {
            // Segments of arrays: the at-most-write facts are assumed where elements
            // are read or written (`segment.rs`); values agree where chunks overlap.
            self.assume_agreement(&s.heap, &c);
            s.heap.add(c);
            self.note_heap_size(&s);
            return q(self, s, ());
        }
        // A whole array's chunk holds its elements, of which an empty array has none:
        // held above `write`, or twice, it says only that the array is empty (`acc(a[*])
        // && acc(a[*])` holds of `new int[0]`). Its other facts hold where it is not.
        let nonempty = match (&c.kind, &c.recv) {
            (ChunkKind::Array, Some(r)) => Some(Term::lt(Term::int(0), Term::len(r.clone()))),
            _ => None,
        };
        let guarded = |f: Term| match &nonempty {
            Some(n) => Term::implies(n.clone(), f),
            None => f,
        };
        if bounded && !self.no_bounds && constant.is_some_and(|r| r > one) {
            let Some(n) = &nonempty else {
                // A field held above `write`: this path is infeasible.
                self.stats.ledger.pruned += 1;
                return;
            };
            self.dec.assume_derived(Term::not(n.clone()));
        }
        let above = |a: &Term, b: &Term| match (a.as_rat(), b.as_rat()) {
            (Some(x), Some(y)) => x.checked_add(y).is_none_or(|sum| sum > one),
            _ => false,
        };
        // The same location, syntactically.
        let same = s
            .heap
            .of_kind(&c.kind)
            .find(|(_, o)| o.recv == c.recv && o.args == c.args)
            .map(|(slot, o)| (slot, o.clone()));
        if let Some((slot, o)) = same {
            if bounded && !self.no_bounds && above(&o.perm, &pi) {
                let Some(n) = &nonempty else {
                    // Two chunks for one location above `write`: this path is infeasible.
                    self.stats.ledger.pruned += 1;
                    return;
                };
                self.dec.assume_derived(Term::not(n.clone()));
            }
            {
                let sum = Term::add(o.perm.clone(), pi.clone());
                // Both held: one value. An amount that may be `none` (`b ? 1/5 : none`
                // left after a consume) holds nothing, and its value says nothing about
                // the location: the equality holds only where both amounts are positive,
                // and the merged chunk has the new value where the old amount is `none`.
                let both = Term::and(positive(&o.perm), positive(&pi));
                let eq = Term::eq(o.value.clone(), c.value.clone());
                if eq.is_false() && both.is_true() && nonempty.is_none() {
                    self.stats.ledger.pruned += 1;
                    return;
                }
                self.dec.assume_derived(guarded(Term::implies(both, eq)));
                if bounded && !self.no_bounds && sum.as_rat().is_none() {
                    self.dec.assume_derived(guarded(Term::le(sum.clone(), Term::write())));
                }
                let kept_built = matches!(o.value.op(), Op::Store | Op::ConstArr(_));
                let old_held = positive(&o.perm);
                let old_value = o.value.clone();
                let mut merged = o.at(sum);
                if !old_held.is_true() {
                    merged.value = Term::ite(old_held, old_value, c.value.clone());
                }
                // An array whose kept part has a value map built of writes
                // (`store(.., 1, 8)`) and whose returned part has a symbolic one (a
                // callee's snapshot, which its postcondition's quantifiers are about):
                // the merged chunk reads through the symbolic map. Reads through the
                // built map fold away (`a[0]` to `0`), so no read would ever name a term
                // those quantifiers' triggers match (the remedy `assert a[0] == 0;` of
                // LANGUAGE.md section 13 would prove nothing new).
                let built = |t: &Term| matches!(t.op(), Op::Store | Op::ConstArr(_));
                if c.kind == ChunkKind::Array && kept_built && !built(&c.value) {
                    merged.value = c.value.clone();
                }
                s.heap.replace(&slot, merged);
                self.note_heap_size(&s);
                return q(self, s, ());
            }
        }
        if bounded && !self.no_bounds {
            let mut others = Term::none();
            let r = c.recv.clone();
            for (_, o) in s.heap.of_kind(&c.kind) {
                let (Some(o_r), Some(r)) = (&o.recv, &r) else { continue };
                if above(&o.perm, &pi) {
                    self.dec.assume_derived(guarded(Term::ne(o_r.clone(), r.clone())));
                    continue;
                }
                let g = Term::eq(o_r.clone(), r.clone());
                let both = Term::and(positive(&o.perm), positive(&pi));
                self.dec.assume_derived(guarded(Term::implies(
                    Term::and(g.clone(), both),
                    Term::eq(o.value.clone(), c.value.clone()),
                )));
                others = Term::add(others, Term::ite(g, o.perm.clone(), Term::none()));
            }
            if others.as_rat() != Some(zero) {
                let sum = Term::add(pi.clone(), others);
                self.dec.assume_derived(guarded(Term::le(sum, Term::write())));
            } else if constant.is_none() {
                self.dec.assume_derived(guarded(Term::le(pi.clone(), Term::write())));
            }
        } else if !bounded {
            // One instance, one snapshot, however many chunks hold it (the same
            // instance, syntactically, was merged above). Not for two chunks at
            // `write` here: an instance held twice is rare, and each object made
            // with `valid()` would ask about every other (quadratic: 600 cells made
            // 180,000 such facts, and the solver gave up).
            for (_, o) in s.heap.of_kind(&c.kind) {
                if o.is_write() && c.is_write() {
                    continue;
                }
                let g = Self::same_location(o, c.recv.as_ref(), &c.args);
                if !g.is_false() {
                    let both = Term::and(positive(&o.perm), positive(&c.perm));
                    self.dec.assume_derived(Term::implies(
                        Term::and(g, both),
                        Term::eq(o.value.clone(), c.value.clone()),
                    ));
                }
            }
        }
        s.heap.add(c);
        self.note_heap_size(&s);
        q(self, s, ())
    }
}

/// `none < p`, folded to `true` for a positive constant amount.
fn positive(p: &Term) -> Term {
    match p.as_rat() {
        Some(r) if r > crate::state::term::Rat::ZERO => Term::tt(),
        _ => Term::lt(Term::none(), p.clone()),
    }
}
