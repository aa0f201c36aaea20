//! `eval` (the paper's Figure 5): expressions to terms, checking well-definedness
//! (permissions, non-null receivers, divisors, bounds, pure-call preconditions).
//!
//! Short-circuit operators and conditional expressions do not split the path: the
//! guarded operand is evaluated in a `join` and the result is an `ite` over its
//! leaves (the paper's rule for `?:` when the condition is undecided), so paths
//! multiply only at statements.

use crate::rules::{Mode, Q, Verifier, sort_of};
use crate::state::State;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::heap::Heap;
use crate::state::term::{Op, Term};
use crate::syntax::ast::{
    BinOp, Body, CallRecv, Expr, ExprKind, MemberKind, MemberRef, Span, UnOp,
};
use std::rc::Rc;

/// Can evaluating `e` fail or touch the heap? (Locals, literals and arithmetic
/// without division cannot.)
pub fn total(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::BigInt(_)
        | ExprKind::Bool(_)
        | ExprKind::Null
        | ExprKind::This
        | ExprKind::Result
        | ExprKind::Local(_) => true,
        ExprKind::Unary { e, .. } => total(e),
        ExprKind::Binary { op, l, r } => {
            !matches!(op, BinOp::Div | BinOp::Mod) && total(l) && total(r)
        }
        ExprKind::Cond { c, a, b } => total(c) && total(a) && total(b),
        _ => false,
    }
}

impl<'p> Verifier<'p> {
    pub fn eval(&mut self, s: State, e: &'p Expr, q: Q<'_, 'p, Term>) {
        if self.stopped() {
            return;
        }
        stacker::maybe_grow(crate::rules::STACK_RED_ZONE, crate::rules::STACK_SEGMENT, || {
            if !self.watch.is_empty() && self.watch.get(&e.span).is_some_and(|t| t.is_none()) {
                // A trigger term of a quantifier being evaluated: note its term.
                return self.eval_expr(s, e, &|v, s, t| {
                    if let Some(slot) = v.watch.get_mut(&e.span)
                        && slot.is_none()
                    {
                        *slot = Some(t.clone());
                    }
                    q(v, s, t)
                });
            }
            if e.ty == crate::syntax::ast::Type::Perm {
                // An `int` read as an amount (LANGUAGE.md section 11).
                return self.eval_expr(s, e, &|v, s, t| q(v, s, Term::to_perm(t)));
            }
            self.eval_expr(s, e, q)
        })
    }

