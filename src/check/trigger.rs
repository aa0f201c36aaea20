//! Triggers of value quantifiers (LANGUAGE.md section 13): checking written trigger
//! groups and inferring them when none is written.
//!
//! Architecture invariant: this runs on a quantifier whose body (and written triggers)
//! the expression checker has already resolved and typed; it only reads and rewrites
//! that quantifier. Every trigger it stores is a copy of a sub-expression of the body,
//! with that sub-expression's span, so the verifier recognises the trigger's terms
//! while it evaluates the body (`rules/quant.rs`). Step 5's rewriting adds bound
//! variables named `k$N` (no program can write `$`), typed `int`.

use crate::syntax::InputError;
use crate::syntax::ast::*;

/// A name a bound variable introduced by step 5 gets: `<prefix>$<n>`.
pub const FRESH_MARK: char = '$';

/// Is `e` a trigger term's head (ignoring what its operands are)? `pure` says whether
/// a call's target is a pure method.
fn head(e: &Expr, pure: &dyn Fn(MemberRef) -> bool) -> bool {
    match &e.kind {
        ExprKind::Index { .. }
        | ExprKind::SeqIndex { .. }
        | ExprKind::Slice { .. }
        | ExprKind::SeqContains { .. }
        | ExprKind::SeqUpdated { .. } => true,
        ExprKind::Call { target: Some(t), .. } => pure(*t),
        ExprKind::Old(x) => head(x, pure) && !matches!(x.kind, ExprKind::Old(_)),
        _ => false,
    }
}

/// The operands of a trigger term (for `old(t)`, those of `t`).
fn operands(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Old(x) => operands(x),
        _ => e.children(),
    }
}

fn is_var(e: &Expr, vars: &[String]) -> bool {
    matches!(&e.kind, ExprKind::Local(x) if vars.contains(x))
}

/// The bound variables of `vars` that `e` mentions.
fn mentions(e: &Expr, vars: &[String]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    e.any(&mut |x| {
        if let ExprKind::Local(n) = &x.kind
            && vars.contains(n)
            && !out.contains(n)
        {
            out.push(n.clone());
        }
        false
    });
    out
}

/// A trigger term whose bound variables occur only as whole operands (possibly inside
/// other trigger terms): `a[i]`, `a[src[k]]`, `f(i, n + 1)`; not `a[i + 1]`.
fn valid_term(e: &Expr, vars: &[String], pure: &dyn Fn(MemberRef) -> bool) -> bool {
    head(e, pure)
        && operands(e)
            .into_iter()
            .all(|o| is_var(o, vars) || mentions(o, vars).is_empty() || valid_term(o, vars, pure))
}

/// A print of `e`'s structure without spans or types: equal prints, equal terms.
pub fn fingerprint(e: &Expr) -> String {
    let mut out = String::new();
    print(e, &mut out);
    out
}

fn print(e: &Expr, out: &mut String) {
    use std::fmt::Write;
    let tag = match &e.kind {
        ExprKind::Int(n) => format!("{n}"),
        ExprKind::BigInt(n) => n.clone(),
        ExprKind::Bool(b) => format!("{b}"),
        ExprKind::Null => "null".into(),
        ExprKind::This => "this".into(),
        ExprKind::Result => "result".into(),
        ExprKind::Name(x) | ExprKind::Local(x) => format!("${x}"),
        ExprKind::Field { field, class, .. } => format!("field {} {class:?}", field.name),
        ExprKind::Length(_) => "length".into(),
        ExprKind::Index { .. } => "index".into(),
        ExprKind::Call { recv, name, target, .. } => {
            let r = match recv {
                CallRecv::Static(c) => format!("static {c}"),
                CallRecv::Implicit => "implicit".into(),
                CallRecv::Expr(_) => "recv".into(),
            };
            format!("call {} {target:?} {r}", name.name)
        }
        ExprKind::Unary { op, .. } => format!("{op:?}"),
        ExprKind::Binary { op, .. } => format!("{op:?}"),
        ExprKind::Cond { .. } => "?:".into(),
        ExprKind::Old(_) => "old".into(),
        ExprKind::Acc(_) => "acc".into(),
        ExprKind::AccArray(_) => "acc[*]".into(),
        ExprKind::Untouched(_) => "untouched".into(),
        ExprKind::Frac { .. } => "acc/p".into(),
        ExprKind::Write => "write".into(),
        ExprKind::NoPerm => "none".into(),
        ExprKind::PermOf(_) => "perm".into(),
        ExprKind::Opening { .. } => "opening".into(),
        ExprKind::Using { .. } => "using".into(),
        ExprKind::Quant(q) => {
            let vs: Vec<&str> = q.vars.iter().map(|b| b.name.name.as_str()).collect();
            format!("{} {}", q.kind.keyword(), vs.join(","))
        }
        ExprKind::SeqLit { elem, .. } => format!("seq<{elem}>"),
        ExprKind::SeqLen(_) => "seqlen".into(),
        ExprKind::SeqIndex { .. } => "seqindex".into(),
        ExprKind::Slice { lo, hi, .. } => format!("slice {} {}", lo.is_some(), hi.is_some()),
        ExprKind::SeqConcat(..) => "++".into(),
        ExprKind::SeqContains { .. } => "contains".into(),
        ExprKind::SeqUpdated { .. } => "updated".into(),
    };
    let _ = write!(out, "({tag}");
    for c in e.children() {
        out.push(' ');
        print(c, out);
    }
    out.push(')');
}

