//! Checking expressions and assertions: name resolution, typing, and where each
//! construct may stand.
//!
//! Architecture invariant: every expression is checked under a [`Place`] (the kind of
//! code or assertion it sits in, which decides whether `old`, `result`, `untouched` and
//! permissions are allowed at all) and a [`Perm`] (whether a permission is allowed at
//! this very position). An expression that gets an error has type `Unknown`, which no
//! later rule complains about, so each mistake is reported once.

use super::types::Hierarchy;
use super::types::{OBJECT, comparable, converts, join};
use super::{Env, Sig};
use crate::syntax::InputError;
use crate::syntax::ast::*;

/// What an expression belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// Statements of a method or constructor body (conditions, right sides, arguments).
    Code,
    Pre,
    Post,
    /// Inside `untouched(..)` of a postcondition.
    Untouched,
    PureBody,
    PurePre,
    PurePost,
    PredicateBody,
    Invariant,
    Assert,
    Join,
}

impl Place {
    fn is_assertion(self) -> bool {
        !matches!(self, Place::Code | Place::PureBody)
    }

    fn old_allowed(self) -> bool {
        matches!(
            self,
            Place::Code
                | Place::Post
                | Place::Untouched
                | Place::PurePost
                | Place::Invariant
                | Place::Assert
                | Place::Join
        )
    }

    fn describe(self) -> &'static str {
        match self {
            Place::Code => "code",
            Place::Pre => "a precondition",
            Place::Post => "a postcondition",
            Place::Untouched => "`untouched`",
            Place::PureBody => "the body of a pure method",
            Place::PurePre => "the precondition of a pure method",
            Place::PurePost => "the postcondition of a pure method",
            Place::PredicateBody => "a predicate body",
            Place::Invariant => "a loop invariant",
            Place::Assert => "an `assert`",
            Place::Join => "a `join`",
        }
    }
}

/// May a permission (`acc`, a predicate instance, `untouched`) stand here?
#[derive(Clone, Copy, Debug)]
pub(super) enum Perm {
    Yes,
    /// No, because it would be "under `||`", "in `==`", ...
    No(&'static str),
}

/// What a call must be, given where it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// Inside an expression: a pure method, or (in assertions) a predicate instance.
    Expr,
    /// A whole statement or right side: a method or pure method.
    Stmt,
    /// After `open`, `close`, `opening`.
    Predicate(&'static str),
    /// After `use`, `using`.
    Pure(&'static str),
}

/// The checker's state within one member.
pub(super) struct MemberCx<'a> {
    pub env: &'a Env,
    pub class: usize,
    pub is_static: bool,
    pub kind: MemberKind,
    pub member_name: String,
    /// The return type (`Void` for void methods and constructors).
    pub ret: Type,
    /// Lexical scopes of locals (parameters first): name, type, declaration span.
    pub scopes: Scopes,
    pub errors: &'a mut Vec<InputError>,
    /// Numbers the bound variables trigger inference adds (section 13, step 5).
    pub fresh: u32,
}

impl MemberCx<'_> {
    pub fn error(&mut self, message: impl Into<String>, span: Span, label: impl Into<String>) {
        self.errors.push(InputError::type_error(message, span, label));
    }

    pub fn lookup_local(&self, name: &str) -> Option<&(String, Type, Span)> {
        self.scopes.lookup(name)
    }

    fn class_name(&self) -> &str {
        &self.env.class_sigs[self.class].name
    }

    /// Check `e` and require type `want`; returns whether it matched.
    pub fn expect(&mut self, e: &mut Expr, place: Place, perm: Perm, want: &Type) -> bool {
        let t = self.expr(e, place, perm);
        if converts(self.env, &t, want) {
            if *want == Type::Perm && t == Type::Int {
                promote(e);
            }
            true
        } else {
            self.error(
                format!("expected `{want}`, found `{t}`"),
                e.span,
                format!("this has type `{t}`"),
            );
            false
        }
    }

    /// Check an assertion (or a condition): a boolean expression.
    pub fn assertion(&mut self, e: &mut Expr, place: Place) {
        let perm = if place.is_assertion() { Perm::Yes } else { Perm::No("in code") };
        self.expect(e, place, perm, &Type::Bool);
    }

    /// Check an expression, fill its `ty` and return it.
    pub fn expr(&mut self, e: &mut Expr, place: Place, perm: Perm) -> Type {
        let mut t = self.expr_kind(e, place, perm);
        if !self.env.type_exists(&t) {
            // A class that does not exist was already reported where it was declared.
            t = Type::Unknown;
        }
        e.ty = t.clone();
        t
    }

    /// Report a permission where none may stand; `None` when it is fine.
    fn permission_misplaced(&mut self, what: &str, span: Span, place: Place, perm: Perm) -> bool {
        if place == Place::PurePost {
            self.error(
                format!("{what} cannot appear in the postcondition of a pure method: it states facts about `result`, not permissions"),
                span,
                "permission in a pure postcondition",
            );
            true
        } else if !place.is_assertion() {
            self.error(
                format!(
                    "{what} can only be used in assertions (requires, ensures, invariants, predicate bodies, assert, join), not in {}",
                    place.describe()
                ),
                span,
                "permission outside an assertion",
            );
            true
        } else if let Perm::No(why) = perm {
            self.error(
                format!("{what} cannot stand {why}: a permission may only be an operand of `&&`, a branch of `?:` or the right side of `==>`"),
                span,
                "misplaced permission",
            );
            true
        } else {
            false
        }
    }

