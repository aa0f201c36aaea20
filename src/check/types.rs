//! Type relations of the checker: conversion (assignment compatibility), comparability
//! for `==`, and the join of the branches of `?:`.
//!
//! Architecture invariant: `Type::Unknown` (the type of an expression that already got
//! an error) converts both ways to everything, so one mistake yields one diagnostic.

use crate::syntax::ast::Type;

pub const OBJECT: &str = "Object";

fn is_ref(t: &Type) -> bool {
    matches!(t, Type::Class(_) | Type::Array(_) | Type::Null)
}

/// Can a value of type `from` be stored where `to` is expected?
pub fn converts(from: &Type, to: &Type) -> bool {
    from == to
        || matches!(from, Type::Unknown)
        || matches!(to, Type::Unknown)
        || (matches!(from, Type::Null) && matches!(to, Type::Class(_) | Type::Array(_)))
        || (matches!(to, Type::Class(c) if c == OBJECT) && is_ref(from))
}

/// May `a == b` be asked?
pub fn comparable(a: &Type, b: &Type) -> bool {
    converts(a, b) || converts(b, a)
}

/// The type of `c ? a : b`, if the branches agree.
pub fn join(a: &Type, b: &Type) -> Option<Type> {
    if matches!(a, Type::Unknown) || matches!(b, Type::Unknown) {
        Some(Type::Unknown)
    } else if converts(a, b) {
        Some(b.clone())
    } else if converts(b, a) {
        Some(a.clone())
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
        assert!(converts(&Type::Null, &class("A")));
        assert!(converts(&Type::Null, &Type::Array(Box::new(Type::Int))));
        assert!(converts(&class("A"), &class(OBJECT)));
        assert!(!converts(&class(OBJECT), &class("A")));
        assert!(!converts(&class("A"), &class("B")));
        assert!(!converts(&Type::Int, &Type::Bool));
        assert!(!converts(&Type::Null, &Type::Int));
        assert!(comparable(&class(OBJECT), &class("A")));
        assert_eq!(join(&Type::Null, &class("A")), Some(class("A")));
        assert_eq!(join(&Type::Int, &Type::Bool), None);
    }
}
