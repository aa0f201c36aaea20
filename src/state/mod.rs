//! The symbolic state (the paper's Definition 2): heap H, old heap G, store Γ. The
//! path condition Σ lives in the decider, in step with the solver's push/pop.
//!
//! Architecture invariant: a `State` is a value; the rules clone it at every branch,
//! so every part is cheap to clone (hash-consed terms, small chunk vectors, `Rc`).

pub mod chunk;
pub mod heap;
pub mod subst;
pub mod term;

use heap::Heap;
use std::rc::Rc;
use term::Term;

/// Γ: program variables (locals, parameters, `this`, `result`) to terms; persistent,
/// so cloning it at a branch is O(1).
pub type Store = rpds::RedBlackTreeMap<Rc<str>, Term>;

#[derive(Clone, Debug, Default)]
pub struct State {
    pub heap: Heap,
    /// G: the heap on entry to the method under verification (or, while producing a
    /// callee's postcondition, the caller's heap before the call).
    pub old: Rc<Heap>,
    pub store: Store,
}

impl State {
    pub fn get(&self, x: &str) -> Option<&Term> {
        self.store.get(x)
    }
    pub fn set(&mut self, x: &str, t: Term) {
        self.store.insert_mut(x.into(), t);
    }
}