    fn expr_kind(&mut self, e: &mut Expr, place: Place, perm: Perm) -> Type {
        let span = e.span;
        match &mut e.kind {
            ExprKind::Int(_) | ExprKind::BigInt(_) => Type::Int,
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Null => Type::Null,
            ExprKind::This => self.this_type(span),
            ExprKind::Local(_) => unreachable!("the parser produces no resolved locals"),
            ExprKind::Result => self.result_type(span, place),
            ExprKind::Name(_) => self.name(e),
            ExprKind::Field { .. } => self.field(e, place),
            ExprKind::Length(inner) => {
                self.expr(inner, place, Perm::No("inside `.length`"));
                Type::Int
            }
            ExprKind::Index { arr, idx } => {
                let at = self.expr(arr, place, Perm::No("as an array"));
                self.expect(idx, place, Perm::No("as an index"), &Type::Int);
                match at {
                    Type::Array(t) => *t,
                    Type::Seq(t) => {
                        let ExprKind::Index { arr, idx } =
                            std::mem::replace(&mut e.kind, ExprKind::Null)
                        else {
                            unreachable!()
                        };
                        e.kind = ExprKind::SeqIndex { seq: arr, idx };
                        *t
                    }
                    Type::Unknown => Type::Unknown,
                    t => {
                        self.error(
                            format!("cannot index a value of type `{t}`"),
                            arr.span,
                            "not an array",
                        );
                        Type::Unknown
                    }
                }
            }
            ExprKind::Call { recv: CallRecv::Implicit, name, args, .. }
                if name.name == "perm"
                    && args.len() == 1
                    && self.env.member(self.class, "perm").is_none() =>
            {
                // `perm(loc)` (a contextual keyword, LANGUAGE.md section 11).
                let loc = args.pop().unwrap_or_else(|| Expr::new(ExprKind::Null, span));
                e.kind = ExprKind::PermOf(Box::new(loc));
                self.perm_of(e, place)
            }
            ExprKind::Call { .. } => self.call_kind(e, place, perm, Role::Expr),
            ExprKind::Unary { op, e: inner } => match op {
                UnOp::Not => {
                    self.expect(inner, place, Perm::No("under `!`"), &Type::Bool);
                    Type::Bool
                }
                UnOp::Neg => {
                    let t = self.expr(inner, place, Perm::No("under `-`"));
                    match t {
                        Type::Perm => Type::Perm,
                        Type::Int | Type::Unknown => t,
                        t => {
                            self.error(
                                format!("expected `int` or `perm`, found `{t}`"),
                                inner.span,
                                format!("this has type `{t}`"),
                            );
                            Type::Unknown
                        }
                    }
                }
            },
            ExprKind::Binary { op: BinOp::Add, .. } | ExprKind::SeqConcat(..) => self.add(e, place),
            ExprKind::Binary { op, l, r } => self.binary(*op, l, r, place, perm),
            ExprKind::Quant(_) => self.quant(e, place, perm),
            ExprKind::SeqLit { .. } => self.seq_lit(e, place),
            ExprKind::SeqLen(s) => {
                self.seq_operand(s, place);
                Type::Int
            }
            ExprKind::SeqIndex { seq, idx } => {
                let t = self.seq_operand(seq, place);
                self.expect(idx, place, Perm::No("as an index"), &Type::Int);
                t.map_or(Type::Unknown, |t| *t)
            }
            ExprKind::Slice { seq, lo, hi } => {
                let t = self.seq_operand(seq, place);
                for b in lo.iter_mut().chain(hi.iter_mut()) {
                    self.expect(b, place, Perm::No("in a slice"), &Type::Int);
                }
                t.map_or(Type::Unknown, Type::Seq)
            }
            ExprKind::SeqContains { seq, elem } => {
                let t = self.seq_operand(seq, place);
                let want = t.map_or(Type::Unknown, |t| *t);
                self.expect(elem, place, Perm::No("in `contains`"), &want);
                Type::Bool
            }
            ExprKind::SeqUpdated { seq, idx, val } => {
                let t = self.seq_operand(seq, place);
                self.expect(idx, place, Perm::No("as an index"), &Type::Int);
                let want = t.clone().map_or(Type::Unknown, |t| *t);
                self.expect(val, place, Perm::No("in `updated`"), &want);
                t.map_or(Type::Unknown, Type::Seq)
            }
            ExprKind::Cond { c, a, b } => {
                self.expect(c, place, Perm::No("in a `?:` condition"), &Type::Bool);
                let ta = self.expr(a, place, perm);
                let tb = self.expr(b, place, perm);
                if ta == Type::Perm || tb == Type::Perm {
                    let ok = |t: &Type| matches!(t, Type::Int | Type::Perm | Type::Unknown);
                    if ok(&ta) && ok(&tb) {
                        promote(a);
                        promote(b);
                        return Type::Perm;
                    }
                }
                join(self.env, &ta, &tb).unwrap_or_else(|| {
                    self.error(
                        format!("the branches of `?:` have different types `{ta}` and `{tb}`"),
                        span,
                        "branches disagree",
                    );
                    Type::Unknown
                })
            }
            ExprKind::Old(inner) => {
                if !place.old_allowed() {
                    self.error(
                        format!(
                            "`old` is not allowed in {}: only in method bodies, postconditions, loop invariants, `assert` and `join`",
                            place.describe()
                        ),
                        span,
                        "`old` not allowed here",
                    );
                    return Type::Unknown;
                }
                self.expr(inner, place, Perm::No("inside `old`"))
            }
            ExprKind::Acc(arg) => {
                if matches!(arg.kind, ExprKind::Call { .. }) {
                    // `acc(e.q(..))` is the instance `e.q(..)` (LANGUAGE.md section 11).
                    let call = std::mem::replace(&mut **arg, Expr::new(ExprKind::Null, span));
                    *e = call;
                    return self.call_kind(e, place, perm, Role::Expr);
                }
                if self.permission_misplaced("`acc`", span, place, perm) {
                    return Type::Unknown;
                }
                self.acc(e, place)
            }
            ExprKind::Frac { .. } => {
                if self.permission_misplaced("`acc`", span, place, perm) {
                    return Type::Unknown;
                }
                self.frac(e, place, perm)
            }
            ExprKind::Write | ExprKind::NoPerm => Type::Perm,
            ExprKind::PermOf(_) => self.perm_of(e, place),
            ExprKind::AccArray(arr) => {
                if self.permission_misplaced("`acc`", span, place, perm) {
                    return Type::Unknown;
                }
                match self.expr(arr, place, Perm::No("inside `acc`")) {
                    Type::Array(_) | Type::Unknown => {}
                    t => self.error(
                        format!("`acc(a[*])` needs an array, found `{t}`"),
                        arr.span,
                        "not an array",
                    ),
                }
                Type::Bool
            }
            ExprKind::Untouched(inner) => {
                if self.permission_misplaced("`untouched`", span, place, perm) {
                    return Type::Unknown;
                }
                let in_post = place == Place::Post
                    && matches!(self.kind, MemberKind::Method | MemberKind::Constructor);
                if !in_post {
                    self.error(
                        format!(
                            "`untouched` is only allowed in postconditions of methods and constructors, not in {}",
                            place.describe()
                        ),
                        span,
                        "`untouched` not allowed here",
                    );
                    return Type::Unknown;
                }
                self.expect(inner, Place::Untouched, Perm::Yes, &Type::Bool);
                Type::Bool
            }
            ExprKind::Opening { pred, body } => {
                self.ghost_instance(pred, place, "`opening`");
                self.expr(body, place, Perm::No("inside `opening`"))
            }
            ExprKind::Using { call, body } => {
                self.call(call, place, Perm::Yes, Role::Pure("`using`"));
                self.expr(body, place, Perm::No("inside `using`"))
            }
        }
    }

