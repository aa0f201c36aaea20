//! Input states for running one member: a heap, `this` and the arguments; and a
//! generator of small random ones (small integers, `null` or fresh or shared objects
//! with their fields filled recursively, short arrays, amounts, short sequences), for testing a member on many
//! states. A generated state need not satisfy the precondition: running it then ends
//! in [`Outcome::Rejected`](super::Outcome::Rejected).
//!
//! Architecture invariant: generation is a pure function of the program, the member
//! and the seed.

use super::rat::Rat;
use super::value::{Heap, Layout, ObjKind, Object, Value};
use crate::syntax::ast::{MemberRef, Program, Type};

/// The state a member starts from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    pub heap: Heap,
    /// The receiver of an instance member (ignored for static members and constructors).
    pub this: Option<Value>,
    pub args: Vec<Value>,
}

use crate::rng::Rng;

struct Builder<'a> {
    layout: &'a Layout,
    heap: Heap,
    rng: Rng,
    /// Objects still to create.
    budget: usize,
    /// How often (percent) a reference field points to an object that exists already.
    reuse: u64,
}

impl Builder<'_> {
    fn int(&mut self) -> Value {
        let n = if self.rng.chance(85) {
            self.rng.below(7) as i64 - 2
        } else {
            self.rng.below(41) as i64 - 20
        };
        Value::int(n)
    }

    fn existing(&mut self, want: &dyn Fn(&ObjKind) -> bool) -> Option<Value> {
        let cands: Vec<usize> =
            (0..self.heap.objects.len()).filter(|&o| want(&self.heap.objects[o].kind)).collect();
        if cands.is_empty() {
            return None;
        }
        Some(Value::Ref(cands[self.rng.below(cands.len())]))
    }

    fn value(&mut self, t: &Type, depth: u32) -> Value {
        match t {
            Type::Int => self.int(),
            Type::Bool => Value::Bool(self.rng.chance(50)),
            Type::Class(c) => {
                let ci = self.layout.class_index.get(c).copied();
                if self.rng.chance(if depth == 0 { 15 } else { 30 }) {
                    return Value::Null;
                }
                // The classes whose objects have this type (an interface's implementers).
                let classes: Vec<usize> = match ci {
                    Some(ci) => self.layout.implementers.get(ci).cloned().unwrap_or_default(),
                    None => vec![],
                };
                let want = |k: &ObjKind| match (k, ci) {
                    (ObjKind::Class(Some(x)), Some(_)) => classes.contains(x),
                    (ObjKind::Class(_), None) => true,
                    _ => false,
                };
                if (self.budget == 0 || depth > 5 || self.rng.chance(self.reuse))
                    && let Some(v) = self.existing(&want)
                {
                    return v;
                }
                if self.budget == 0 || depth > 5 {
                    return Value::Null;
                }
                let ci = match ci {
                    Some(_) if classes.is_empty() => return Value::Null,
                    Some(_) if classes.len() == 1 => classes[0],
                    Some(_) => classes[self.rng.below(classes.len())],
                    None => {
                        let all: Vec<usize> = (0..self.layout.field_types.len())
                            .filter(|&c| !self.layout.is_interface[c])
                            .collect();
                        if all.is_empty() {
                            return Value::Null;
                        }
                        all[self.rng.below(all.len())]
                    }
                };
                self.object(ci, depth)
            }
            Type::Array(elem) => {
                if self.rng.chance(15) {
                    return Value::Null;
                }
                if self.budget == 0 || depth > 5 {
                    return Value::Null;
                }
                self.budget -= 1;
                let n = self.rng.below(5);
                let o = self
                    .heap
                    .alloc(Object { kind: ObjKind::Array((**elem).clone()), slots: vec![] });
                let elems: Vec<Value> = (0..n).map(|_| self.value(elem, depth + 1)).collect();
                if let Some(obj) = self.heap.objects.get_mut(o) {
                    obj.slots = elems;
                }
                Value::Ref(o)
            }
            // Amounts: mostly the usual fractions, sometimes none, above write, negative.
            Type::Perm => {
                const AMOUNTS: [(i64, i64); 10] = [
                    (1, 2),
                    (1, 2),
                    (1, 4),
                    (1, 3),
                    (2, 3),
                    (3, 4),
                    (1, 1),
                    (1, 1),
                    (0, 1),
                    (2, 1),
                ];
                let (n, d) = if self.rng.chance(3) {
                    (-1, 2)
                } else {
                    AMOUNTS[self.rng.below(AMOUNTS.len())]
                };
                Value::amount(Rat::small(n, d))
            }
            Type::Seq(elem) => {
                let n = self.rng.below(5);
                let xs: Vec<Value> = (0..n).map(|_| self.value(elem, depth + 1)).collect();
                Value::Seq(std::rc::Rc::new(xs))
            }
            _ => Value::Null,
        }
    }

    /// A fresh object of class `ci` with random field values.
    fn object(&mut self, ci: usize, depth: u32) -> Value {
        self.budget = self.budget.saturating_sub(1);
        let o = self.heap.alloc(self.layout.new_object(ci));
        let types = self.layout.field_types[ci].clone();
        for (slot, t) in types.iter().enumerate() {
            let v = self.value(t, depth + 1);
            self.heap.set(o, slot, v);
        }
        Value::Ref(o)
    }
}

