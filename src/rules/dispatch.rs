//! What the verifier knows of an object's class, for interfaces (LANGUAGE.md section
//! 10): predicate families, and which class body an instance or a dynamically bound
//! pure call has.
//!
//! An object's class is the uninterpreted `class#(o)`, an integer (the class's index
//! in the program). Facts about it come only from what the language guarantees:
//! - `new C(..)` gives `class#(o) = C` (a fact about the value, so it holds wherever
//!   the value is met again in the method that created it);
//! - `this` in a member of class `C` is a `C`: `class#(this) = C`;
//! - a value whose static type is a class `C` (a parameter, a field, a method's or
//!   pure method's result, an array element) is null or a `C` (there is no class
//!   inheritance and no cast): `o ≠ null ⇒ class#(o) = C`.
//!
//! The class is "known" when one of these facts is literally in the path condition;
//! only then does an instance of an interface's predicate get a class's body (for an
//! inferred close), or an application of an interface's pure method get its class's
//! definition instantiated. Everything else about dispatch is in axioms guarded by
//! `class#(o) = C` (`definition.rs`), which hold whatever is known.
//!
//! Architecture invariant: nothing here assumes a fact that a run of the program could
//! contradict; knowing less only loses completeness.

use crate::rules::Verifier;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::term::{Func, Sort, Term};
use crate::syntax::ast::{Body, MemberRef, Program, StmtKind, Type};
use std::collections::HashMap;

/// `class#(o)`.
pub fn class_of(o: &Term) -> Term {
    let f = Func { name: "class#".into(), domain: vec![Sort::Ref].into(), range: Sort::Int };
    Term::app(&f, vec![o.clone()])
}

/// The constant for class `ci` (its index, printed by name).
pub fn class_id(prog: &Program, ci: usize) -> Term {
    let name = prog.classes.get(ci).map_or("?", |c| c.name.name.as_str());
    Term::class(ci as u32, name)
}

impl<'p> Verifier<'p> {
    /// `class#(o) = C`.
    pub fn is_class(&self, o: &Term, ci: usize) -> Term {
        Term::eq(class_of(o), class_id(self.prog, ci))
    }

    /// `o ≠ null ⇒ class#(o) = C`: what a static class type says of a value.
    pub fn typed_as(&self, o: &Term, ci: usize) -> Term {
        Term::implies(Term::ne(o.clone(), Term::null()), self.is_class(o, ci))
    }

    /// The class a static type names, if it is a class (not an interface, `Object`
    /// or an array) that implements some interface.
    pub fn class_type(&self, ty: &Type) -> Option<usize> {
        match ty {
            Type::Class(c) => {
                self.info.class_index.get(c.as_str()).copied().filter(|&i| self.dispatches(i))
            }
            _ => None,
        }
    }

    /// Does knowing that an object is of class `ci` matter? Only for a class that
    /// implements an interface (its objects may be met through one). Facts about the
    /// other classes are never assumed: they would only cost solver time (and make
    /// symbols that syntax could branch on known to the path condition).
    pub fn dispatches(&self, ci: usize) -> bool {
        !self.info.is_interface[ci] && !self.info.ancestors[ci].is_empty()
    }

    /// Assume that `o` is an object of class `ci` (known non-null: `new`, `this`).
    pub fn assume_class(&mut self, o: &Term, ci: usize) {
        if self.dispatches(ci) {
            self.dec.assume(self.is_class(o, ci));
        }
    }

    /// Assume what the static type `ty` of value `o` says of its class (as a fact that
    /// follows from holding chunks, when `derived`).
    pub fn assume_typed(&mut self, o: &Term, ty: &Type, derived: bool) {
        if o.sort() != Sort::Ref || matches!(o.op(), crate::state::term::Op::Null) {
            return;
        }
        if let Some(ci) = self.class_type(ty) {
            let fact = self.typed_as(o, ci);
            if derived { self.dec.assume_derived(fact) } else { self.dec.assume(fact) }
        }
    }