/// Every sub-expression of `e` (itself included) in textual order, each with whether
/// it stands inside `old(..)`, skipping the bodies of nested quantifiers when
/// `skip_nested` (their triggers are theirs).
fn walk<'a>(e: &'a Expr, in_old: bool, out: &mut Vec<(&'a Expr, bool)>) {
    out.push((e, in_old));
    let in_old = in_old || matches!(e.kind, ExprKind::Old(_));
    if let ExprKind::Quant(q) = &e.kind {
        // Only the body: written triggers of a nested quantifier are not terms of it.
        walk(&q.body, in_old, out);
        return;
    }
    for c in e.children() {
        walk(c, in_old, out);
    }
}

/// The bound variables of quantifiers nested in `e`.
fn nested_vars(e: &Expr) -> Vec<String> {
    let mut out = vec![];
    e.any(&mut |x| {
        if let ExprKind::Quant(q) = &x.kind {
            out.extend(q.vars.iter().map(|b| b.name.name.clone()));
        }
        false
    });
    out
}

/// Does `o` have a bound variable below `+` or `-`?
fn shifted(o: &Expr, vars: &[String]) -> bool {
    o.any(&mut |x| {
        matches!(&x.kind, ExprKind::Binary { op: BinOp::Add | BinOp::Sub, l, r }
            if !mentions(l, vars).is_empty() || !mentions(r, vars).is_empty())
    })
}

/// What a trigger term reads: the array, sequence or method, as a fingerprint.
fn source(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Index { arr: s, .. }
        | ExprKind::SeqIndex { seq: s, .. }
        | ExprKind::Slice { seq: s, .. }
        | ExprKind::SeqContains { seq: s, .. }
        | ExprKind::SeqUpdated { seq: s, .. } => {
            Some(format!("{:?} {}", std::mem::discriminant(&e.kind), fingerprint(s)))
        }
        ExprKind::Call { target: Some(t), .. } => Some(format!("call {t:?}")),
        ExprKind::Old(x) => source(x),
        _ => None,
    }
}

/// Candidate `e` as a trigger term in the heap it was met in: `old(e)` when it stands
/// inside `old(..)` (a read of the old heap matches old reads only).
fn as_met(e: &Expr, in_old: bool) -> Expr {
    if in_old {
        let mut o = Expr::new(ExprKind::Old(Box::new(e.clone())), e.span);
        o.ty = e.ty.clone();
        o
    } else {
        e.clone()
    }
}

/// Step 2's loop guard: does `body` read the same source as candidate `c`, in the same
/// heap, with a bound variable below `+`/`-` in an operand position where `c` has one?
fn loops(c: (&Expr, bool), all: &[(&Expr, bool)], vars: &[String]) -> bool {
    let Some(src) = source(c.0) else { return false };
    let cops = operands(c.0);
    all.iter().any(|&(o, in_old)| {
        // `old(t)` itself is listed outside old; `t` inside it is met with `in_old`.
        !matches!(o.kind, ExprKind::Old(_))
            && in_old == c.1
            && source(o).as_deref() == Some(src.as_str())
            && operands(o).iter().zip(&cops).any(|(oo, co)| {
                shifted(oo, vars) && !mentions(co, vars).is_empty() && !shifted(co, vars)
            })
    })
}

