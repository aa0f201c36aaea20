//! Fractional permissions (LANGUAGE.md section 11): finding, taking and adding the
//! amounts chunks hold.
//!
//! Every chunk carries an amount (`t.f ↦ v # π`). A location may be held by several
//! chunks (receivers that are different terms but equal values); the amount held is
//! their sum. The operations here look for the cheap answer first:
//! - a chunk whose receiver and arguments are syntactically the ones asked for, with a
//!   constant amount, decides a read, a write or a take without the solver;
//! - when every chunk of the kind is held at `write` (a program without fractions), a
//!   location has at most one chunk on a feasible path, so the classic lookup (one
//!   solver query for "any of these?", then one per candidate) finds it;
//! - only otherwise are the chunks whose receiver is provably the one asked for
//!   collected and their amounts summed (one query for the sum).
//!
//! Architecture invariant: nothing here produces or consumes assertions; these are
//! the heap operations the rules (`produce`, `consume`, `eval`, `exec`, `ghost`) call,
//! and only they decide what a missing amount means (an inferred open or close, or a
//! failure).

use crate::decider::Answer;
use crate::rules::Verifier;
use crate::rules::eval::Lookup;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::heap::{Heap, Slot};
use crate::state::term::{Rat, Term};

/// The outcome of taking an amount of a location.
pub enum Take {
    /// Taken: the heap without it, and the location's value (or snapshot).
    Done(Heap, Term),
    /// Not provably held: the amount that is held (a sum of the matching chunks).
    Missing(Term, Vec<Slot>),
    /// The solver gave up.
    Unknown,
}

/// `Proved` when `b` decides it without the solver.
fn decided(b: Option<bool>) -> Option<Answer> {
    b.map(|b| if b { Answer::Proved } else { Answer::Refuted })
}

impl<'p> Verifier<'p> {
    /// Is `a ≥ b` provable? Constants are compared without the solver.
    pub fn amount_ge(&mut self, a: &Term, b: &Term) -> Answer {
        let c = Term::le(b.clone(), a.clone());
        if let Some(x) = decided(c.as_bool()) {
            return x;
        }
        self.dec.prove(&c)
    }

    /// Is `a > none` provable?
    pub fn amount_positive(&mut self, a: &Term) -> Answer {
        self.amount_gt(a, &Term::none())
    }

    /// Is `a > b` provable?
    pub fn amount_gt(&mut self, a: &Term, b: &Term) -> Answer {
        let c = Term::lt(b.clone(), a.clone());
        if let Some(x) = decided(c.as_bool()) {
            return x;
        }
        self.dec.prove(&c)
    }

    /// The equality of a chunk's receiver and arguments with these (`true` when
    /// syntactically equal).
    pub fn same_location(c: &Chunk, recv: Option<&Term>, args: &[Term]) -> Term {
        let mut conj = vec![];
        if let (Some(a), Some(b)) = (&c.recv, recv) {
            conj.push(Term::eq(a.clone(), b.clone()));
        }
        conj.extend(c.args.iter().zip(args).map(|(a, b)| Term::eq(a.clone(), b.clone())));
        Term::and_all(conj)
    }

    /// The amount of `(kind, recv, args)` that `h` holds: the sum, over its chunks, of
    /// their amounts where their receiver and arguments equal these.
    pub fn held(&self, h: &Heap, kind: &ChunkKind, recv: Option<&Term>, args: &[Term]) -> Term {
        let mut sum = Term::none();
        for (_, c) in h.of_kind(kind) {
            let g = Self::same_location(c, recv, args);
            if g.is_false() {
                continue;
            }
            sum = Term::add(sum, Term::ite(g, c.perm.clone(), Term::none()));
        }
        sum
    }

    /// Every chunk of `kind` held at `write` (constant)?
    fn all_write(h: &Heap, kind: &ChunkKind) -> bool {
        h.of_kind(kind).all(|(_, c)| c.is_write())
    }

    /// The chunks whose receiver and arguments provably are these, syntactic matches
    /// first; `None` when the solver gave up.
    pub fn matching(
        &mut self,
        h: &Heap,
        kind: &ChunkKind,
        recv: Option<&Term>,
        args: &[Term],
    ) -> Option<Vec<Slot>> {
        let mut out = vec![];
        let mut cands = vec![];
        for (slot, c) in h.of_kind(kind) {
            let g = Self::same_location(c, recv, args);
            if g.is_true() {
                out.push(slot);
            } else if !g.is_false() {
                cands.push((slot, g));
            }
        }
        if cands.is_empty() {
            return Some(out);
        }
        if cands.len() > 1 {
            let any =
                cands.iter().map(|(_, g)| g.clone()).reduce(Term::or).unwrap_or_else(Term::ff);
            match self.dec.prove(&any) {
                Answer::Refuted => return Some(out),
                Answer::Unknown => return None,
                Answer::Proved => {}
            }
        }
        for (slot, g) in cands {
            match self.dec.prove(&g) {
                Answer::Proved => out.push(slot),
                Answer::Unknown => return None,
                Answer::Refuted => {}
            }
        }
        Some(out)
    }

