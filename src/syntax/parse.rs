//! The parser: lexes, runs the LALRPOP grammar (`grammar/idf.lalrpop`), and turns LALRPOP
//! errors into [`InputError`]s with "expected `;`"-style messages.
//!
//! Architecture invariant: parsing never recurses on the input's nesting (the LALRPOP
//! parser is table-driven) and every AST it returns is at most [`MAX_DEPTH`] nodes deep,
//! so the checker and verifier can recurse freely. `new` is accepted only as the whole
//! right side of a declaration or assignment.

use super::InputError;
use super::ast::{Program, Span};
use super::lexer::{self, Tok};
use lalrpop_util::ParseError;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, unused_imports, dead_code)]
    grammar,
    "/idf.rs"
);

/// The deepest nesting of expressions, statements and blocks accepted.
pub const MAX_DEPTH: u32 = 500;
/// A link of a flat chain of one operator (`a && b && c`, `a + b + c`, `else if`)
/// counts 1/`CHAIN_LINKS_PER_LEVEL` of a nesting level: generated specifications
/// chain thousands of conjuncts without nesting anything.
pub const CHAIN_LINKS_PER_LEVEL: u32 = 64;

/// Parse one source text into an (unchecked) program.
pub fn parse(src: &str) -> Result<Program, Vec<InputError>> {
    let toks = lexer::lex(src)?;
    let mut news = Vec::new();
    let program = grammar::ProgramParser::new()
        .parse(&mut news, toks.into_iter().map(Ok::<_, InputError>))
        .map_err(|e| vec![convert(e, src.len())])?;
    if !news.is_empty() {
        return Err(news
            .into_iter()
            .map(|(span, _)| {
                InputError::type_error(
                    "`new` can only be the whole right side of a declaration or assignment",
                    span,
                    "assign this to a local first",
                )
            })
            .collect());
    }
    Ok(program)
}

/// A LALRPOP error as an input error; an unexpected end is reported at the end of the
/// text (`len`), not after the last token.
fn convert(e: ParseError<usize, Tok<'_>, InputError>, len: usize) -> InputError {
    match e {
        ParseError::User { error } => error,
        ParseError::InvalidToken { location } => {
            InputError::parse("invalid token", Span::new(location, location), "here")
        }
        ParseError::UnrecognizedEof { location, expected } => InputError::parse(
            format!("unexpected end of file; expected {}", describe(&expected)),
            Span::new(len.max(location), len.max(location)),
            "the file ends here",
        ),
        ParseError::UnrecognizedToken { token: (l, t, r), expected } => {
            let message = if t == Tok::New {
                "`new` can only be the whole right side of a declaration or assignment".to_string()
            } else {
                format!("expected {}, found `{t}`", describe(&expected))
            };
            InputError::parse(message, Span::new(l, r), format!("unexpected `{t}`"))
        }
        ParseError::ExtraToken { token: (l, t, r) } => InputError::parse(
            format!("unexpected `{t}` after the last class or interface"),
            Span::new(l, r),
            "expected `class`, `interface` or the end of the file",
        ),
    }
}

/// Tokens that can start an expression, summarised as "an expression".
const EXPR_START: &[&str] = &[
    "Num",
    "BigNum",
    "seq",
    "forall",
    "exists",
    "write",
    "none",
    "perm",
    "Id",
    "true",
    "false",
    "null",
    "this",
    "result",
    "(",
    "!",
    "-",
    "old",
    "acc",
    "untouched",
    "new",
    "opening",
    "using",
];

/// Tokens that can continue an expression, summarised as "an operator".
const OPERATORS: &[&str] =
    &["[", ".", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "&&", "||", "==>", "?"];

