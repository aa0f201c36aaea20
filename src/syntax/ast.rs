//! The abstract syntax of `.jv` programs.
//!
//! Architecture invariant: this module knows nothing of checking or verification.
//! Every node carries its [`Span`]. The parser produces it with the `Name`,
//! `CallRecv::Implicit` and `Type::Unknown` placeholders; the checker (`crate::check`)
//! rewrites those into resolved forms (locals vs. fields, static vs. instance calls,
//! `a.length`) and fills every `ty` and every call `target`. After checking, the
//! verifier never meets a placeholder.

use std::fmt;

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Int,
    Bool,
    /// Permission amounts, the rationals (LANGUAGE.md section 11).
    Perm,
    /// A class type; `Object` is the built-in class every class converts to.
    Class(String),
    Array(Box<Type>),
    /// `seq<T>`: a finite mathematical sequence, a ghost value (LANGUAGE.md section 14).
    Seq(Box<Type>),
    /// The type of `null` (converts to every class and array type).
    Null,
    /// `void` (only as a method's return type).
    Void,
    /// Not yet known: filled by the checker.
    Unknown,
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Int => write!(f, "int"),
            Type::Bool => write!(f, "bool"),
            Type::Perm => write!(f, "perm"),
            Type::Class(c) => write!(f, "{c}"),
            Type::Array(t) => write!(f, "{t}[]"),
            Type::Seq(t) => write!(f, "seq<{t}>"),
            Type::Null => write!(f, "null"),
            Type::Void => write!(f, "void"),
            Type::Unknown => write!(f, "?"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Program {
    pub classes: Vec<Class>,
    /// What a later stage derives from the whole checked program once (the concrete
    /// interpreter's layouts), instead of once per use.
    pub memo: Memo,
}

/// A slot for one value derived from a checked program, computed on first use. A
/// checked program is never changed afterwards; a clone (which may be) starts empty.
#[derive(Default)]
pub struct Memo(std::sync::OnceLock<std::sync::Arc<dyn std::any::Any + Send + Sync>>);

impl Memo {
    /// The value held, made by `make` on first use (or made afresh when the slot
    /// holds a value of another type).
    pub fn get_or_init<T: std::any::Any + Send + Sync>(
        &self,
        make: impl Fn() -> T,
    ) -> std::sync::Arc<T> {
        let held = self.0.get_or_init(|| std::sync::Arc::new(make()));
        held.clone().downcast::<T>().unwrap_or_else(|_| std::sync::Arc::new(make()))
    }
}

// A held value is never changed after it is made, and a panic while making it leaves
// the slot empty: a panic cannot leave a half-made value to be seen.
impl std::panic::RefUnwindSafe for Memo {}
impl std::panic::UnwindSafe for Memo {}

impl Clone for Memo {
    fn clone(&self) -> Memo {
        Memo::default()
    }
}

impl fmt::Debug for Memo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Memo")
    }
}

/// A class or an interface (LANGUAGE.md section 10). An interface is a class-like
/// declaration whose members are signatures (methods, pure methods and predicates
/// with `Body::None`), so that a `MemberRef` names interface members like any other.
#[derive(Clone, Debug)]
pub struct Class {
    pub name: Ident,
    pub members: Vec<Member>,
    pub span: Span,
    /// `interface I ...` rather than `class C ...`.
    pub is_interface: bool,
    /// The interfaces a class `implements`, or an interface `extends`, as written.
    pub supers: Vec<Ident>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemberKind {
    Field,
    Constructor,
    Method,
    Pure,
    Predicate,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub ty: Type,
    pub name: Ident,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Member {
    pub kind: MemberKind,
    pub name: Ident,
    pub is_static: bool,
    /// Field type, method/pure return type (`Type::Void` for void methods and
    /// constructors, `Type::Bool` for predicates).
    pub ty: Type,
    pub params: Vec<Param>,
    pub requires: Vec<Expr>,
    pub ensures: Vec<Expr>,
    /// `decreases e;` clauses (LANGUAGE.md section 15): the termination measure of a
    /// pure method. The checker allows at most one, and only on pure methods.
    pub decreases: Vec<Expr>,
    pub body: Body,
    /// The whole member.
    pub span: Span,
    /// Filled by the checker: the interface member whose contract this class member
    /// took because it wrote none (LANGUAGE.md section 10); its `requires` and
    /// `ensures` are then copies of that member's, read in the class.
    pub inherits: Option<MemberRef>,
}

#[derive(Clone, Debug)]
pub enum Body {
    /// Fields and interface signatures have no body.
    None,
    /// Methods and constructors.
    Block(Block),
    /// Pure methods and predicates: `{ return e; }`; the span is the `return` statement's.
    Return(Expr),
}

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// Visit every statement of `stmts` and, recursively, of the statements they contain
/// (an `if`'s branches, a loop's body, a nested block), each before its children.
pub fn each_stmt<'a>(stmts: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for st in stmts {
        f(st);
        match &st.kind {
            StmtKind::If { then, els, .. } => {
                each_stmt(&then.stmts, f);
                if let Some(e) = els {
                    each_stmt(std::slice::from_ref(&**e), f);
                }
            }
            StmtKind::While { body, .. } => each_stmt(&body.stmts, f),
            StmtKind::Block(b) => each_stmt(&b.stmts, f),
            _ => {}
        }
    }
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `T x [= rhs];`
    Local {
        ty: Type,
        name: Ident,
        init: Option<Rhs>,
    },
    /// `lhs = rhs;` where lhs is a `Name`/`Local`, `Field` or `Index` expression.
    Assign {
        lhs: Expr,
        rhs: Rhs,
    },
    /// A call statement; the expression is an `ExprKind::Call`.
    Call(Expr),
    If {
        cond: Expr,
        then: Block,
        els: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        invariants: Vec<Expr>,
        body: Block,
    },
    Assert(Expr),
    /// `open`/`close` carry an `ExprKind::Call` of a predicate; `use` of a pure method.
    Open(Expr),
    Close(Expr),
    Use(Expr),
    Join(Expr),
    Return(Option<Expr>),
    Block(Block),
}

