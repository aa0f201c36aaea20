//! The checker: resolves names and types every expression of a parsed program.
//!
//! Architecture invariant: `check` turns the AST into a resolved, typed program or
//! returns every error it found (all `type.error`s). After it, the verifier never meets an
//! unknown name, an ill-typed expression, a `Name`, an implicit call receiver or a missing
//! `ty`/`target`/field `class`, and every expression stands where LANGUAGE.md allows it
//! (permissions only in assertions, non-pure calls only as whole statements, ...).
//!
//! Layout: this file builds the program-wide [`Env`] of class and member signatures and
//! checks declarations; `expr` checks expressions under a [`expr::Place`] (what kind of
//! code or assertion they sit in); `stmt` checks statements and member bodies; `types`
//! holds the type relations; `hierarchy` checks `implements` and `extends` and copies
//! interface contracts into the class members that inherit them (LANGUAGE.md
//! section 10); `trigger` checks written triggers and infers the others (section 13);
//! `ghost` enforces the ghost rule of sections 13-14 on the typed program.

mod expr;
pub mod ghost;
mod hierarchy;
mod stmt;
pub mod trigger;
pub mod types;

use crate::syntax::InputError;
use crate::syntax::ast::{Body, Member, MemberKind, Program, Span, Type};
use std::collections::HashMap;
use types::OBJECT;

/// The signature of one member, copied out of the program so that bodies can be
/// rewritten while signatures are read.
#[derive(Clone, Debug)]
pub(crate) struct Sig {
    pub kind: MemberKind,
    pub is_static: bool,
    pub ty: Type,
    pub params: Vec<Type>,
    pub name: String,
}

#[derive(Debug)]
pub(crate) struct ClassSig {
    pub name: String,
    /// Member name to its first index.
    pub members: HashMap<String, usize>,
    pub sigs: Vec<Sig>,
    /// The index of the (first) constructor.
    pub ctor: Option<usize>,
    pub is_interface: bool,
    /// The interfaces this class implements or this interface extends, directly
    /// (those that exist and are interfaces; the rest are reported).
    pub supers: Vec<usize>,
    /// Every interface it converts to, directly or through `extends`, nearest first
    /// (breadth-first, each once; never itself, even on a cycle).
    pub ancestors: Vec<usize>,
}

/// Class and member tables of the whole program.
#[derive(Debug)]
pub(crate) struct Env {
    pub classes: HashMap<String, usize>,
    pub class_sigs: Vec<ClassSig>,
}

impl Env {
    fn new(program: &Program) -> Env {
        let mut classes = HashMap::new();
        let mut class_sigs = Vec::new();
        for (ci, class) in program.classes.iter().enumerate() {
            classes.entry(class.name.name.clone()).or_insert(ci);
            let mut members = HashMap::new();
            let mut ctor = None;
            let sigs = class
                .members
                .iter()
                .enumerate()
                .map(|(mi, m)| {
                    if m.kind == MemberKind::Constructor {
                        ctor.get_or_insert(mi);
                    } else {
                        members.entry(m.name.name.clone()).or_insert(mi);
                    }
                    Sig {
                        kind: m.kind,
                        is_static: m.is_static,
                        ty: m.ty.clone(),
                        params: m.params.iter().map(|p| p.ty.clone()).collect(),
                        name: m.name.name.clone(),
                    }
                })
                .collect();
            class_sigs.push(ClassSig {
                name: class.name.name.clone(),
                members,
                sigs,
                ctor,
                is_interface: class.is_interface,
                supers: vec![],
                ancestors: vec![],
            });
        }
        let mut env = Env { classes, class_sigs };
        for (ci, class) in program.classes.iter().enumerate() {
            let supers: Vec<usize> = class
                .supers
                .iter()
                .filter_map(|i| env.class(&i.name))
                .filter(|&i| env.class_sigs[i].is_interface)
                .collect();
            env.class_sigs[ci].supers = supers;
        }
        for ci in 0..env.class_sigs.len() {
            let mut out: Vec<usize> = vec![];
            let mut queue: std::collections::VecDeque<usize> =
                env.class_sigs[ci].supers.iter().copied().collect();
            while let Some(i) = queue.pop_front() {
                if i == ci || out.contains(&i) {
                    continue;
                }
                out.push(i);
                queue.extend(env.class_sigs[i].supers.iter().copied());
            }
            env.class_sigs[ci].ancestors = out;
        }
        env
    }