/// "`;` or `(`", "`;` or an operator", ... from LALRPOP's expected-token list.
fn describe(expected: &[String]) -> String {
    let mut names: Vec<&str> = expected.iter().map(|s| s.trim_matches('"')).collect();
    // The likeliest fix first.
    names.sort_by_key(|n| !matches!(*n, ";" | ")" | "}"));
    let count = |set: &[&str]| names.iter().filter(|n| set.contains(n)).count();
    let expr = count(EXPR_START) >= 8;
    let ops = count(OPERATORS) >= 6;
    let mut items: Vec<String> = Vec::new();
    for n in &names {
        if expr && EXPR_START.contains(n) {
            if !items.iter().any(|i| i == "an expression") {
                items.push("an expression".into());
            }
        } else if ops && OPERATORS.contains(n) {
            if !items.iter().any(|i| i == "an operator") {
                items.push("an operator".into());
            }
        } else {
            let item = match *n {
                "Id" => "an identifier".into(),
                "Num" | "BigNum" => "an integer".into(),
                "Modifier" => continue,
                other => format!("`{other}`"),
            };
            if !items.contains(&item) {
                items.push(item);
            }
        }
    }
    if items.len() > 8 {
        items.truncate(8);
        items.push("...".into());
    }
    match items.len() {
        0 => "nothing more".into(),
        1 => items.remove(0),
        n => format!("{} or {}", items[..n - 1].join(", "), items[n - 1]),
    }
}

/// The builders the grammar's actions call. Each expression, statement and block is
/// paired with its nesting depth.
pub mod build {
    use super::MAX_DEPTH;
    use crate::syntax::InputError;
    use crate::syntax::ast::*;
    use crate::syntax::lexer::Tok;
    use lalrpop_util::ParseError;

    pub type PE = (Expr, u32);
    pub type PS = (Stmt, u32);
    pub type PB = (Block, u32);
    pub type R<'a, T> = Result<T, ParseError<usize, Tok<'a>, InputError>>;
    /// `new` expressions met so far and not yet claimed as a whole right side; each is
    /// stood in for in the tree by a `null` with the same span.
    pub type News = Vec<(Span, Rhs)>;

