//! Checking member bodies and contracts: statements, right sides, scopes of locals.
//!
//! Architecture invariant: each contract, body and statement is checked under the
//! [`Place`] LANGUAGE.md gives it (preconditions forbid `old`, only postconditions allow
//! `result` and `untouched`, code allows no permissions, ...); the rules themselves live
//! in `expr`.

use super::Env;
use super::expr::{MemberCx, Perm, Place, Role};
use super::types::{OBJECT, converts};
use crate::syntax::InputError;
use crate::syntax::ast::*;

/// Check one member's contracts and body, rewriting them in place.
pub(super) fn member(env: &Env, class: usize, m: &mut Member, errors: &mut Vec<InputError>) {
    if m.kind == MemberKind::Field {
        return;
    }
    let member_name = if m.kind == MemberKind::Constructor {
        format!("{}.new", env.class_sigs[class].name)
    } else {
        format!("{}.{}", env.class_sigs[class].name, m.name.name)
    };
    let params =
        m.params.iter().map(|p| (p.name.name.clone(), p.ty.clone(), p.name.span)).collect();
    let mut cx = MemberCx {
        env,
        class,
        is_static: m.is_static,
        kind: m.kind,
        member_name,
        ret: m.ty.clone(),
        scopes: crate::check::expr::Scopes::new(params),
        errors,
        fresh: 0,
    };
    let (pre, post, body) = match m.kind {
        MemberKind::Pure => (Place::PurePre, Place::PurePost, Place::PureBody),
        MemberKind::Predicate => (Place::Pre, Place::Post, Place::PredicateBody),
        _ => (Place::Pre, Place::Post, Place::Code),
    };
    for e in &mut m.requires {
        cx.assertion(e, pre);
    }
    for e in &mut m.ensures {
        cx.assertion(e, post);
    }
    // LANGUAGE.md section 15: the measure is an `int` over the parameters, evaluated
    // like an `ensures` without `result` (so as a pure precondition is).
    for d in &mut m.decreases {
        cx.expect(d, Place::PurePre, Perm::No("in a `decreases` measure"), &Type::Int);
    }
    if m.kind == MemberKind::Pure {
        let name = m.name.name.clone();
        for e in &m.ensures {
            self_call(e, class, &name, cx.errors);
        }
    }
    match &mut m.body {
        Body::None => {}
        Body::Block(b) => cx.block(b),
        Body::Return(e) if m.kind == MemberKind::Predicate => cx.assertion(e, body),
        Body::Return(e) => {
            let ret = m.ty.clone();
            cx.expect(e, body, Perm::No("in the body of a pure method"), &ret);
        }
    }
}

/// LANGUAGE.md section 15: a pure method's `ensures` may not call the method itself.
fn self_call(e: &Expr, class: usize, name: &str, errors: &mut Vec<InputError>) {
    let mut found: Option<Span> = None;
    e.any(&mut |x| {
        if let ExprKind::Call { target: Some(t), name: n, .. } = &x.kind
            && t.class == class
            && n.name == name
        {
            found = Some(x.span);
            return true;
        }
        false
    });
    if let Some(span) = found {
        errors.push(InputError::type_error(
            format!(
                "the postcondition of pure method `{name}` calls `{name}` itself: state it about `result` instead"
            ),
            span,
            "recursive call in its own postcondition",
        ));
    }
}

const IN_CODE: Perm = Perm::No("in code");