#[derive(Clone, Debug)]
pub enum Rhs {
    Expr(Expr),
    /// `new C(args)`; the span covers the whole `new` expression.
    New {
        class: Ident,
        args: Vec<Expr>,
        span: Span,
    },
    /// `new T[n]`; `elem` is `T`.
    NewArray {
        elem: Type,
        len: Box<Expr>,
        span: Span,
    },
}

impl Rhs {
    pub fn span(&self) -> Span {
        match self {
            Rhs::Expr(e) => e.span,
            Rhs::New { span, .. } | Rhs::NewArray { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Filled by the checker.
    pub ty: Type,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span, ty: Type::Unknown }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Not,
    Neg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Implies,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Implies => "==>",
        }
    }
}

/// Where a call's receiver comes from.
#[derive(Clone, Debug)]
pub enum CallRecv {
    /// `m(args)`: parser only; the checker turns it into `Expr(this)` or `Static`.
    Implicit,
    /// `e.m(args)` on an instance member.
    Expr(Box<Expr>),
    /// A static member of the named class (`C.m(args)`, or `m(args)` inside `C`).
    Static(String),
}

/// A resolved member: indices into `Program::classes` and `Class::members`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemberRef {
    pub class: usize,
    pub member: usize,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    /// An integer literal beyond `i64`, in decimal.
    BigInt(String),
    Bool(bool),
    Null,
    This,
    Result,
    /// A bare name: parser only; the checker turns it into `Local` or `Field`.
    Name(String),
    /// A local variable or parameter.
    Local(String),
    /// `recv.f`; `class` is the declaring class, filled by the checker.
    Field {
        recv: Box<Expr>,
        field: Ident,
        class: Option<usize>,
    },
    /// `a.length` on an array (the checker rewrites such `Field`s into this).
    Length(Box<Expr>),
    /// `a[i]`
    Index {
        arr: Box<Expr>,
        idx: Box<Expr>,
    },
    /// A pure-method, predicate or method call; `target` is filled by the checker.
    Call {
        recv: CallRecv,
        name: Ident,
        args: Vec<Expr>,
        target: Option<MemberRef>,
    },
    Unary {
        op: UnOp,
        e: Box<Expr>,
    },
    Binary {
        op: BinOp,
        l: Box<Expr>,
        r: Box<Expr>,
    },
    Cond {
        c: Box<Expr>,
        a: Box<Expr>,
        b: Box<Expr>,
    },
    Old(Box<Expr>),
    /// `acc(e.f)`: the argument is a `Field` (or, before checking, a `Name`).
    Acc(Box<Expr>),
    /// `acc(a[*])`
    AccArray(Box<Expr>),
    /// `acc(loc, p)` (LANGUAGE.md section 11): `acc` is the permission at `write`
    /// (`Acc`, `AccArray`, or after checking a predicate instance `Call`), `amount`
    /// the `perm` it is held at. `open`/`close`/`opening` take it too.
    Frac {
        acc: Box<Expr>,
        amount: Box<Expr>,
    },
    /// `write`, the amount 1.
    Write,
    /// `none`, the amount 0.
    NoPerm,
    /// `perm(loc)`: the amount held of a field, element or predicate instance.
    PermOf(Box<Expr>),
    Untouched(Box<Expr>),
    /// `opening e.q(args) in body`: `pred` is a `Call` of a predicate.
    Opening {
        pred: Box<Expr>,
        body: Box<Expr>,
    },
    /// `using e.p(args) in body`: `call` is a `Call` of a pure method.
    Using {
        call: Box<Expr>,
        body: Box<Expr>,
    },
    /// `forall`/`exists` (LANGUAGE.md section 13; section 12 when the body holds a
    /// permission): see [`Quant`].
    Quant(Box<Quant>),
    /// `seq<T>(e1, .., en)` or `seq(e1, .., en)`; `elem` is `T` as written, or
    /// `Type::Unknown` until the checker fills it from `e1`.
    SeqLit {
        elem: Type,
        elems: Vec<Expr>,
    },
    /// `s.length` on a sequence (the checker rewrites such `Field`s into this).
    SeqLen(Box<Expr>),
    /// `s[i]` on a sequence (the checker rewrites such `Index`es into this).
    SeqIndex {
        seq: Box<Expr>,
        idx: Box<Expr>,
    },
    /// `s[lo..hi]`, `s[lo..]`, `s[..hi]`: a missing `lo` is 0, a missing `hi` is
    /// `s.length`.
    Slice {
        seq: Box<Expr>,
        lo: Option<Box<Expr>>,
        hi: Option<Box<Expr>>,
    },
    /// `s + t` on sequences (the checker rewrites such `Binary`s into this).
    SeqConcat(Box<Expr>, Box<Expr>),
    /// `s.contains(x)` (the checker rewrites such `Call`s into this).
    SeqContains {
        seq: Box<Expr>,
        elem: Box<Expr>,
    },
    /// `s.updated(i, v)` (the checker rewrites such `Call`s into this).
    SeqUpdated {
        seq: Box<Expr>,
        idx: Box<Expr>,
        val: Box<Expr>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantKind {
    Forall,
    Exists,
}

impl QuantKind {
    pub fn keyword(self) -> &'static str {
        match self {
            QuantKind::Forall => "forall",
            QuantKind::Exists => "exists",
        }
    }
}