    /// A contract clause's keyword.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Spec {
        Requires,
        Ensures,
        Decreases,
    }

    /// `seq<T>(..)` (`elem` given) or `seq(..)`.
    pub fn seq_lit<'a>(elem: Option<Type>, elems: Vec<PE>, l: usize, r: usize) -> R<'a, PE> {
        let span = Span::new(l, r);
        let d = depth(elems.iter().map(|e| e.1).max().unwrap_or(0) + LEVEL, span)?;
        let elem = elem.unwrap_or(Type::Unknown);
        let elems = elems.into_iter().map(|e| e.0).collect();
        Ok((Expr::new(ExprKind::SeqLit { elem, elems }, span), d))
    }

    /// `s[lo..hi]` with either bound missing.
    pub fn slice<'a>(s: PE, lo: Option<PE>, hi: Option<PE>, l: usize, r: usize) -> R<'a, PE> {
        let span = Span::new(l, r);
        let inner = [Some(s.1), lo.as_ref().map(|e| e.1), hi.as_ref().map(|e| e.1)];
        let d = depth(inner.into_iter().flatten().max().unwrap_or(0) + LEVEL, span)?;
        let kind = ExprKind::Slice {
            seq: Box::new(s.0),
            lo: lo.map(|e| Box::new(e.0)),
            hi: hi.map(|e| Box::new(e.0)),
        };
        Ok((Expr::new(kind, span), d))
    }

    /// `forall|exists T x, .. :: {triggers} body`. A body that is itself a quantifier
    /// of the same kind without written triggers of its own is folded in
    /// (`forall int i :: forall int j :: B` is `forall int i, int j :: B`), when this
    /// one has none written either.
    pub fn quant<'a>(
        kind: QuantKind,
        vars: Vec<Binder>,
        triggers: Vec<(Vec<PE>, Span)>,
        body: PE,
        l: usize,
        r: usize,
    ) -> R<'a, PE> {
        let span = Span::new(l, r);
        let inner = triggers.iter().flat_map(|(g, _)| g.iter().map(|e| e.1)).max().unwrap_or(0);
        let d = depth(inner.max(body.1) + LEVEL, span)?;
        let triggers: Vec<Trigger> = triggers
            .into_iter()
            .map(|(g, span)| Trigger { terms: g.into_iter().map(|e| e.0).collect(), span })
            .collect();
        let mut q = Quant {
            kind,
            vars,
            triggers,
            inferred: false,
            permission: false,
            body: Box::new(body.0),
        };
        if q.triggers.is_empty()
            && let ExprKind::Quant(inner) = &mut q.body.kind
            && inner.kind == kind
        {
            let inner = std::mem::replace(inner, Box::new(placeholder_quant(kind)));
            let inner = *inner;
            q.vars.extend(inner.vars);
            q.triggers = inner.triggers;
            q.body = inner.body;
        }
        Ok((Expr::new(ExprKind::Quant(Box::new(q)), span), d))
    }

    fn placeholder_quant(kind: QuantKind) -> Quant {
        Quant {
            kind,
            vars: vec![],
            triggers: vec![],
            inferred: false,
            permission: false,
            body: Box::new(Expr::new(ExprKind::Bool(true), Span::default())),
        }
    }

    /// Depths are counted in units: a nesting level is `CHAIN_LINKS_PER_LEVEL` units, a
    /// link of a flat chain of one operator one unit.
    const LEVEL: u32 = super::CHAIN_LINKS_PER_LEVEL;

    fn depth<'a>(d: u32, span: Span) -> R<'a, u32> {
        if d > MAX_DEPTH * LEVEL {
            Err(ParseError::User {
                error: InputError::parse(
                    format!(
                        "nesting too deep (more than {MAX_DEPTH} levels, or a chain of more than {} operators)",
                        MAX_DEPTH * LEVEL
                    ),
                    span,
                    "nested too deeply",
                ),
            })
        } else {
            Ok(d)
        }
    }

    fn err<'a, T>(message: &str, span: Span, label: &str) -> R<'a, T> {
        Err(ParseError::User { error: InputError::parse(message, span, label) })
    }

    pub fn leaf(kind: ExprKind, l: usize, r: usize) -> PE {
        (Expr::new(kind, Span::new(l, r)), 1)
    }

    pub fn node1<'a>(
        f: impl FnOnce(Box<Expr>) -> ExprKind,
        e: PE,
        l: usize,
        r: usize,
    ) -> R<'a, PE> {
        let span = Span::new(l, r);
        Ok((Expr::new(f(Box::new(e.0)), span), depth(e.1 + LEVEL, span)?))
    }

    pub fn node2<'a>(
        f: impl FnOnce(Box<Expr>, Box<Expr>) -> ExprKind,
        a: PE,
        c: PE,
        l: usize,
        r: usize,
    ) -> R<'a, PE> {
        let span = Span::new(l, r);
        let d = depth(a.1.max(c.1) + LEVEL, span)?;
        Ok((Expr::new(f(Box::new(a.0), Box::new(c.0)), span), d))
    }

    /// `acc(e, p)`: the permission `acc(e)` (built by `f`) at amount `p`.
    pub fn acc_amount<'a>(
        f: impl FnOnce(Box<Expr>) -> ExprKind,
        e: PE,
        p: PE,
        l: usize,
        r: usize,
    ) -> R<'a, PE> {
        let span = Span::new(l, r);
        let inner = node1(f, e, l, r)?;
        node2(|acc, amount| ExprKind::Frac { acc, amount }, inner, p, span.start as usize, r)
    }

    pub fn bin<'a>(a: PE, op: BinOp, c: PE) -> R<'a, PE> {
        let (l, r) = (a.0.span.start as usize, c.0.span.end as usize);
        let same = |e: &Expr| matches!(&e.kind, ExprKind::Binary { op: o, .. } if *o == op);
        // `==>` associates to the right, every other operator to the left.
        let link = if op == BinOp::Implies { same(&c.0) } else { same(&a.0) };
        if link {
            // A link of a flat chain (left- or right-associative).
            let span = Span::new(l, r);
            let d = depth(a.1.max(c.1) + 1, span)?;
            return Ok((
                Expr::new(ExprKind::Binary { op, l: Box::new(a.0), r: Box::new(c.0) }, span),
                d,
            ));
        }
        node2(|l, r| ExprKind::Binary { op, l, r }, a, c, l, r)
    }

    pub fn cond<'a>(c: PE, a: PE, b: PE, l: usize, r: usize) -> R<'a, PE> {
        let span = Span::new(l, r);
        let d = depth(c.1.max(a.1).max(b.1) + LEVEL, span)?;
        let kind = ExprKind::Cond { c: Box::new(c.0), a: Box::new(a.0), b: Box::new(b.0) };
        Ok((Expr::new(kind, span), d))
    }

    pub fn field<'a>(e: PE, field: Ident, l: usize, r: usize) -> R<'a, PE> {
        node1(|recv| ExprKind::Field { recv, field, class: None }, e, l, r)
    }

    pub fn call<'a>(recv: Option<PE>, name: Ident, args: Vec<PE>, l: usize, r: usize) -> R<'a, PE> {
        let span = Span::new(l, r);
        let inner = args.iter().map(|a| a.1).chain(recv.as_ref().map(|e| e.1)).max().unwrap_or(0);
        let d = depth(inner + LEVEL, span)?;
        let recv = match recv {
            Some(e) => CallRecv::Expr(Box::new(e.0)),
            None => CallRecv::Implicit,
        };
        let args = args.into_iter().map(|a| a.0).collect();
        Ok((Expr::new(ExprKind::Call { recv, name, args, target: None }, span), d))
    }

    pub fn new_object(news: &mut News, class: Ident, args: Vec<PE>, l: usize, r: usize) -> PE {
        let span = Span::new(l, r);
        let d = args.iter().map(|a| a.1).max().unwrap_or(0) + LEVEL;
        let args = args.into_iter().map(|a| a.0).collect();
        news.push((span, Rhs::New { class, args, span }));
        (Expr::new(ExprKind::Null, span), d)
    }

    pub fn new_array(news: &mut News, elem: Type, len: PE, l: usize, r: usize) -> PE {
        let span = Span::new(l, r);
        news.push((span, Rhs::NewArray { elem, len: Box::new(len.0), span }));
        (Expr::new(ExprKind::Null, span), len.1 + LEVEL)
    }

    /// The right side of a declaration or assignment: a parked `new` if `e` stands for it.
    fn rhs(news: &mut News, e: Expr) -> Rhs {
        if matches!(e.kind, ExprKind::Null)
            && news.last().is_some_and(|(s, _)| *s == e.span)
            && let Some((_, rhs)) = news.pop()
        {
            return rhs;
        }
        Rhs::Expr(e)
    }

    fn stmt<'a>(kind: StmtKind, d: u32, l: usize, r: usize) -> R<'a, PS> {
        let span = Span::new(l, r);
        Ok((Stmt { kind, span }, depth(d + LEVEL, span)?))
    }

    pub fn local<'a>(
        news: &mut News,
        ty: Type,
        name: Ident,
        init: Option<PE>,
        l: usize,
        r: usize,
    ) -> R<'a, PS> {
        let d = init.as_ref().map_or(0, |e| e.1);
        let init = init.map(|e| rhs(news, e.0));
        stmt(StmtKind::Local { ty, name, init }, d, l, r)
    }

    pub fn assign<'a>(news: &mut News, lhs: PE, e: PE, l: usize, r: usize) -> R<'a, PS> {
        if !matches!(
            lhs.0.kind,
            ExprKind::Name(_) | ExprKind::Field { .. } | ExprKind::Index { .. }
        ) {
            return err(
                "cannot assign to this expression: the left side must be a variable, a field `e.f` or an element `a[i]`",
                lhs.0.span,
                "not assignable",
            );
        }
        let d = lhs.1.max(e.1);
        let rhs = rhs(news, e.0);
        stmt(StmtKind::Assign { lhs: lhs.0, rhs }, d, l, r)
    }

    pub fn call_stmt<'a>(e: PE, l: usize, r: usize) -> R<'a, PS> {
        if !matches!(e.0.kind, ExprKind::Call { .. }) {
            return err(
                "this expression is not a statement: only a call can stand alone",
                e.0.span,
                "expected a call or an assignment",
            );
        }
        stmt(StmtKind::Call(e.0), e.1, l, r)
    }

    pub fn stmt_of<'a>(f: impl FnOnce(Expr) -> StmtKind, e: PE, l: usize, r: usize) -> R<'a, PS> {
        stmt(f(e.0), e.1, l, r)
    }

    pub fn return_stmt<'a>(e: Option<PE>, l: usize, r: usize) -> R<'a, PS> {
        let d = e.as_ref().map_or(0, |e| e.1);
        stmt(StmtKind::Return(e.map(|e| e.0)), d, l, r)
    }

    pub fn while_stmt<'a>(cond: PE, invs: Vec<PE>, body: PB, l: usize, r: usize) -> R<'a, PS> {
        let d = invs.iter().map(|i| i.1).chain([cond.1, body.1]).max().unwrap_or(0);
        let invariants = invs.into_iter().map(|i| i.0).collect();
        stmt(StmtKind::While { cond: cond.0, invariants, body: body.0 }, d, l, r)
    }

    pub fn if_stmt<'a>(cond: PE, then: PB, els: Option<PS>, l: usize, r: usize) -> R<'a, PS> {
        let d = cond.1.max(then.1).max(els.as_ref().map_or(0, |s| s.1));
        let else_if = matches!(&els, Some((Stmt { kind: StmtKind::If { .. }, .. }, _)));
        let els = els.map(|s| Box::new(s.0));
        let kind = StmtKind::If { cond: cond.0, then: then.0, els };
        if else_if {
            // `else if`: a link of a flat chain.
            let span = Span::new(l, r);
            return Ok((Stmt { kind, span }, depth(d + 1, span)?));
        }
        stmt(kind, d, l, r)
    }

    pub fn block_stmt<'a>(b: PB) -> R<'a, PS> {
        let span = b.0.span;
        Ok((Stmt { kind: StmtKind::Block(b.0), span }, b.1))
    }

    pub fn block<'a>(ss: Vec<PS>, l: usize, r: usize) -> R<'a, PB> {
        let span = Span::new(l, r);
        let d = depth(ss.iter().map(|s| s.1).max().unwrap_or(0) + LEVEL, span)?;
        Ok((Block { stmts: ss.into_iter().map(|s| s.0).collect(), span }, d))
    }

    #[allow(clippy::too_many_arguments)]
    pub fn member(
        kind: MemberKind,
        is_static: bool,
        ty: Type,
        name: Ident,
        params: Vec<Param>,
        specs: Vec<(Spec, PE)>,
        body: Body,
        l: usize,
        r: usize,
    ) -> Member {
        let (mut requires, mut ensures, mut decreases) = (Vec::new(), Vec::new(), Vec::new());
        for (kind, e) in specs {
            match kind {
                Spec::Requires => requires.push(e.0),
                Spec::Ensures => ensures.push(e.0),
                Spec::Decreases => decreases.push(e.0),
            }
        }
        Member {
            kind,
            name,
            is_static,
            ty,
            params,
            requires,
            ensures,
            decreases,
            body,
            span: Span::new(l, r),
            inherits: None,
        }
    }
}
