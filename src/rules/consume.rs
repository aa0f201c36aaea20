//! `consume` (the paper's Figure 7): checking an assertion and removing the chunks it
//! demands, returning their snapshot. Expressions are evaluated in the state as it was
//! before the consume began (`s`); chunks are taken from what is left (`h2`).
//!
//! Failures inside a consumed assertion are reported with the assertion's id (the
//! current `Mode::Consume`), at the failing conjunct, which this module tracks.

use crate::rules::amount::Take;
use crate::rules::eval::Lookup;
use crate::rules::{Mode, Q, Verifier};
use crate::state::State;
use crate::state::chunk::ChunkKind;
use crate::state::heap::Heap;
use crate::state::term::Term;
use crate::syntax::ast::{BinOp, CallRecv, Expr, ExprKind};

/// The continuation of `consume`: evaluation state, remaining heap, snapshot.
pub type QC<'a, 'p> = &'a dyn Fn(&mut Verifier<'p>, State, Heap, Term);

impl<'p> Verifier<'p> {
    /// Consume `es` (their separating conjunction) from `s` under `mode`; the
    /// continuation gets `s` with the remaining heap, and the snapshot, and runs in the
    /// caller's mode.
    pub fn consume_with(&mut self, mode: Mode, s: State, es: &'p [Expr], q: Q<'_, 'p, Term>) {
        let outer = (self.nest.mode, self.report.conjunct, self.report.conjunct_text.clone());
        self.nest.mode = mode;
        let outer_text = outer.2.clone();
        self.consume_all(s, es, &|v, s, snap| {
            let inner =
                (v.nest.mode, v.report.conjunct, std::mem::take(&mut v.report.conjunct_text));
            v.nest.mode = outer.0;
            v.report.conjunct = outer.1;
            v.report.conjunct_text = outer_text.clone();
            q(v, s, snap);
            v.nest.mode = inner.0;
            v.report.conjunct = inner.1;
            v.report.conjunct_text = inner.2;
        });
        self.nest.mode = outer.0;
        self.report.conjunct = outer.1;
        self.report.conjunct_text = outer.2;
    }

    /// Consume several assertions in order; snapshots combine right-nested over the
    /// impure ones, as `produce_all` splits them.
    pub fn consume_all(&mut self, s: State, es: &'p [Expr], q: Q<'_, 'p, Term>) {
        let h2 = s.heap.clone();
        self.consume_list(s, h2, es, &|v, s, h2, snaps: Vec<Term>| {
            let snap = snaps
                .into_iter()
                .rev()
                .reduce(|acc, x| Term::combine(x, acc))
                .unwrap_or_else(Term::unit);
            let mut s = s;
            s.heap = h2;
            q(v, s, snap)
        })
    }