    pub fn class(&self, name: &str) -> Option<usize> {
        self.classes.get(name).copied()
    }

    /// A member (not the constructor) of a class by name; of an interface, its own or
    /// else the first one met among the interfaces it extends, nearest first. Gives
    /// the declaring class or interface, the member's index and its signature.
    pub fn member(&self, class: usize, name: &str) -> Option<(usize, usize, &Sig)> {
        let cs = &self.class_sigs[class];
        if let Some(&mi) = cs.members.get(name) {
            return Some((class, mi, &cs.sigs[mi]));
        }
        if !cs.is_interface {
            return None;
        }
        cs.ancestors.iter().find_map(|&i| {
            let is = &self.class_sigs[i];
            is.members.get(name).map(|&mi| (i, mi, &is.sigs[mi]))
        })
    }

    /// Does every class a type names exist?
    pub fn type_exists(&self, t: &Type) -> bool {
        match t {
            Type::Class(c) => c == OBJECT || self.classes.contains_key(c),
            Type::Array(t) | Type::Seq(t) => self.type_exists(t),
            _ => true,
        }
    }
}

impl types::Hierarchy for Env {
    fn supertypes(&self, name: &str) -> Vec<String> {
        match self.class(name) {
            Some(ci) => self.class_sigs[ci]
                .ancestors
                .iter()
                .map(|&i| self.class_sigs[i].name.clone())
                .collect(),
            None => vec![],
        }
    }
    fn is_interface(&self, name: &str) -> bool {
        self.class(name).is_some_and(|ci| self.class_sigs[ci].is_interface)
    }
}

/// Resolve and type-check a parsed program.
pub fn check(mut program: Program) -> Result<Program, Vec<InputError>> {
    let env = Env::new(&program);
    let mut errors = Vec::new();
    declarations(&program, &env, &mut errors);
    let complete = hierarchy::check(&program, &env, &mut errors);
    hierarchy::inherit_contracts(&mut program, &env, &complete);
    for (ci, class) in program.classes.iter_mut().enumerate() {
        for member in class.members.iter_mut() {
            stmt::member(&env, ci, member, &mut errors);
        }
    }
    // The ghost rule reads types: expressions that got an error are `Unknown`, which
    // it never calls ghost, so it adds nothing about them.
    ghost::check(&program, &mut errors);
    if errors.is_empty() {
        Ok(program)
    } else {
        errors.sort_by_key(|e| e.span.map(|s| (s.start, s.end)));
        Err(errors)
    }
}

/// Where a declared type `t` is written, for a declaration starting at `decl_start`
/// with its name at `name` (modifiers may come first: then the span starts earlier).
pub(crate) fn type_span(t: &Type, decl_start: u32, name: Span) -> Span {
    let end = name.start.max(decl_start);
    let start = end.saturating_sub(t.to_string().len() as u32 + 1).max(decl_start);
    Span { start, end: (start + t.to_string().len() as u32).min(end) }
}

fn check_type(env: &Env, t: &Type, span: Span, errors: &mut Vec<InputError>) {
    if !env.type_exists(t) {
        errors.push(InputError::type_error(
            format!("unknown type `{t}`"),
            span,
            "no class of this name",
        ));
    } else if perm_elements(t) {
        errors.push(perm_elements_error(span));
    } else if let Some(why) = types::malformed(t) {
        errors.push(InputError::type_error(why, span, "not a legal type"));
    }
}

/// A sequence type where LANGUAGE.md section 14 allows none (fields, non-pure
/// methods' results: ghost fields and ghost results are out of scope).
fn no_sequence(t: &Type, what: &str, span: Span, errors: &mut Vec<InputError>) {
    if matches!(t, Type::Seq(_)) {
        errors.push(InputError::type_error(
            format!(
                "{what} cannot have the sequence type `{t}`: sequences are ghost values, only for locals, parameters, pure methods' results and predicate parameters"
            ),
            span,
            "sequence type not allowed here",
        ));
    }
}

/// An array of `perm`s (LANGUAGE.md section 11: out of scope)?
pub(crate) fn perm_elements(t: &Type) -> bool {
    match t {
        Type::Array(e) => matches!(**e, Type::Perm) || perm_elements(e),
        _ => false,
    }
}

pub(crate) fn perm_elements_error(span: Span) -> InputError {
    InputError::type_error(
        "`perm` values cannot be stored in fields or array elements (only in locals, parameters and results)",
        span,
        "`perm` element",
    )
}