    /// `l + r`: integer addition, or concatenation when an operand is a sequence
    /// (LANGUAGE.md section 14: then both are, of one type); rewritten into
    /// `SeqConcat`.
    fn add(&mut self, e: &mut Expr, place: Place) -> Type {
        let is_binary = matches!(e.kind, ExprKind::Binary { .. });
        let (l, r) = match &mut e.kind {
            ExprKind::Binary { l, r, .. } | ExprKind::SeqConcat(l, r) => (l, r),
            _ => unreachable!("add() on another expression"),
        };
        let why = Perm::No("in arithmetic");
        let tl = self.expr(l, place, why);
        let tr = self.expr(r, place, why);
        let seq = matches!(tl, Type::Seq(_)) || matches!(tr, Type::Seq(_));
        let num = |t: &Type| matches!(t, Type::Int | Type::Perm | Type::Unknown);
        if !seq && (tl == Type::Perm || tr == Type::Perm) && num(&tl) && num(&tr) && is_binary {
            // Amounts (LANGUAGE.md section 11).
            promote(l);
            promote(r);
            return Type::Perm;
        }
        if !seq {
            let mut ok = true;
            for (t, x) in [(&tl, &**l), (&tr, &**r)] {
                if !converts(self.env, t, &Type::Int) {
                    self.error(
                        format!("expected `int`, found `{t}`"),
                        x.span,
                        format!("this has type `{t}`"),
                    );
                    ok = false;
                }
            }
            if let ExprKind::SeqConcat(..) = e.kind {
                return Type::Unknown;
            }
            return if ok { Type::Int } else { Type::Unknown };
        }
        let t = if tl == tr || tr == Type::Unknown {
            tl
        } else if tl == Type::Unknown {
            tr
        } else {
            let (elem, other) = if matches!(tl, Type::Seq(_)) { (&tl, &tr) } else { (&tr, &tl) };
            let hint = if matches!(other, Type::Seq(_)) {
                String::new()
            } else {
                " (to add an element, write `s + seq(x)`)".to_string()
            };
            self.error(
                format!("`+` joins two sequences of one type, not `{tl}` and `{tr}`{hint}"),
                l.span.to(r.span),
                format!("a `{elem}` and a `{other}`"),
            );
            return Type::Unknown;
        };
        if let ExprKind::Binary { .. } = e.kind {
            let ExprKind::Binary { l, r, .. } = std::mem::replace(&mut e.kind, ExprKind::Null)
            else {
                unreachable!()
            };
            e.kind = ExprKind::SeqConcat(l, r);
        }
        t
    }

    /// An operand that must be a sequence: its type's element type, or `None` (after
    /// an error, or when it already had one).
    fn seq_operand(&mut self, s: &mut Expr, place: Place) -> Option<Box<Type>> {
        match self.expr(s, place, Perm::No("in a sequence operation")) {
            Type::Seq(t) => Some(t),
            Type::Unknown => None,
            t => {
                self.error(format!("expected a sequence, found `{t}`"), s.span, "not a sequence");
                None
            }
        }
    }

    /// `seq<T>(..)` or `seq(..)`: every element converts to `T` (the first element's
    /// type when `T` is not written; `seq()` needs it written).
    fn seq_lit(&mut self, e: &mut Expr, place: Place) -> Type {
        let span = e.span;
        let ExprKind::SeqLit { elem, elems } = &mut e.kind else { unreachable!() };
        let why = Perm::No("in a sequence literal");
        if *elem == Type::Unknown {
            let Some((first, rest)) = elems.split_first_mut() else {
                self.error(
                    "the empty sequence needs its element type: write `seq<T>()`",
                    span,
                    "element type unknown",
                );
                return Type::Unknown;
            };
            let t = self.expr(first, place, why);
            match &t {
                Type::Null | Type::Void => {
                    self.error(
                        format!(
                            "cannot infer a sequence's element type from `{t}`: write `seq<T>(..)`"
                        ),
                        first.span,
                        "element type unknown",
                    );
                    return Type::Unknown;
                }
                Type::Unknown => {
                    for x in rest.iter_mut() {
                        self.expr(x, place, why);
                    }
                    return Type::Unknown;
                }
                _ => {}
            }
            *elem = t.clone();
            for x in rest.iter_mut() {
                self.expect(x, place, why, &t);
            }
        } else {
            if !self.env.type_exists(elem) {
                self.error(format!("unknown type `{elem}`"), span, "no class of this name");
                return Type::Unknown;
            }
            if let Some(why) = super::types::malformed(&Type::Seq(Box::new(elem.clone()))) {
                self.error(why, span, "not a legal type");
                return Type::Unknown;
            }
            let t = elem.clone();
            for x in elems.iter_mut() {
                self.expect(x, place, why, &t);
            }
        }
        if let Some(why) = super::types::malformed(&Type::Seq(Box::new(elem.clone()))) {
            self.error(why, span, "not a legal type");
            return Type::Unknown;
        }
        Type::Seq(Box::new(elem.clone()))
    }

    /// `s.contains(x)` and `s.updated(i, v)` on a sequence `s`, rewritten into their
    /// nodes: `Ok(type)`. Otherwise `Err` with the receiver's type if it was checked
    /// here (a call of that name on something else), for `resolve_call`.
    fn seq_method(&mut self, e: &mut Expr, place: Place) -> Result<Type, Option<Type>> {
        let ExprKind::Call { recv: CallRecv::Expr(r), name, args, .. } = &mut e.kind else {
            return Err(None);
        };
        if !matches!(name.name.as_str(), "contains" | "updated") {
            return Err(None);
        }
        // A class name as receiver is a static call (`resolve_call`).
        if let ExprKind::Name(n) = &r.kind
            && self.lookup_local(n).is_none()
            && !self.env.member(self.class, n).is_some_and(|(_, _, s)| s.kind == MemberKind::Field)
            && (self.env.class(n).is_some() || n == OBJECT)
        {
            return Err(None);
        }
        let t = self.expr(r, place, Perm::No("as a receiver"));
        let Type::Seq(elem) = t else { return Err(Some(t)) };
        let want = args.len();
        let (arity, what) = if name.name == "contains" { (1, "x") } else { (2, "i, v") };
        if want != arity {
            self.error(
                format!("`{}` on a sequence takes ({what})", name.name),
                name.span,
                "wrong number of arguments",
            );
            for a in args.iter_mut() {
                self.expr(a, place, Perm::No("as a call argument"));
            }
            return Ok(Type::Unknown);
        }
        let seq_t = Type::Seq(elem.clone());
        let ExprKind::Call { recv: CallRecv::Expr(r), name, mut args, .. } =
            std::mem::replace(&mut e.kind, ExprKind::Null)
        else {
            unreachable!()
        };
        if name.name == "contains" {
            let mut x = args.pop().unwrap_or_else(|| Expr::new(ExprKind::Null, name.span));
            self.expect(&mut x, place, Perm::No("in `contains`"), &elem);
            e.kind = ExprKind::SeqContains { seq: r, elem: Box::new(x) };
            Ok(Type::Bool)
        } else {
            let mut v = args.pop().unwrap_or_else(|| Expr::new(ExprKind::Null, name.span));
            let mut i = args.pop().unwrap_or_else(|| Expr::new(ExprKind::Null, name.span));
            self.expect(&mut i, place, Perm::No("as an index"), &Type::Int);
            self.expect(&mut v, place, Perm::No("in `updated`"), &elem);
            e.kind = ExprKind::SeqUpdated { seq: r, idx: Box::new(i), val: Box::new(v) };
            Ok(seq_t)
        }
    }

