//! Permissions held by one activation: a bag of amounts (LANGUAGE.md section 11) per
//! field location and per array element, and predicate instances held at amounts,
//! each instance holding the permissions its body gave it (already scaled by its
//! amount) when it was closed (or produced).
//!
//! Architecture invariant: amounts only move. Taking from one bag and adding to
//! another (or into an instance) keeps the total of every location over the whole run
//! at most `write`, which producing an input state checks once. Reading looks through
//! held instances without opening them (a folded instance's locations cannot change);
//! writing or consuming a location held inside an instance opens the instances on the
//! way to it (LANGUAGE.md section 6, inference 2), which is at least as permissive as
//! the verifier's bounded search. Array permissions are per element: `acc(a[*], p)` is
//! `p` at every index `0 .. a.length` (section 12).

use super::rat::Rat;
use super::value::{ObjId, Value};
use crate::syntax::ast::MemberRef;
use std::collections::BTreeMap;

/// A location a permission is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Loc {
    /// Field `slot` of object `obj`.
    Field(ObjId, usize),
    /// Element `index` of array `obj`.
    Elem(ObjId, usize),
}

/// A held predicate instance: the predicate, its receiver (if an instance predicate)
/// followed by its arguments, the amount it is held at, and the permissions folded
/// inside it (its body's, scaled by `amount`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub pred: MemberRef,
    pub args: Vec<Value>,
    pub amount: Rat,
    pub contents: Bag,
}

impl Instance {
    fn is(&self, pred: MemberRef, args: &[Value]) -> bool {
        self.pred == pred && self.args == args
    }

