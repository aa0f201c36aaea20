//! Permissions held by one activation: a bag of field locations, whole arrays
//! (`acc(a[*])`) and predicate instances, each instance holding the permissions its
//! body gave it when it was closed (or produced).
//!
//! Architecture invariant: a location is held at most once in the whole run (a bag
//! refuses a duplicate), so moving permissions between activations and instances is
//! the only way they travel. Reading looks through held instances without opening
//! them (a folded instance's locations cannot change); writing or consuming a location
//! held inside an instance opens the instances on the way to it (LANGUAGE.md section
//! 6, inference 2), which is at least as permissive as the verifier's bounded search.

use super::value::{ObjId, Value};
use crate::syntax::ast::MemberRef;
use std::collections::BTreeSet;

/// A location a permission is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Loc {
    /// Field `slot` of object `obj`.
    Field(ObjId, usize),
    /// All elements of array `obj`.
    Array(ObjId),
}

/// A held predicate instance: the predicate, its receiver (if an instance predicate)
/// followed by its arguments, and the permissions folded inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub pred: MemberRef,
    pub args: Vec<Value>,
    pub contents: Bag,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bag {
    pub locs: BTreeSet<Loc>,
    pub preds: Vec<Instance>,
}

impl Bag {
    pub fn is_empty(&self) -> bool {
        self.locs.is_empty() && self.preds.is_empty()
    }

    /// Is `loc` held here, directly or folded inside an instance?
    pub fn holds(&self, loc: Loc) -> bool {
        self.locs.contains(&loc) || self.preds.iter().any(|i| i.contents.holds(loc))
    }

    /// Add a location; false if it is already held (directly or folded).
    pub fn add(&mut self, loc: Loc) -> bool {
        if self.holds(loc) {
            return false;
        }
        self.locs.insert(loc)
    }

    /// Open the instance at `index`: its contents join this bag.
    pub fn open_at(&mut self, index: usize) -> Instance {
        let inst = self.preds.remove(index);
        self.merge(inst.contents.clone());
        inst
    }

    /// Make `loc` held directly, opening the instances that fold it. False if it is
    /// not held at all.
    pub fn make_direct(&mut self, loc: Loc) -> bool {
        loop {
            if self.locs.contains(&loc) {
                return true;
            }
            match self.preds.iter().position(|i| i.contents.holds(loc)) {
                Some(i) => {
                    self.open_at(i);
                }
                None => return false,
            }
        }
    }

    /// Remove `loc` (opening instances on the way); false if it is not held.
    pub fn take(&mut self, loc: Loc) -> bool {
        self.make_direct(loc) && self.locs.remove(&loc)
    }

    fn has_instance(&self, pred: MemberRef, args: &[Value]) -> bool {
        self.preds
            .iter()
            .any(|i| (i.pred == pred && i.args == args) || i.contents.has_instance(pred, args))
    }

    /// Is the instance held, directly or folded inside another?
    pub fn holds_instance(&self, pred: MemberRef, args: &[Value]) -> bool {
        self.has_instance(pred, args)
    }

    /// Remove the instance, opening the instances that fold it; `None` if not held.
    pub fn take_instance(&mut self, pred: MemberRef, args: &[Value]) -> Option<Instance> {
        loop {
            if let Some(i) = self.preds.iter().position(|i| i.pred == pred && i.args == args) {
                return Some(self.preds.remove(i));
            }
            let i = self.preds.iter().position(|i| i.contents.has_instance(pred, args))?;
            self.open_at(i);
        }
    }

    /// Add everything `other` holds.
    pub fn merge(&mut self, other: Bag) {
        self.locs.extend(other.locs);
        self.preds.extend(other.preds);
    }

    /// Every location held, folded ones included.
    pub fn all_locs(&self, out: &mut Vec<Loc>) {
        out.extend(self.locs.iter().copied());
        for i in &self.preds {
            i.contents.all_locs(out);
        }
    }
}

/// Is `loc` held in any of the bags of a view?
pub fn view_holds(view: &[&Bag], loc: Loc) -> bool {
    view.iter().any(|b| b.holds(loc))
}

/// Is the instance held in any of the bags of a view?
pub fn view_holds_instance(view: &[&Bag], pred: MemberRef, args: &[Value]) -> bool {
    view.iter().any(|b| b.holds_instance(pred, args))
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

    #[test]
    fn folded_locations_are_readable_and_taken_by_opening() {
        let p = MemberRef { class: 0, member: 1 };
        let mut inner = Bag::default();
        inner.add(Loc::Field(1, 0));
        let mut bag = Bag::default();
        bag.add(Loc::Field(0, 0));
        bag.preds.push(Instance { pred: p, args: vec![Value::Ref(1)], contents: inner });
        assert!(bag.holds(Loc::Field(1, 0)));
        assert!(!bag.add(Loc::Field(1, 0)));
        assert!(bag.holds_instance(p, &[Value::Ref(1)]));
        assert!(bag.take(Loc::Field(1, 0)));
        assert!(bag.preds.is_empty());
        assert!(!bag.holds(Loc::Field(1, 0)));
        assert!(bag.take_instance(p, &[Value::Ref(1)]).is_none());
    }
}
