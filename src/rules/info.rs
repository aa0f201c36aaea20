//! Facts about the program the rules look up often, computed once per program: the
//! qualified names of fields and predicates, the Z3 function of each pure method,
//! which fields of `this` each predicate provides (for open inference), and what
//! interfaces bring (LANGUAGE.md section 10): predicate families, the class members
//! that implement each interface member, and the classes of each interface.
//!
//! A predicate family is the set of predicates that name one instance: an interface's
//! abstract predicate, those of the interfaces it extends or that extend it with the
//! same name, and each implementing class's predicate. Its smallest member is its
//! representative, and chunks are keyed by the representative, so `o.p(a)` is one
//! chunk whichever static type names it. A family has at most one member per class
//! (all its members share one name), which is the body an instance of an object of
//! that class has.
//!
//! Architecture invariant: derived only from the checked AST; immutable afterwards.

use crate::rules::sort_of;
use crate::state::term::{Func, Sort};
use crate::syntax::ast::{
    Block, Body, CallRecv, Expr, ExprKind, MemberKind, MemberRef, Program, Rhs, Stmt, StmtKind,
};
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
    /// Each predicate's family representative (itself, for a predicate no interface
    /// names).
    pub family: HashMap<MemberRef, MemberRef>,
    /// The member of a family (by representative) declared in a class.
    pub family_member: HashMap<(MemberRef, usize), MemberRef>,
    /// For each class member, the interface members it implements (those of every
    /// interface its class converts to, nearest first).
    pub implements: HashMap<MemberRef, Vec<MemberRef>>,
    /// For each interface member, the class members that implement it.
    pub implemented_by: HashMap<MemberRef, Vec<MemberRef>>,
    /// For each class or interface, whether it is an interface.
    pub is_interface: Vec<bool>,
    /// For each class or interface, every interface it converts to, nearest first.
    pub ancestors: Vec<Vec<usize>>,
    /// The declaring class of each qualified field name.
    pub field_class: HashMap<Rc<str>, usize>,
    /// Classes and interfaces by name.
    pub class_index: HashMap<String, usize>,
    /// The pure methods whose definitions can reach themselves through `deps`
    /// (recursive, directly or not): only these need fuel to stop unrolling.
    pub recursive: HashSet<MemberRef>,
    /// The strongly connected component of each pure method in `deps`.
    pub group: HashMap<MemberRef, usize>,
    /// The components in which some method declares `decreases`.
    measured: HashSet<usize>,
    /// Pure-method definitions translated so far for this program (with and without
    /// inference), shared by the members verified with this `Info`: each is translated
    /// on a solver of its own, so it is the same whichever member asked first.
    pub defs: [crate::rules::definition::Defs; 2],
    /// Whether a translation was cut short (time budget, interrupt): its definition
    /// holds but may say less than it would have, so it is not kept for the next
    /// member.
    pub defs_partial: std::cell::Cell<bool>,
    /// The pure methods in a fixed order (`MemberRef` order).
    pub func_order: Vec<MemberRef>,
}

impl Info {
    /// Drop the pure-method definitions translated so far.
    pub fn forget_definitions(&self) {
        for d in &self.defs {
            d.borrow_mut().clear();
        }
        self.defs_partial.set(false);
    }

    /// A new member starts: the definitions translated so far are kept (each is a
    /// function of the program alone), unless a translation was cut short.
    pub fn start_member(&self) {
        if self.defs_partial.get() {
            self.forget_definitions();
        }
    }