    fn eval_expr(&mut self, s: State, e: &'p Expr, q: Q<'_, 'p, Term>) {
        match &e.kind {
            ExprKind::Int(n) => q(self, s, Term::int(*n)),
            ExprKind::BigInt(n) => q(self, s, Term::big_int(n)),
            ExprKind::Bool(b) => q(self, s, Term::bool(*b)),
            ExprKind::Null => q(self, s, Term::null()),
            ExprKind::This => self.var(s, "this", e.span, q),
            ExprKind::Result => self.var(s, "result", e.span, q),
            ExprKind::Local(x) => self.var(s, x, e.span, q),
            ExprKind::Name(x) => self.var(s, x, e.span, q),
            ExprKind::Field { recv, field, class } => {
                let name = self.info.field(class.unwrap_or(0), &field.name);
                self.eval(s, recv, &|v, s, t| {
                    v.read_field(s, t, name.clone(), e, 0, q);
                })
            }
            ExprKind::Length(a) => self.eval(s, a, &|v, s, t| {
                if !v.check(&s, &Term::ne(t.clone(), Term::null()), a.span, "receiver.null", || {
                    format!("`{}` might be null", crate::rules::show::expr(a))
                }) {
                    return;
                }
                let len = Term::len(t);
                v.dec.assume_derived(Term::le(Term::int(0), len.clone()));
                q(v, s, len)
            }),
            ExprKind::Index { arr, idx } => self.eval(s, arr, &|v, s, ta| {
                v.eval(s, idx, &|v, s, ti| {
                    v.read_index(s, ta.clone(), ti, e, q);
                })
            }),
            ExprKind::Call { target: Some(t), .. } => {
                let m = &self.prog.classes[t.class].members[t.member];
                if m.kind == MemberKind::Pure {
                    self.eval_pure_call(s, e, false, &|v, s, call| q(v, s, call.term))
                } else {
                    self.internal(&s, e.span, "a non-pure call or predicate in an expression")
                }
            }
            ExprKind::Call { target: None, .. } => self.internal(&s, e.span, "an unresolved call"),
            ExprKind::Unary { op, e: x } => self.eval(s, x, &|v, s, t| {
                let r = match op {
                    UnOp::Not => Term::not(t),
                    UnOp::Neg => Term::neg(t),
                };
                q(v, s, r)
            }),
            ExprKind::Binary { op: BinOp::And, l, r } => {
                self.short_circuit(s, l, r, true, false, q)
            }
            ExprKind::Binary { op: BinOp::Or, l, r } => self.short_circuit(s, l, r, false, true, q),
            ExprKind::Binary { op: BinOp::Implies, l, r } => {
                self.short_circuit(s, l, r, true, true, q)
            }
            ExprKind::Binary { op, l, r } => self.eval(s, l, &|v, s, tl| {
                v.eval(s, r, &|v, s, tr| {
                    let t = match op {
                        BinOp::Add => Term::add(tl.clone(), tr.clone()),
                        BinOp::Sub => Term::sub(tl.clone(), tr.clone()),
                        BinOp::Mul => Term::mul(tl.clone(), tr.clone()),
                        BinOp::Div | BinOp::Mod => {
                            let nz = Term::ne(tr.clone(), Term::int(0));
                            if !v.check(&s, &nz, e.span, "division.by.zero", || {
                                format!(
                                    "the divisor `{}` might be zero",
                                    crate::rules::show::expr(r)
                                )
                            }) {
                                return;
                            }
                            if *op == BinOp::Div && e.ty == crate::syntax::ast::Type::Perm {
                                Term::pdiv(tl.clone(), tr)
                            } else if *op == BinOp::Div {
                                Term::div(tl.clone(), tr)
                            } else {
                                Term::rem(tl.clone(), tr)
                            }
                        }
                        BinOp::Eq => Term::eq(tl.clone(), tr),
                        BinOp::Ne => Term::ne(tl.clone(), tr),
                        BinOp::Lt => Term::lt(tl.clone(), tr),
                        BinOp::Le => Term::le(tl.clone(), tr),
                        BinOp::Gt => Term::lt(tr, tl.clone()),
                        BinOp::Ge => Term::le(tr, tl.clone()),
                        BinOp::And | BinOp::Or | BinOp::Implies => unreachable!("handled above"),
                    };
                    q(v, s, t)
                })
            }),
            ExprKind::Cond { c, a, b } => self.eval(s, c, &|v, s, tc| {
                if total(a) && total(b) {
                    return v.eval(s.clone(), a, &|v, s, ta| {
                        let tc = tc.clone();
                        v.eval(s, b, &|v, s, tb| q(v, s, Term::ite(tc.clone(), ta.clone(), tb)))
                    });
                }
                let Some(ta) = v.eval_guarded(&s, tc.clone(), a) else { return };
                let Some(tb) = v.eval_guarded(&s, Term::not(tc.clone()), b) else { return };
                q(v, s, Term::ite(tc.clone(), ta, tb))
            }),
            ExprKind::Old(x) => {
                let current = s.heap.clone();
                let mut old_state = s.clone();
                old_state.heap = (*s.old).clone();
                // `perm(..)` under `old` reads the old heap, which is whole and known:
                // not what is left of the current one while an assertion is consumed,
                // nor an unknown amount while one is produced (except a callee's
                // postcondition at its call: see `call_post`).
                let unknown = self.perm_unknown && self.call_post;
                let outer =
                    (self.perm_view.take(), std::mem::replace(&mut self.perm_unknown, unknown));
                self.eval(old_state, x, &|v, mut s, t| {
                    s.heap = current.clone();
                    let inner = (
                        std::mem::replace(&mut v.perm_view, outer.0.clone()),
                        std::mem::replace(&mut v.perm_unknown, outer.1),
                    );
                    q(v, s, t);
                    v.perm_view = inner.0;
                    v.perm_unknown = inner.1;
                });
                self.perm_view = outer.0;
                self.perm_unknown = outer.1;
            }
            ExprKind::Opening { pred, body } if self.opens_exhausted() => {
                self.open_instance(s, pred, pred.span, false, &|v, s, ()| {
                    let unknown = v.fresh("opening", sort_of(&body.ty));
                    q(v, s, unknown)
                })
            }
            ExprKind::Opening { pred, body } => {
                let original = s.clone();
                // `perm(..)` in the body reads the view the opening made (see
                // `open_amount`); what follows the opening, the view before it. A body
                // with no `perm` needs no view (made, it costs a second production).
                let outer_view = self.perm_view.clone();
                if !reads_perm(body) {
                    self.perm_view = None;
                }
                self.open_instance(s, pred, pred.span, true, &|v, opened, ()| {
                    let Some(opened_instance) = v.last_opened.take() else {
                        return v.internal(&opened, pred.span, "an opening without a snapshot");
                    };
                    v.nest.openings.push(opened_instance);
                    v.eval(opened, body, &|v, _s, t| {
                        let inner = v.nest.openings.pop();
                        let inner_view = std::mem::replace(&mut v.perm_view, outer_view.clone());
                        q(v, original.clone(), t);
                        v.perm_view = inner_view;
                        v.nest.openings.extend(inner);
                    });
                    v.nest.openings.pop();
                });
                self.perm_view = outer_view;
            }
            ExprKind::Using { call, body } => {
                self.eval_pure_call(s, call, true, &|v, s, _| v.eval(s, body, q))
            }
            ExprKind::Acc(_)
            | ExprKind::AccArray(_)
            | ExprKind::Untouched(_)
            | ExprKind::Frac { .. } => self.internal(&s, e.span, "a permission in an expression"),
            ExprKind::Write => q(self, s, Term::write()),
            ExprKind::NoPerm => q(self, s, Term::none()),
            ExprKind::PermOf(loc) => self.perm_of(s, loc, q),
            ExprKind::Quant(qn) if qn.permission => self.internal(
                &s,
                e.span,
                "unsupported: quantified permissions (LANGUAGE.md section 12) are not verified yet",
            ),
            ExprKind::Quant(qn) => self.eval_quant(s, e, qn, q),
            ExprKind::SeqLit { .. }
            | ExprKind::SeqLen(_)
            | ExprKind::SeqIndex { .. }
            | ExprKind::Slice { .. }
            | ExprKind::SeqConcat(..)
            | ExprKind::SeqContains { .. }
            | ExprKind::SeqUpdated { .. } => self.eval_seq(s, e, q),
        }
    }

    fn var(&mut self, s: State, x: &str, span: Span, q: Q<'_, 'p, Term>) {
        match s.get(x).cloned() {
            Some(t) => q(self, s, t),
            None => self.internal(&s, span, &format!("no value for `{x}`")),
        }
    }

    /// A failure that a checked program cannot cause: reported, never verified.
    pub fn internal(&mut self, s: &State, span: Span, what: &str) {
        let save = self.nest.mode;
        self.nest.mode = Mode::Stmt;
        self.fail(s, span, "internal.error", format!("internal error: {what}"));
        self.nest.mode = save;
    }

    /// Evaluate a list of expressions left to right.
    pub fn eval_list(&mut self, s: State, es: &'p [Expr], q: Q<'_, 'p, Vec<Term>>) {
        self.eval_list_from(s, es, Vec::new(), q)
    }