/// A random input state for `member` (at most about a dozen objects).
pub fn random_inputs(program: &Program, member: MemberRef, seed: u64) -> Inputs {
    let layout = Layout::of(program);
    let mut b =
        Builder { layout: &layout, heap: Heap::default(), rng: Rng(seed), budget: 12, reuse: 12 };
    let Some(m) = program.classes.get(member.class).and_then(|c| c.members.get(member.member))
    else {
        return Inputs::default();
    };
    let this = if m.is_static {
        None
    } else {
        let existing = |k: &ObjKind| *k == ObjKind::Class(Some(member.class));
        let reuse = b.rng.chance(10);
        match b.existing(&existing) {
            Some(v) if reuse => Some(v),
            _ => Some(b.object(member.class, 0)),
        }
    };
    let args = m.params.iter().map(|p| b.value(&p.ty, 0)).collect();
    Inputs { heap: b.heap, this, args }
}

/// Give random values to every field and element of `inputs` that `fixed` (object,
/// slot; for an array, element) does not name, and random lengths to the arrays `sized`
/// does not name; new objects may appear for reference fields. The values `fixed`
/// names stay.
pub fn complete(
    program: &Program,
    inputs: &mut Inputs,
    fixed: &std::collections::HashSet<(usize, usize)>,
    sized: &std::collections::HashSet<usize>,
    seed: u64,
) {
    let layout = Layout::of(program);
    let mut b = Builder {
        layout: &layout,
        heap: std::mem::take(&mut inputs.heap),
        rng: Rng(seed),
        budget: 8,
        reuse: 45,
    };
    let given = b.heap.objects.len();
    for o in 0..given {
        let kind = b.heap.objects[o].kind.clone();
        match kind {
            ObjKind::Class(Some(ci)) => {
                let types = layout.field_types[ci].clone();
                for (slot, t) in types.iter().enumerate() {
                    if !fixed.contains(&(o, slot)) {
                        let v = b.value(t, 1);
                        b.heap.set(o, slot, v);
                    }
                }
            }
            ObjKind::Array(t) => {
                if !sized.contains(&o) {
                    let n = b.rng.below(5);
                    if let Some(obj) = b.heap.objects.get_mut(o) {
                        obj.slots = vec![Value::default_of(&t); n];
                    }
                }
                let n = b.heap.len_of(o).unwrap_or(0);
                for i in 0..n {
                    if !fixed.contains(&(o, i)) {
                        let v = b.value(&t, 1);
                        b.heap.set(o, i, v);
                    }
                }
            }
            ObjKind::Class(None) => {}
        }
    }
    inputs.heap = b.heap;
}

/// A mutant of `inputs`: one to three of its integers and booleans (arguments, fields,
/// array elements) changed, each to a small integer, to the negation of a boolean, or
/// to another integer of the state (so that values coincide: a key that occurs twice).
/// References and the heap's shape stay as they are. A pure function of `seed`.
pub fn mutate(inputs: &Inputs, seed: u64) -> Inputs {
    let mut rng = Rng(seed);
    let mut out = inputs.clone();
    // (object, slot) of each scalar; `usize::MAX` as the object means an argument.
    let mut slots: Vec<(usize, usize)> = vec![];
    let mut ints: Vec<Value> = vec![];
    for (i, v) in inputs.args.iter().enumerate() {
        if matches!(v, Value::Int(_) | Value::Bool(_)) {
            slots.push((usize::MAX, i));
        }
        if matches!(v, Value::Int(_)) {
            ints.push(v.clone());
        }
    }
    for (o, obj) in inputs.heap.objects.iter().enumerate() {
        for (s, v) in obj.slots.iter().enumerate() {
            if matches!(v, Value::Int(_) | Value::Bool(_)) {
                slots.push((o, s));
            }
            if matches!(v, Value::Int(_)) {
                ints.push(v.clone());
            }
        }
    }
    if slots.is_empty() {
        return out;
    }
    for _ in 0..=rng.below(3) {
        let (o, s) = *rng.pick(&slots);
        let old = if o == usize::MAX { &inputs.args[s] } else { &inputs.heap.objects[o].slots[s] };
        let new = match old {
            Value::Bool(b) => Value::Bool(!b),
            _ if !ints.is_empty() && rng.chance(30) => rng.pick(&ints).clone(),
            _ => Value::int(rng.below(9) as i64 - 3),
        };
        if o == usize::MAX {
            out.args[s] = new;
        } else {
            out.heap.set(o, s, new);
        }
    }
    out
}