    /// A quantifier (LANGUAGE.md section 13; section 12 when its body holds a
    /// permission): `int` binders that shadow nothing, a `bool` body, triggers checked
    /// or inferred (`trigger`). Where it may stand is the ghost rule's (`ghost`).
    fn quant(&mut self, e: &mut Expr, place: Place, perm: Perm) -> Type {
        let span = e.span;
        let ExprKind::Quant(q) = &mut e.kind else { unreachable!() };
        let mut ok = true;
        self.scopes.enter();
        for b in &q.vars {
            if b.ty != Type::Int {
                self.error(
                    format!("bound variables have type `int`, not `{}` (nothing else is quantified over)", b.ty),
                    b.name.span,
                    "not an `int`",
                );
                ok = false;
            }
            if let Some((_, _, first)) = self.lookup_local(&b.name.name) {
                let first = *first;
                self.errors.push(
                    InputError::type_error(
                        format!(
                            "bound variable `{}` has the name of a local, parameter or bound variable in scope",
                            b.name.name
                        ),
                        b.name.span,
                        "shadows a name in scope",
                    )
                    .with_note(first, "declared here"),
                );
                ok = false;
            }
            self.scopes.declare(b.name.name.clone(), Type::Int, b.name.span);
        }
        let body_ok = self.expect(&mut q.body, place, perm, &Type::Bool);
        for g in &mut q.triggers {
            for t in &mut g.terms {
                self.expr(t, place, Perm::No("in a trigger"));
            }
        }
        self.scopes.leave();
        let env = self.env;
        let is_pred =
            |t: &MemberRef| env.class_sigs[t.class].sigs[t.member].kind == MemberKind::Predicate;
        // A predicate named by `opening` or `using` is read, not held: a body with
        // `(opening c.valid() in c.val) + i >= 1` is a value quantifier.
        q.permission = {
            let mut stack: Vec<&Expr> = vec![&*q.body];
            let mut found = false;
            while let Some(x) = stack.pop() {
                match &x.kind {
                    ExprKind::Acc(_) | ExprKind::AccArray(_) | ExprKind::Untouched(_) => {
                        found = true;
                        break;
                    }
                    ExprKind::Call { target: Some(t), .. } if is_pred(t) => {
                        found = true;
                        break;
                    }
                    ExprKind::Opening { body, .. } | ExprKind::Using { body, .. } => {
                        stack.push(&**body)
                    }
                    _ => stack.extend(x.children()),
                }
            }
            found
        };
        if q.permission {
            if q.kind == QuantKind::Exists {
                self.error(
                    "`exists` over permissions is out of scope: a quantified permission is a `forall` (section 12)",
                    span,
                    "permission under `exists`",
                );
                return Type::Unknown;
            }
            // Section 12's shape checks and triggers belong to quantified permissions.
            if ok && body_ok {
                if let Err(why) = qp_shape(q) {
                    self.error(
                        format!("not a quantified permission of section 12's shape: {why}"),
                        span,
                        "quantified permission of another shape",
                    );
                    return Type::Unknown;
                }
                return Type::Bool;
            }
            return Type::Unknown;
        }
        if !(ok && body_ok) {
            return Type::Unknown;
        }
        let pure = |t: MemberRef| env.class_sigs[t.class].sigs[t.member].kind == MemberKind::Pure;
        super::trigger::resolve(q, span, &pure, &mut self.fresh, self.errors);
        Type::Bool
    }

    fn this_type(&mut self, span: Span) -> Type {
        if self.is_static {
            self.error(
                format!("`this` is not available in static member `{}`", self.member_name),
                span,
                "no receiver in a static member",
            );
            return Type::Unknown;
        }
        Type::Class(self.class_name().to_string())
    }

    fn result_type(&mut self, span: Span, place: Place) -> Type {
        let ok_place = matches!(place, Place::Post | Place::PurePost | Place::Untouched);
        if ok_place && self.ret != Type::Void {
            return self.ret.clone();
        }
        let msg = if ok_place {
            format!("`result` cannot be used: `{}` returns no value", self.member_name)
        } else {
            format!(
                "`result` is only allowed in postconditions of members that return a value, not in {}",
                place.describe()
            )
        };
        self.error(msg, span, "`result` not allowed here");
        Type::Unknown
    }

    /// Resolve a bare name into a local or a field of `this`.
    fn name(&mut self, e: &mut Expr) -> Type {
        let ExprKind::Name(name) = &e.kind else { unreachable!() };
        let name = name.clone();
        if let Some((_, t, _)) = self.lookup_local(&name) {
            let t = t.clone();
            e.kind = ExprKind::Local(name);
            return t;
        }
        // `write` and `none` (contextual keywords: LANGUAGE.md section 11), unless a
        // field of that name is in scope.
        if (name == "write" || name == "none")
            && !self
                .env
                .member(self.class, &name)
                .is_some_and(|(_, _, s)| s.kind == MemberKind::Field)
        {
            e.kind = if name == "write" { ExprKind::Write } else { ExprKind::NoPerm };
            return Type::Perm;
        }
        if let Some((_, _, sig)) = self.env.member(self.class, &name)
            && sig.kind == MemberKind::Field
        {
            let t = sig.ty.clone();
            if self.is_static {
                self.error(
                    format!(
                        "field `{name}` needs `this`, which static member `{}` does not have",
                        self.member_name
                    ),
                    e.span,
                    "field of `this` in a static member",
                );
                return Type::Unknown;
            }
            let recv = Expr { kind: ExprKind::This, span: e.span, ty: self.this_class() };
            let field = Ident { name, span: e.span };
            e.kind = ExprKind::Field { recv: Box::new(recv), field, class: Some(self.class) };
            return t;
        }
        let msg = if self.env.class(&name).is_some() || name == OBJECT {
            format!("`{name}` is a class, not a value")
        } else if self.env.member(self.class, &name).is_some() {
            format!("`{name}` is not a field; call it with `{name}(..)`")
        } else {
            format!("unknown name `{name}`")
        };
        self.error(msg, e.span, "not a local, parameter or field");
        Type::Unknown
    }