    /// The pure methods member `r`'s check may meet, in `MemberRef` order: those its
    /// contract and body call, and those called by what they reach (the bodies of
    /// predicates and of the pure methods found, the contracts of methods and
    /// constructors called). Found from the program's text alone, so the definitions
    /// translated for a member depend on the member only; one its path meets anyway
    /// (through an interface's family, say) is translated when met.
    pub fn pure_methods_reached(&self, prog: &Program, r: MemberRef) -> Vec<MemberRef> {
        let mut seen: HashSet<MemberRef> = HashSet::new();
        let mut out: Vec<MemberRef> = vec![];
        let mut todo = vec![r];
        let mut exprs: Vec<&Expr> = vec![];
        while let Some(m) = todo.pop() {
            if !seen.insert(m) {
                continue;
            }
            let Some(mem) = prog.classes.get(m.class).and_then(|c| c.members.get(m.member)) else {
                continue;
            };
            exprs.clear();
            exprs.extend(mem.requires.iter().chain(&mem.ensures));
            let mut news: Vec<&str> = vec![];
            match &mem.body {
                Body::Return(e) => exprs.push(e),
                // A method's body matters for the member itself; for a method called,
                // its contract is what the caller's check uses.
                Body::Block(b) if m == r => block_exprs(b, &mut exprs, &mut news),
                _ => {}
            }
            let mut calls = vec![];
            for e in &exprs {
                calls_in(e, &mut calls);
            }
            for c in calls {
                if self.funcs.contains_key(&c) && !out.contains(&c) {
                    out.push(c);
                }
                todo.push(c);
            }
            for name in news {
                let Some(&class) = self.class_index.get(name) else { continue };
                let c = &prog.classes[class];
                for (mi, cm) in c.members.iter().enumerate() {
                    if cm.kind == MemberKind::Constructor {
                        todo.push(MemberRef { class, member: mi });
                    }
                }
            }
        }
        out.sort();
        out
    }