    #[allow(clippy::type_complexity)]
    fn consume_list(
        &mut self,
        s: State,
        h2: Heap,
        es: &'p [Expr],
        q: &dyn Fn(&mut Verifier<'p>, State, Heap, Vec<Term>),
    ) {
        match es.split_first() {
            None => q(self, s, h2, vec![]),
            Some((e, rest)) => {
                let imp = self.impure(e);
                self.consume(s, h2, e, &|v, s, h2, snap| {
                    v.consume_list(s, h2, rest, &|v, s, h2, mut snaps| {
                        if imp {
                            snaps.insert(0, snap.clone());
                        }
                        q(v, s, h2, snaps)
                    })
                })
            }
        }
    }

    fn set_conjunct(&mut self, a: &Expr) {
        if !self.nest.conjunct_frozen {
            self.report.conjunct = a.span;
            self.report.conjunct_text = crate::rules::show::expr(a);
        }
    }

    pub fn consume(&mut self, s: State, h2: Heap, a: &'p Expr, q: QC<'_, 'p>) {
        if self.stopped() {
            return;
        }
        // A conjunction is consumed conjunct by conjunct, even a pure one, so that a
        // failure names the conjunct that failed.
        if !self.impure(a) && !matches!(a.kind, ExprKind::Binary { op: BinOp::And, .. }) {
            self.set_conjunct(a);
            // `perm(..)` reads what is left (LANGUAGE.md section 11).
            self.eval_left(s, &h2, a, &|v, s, t| v.consume_pure_conjunct(s, h2.clone(), a, t, q));
            return;
        }
        self.consume_impure(s, h2, a, q)
    }

    /// Evaluate `e`, a part of an assertion being consumed from `h2` (a pure conjunct,
    /// an implication's condition, an amount), with `perm(..)` reading what is left, `h2`
    /// (LANGUAGE.md section 11); the continuation runs with the view before.
    fn eval_left(&mut self, s: State, h2: &Heap, e: &'p Expr, q: Q<'_, 'p, Term>) {
        let outer = self.perm_view.replace(h2.clone());
        self.eval(s, e, &|v, s, t| {
            let inner = std::mem::replace(&mut v.perm_view, outer.clone());
            q(v, s, t);
            v.perm_view = inner;
        });
        self.perm_view = outer;
    }

    /// A pure conjunct `a`, evaluated to `t`: prove it.
    fn consume_pure_conjunct(&mut self, s: State, h2: Heap, a: &'p Expr, t: Term, q: QC<'_, 'p>) {
        {
            let v = self;
            {
                let frozen = v.nest.conjunct_frozen;
                if !v.check_with(&s, &t, a.span, "assertion.false", |v| {
                    let pre = crate::rules::show::expr(a);
                    let why = v.why_false(&s, &t, &pre);
                    if frozen {
                        // A pure call's precondition, inside the reported assertion.
                        format!("a pure call's precondition `{pre}` might not hold: {why}")
                    } else {
                        why
                    }
                }) {
                    return;
                }
                q(v, s, h2, Term::unit())
            }
        }
    }

    fn consume_impure(&mut self, s: State, h2: Heap, a: &'p Expr, q: QC<'_, 'p>) {
        match &a.kind {
            ExprKind::Binary { op: BinOp::And, l, r } => {
                let (il, ir) = (self.impure(l), self.impure(r));
                self.consume(s, h2, l, &|v, s, h2, sl| {
                    v.consume(s, h2, r, &|v, s, h2, sr| {
                        let snap = match (il, ir) {
                            (true, true) => Term::combine(sl.clone(), sr),
                            (true, false) => sl.clone(),
                            _ => sr,
                        };
                        q(v, s, h2, snap)
                    })
                })
            }
            ExprKind::Binary { op: BinOp::Implies, l, r } => {
                self.eval_left(s, &h2, l, &|v, s, c| {
                    let h2 = h2.clone();
                    let h2b = h2.clone();
                    v.branch(s, c, &|v, s, ()| v.consume(s, h2.clone(), r, q), &|v, s, ()| {
                        q(v, s, h2b.clone(), Term::unit())
                    })
                })
            }
            ExprKind::Cond { c, a: x, b: y } => self.eval_left(s, &h2, c, &|v, s, tc| {
                let h2 = h2.clone();
                v.branch(s, tc, &|v, s, ()| v.consume(s, h2.clone(), x, q), &|v, s, ()| {
                    v.consume(s, h2.clone(), y, q)
                })
            }),
            ExprKind::Frac { acc, amount } => {
                self.set_conjunct(a);
                self.eval_left(s, &h2, amount, &|v, s, t| {
                    let pi = Term::mul(v.scale.clone(), Term::to_perm(t));
                    if !v.check_nonneg(&s, &pi, a) {
                        return;
                    }
                    v.consume_loc(s, h2.clone(), acc, a, pi, q)
                })
            }
            ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Call { .. } => {
                let pi = self.scale.clone();
                self.consume_loc(s, h2, a, a, pi, q)
            }
            ExprKind::Quant(qn) => {
                self.set_conjunct(a);
                let Some(parts) = crate::rules::segment::qp_parts(qn) else {
                    return self.internal(&s, a.span, "a quantified permission of another shape");
                };
                let (arr, amount) = (parts.arr, parts.amount);
                let elem = crate::state::term::Sort::Arr(crate::rules::elem_of(&arr.ty));
                self.eval(s, arr, &|v, s, ta| {
                    v.eval_amount(s, amount, a, &|v, s, pi| {
                        let ta = ta.clone();
                        let h2 = h2.clone();
                        let parts = crate::rules::segment::qp_parts(qn).expect("checked shape");
                        v.qp_cond(s, &parts, &|v, s, c| {
                            if !v.qp_wellformed(&s, &ta, &c, a) {
                                return;
                            }
                            v.set_conjunct(a);
                            let held = pi.clone();
                            v.consume_segment(
                                s,
                                h2.clone(),
                                ta.clone(),
                                c,
                                elem,
                                pi.clone(),
                                a,
                                &|v, s, h2, snap| {
                                    let snap = v.held_snapshot(&held, snap);
                                    q(v, s, h2, snap)
                                },
                            )
                        })
                    })
                })
            }
            ExprKind::Untouched(inner) => {
                self.set_conjunct(a);
                let original = s.clone();
                let h2 = h2.clone();
                self.untouched_snapshots(s, inner, &|v, now, then| {
                    v.set_conjunct(a);
                    let same = Term::eq(now, then);
                    if v.check(&original, &same, a.span, "assertion.false", || {
                        format!(
                            "the locations of `{}` might have changed",
                            crate::rules::show::expr(inner)
                        )
                    }) {
                        q(v, original.clone(), h2.clone(), Term::unit())
                    }
                })
            }
            _ => self.internal(&s, a.span, "an assertion form that cannot be consumed"),
        }
    }

    /// The snapshot of a permission consumed at amount `pi`: what was read, where `pi`
    /// is positive; where it may be `none`, nothing was held, and the value read says
    /// nothing (a predicate closed twice with `acc(x, q)`, `q == none`, at `x == 1` and
    /// at `x == 2` is one instance, whose snapshots must not be those two values).
    pub(crate) fn held_snapshot(&mut self, pi: &Term, snap: Term) -> Term {
        if snap == Term::unit() || self.known_positive(pi, 0) {
            return snap;
        }
        let none = self.fresh("nothing", crate::state::term::Sort::Snap);
        Term::ite(Term::lt(Term::none(), pi.clone()), snap, none)
    }

    /// Is amount `pi` positive by syntax and the path (a positive constant, a product
    /// of such, `none < p` on the path)?
    fn known_positive(&self, pi: &Term, depth: u32) -> bool {
        use crate::state::term::{Op, Rat};
        if let Some(r) = pi.as_rat() {
            return r > Rat::ZERO;
        }
        if depth < 8
            && *pi.op() == Op::Mul
            && pi.args().iter().all(|x| self.known_positive(x, depth + 1))
        {
            return true;
        }
        self.dec.known_conjuncts(&Term::lt(Term::none(), pi.clone()))
    }

    /// Consume the permission `loc` (`acc(e.f)`, `acc(a[*])`, a predicate instance) at
    /// amount `pi` (already scaled); failures are reported at `a`.
    fn consume_loc(
        &mut self,
        s: State,
        h2: Heap,
        loc: &'p Expr,
        a: &'p Expr,
        pi: Term,
        q: QC<'_, 'p>,
    ) {
        let held = pi.clone();
        let q: QC<'_, 'p> = &|v, s, h2, snap| {
            let snap = v.held_snapshot(&held, snap);
            q(v, s, h2, snap)
        };
        match &loc.kind {
            ExprKind::Acc(f) => {
                if let ExprKind::Index { arr, idx } = &f.kind {
                    // One element: the segment `i == e` (LANGUAGE.md section 12).
                    let elem = crate::state::term::Sort::Arr(crate::rules::elem_of(&arr.ty));
                    return self.eval(s, arr, &|v, s, ta| {
                        let h2 = h2.clone();
                        let pi = pi.clone();
                        v.eval(s, idx, &|v, s, te| {
                            let c = Term::eq(crate::state::chunk::Chunk::index(), te);
                            if !v.qp_wellformed(&s, &ta, &c, a) {
                                return;
                            }
                            v.set_conjunct(a);
                            v.consume_segment(s, h2.clone(), ta.clone(), c, elem, pi.clone(), a, q)
                        })
                    });
                }
                let ExprKind::Field { recv, field, class } = &f.kind else {
                    return self.internal(&s, a.span, "acc of a non-location");
                };
                let name = self.info.field(class.unwrap_or(0), &field.name);
                self.eval(s, recv, &|v, s, t| {
                    v.set_conjunct(a);
                    v.consume_field(s, h2.clone(), t, name.clone(), a, pi.clone(), 0, q)
                })
            }
            ExprKind::AccArray(arr) => self.eval(s, arr, &|v, s, t| {
                v.set_conjunct(a);
                let elem = crate::state::term::Sort::Arr(crate::rules::elem_of(&arr.ty));
                v.consume_array(s, h2.clone(), t, elem, a, pi.clone(), q)
            }),
            ExprKind::Call { recv, args, target: Some(p), .. } => {
                let p = *p;
                let recv_expr = match recv {
                    CallRecv::Expr(r) => Some(&**r),
                    _ => None,
                };
                self.set_conjunct(a);
                self.eval_opt(s, recv_expr, &|v, s, t0| {
                    v.eval_list(s, args, &|v, s, targs| {
                        v.set_conjunct(a);
                        v.consume_pred(s, h2.clone(), p, t0.clone(), targs, a, pi.clone(), q)
                    })
                })
            }
            _ => self.internal(&s, a.span, "a permission form that cannot be consumed"),
        }
    }

    /// Take `pi` of the whole array `t` (`acc(a[*], p)`).
    #[allow(clippy::too_many_arguments)]
    fn consume_array(
        &mut self,
        s: State,
        h2: Heap,
        t: Term,
        elem: crate::state::term::Sort,
        a: &'p Expr,
        pi: Term,
        q: QC<'_, 'p>,
    ) {
        let kind = ChunkKind::Array;
        if pi.as_rat() == Some(crate::state::term::Rat::ZERO) {
            return q(self, s, h2, Term::unit());
        }
        if crate::rules::segment::has_segments(&h2) {
            // Whatever pieces cover 0 .. a.length (LANGUAGE.md section 12).
            let i = crate::state::chunk::Chunk::index();
            let c = Term::and(Term::le(Term::int(0), i.clone()), Term::lt(i, Term::len(t.clone())));
            let nn = Term::ne(t.clone(), Term::null());
            if !self
                .check(&s, &nn, a.span, "receiver.null", || "the array might be null".to_string())
            {
                return;
            }
            return self.consume_segment(s, h2, t, c, elem, pi, a, q);
        }
        if self.read_mode {
            return match self.read_location(&s, h2.clone(), &kind, Some(&t), &[]) {
                Ok((h2, value)) => q(self, s, h2, Term::wrap(value)),
                Err(true) => self.fail_unknown(&s, a.span),
                Err(false) => self.missing_array(s, h2, t, elem, a, q),
            };
        }
        match self.take(&h2, &kind, Some(&t), &[], &pi) {
            Take::Done(h2, value) => q(self, s, h2, Term::wrap(value)),
            Take::Unknown => self.fail_unknown(&s, a.span),
            Take::Missing(..) => self.missing_array(s, h2, t, elem, a, q),
        }
    }

    /// Not enough of the whole array `t` is held: nothing is needed when it is empty
    /// (`acc(a[*])` of a non-null array of length 0 holds no element), else a failure.
    fn missing_array(
        &mut self,
        s: State,
        h2: Heap,
        t: Term,
        elem: crate::state::term::Sort,
        a: &'p Expr,
        q: QC<'_, 'p>,
    ) {
        let empty = Term::and(
            Term::ne(t.clone(), Term::null()),
            Term::eq(Term::len(t.clone()), Term::int(0)),
        );
        if self.dec.prove(&empty) == crate::decider::Answer::Proved {
            // A chunk made from nothing, as a close of an empty predicate makes one:
            // a pure call's termination may not count on the heap getting smaller.
            self.closes += 1;
            let value = self.fresh("empty", elem);
            return q(self, s, h2, Term::wrap(value));
        }
        let what = self.missing_field_message(&s, a, &ChunkKind::Array, &t);
        self.fail(&s, a.span, "insufficient.permission", what)
    }

    /// Read mode (a pure call's precondition): the location's value when it is held
    /// at a positive amount, in what is left (`h2`, from which its chunk is removed, so
    /// that what the callee does not read stays: termination rule 2) or in the heap
    /// before the consume (a location named twice). `Err(true)` when the solver gave up.
    pub fn read_location(
        &mut self,
        s: &State,
        h2: Heap,
        kind: &ChunkKind,
        recv: Option<&Term>,
        args: &[Term],
    ) -> Result<(Heap, Term), bool> {
        match self.lookup_read(&h2, kind, recv, args) {
            Lookup::Found(i) => {
                let mut h2 = h2;
                let c = h2.remove(&i);
                return Ok((h2, c.value));
            }
            Lookup::Unknown => return Err(true),
            Lookup::NotFound => {}
        }
        match self.lookup_read(&s.heap, kind, recv, args) {
            Lookup::Found(i) => Ok((h2, s.heap.get(&i).value.clone())),
            Lookup::Unknown => Err(true),
            Lookup::NotFound => Err(false),
        }
    }

    /// For `untouched(inner)` (the paper's Figures 6 and 7): the snapshots of `inner`
    /// consumed, without removing anything, from the current heap and from the old one,
    /// each side evaluated in its own heap.
    pub fn untouched_snapshots(
        &mut self,
        s: State,
        inner: &'p Expr,
        q: &dyn Fn(&mut Verifier<'p>, Term, Term),
    ) {
        let original = s.clone();
        self.consume(s.clone(), s.heap, inner, &|v, _s, _h, now| {
            let mut old_state = original.clone();
            old_state.heap = (*original.old).clone();
            v.consume(old_state.clone(), old_state.heap, inner, &|v, _s, _h, then| {
                q(v, now.clone(), then)
            })
        })
    }

    /// Take `pi` of field `name` of `t` from `h2`, opening a predicate that provides it
    /// when it is missing (inference).
    #[allow(clippy::too_many_arguments)]
    fn consume_field(
        &mut self,
        s: State,
        h2: Heap,
        t: Term,
        name: std::rc::Rc<str>,
        a: &'p Expr,
        pi: Term,
        depth: u32,
        q: QC<'_, 'p>,
    ) {
        let kind = ChunkKind::Field(name.clone());
        if pi.as_rat() == Some(crate::state::term::Rat::ZERO) {
            return q(self, s, h2, Term::unit());
        }
        if self.read_mode && pi.as_rat().is_none() {
            // Read mode asks for some amount only where the amount named is positive
            // (`acc(x.f, b ? write : none)` asks nothing when `!b`): split on it.
            let positive = Term::lt(Term::none(), pi.clone());
            let h2b = h2.clone();
            return self.branch(
                s,
                positive,
                &|v, s, ()| {
                    v.consume_field(
                        s,
                        h2.clone(),
                        t.clone(),
                        name.clone(),
                        a,
                        Term::write(),
                        depth,
                        q,
                    )
                },
                &|v, s, ()| q(v, s, h2b.clone(), Term::unit()),
            );
        }
        if self.read_mode {
            match self.read_location(&s, h2.clone(), &kind, Some(&t), &[]) {
                Ok((h2, value)) => return q(self, s, h2, Term::wrap(value)),
                Err(true) => return self.fail_unknown(&s, a.span),
                Err(false) => {}
            }
        } else {
            match self.take(&h2, &kind, Some(&t), &[], &pi) {
                Take::Done(h2, value) => return q(self, s, h2, Term::wrap(value)),
                Take::Unknown => return self.fail_unknown(&s, a.span),
                Take::Missing(..) => {}
            }
        }
        if self.config.infer
            && depth < crate::rules::MAX_OPEN
            && let Some((i, bp)) = self.find_provider(&h2, &t, &name)
        {
            let s_outer = s.clone();
            let tmp = State { heap: h2, old: s.old.clone(), store: s.store.clone() };
            return self.open_chunk(tmp, i, bp, &|v, opened, ()| {
                v.set_conjunct(a);
                v.consume_field(
                    s_outer.clone(),
                    opened.heap,
                    t.clone(),
                    name.clone(),
                    a,
                    pi.clone(),
                    depth + 1,
                    q,
                )
            });
        }
        let mut shown = s.clone();
        shown.heap = h2;
        let what = self.missing_field_message(&shown, a, &kind, &t);
        self.fail(&s, a.span, "insufficient.permission", what);
    }
}
