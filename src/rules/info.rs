//! Facts about the program the rules look up often, computed once per program: the
//! qualified names of fields and predicates, the Z3 function of each pure method, and
//! which fields of `this` each predicate provides (for open inference).
//!
//! Architecture invariant: derived only from the checked AST; immutable afterwards.

use crate::rules::sort_of;
use crate::state::term::{Func, Sort};
use crate::syntax::ast::{Body, CallRecv, Expr, ExprKind, MemberKind, MemberRef, Program};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

pub struct Info {
    /// `(class, field name)` to its qualified name `C.f`.
    pub fields: HashMap<(usize, String), Rc<str>>,
    pub funcs: HashMap<MemberRef, Func>,
    /// Qualified predicate names.
    pub preds: HashMap<MemberRef, Rc<str>>,
    /// Fields of `this` a predicate's body provides, directly or through predicates
    /// of `this` it contains.
    pub provides: HashMap<MemberRef, HashSet<Rc<str>>>,
    /// `Class.member` (the constructor is `Class.new`) of every member.
    pub member_names: HashMap<MemberRef, String>,
    /// The pure method of each function name (to tell program functions from the
    /// skolem functions of definitions).
    pub func_members: HashMap<Rc<str>, MemberRef>,
    /// For each pure method, the pure methods its definition may mention directly:
    /// those called in its contract and body, and in the bodies of the predicates
    /// these mention (transitively through predicates, not through pure methods).
    pub deps: HashMap<MemberRef, Vec<MemberRef>>,
    /// The pure methods whose definitions can reach themselves through `deps`
    /// (recursive, directly or not): only these need fuel to stop unrolling.
    pub recursive: HashSet<MemberRef>,
}

impl Info {
    pub fn new(prog: &Program) -> Info {
        let mut info = Info {
            fields: HashMap::new(),
            funcs: HashMap::new(),
            preds: HashMap::new(),
            provides: HashMap::new(),
            member_names: HashMap::new(),
            func_members: HashMap::new(),
            deps: HashMap::new(),
            recursive: HashSet::new(),
        };
        for (ci, c) in prog.classes.iter().enumerate() {
            for (mi, m) in c.members.iter().enumerate() {
                let r = MemberRef { class: ci, member: mi };
                let name = if m.kind == MemberKind::Constructor {
                    format!("{}.new", c.name.name)
                } else {
                    format!("{}.{}", c.name.name, m.name.name)
                };
                info.member_names.insert(r, name.clone());
                match m.kind {
                    MemberKind::Field => {
                        info.fields.insert((ci, m.name.name.clone()), name.into());
                    }
                    MemberKind::Pure => {
                        let mut domain = vec![Sort::Snap];
                        if !m.is_static {
                            domain.push(Sort::Ref);
                        }
                        domain.extend(m.params.iter().map(|p| sort_of(&p.ty)));
                        let f = Func {
                            name: name.into(),
                            domain: domain.into(),
                            range: sort_of(&m.ty),
                        };
                        info.func_members.insert(f.name.clone(), r);
                        info.funcs.insert(r, f);
                    }
                    MemberKind::Predicate => {
                        info.preds.insert(r, name.into());
                    }
                    _ => {}
                }
            }
        }
        let preds: Vec<MemberRef> = info.preds.keys().copied().collect();
        for p in &preds {
            let mut seen = HashSet::new();
            let mut out = HashSet::new();
            collect_provided(prog, &info, *p, &mut seen, &mut out);
            info.provides.insert(*p, out);
        }
        let funcs: Vec<MemberRef> = info.funcs.keys().copied().collect();
        for f in &funcs {
            let d = pure_deps(prog, &info, *f);
            info.deps.insert(*f, d);
        }
        for f in funcs {
            if reaches(&info.deps, f, f) {
                info.recursive.insert(f);
            }
        }
        info
    }

    pub fn field(&self, class: usize, name: &str) -> Rc<str> {
        self.fields
            .get(&(class, name.to_string()))
            .cloned()
            .unwrap_or_else(|| format!("?.{name}").into())
    }
}