/// Steps 1-4 on `body` with bound variables `vars`: the trigger groups (or none),
/// and the bound variables the candidates left by the loop guard cover.
fn infer(
    body: &Expr,
    vars: &[String],
    pure: &dyn Fn(MemberRef) -> bool,
) -> (Vec<Vec<Expr>>, Vec<String>) {
    let mut all = vec![];
    walk(body, false, &mut all);
    let nested = nested_vars(body);
    // 1. Candidates, each once (by structure and heap), in textual order.
    let mut seen: Vec<(String, bool)> = vec![];
    let mut cands: Vec<(&Expr, bool)> = vec![];
    for &(e, in_old) in &all {
        if matches!(e.kind, ExprKind::Old(_)) {
            // `old(t)` is met as `t` inside old.
            continue;
        }
        if !valid_term(e, vars, pure)
            || mentions(e, vars).is_empty()
            || !mentions(e, &nested).is_empty()
        {
            continue;
        }
        let key = (fingerprint(e), in_old);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        cands.push((e, in_old));
    }
    // 2. The loop guard.
    let cands: Vec<(&Expr, bool)> =
        cands.iter().copied().filter(|c| !loops(*c, &all, vars)).collect();
    // 3. Candidates with every bound variable, minus those containing another such.
    let full: Vec<(&Expr, bool)> =
        cands.iter().copied().filter(|c| mentions(c.0, vars).len() == vars.len()).collect();
    if !full.is_empty() {
        let contains_other = |e: &Expr| {
            full.iter().any(|(o, _)| {
                !std::ptr::eq(*o, e) && {
                    let fo = fingerprint(o);
                    fingerprint(e) != fo && e.any(&mut |x| fingerprint(x) == fo)
                }
            })
        };
        let groups = full
            .iter()
            .filter(|c| !contains_other(c.0))
            .map(|&(e, in_old)| vec![as_met(e, in_old)])
            .collect();
        return (groups, vars.to_vec());
    }
    // 4. One multi-trigger covering every bound variable, in textual order.
    let mut covered: Vec<String> = vec![];
    let mut group = vec![];
    for &(e, in_old) in &cands {
        let m = mentions(e, vars);
        if m.iter().any(|x| !covered.contains(x)) {
            for x in m {
                if !covered.contains(&x) {
                    covered.push(x);
                }
            }
            group.push(as_met(e, in_old));
        }
        if covered.len() == vars.len() {
            return (vec![group], covered);
        }
    }
    (vec![], covered)
}

/// Is `o` `i + c`, `c + i` or `i - c` for a bound `i` of `vars` and `c` without bound
/// variables, written in any grouping (`y + i - x` is `i + (y - x)`)? Returns `i`.
fn offset_of(o: &Expr, vars: &[String]) -> Option<String> {
    /// `o` is `i` plus or minus terms free of bound variables, `i` added.
    fn added(o: &Expr, vars: &[String], depth: u32) -> Option<String> {
        if is_var(o, vars) {
            return mentions(o, vars).pop();
        }
        if depth > 16 {
            return None;
        }
        let ExprKind::Binary { op, l, r } = &o.kind else { return None };
        let free = |e: &Expr| mentions(e, vars).is_empty();
        match op {
            BinOp::Add | BinOp::Sub if free(r) => added(l, vars, depth + 1),
            BinOp::Add if free(l) => added(r, vars, depth + 1),
            _ => None,
        }
    }
    if is_var(o, vars) {
        return None;
    }
    added(o, vars, 0)
}

/// Step 5: the first operand `i + c` of a trigger-term head in `body` whose `i` is not
/// in `covered`.
fn shifted_operand(
    body: &Expr,
    vars: &[String],
    covered: &[String],
    pure: &dyn Fn(MemberRef) -> bool,
) -> Option<Expr> {
    let mut all = vec![];
    walk(body, false, &mut all);
    for (e, _) in all {
        if !head(e, pure) {
            continue;
        }
        for o in operands(e) {
            if let Some(i) = offset_of(o, vars)
                && !covered.contains(&i)
            {
                return Some(o.clone());
            }
        }
    }
    None
}

/// Replace each operand of a trigger-term head structurally equal to `from` by `to`.
fn replace_operands(e: &mut Expr, from: &str, to: &Expr, pure: &dyn Fn(MemberRef) -> bool) {
    let is_head = head(e, pure);
    let target: &mut Expr = match &mut e.kind {
        ExprKind::Old(x) if is_head => x,
        _ => e,
    };
    for c in target.children_mut() {
        if is_head && fingerprint(c) == from {
            *c = to.clone();
        } else {
            replace_operands(c, from, to, pure);
        }
    }
}