    fn this_class(&self) -> Type {
        Type::Class(self.class_name().to_string())
    }

    /// `recv.f`: a field of a class, or `length` of an array.
    fn field(&mut self, e: &mut Expr, place: Place) -> Type {
        let ExprKind::Field { recv, field, class } = &mut e.kind else { unreachable!() };
        let rt = self.expr(recv, place, Perm::No("as a receiver"));
        match &rt {
            Type::Class(c) if self.env.is_interface(c) => {
                let msg = format!(
                    "interface `{c}` has no fields: `{}` can only be read through a class type",
                    field.name
                );
                self.error(msg, field.span, "field of an interface type");
                Type::Unknown
            }
            Type::Class(c) => {
                let found = self.env.class(c).and_then(|ci| {
                    self.env
                        .member(ci, &field.name)
                        .map(|(_, _, sig)| (ci, sig.kind, sig.ty.clone()))
                });
                match found {
                    Some((ci, MemberKind::Field, t)) => {
                        *class = Some(ci);
                        t
                    }
                    Some(_) => {
                        let msg =
                            format!("`{c}.{}` is not a field; a call needs `(..)`", field.name);
                        self.error(msg, field.span, "not a field");
                        Type::Unknown
                    }
                    None => {
                        let msg = format!("class `{c}` has no field `{}`", field.name);
                        self.error(msg, field.span, "unknown field");
                        Type::Unknown
                    }
                }
            }
            Type::Seq(_) if field.name == "length" => {
                let recv = std::mem::replace(recv, Box::new(Expr::new(ExprKind::Null, e.span)));
                e.kind = ExprKind::SeqLen(recv);
                Type::Int
            }
            Type::Seq(_) => {
                let msg = format!("sequences have no field `{}` (only `length`)", field.name);
                self.error(msg, field.span, "unknown field");
                Type::Unknown
            }
            Type::Array(_) if field.name == "length" => {
                let recv = std::mem::replace(recv, Box::new(Expr::new(ExprKind::Null, e.span)));
                e.kind = ExprKind::Length(recv);
                Type::Int
            }
            Type::Array(_) => {
                let msg = format!("arrays have no field `{}` (only `length`)", field.name);
                self.error(msg, field.span, "unknown field");
                Type::Unknown
            }
            Type::Unknown => Type::Unknown,
            t => {
                let msg = format!("a value of type `{t}` has no fields");
                self.error(msg, field.span, format!("`{}` is not a field of `{t}`", field.name));
                Type::Unknown
            }
        }
    }

    /// `acc(e.f)` or `acc(f)`.
    fn acc(&mut self, e: &mut Expr, place: Place) -> Type {
        let ExprKind::Acc(arg) = &mut e.kind else { unreachable!() };
        if let ExprKind::Index { arr, idx } = &mut arg.kind {
            // One array element (LANGUAGE.md section 12).
            let at = self.expr(arr, place, Perm::No("inside `acc`"));
            self.expect(idx, place, Perm::No("as an index"), &Type::Int);
            let elem = match at {
                Type::Array(t) => *t,
                Type::Unknown => Type::Unknown,
                t => {
                    self.error(
                        format!("cannot index a value of type `{t}`"),
                        arr.span,
                        "not an array",
                    );
                    return Type::Unknown;
                }
            };
            arg.ty = elem;
            return Type::Bool;
        }
        if !matches!(arg.kind, ExprKind::Name(_) | ExprKind::Field { .. }) {
            self.error(
                "`acc` needs a field access `e.f` (or a field name `f`)",
                arg.span,
                "not a field access",
            );
            return Type::Unknown;
        }
        let t = self.expr(arg, place, Perm::No("inside `acc`"));
        match &arg.kind {
            ExprKind::Field { .. } => Type::Bool,
            ExprKind::Local(n) => {
                let msg =
                    format!("`acc` needs a field, but `{n}` is a local variable or parameter");
                self.error(msg, arg.span, "not a field");
                Type::Unknown
            }
            ExprKind::Length(_) => {
                self.error(
                    "`length` of an array is immutable and needs no permission",
                    arg.span,
                    "not a field",
                );
                Type::Unknown
            }
            _ => {
                debug_assert_eq!(t, Type::Unknown);
                Type::Unknown
            }
        }
    }

    fn binary(&mut self, op: BinOp, l: &mut Expr, r: &mut Expr, place: Place, perm: Perm) -> Type {
        use BinOp::*;
        match op {
            And => {
                self.expect(l, place, perm, &Type::Bool);
                self.expect(r, place, perm, &Type::Bool);
                Type::Bool
            }
            Or => {
                self.expect(l, place, Perm::No("under `||`"), &Type::Bool);
                self.expect(r, place, Perm::No("under `||`"), &Type::Bool);
                Type::Bool
            }
            Implies => {
                self.expect(l, place, Perm::No("on the left of `==>`"), &Type::Bool);
                self.expect(r, place, perm, &Type::Bool);
                Type::Bool
            }
            Eq | Ne => {
                let why = if op == Eq { "in `==`" } else { "in `!=`" };
                let tl = self.expr(l, place, Perm::No(why));
                let tr = self.expr(r, place, Perm::No(why));
                if tl == Type::Perm || tr == Type::Perm {
                    promote(l);
                    promote(r);
                }
                if !comparable(self.env, &tl, &tr) {
                    self.error(
                        format!("cannot compare `{tl}` with `{tr}`"),
                        l.span.to(r.span),
                        format!("`{tl}` {} `{tr}`", op.symbol()),
                    );
                    return Type::Unknown;
                }
                Type::Bool
            }
            Lt | Le | Gt | Ge => match self.numeric(l, r, place, "in a comparison", op) {
                Some(_) => Type::Bool,
                None => Type::Unknown,
            },
            Add | Sub | Mul | Div | Mod => match self.numeric(l, r, place, "in arithmetic", op) {
                Some(t) => t,
                None => Type::Unknown,
            },
        }
    }

