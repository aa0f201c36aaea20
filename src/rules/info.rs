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
}

impl Info {
    pub fn new(prog: &Program) -> Info {
        let mut info = Info {
            fields: HashMap::new(),
            funcs: HashMap::new(),
            preds: HashMap::new(),
            provides: HashMap::new(),
            member_names: HashMap::new(),
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
