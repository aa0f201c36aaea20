//! Type relations of the checker: conversion (assignment compatibility), comparability
//! for `==`, and the join of the branches of `?:`.
//!
//! Architecture invariant: `Type::Unknown` (the type of an expression that already got
//! an error) converts both ways to everything, so one mistake yields one diagnostic.
//! The relations between named types (a class to the interfaces it implements, an
//! interface to those it extends: LANGUAGE.md section 10) come from a [`Hierarchy`],
//! so these rules need no program of their own.

use crate::syntax::ast::Type;

pub const OBJECT: &str = "Object";

/// What the type rules need to know of the program's classes and interfaces.
pub trait Hierarchy {
    /// The interfaces `name` converts to, directly or through `extends`, nearest
    /// first (empty for unknown names and for `Object`).
    fn supertypes(&self, name: &str) -> Vec<String>;
    fn is_interface(&self, name: &str) -> bool;
}

/// A program without interfaces (for tests).
impl Hierarchy for () {
    fn supertypes(&self, _: &str) -> Vec<String> {
        vec![]
    }
    fn is_interface(&self, _: &str) -> bool {
        false
    }
}

/// Why a (declared or written) type is not legal, if it is not: a sequence of arrays or
/// of `void` (LANGUAGE.md section 14), an array of sequences.
pub fn malformed(t: &Type) -> Option<String> {
    match t {
        Type::Seq(e) => match &**e {
            Type::Array(_) | Type::Void | Type::Null => Some(format!(
                "`{t}` is not a legal type: sequence elements are `int`, `bool`, classes, interfaces or sequences"
            )),
            e => malformed(e),
        },
        Type::Array(e) if matches!(**e, Type::Seq(_)) => Some(format!(
            "`{t}` is not a legal type: arrays of sequences are out of scope (sequences are ghost values)"
        )),
        Type::Array(e) => malformed(e),
        _ => None,
    }
}

fn is_ref(t: &Type) -> bool {
    matches!(t, Type::Class(_) | Type::Array(_) | Type::Null)
}

/// Can a value of type `from` be stored where `to` is expected?
pub fn converts(h: &dyn Hierarchy, from: &Type, to: &Type) -> bool {
    from == to
        || matches!((from, to), (Type::Int, Type::Perm))
        || matches!(from, Type::Unknown)
        || matches!(to, Type::Unknown)
        || (matches!(from, Type::Null) && matches!(to, Type::Class(_) | Type::Array(_)))
        || (matches!(to, Type::Class(c) if c == OBJECT) && is_ref(from))
        || matches!((from, to), (Type::Class(a), Type::Class(b)) if h.supertypes(a).contains(b))
}

/// May `a == b` be asked? When one converts to the other, and for two interfaces (a
/// class may implement both). A class and an interface it does not implement are never
/// equal (there are no subclasses), so comparing them is an error, as in Java for a
/// final class.
pub fn comparable(h: &dyn Hierarchy, a: &Type, b: &Type) -> bool {
    converts(h, a, b)
        || converts(h, b, a)
        || matches!((a, b), (Type::Class(x), Type::Class(y)) if h.is_interface(x) && h.is_interface(y))
}

/// The type of `c ? a : b`, if the branches agree: the one the other converts to, or
/// else the only nearest interface both convert to (two classes of one interface).
pub fn join(h: &dyn Hierarchy, a: &Type, b: &Type) -> Option<Type> {
    if matches!(a, Type::Unknown) || matches!(b, Type::Unknown) {
        Some(Type::Unknown)
    } else if converts(h, a, b) {
        Some(b.clone())
    } else if converts(h, b, a) {
        Some(a.clone())
    } else if let (Type::Class(x), Type::Class(y)) = (a, b) {
        let (sx, sy) = (h.supertypes(x), h.supertypes(y));
        let common: Vec<&String> = sx.iter().filter(|i| sy.contains(i)).collect();
        // The common interfaces no other common interface converts to.
        let nearest: Vec<&&String> = common
            .iter()
            .filter(|i| !common.iter().any(|j| j != *i && h.supertypes(j).contains(i)))
            .collect();
        match nearest.as_slice() {
            [only] => Some(Type::Class((**only).clone())),
            _ => None,
        }
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(c: &str) -> Type {
        Type::Class(c.into())
    }

    #[test]
    fn conversions() {
        let h = &();
        assert!(converts(h, &Type::Null, &class("A")));
        assert!(converts(h, &Type::Null, &Type::Array(Box::new(Type::Int))));
        assert!(converts(h, &class("A"), &class(OBJECT)));
        assert!(!converts(h, &class(OBJECT), &class("A")));
        assert!(!converts(h, &class("A"), &class("B")));
        assert!(!converts(h, &Type::Int, &Type::Bool));
        assert!(!converts(h, &Type::Null, &Type::Int));
        assert!(comparable(h, &class(OBJECT), &class("A")));
        assert_eq!(join(h, &Type::Null, &class("A")), Some(class("A")));
        assert_eq!(join(h, &Type::Int, &Type::Bool), None);
    }

    /// `Leaf` and `Node` implement `Tree`, which extends `Shape`; `Visitor` is apart.
    struct H;
    impl Hierarchy for H {
        fn supertypes(&self, name: &str) -> Vec<String> {
            let v: &[&str] = match name {
                "Leaf" | "Node" => &["Tree", "Shape"],
                "Tree" => &["Shape"],
                _ => &[],
            };
            v.iter().map(|s| s.to_string()).collect()
        }
        fn is_interface(&self, name: &str) -> bool {
            matches!(name, "Tree" | "Shape" | "Visitor")
        }
    }

    #[test]
    fn interfaces() {
        let h = &H;
        assert!(converts(h, &class("Leaf"), &class("Tree")));
        assert!(converts(h, &class("Leaf"), &class("Shape")));
        assert!(converts(h, &class("Tree"), &class("Shape")));
        assert!(converts(h, &class("Tree"), &class(OBJECT)));
        assert!(!converts(h, &class("Tree"), &class("Leaf")));
        assert!(!converts(h, &class("Shape"), &class("Tree")));
        assert!(comparable(h, &class("Tree"), &class("Leaf")));
        assert!(comparable(h, &class("Tree"), &class("Visitor")));
        assert!(!comparable(h, &class("Leaf"), &class("Visitor")));
        assert!(!comparable(h, &class("Leaf"), &class("Node")));
        assert_eq!(join(h, &class("Leaf"), &class("Node")), Some(class("Tree")));
        assert_eq!(join(h, &class("Leaf"), &class("Visitor")), None);
        assert_eq!(join(h, &Type::Int, &class("Leaf")), None);
    }
}
