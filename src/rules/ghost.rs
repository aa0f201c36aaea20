//! Chunk lookup and the ghost operations (the paper's sections 3.3-3.4 and 4.1):
//! `open`, `close`, `use`, and their inference: opening a predicate that provides a
//! missing field, closing a missing predicate instance, unfolding pure calls.
//!
//! Chunk lookup asks syntax first (hash-consed receivers and arguments), then the
//! solver once for "is it any of these?", and only then one candidate at a time.

use crate::decider::Answer;
use crate::rules::amount::Take;
use crate::rules::eval::Lookup;
use crate::rules::{Mode, Q, Verifier};
use crate::state::State;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::heap::{Heap, Slot};
use crate::state::term::Term;
use crate::syntax::ast::{Expr, ExprKind, MemberRef, Span};
use std::rc::Rc;

impl<'p> Verifier<'p> {
    /// Find a chunk of `kind` whose receiver and arguments provably equal these.
    pub fn lookup(
        &mut self,
        heap: &Heap,
        kind: &ChunkKind,
        recv: Option<&Term>,
        args: &[Term],
    ) -> Lookup {
        let same = |c: &Chunk| c.recv.as_ref() == recv && &*c.args == args;
        if let Some((slot, _)) = heap.of_kind(kind).find(|(_, c)| same(c)) {
            return Lookup::Found(slot);
        }
        let eqs = |c: &Chunk| {
            let mut conj = vec![];
            if let (Some(a), Some(b)) = (&c.recv, recv) {
                conj.push(Term::eq(a.clone(), b.clone()));
            }
            conj.extend(c.args.iter().zip(args).map(|(a, b)| Term::eq(a.clone(), b.clone())));
            Term::and_all(conj)
        };
        // Candidates whose equality syntax does not already refute, nor the amounts
        // held: an instance whose body holds a field of its receiver cannot be the
        // instance of a receiver whose field is held at `write` beside it.
        let cands: Vec<(Slot, Term)> = heap
            .of_kind(kind)
            .filter(|(_, c)| !recv.is_some_and(|t| self.overfull(heap, kind, c, t)))
            .map(|(slot, c)| (slot, eqs(c)))
            .filter(|(_, g)| !g.is_false())
            .collect();
        if cands.is_empty() {
            return Lookup::NotFound;
        }
        if cands.len() > 1 {
            let any =
                cands.iter().map(|(_, g)| g.clone()).reduce(Term::or).unwrap_or_else(Term::ff);
            match self.dec.prove(&any) {
                Answer::Refuted => return Lookup::NotFound,
                Answer::Unknown => return Lookup::Unknown,
                Answer::Proved => {}
            }
        }
        for (slot, g) in cands {
            match self.dec.prove(&g) {
                Answer::Proved => return Lookup::Found(slot),
                Answer::Unknown => return Lookup::Unknown,
                Answer::Refuted => {}
            }
        }
        Lookup::NotFound
    }