    /// A chunk of the location held at a provably positive amount, for a read.
    pub fn lookup_read(
        &mut self,
        h: &Heap,
        kind: &ChunkKind,
        recv: Option<&Term>,
        args: &[Term],
    ) -> Lookup {
        let syntactic = h.of_kind(kind).find(|(_, c)| {
            c.recv.as_ref() == recv
                && &*c.args == args
                && c.perm.as_rat().is_some_and(|r| r > Rat::ZERO)
        });
        if let Some((slot, _)) = syntactic {
            return Lookup::Found(slot);
        }
        if Self::all_write(h, kind) {
            return self.lookup(h, kind, recv, args);
        }
        let Some(slots) = self.matching(h, kind, recv, args) else { return Lookup::Unknown };
        let mut sum = Term::none();
        for slot in &slots {
            let p = h.get(slot).perm.clone();
            match self.amount_positive(&p) {
                Answer::Proved => return Lookup::Found(slot.clone()),
                Answer::Unknown => return Lookup::Unknown,
                Answer::Refuted => {}
            }
            sum = Term::add(sum, p);
        }
        if slots.len() > 1 {
            match self.amount_positive(&sum) {
                Answer::Proved => return Lookup::Found(slots[0].clone()),
                Answer::Unknown => return Lookup::Unknown,
                Answer::Refuted => {}
            }
        }
        Lookup::NotFound
    }

    /// The location held at `write`, as one chunk (several chunks of it merge into
    /// one), for a write.
    pub fn lookup_write(
        &mut self,
        h: &mut Heap,
        kind: &ChunkKind,
        recv: Option<&Term>,
        args: &[Term],
    ) -> Lookup {
        let syntactic = h
            .of_kind(kind)
            .find(|(_, c)| c.recv.as_ref() == recv && &*c.args == args && c.is_write());
        if let Some((slot, _)) = syntactic {
            return Lookup::Found(slot);
        }
        if Self::all_write(h, kind) {
            return self.lookup(h, kind, recv, args);
        }
        let Some(slots) = self.matching(h, kind, recv, args) else { return Lookup::Unknown };
        if slots.is_empty() {
            return Lookup::NotFound;
        }
        let sum = slots.iter().fold(Term::none(), |acc, s| Term::add(acc, h.get(s).perm.clone()));
        match self.amount_ge(&sum, &Term::write()) {
            Answer::Proved => {}
            Answer::Unknown => return Lookup::Unknown,
            Answer::Refuted => return Lookup::NotFound,
        }
        let first = h.get(&slots[0]).clone();
        for s in &slots {
            h.remove(s);
        }
        Lookup::Found(h.add(first.at(Term::write())))
    }

    /// Take `amount` (not provably `none`) of the location from `h`.
    pub fn take(
        &mut self,
        h: &Heap,
        kind: &ChunkKind,
        recv: Option<&Term>,
        args: &[Term],
        amount: &Term,
    ) -> Take {
        let mut h = h.clone();
        // A syntactic match whose constant amount suffices.
        if let Some(want) = amount.as_rat() {
            let syntactic = h.of_kind(kind).find(|(_, c)| {
                c.recv.as_ref() == recv
                    && &*c.args == args
                    && c.perm.as_rat().is_some_and(|r| r >= want)
            });
            if let Some((slot, _)) = syntactic {
                let c = h.get(&slot).clone();
                let left = Term::sub(c.perm.clone(), amount.clone());
                if left.as_rat() == Some(Rat::ZERO) {
                    h.remove(&slot);
                } else {
                    h.replace(&slot, c.clone().at(left));
                }
                return Take::Done(h, c.value);
            }
            if want == Rat::ONE && Self::all_write(&h, kind) {
                return match self.lookup(&h, kind, recv, args) {
                    Lookup::Found(slot) => {
                        let c = h.remove(&slot);
                        Take::Done(h, c.value)
                    }
                    Lookup::Unknown => Take::Unknown,
                    Lookup::NotFound => Take::Missing(Term::none(), vec![]),
                };
            }
        }
        let Some(slots) = self.matching(&h, kind, recv, args) else { return Take::Unknown };
        if slots.is_empty() {
            return Take::Missing(Term::none(), vec![]);
        }
        let sum = slots.iter().fold(Term::none(), |acc, s| Term::add(acc, h.get(s).perm.clone()));
        // One chunk that suffices alone keeps the others as they are.
        if slots.len() > 1 {
            for slot in &slots {
                let c = h.get(slot).clone();
                if let (Some(have), Some(want)) = (c.perm.as_rat(), amount.as_rat())
                    && have >= want
                {
                    let left = Term::sub(c.perm.clone(), amount.clone());
                    if left.as_rat() == Some(Rat::ZERO) {
                        h.remove(slot);
                    } else {
                        h.replace(slot, c.clone().at(left));
                    }
                    return Take::Done(h, c.value);
                }
            }
        }
        match self.amount_ge(&sum, amount) {
            Answer::Proved => {}
            Answer::Unknown => return Take::Unknown,
            Answer::Refuted => return Take::Missing(sum, slots),
        }
        let first = h.get(&slots[0]).clone();
        for s in &slots {
            h.remove(s);
        }
        let left = Term::sub(sum, amount.clone());
        if left.as_rat() != Some(Rat::ZERO) {
            h.add(first.clone().at(left));
        }
        Take::Done(h, first.value)
    }
}