    fn eval_list_from(
        &mut self,
        s: State,
        es: &'p [Expr],
        acc: Vec<Term>,
        q: Q<'_, 'p, Vec<Term>>,
    ) {
        match es.split_first() {
            None => q(self, s, acc),
            Some((first, rest)) => self.eval(s, first, &|v, s, t| {
                let mut acc = acc.clone();
                acc.push(t);
                v.eval_list_from(s, rest, acc, q)
            }),
        }
    }

    /// `l && r` (conj), `l || r` (!conj, !imp) and `l ==> r` (conj, imp): `r` is
    /// evaluated only under the assumption that decides the result.
    fn short_circuit(
        &mut self,
        s: State,
        l: &'p Expr,
        r: &'p Expr,
        conj: bool,
        imp: bool,
        q: Q<'_, 'p, Term>,
    ) {
        let combine = move |tl: Term, tr: Term| {
            if conj && imp {
                Term::implies(tl, tr)
            } else if conj {
                Term::and(tl, tr)
            } else {
                Term::or(tl, tr)
            }
        };
        self.eval(s, l, &|v, s, tl| {
            if total(r) {
                let tl2 = tl.clone();
                return v.eval(s, r, &|v, s, tr| q(v, s, combine(tl2.clone(), tr)));
            }
            // The guard under which r matters.
            let guard = if conj { tl.clone() } else { Term::not(tl.clone()) };
            let Some(tr) = v.eval_guarded(&s, guard, r) else { return };
            q(v, s, combine(tl, tr))
        })
    }

    /// Evaluate `e` under `guard` without splitting the path: explore it in a join,
    /// re-assume its facts guarded, and return the `ite` of its leaves' values.
    /// `None` when the path ended inside (every sub-path is in the ledger: merged,
    /// failed, pruned or timed out); otherwise one path goes on.
    pub fn eval_guarded(&mut self, s: &State, guard: Term, e: &'p Expr) -> Option<Term> {
        if self.feasible_by_syntax(&guard) == Some(false) {
            // The operand is irrelevant on this path.
            return Some(Term::default_of(sort_of(&e.ty)));
        }
        // Lazily, whether the guard can hold is not asked (the solver takes longest
        // to say it can): under one that cannot, the operand's checks hold and a
        // failure is reported only on a feasible path. The operand's facts (guarded,
        // so true) stay on the path, where they could make the solver give up on a
        // later proof: a member that fails after one, with a check the solver gave up
        // on, is verified again asking (`verify::verify_member_with`).
        let unchecked = !self.bounds_fresh(&guard)
            && self.is_lazy()
            && self.feasible_by_syntax(&guard).is_none();
        if unchecked {
            self.stats.unchecked_guards += 1;
        } else if !self.bounds_fresh(&guard) && !self.feasible(&guard) {
            // The operand is irrelevant on this path.
            return Some(Term::default_of(sort_of(&e.ty)));
        }
        let before = self.stats.ledger;
        let leaves = self.join(&|v, k| {
            v.dec.assume_branch(guard.clone());
            v.eval(s.clone(), e, &|v, _s, t| k(v, t));
        });
        // The `ite` below treats the leaves as exhaustive: if any sub-path ended
        // otherwise than as a leaf or a proved prune (a failure, the time budget),
        // this path ends with it.
        let after = self.stats.ledger;
        if after.failed > before.failed || after.timeout > before.timeout {
            return None;
        }
        self.stats.ledger.started += 1;
        let leaves = crate::rules::expand(&leaves);
        self.assume_leaf_facts(&leaves);
        // Leaves are exhaustive (infeasible ones aside): the last is the `else`. Each
        // condition includes the guard, which is harmless: the value only matters
        // under it.
        let mut it = leaves.iter().rev();
        let last =
            it.next().map(|l| l.value.clone()).unwrap_or_else(|| Term::default_of(sort_of(&e.ty)));
        Some(
            it.fold(last, |acc, l| Term::ite(Term::and_all(l.conds.clone()), l.value.clone(), acc)),
        )
    }

    /// Does `guard` only bound an integer symbol the path condition never mentions
    /// (a quantifier's fresh variable: `0 <= i && i < a.length`)? Such a guard is
    /// evaluated under without asking whether it can hold: with many quantified facts
    /// on the path, the solver takes long to say it can, and should it not, the
    /// operand's value computed under it matters nowhere.
    /// Likewise a conjunction of comparisons each of which mentions such a symbol
    /// (`0 <= i && i < j && j < a.length`: the guard of a quantifier over two
    /// indices): whether it can hold depends on the bounds alone, and evaluating
    /// under a guard that cannot is only wasted work (a check under it is proved, a
    /// failure there is pruned as on any contradictory path).
    fn bounds_fresh(&self, guard: &Term) -> bool {
        // The index symbol of quantified permissions stands for every index: what the
        // path says of it is guarded by conditions on it (`0 <= i# ==> a.length >= 0`).
        let index = Chunk::index();
        let fresh = |x: &Term| {
            x.sort() == crate::state::term::Sort::Int && (*x == index || !self.dec.mentions(x))
        };
        let symbols = guard.symbols();
        if symbols.iter().any(|x| fresh(x) && crate::rules::interval::only_bounds(guard, x)) {
            return true;
        }
        crate::rules::interval::compares_fresh(guard, &fresh)
    }

    /// Read `t.f` (`e` is the field expression), opening a predicate that provides it
    /// when there is no chunk (inference).
    #[allow(clippy::too_many_arguments)]
    pub fn read_field(
        &mut self,
        s: State,
        t: Term,
        name: Rc<str>,
        e: &'p Expr,
        depth: u32,
        q: Q<'_, 'p, Term>,
    ) {
        let kind = ChunkKind::Field(name.clone());
        match self.lookup_read(&s.heap, &kind, Some(&t), &[]) {
            Lookup::Found(i) => {
                let value = s.heap.get(&i).value.clone();
                q(self, s, value)
            }
            Lookup::Unknown => self.fail_unknown(&s, e.span),
            Lookup::NotFound => {
                if self.config.infer && depth < crate::rules::MAX_OPEN {
                    let provider = self.find_provider(&s.heap, &t, &name);
                    if provider.is_some() && self.opens_exhausted() {
                        let short = name.rsplit('.').next().unwrap_or(&name).to_string();
                        let unknown = self.fresh(&short, sort_of(&e.ty));
                        return q(self, s, unknown);
                    }
                    if let Some((i, bp)) = provider {
                        return self.open_chunk(s, i, bp, &|v, s, ()| {
                            v.read_field(s, t.clone(), name.clone(), e, depth + 1, q)
                        });
                    }
                }
                let what = self.missing_field_message(&s, e, &kind, &t);
                self.fail(&s, e.span, "insufficient.permission", what);
            }
        }
    }