    pub fn new(prog: &Program) -> Info {
        let mut info = Info {
            fields: HashMap::new(),
            funcs: HashMap::new(),
            preds: HashMap::new(),
            provides: HashMap::new(),
            member_names: HashMap::new(),
            func_members: HashMap::new(),
            deps: HashMap::new(),
            family: HashMap::new(),
            family_member: HashMap::new(),
            implements: HashMap::new(),
            implemented_by: HashMap::new(),
            is_interface: prog.classes.iter().map(|c| c.is_interface).collect(),
            ancestors: ancestors(prog),
            field_class: HashMap::new(),
            class_index: prog
                .classes
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.name.clone(), i))
                .collect(),
            recursive: HashSet::new(),
            group: HashMap::new(),
            measured: HashSet::new(),
            defs: Default::default(),
            defs_partial: std::cell::Cell::new(false),
            func_order: Vec::new(),
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
                        let q: Rc<str> = name.into();
                        info.field_class.insert(q.clone(), ci);
                        info.fields.insert((ci, m.name.name.clone()), q);
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
        info.interfaces(prog);
        let funcs: Vec<MemberRef> = info.funcs.keys().copied().collect();
        for f in &funcs {
            let d = pure_deps(prog, &info, *f);
            info.deps.insert(*f, d);
        }
        // Dispatch makes an interface's pure method depend on its implementations
        // (before the recursion groups: `I.q -> C.q -> I.q` is recursion).
        info.dispatch_deps();
        let mut order = funcs.clone();
        order.sort();
        info.group = components(&info.deps, &order);
        info.func_order = order;
        let mut group_size: HashMap<usize, usize> = HashMap::new();
        for g in info.group.values() {
            *group_size.entry(*g).or_default() += 1;
        }
        for f in &funcs {
            let member = &prog.classes[f.class].members[f.member];
            if !member.decreases.is_empty()
                && let Some(g) = info.group.get(f)
            {
                info.measured.insert(*g);
            }
        }
        for f in funcs {
            let self_call = info.deps.get(&f).is_some_and(|d| d.contains(&f));
            let shared = info.group.get(&f).is_some_and(|g| group_size.get(g) > Some(&1));
            if self_call || shared {
                info.recursive.insert(f);
            }
        }
        info
    }

    /// Implementations, families, and the dispatch dependencies of interface pure
    /// methods (each depends on its implementations' definitions).
    fn interfaces(&mut self, prog: &Program) {
        // Union-find over predicates, by member.
        let mut parent: HashMap<MemberRef, MemberRef> = HashMap::new();
        fn find(parent: &mut HashMap<MemberRef, MemberRef>, x: MemberRef) -> MemberRef {
            let mut r = x;
            while let Some(&p) = parent.get(&r) {
                if p == r {
                    break;
                }
                r = p;
            }
            parent.insert(x, r);
            r
        }
        for (ci, c) in prog.classes.iter().enumerate() {
            for (mi, m) in c.members.iter().enumerate() {
                if m.is_static
                    || !matches!(
                        m.kind,
                        MemberKind::Method | MemberKind::Pure | MemberKind::Predicate
                    )
                {
                    continue;
                }
                let r = MemberRef { class: ci, member: mi };
                for &a in &self.ancestors[ci] {
                    let Some(ai) = prog.classes[a]
                        .members
                        .iter()
                        .position(|x| x.name.name == m.name.name && x.kind == m.kind)
                    else {
                        continue;
                    };
                    let ar = MemberRef { class: a, member: ai };
                    if !c.is_interface {
                        self.implements.entry(r).or_default().push(ar);
                        self.implemented_by.entry(ar).or_default().push(r);
                    }
                    if m.kind == MemberKind::Predicate {
                        let (x, y) = (find(&mut parent, r), find(&mut parent, ar));
                        if x != y {
                            let (lo, hi) = if x < y { (x, y) } else { (y, x) };
                            parent.insert(hi, lo);
                        }
                    }
                }
            }
        }
        let preds: Vec<MemberRef> = self.preds.keys().copied().collect();
        for p in preds {
            let rep = find(&mut parent, p);
            self.family.insert(p, rep);
            self.family_member.insert((rep, p.class), p);
        }
    }

    /// An interface pure method's definition mentions its implementations.
    fn dispatch_deps(&mut self) {
        for (i, impls) in &self.implemented_by {
            if self.funcs.contains_key(i) {
                let d = self.deps.entry(*i).or_default();
                for c in impls {
                    if !d.contains(c) {
                        d.push(*c);
                    }
                }
            }
        }
    }

    /// The family (representative) of predicate `p`.
    pub fn family_of(&self, p: MemberRef) -> MemberRef {
        self.family.get(&p).copied().unwrap_or(p)
    }

    /// Is `r` a member of an interface?
    pub fn in_interface(&self, r: MemberRef) -> bool {
        self.is_interface.get(r.class).copied().unwrap_or(false)
    }

    /// The classes (not interfaces) whose objects may carry a member of interface `i`.
    pub fn classes_of(&self, i: usize) -> Vec<usize> {
        (0..self.is_interface.len())
            .filter(|&c| !self.is_interface[c] && self.ancestors[c].contains(&i))
            .collect()
    }

    /// Are `a` and `b` the same pure method or mutually recursive (each reaches the
    /// other through `deps`: one strongly connected component)?
    /// Does a method of `r`'s recursion group declare `decreases`?
    pub fn group_measured(&self, r: MemberRef) -> bool {
        self.group.get(&r).is_some_and(|g| self.measured.contains(g))
    }

    pub fn same_group(&self, a: MemberRef, b: MemberRef) -> bool {
        a == b || self.group.get(&a).is_some_and(|g| self.group.get(&b) == Some(g))
    }

    pub fn field(&self, class: usize, name: &str) -> Rc<str> {
        self.fields
            .get(&(class, name.to_string()))
            .cloned()
            .unwrap_or_else(|| format!("?.{name}").into())
    }
}