    /// Assume what the declared type of local `x` says of `o`, a fresh value of it
    /// (a loop or a `join` havocs the locals it assigns).
    pub fn assume_local_typed(&mut self, x: &str, o: &Term) {
        self.note_ref(o);
        if let Some(Some(ty)) = self.local_types.get(x).cloned() {
            self.assume_typed(o, &ty, false);
        }
    }

    /// Record the declared types of member `r`'s parameters and locals.
    pub fn collect_local_types(&mut self, r: MemberRef) {
        fn add(out: &mut HashMap<String, Option<Type>>, x: &str, ty: &Type) {
            let e = out.entry(x.to_string()).or_insert_with(|| Some(ty.clone()));
            if e.as_ref() != Some(ty) {
                *e = None;
            }
        }
        let m = &self.prog.classes[r.class].members[r.member];
        let mut out = HashMap::new();
        for p in &m.params {
            add(&mut out, &p.name.name, &p.ty);
        }
        if let Body::Block(b) = &m.body {
            crate::syntax::ast::each_stmt(&b.stmts, &mut |st| {
                if let StmtKind::Local { ty, name, .. } = &st.kind {
                    add(&mut out, &name.name, ty);
                }
            });
        }
        self.local_types = out;
    }

    /// The classes among `candidates` that the path condition literally says `o` is
    /// (`class#(o) = C`, or `o ≠ null ⇒ class#(o) = C` with `o ≠ null` known).
    pub fn known_classes(&self, o: &Term, candidates: &[usize]) -> Vec<usize> {
        let nn = self.dec.known(&Term::ne(o.clone(), Term::null()));
        candidates
            .iter()
            .copied()
            .filter(|&c| {
                self.dec.known(&self.is_class(o, c)) || (nn && self.dec.known(&self.typed_as(o, c)))
            })
            .collect()
    }

    /// The name of the class `o` is known to be, for traces and counterexamples.
    pub fn class_label(&self, o: &Term) -> Option<String> {
        if o.sort() != Sort::Ref {
            return None;
        }
        let all: Vec<usize> =
            (0..self.prog.classes.len()).filter(|&c| self.dispatches(c)).collect();
        match self.known_classes(o, &all).as_slice() {
            [c] => Some(self.prog.classes[*c].name.name.clone()),
            _ => None,
        }
    }

    /// The one class `o` is known to be, among those that may carry members of
    /// interface `iface`.
    pub fn known_class(&self, o: &Term, iface: usize) -> Option<usize> {
        match self.known_classes(o, &self.info.classes_of(iface)).as_slice() {
            [c] => Some(*c),
            _ => None,
        }
    }

    /// The predicate whose body an instance of `p` (named through any static type) on
    /// receiver `recv` has: `p` itself for a class's predicate; for an interface's, the
    /// family's member in the receiver's known class, if any.
    pub fn body_predicate(&self, p: MemberRef, recv: Option<&Term>) -> Option<MemberRef> {
        if !self.info.in_interface(p) {
            return Some(p);
        }
        let c = self.known_class(recv?, p.class)?;
        self.info.family_member.get(&(self.info.family_of(p), c)).copied()
    }

    /// The chunk kind of predicate `p`: its family's.
    pub fn pred_kind(&self, p: MemberRef) -> ChunkKind {
        let f = self.info.family_of(p);
        let name = self.info.preds.get(&f).cloned().unwrap_or_else(|| "?".into());
        ChunkKind::Pred(f, name)
    }

    /// A chunk for the instance `recv.p(args)` with snapshot `snap`.
    pub fn pred_chunk(
        &self,
        p: MemberRef,
        recv: Option<Term>,
        args: Vec<Term>,
        snap: Term,
    ) -> Chunk {
        let f = self.info.family_of(p);
        let name = self.info.preds.get(&f).cloned().unwrap_or_else(|| "?".into());
        Chunk::pred(f, name, recv, args, snap)
    }
}