    /// `perm(loc)`: the amount held of `loc` in the heap `perm(..)` reads (section 11).
    fn perm_of(&mut self, s: State, loc: &'p Expr, q: Q<'_, 'p, Term>) {
        match &loc.kind {
            ExprKind::Field { recv, field, class } => {
                let name = self.info.field(class.unwrap_or(0), &field.name);
                self.eval(s, recv, &|v, s, t| {
                    let heap = v.perm_view.clone().unwrap_or_else(|| s.heap.clone());
                    let held = v.held(&heap, &ChunkKind::Field(name.clone()), Some(&t), &[]);
                    let held = v.perm_read(held);
                    q(v, s, held)
                })
            }
            ExprKind::Call { recv, args, target: Some(p), .. } => {
                let p = *p;
                let recv_expr = match recv {
                    CallRecv::Expr(r) => Some(&**r),
                    _ => None,
                };
                self.eval_opt(s, recv_expr, &|v, s, t0| {
                    v.eval_list(s, args, &|v, s, targs| {
                        let heap = v.perm_view.clone().unwrap_or_else(|| s.heap.clone());
                        let kind = v.pred_kind(p);
                        let held = v.held(&heap, &kind, t0.as_ref(), &targs);
                        let held = v.perm_read(held);
                        q(v, s, held)
                    })
                })
            }
            ExprKind::Index { arr, idx } => self.eval(s, arr, &|v, s, ta| {
                v.eval(s, idx, &|v, s, ti| {
                    if !v.check(
                        &s,
                        &Term::ne(ta.clone(), Term::null()),
                        arr.span,
                        "receiver.null",
                        || format!("`{}` might be null", crate::rules::show::expr(arr)),
                    ) || !v.check_bounds(&s, &ta, &ti, loc)
                    {
                        return;
                    }
                    let heap = v.perm_view.clone().unwrap_or_else(|| s.heap.clone());
                    let held = v.held_elem(&heap, &ta, &ti);
                    let held = v.perm_read(held);
                    q(v, s, held)
                })
            }),
            _ => self.internal(&s, loc.span, "`perm` of a non-location"),
        }
    }

    /// The value of `perm(..)`, given the amount `held` in the heap it reads: that
    /// amount, except while an assertion is produced, where it is some unknown
    /// non-negative amount (see `Verifier::perm_unknown`).
    fn perm_read(&mut self, held: Term) -> Term {
        if !self.perm_unknown || self.perm_view.is_some() {
            return held;
        }
        let p = self.fresh("perm", crate::state::term::Sort::Perm);
        self.dec.assume(Term::le(Term::none(), p.clone()));
        p
    }

    /// Why an access lacks permission, in source terms: the location wanted (its
    /// receiver named by the state's bindings) and the ones of that field or array
    /// whose permission is held instead.
    pub fn missing_field_message(&self, s: &State, e: &Expr, kind: &ChunkKind, t: &Term) -> String {
        let names = self.names(s);
        let mut e = e;
        while let ExprKind::Frac { acc, .. } = &e.kind {
            e = acc;
        }
        let target = match &e.kind {
            ExprKind::Acc(x) | ExprKind::AccArray(x) => crate::rules::show::expr(x),
            _ => crate::rules::show::expr(e),
        };
        let loc = |r: &Term| -> Option<String> {
            let r = names.render_now(r)?;
            // A receiver that is not a name or a path (`i == 0 ? x : y`) in parentheses.
            let r = if r.contains(' ') { format!("({r})") } else { r };
            Some(match kind {
                ChunkKind::Field(name) => {
                    format!("{r}.{}", name.rsplit('.').next().unwrap_or(name))
                }
                _ => format!("{r}[*]"),
            })
        };
        let mut held: Vec<String> = vec![];
        let mut unnamed = 0;
        for (_, c) in s.heap.of_kind(kind) {
            match c.recv.as_ref().and_then(&loc) {
                Some(l) if !held.contains(&format!("`{l}`")) => held.push(format!("`{l}`")),
                Some(_) => {}
                None => unnamed += 1,
            }
        }
        if unnamed > 0 {
            held.push(if unnamed == 1 {
                "one other location".into()
            } else {
                format!("{unnamed} other locations")
            });
        }
        let wanted = loc(t).filter(|w| *w != target);
        let head = match wanted {
            Some(w) => format!("no permission to access `{target}` (that is, `{w}`)"),
            None => format!("no permission to access `{target}`"),
        };
        let same = loc(t).map(|w| format!("`{w}`")).filter(|w| held.contains(w));
        if let Some(w) = same {
            let head = head.replacen("no permission", "not enough permission", 1);
            format!("{head}: the amount of {w} held here might be less than needed")
        } else if held.is_empty() {
            format!("{head}: none is held here")
        } else {
            format!(
                "{head}: permission is held only to {}, which might not be the same location",
                held.join(", ")
            )
        }
    }