/// Every interface each class or interface converts to, nearest first (each once).
fn ancestors(prog: &Program) -> Vec<Vec<usize>> {
    let index: HashMap<&str, usize> =
        prog.classes.iter().enumerate().map(|(i, c)| (c.name.name.as_str(), i)).collect();
    let direct: Vec<Vec<usize>> = prog
        .classes
        .iter()
        .map(|c| {
            c.supers
                .iter()
                .filter_map(|s| index.get(s.name.as_str()).copied())
                .filter(|&i| prog.classes[i].is_interface)
                .collect()
        })
        .collect();
    (0..prog.classes.len())
        .map(|ci| {
            let mut out: Vec<usize> = vec![];
            let mut queue: std::collections::VecDeque<usize> = direct[ci].iter().copied().collect();
            while let Some(i) = queue.pop_front() {
                if i == ci || out.contains(&i) {
                    continue;
                }
                out.push(i);
                queue.extend(direct[i].iter().copied());
            }
            out
        })
        .collect()
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
        // A part of the permission provides the field to read (`acc(this.f, 1/2)`,
        // `acc(this.q(), p)`).
        ExprKind::Frac { acc, .. } => walk(prog, info, acc, seen, out),
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
    // Every kind of sub-expression: a call inside a sequence operation or a quantifier
    // (`seq(val) + next.contents()`, `forall int i :: .. f(i) ..`) is a dependency
    // like any other, or a recursive method would look non-recursive (unrolled without
    // fuel) and its recursion group would be missed.
    let mut stack: Vec<&Expr> = vec![e];
    while let Some(e) = stack.pop() {
        if let ExprKind::Call { target: Some(t), .. } = &e.kind {
            out.push(*t);
        }
        stack.extend(e.children());
    }
}

/// The expressions of a block, and the classes its `new C(..)` allocate.
fn block_exprs<'a>(b: &'a Block, out: &mut Vec<&'a Expr>, news: &mut Vec<&'a str>) {
    let mut stack: Vec<&Stmt> = b.stmts.iter().rev().collect();
    let rhs = |r: &'a Rhs, out: &mut Vec<&'a Expr>, news: &mut Vec<&'a str>| match r {
        Rhs::Expr(e) => out.push(e),
        Rhs::New { class, args, .. } => {
            out.extend(args);
            news.push(class.name.as_str());
        }
        Rhs::NewArray { len, .. } => out.push(len),
    };
    while let Some(s) = stack.pop() {
        match &s.kind {
            StmtKind::Local { init, .. } => {
                if let Some(r) = init {
                    rhs(r, out, news);
                }
            }
            StmtKind::Assign { lhs, rhs: r } => {
                out.push(lhs);
                rhs(r, out, news);
            }
            StmtKind::Call(e)
            | StmtKind::Assert(e)
            | StmtKind::Open(e)
            | StmtKind::Close(e)
            | StmtKind::Use(e)
            | StmtKind::Join(e) => out.push(e),
            StmtKind::Return(e) => out.extend(e),
            StmtKind::If { cond, then, els } => {
                out.push(cond);
                stack.extend(then.stmts.iter().rev());
                if let Some(e) = els {
                    stack.push(e);
                }
            }
            StmtKind::While { cond, invariants, body } => {
                out.push(cond);
                out.extend(invariants);
                stack.extend(body.stmts.iter().rev());
            }
            StmtKind::Block(b) => stack.extend(b.stmts.iter().rev()),
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
        // A measure's calls too: a measure that calls back into the group is circular.
        for e in mem.requires.iter().chain(&mem.ensures).chain(&mem.decreases) {
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
                // Opening or closing an instance of a family runs the body of the
                // object's class: every member of the family.
                let family = info.family_of(c);
                let mut members: Vec<MemberRef> =
                    info.preds.keys().copied().filter(|&p| info.family_of(p) == family).collect();
                members.sort();
                for p in members {
                    if p == c || seen.insert(p) {
                        todo.push(p);
                    }
                }
            }
        }
    }
    out
}