/// The variables covered by some group of `triggers`.
fn covered(triggers: &[Vec<Expr>], vars: &[String]) -> Vec<String> {
    let mut out = vec![];
    for g in triggers {
        for t in g {
            for x in mentions(t, vars) {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
        }
    }
    out
}

/// Check the written triggers of `q`, or infer them (section 13). `pure` says whether
/// a call's target is a pure method; `fresh` numbers step 5's variables.
pub fn resolve(
    q: &mut Quant,
    span: Span,
    pure: &dyn Fn(MemberRef) -> bool,
    fresh: &mut u32,
    errors: &mut Vec<InputError>,
) {
    let vars: Vec<String> = q.vars.iter().map(|b| b.name.name.clone()).collect();
    if !q.triggers.is_empty() {
        written(q, &vars, pure, errors);
        return;
    }
    q.inferred = true;
    let mut vars = vars;
    let (mut groups, mut cov) = infer(&q.body, &vars, pure);
    // Step 5, once per uncovered variable at most (each round covers one more).
    for _ in 0..q.vars.len() {
        if !groups.is_empty() {
            break;
        }
        let Some(operand) = shifted_operand(&q.body, &vars, &cov, pure) else { break };
        *fresh += 1;
        let k = format!("k{FRESH_MARK}{fresh}");
        let at = operand.span;
        let local = Expr { kind: ExprKind::Local(k.clone()), span: at, ty: Type::Int };
        let from = fingerprint(&operand);
        replace_operands(&mut q.body, &from, &local, pure);
        let eq = Expr {
            kind: ExprKind::Binary { op: BinOp::Eq, l: Box::new(local), r: Box::new(operand) },
            span: at,
            ty: Type::Bool,
        };
        let body = std::mem::replace(&mut *q.body, Expr::new(ExprKind::Null, span));
        let bspan = body.span;
        // `k == i + c ==> B` under `forall`, `k == i + c && B` under `exists`: either
        // says what `B` with `i + c` says (an `==>` under `exists` would hold for any
        // `k` other than `i + c`).
        let op = match q.kind {
            crate::syntax::ast::QuantKind::Forall => BinOp::Implies,
            crate::syntax::ast::QuantKind::Exists => BinOp::And,
        };
        *q.body = Expr {
            kind: ExprKind::Binary { op, l: Box::new(eq), r: Box::new(body) },
            span: bspan,
            ty: Type::Bool,
        };
        q.vars.push(Binder { ty: Type::Int, name: Ident { name: k.clone(), span: at } });
        vars.push(k);
        (groups, cov) = infer(&q.body, &vars, pure);
    }
    q.triggers = groups.into_iter().map(|terms| Trigger { terms, span }).collect();
}

/// Written triggers: each term a trigger term with a bound variable, occurring in the
/// body; each group mentions every bound variable. The terms are replaced by their
/// occurrences in the body (same spans).
fn written(
    q: &mut Quant,
    vars: &[String],
    pure: &dyn Fn(MemberRef) -> bool,
    errors: &mut Vec<InputError>,
) {
    let mut all = vec![];
    walk(&q.body, false, &mut all);
    let mut replaced: Vec<Trigger> = vec![];
    for g in &q.triggers {
        let mut terms = vec![];
        let mut ok = true;
        for t in &g.terms {
            if t.ty == Type::Unknown {
                ok = false;
                continue;
            }
            if !valid_term(t, vars, pure) {
                errors.push(InputError::type_error(
                    "a trigger term is an array or sequence read, a slice, `contains`, `updated` or a pure-method call (or `old` of one), with bound variables only as whole operands (`a[i]`, not `a[i + 1]`)",
                    t.span,
                    "not a trigger term",
                ));
                ok = false;
                continue;
            }
            if mentions(t, vars).is_empty() {
                errors.push(InputError::type_error(
                    "a trigger term must mention a bound variable of its quantifier",
                    t.span,
                    "no bound variable",
                ));
                ok = false;
                continue;
            }
            let fp = fingerprint(t);
            match all.iter().find(|(e, _)| fingerprint(e) == fp) {
                Some((e, _)) => terms.push((*e).clone()),
                None => {
                    errors.push(InputError::type_error(
                        "a trigger term must occur in the quantifier's body as written",
                        t.span,
                        "not in the body",
                    ));
                    ok = false;
                }
            }
        }
        if !ok {
            continue;
        }
        let cov = covered(std::slice::from_ref(&terms), vars);
        let missing: Vec<&String> = vars.iter().filter(|v| !cov.contains(v)).collect();
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|m| format!("`{m}`")).collect();
            errors.push(InputError::type_error(
                format!(
                    "this trigger group does not mention the bound variable{} {}: each group must mention every bound variable of its quantifier",
                    if missing.len() == 1 { "" } else { "s" },
                    names.join(", ")
                ),
                g.span,
                "a bound variable is missing",
            ));
            continue;
        }
        replaced.push(Trigger { terms, span: g.span });
    }
    q.triggers = replaced;
}