    fn read_index(&mut self, s: State, ta: Term, ti: Term, e: &'p Expr, q: Q<'_, 'p, Term>) {
        if crate::rules::segment::has_segments(&s.heap) {
            // Array chunks with index conditions (LANGUAGE.md section 12).
            let nn = Term::ne(ta.clone(), Term::null());
            if !self
                .check(&s, &nn, e.span, "receiver.null", || "the array might be null".to_string())
                || !self.check_bounds(&s, &ta, &ti, e)
            {
                return;
            }
            return match self.read_segment(&s.heap, &ta, &ti) {
                Ok(value) => {
                    if !self.axioms.translating {
                        self.assume_typed(&value, &e.ty, false);
                    }
                    q(self, s, value)
                }
                Err(true) => self.fail_unknown(&s, e.span),
                Err(false) => {
                    let what = format!(
                        "no permission to read `{}`: no array chunk covers the index `{ti}` at a positive amount",
                        crate::rules::show::expr(e)
                    );
                    self.fail(&s, e.span, "insufficient.permission", what)
                }
            };
        }
        match self.lookup_read(&s.heap, &ChunkKind::Array, Some(&ta), &[]) {
            Lookup::Found(i) => {
                let contents = s.heap.get(&i).value.clone();
                if !self.check_bounds(&s, &ta, &ti, e) {
                    return;
                }
                let value = Term::select(contents, ti);
                if !self.axioms.translating {
                    self.assume_typed(&value, &e.ty, false);
                }
                q(self, s, value)
            }
            Lookup::Unknown => self.fail_unknown(&s, e.span),
            Lookup::NotFound => {
                let what = self.missing_field_message(&s, e, &ChunkKind::Array, &ta);
                self.fail(&s, e.span, "insufficient.permission", what)
            }
        }
    }

    pub fn check_bounds(&mut self, s: &State, ta: &Term, ti: &Term, e: &Expr) -> bool {
        let len = Term::len(ta.clone());
        self.dec.assume_derived(Term::le(Term::int(0), len.clone()));
        let ok = Term::and(Term::le(Term::int(0), ti.clone()), Term::lt(ti.clone(), len));
        self.check(s, &ok, e.span, "index.out.of.bounds", || {
            format!("the index in `{}` might be out of bounds", crate::rules::show::expr(e))
        })
    }

    /// Evaluate a pure call `e` (an `ExprKind::Call` of a pure method): receiver
    /// non-null, arguments, the precondition consumed (not removed) for the snapshot;
    /// the result is `C.p(snapshot, receiver, args)`. Assumes the callee's
    /// postcondition, and with inference (or `explicit`, for `use`/`using`) its body.
    pub fn eval_pure_call(
        &mut self,
        s: State,
        e: &'p Expr,
        explicit: bool,
        q: Q<'_, 'p, PureCall>,
    ) {
        let ExprKind::Call { recv, args, target: Some(target), .. } = &e.kind else {
            return self.internal(&s, e.span, "not a call");
        };
        let target = *target;
        self.eval_receiver(s, recv, e.span, &|v, s, t0| {
            v.eval_list(s, args, &|v, s, targs| {
                v.pure_call_terms(s, target, t0.clone(), targs, e, explicit, q)
            })
        })
    }

    /// Evaluate a call's receiver (checking it is not null), or none for a static call.
    pub fn eval_receiver(
        &mut self,
        s: State,
        recv: &'p CallRecv,
        span: Span,
        q: Q<'_, 'p, Option<Term>>,
    ) {
        match recv {
            CallRecv::Expr(r) => self.eval(s, r, &|v, s, t| {
                if matches!(r.kind, ExprKind::This) {
                    return q(v, s, Some(t));
                }
                let nn = Term::ne(t.clone(), Term::null());
                if !v.check(&s, &nn, span, "receiver.null", || {
                    format!("the receiver `{}` might be null", crate::rules::show::expr(r))
                }) {
                    return;
                }
                q(v, s, Some(t))
            }),
            CallRecv::Static(_) | CallRecv::Implicit => q(self, s, None),
        }
    }

    /// The store a member's contract is evaluated in: `this` and its parameters.
    pub fn callee_store(
        &self,
        target: MemberRef,
        recv: Option<Term>,
        args: &[Term],
    ) -> crate::state::Store {
        let m = &self.prog.classes[target.class].members[target.member];
        let mut store = crate::state::Store::new();
        if let Some(r) = recv {
            store.insert_mut("this".into(), r);
        }
        for (p, a) in m.params.iter().zip(args) {
            store.insert_mut(p.name.name.as_str().into(), a.clone());
        }
        store
    }

    #[allow(clippy::too_many_arguments)]
    fn pure_call_terms(
        &mut self,
        s: State,
        target: MemberRef,
        recv: Option<Term>,
        args: Vec<Term>,
        e: &'p Expr,
        explicit: bool,
        q: Q<'_, 'p, PureCall>,
    ) {
        let m = &self.prog.classes[target.class].members[target.member];
        let callee = State {
            heap: s.heap.clone(),
            old: s.old.clone(),
            store: self.callee_store(target, recv.clone(), &args),
        };
        // A failing precondition is reported at the call: as `call.precondition` in
        // code, as `not.wellformed` in a contract or body, and with the enclosing
        // assertion's id (at its conjunct) inside a consumed assertion.
        let (mode, freeze) = match self.nest.mode {
            Mode::Stmt => (Mode::Consume { id: "call.precondition", call: Some(e.span) }, false),
            Mode::WellFormed => (Mode::Consume { id: "not.wellformed", call: Some(e.span) }, false),
            other => (other, true),
        };
        let frozen = self.nest.conjunct_frozen;
        self.nest.conjunct_frozen = frozen || freeze;
        // A precondition that calls its own method (`requires f() > 0`) would be
        // evaluated forever: nested precondition evaluations are bounded.
        if self.nest.pre_depth >= crate::rules::MAX_PRE_DEPTH {
            return self.fail_termination(&s, e, target, false);
        }
        let closes_before = self.closes;
        let termination = self.termination;
        // Rule (3) needs the instances opened around the call (only under a check).
        let openings = if termination.is_some() { self.nest.openings.clone() } else { vec![] };
        self.nest.pre_depth += 1;
        // Read mode (LANGUAGE.md section 11): some positive amount of each location.
        let outer_read = std::mem::replace(&mut self.read_mode, true);
        let outer_scale = std::mem::replace(&mut self.scale, Term::write());
        self.consume_with(mode, callee, &m.requires, &|v, rest, snap| {
            v.read_mode = outer_read;
            let inner_scale = std::mem::replace(&mut v.scale, outer_scale.clone());
            v.nest.pre_depth -= 1;
            let inner_frozen = v.nest.conjunct_frozen;
            v.nest.conjunct_frozen = frozen;
            v.pure_call_result(
                &s,
                rest,
                snap,
                target,
                recv.clone(),
                &args,
                e,
                explicit,
                termination,
                closes_before,
                &openings,
                q,
            );
            v.nest.conjunct_frozen = inner_frozen;
            v.nest.pre_depth += 1;
            v.read_mode = true;
            v.scale = inner_scale;
        });
        self.read_mode = outer_read;
        self.scale = outer_scale;
        self.nest.pre_depth -= 1;
        self.nest.conjunct_frozen = frozen;
    }