/// Strongly connected components of `deps` over `nodes` (Tarjan's algorithm, without
/// recursion): each node's component number.
fn components(
    deps: &HashMap<MemberRef, Vec<MemberRef>>,
    nodes: &[MemberRef],
) -> HashMap<MemberRef, usize> {
    let mut index: HashMap<MemberRef, usize> = HashMap::new();
    let mut low: HashMap<MemberRef, usize> = HashMap::new();
    let mut on_stack: HashSet<MemberRef> = HashSet::new();
    let mut stack: Vec<MemberRef> = vec![];
    let mut comp: HashMap<MemberRef, usize> = HashMap::new();
    let mut next = 0;
    let empty = vec![];
    for &root in nodes {
        if index.contains_key(&root) {
            continue;
        }
        // (node, position of its next child)
        let mut work: Vec<(MemberRef, usize)> = vec![(root, 0)];
        index.insert(root, next);
        low.insert(root, next);
        next += 1;
        stack.push(root);
        on_stack.insert(root);
        while let Some(&(v, i)) = work.last() {
            let children = deps.get(&v).unwrap_or(&empty);
            if i < children.len() {
                if let Some(top) = work.last_mut() {
                    top.1 += 1;
                }
                let w = children[i];
                if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(w) {
                    slot.insert(next);
                    low.insert(w, next);
                    next += 1;
                    stack.push(w);
                    on_stack.insert(w);
                    work.push((w, 0));
                } else if on_stack.contains(&w) {
                    let m = low[&v].min(index[&w]);
                    low.insert(v, m);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                let m = low[&u].min(low[&v]);
                low.insert(u, m);
            }
            if low[&v] == index[&v] {
                let id = comp.len();
                while let Some(w) = stack.pop() {
                    on_stack.remove(&w);
                    comp.insert(w, id);
                    if w == v {
                        break;
                    }
                }
            }
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::Info;
    use crate::syntax::ast::MemberRef;

    #[test]
    fn recursion_groups_follow_calls_through_predicates() {
        let p = crate::source::front_end(
            "class A {
               static pure int a(int n) { return n > 0 ? A.b(n - 1) : 0; }
               static pure int b(int n) { return n > 0 ? A.a(n - 1) : 1; }
               static pure int c(int n) { return n > 0 ? A.c(n - 1) : 2; }
               static pure int d(int n) { return A.a(n); }
               int f;
               predicate p() { return acc(f) && e() >= 0; }
               pure int e() requires acc(f); { return f; }
               pure int g() requires p(); { return opening p() in f; }
             }",
        )
        .expect("checks");
        let info = Info::new(&p);
        let m = |i| MemberRef { class: 0, member: i };
        let (a, b, c, d, e, g) = (m(0), m(1), m(2), m(3), m(6), m(7));
        for (f, rec) in [(a, true), (b, true), (c, true), (d, false), (e, false), (g, false)] {
            assert_eq!(info.recursive.contains(&f), rec, "{f:?}");
        }
        assert!(info.same_group(a, b));
        assert!(!info.same_group(a, c) && !info.same_group(d, a));
        // `g`'s definition may mention `e` through the predicate it opens.
        assert!(info.deps[&g].contains(&e));
    }

    #[test]
    fn a_member_reaches_the_pure_methods_its_text_and_callees_name() {
        let p = crate::source::front_end(
            "class A {
               int f;
               static pure int a(int n) { return n; }
               static pure int b(int n) { return A.a(n); }
               static pure int c(int n) { return n; }
               pure int e() requires acc(f); { return f; }
               predicate p() { return acc(f) && e() >= 0; }
               static pure int unused(int n) { return n; }
               A() ensures p(); { f = 0; close p(); }
               static void callee(int x) ensures A.c(x) == x; { }
               static void m(int x) {
                 A o = new A();
                 if (x > 0) { assert A.b(x) == x; }
                 while (x > 0) invariant A.c(x) >= 0; { x = x - 1; }
                 A.callee(x);
               }
               static void alone() { }
             }",
        )
        .expect("checks");
        let info = Info::new(&p);
        let m = |i| MemberRef { class: 0, member: i };
        let (a, b, c, e) = (m(1), m(2), m(3), m(4));
        // `b` and `a` from the body, `c` from the invariant and the callee's contract,
        // `e` through the constructor's contract and the predicate it names; never
        // `unused`.
        assert_eq!(info.pure_methods_reached(&p, m(9)), vec![a, b, c, e]);
        assert_eq!(info.pure_methods_reached(&p, m(10)), vec![]);
    }
}