    /// The operands of an arithmetic operator or a comparison: both `int`, or (LANGUAGE.md
    /// section 11) at least one `perm` and the other `int` or `perm`, both then read as
    /// amounts (`/` exact). `None` after an error.
    fn numeric(
        &mut self,
        l: &mut Expr,
        r: &mut Expr,
        place: Place,
        why: &'static str,
        op: BinOp,
    ) -> Option<Type> {
        let tl = self.expr(l, place, Perm::No(why));
        let tr = self.expr(r, place, Perm::No(why));
        let num = |t: &Type| matches!(t, Type::Int | Type::Perm | Type::Unknown);
        if tl == Type::Perm || tr == Type::Perm {
            for (t, x) in [(&tl, &*l), (&tr, &*r)] {
                if !num(t) {
                    self.error(
                        format!("expected `int` or `perm`, found `{t}`"),
                        x.span,
                        format!("this has type `{t}`"),
                    );
                    return None;
                }
            }
            if op == BinOp::Mod {
                self.error(
                    "`%` is not defined on `perm` amounts",
                    l.span.to(r.span),
                    "`%` of a `perm`",
                );
                return None;
            }
            promote(l);
            promote(r);
            return Some(Type::Perm);
        }
        let mut ok = true;
        for (t, x) in [(&tl, &*l), (&tr, &*r)] {
            if !converts(self.env, t, &Type::Int) {
                self.error(
                    format!("expected `int`, found `{t}`"),
                    x.span,
                    format!("this has type `{t}`"),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        if tl == Type::Unknown || tr == Type::Unknown {
            return Some(Type::Unknown);
        }
        Some(Type::Int)
    }

    /// `acc(loc, p)`: the permission at `write`, then the amount (a `perm`; a constant
    /// one must not be negative, nor above `write` for a field or element).
    fn frac(&mut self, e: &mut Expr, place: Place, perm: Perm) -> Type {
        let ExprKind::Frac { acc, amount } = &mut e.kind else { unreachable!() };
        let t = self.expr(acc, place, perm);
        let is_pred = matches!(acc.kind, ExprKind::Call { .. });
        let amount_ok = self.expect(amount, place, Perm::No("as an amount"), &Type::Perm);
        if amount_ok && t != Type::Unknown {
            self.constant_amount(amount, !is_pred);
        }
        if t == Type::Unknown || !amount_ok { Type::Unknown } else { Type::Bool }
    }

    /// The checks of a constant amount (LANGUAGE.md section 11).
    fn constant_amount(&mut self, amount: &Expr, at_most_write: bool) {
        let Some(r) = const_amount(amount) else { return };
        if r.is_negative() {
            self.error(
                format!("the permission amount `{r}` is negative"),
                amount.span,
                "negative amount",
            );
        } else if at_most_write && r > crate::state::term::Rat::ONE {
            self.error(
                format!(
                    "the permission amount `{r}` is above `write`: a field or array element is never held at more than `write`"
                ),
                amount.span,
                "amount above `write`",
            );
        }
    }

    /// `perm(loc)`: only in method contracts, invariants, `assert` and `join`.
    fn perm_of(&mut self, e: &mut Expr, place: Place) -> Type {
        let span = e.span;
        let ExprKind::PermOf(loc) = &mut e.kind else { unreachable!() };
        if !matches!(
            place,
            Place::Pre | Place::Post | Place::Invariant | Place::Assert | Place::Join
        ) {
            self.error(
                format!(
                    "`perm(..)` can only be used in method contracts, loop invariants, `assert` and `join`, not in {}: code cannot test permissions",
                    place.describe()
                ),
                span,
                "`perm` not allowed here",
            );
            return Type::Unknown;
        }
        match &mut loc.kind {
            ExprKind::Call { .. } => {
                self.call(loc, place, Perm::Yes, Role::Predicate("`perm`"));
            }
            ExprKind::Index { .. } => {
                self.expr(loc, place, Perm::No("inside `perm`"));
            }
            ExprKind::Name(_) | ExprKind::Field { .. } => {
                self.expr(loc, place, Perm::No("inside `perm`"));
                if !matches!(loc.kind, ExprKind::Field { .. }) && loc.ty != Type::Unknown {
                    self.error(
                        "`perm` needs a field `e.f`, an element `a[i]` or a predicate instance",
                        loc.span,
                        "not a location",
                    );
                    return Type::Unknown;
                }
            }
            _ => {
                self.error(
                    "`perm` needs a field `e.f`, an element `a[i]` or a predicate instance",
                    loc.span,
                    "not a location",
                );
                return Type::Unknown;
            }
        }
        Type::Perm
    }

    /// The instance of `open`, `close` or `opening`: `e.q(..)`, or `acc(e.q(..), p)`.
    pub fn ghost_instance(&mut self, e: &mut Expr, place: Place, what: &'static str) {
        if let ExprKind::Frac { acc, amount } = &mut e.kind {
            if let ExprKind::Acc(inner) = &mut acc.kind
                && matches!(inner.kind, ExprKind::Call { .. })
            {
                let call = std::mem::replace(&mut **inner, Expr::new(ExprKind::Null, acc.span));
                **acc = call;
            }
            self.call(acc, place, Perm::Yes, Role::Predicate(what));
            if self.expect(amount, place, Perm::No("as an amount"), &Type::Perm) {
                self.constant_amount(amount, false);
            }
            e.ty = Type::Bool;
            return;
        }
        if let ExprKind::Acc(inner) = &mut e.kind
            && matches!(inner.kind, ExprKind::Call { .. })
        {
            let call = std::mem::replace(&mut **inner, Expr::new(ExprKind::Null, e.span));
            *e = call;
        }
        self.call(e, place, Perm::Yes, Role::Predicate(what));
    }

    /// Check a call; `role` says what the call must be where it stands.
    pub fn call(&mut self, e: &mut Expr, place: Place, perm: Perm, role: Role) -> Type {
        let t = self.call_kind(e, place, perm, role);
        e.ty = t.clone();
        t
    }

    fn call_kind(&mut self, e: &mut Expr, place: Place, perm: Perm, role: Role) -> Type {
        let span = e.span;
        let ExprKind::Call { .. } = &mut e.kind else {
            let what = match role {
                Role::Predicate(w) | Role::Pure(w) => w,
                _ => "this",
            };
            let needs = if matches!(role, Role::Predicate(_)) {
                "a predicate instance `e.q(args)`"
            } else {
                "a pure method call `e.p(args)`"
            };
            self.error(format!("{what} needs {needs}"), span, "not a call");
            self.expr(e, place, Perm::No("here"));
            return Type::Unknown;
        };
        let checked_recv = match self.seq_method(e, place) {
            Ok(t) => return t,
            Err(t) => t,
        };
        let ExprKind::Call { recv, name, args, target } = &mut e.kind else { unreachable!() };
        let Some((class, mi, sig)) = self.resolve_call(recv, name, place, checked_recv) else {
            for a in args.iter_mut() {
                self.expr(a, place, Perm::No("as a call argument"));
            }
            return Type::Unknown;
        };
        *target = Some(MemberRef { class, member: mi });
        let callee = format!("{}.{}", self.env.class_sigs[class].name, sig.name);
        self.args(args, &sig.params, &callee, name.span, place);
        let iface = self.env.class_sigs[class].is_interface;
        match (sig.kind, role) {
            (MemberKind::Predicate, Role::Predicate(what))
            | (MemberKind::Pure, Role::Pure(what))
                if iface =>
            {
                let thing = if sig.kind == MemberKind::Predicate {
                    "an abstract predicate"
                } else {
                    "a dynamically bound pure method"
                };
                self.error(
                    format!(
                        "{what} cannot be used through an interface type: `{callee}` is {thing}, whose body depends on the object's class; use a receiver of class type"
                    ),
                    span,
                    "receiver of interface type",
                );
                Type::Unknown
            }
            (MemberKind::Predicate, Role::Predicate(_)) => Type::Bool,
            (MemberKind::Pure, Role::Pure(_)) => sig.ty,
            (MemberKind::Predicate, Role::Expr) => {
                let what = format!("predicate `{callee}`");
                if self.permission_misplaced(&what, span, place, perm) {
                    Type::Unknown
                } else {
                    Type::Bool
                }
            }
            (MemberKind::Pure, Role::Expr | Role::Stmt) | (MemberKind::Method, Role::Stmt) => {
                sig.ty
            }
            (MemberKind::Predicate, Role::Stmt) => {
                self.error(
                    format!(
                        "predicate `{callee}` can only be used in assertions, not called in code"
                    ),
                    span,
                    "predicate in code",
                );
                Type::Unknown
            }
            (MemberKind::Method, Role::Expr) => {
                self.error(
                    format!(
                        "method `{callee}` is not pure: a call of it must be a statement of its own or the whole right side of an assignment or declaration"
                    ),
                    span,
                    "non-pure call inside an expression",
                );
                Type::Unknown
            }
            (_, Role::Predicate(what)) => {
                self.error(
                    format!("{what} needs a predicate, but `{callee}` is not one"),
                    span,
                    "not a predicate",
                );
                Type::Unknown
            }
            (_, Role::Pure(what)) => {
                self.error(
                    format!("{what} needs a pure method, but `{callee}` is not one"),
                    span,
                    "not a pure method",
                );
                Type::Unknown
            }
            (MemberKind::Field | MemberKind::Constructor, _) => {
                unreachable!("resolve_call returns only callable members")
            }
        }
    }

    pub fn args(
        &mut self,
        args: &mut [Expr],
        params: &[Type],
        callee: &str,
        at: Span,
        place: Place,
    ) {
        if args.len() != params.len() {
            self.error(
                format!(
                    "`{callee}` takes {} argument{} but {} {} given",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len(),
                    if args.len() == 1 { "was" } else { "were" }
                ),
                at,
                "wrong number of arguments",
            );
            for a in args.iter_mut() {
                self.expr(a, place, Perm::No("as a call argument"));
            }
            return;
        }
        for (a, p) in args.iter_mut().zip(params) {
            self.expect(a, place, Perm::No("as a call argument"), p);
        }
    }

    /// Find the callee and rewrite the receiver: `Implicit` into `this` or `Static`,
    /// a class name into `Static`.
    fn resolve_call(
        &mut self,
        recv: &mut CallRecv,
        name: &Ident,
        place: Place,
        checked_recv: Option<Type>,
    ) -> Option<(usize, usize, Sig)> {
        let (class, static_recv) = match recv {
            CallRecv::Implicit => (self.class, None),
            CallRecv::Static(c) => (self.env.class(c)?, Some(true)),
            CallRecv::Expr(r) => {
                if let ExprKind::Name(n) = &r.kind
                    && self.lookup_local(n).is_none()
                    && !self
                        .env
                        .member(self.class, n)
                        .is_some_and(|(_, _, s)| s.kind == MemberKind::Field)
                    && (self.env.class(n).is_some() || n == OBJECT)
                {
                    let n = n.clone();
                    let Some(ci) = self.env.class(&n) else {
                        self.error(
                            format!("class `Object` has no member `{}`", name.name),
                            name.span,
                            "unknown member",
                        );
                        return None;
                    };
                    *recv = CallRecv::Static(n);
                    (ci, Some(true))
                } else {
                    // A receiver `seq_method` checked already keeps its type.
                    let t = match checked_recv {
                        Some(t) => t,
                        None => self.expr(r, place, Perm::No("as a receiver")),
                    };
                    match t {
                        Type::Class(c) if self.env.class(&c).is_some() => {
                            (self.env.class(&c)?, Some(false))
                        }
                        Type::Unknown => return None,
                        t => {
                            self.error(
                                format!("cannot call `{}` on a value of type `{t}`", name.name),
                                name.span,
                                format!("`{t}` has no member `{}`", name.name),
                            );
                            return None;
                        }
                    }
                }
            }
        };
        let cname = self.env.class_sigs[class].name.clone();
        let Some((decl, mi, sig)) = self.env.member(class, &name.name) else {
            let msg = if self.env.class_sigs[class].ctor.is_some() && name.name == cname {
                format!("a constructor is called with `new {cname}(..)`")
            } else if self.env.class_sigs[class].is_interface {
                format!("interface `{cname}` has no member `{}`", name.name)
            } else {
                format!("class `{cname}` has no member `{}`", name.name)
            };
            self.error(msg, name.span, "unknown member");
            return None;
        };
        let sig = sig.clone();
        if sig.kind == MemberKind::Field {
            self.error(
                format!("`{cname}.{}` is a field, not a method", name.name),
                name.span,
                "not callable",
            );
            return None;
        }
        match (static_recv, sig.is_static) {
            (None, true) => *recv = CallRecv::Static(cname),
            (None, false) => {
                if self.is_static {
                    self.error(
                        format!(
                            "`{}` is an instance member: static member `{}` has no `this` to call it on",
                            name.name, self.member_name
                        ),
                        name.span,
                        "needs a receiver",
                    );
                    return None;
                }
                let this = Expr { kind: ExprKind::This, span: name.span, ty: self.this_class() };
                *recv = CallRecv::Expr(Box::new(this));
            }
            (Some(true), false) => {
                self.error(
                    format!("`{cname}.{}` is an instance member: call it on an object", name.name),
                    name.span,
                    "not static",
                );
                return None;
            }
            (Some(false), true) => {
                self.error(
                    format!(
                        "`{cname}.{}` is static: call it as `{cname}.{}(..)`",
                        name.name, name.name
                    ),
                    name.span,
                    "static member called on an object",
                );
                return None;
            }
            (Some(_), _) => {}
        }
        Some((decl, mi, sig))
    }
}

/// Lexical scopes of locals, innermost last, with an index by name: a lookup does not
/// scan every local in scope (a member with thousands of locals checks in linear time).
pub struct Scopes {
    scopes: Vec<Vec<(String, Type, Span)>>,
    /// For each name, where its declarations in scope are (scope, position), innermost last.
    index: std::collections::HashMap<String, Vec<(usize, usize)>>,
}

impl Scopes {
    /// One scope holding `params`.
    pub fn new(params: Vec<(String, Type, Span)>) -> Scopes {
        let mut s = Scopes { scopes: vec![vec![]], index: Default::default() };
        for (n, t, sp) in params {
            s.declare(n, t, sp);
        }
        s
    }
    pub fn enter(&mut self) {
        self.scopes.push(Vec::new());
    }
    pub fn leave(&mut self) {
        if let Some(scope) = self.scopes.pop() {
            for (n, _, _) in scope {
                if let Some(v) = self.index.get_mut(&n) {
                    v.pop();
                    if v.is_empty() {
                        self.index.remove(&n);
                    }
                }
            }
        }
    }
    /// Declare a local in the innermost scope.
    pub fn declare(&mut self, name: String, ty: Type, span: Span) {
        let Some(k) = self.scopes.len().checked_sub(1) else { return };
        let scope = &mut self.scopes[k];
        self.index.entry(name.clone()).or_default().push((k, scope.len()));
        scope.push((name, ty, span));
    }
    /// The innermost declaration of `name` in scope.
    pub fn lookup(&self, name: &str) -> Option<&(String, Type, Span)> {
        let &(k, i) = self.index.get(name)?.last()?;
        self.scopes.get(k)?.get(i)
    }
}

/// Read an `int`-typed expression as an amount (LANGUAGE.md section 11): its arithmetic
/// becomes amount arithmetic (`/` exact), down to the leaves, which convert (`k` is
/// `k/1`). A `%` stays integer arithmetic, converted as a whole.
pub(super) fn promote(e: &mut Expr) {
    if e.ty != Type::Int {
        return;
    }
    e.ty = Type::Perm;
    match &mut e.kind {
        ExprKind::Binary { op: BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div, l, r } => {
            promote(l);
            promote(r);
        }
        ExprKind::Unary { op: UnOp::Neg, e: x } => promote(x),
        ExprKind::Cond { a, b, .. } => {
            promote(a);
            promote(b);
        }
        _ => {}
    }
}

/// The value of a constant amount: literals, `write`, `none` and the operators on them
/// (`/` exact where the checker typed it `perm`, Java's elsewhere).
pub fn const_amount(e: &Expr) -> Option<crate::state::term::Rat> {
    use crate::state::term::Rat;
    match &e.kind {
        ExprKind::Int(n) => Some(Rat::new(*n, 1)),
        ExprKind::Write => Some(Rat::ONE),
        ExprKind::NoPerm => Some(Rat::ZERO),
        ExprKind::Unary { op: UnOp::Neg, e: x } => Rat::ZERO.checked_sub(const_amount(x)?),
        ExprKind::Binary { op, l, r } => {
            let (a, b) = (const_amount(l)?, const_amount(r)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div if e.ty == Type::Perm => a.checked_div(b),
                BinOp::Div | BinOp::Mod if a.d == 1 && b.d == 1 && b.n != 0 => {
                    let q = if *op == BinOp::Div {
                        a.n.checked_div(b.n)?
                    } else {
                        a.n.checked_rem(b.n)?
                    };
                    Some(Rat::new(q, 1))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Does `e` mention the local `x`?
fn mentions(e: &Expr, x: &str) -> bool {
    e.any(&mut |y| matches!(&y.kind, ExprKind::Local(n) if n == x))
}

/// Section 12's shape of a quantified permission: `forall int i :: c ==> acc(a[i], p)`
/// with one bound variable, `a` and `p` free of `i`, the index `i` itself, `i` in `c`
/// only outside heap reads and pure calls, and a written trigger only `{ a[i] }`.
fn qp_shape(q: &Quant) -> Result<(), String> {
    let [b] = q.vars.as_slice() else {
        return Err("it must bind exactly one `int` variable".into());
    };
    let i = b.name.name.as_str();
    let ExprKind::Binary { op: BinOp::Implies, l: cond, r: body } = &q.body.kind else {
        return Err("the body must be `condition ==> acc(a[i], p)`".into());
    };
    let (acc, amount) = match &body.kind {
        ExprKind::Frac { acc, amount } => (&**acc, Some(&**amount)),
        _ => (&**body, None),
    };
    let ExprKind::Acc(loc) = &acc.kind else {
        return Err("the body after `==>` must be exactly one `acc(a[i], p)`".into());
    };
    let ExprKind::Index { arr, idx } = &loc.kind else {
        return Err(
            "the permission must be to array elements `a[i]` (quantified permissions to fields or predicates are out of scope)"
                .into(),
        );
    };
    if !matches!(&idx.kind, ExprKind::Local(n) if n == i) {
        return Err(format!(
            "the index must be the bound variable `{i}` itself (write `forall int j :: .. ==> acc(a[j])` with the condition shifted instead)"
        ));
    }
    if mentions(arr, i) {
        return Err(format!("the array must not depend on `{i}`"));
    }
    if amount.is_some_and(|p| mentions(p, i)) {
        return Err(format!("the amount must not depend on `{i}`"));
    }
    let heap_read_with_i = cond.any(&mut |x| {
        matches!(
            x.kind,
            ExprKind::Field { .. }
                | ExprKind::Index { .. }
                | ExprKind::Call { .. }
                | ExprKind::Old(_)
                | ExprKind::Opening { .. }
                | ExprKind::Using { .. }
        ) && mentions(x, i)
    });
    if heap_read_with_i {
        return Err(format!(
            "in the condition, `{i}` may occur only outside heap reads and pure calls"
        ));
    }
    if cond.any(&mut |x| matches!(x.kind, ExprKind::Quant(_))) {
        return Err("the condition must not hold a quantifier".into());
    }
    if !q.inferred {
        let arr_key = super::trigger::fingerprint(arr);
        let ok = match q.triggers.as_slice() {
            [] => true,
            [g] => matches!(g.terms.as_slice(), [t] if matches!(&t.kind,
                ExprKind::Index { arr: ta, idx: ti }
                    if super::trigger::fingerprint(ta) == arr_key
                        && matches!(&ti.kind, ExprKind::Local(n) if n == i))),
            _ => false,
        };
        if !ok {
            return Err(format!("a written trigger must be `{{ a[{i}] }}` for the array `a`"));
        }
    }
    Ok(())
}