    #[allow(clippy::too_many_arguments)]
    fn pure_call_result(
        &mut self,
        s: &State,
        rest: State,
        snap: Term,
        target: MemberRef,
        recv: Option<Term>,
        args: &[Term],
        e: &'p Expr,
        explicit: bool,
        termination: Option<MemberRef>,
        closes_before: u64,
        openings: &[crate::rules::Opened],
        q: Q<'_, 'p, PureCall>,
    ) {
        let v = self;
        if let Some(group) = v.measuring
            && v.info.same_group(group, target)
        {
            // A measure that calls a method of the group it measures would need the
            // group's termination to be defined (and its evaluation here would check
            // this call again, without end).
            return v.fail_measure(
                s,
                e,
                target,
                "a `decreases` measure may not call a method of the recursion group it measures",
            );
        }
        if let Some(caller) = termination {
            // The paper's 3.6 measure (heap size, derivation depth, position) holds
            // only when the consume closed nothing: an inferred close raises the
            // derivation depth, and may even make chunks from nothing (a predicate
            // with an empty body), so then no condition shows a decrease.
            let closed_nothing = v.closes == closes_before;
            // A call through an interface runs whichever class's method the object
            // has, declared anywhere: declaration order says nothing (section 10).
            let earlier = target < caller && !v.info.in_interface(target);
            // Rules (1)-(3) and measures do not combine: `f -> g` by order (or on a
            // smaller heap) and `g -> f` by a measure that goes down (closing what `f`
            // needs, the heap grows back) is `f(0) -> g(1) -> f(0)`. In a group where
            // some method declares `decreases`, a call passing rules (1)-(3) counts
            // when the measure does not go up.
            let same_group = v.info.same_group(caller, target);
            let measured = same_group && v.info.group_measured(caller);
            // Not when the callee reads an instance opened (in part) around the call:
            // what the opening left beside it is that instance's own body
            // (`opening acc(P(), 1/2) in f()` leaves `acc(x, 1/2)` of `P`'s body, and
            // `f` reads `P` again: halving for ever).
            let smaller = !v.reads_opened(&s.heap, &rest.heap, openings)
                && v.leaves_chunk(&s.heap, &rest.heap);
            // Rule (3), read strictly: the precondition's snapshot is a proper part of
            // an instance opened around the call (a predicate that holds only itself
            // gives none).
            let opening = openings.iter().any(|o| proper_part(&snap, &o.snap));
            // A close counts against rules (1)-(3) only in the caller's recursion
            // group: a call out of it is on no cycle (the groups follow every call
            // that evaluating a member can make: its contracts' and measure's, and
            // those of the bodies of the predicates it may open or close, families
            // included), so the rules hold there as section 8 states them.
            let plain = (closed_nothing || !same_group) && (earlier || smaller || opening);
            if !plain || measured {
                // Rule (4) (LANGUAGE.md section 15): both declare `decreases`, they
                // call each other, and the measure goes down, staying non-negative.
                let decreases =
                    |r: MemberRef| v.prog.classes[r.class].members[r.member].decreases.first();
                // Through an interface, the measure of each implementation in the
                // group too: the object's own method runs on.
                let mut targets = vec![target];
                if v.info.in_interface(target) {
                    for &c in v.info.implemented_by.get(&target).into_iter().flatten() {
                        if v.info.same_group(caller, c) {
                            targets.push(c);
                        }
                    }
                }
                if let Some(&lacking) = targets.iter().find(|&&t| decreases(t).is_none())
                    && same_group
                    && decreases(caller).is_some()
                    && lacking != target
                {
                    let name = v.info.member_names.get(&lacking).cloned().unwrap_or_default();
                    let why = format!("`{name}`, which implements it, declares no `decreases`");
                    return v.fail_measure(s, e, target, &why);
                }
                match (decreases(caller), decreases(target)) {
                    (Some(dc), Some(_)) if same_group => {
                        let snap = snap.clone();
                        let recv = recv.clone();
                        let outer = v.measuring.replace(caller);
                        // The goal for a callee's measure `tt`, where the caller's is `tc`.
                        let goal = |v: &Verifier<'p>, t: MemberRef, tt: &Term, tc: &Term| {
                            let whose = if t == target {
                                "the measure".to_string()
                            } else {
                                let n = v.info.member_names.get(&t).cloned();
                                format!(
                                    "the measure of `{}`, which implements it,",
                                    n.unwrap_or_default()
                                )
                            };
                            if plain {
                                (Term::le(tt.clone(), tc.clone()), format!("{whose} may go up"))
                            } else {
                                let why = format!("{whose} may not decrease");
                                (Term::lt(tt.clone(), tc.clone()), why)
                            }
                        };
                        let at_call = |v: &mut Verifier<'p>, tc: Term| {
                            // Each implementation's measure where the object is of its
                            // class, in a frame of its own: what evaluating it assumes
                            // (its `this.valid()` opened as that class's body) holds of
                            // that class's objects only, and stays off the path.
                            for &t in &targets[1..] {
                                let passed = std::cell::Cell::new(true);
                                v.in_frame(|v| {
                                    if let Some(r) = &recv {
                                        v.dec.assume(Term::ne(r.clone(), Term::null()));
                                        v.dec.assume(v.is_class(r, t.class));
                                    }
                                    v.measure_at_call(s, t, recv.as_ref(), args, &|v, tt| {
                                        let (g, why) = goal(v, t, &tt, &tc);
                                        if passed.get()
                                            && v.dec.prove(&g) != crate::decider::Answer::Proved
                                        {
                                            passed.set(false);
                                            v.fail_measure(s, e, target, &why);
                                        }
                                    });
                                });
                                if !passed.get() {
                                    return;
                                }
                            }
                            v.measure_at_call(s, target, recv.as_ref(), args, &|v, tt| {
                                let mut checks = vec![];
                                if !plain {
                                    let why = "the measure may be negative".to_string();
                                    checks.push((Term::le(Term::int(0), tc.clone()), why));
                                }
                                checks.push(goal(v, target, &tt, &tc));
                                for (goal, why) in checks {
                                    if v.dec.prove(&goal) != crate::decider::Answer::Proved {
                                        return v.fail_measure(s, e, target, &why);
                                    }
                                }
                                let inner = std::mem::replace(&mut v.measuring, outer);
                                v.pure_call_finish(
                                    s,
                                    snap.clone(),
                                    target,
                                    recv.clone(),
                                    args,
                                    e,
                                    explicit,
                                    termination,
                                    q,
                                );
                                v.measuring = inner;
                            })
                        };
                        // The caller's measure as on entry (when its body is being
                        // checked; else at the call).
                        match v.entry_measure.clone() {
                            Some(tc) => at_call(v, tc),
                            None => v.eval(s.clone(), dc, &|v, _, tc| at_call(v, tc)),
                        }
                        v.measuring = outer;
                        return;
                    }
                    _ => {}
                }
                v.fail_termination(s, e, target, plain && measured);
                return;
            }
        }
        v.pure_call_finish(s, snap, target, recv, args, e, explicit, termination, q)
    }

    /// The measure of `t` at a call with receiver `recv` and arguments `args` (the
    /// method's own parameter names), then `q` with it.
    fn measure_at_call(
        &mut self,
        s: &State,
        t: MemberRef,
        recv: Option<&Term>,
        args: &[Term],
        q: &dyn Fn(&mut Verifier<'p>, Term),
    ) {
        let callee = &self.prog.classes[t.class].members[t.member];
        let Some(dt) = callee.decreases.first() else { return };
        let mut at_call = s.clone();
        at_call.store = Default::default();
        if let Some(r) = recv {
            at_call.set("this", r.clone());
        }
        for (p, a) in callee.params.iter().zip(args) {
            at_call.set(&p.name.name, a.clone());
        }
        self.eval(at_call, dt, &|v, _, tt| q(v, tt))
    }

    /// The rest of a pure call once its termination is settled: the application and
    /// its axioms.
    #[allow(clippy::too_many_arguments)]
    fn pure_call_finish(
        &mut self,
        s: &State,
        snap: Term,
        target: MemberRef,
        recv: Option<Term>,
        args: &[Term],
        e: &'p Expr,
        explicit: bool,
        termination: Option<MemberRef>,
        q: Q<'_, 'p, PureCall>,
    ) {
        let v = self;
        let Some(f) = v.info.funcs.get(&target) else {
            return v.internal(s, e.span, "pure method without a function");
        };
        let mut fargs = vec![snap.clone()];
        fargs.extend(recv.iter().cloned());
        fargs.extend(args.iter().cloned());
        let term = Term::app(f, fargs);
        // Its axioms: the postcondition, and (with inference, or for `use`) the body.
        let body = explicit || v.config.infer;
        v.instantiate_call(&term, crate::rules::definition::FUEL, body, termination.is_some());
        if !v.axioms.translating {
            let ty = &v.prog.classes[target.class].members[target.member].ty;
            v.assume_typed(&term, ty, false);
        }
        q(v, s.clone(), PureCall { term, snap })
    }

    /// Termination rule (2): after the callee's precondition was read from `before`,
    /// `after` holds some location the callee did not read. A piece the consume cut
    /// off a chunk it read (an array segment's remainder) is such a location by
    /// construction; a chunk it left untouched is one only if it is provably apart from
    /// every chunk it read: read mode gives no upper-bound facts, so `acc(x) &&
    /// acc(o.x)` may name one location twice, and then the callee reads all of it.
    fn leaves_chunk(&mut self, before: &Heap, after: &Heap) -> bool {
        let read: Vec<Chunk> =
            before.slots().filter(|(sl, _)| !after.contains(sl)).map(|(_, c)| c.clone()).collect();
        let left: Vec<(bool, Chunk)> =
            after.slots().map(|(sl, c)| (before.contains(&sl), c.clone())).collect();
        for (untouched, c) in left {
            // A chunk left over counts when it provably holds something: a positive
            // amount (`acc(x, p)` with `p` possibly `none` holds nothing), and for an
            // array, an element (an empty array's `acc(a[*])` is no location).
            let held = Term::lt(Term::none(), c.perm.clone());
            if !held.is_true() && self.dec.prove(&held) != crate::decider::Answer::Proved {
                continue;
            }
            if c.kind == ChunkKind::Array && !self.nonempty(&c.covers(&Chunk::index())) {
                continue;
            }
            // A piece cut off a chunk the callee read (a segment's remainder, an
            // amount's rest) is apart from that chunk's part by construction, but not
            // from the other chunks read: `a[0..2)` cut to `a[1]` beside a read
            // `b[1]` is all `f` held when `b == a`.
            let origin = |r: &Chunk| !untouched && r.recv == c.recv && r.value == c.value;
            let apart = read
                .iter()
                .filter(|r| r.kind == c.kind && !origin(r))
                .all(|r| self.provably_apart(&c, r));
            if apart {
                return true;
            }
        }
        false
    }

    /// Does a call whose precondition was read from `before` (leaving `after`) read a
    /// predicate instance opened around it (`openings`)? A read chunk of the same
    /// predicate counts unless it is provably another instance (`acc(b.P(), 1/2)`
    /// beside an opened `a.P()`, where `b` may be `a`).
    fn reads_opened(
        &mut self,
        before: &Heap,
        after: &Heap,
        openings: &[crate::rules::Opened],
    ) -> bool {
        if openings.is_empty() {
            return false;
        }
        let read: Vec<Chunk> = before
            .slots()
            .filter(|(sl, c)| !after.contains(sl) && matches!(c.kind, ChunkKind::Pred(..)))
            .map(|(_, c)| c.clone())
            .collect();
        for r in &read {
            let ChunkKind::Pred(f, _) = &r.kind else { continue };
            for o in openings {
                if r.value == o.snap {
                    return true;
                }
                if self.info.family_of(*f) != self.info.family_of(o.pred) {
                    continue;
                }
                let as_chunk = Chunk {
                    kind: r.kind.clone(),
                    recv: o.recv.clone(),
                    args: o.args.clone(),
                    value: o.snap.clone(),
                    perm: Term::write(),
                    cond: None,
                };
                if !self.provably_apart(r, &as_chunk) {
                    return true;
                }
            }
        }
        false
    }

    /// Are two chunks of one kind provably of different locations?
    fn provably_apart(&mut self, a: &Chunk, b: &Chunk) -> bool {
        let differ =
            |x: &Term, y: &Term| if x == y { Term::ff() } else { Term::ne(x.clone(), y.clone()) };
        let mut goals = vec![];
        if let (Some(x), Some(y)) = (&a.recv, &b.recv) {
            goals.push(differ(x, y));
        }
        goals.extend(a.args.iter().zip(b.args.iter()).map(|(x, y)| differ(x, y)));
        if a.kind == ChunkKind::Array {
            // One array: apart where no index is in both.
            let k = self.fresh("k", crate::state::term::Sort::Int);
            goals.push(Term::not(Term::and(a.covers(&k), b.covers(&k))));
        }
        let goal = Term::or_all(goals);
        if goal.is_false() {
            return false;
        }
        self.dec.prove(&goal) == crate::decider::Answer::Proved
    }

    /// Rule (4) tried and failed: `why` is the failing half.
    fn fail_measure(&mut self, s: &State, e: &Expr, target: MemberRef, why: &str) {
        let name = self.info.member_names.get(&target).cloned().unwrap_or_default();
        let save = self.nest.mode;
        self.nest.mode = Mode::Stmt;
        self.fail(
            s,
            e.span,
            "termination.unproven",
            format!(
                "cannot prove that the call of `{name}` terminates: {why} (its `decreases` clause)"
            ),
        );
        self.nest.mode = save;
    }

    fn fail_termination(&mut self, s: &State, e: &Expr, target: MemberRef, measured: bool) {
        let name = self.info.member_names.get(&target).cloned().unwrap_or_default();
        let why = if measured {
            "it is in a recursion group where a method declares `decreases`, in which declaration order, a smaller heap or an opening count only when both methods declare one and the measure does not go up".to_string()
        } else {
            let order = if self.info.in_interface(target) {
                "it is called through an interface (whose implementations may be declared anywhere, so declaration order does not count)"
            } else {
                "it is not declared earlier"
            };
            format!(
                "{order}, its precondition leaves no chunk behind, and it is not inside an `opening` (or consuming its precondition had to close a predicate)"
            )
        };
        let save = self.nest.mode;
        self.nest.mode = Mode::Stmt;
        self.fail(
            s,
            e.span,
            "termination.unproven",
            format!("cannot prove that the call of `{name}` terminates: {why}"),
        );
        self.nest.mode = save;
    }

    /// The body of a pure method or predicate (its `return` expression).
    pub fn body_of(&self, target: MemberRef) -> Option<&'p Expr> {
        match &self.prog.classes[target.class].members[target.member].body {
            Body::Return(e) => Some(e),
            _ => None,
        }
    }
}

