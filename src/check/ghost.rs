//! The ghost rule (LANGUAGE.md sections 13 and 14): quantifiers and sequences are
//! specification, erased at run time, so code may not depend on them.
//!
//! Architecture invariant: runs on a resolved, typed program (after `expr` and `stmt`)
//! and only reports; it rewrites nothing. An expression is *ghost* when it has a
//! sequence type, contains a quantifier, a ghost sub-expression, or a call of a
//! specification-only pure method (one with a sequence parameter or result, or a ghost
//! body, through calls too: a fixpoint). In code, a ghost expression may only be the
//! right side of a sequence-typed local or an argument for a sequence-typed parameter
//! of a method or constructor; a quantifier is never allowed in code. Assertions, pure
//! bodies and the arguments of `open`/`close`/`use` are not code here.

use crate::syntax::InputError;
use crate::syntax::ast::*;
use std::collections::HashSet;

/// The specification-only pure methods of a program.
pub fn spec_only(program: &Program) -> HashSet<MemberRef> {
    let mut out = HashSet::new();
    let pures = || {
        program.classes.iter().enumerate().flat_map(|(ci, c)| {
            c.members.iter().enumerate().filter_map(move |(mi, m)| {
                (m.kind == MemberKind::Pure).then_some((MemberRef { class: ci, member: mi }, m))
            })
        })
    };
    for (r, m) in pures() {
        if matches!(m.ty, Type::Seq(_)) || m.params.iter().any(|p| matches!(p.ty, Type::Seq(_))) {
            out.insert(r);
        }
    }
    loop {
        let mut changed = false;
        for (r, m) in pures() {
            if out.contains(&r) {
                continue;
            }
            if let Body::Return(e) = &m.body
                && is_ghost(e, program, &out)
            {
                out.insert(r);
                changed = true;
            }
        }
        if !changed {
            return out;
        }
    }
}

/// Is `e` ghost (see the module doc)?
pub fn is_ghost(e: &Expr, program: &Program, spec: &HashSet<MemberRef>) -> bool {
    e.any(&mut |x| match &x.kind {
        ExprKind::Quant(_) => true,
        ExprKind::Call { target: Some(t), .. } => {
            let m = &program.classes[t.class].members[t.member];
            // A method call stands only as a whole statement or right side, where
            // `Cx::call` checks its arguments one by one.
            m.kind == MemberKind::Pure && spec.contains(t)
        }
        _ => matches!(x.ty, Type::Seq(_)),
    })
}

struct Cx<'a> {
    program: &'a Program,
    spec: HashSet<MemberRef>,
    errors: &'a mut Vec<InputError>,
}

/// Check every method and constructor body of `program`.
pub fn check(program: &Program, errors: &mut Vec<InputError>) {
    let mut cx = Cx { program, spec: spec_only(program), errors };
    for c in &program.classes {
        for m in &c.members {
            if let Body::Block(b) = &m.body {
                cx.block(b);
            }
        }
    }
}

impl Cx<'_> {
    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Local { ty, init: Some(rhs), .. } => {
                self.rhs(rhs, matches!(ty, Type::Seq(_)))
            }
            StmtKind::Local { init: None, .. } => {}
            StmtKind::Assign { lhs, rhs } => {
                for c in lhs.children() {
                    self.code(c, "an assignment's target");
                }
                let to_seq_local =
                    matches!(lhs.kind, ExprKind::Local(_)) && matches!(lhs.ty, Type::Seq(_));
                self.rhs(rhs, to_seq_local);
            }
            StmtKind::Call(e) => self.call(e),
            StmtKind::If { cond, then, els } => {
                self.code(cond, "an `if` condition");
                self.block(then);
                if let Some(els) = els {
                    self.stmt(els);
                }
            }
            StmtKind::While { cond, body, .. } => {
                self.code(cond, "a `while` condition");
                self.block(body);
            }
            StmtKind::Return(Some(e)) if matches!(e.kind, ExprKind::Call { .. }) => self.call(e),
            StmtKind::Return(Some(e)) => self.code(e, "the value a method returns"),
            StmtKind::Return(None) => {}
            StmtKind::Block(b) => self.block(b),
            // Assertions and ghost operations may use ghost expressions freely.
            StmtKind::Assert(_)
            | StmtKind::Join(_)
            | StmtKind::Open(_)
            | StmtKind::Close(_)
            | StmtKind::Use(_) => {}
        }
    }

    /// A right side; `to_seq` when it is stored in a sequence-typed local.
    fn rhs(&mut self, rhs: &Rhs, to_seq: bool) {
        match rhs {
            Rhs::Expr(e) if to_seq => {
                self.no_quantifier(e);
            }
            Rhs::Expr(e) if is_method_call(e, self.program) => self.call(e),
            Rhs::Expr(e) => self.code(e, "a value stored by code"),
            Rhs::New { args, class, .. } => {
                let params = self
                    .program
                    .classes
                    .iter()
                    .find(|c| c.name.name == class.name)
                    .and_then(|c| c.members.iter().find(|m| m.kind == MemberKind::Constructor))
                    .map(|m| m.params.iter().map(|p| p.ty.clone()).collect::<Vec<_>>())
                    .unwrap_or_default();
                self.args(args, &params);
            }
            Rhs::NewArray { len, .. } => self.code(len, "an array length"),
        }
    }

    /// A call standing as a statement or a whole right side: a method's arguments are
    /// checked one by one against its parameters; a pure call is an expression.
    fn call(&mut self, e: &Expr) {
        let ExprKind::Call { recv, args, target: Some(t), .. } = &e.kind else {
            return self.code(e, "code");
        };
        let m = &self.program.classes[t.class].members[t.member];
        if m.kind == MemberKind::Pure {
            return self.code(e, "code");
        }
        if let CallRecv::Expr(r) = recv {
            self.code(r, "a call's receiver");
        }
        let params: Vec<Type> = m.params.iter().map(|p| p.ty.clone()).collect();
        self.args(args, &params);
    }

    fn args(&mut self, args: &[Expr], params: &[Type]) {
        for (a, p) in args.iter().zip(params) {
            if matches!(p, Type::Seq(_)) {
                self.no_quantifier(a);
            } else {
                self.code(a, "an argument for a parameter that is not a sequence");
            }
        }
    }

    /// `e` stands in code where a ghost expression may not.
    fn code(&mut self, e: &Expr, what: &str) {
        if self.no_quantifier(e) {
            return;
        }
        if is_ghost(e, self.program, &self.spec) {
            let at = e;
            self.errors.push(InputError::type_error(
                format!(
                    "code cannot use this ghost value ({what}): sequences, and pure methods over them, exist only for verification; code may only store a sequence in a sequence-typed local or pass it for a sequence parameter"
                ),
                at.span,
                "ghost expression in code",
            ));
        }
    }

    /// Report a quantifier in code; true if there was one.
    fn no_quantifier(&mut self, e: &Expr) -> bool {
        let mut found = None;
        e.any(&mut |x| {
            if let ExprKind::Quant(_) = x.kind {
                found = Some(x.span);
                return true;
            }
            false
        });
        if let Some(span) = found {
            self.errors.push(InputError::type_error(
                "a quantifier is specification: it may stand in contracts, invariants, `assert`, `join`, predicate and pure bodies, not in code",
                span,
                "quantifier in code",
            ));
            return true;
        }
        false
    }
}

fn is_method_call(e: &Expr, program: &Program) -> bool {
    matches!(&e.kind, ExprKind::Call { target: Some(t), .. }
        if program.classes[t.class].members[t.member].kind != MemberKind::Pure)
}
