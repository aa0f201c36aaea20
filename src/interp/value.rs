//! Concrete values and the concrete heap: unbounded integers, booleans, `null`,
//! references to objects (class instances and arrays), exact permission amounts and
//! sequences, plus the per-class field layout
//! the interpreter reads fields through.
//!
//! Architecture invariant: the heap only grows (objects are never freed), so an object
//! id stays valid for the whole run and an old heap is a plain copy of the vector.

use super::rat::Rat;
use crate::syntax::ast::{Expr, ExprKind, MemberKind, Program, Type};
use num_bigint::BigInt;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

/// An object id: an index into [`Heap::objects`].
pub type ObjId = usize;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Int(BigInt),
    Bool(bool),
    Null,
    Ref(ObjId),
    /// A permission amount that is not an integer (LANGUAGE.md section 11): integral
    /// amounts are `Int`, so that equal amounts are equal values.
    Perm(Rat),
    /// A sequence (LANGUAGE.md section 14): immutable, compared element-wise.
    Seq(Rc<Vec<Value>>),
}

impl Value {
    pub fn int(n: i64) -> Value {
        Value::Int(BigInt::from(n))
    }

    /// The default value of a local, field or array element of type `t`.
    pub fn default_of(t: &Type) -> Value {
        match t {
            Type::Int | Type::Perm => Value::int(0),
            Type::Bool => Value::Bool(false),
            Type::Seq(_) => Value::Seq(Rc::new(vec![])),
            _ => Value::Null,
        }
    }

    /// The value of an amount: an `Int` when it is integral, else a `Perm`.
    pub fn amount(r: Rat) -> Value {
        if r.is_integer() { Value::Int(r.numer().clone()) } else { Value::Perm(r) }
    }

    /// The amount an `int` or `perm` value stands for.
    pub fn rat(&self) -> Option<Rat> {
        match self {
            Value::Int(n) => Some(Rat::int(n.clone())),
            Value::Perm(r) => Some(r.clone()),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Null => write!(f, "null"),
            Value::Ref(o) => write!(f, "o{o}"),
            Value::Perm(r) => write!(f, "{r}"),
            Value::Seq(xs) => {
                write!(f, "seq(")?;
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, ")")
            }
        }
    }
}

/// What an object is: an instance of a class (by index; `None` for `new Object()`)
/// or an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjKind {
    Class(Option<usize>),
    Array(Type),
}

/// One object: its kind and its slots (fields in declaration order, or elements).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub kind: ObjKind,
    pub slots: Vec<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Heap {
    pub objects: Vec<Object>,
}

impl Heap {
    pub fn alloc(&mut self, o: Object) -> ObjId {
        self.objects.push(o);
        self.objects.len() - 1
    }

    pub fn get(&self, o: ObjId, slot: usize) -> Option<&Value> {
        self.objects.get(o).and_then(|x| x.slots.get(slot))
    }

    pub fn set(&mut self, o: ObjId, slot: usize, v: Value) -> bool {
        match self.objects.get_mut(o).and_then(|x| x.slots.get_mut(slot)) {
            Some(s) => {
                *s = v;
                true
            }
            None => false,
        }
    }

    pub fn len_of(&self, o: ObjId) -> Option<usize> {
        match self.objects.get(o) {
            Some(Object { kind: ObjKind::Array(_), slots }) => Some(slots.len()),
            _ => None,
        }
    }
}

/// Field layouts and names of a checked program.
#[derive(Debug)]
pub struct Layout {
    /// Per class: field name to (slot, type).
    pub fields: Vec<HashMap<String, (usize, Type)>>,
    /// Per class: field types in slot order.
    pub field_types: Vec<Vec<Type>>,
    /// Per class: the field names in slot order.
    pub field_names: Vec<Vec<String>>,
    /// Per class: the constructor's member index.
    pub ctor: Vec<Option<usize>>,
    pub class_index: HashMap<String, usize>,
    /// Per class: is it an interface?
    pub is_interface: Vec<bool>,
    /// Per class: the classes whose objects have that type: a class itself; for an
    /// interface, every class implementing it directly or through `extends`.
    pub implementers: Vec<Vec<usize>>,
}

impl Layout {
    /// The program's layout, computed once per checked program (`Program::memo`).
    pub fn of(program: &Program) -> std::sync::Arc<Layout> {
        crate::interp::layout_of(program)
    }

    pub fn new(program: &Program) -> Layout {
        let mut fields = Vec::new();
        let mut field_types = Vec::new();
        let mut field_names = Vec::new();
        let mut ctor = Vec::new();
        let mut class_index = HashMap::new();
        for (ci, class) in program.classes.iter().enumerate() {
            class_index.entry(class.name.name.clone()).or_insert(ci);
            let mut map = HashMap::new();
            let mut types = Vec::new();
            let mut names = Vec::new();
            for m in &class.members {
                if m.kind == MemberKind::Field && !map.contains_key(&m.name.name) {
                    map.insert(m.name.name.clone(), (types.len(), m.ty.clone()));
                    types.push(m.ty.clone());
                    names.push(m.name.name.clone());
                }
            }
            fields.push(map);
            field_types.push(types);
            field_names.push(names);
            ctor.push(class.members.iter().position(|m| m.kind == MemberKind::Constructor));
        }
        let is_interface: Vec<bool> = program.classes.iter().map(|c| c.is_interface).collect();
        // Every class's supertypes, transitively (interfaces only: no class inheritance).
        let n = program.classes.len();
        let mut implementers = vec![vec![]; n];
        for ci in 0..n {
            if is_interface[ci] {
                continue;
            }
            implementers[ci].push(ci);
            let mut seen = vec![false; n];
            let mut stack: Vec<usize> = vec![ci];
            while let Some(c) = stack.pop() {
                for s in &program.classes[c].supers {
                    if let Some(&i) = class_index.get(&s.name)
                        && !seen[i]
                    {
                        seen[i] = true;
                        stack.push(i);
                        if is_interface[i] {
                            implementers[i].push(ci);
                        }
                    }
                }
            }
        }
        Layout { fields, field_types, field_names, ctor, class_index, is_interface, implementers }
    }

    /// The class of the object `v` refers to, if it is an object of a class.
    pub fn class_of(heap: &Heap, v: &Value) -> Option<usize> {
        match v {
            Value::Ref(o) => match heap.objects.get(*o).map(|x| &x.kind) {
                Some(ObjKind::Class(Some(c))) => Some(*c),
                _ => None,
            },
            _ => None,
        }
    }

    /// A fresh object of class `ci` with every field at its default value.
    pub fn new_object(&self, ci: usize) -> Object {
        let slots = self.field_types.get(ci).map(|ts| ts.iter().map(Value::default_of).collect());
        Object { kind: ObjKind::Class(Some(ci)), slots: slots.unwrap_or_default() }
    }

    /// The slot of field `name` of class `ci`.
    pub fn slot(&self, ci: usize, name: &str) -> Option<usize> {
        self.fields.get(ci).and_then(|m| m.get(name)).map(|(s, _)| *s)
    }
}

/// Does `e` mention `old(..)` or `untouched(..)` anywhere (so a frame must keep its
/// entry heap)?
pub fn mentions_old(e: &Expr) -> bool {
    e.any(&mut |e| matches!(e.kind, ExprKind::Old(_) | ExprKind::Untouched(_)))
}