/// The result of evaluating a pure call.
#[derive(Clone)]
pub struct PureCall {
    pub term: Term,
    pub snap: Term,
}

/// The outcome of a chunk lookup.
pub enum Lookup {
    Found(crate::state::heap::Slot),
    NotFound,
    Unknown,
}

/// Is snapshot `snap` made only of proper parts of `opened` (projections `first`,
/// `second` of it, possibly wrapped into a value sort and back), with at least one?
/// `unit` parts (pure conjuncts) hold nothing and are skipped.
fn proper_part(snap: &Term, opened: &Term) -> bool {
    let mut parts = 0;
    let mut todo = vec![snap.clone()];
    while let Some(t) = todo.pop() {
        match t.op() {
            Op::Unit => {}
            Op::Combine => todo.extend(t.args().iter().cloned()),
            _ => {
                if !projects(&t, opened) {
                    return false;
                }
                parts += 1;
            }
        }
    }
    parts > 0
}

/// Is `t` a projection (at least one `first`/`second`) of `opened`?
fn projects(t: &Term, opened: &Term) -> bool {
    let mut t = t.clone();
    let mut steps = 0;
    loop {
        if t == *opened {
            return steps > 0;
        }
        t = match t.op() {
            Op::First | Op::Second => {
                steps += 1;
                t.args()[0].clone()
            }
            Op::Wrap(_) | Op::Unwrap(_) => t.args()[0].clone(),
            _ => return false,
        };
    }
}

/// Does `e` hold a `perm(..)` anywhere?
fn reads_perm(e: &Expr) -> bool {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if matches!(x.kind, ExprKind::PermOf(_)) {
            return true;
        }
        stack.extend(x.children());
    }
    false
}
