//! Unit tests of the checker: resolution results and a few error messages.

use super::check;
use crate::syntax::ast::*;
use crate::syntax::parse;

fn ok(src: &str) -> Program {
    check(parse(src).expect("parses")).unwrap_or_else(|e| panic!("type errors: {e:#?}"))
}

fn errors(src: &str) -> Vec<String> {
    check(parse(src).expect("parses"))
        .expect_err("should not check")
        .into_iter()
        .map(|e| e.message)
        .collect()
}

#[test]
fn resolves_names_calls_and_length() {
    let p = ok("class A { int f; int[] a;
        static pure int s(int x) { return x; }
        pure int g() requires acc(f); { return f + s(1) + A.s(2); }
        void m(int f) requires acc(a) && a != null; { int n = a.length + f; } }");
    let g = &p.classes[0].members[3];
    let Body::Return(e) = &g.body else { panic!() };
    let ExprKind::Binary { l, .. } = &e.kind else { panic!() };
    let ExprKind::Binary { l: field, r: call, .. } = &l.kind else { panic!() };
    assert!(
        matches!(&field.kind, ExprKind::Field { recv, class: Some(0), .. } if matches!(recv.kind, ExprKind::This))
    );
    assert!(
        matches!(&call.kind, ExprKind::Call { recv: CallRecv::Static(c), target: Some(MemberRef { class: 0, member: 2 }), .. } if c == "A")
    );
    assert_eq!(e.ty, Type::Int);
    let Body::Block(b) = &p.classes[0].members[4].body else { panic!() };
    let StmtKind::Local { init: Some(Rhs::Expr(init)), .. } = &b.stmts[0].kind else { panic!() };
    let ExprKind::Binary { l, r, .. } = &init.kind else { panic!() };
    assert!(matches!(l.kind, ExprKind::Length(_)));
    assert!(matches!(&r.kind, ExprKind::Local(n) if n == "f"));
}

#[test]
fn implicit_instance_call_gets_this() {
    let p = ok("class A { predicate v() { return true; } void m() requires v(); { } }");
    let m = &p.classes[0].members[1];
    assert!(
        matches!(&m.requires[0].kind, ExprKind::Call { recv: CallRecv::Expr(r), .. } if matches!(r.kind, ExprKind::This))
    );
}

#[test]
fn collects_several_errors() {
    let errs = errors("class A { void m() { int x = true; bool b = y && true; } }");
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].contains("expected `int`, found `bool`"));
    assert!(errs[1].contains("unknown name `y`"));
}

#[test]
fn permission_positions() {
    assert!(errors("class A { int x; void m() requires !acc(x); { } }")[0].contains("under `!`"));
    assert!(
        errors("class A { int x; void m() requires acc(x) ==> true; { } }")[0]
            .contains("left of `==>`")
    );
    ok("class A { int x; void m() requires true ==> acc(x); { } }");
    ok("class A { int x; void m(bool c) requires c ? acc(x) : true; { } }");
}

/// Every expression of a checked program is resolved and typed.
fn assert_resolved(e: &Expr) {
    assert!(e.ty != Type::Unknown, "untyped expression at {:?}: {:?}", e.span, e.kind);
    let kids: Vec<&Expr> = match &e.kind {
        ExprKind::Name(n) => panic!("unresolved name `{n}`"),
        ExprKind::Int(_)
        | ExprKind::BigInt(_)
        | ExprKind::Bool(_)
        | ExprKind::Null
        | ExprKind::This
        | ExprKind::Result
        | ExprKind::Local(_) => vec![],
        ExprKind::Field { recv, class, .. } => {
            assert!(class.is_some(), "field without class");
            vec![recv]
        }
        ExprKind::Call { recv, args, target, .. } => {
            assert!(target.is_some(), "call without target");
            let mut v: Vec<&Expr> = args.iter().collect();
            match recv {
                CallRecv::Implicit => panic!("implicit receiver left"),
                CallRecv::Expr(r) => v.push(r),
                CallRecv::Static(_) => {}
            }
            v
        }
        _ => e.children(),
    };
    kids.into_iter().for_each(assert_resolved);
}

fn assert_stmt_resolved(s: &Stmt) {
    match &s.kind {
        StmtKind::Local { init, .. } => init.iter().for_each(assert_rhs_resolved),
        StmtKind::Assign { lhs, rhs } => {
            assert_resolved(lhs);
            assert_rhs_resolved(rhs);
        }
        StmtKind::Call(e)
        | StmtKind::Assert(e)
        | StmtKind::Open(e)
        | StmtKind::Close(e)
        | StmtKind::Use(e)
        | StmtKind::Join(e) => assert_resolved(e),
        StmtKind::Return(e) => e.iter().for_each(assert_resolved),
        StmtKind::If { cond, then, els } => {
            assert_resolved(cond);
            then.stmts.iter().for_each(assert_stmt_resolved);
            els.iter().for_each(|s| assert_stmt_resolved(s));
        }
        StmtKind::While { cond, invariants, body } => {
            assert_resolved(cond);
            invariants.iter().for_each(assert_resolved);
            body.stmts.iter().for_each(assert_stmt_resolved);
        }
        StmtKind::Block(b) => b.stmts.iter().for_each(assert_stmt_resolved),
    }
}

fn assert_rhs_resolved(r: &Rhs) {
    match r {
        Rhs::Expr(e) => assert_resolved(e),
        Rhs::New { args, .. } => args.iter().for_each(assert_resolved),
        Rhs::NewArray { len, .. } => assert_resolved(len),
    }
}

#[test]
fn checked_programs_have_no_placeholders() {
    let sources = [
        include_str!("../../tests/programs/frontend/ok01_syntax.jv"),
        include_str!("../../tests/programs/frontend/ok02_resolution.jv"),
        include_str!("../../tests/programs/frontend/ok03_verified.jv"),
    ];
    for src in sources {
        for class in ok(src).classes {
            for m in &class.members {
                m.requires.iter().chain(&m.ensures).for_each(assert_resolved);
                match &m.body {
                    Body::None => {}
                    Body::Return(e) => assert_resolved(e),
                    Body::Block(b) => b.stmts.iter().for_each(assert_stmt_resolved),
                }
            }
        }
    }
}
