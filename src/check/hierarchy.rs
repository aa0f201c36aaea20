//! Interfaces and what classes owe them (LANGUAGE.md section 10): `implements` and
//! `extends` name interfaces, without cycles; interface members are never static and
//! agree wherever an interface inherits two with one name; a class defines every
//! member of every interface it converts to, with the same name, kind, parameter types
//! and result type (else a `type.error` at the class). Then a class member that
//! implements an interface member and writes neither `requires` nor `ensures` takes the
//! interface member's contract: a copy of its (unchecked) clauses, with the class
//! member's parameter names in place of the interface's, by position, which the checker
//! then reads in the class (`this` has the class's type, so `valid()` names the class's
//! predicate and can be opened and closed).
//!
//! Architecture invariant: runs on the parsed program before any member is checked, so
//! a copied contract goes through exactly the checks of a contract written in the
//! class. Contracts are copied only into classes whose implementation is complete (a
//! missing member is reported once, at the class, not again in every copied clause).

use super::types::OBJECT;
use super::{Env, Sig};
use crate::syntax::InputError;
use crate::syntax::ast::*;
use std::collections::{HashMap, HashSet};

fn describe(sig: &Sig) -> String {
    let params: Vec<String> = sig.params.iter().map(|t| t.to_string()).collect();
    let params = params.join(", ");
    match sig.kind {
        MemberKind::Predicate => format!("predicate {}({params})", sig.name),
        MemberKind::Pure => format!("pure {} {}({params})", sig.ty, sig.name),
        MemberKind::Method => format!("{} {}({params})", sig.ty, sig.name),
        MemberKind::Field => format!("field {} {}", sig.ty, sig.name),
        MemberKind::Constructor => format!("constructor {}({params})", sig.name),
    }
}

/// Do two signatures agree (kind, static, parameter types, result type)?
fn same(a: &Sig, b: &Sig) -> bool {
    a.kind == b.kind && a.is_static == b.is_static && a.params == b.params && a.ty == b.ty
}

/// Check `implements`/`extends` lists, interfaces and implementations. Returns the
/// classes whose implementation of their interfaces is complete.
pub(super) fn check(program: &Program, env: &Env, errors: &mut Vec<InputError>) -> HashSet<usize> {
    let mut complete = HashSet::new();
    for (ci, class) in program.classes.iter().enumerate() {
        supers(program, env, ci, class, errors);
        if class.is_interface {
            interface(env, ci, class, errors);
        } else if implementation(env, ci, class, errors) {
            complete.insert(ci);
        }
    }
    complete
}

/// The names after `implements` or `extends`.
fn supers(program: &Program, env: &Env, ci: usize, class: &Class, errors: &mut Vec<InputError>) {
    let (word, what) = if class.is_interface {
        ("extends", "an interface can only extend interfaces")
    } else {
        ("implements", "a class can only implement interfaces (there is no class inheritance)")
    };
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for s in &class.supers {
        if let Some(first) = seen.get(s.name.as_str()) {
            errors.push(
                InputError::type_error(
                    format!("`{}` is listed twice after `{word}`", s.name),
                    s.span,
                    "listed again",
                )
                .with_note(*first, "first listed here"),
            );
            continue;
        }
        seen.insert(&s.name, s.span);
        match env.class(&s.name) {
            None if s.name == OBJECT => errors.push(InputError::type_error(
                format!("`Object` is a class: {what}"),
                s.span,
                "not an interface",
            )),
            None => errors.push(InputError::type_error(
                format!("unknown interface `{}`", s.name),
                s.span,
                "no interface of this name",
            )),
            Some(i) if !env.class_sigs[i].is_interface => errors.push(
                InputError::type_error(
                    format!("`{}` is a class: {what}", s.name),
                    s.span,
                    "not an interface",
                )
                .with_note(program.classes[i].name.span, "declared here"),
            ),
            Some(i) if i == ci || env.class_sigs[i].ancestors.contains(&ci) => {
                errors.push(InputError::type_error(
                    format!(
                        "interface `{}` extends itself (through `{}`)",
                        class.name.name, s.name
                    ),
                    s.span,
                    "cyclic `extends`",
                ))
            }
            Some(_) => {}
        }
    }
}