    /// Split off the part `part` (at most `amount`): its contents are the same share.
    fn split(&mut self, part: &Rat) -> Instance {
        let share = part.div(&self.amount).unwrap_or_else(Rat::zero);
        let mut taken = self.contents.clone();
        taken.scale(&share);
        self.contents.scale(&Rat::one().sub(&share));
        self.amount = self.amount.sub(part);
        Instance { pred: self.pred, args: self.args.clone(), amount: part.clone(), contents: taken }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bag {
    pub locs: BTreeMap<Loc, Rat>,
    pub preds: Vec<Instance>,
}

impl Bag {
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty() && self.preds.is_empty()
    }

    /// The amount of `loc` held directly (not folded).
    pub fn direct(&self, loc: Loc) -> Rat {
        self.locs.get(&loc).cloned().unwrap_or_else(Rat::zero)
    }

    /// The amount of `loc` held here, directly or folded inside instances.
    pub fn total(&self, loc: Loc) -> Rat {
        let mut t = self.direct(loc);
        for i in &self.preds {
            let inner = i.contents.total(loc);
            if !inner.is_zero() {
                t = t.add(&inner);
            }
        }
        t
    }

    /// Is some of `loc` folded inside a held instance?
    pub fn folded(&self, loc: Loc) -> bool {
        self.preds.iter().any(|i| i.contents.total(loc).is_positive())
    }

    /// Is `loc` held at a positive amount, directly or folded?
    pub fn holds(&self, loc: Loc) -> bool {
        self.total(loc).is_positive()
    }

    /// Add `amount` of `loc` (nothing for `none`).
    pub fn add(&mut self, loc: Loc, amount: &Rat) {
        if amount.is_zero() {
            return;
        }
        let now = self.direct(loc).add(amount);
        if now.is_zero() {
            self.locs.remove(&loc);
        } else {
            self.locs.insert(loc, now);
        }
    }

    /// Open the instance at `index`: its contents join this bag.
    pub fn open_at(&mut self, index: usize) -> Instance {
        let inst = self.preds.remove(index);
        self.merge(inst.contents.clone());
        inst
    }

    /// Open instances that fold `loc` until `want` of it is held directly (or none
    /// is left folded).
    fn unfold_to(&mut self, loc: Loc, want: &Rat) {
        while self.direct(loc) < *want {
            match self.preds.iter().position(|i| i.contents.holds(loc)) {
                Some(i) => {
                    self.open_at(i);
                }
                None => return,
            }
        }
    }

    /// Make the whole amount `write` of `loc` held directly, opening the instances
    /// that fold it (a write). False if less than `write` is held.
    pub fn make_whole(&mut self, loc: Loc) -> bool {
        let one = Rat::one();
        self.unfold_to(loc, &one);
        self.direct(loc) >= one
    }

    /// Remove `amount` of `loc` (opening instances on the way); false if less is held.
    pub fn take(&mut self, loc: Loc, amount: &Rat) -> bool {
        if amount.is_zero() {
            return true;
        }
        if self.total(loc) < *amount {
            return false;
        }
        self.unfold_to(loc, amount);
        if self.direct(loc) < *amount {
            return false;
        }
        self.add(loc, &amount.neg());
        true
    }

    /// The amount of an instance held directly (not folded).
    pub fn instance_direct(&self, pred: MemberRef, args: &[Value]) -> Rat {
        let mut t = Rat::zero();
        for i in self.preds.iter().filter(|i| i.is(pred, args)) {
            t = t.add(&i.amount);
        }
        t
    }

    /// The amount of an instance held, directly or folded inside another.
    pub fn instance_total(&self, pred: MemberRef, args: &[Value]) -> Rat {
        let mut t = Rat::zero();
        for i in &self.preds {
            if i.is(pred, args) {
                t = t.add(&i.amount);
            }
            let inner = i.contents.instance_total(pred, args);
            if !inner.is_zero() {
                t = t.add(&inner);
            }
        }
        t
    }

    /// Is an instance folded inside another held instance?
    pub fn instance_folded(&self, pred: MemberRef, args: &[Value]) -> bool {
        self.preds.iter().any(|i| i.contents.instance_total(pred, args).is_positive())
    }

    /// Is the instance held at a positive amount, directly or folded?
    pub fn holds_instance(&self, pred: MemberRef, args: &[Value]) -> bool {
        self.instance_total(pred, args).is_positive()
    }

    /// Remove up to `amount` of the instance, opening the instances that fold it;
    /// `None` if none is held. The instance returned holds what was taken (its amount
    /// may be less than `amount`).
    pub fn take_instance(
        &mut self,
        pred: MemberRef,
        args: &[Value],
        amount: &Rat,
    ) -> Option<Instance> {
        while self.instance_direct(pred, args) < *amount {
            match self
                .preds
                .iter()
                .position(|i| i.contents.instance_total(pred, args).is_positive())
            {
                Some(i) => {
                    self.open_at(i);
                }
                None => break,
            }
        }
        // The parts held directly, merged into one.
        let mut whole: Option<Instance> = None;
        let mut k = 0;
        while k < self.preds.len() {
            if self.preds[k].is(pred, args) {
                let part = self.preds.remove(k);
                match &mut whole {
                    Some(w) => w.absorb(part),
                    None => whole = Some(part),
                }
            } else {
                k += 1;
            }
        }
        let mut whole = whole?;
        if whole.amount <= *amount {
            return Some(whole);
        }
        let taken = whole.split(amount);
        self.preds.push(whole);
        Some(taken)
    }

    /// Add an instance; parts of one instance add up.
    pub fn add_instance(&mut self, inst: Instance) {
        if inst.amount.is_zero() {
            return;
        }
        match self.preds.iter_mut().find(|i| i.is(inst.pred, &inst.args)) {
            Some(i) => i.absorb(inst),
            None => self.preds.push(inst),
        }
    }

    /// Add everything `other` holds.
    pub fn merge(&mut self, other: Bag) {
        for (l, a) in other.locs {
            self.add(l, &a);
        }
        for i in other.preds {
            self.add_instance(i);
        }
    }

    /// Multiply every amount by `f` (folded ones too).
    pub fn scale(&mut self, f: &Rat) {
        if *f == Rat::one() {
            return;
        }
        if f.is_zero() {
            *self = Bag::default();
            return;
        }
        for a in self.locs.values_mut() {
            *a = a.mul(f);
        }
        for i in &mut self.preds {
            i.amount = i.amount.mul(f);
            i.contents.scale(f);
        }
    }

    /// Every location held, folded ones included.
    pub fn all_locs(&self, out: &mut Vec<Loc>) {
        out.extend(self.locs.keys().copied());
        for i in &self.preds {
            i.contents.all_locs(out);
        }
    }

    /// A copy of the instance held (directly or folded) with everything it holds; its
    /// amount is the amount held of it. `None` if it is not held.
    pub fn copy_instance(&self, pred: MemberRef, args: &[Value]) -> Option<Instance> {
        let mut found: Option<Instance> = None;
        self.collect_instance(pred, args, &mut found);
        found
    }

    fn collect_instance(&self, pred: MemberRef, args: &[Value], found: &mut Option<Instance>) {
        for i in &self.preds {
            if i.is(pred, args) {
                match found {
                    Some(f) => f.absorb(i.clone()),
                    None => *found = Some(i.clone()),
                }
            }
            i.contents.collect_instance(pred, args, found);
        }
    }
}

impl Instance {
    /// Join another part of the same instance into this one.
    fn absorb(&mut self, other: Instance) {
        self.amount = self.amount.add(&other.amount);
        self.contents.merge(other.contents);
    }
}

/// The amount of `loc` held in a view (folded included).
pub fn view_total(view: &[&Bag], loc: Loc) -> Rat {
    let mut t = Rat::zero();
    for b in view {
        t = t.add(&b.total(loc));
    }
    t
}

/// Is `loc` held at a positive amount in any of the bags of a view?
pub fn view_holds(view: &[&Bag], loc: Loc) -> bool {
    view.iter().any(|b| b.holds(loc))
}

/// The amount of an instance held in a view (folded included).
pub fn view_instance_total(view: &[&Bag], pred: MemberRef, args: &[Value]) -> Rat {
    let mut t = Rat::zero();
    for b in view {
        t = t.add(&b.instance_total(pred, args));
    }
    t
}

/// One bag with everything a view holds.
pub fn flatten(view: &[&Bag]) -> Bag {
    let mut out = Bag::default();
    for b in view {
        out.merge((*b).clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> Rat {
        Rat::one()
    }

    #[test]
    fn folded_locations_are_readable_and_taken_by_opening() {
        let p = MemberRef { class: 0, member: 1 };
        let mut inner = Bag::default();
        inner.add(Loc::Field(1, 0), &one());
        let mut bag = Bag::default();
        bag.add(Loc::Field(0, 0), &one());
        bag.preds.push(Instance {
            pred: p,
            args: vec![Value::Ref(1)],
            amount: one(),
            contents: inner,
        });
        assert!(bag.holds(Loc::Field(1, 0)));
        assert!(bag.holds_instance(p, &[Value::Ref(1)]));
        assert!(bag.take(Loc::Field(1, 0), &one()));
        assert!(bag.preds.is_empty());
        assert!(!bag.holds(Loc::Field(1, 0)));
        assert!(bag.take_instance(p, &[Value::Ref(1)], &one()).is_none());
    }

    #[test]
    fn amounts_split_and_add_up() {
        let half = Rat::small(1, 2);
        let x = Loc::Field(0, 0);
        let mut bag = Bag::default();
        bag.add(x, &one());
        assert!(bag.take(x, &half));
        assert_eq!(bag.direct(x), half);
        assert!(!bag.make_whole(x));
        assert!(!bag.take(x, &one()));
        bag.add(x, &half);
        assert!(bag.make_whole(x));
        assert!(bag.take(x, &one()));
        assert!(bag.is_empty());
    }

    #[test]
    fn instances_split_exactly_and_rejoin() {
        let p = MemberRef { class: 0, member: 1 };
        let x = Loc::Field(0, 0);
        let mut contents = Bag::default();
        contents.add(x, &one());
        let mut bag = Bag::default();
        bag.add_instance(Instance { pred: p, args: vec![], amount: one(), contents });
        let third = Rat::small(1, 3);
        let part = bag.take_instance(p, &[], &third).expect("held");
        assert_eq!(part.amount, third);
        assert_eq!(part.contents.direct(x), third);
        assert_eq!(bag.instance_direct(p, &[]), Rat::small(2, 3));
        assert_eq!(bag.total(x), Rat::small(2, 3));
        bag.add_instance(part);
        assert_eq!(bag.preds.len(), 1);
        assert_eq!(bag.instance_direct(p, &[]), one());
        assert_eq!(bag.total(x), one());
        // Writing through a whole instance opens it; through a part it cannot.
        let mut half = bag.clone();
        let _ = half.take_instance(p, &[], &Rat::small(1, 2));
        assert!(!half.make_whole(x));
        assert!(bag.make_whole(x));
    }
}