/// Class names, member names, constructors and declared types.
fn declarations(program: &Program, env: &Env, errors: &mut Vec<InputError>) {
    let mut seen_classes: HashMap<&str, Span> = HashMap::new();
    for class in &program.classes {
        let name = class.name.name.as_str();
        if name == OBJECT {
            errors.push(InputError::type_error(
                "`Object` is a built-in class and cannot be declared",
                class.name.span,
                "built-in class",
            ));
        } else if let Some(first) = seen_classes.get(name) {
            errors.push(
                InputError::type_error(
                    format!(
                        "{} `{name}` is declared twice (classes and interfaces share one namespace)",
                        if class.is_interface { "interface" } else { "class" }
                    ),
                    class.name.span,
                    "second declaration",
                )
                .with_note(*first, "first declared here"),
            );
        } else {
            seen_classes.insert(name, class.name.span);
        }
        let mut seen: HashMap<&str, (Span, MemberKind)> = HashMap::new();
        for m in &class.members {
            if let Some(&(first, kind)) = seen.get(m.name.name.as_str()) {
                let (msg, label) = if kind == MemberKind::Constructor
                    && m.kind == MemberKind::Constructor
                {
                    (format!("class `{name}` has more than one constructor"), "second constructor")
                } else {
                    (
                        format!("`{}` is declared twice in class `{name}`", m.name.name),
                        "second declaration",
                    )
                };
                errors.push(
                    InputError::type_error(msg, m.name.span, label)
                        .with_note(first, "first declared here"),
                );
            } else {
                seen.insert(&m.name.name, (m.name.span, m.kind));
            }
            member_declaration(env, name, m, errors);
        }
    }
}

fn member_declaration(env: &Env, class: &str, m: &Member, errors: &mut Vec<InputError>) {
    if m.kind == MemberKind::Constructor {
        if m.name.name != class {
            errors.push(InputError::type_error(
                format!(
                    "constructor must be named after its class `{class}` (a method needs a return type)"
                ),
                m.name.span,
                "not the class name",
            ));
        }
        if m.is_static {
            errors.push(InputError::type_error(
                "a constructor cannot be static",
                m.name.span,
                "static constructor",
            ));
        }
    }
    if !matches!(m.kind, MemberKind::Constructor | MemberKind::Predicate) {
        let span = type_span(&m.ty, m.span.start, m.name.span);
        check_type(env, &m.ty, span, errors);
        match m.kind {
            MemberKind::Field => no_sequence(&m.ty, "a field", span, errors),
            MemberKind::Method => {
                no_sequence(&m.ty, "the result of a non-pure method", span, errors)
            }
            _ => {}
        }
    }
    // LANGUAGE.md section 15: `decreases` on pure methods only, at most once.
    for (i, d) in m.decreases.iter().enumerate() {
        if m.kind != MemberKind::Pure {
            errors.push(InputError::type_error(
                "`decreases` is only allowed on pure methods (termination measures of methods and loops are out of scope)",
                d.span,
                "not a pure method",
            ));
        } else if i > 0 {
            errors.push(InputError::type_error(
                "a pure method may declare one `decreases` clause",
                d.span,
                "second `decreases`",
            ));
        }
    }
    if m.kind == MemberKind::Field && m.ty == Type::Perm {
        errors.push(perm_elements_error(type_span(&m.ty, m.span.start, m.name.span)));
    }
    let mut params: HashMap<&str, Span> = HashMap::new();
    for p in &m.params {
        check_type(env, &p.ty, type_span(&p.ty, p.span.start, p.name.span), errors);
        if let Some(first) = params.get(p.name.name.as_str()) {
            errors.push(
                InputError::type_error(
                    format!("parameter `{}` is declared twice", p.name.name),
                    p.name.span,
                    "second declaration",
                )
                .with_note(*first, "first declared here"),
            );
        } else {
            params.insert(&p.name.name, p.name.span);
        }
    }
    debug_assert!(matches!(
        (&m.kind, &m.body),
        (MemberKind::Field, Body::None)
            | (MemberKind::Method | MemberKind::Constructor, Body::Block(_))
            | (MemberKind::Pure | MemberKind::Predicate, Body::Return(_))
            | (MemberKind::Method | MemberKind::Pure | MemberKind::Predicate, Body::None)
    ));
}

#[cfg(test)]
mod tests;