/// One bound variable `T x` of a quantifier (only `int` is legal: the checker says so).
#[derive(Clone, Debug)]
pub struct Binder {
    pub ty: Type,
    pub name: Ident,
}

/// A trigger group `{ t1, .., tn }`: all its terms must match together.
#[derive(Clone, Debug)]
pub struct Trigger {
    pub terms: Vec<Expr>,
    pub span: Span,
}

/// A quantifier `forall|exists T x, .. :: {triggers} body`.
///
/// The parser fills `kind`, `vars`, `triggers` (as written) and `body`, and folds
/// `forall int i :: forall int j :: B` into one node. The checker then:
/// - decides whether it is a *value* quantifier (section 13: a pure `bool` body) or a
///   *quantified permission* (section 12: the body holds `acc(..)`, a predicate
///   instance or `untouched`), recorded in `permission`; the shape checks of a
///   quantified permission belong to section 12's checker;
/// - for a value quantifier without written triggers, infers them (section 13, steps
///   1-6) and stores them in `triggers` with `inferred = true`; step 5 may add bound
///   variables to `vars` (named `k$N`, a name no program can write) and rewrite `body`
///   to `k$N == i + c ==> body[i + c := k$N]`;
/// - leaves `triggers` empty when none exists (the `no.trigger` warning).
///
/// Trigger terms are copies of sub-expressions of the (rewritten) body, with the same
/// spans, so the verifier can recognise their terms while it evaluates the body.
#[derive(Clone, Debug)]
pub struct Quant {
    pub kind: QuantKind,
    pub vars: Vec<Binder>,
    pub triggers: Vec<Trigger>,
    /// The triggers were chosen by the checker (not written).
    pub inferred: bool,
    /// Filled by the checker: the body holds a permission (section 12).
    pub permission: bool,
    pub body: Box<Expr>,
}