impl MemberCx<'_> {
    fn block(&mut self, b: &mut Block) {
        self.scopes.enter();
        for s in &mut b.stmts {
            self.stmt(s);
        }
        self.scopes.leave();
    }

    fn stmt(&mut self, s: &mut Stmt) {
        let span = s.span;
        match &mut s.kind {
            StmtKind::Local { ty, name, init } => {
                let ty_span = super::type_span(ty, span.start, name.span);
                let ty = if super::perm_elements(ty) {
                    self.errors.push(super::perm_elements_error(ty_span));
                    Type::Unknown
                } else if !self.env.type_exists(ty) {
                    self.error(format!("unknown type `{ty}`"), ty_span, "no class of this name");
                    Type::Unknown
                } else if let Some(why) = super::types::malformed(ty) {
                    self.error(why, ty_span, "not a legal type");
                    Type::Unknown
                } else {
                    ty.clone()
                };
                if let Some(rhs) = init {
                    self.rhs(rhs, &ty);
                }
                self.declare(name, ty);
            }
            StmtKind::Assign { lhs, rhs } => {
                let t = self.lhs(lhs);
                self.rhs(rhs, &t);
            }
            StmtKind::Call(e) => {
                self.call(e, Place::Code, IN_CODE, Role::Stmt);
            }
            StmtKind::If { cond, then, els } => {
                self.assertion(cond, Place::Code);
                self.block(then);
                if let Some(els) = els {
                    self.stmt(els);
                }
            }
            StmtKind::While { cond, invariants, body } => {
                self.assertion(cond, Place::Code);
                for inv in invariants {
                    self.assertion(inv, Place::Invariant);
                }
                self.block(body);
            }
            StmtKind::Assert(e) => self.assertion(e, Place::Assert),
            StmtKind::Join(e) => self.assertion(e, Place::Join),
            StmtKind::Open(e) => {
                self.ghost_instance(e, Place::Code, "`open`");
            }
            StmtKind::Close(e) => {
                self.ghost_instance(e, Place::Code, "`close`");
            }
            StmtKind::Use(e) => {
                self.call(e, Place::Code, IN_CODE, Role::Pure("`use`"));
            }
            StmtKind::Return(e) => self.ret(e.as_mut(), span),
            StmtKind::Block(b) => self.block(b),
        }
    }

    fn ret(&mut self, e: Option<&mut Expr>, span: Span) {
        let ret = self.ret.clone();
        match e {
            Some(e) if ret == Type::Void => {
                self.expr(e, Place::Code, IN_CODE);
                let msg = format!("`{}` returns no value: use `return;`", self.member_name);
                self.error(msg, e.span, "unexpected return value");
            }
            // `return m(..);` with a non-pure `m` is allowed: the call is the whole value.
            Some(e) if matches!(e.kind, ExprKind::Call { .. }) => {
                let t = self.call(e, Place::Code, IN_CODE, Role::Stmt);
                if !converts(self.env, &t, &ret) {
                    self.error(
                        format!("expected `{ret}`, found `{t}`"),
                        e.span,
                        format!("this has type `{t}`"),
                    );
                }
            }
            Some(e) => {
                self.expect(e, Place::Code, IN_CODE, &ret);
            }
            None if ret != Type::Void => {
                let msg = format!("missing return value: `{}` returns `{ret}`", self.member_name);
                self.error(msg, span, "needs a value");
            }
            None => {}
        }
    }

    /// Declare a local in the innermost scope; a name already visible is an error.
    fn declare(&mut self, name: &Ident, ty: Type) {
        if let Some((_, _, first)) = self.lookup_local(&name.name) {
            let first = *first;
            self.errors.push(
                InputError::type_error(
                    format!("`{}` is already declared", name.name),
                    name.span,
                    "declared again",
                )
                .with_note(first, "first declared here"),
            );
            return;
        }
        self.scopes.declare(name.name.clone(), ty, name.span);
    }

    /// The left side of an assignment: a local, a field or an array element.
    fn lhs(&mut self, lhs: &mut Expr) -> Type {
        let t = self.expr(lhs, Place::Code, IN_CODE);
        if let ExprKind::Length(_) = lhs.kind {
            self.error("the `length` of an array cannot be assigned", lhs.span, "immutable");
            return Type::Unknown;
        }
        t
    }

    /// A right side: an expression, a whole (possibly non-pure) call, or `new`.
    fn rhs(&mut self, rhs: &mut Rhs, want: &Type) {
        let span = rhs.span();
        let t = match rhs {
            Rhs::Expr(e) if matches!(e.kind, ExprKind::Call { .. }) => {
                let t = self.call(e, Place::Code, IN_CODE, Role::Stmt);
                if t == Type::Void {
                    self.error("this call returns no value", span, "void call");
                    return;
                }
                t
            }
            Rhs::Expr(e) => {
                let t = self.expr(e, Place::Code, IN_CODE);
                if *want == Type::Perm && t == Type::Int {
                    // `perm q = 1/2;`: exact division (LANGUAGE.md section 11).
                    super::expr::promote(e);
                    Type::Perm
                } else {
                    t
                }
            }
            Rhs::New { class, args, .. } => self.new_object(class, args),
            Rhs::NewArray { elem, len, .. } => {
                self.expect(len, Place::Code, IN_CODE, &Type::Int);
                if *elem == Type::Perm || super::perm_elements(elem) {
                    self.errors.push(super::perm_elements_error(span));
                    return;
                }
                let arr = Type::Array(Box::new(elem.clone()));
                if let Some(why) = super::types::malformed(&arr) {
                    self.error(why, span, "not a legal type");
                    Type::Unknown
                } else if self.env.type_exists(elem) {
                    arr
                } else {
                    self.error(format!("unknown type `{elem}`"), span, "no class of this name");
                    Type::Unknown
                }
            }
        };
        if !converts(self.env, &t, want) {
            self.error(
                format!("expected `{want}`, found `{t}`"),
                span,
                format!("this has type `{t}`"),
            );
        }
    }

    fn new_object(&mut self, class: &Ident, args: &mut [Expr]) -> Type {
        let Some(ci) = self.env.class(&class.name) else {
            let msg = if class.name == OBJECT {
                "`Object` is a built-in class with no constructor".to_string()
            } else {
                format!("unknown class `{}`", class.name)
            };
            self.error(msg, class.span, "cannot create this");
            for a in args.iter_mut() {
                self.expr(a, Place::Code, Perm::No("as a call argument"));
            }
            return Type::Unknown;
        };
        if self.env.class_sigs[ci].is_interface {
            self.error(
                format!(
                    "`{}` is an interface: only a class that implements it can be created with `new`",
                    class.name
                ),
                class.span,
                "cannot create an interface",
            );
            for a in args.iter_mut() {
                self.expr(a, Place::Code, Perm::No("as a call argument"));
            }
            return Type::Unknown;
        }
        let cs = &self.env.class_sigs[ci];
        let params = cs.ctor.map(|mi| cs.sigs[mi].params.clone()).unwrap_or_default();
        let callee = format!("{}.new", cs.name);
        self.args(args, &params, &callee, class.span, Place::Code);
        Type::Class(class.name.clone())
    }
}
