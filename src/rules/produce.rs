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
            ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Untouched(_) => true,
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
            return self.eval(s, a, &|v, s, t| {
                let s = keep(s);
                if t.is_false() {
                    // An assumption that is false: the path is infeasible.
                    v.ledger.pruned += 1;
                    return;
                }
                // In an opened predicate body, a fact holds of every instance held.
                if v.open_nesting > 0 {
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
            ExprKind::Binary { op: BinOp::Implies, l, r } => self.eval(s, l, &|v, s, c| {
                let s = keep(s);
                let snap = snap.clone();
                v.branch(s, c, &|v, s, ()| v.produce(s, snap.clone(), r, q), &|v, s, ()| {
                    q(v, s, ())
                })
            }),
            ExprKind::Cond { c, a: x, b: y } => self.eval(s, c, &|v, s, tc| {
                let s = keep(s);
                let snap = snap.clone();
                v.branch(s, tc, &|v, s, ()| v.produce(s, snap.clone(), x, q), &|v, s, ()| {
                    v.produce(s, snap.clone(), y, q)
                })
            }),
            ExprKind::Acc(f) => {
                let ExprKind::Field { recv, field, class } = &f.kind else {
                    return self.internal(&s, a.span, "acc of a non-field");
                };
                let name = self.info.field(class.unwrap_or(0), &field.name);
                let sort = sort_of(&f.ty);
                self.eval(s, recv, &|v, s, t| {
                    let s = keep(s);
                    let value = v.unwrap_snap(&snap, sort);
                    // A field of class type holds null or an object of that class.
                    v.assume_typed(&value, &f.ty, true);
                    v.add_chunk(s, Chunk::field(name.clone(), t, value), q)
                })
            }
            ExprKind::AccArray(arr) => self.eval(s, arr, &|v, s, t| {
                let s = keep(s);
                let value = v.unwrap_snap(&snap, Sort::Arr(elem_of(&arr.ty)));
                v.add_chunk(s, Chunk::array(t, value), q)
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
                        let c = v.pred_chunk(p, t0.clone(), targs, snap.clone());
                        v.add_chunk(s, c, q)
                    })
                })
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

    /// Evaluate an optional expression (a call's receiver).
    pub fn eval_opt(&mut self, s: State, e: Option<&'p Expr>, q: Q<'_, 'p, Option<Term>>) {
        match e {
            Some(e) => self.eval(s, e, &|v, s, t| q(v, s, Some(t))),
            None => q(self, s, None),
        }
    }

    /// Add a chunk, assuming what holding it implies: a non-null receiver, and for a
    /// field or array, a receiver distinct from every other chunk of the same kind.
    pub fn add_chunk(&mut self, s: State, c: Chunk, q: Q<'_, 'p, ()>) {
        let mut s = s;
        self.note_refs(&c);
        if let Some(r) = &c.recv {
            let nn = Term::ne(r.clone(), Term::null());
            if nn.is_false() {
                self.ledger.pruned += 1;
                return;
            }
            self.dec.assume_derived(nn);
            if !matches!(c.kind, ChunkKind::Pred(..)) {
                for other in s.heap.iter().filter(|o| o.kind == c.kind) {
                    let Some(o) = &other.recv else { continue };
                    if o == r {
                        // Two chunks for one location: this path is infeasible.
                        self.ledger.pruned += 1;
                        return;
                    }
                    self.dec.assume_derived(Term::ne(o.clone(), r.clone()));
                }
            }
        }
        s.heap.add(c);
        self.note_heap_size(&s);
        q(self, s, ())
    }
}