fn collect_provided(
    prog: &Program,
    info: &Info,
    p: MemberRef,
    seen: &mut HashSet<MemberRef>,
    out: &mut HashSet<Rc<str>>,
) {
    if !seen.insert(p) {
        return;
    }
    let m = &prog.classes[p.class].members[p.member];
    if let Body::Return(e) = &m.body {
        walk(prog, info, e, seen, out);
    }
}

fn is_this(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::This)
}

fn walk(
    prog: &Program,
    info: &Info,
    e: &Expr,
    seen: &mut HashSet<MemberRef>,
    out: &mut HashSet<Rc<str>>,
) {
    match &e.kind {
        ExprKind::Acc(f) => {
            if let ExprKind::Field { recv, field, class: Some(c) } = &f.kind
                && is_this(recv)
            {
                out.insert(info.field(*c, &field.name));
            }
        }
        ExprKind::Call { recv, target: Some(t), .. } => {
            let this_recv = matches!(recv, CallRecv::Expr(r) if is_this(r));
            if this_recv && info.preds.contains_key(t) {
                collect_provided(prog, info, *t, seen, out);
            }
        }
        ExprKind::Binary { l, r, .. } => {
            walk(prog, info, l, seen, out);
            walk(prog, info, r, seen, out);
        }
        ExprKind::Cond { a, b, .. } => {
            walk(prog, info, a, seen, out);
            walk(prog, info, b, seen, out);
        }
        _ => {}
    }
}

/// The members called (pure methods, predicates, methods) anywhere in `e`. Iterative:
/// expressions may nest deeper than the stack allows recursion.
pub fn calls_in(e: &Expr, out: &mut Vec<MemberRef>) {
    let mut stack: Vec<&Expr> = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Field { recv, .. } => stack.push(recv),
            ExprKind::Length(a) | ExprKind::Old(a) | ExprKind::Acc(a) => stack.push(a),
            ExprKind::AccArray(a) | ExprKind::Untouched(a) => stack.push(a),
            ExprKind::Unary { e, .. } => stack.push(e),
            ExprKind::Index { arr, idx } => stack.extend([&**arr, &**idx]),
            ExprKind::Binary { l, r, .. } => stack.extend([&**l, &**r]),
            ExprKind::Cond { c, a, b } => stack.extend([&**c, &**a, &**b]),
            ExprKind::Opening { pred: x, body } | ExprKind::Using { call: x, body } => {
                stack.extend([&**x, &**body])
            }
            ExprKind::Call { recv, args, target, .. } => {
                if let Some(t) = target {
                    out.push(*t);
                }
                if let CallRecv::Expr(r) = recv {
                    stack.push(r);
                }
                stack.extend(args.iter());
            }
            _ => {}
        }
    }
}

/// The pure methods whose definitions `f`'s definition may use directly (see
/// `Info::deps`), in a deterministic order.
fn pure_deps(prog: &Program, info: &Info, f: MemberRef) -> Vec<MemberRef> {
    let mut seen: HashSet<MemberRef> = HashSet::new();
    let mut out = vec![];
    // `f` is not marked seen: a call of `f` itself is a dependency (recursion).
    let mut todo = vec![f];
    while let Some(m) = todo.pop() {
        let mem = &prog.classes[m.class].members[m.member];
        let mut calls = vec![];
        for e in mem.requires.iter().chain(&mem.ensures) {
            calls_in(e, &mut calls);
        }
        if let Body::Return(e) = &mem.body {
            calls_in(e, &mut calls);
        }
        for c in calls {
            if !seen.insert(c) {
                continue;
            }
            if info.funcs.contains_key(&c) {
                out.push(c);
            } else if info.preds.contains_key(&c) {
                todo.push(c);
            }
        }
    }
    out
}

/// Can `to` be reached from `from` in one or more steps of `deps`?
fn reaches(deps: &HashMap<MemberRef, Vec<MemberRef>>, from: MemberRef, to: MemberRef) -> bool {
    let mut seen = HashSet::new();
    let mut todo: Vec<MemberRef> = deps.get(&from).cloned().unwrap_or_default();
    while let Some(m) = todo.pop() {
        if m == to {
            return true;
        }
        if seen.insert(m) {
            todo.extend(deps.get(&m).into_iter().flatten().copied());
        }
    }
    false
}