/// An interface's own members are never static, and the members it inherits agree
/// with its own and with each other.
fn interface(env: &Env, ci: usize, class: &Class, errors: &mut Vec<InputError>) {
    for m in &class.members {
        if m.is_static {
            errors.push(InputError::type_error(
                format!(
                    "interface members are never static: `{}.{}` is dynamically bound",
                    class.name.name, m.name.name
                ),
                m.name.span,
                "static in an interface",
            ));
        }
    }
    let cs = &env.class_sigs[ci];
    for &a in &cs.ancestors {
        let asig = &env.class_sigs[a];
        for (name, &mi) in &asig.members {
            let theirs = &asig.sigs[mi];
            // The first declaration met (own, or nearest inherited) is the one in use.
            let Some((di, dm, mine)) = env.member(ci, name) else { continue };
            if di == a || same(mine, theirs) {
                continue;
            }
            let at = if di == ci { class.members[dm].name.span } else { class.name.span };
            errors.push(InputError::type_error(
                format!(
                    "`{}.{name}` ({}) conflicts with `{}.{name}` ({}), which `{}` also inherits",
                    env.class_sigs[di].name,
                    describe(mine),
                    asig.name,
                    describe(theirs),
                    class.name.name
                ),
                at,
                "conflicting signatures",
            ));
        }
    }
}

/// Does class `ci` define every member of every interface it converts to? Reports the
/// missing and mismatched ones at the class.
fn implementation(env: &Env, ci: usize, class: &Class, errors: &mut Vec<InputError>) -> bool {
    let cs = &env.class_sigs[ci];
    let mut problems: Vec<String> = vec![];
    for &a in &cs.ancestors {
        let asig = &env.class_sigs[a];
        let mut names: Vec<(&String, &usize)> = asig.members.iter().collect();
        names.sort_by_key(|(_, mi)| **mi);
        for (name, &mi) in names {
            let wanted = &asig.sigs[mi];
            match cs.members.get(name).map(|&m| &cs.sigs[m]) {
                None => problems.push(format!(
                    "`{}` does not define `{}` of interface `{}`",
                    cs.name,
                    describe(wanted),
                    asig.name
                )),
                Some(have) if !same(have, wanted) => problems.push(format!(
                    "`{}.{name}` is `{}{}`, but interface `{}` declares `{}`",
                    cs.name,
                    if have.is_static { "static " } else { "" },
                    describe(have),
                    asig.name,
                    describe(wanted)
                )),
                Some(_) => {}
            }
        }
    }
    if problems.is_empty() {
        return true;
    }
    let n = problems.len();
    let mut msg = problems.into_iter().take(3).collect::<Vec<_>>().join("; ");
    if n > 3 {
        msg.push_str(&format!("; and {} more", n - 3));
    }
    errors.push(InputError::type_error(
        msg,
        class.name.span,
        format!("`{}` does not implement its interfaces", class.name.name),
    ));
    false
}

/// Copy interface contracts into the members of complete classes that write none.
pub(super) fn inherit_contracts(program: &mut Program, env: &Env, complete: &HashSet<usize>) {
    // (class, member, interface member, requires, ensures)
    type Copy = (usize, usize, MemberRef, Vec<Expr>, Vec<Expr>);
    let mut copies: Vec<Copy> = vec![];
    for &ci in complete {
        let class = &program.classes[ci];
        for (mi, m) in class.members.iter().enumerate() {
            if !matches!(m.kind, MemberKind::Method | MemberKind::Pure)
                || m.is_static
                || !m.requires.is_empty()
                || !m.ensures.is_empty()
            {
                continue;
            }
            // The nearest interface that declares it (implements order, then extends).
            let found = env.class_sigs[ci]
                .ancestors
                .iter()
                .find_map(|&a| env.class_sigs[a].members.get(&m.name.name).map(|&im| (a, im)));
            let Some((a, im)) = found else { continue };
            let imem = &program.classes[a].members[im];
            let rename: HashMap<String, String> = imem
                .params
                .iter()
                .zip(&m.params)
                .map(|(ip, cp)| (ip.name.name.clone(), cp.name.name.clone()))
                .collect();
            let copy = |es: &[Expr]| -> Vec<Expr> {
                es.iter()
                    .map(|e| {
                        let mut e = e.clone();
                        rename_names(&mut e, &rename);
                        e
                    })
                    .collect()
            };
            let (req, ens) = (copy(&imem.requires), copy(&imem.ensures));
            copies.push((ci, mi, MemberRef { class: a, member: im }, req, ens));
        }
    }
    for (ci, mi, from, req, ens) in copies {
        let m = &mut program.classes[ci].members[mi];
        m.requires = req;
        m.ensures = ens;
        m.inherits = Some(from);
    }
}

/// Replace bare names by their images under `map`, all at once (so that swapped
/// parameter names stay apart). Only unchecked `Name`s are renamed: field names and
/// member names are not variables.
fn rename_names(e: &mut Expr, map: &HashMap<String, String>) {
    if let ExprKind::Name(x) = &mut e.kind {
        if let Some(y) = map.get(x.as_str()) {
            *x = y.clone();
        }
        return;
    }
    for c in e.children_mut() {
        rename_names(c, map);
    }
}