impl Expr {
    /// The direct sub-expressions, in source order (a quantifier's written triggers
    /// before its body; a call's receiver before its arguments).
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Int(_)
            | ExprKind::BigInt(_)
            | ExprKind::Bool(_)
            | ExprKind::Null
            | ExprKind::This
            | ExprKind::Result
            | ExprKind::Write
            | ExprKind::NoPerm
            | ExprKind::Name(_)
            | ExprKind::Local(_) => vec![],
            ExprKind::Field { recv: a, .. }
            | ExprKind::Length(a)
            | ExprKind::Unary { e: a, .. }
            | ExprKind::Old(a)
            | ExprKind::Acc(a)
            | ExprKind::AccArray(a)
            | ExprKind::Untouched(a)
            | ExprKind::PermOf(a)
            | ExprKind::SeqLen(a) => vec![a],
            ExprKind::Index { arr: a, idx: b }
            | ExprKind::Binary { l: a, r: b, .. }
            | ExprKind::Opening { pred: a, body: b }
            | ExprKind::Using { call: a, body: b }
            | ExprKind::Frac { acc: a, amount: b }
            | ExprKind::SeqIndex { seq: a, idx: b }
            | ExprKind::SeqConcat(a, b)
            | ExprKind::SeqContains { seq: a, elem: b } => vec![a, b],
            ExprKind::Cond { c, a, b } => vec![c, a, b],
            ExprKind::SeqUpdated { seq, idx, val } => vec![seq, idx, val],
            ExprKind::Call { recv, args, .. } => {
                let mut v: Vec<&Expr> = vec![];
                if let CallRecv::Expr(r) = recv {
                    v.push(r);
                }
                v.extend(args.iter());
                v
            }
            ExprKind::Quant(q) => {
                let mut v: Vec<&Expr> = q.triggers.iter().flat_map(|t| t.terms.iter()).collect();
                v.push(&q.body);
                v
            }
            ExprKind::SeqLit { elems, .. } => elems.iter().collect(),
            ExprKind::Slice { seq, lo, hi } => {
                let mut v: Vec<&Expr> = vec![seq];
                v.extend(lo.iter().map(|e| &**e));
                v.extend(hi.iter().map(|e| &**e));
                v
            }
        }
    }

    /// The direct sub-expressions, mutably, in the order of [`Expr::children`].
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Int(_)
            | ExprKind::BigInt(_)
            | ExprKind::Bool(_)
            | ExprKind::Null
            | ExprKind::This
            | ExprKind::Result
            | ExprKind::Write
            | ExprKind::NoPerm
            | ExprKind::Name(_)
            | ExprKind::Local(_) => vec![],
            ExprKind::Field { recv: a, .. }
            | ExprKind::Length(a)
            | ExprKind::Unary { e: a, .. }
            | ExprKind::Old(a)
            | ExprKind::Acc(a)
            | ExprKind::AccArray(a)
            | ExprKind::Untouched(a)
            | ExprKind::PermOf(a)
            | ExprKind::SeqLen(a) => vec![a],
            ExprKind::Index { arr: a, idx: b }
            | ExprKind::Binary { l: a, r: b, .. }
            | ExprKind::Opening { pred: a, body: b }
            | ExprKind::Using { call: a, body: b }
            | ExprKind::Frac { acc: a, amount: b }
            | ExprKind::SeqIndex { seq: a, idx: b }
            | ExprKind::SeqConcat(a, b)
            | ExprKind::SeqContains { seq: a, elem: b } => vec![a, b],
            ExprKind::Cond { c, a, b } => vec![c, a, b],
            ExprKind::SeqUpdated { seq, idx, val } => vec![seq, idx, val],
            ExprKind::Call { recv, args, .. } => {
                let mut v: Vec<&mut Expr> = vec![];
                if let CallRecv::Expr(r) = recv {
                    v.push(r);
                }
                v.extend(args.iter_mut());
                v
            }
            ExprKind::Quant(q) => {
                let Quant { triggers, body, .. } = &mut **q;
                let mut v: Vec<&mut Expr> =
                    triggers.iter_mut().flat_map(|t| t.terms.iter_mut()).collect();
                v.push(body);
                v
            }
            ExprKind::SeqLit { elems, .. } => elems.iter_mut().collect(),
            ExprKind::Slice { seq, lo, hi } => {
                let mut v: Vec<&mut Expr> = vec![seq];
                v.extend(lo.iter_mut().map(|e| &mut **e));
                v.extend(hi.iter_mut().map(|e| &mut **e));
                v
            }
        }
    }

    /// Does `f` hold of this expression or of any expression below it?
    pub fn any(&self, f: &mut dyn FnMut(&Expr) -> bool) -> bool {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            if f(e) {
                return true;
            }
            stack.extend(e.children());
        }
        false
    }
}
