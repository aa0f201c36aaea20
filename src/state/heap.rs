//! The symbolic heap: a multiset of chunks (the paper's H and G).
//!
//! Architecture invariant: the heap only stores and finds chunks by kind; deciding
//! which candidate's receiver equals a term is the rules' job (syntax first, then the
//! decider), so this module never asks the solver. It is persistent (red-black trees
//! of chunks per kind, shared between clones), so cloning a state at a branch or for
//! `old` is O(1) and adding or removing a chunk is O(log n), whatever the heap size.

use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::term::Term;
use rpds::RedBlackTreeMap;
use std::fmt;

/// Where a chunk sits in a heap.
#[derive(Clone, Debug)]
pub struct Slot {
    pub kind: ChunkKind,
    key: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Heap {
    kinds: RedBlackTreeMap<ChunkKind, RedBlackTreeMap<u64, Chunk>>,
    next: u64,
    len: usize,
}

impl Heap {
    pub fn new() -> Heap {
        Heap::default()
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn add(&mut self, c: Chunk) -> Slot {
        let key = self.next;
        self.next += 1;
        let kind = c.kind.clone();
        let mut inner = self.kinds.get(&kind).cloned().unwrap_or_default();
        inner.insert_mut(key, c);
        self.kinds.insert_mut(kind.clone(), inner);
        self.len += 1;
        Slot { kind, key }
    }
    /// Is the chunk at `slot` still in this heap?
    pub fn contains(&self, slot: &Slot) -> bool {
        self.kinds.get(&slot.kind).is_some_and(|m| m.contains_key(&slot.key))
    }
    pub fn get(&self, slot: &Slot) -> &Chunk {
        self.kinds.get(&slot.kind).and_then(|m| m.get(&slot.key)).expect("a slot of this heap")
    }
    pub fn remove(&mut self, slot: &Slot) -> Chunk {
        let mut inner = self.kinds.get(&slot.kind).cloned().unwrap_or_default();
        let c = inner.get(&slot.key).cloned().expect("a slot of this heap");
        inner.remove_mut(&slot.key);
        if inner.is_empty() {
            self.kinds.remove_mut(&slot.kind);
        } else {
            self.kinds.insert_mut(slot.kind.clone(), inner);
        }
        self.len -= 1;
        c
    }
    pub fn set_value(&mut self, slot: &Slot, value: Term) {
        let mut c = self.get(slot).clone();
        c.value = value;
        self.replace(slot, c);
    }
    /// Put `c` in place of the chunk at `slot` (same kind).
    pub fn replace(&mut self, slot: &Slot, c: Chunk) {
        let mut inner = self.kinds.get(&slot.kind).cloned().unwrap_or_default();
        inner.insert_mut(slot.key, c);
        self.kinds.insert_mut(slot.kind.clone(), inner);
    }
    /// Every chunk, grouped by kind, oldest first within a kind.
    pub fn iter(&self) -> impl Iterator<Item = &Chunk> {
        self.kinds.values().flat_map(|m| m.values())
    }
    /// Every chunk with its slot.
    pub fn slots(&self) -> impl Iterator<Item = (Slot, &Chunk)> {
        self.kinds.iter().flat_map(|(k, m)| {
            m.iter().map(move |(key, c)| (Slot { kind: k.clone(), key: *key }, c))
        })
    }
    /// The chunks of one kind, most recently added first (the likeliest matches).
    pub fn of_kind<'a>(&'a self, kind: &ChunkKind) -> impl Iterator<Item = (Slot, &'a Chunk)> + 'a {
        let kind = kind.clone();
        self.kinds
            .get(&kind)
            .into_iter()
            .flat_map(|m| m.iter().rev())
            .map(move |(key, c)| (Slot { kind: kind.clone(), key: *key }, c))
    }
    /// The same chunks in the same slots (terms compared by identity)?
    pub fn identical(&self, other: &Heap) -> bool {
        if self.kinds.ptr_eq(&other.kinds) {
            return true;
        }
        self.len == other.len
            && self.slots().zip(other.slots()).all(|((s1, c1), (s2, c2))| {
                s1.kind == s2.kind
                    && s1.key == s2.key
                    && c1.recv == c2.recv
                    && c1.args == c2.args
                    && c1.value == c2.value
                    && c1.perm == c2.perm
                    && c1.cond == c2.cond
            })
    }
    pub fn count_of(&self, kind: &ChunkKind) -> usize {
        self.kinds.get(kind).map_or(0, |m| m.size())
    }
}

impl fmt::Display for Heap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{")?;
        for (i, c) in self.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{c}")?;
        }
        write!(f, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::term::Sort;

    #[test]
    fn clones_are_independent() {
        let mut h = Heap::new();
        let x = Term::var("x", Sort::Ref);
        h.add(Chunk::field("C.f".into(), x.clone(), Term::int(1)));
        let g = h.clone();
        let (slot, _) = h.of_kind(&ChunkKind::Field("C.f".into())).next().expect("a chunk");
        h.set_value(&slot, Term::int(2));
        assert_eq!(g.get(&slot).value, Term::int(1));
        assert_eq!(h.get(&slot).value, Term::int(2));
        h.remove(&slot);
        assert!(h.is_empty());
        assert_eq!(g.len(), 1);
    }

    #[test]
    fn kinds_are_found_most_recent_first() {
        let mut h = Heap::new();
        let kind = ChunkKind::Field("C.f".into());
        for i in 0..3 {
            h.add(Chunk::field("C.f".into(), Term::var(&format!("o{i}"), Sort::Ref), Term::int(i)));
        }
        h.add(Chunk::field("C.g".into(), Term::var("o0", Sort::Ref), Term::int(9)));
        let vals: Vec<Term> = h.of_kind(&kind).map(|(_, c)| c.value.clone()).collect();
        assert_eq!(vals, vec![Term::int(2), Term::int(1), Term::int(0)]);
        assert_eq!(h.count_of(&kind), 3);
        assert_eq!(h.len(), 4);
    }
}