    /// Would the predicate chunk `c` (of `kind`), were its receiver `t`, hold some
    /// field of `t` above `write` together with the heap's own chunk of it? Its body
    /// has `acc(this.f)` as a top-level conjunct (whatever the path through it), and
    /// the heap holds `t.f` at a constant amount that, added to the chunk's, exceeds
    /// `write`. Then `t` is not its receiver: no solver query (asked, it can take
    /// the solver through every quantifier on the path before it answers no).
    fn overfull(&self, heap: &Heap, kind: &ChunkKind, c: &Chunk, t: &Term) -> bool {
        use crate::syntax::ast::{BinOp, Body};
        let ChunkKind::Pred(p, _) = kind else { return false };
        let Some(pi) = c.perm.as_rat() else { return false };
        let Some(member) = self.prog.classes.get(p.class).and_then(|k| k.members.get(p.member))
        else {
            return false;
        };
        let Body::Return(body) = &member.body else { return false };
        let mut stack = vec![body];
        while let Some(e) = stack.pop() {
            match &e.kind {
                ExprKind::Binary { op: BinOp::And, l, r } => {
                    stack.push(l);
                    stack.push(r);
                }
                ExprKind::Acc(loc) => {
                    let ExprKind::Field { recv, field, class } = &loc.kind else { continue };
                    if !matches!(recv.kind, ExprKind::This) {
                        continue;
                    }
                    let name = self.info.field(class.unwrap_or(0), &field.name);
                    let held = heap.of_kind(&ChunkKind::Field(name)).any(|(_, f)| {
                        f.recv.as_ref() == Some(t)
                            && f.perm
                                .as_rat()
                                .and_then(|a| a.checked_add(pi))
                                .is_some_and(|sum| sum > crate::state::term::Rat::ONE)
                    });
                    if held {
                        return true;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// A predicate chunk with receiver `t` whose body provides field `name`, with the
    /// predicate whose body that is. The field's class is the receiver's (only its
    /// objects have the field), so a family's instance opens with that class's member.
    pub fn find_provider(
        &mut self,
        heap: &Heap,
        t: &Term,
        name: &Rc<str>,
    ) -> Option<(Slot, MemberRef)> {
        let class = *self.info.field_class.get(name)?;
        let mut cands = vec![];
        for (slot, c) in heap.slots() {
            if let ChunkKind::Pred(f, _) = &c.kind
                && let Some(&p) = self.info.family_member.get(&(*f, class))
                && self.info.provides.get(&p).is_some_and(|fs| fs.contains(name))
            {
                if c.recv.as_ref() == Some(t) {
                    return Some((slot, p));
                }
                if let Some(r) = c.recv.clone() {
                    cands.push((slot, p, r));
                }
            }
        }
        cands
            .into_iter()
            .find(|(_, _, r)| self.dec.prove(&Term::eq(r.clone(), t.clone())) == Answer::Proved)
            .map(|(s, p, _)| (s, p))
    }

    /// Open the predicate chunk at `slot`: remove it and produce its body, scaled by the
    /// chunk's amount, with its snapshot (the paper's `open`). The chunk is an instance
    /// of `p`'s family and `p` is the predicate of the receiver's class, whose body it has.
    pub fn open_chunk(&mut self, s: State, slot: Slot, p: MemberRef, q: Q<'_, 'p, ()>) {
        let mut s = s;
        let chunk = s.heap.remove(&slot);
        let ChunkKind::Pred(..) = chunk.kind else {
            return self.internal(&s, Span::default(), "opening a non-predicate chunk");
        };
        self.produce_body(s, p, chunk.recv.clone(), &chunk.args, chunk.value, chunk.perm, q)
    }

    /// Produce the body of predicate `p` for the instance `recv.p(args)` with snapshot
    /// `snap`, every amount in it multiplied by `amount` (LANGUAGE.md section 11).
    #[allow(clippy::too_many_arguments)]
    pub fn produce_body(
        &mut self,
        s: State,
        p: MemberRef,
        recv: Option<Term>,
        args: &[Term],
        snap: Term,
        amount: Term,
        q: Q<'_, 'p, ()>,
    ) {
        let Some(body) = self.body_of(p) else {
            return self.internal(&s, Span::default(), "predicate without a body");
        };
        let store = s.store.clone();
        // For testing: the chunks the body adds to the heap (compared by kind,
        // receiver and value; terms are hash-consed).
        let before: Vec<crate::state::chunk::Chunk> =
            if self.path_inputs > 0 { s.heap.iter().cloned().collect() } else { vec![] };
        let inner =
            State { heap: s.heap, old: s.old, store: self.callee_store(p, recv.clone(), args) };
        self.nest.open_nesting += 1;
        let outer_scale = std::mem::replace(&mut self.scale, amount);
        let body_scale = self.scale.clone();
        self.produce(inner, snap.clone(), body, &|v, opened, ()| {
            if v.path_inputs > 0 && v.opened.len() < crate::rules::paths::MAX_OPENED {
                let added: Vec<crate::state::chunk::Chunk> = opened
                    .heap
                    .iter()
                    .filter(|c| {
                        !before
                            .iter()
                            .any(|b| b.kind == c.kind && b.recv == c.recv && b.value == c.value)
                    })
                    .cloned()
                    .collect();
                v.opened.push((snap.clone(), added));
            }
            let back = State { heap: opened.heap, old: opened.old, store: store.clone() };
            v.nest.open_nesting -= 1;
            v.scale = outer_scale.clone();
            v.after_ghost(&snap);
            v.last_opened = Some(crate::rules::Opened {
                snap: snap.clone(),
                pred: p,
                recv: recv.clone(),
                args: args.into(),
            });
            q(v, back, ());
            v.scale = body_scale.clone();
            v.nest.open_nesting += 1;
        });
        self.scale = outer_scale;
        self.nest.open_nesting -= 1;
    }

    /// Have opens nested (an open producing a body that opens again) as deep as they
    /// may? Then a value the next open would give is taken as unknown instead: a fresh
    /// symbol, which is sound (it stands for any value) and ends the recursion of
    /// predicates that look into their successors (`opening next.p() in ..`).
    pub fn opens_exhausted(&self) -> bool {
        self.nest.open_nesting >= crate::rules::MAX_NESTED_OPENS
    }

    /// Open the instance named by `call` (an `ExprKind::Call` of a predicate, or
    /// `acc(e.q(..), p)`), for `open` statements and `opening` expressions
    /// (`open.failed` when it is missing); with `open` false, only check that it is there.
    pub fn open_instance(
        &mut self,
        s: State,
        call: &'p Expr,
        span: Span,
        open: bool,
        q: Q<'_, 'p, ()>,
    ) {
        if let ExprKind::Frac { acc, amount } = &call.kind {
            return self.eval(s, amount, &|v, s, t| {
                let pi = Term::to_perm(t);
                if !v.check_nonneg(&s, &pi, call) {
                    return;
                }
                v.open_amount(s, acc, pi, span, open, q)
            });
        }
        self.open_amount(s, call, Term::write(), span, open, q)
    }

    fn open_amount(
        &mut self,
        s: State,
        call: &'p Expr,
        pi: Term,
        span: Span,
        open: bool,
        q: Q<'_, 'p, ()>,
    ) {
        let ExprKind::Call { recv, args, target: Some(target), .. } = &call.kind else {
            return self.internal(&s, span, "open of a non-call");
        };
        let target = *target;
        self.eval_receiver(s, recv, span, &|v, s, t0| {
            v.eval_list(s, args, &|v, s, targs| {
                let kind = v.pred_kind(target);
                if pi.as_rat() == Some(crate::state::term::Rat::ZERO) {
                    return q(v, s, ());
                }
                match v.take(&s.heap, &kind, t0.as_ref(), &targs, &pi) {
                    // The checker allows `open` only through a class type: `target`
                    // is the receiver's class's predicate.
                    Take::Done(heap, snap) if open => {
                        let rest = State { heap, old: s.old.clone(), store: s.store.clone() };
                        // While an assertion is consumed, `perm(..)` reads what is left
                        // (`perm_view`): inside the opening, what is left with the
                        // instance opened in it too, when it is still there (else as
                        // it is). The caller restores the view around its continuation.
                        let view = v.perm_view.clone().and_then(|view| {
                            match v.take(&view, &kind, t0.as_ref(), &targs, &pi) {
                                Take::Done(h, vsnap) => Some((h, vsnap)),
                                _ => None,
                            }
                        });
                        let produce = |v: &mut Verifier<'p>, q: Q<'_, 'p, ()>| {
                            let (rest, snap) = (rest.clone(), snap.clone());
                            v.produce_body(rest, target, t0.clone(), &targs, snap, pi.clone(), q)
                        };
                        let Some((heap, vsnap)) = view else { return produce(v, q) };
                        let vrest = State { heap, old: s.old.clone(), store: s.store.clone() };
                        v.produce_body(
                            vrest,
                            target,
                            t0.clone(),
                            &targs,
                            vsnap,
                            pi.clone(),
                            &|v, opened, ()| {
                                let saved = v.perm_view.replace(opened.heap);
                                produce(v, q);
                                v.perm_view = saved;
                            },
                        )
                    }
                    Take::Done(..) => q(v, s, ()),
                    Take::Unknown => v.fail_unknown(&s, span),
                    Take::Missing(..)
                        if open
                            && (v.read_mode || v.termination.is_some())
                            && let Ok((heap, snap)) =
                                v.read_location(&s, s.heap.clone(), &kind, t0.as_ref(), &targs) =>
                    {
                        // In a pure method's body or a pure call's precondition an
                        // instance held at any positive amount may be opened, whatever
                        // amount is named (Viper's function semantics): its body is
                        // produced at an unknown positive amount, which implies no
                        // more than some amount being held.
                        let rho = v.fresh("rd", crate::state::term::Sort::Perm);
                        v.dec.assume(Term::lt(Term::none(), rho.clone()));
                        let rest = State { heap, old: s.old.clone(), store: s.store.clone() };
                        v.produce_body(rest, target, t0.clone(), &targs, snap, rho, q)
                    }
                    Take::Missing(..) => {
                        let what = format!(
                            "no predicate instance `{}` to open",
                            crate::rules::show::expr(call)
                        );
                        // In code the id is `open.failed`; inside an assertion being
                        // consumed or checked, the reason is the missing permission.
                        let reason = if matches!(v.nest.mode, Mode::Stmt) {
                            "open.failed"
                        } else {
                            "insufficient.permission"
                        };
                        v.fail(&s, span, reason, what);
                    }
                }
            })
        })
    }

    /// Consume the predicate instance `p(recv, args)` from `h2`, closing it first when
    /// it is missing and inference is on (nested closes bounded).
    #[allow(clippy::too_many_arguments)]
    pub fn consume_pred(
        &mut self,
        s: State,
        h2: Heap,
        p: MemberRef,
        recv: Option<Term>,
        args: Vec<Term>,
        a: &'p Expr,
        pi: Term,
        q: &dyn Fn(&mut Verifier<'p>, State, Heap, Term),
    ) {
        let kind = self.pred_kind(p);
        if pi.as_rat() == Some(crate::state::term::Rat::ZERO) {
            return q(self, s, h2, Term::unit());
        }
        if self.read_mode && pi.as_rat().is_none() {
            // Read mode asks for some amount only where the amount named is positive.
            let positive = Term::lt(Term::none(), pi.clone());
            let h2b = h2.clone();
            return self.branch(
                s,
                positive,
                &|v, s, ()| {
                    let (recv, args) = (recv.clone(), args.clone());
                    v.consume_pred(s, h2.clone(), p, recv, args, a, Term::write(), q)
                },
                &|v, s, ()| q(v, s, h2b.clone(), Term::unit()),
            );
        }
        let taken = if self.read_mode {
            match self.read_location(&s, h2.clone(), &kind, recv.as_ref(), &args) {
                Ok((h2, snap)) => Take::Done(h2, snap),
                Err(true) => Take::Unknown,
                Err(false) => Take::Missing(Term::none(), vec![]),
            }
        } else {
            self.take(&h2, &kind, recv.as_ref(), &args, &pi)
        };
        match taken {
            Take::Done(h2, snap) => q(self, s, h2, snap),
            Take::Unknown => self.fail_unknown(&s, a.span),
            Take::Missing(held, held_slots) => {
                // Close the amount still missing (inference rule 1 with amounts).
                let missing = Term::sub(pi.clone(), held);
                let conj = (self.report.conjunct, self.report.conjunct_text.clone());
                // An instance can be closed only with its class's body: through an
                // interface, only when the receiver's class is known. And only on a
                // receiver that is not null (no instance has a null receiver).
                let body_pred = self.body_predicate(p, recv.as_ref());
                let non_null = recv.as_ref().is_none_or(|r| {
                    self.dec.prove(&Term::ne(r.clone(), Term::null())) == Answer::Proved
                });
                if self.config.infer
                    && self.nest.close_depth < crate::rules::MAX_CLOSE
                    && non_null
                    && let Some(bp) = body_pred
                {
                    let p = bp;
                    let Some(body) = self.body_of(p) else {
                        return self.internal(&s, a.span, "a predicate without a body");
                    };
                    let saved = self.begin_tentative();
                    let inner_tag = self.current_tag();
                    let outer_mode = self.nest.mode;
                    self.nest.close_depth += 1;
                    self.closes += 1;
                    let outer_scale = std::mem::replace(&mut self.scale, missing.clone());
                    let body_scale = self.scale.clone();
                    // The body's failures are taken back and quoted below: they name a
                    // conjunct of the predicate's body, not of the outer assertion.
                    if !self.nest.conjunct_frozen {
                        self.nest.mode = Mode::Consume { id: "close.failed", call: None };
                    }
                    let st = State {
                        heap: h2.clone(),
                        old: s.old.clone(),
                        store: self.callee_store(p, recv.clone(), &args),
                    };
                    let broken = std::cell::Cell::new(0u32);
                    self.consume(st, h2.clone(), body, &|v, _st, h2b, snap| {
                        // Back in the consumer's context for the rest of the path.
                        let depth = v.nest.close_depth;
                        let (mode, cj, cjt) = (
                            v.nest.mode,
                            v.report.conjunct,
                            std::mem::take(&mut v.report.conjunct_text),
                        );
                        v.nest.close_depth -= 1;
                        v.set_tag(saved.0);
                        v.nest.mode = outer_mode;
                        v.scale = outer_scale.clone();
                        v.after_ghost(&snap);
                        // The part held and the part closed are one instance: one
                        // snapshot, all of it taken.
                        let mut h2b = h2b;
                        let mut same = true;
                        // The part held must still be there, untouched: consuming the
                        // body may have opened it (a read of a field it holds), and
                        // then the closed part was made of the held part itself.
                        let intact = held_slots.iter().all(|slot| {
                            h2b.contains(slot) && h2b.get(slot).perm == h2.get(slot).perm
                        });
                        if intact {
                            for slot in &held_slots {
                                let c = h2b.remove(slot);
                                let eq = Term::eq(c.value.clone(), snap.clone());
                                same = same && !eq.is_false();
                                v.dec.assume_derived(eq);
                            }
                        }
                        if !intact {
                            // Reported below, in the consumer's context.
                            broken.set(broken.get() + 1);
                        } else if same {
                            q(v, s.clone(), h2b, snap);
                        } else {
                            v.stats.ledger.pruned += 1;
                        }
                        v.scale = body_scale.clone();
                        v.set_tag(inner_tag);
                        v.nest.close_depth = depth;
                        v.nest.mode = mode;
                        v.report.conjunct = cj;
                        v.report.conjunct_text = cjt;
                    });
                    self.nest.close_depth -= 1;
                    self.nest.mode = outer_mode;
                    self.scale = outer_scale;
                    let errs = self.end_tentative(saved);
                    self.report.conjunct = conj.0;
                    self.report.conjunct_text = conj.1;
                    if let Some(first) = errs.first() {
                        // The paths that failed inside the close ended there; this
                        // reports them once, as the consumer's failure.
                        let what = format!(
                            "no predicate instance `{}`, and closing it failed: {}",
                            crate::rules::show::expr(a),
                            first.message
                        );
                        let inner = (first.span, first.id == "close.failed");
                        if self.report(&s, a.span, "insufficient.permission", what)
                            && inner.1
                            && let Some(f) = self.report.failures.last_mut()
                            && !f.err.notes.iter().any(|(sp, _)| *sp == inner.0)
                        {
                            let text = first.message.split('`').nth(1).unwrap_or("").to_string();
                            f.err.notes.push((
                                inner.0,
                                format!("the predicate body conjunct `{text}` fails here"),
                            ));
                        }
                    }
                    for _ in 0..broken.get() {
                        // Each such path ends here (identical failures are shown once).
                        let what = format!(
                            "no predicate instance `{}` at the amount asked for: closing the \
                             part missing would open the part held",
                            crate::rules::show::expr(a)
                        );
                        self.fail(&s, a.span, "insufficient.permission", what);
                    }
                    return;
                }
                let held: Vec<String> =
                    h2.iter().filter(|c| c.kind == kind).map(|c| c.to_string()).collect();
                let what = if held.is_empty() {
                    format!("no predicate instance `{}` in the heap", crate::rules::show::expr(a))
                } else {
                    format!(
                        "no predicate instance `{}` (the heap holds {})",
                        crate::rules::show::expr(a),
                        held.join(", ")
                    )
                };
                self.fail(&s, a.span, "insufficient.permission", what);
            }
        }
    }
}
