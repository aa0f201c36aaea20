//! Suggested fixes: for a failed member, mechanical edits of the source (a missing
//! `acc(e.f)` in the precondition, and in the postcondition to give it back; a
//! `requires x != null`; a `requires` that a divisor is not zero or an index in
//! bounds, when it is a parameter; a loop `invariant` bounding its counter, or
//! carrying a permission the loop body lacks; an `open` or a `close` when inference
//! is off), each offered only after it was verified to work.
//!
//! A candidate is applied to the source text, the front end runs on the result, and
//! the member alone is verified again (with the vacuity check, so a fix that makes the
//! precondition `false` never passes). It is offered when that failure is gone and no
//! failure appears that was not there before. Each failure gets at most
//! [`MAX_CANDIDATES`] attempts and a member at most [`MAX_ATTEMPTS`], all of them
//! together at most half of what the member's verification left of its time budget
//! (and [`MAX_FIX_TIME`]).
//!
//! Architecture invariant: it never prints and never changes a verdict; it only fills
//! `VerificationError::fix`.

use crate::source::select_members;
use crate::syntax::ast::{Body, Expr, ExprKind, MemberKind, Program, Span, Stmt, StmtKind};
use crate::verify::{Config, Fix, MemberResult, Status, VerificationError};

/// Attempts per failure.
pub const MAX_CANDIDATES: usize = 3;
/// Attempts per member.
pub const MAX_ATTEMPTS: usize = 6;
/// Seconds all attempts of a member may take together, at most.
pub const MAX_FIX_TIME: f64 = 10.0;
/// Seconds below which no attempt starts.
const MIN_FIX_TIME: f64 = 0.05;

/// Fill `fix` of the failures of `result` (a member of `program`, whose text is
/// `text`) for which some candidate works.
pub fn suggest(program: &Program, text: &str, result: &mut MemberResult, config: &Config) {
    if !config.fixes || result.status != Status::Failed {
        return;
    }
    let before: Vec<(&'static str, Span)> = result.errors.iter().map(|e| (e.id, e.span)).collect();
    // All attempts together take at most half of what is left of the member's budget
    // (and `MAX_FIX_TIME`): suggesting fixes never turns a verdict into a timeout.
    let spent = result.time_ms / 1000.0;
    let share = config.timeout.map_or(MAX_FIX_TIME, |t| ((t - spent) / 2.0).min(MAX_FIX_TIME));
    let start = std::time::Instant::now();
    let mut attempts = 0;
    for i in 0..result.errors.len() {
        let cands = candidates(program, text, result, &result.errors[i], config);
        for fix in cands.into_iter().take(MAX_CANDIDATES) {
            if attempts >= MAX_ATTEMPTS {
                return;
            }
            let left = share - start.elapsed().as_secs_f64();
            if left < MIN_FIX_TIME {
                return;
            }
            attempts += 1;
            let target = (result.errors[i].id, result.errors[i].span);
            let limited = Config { timeout: Some(left), ..config.clone() };
            if works(text, &result.name, &fix, target, &before, &limited) {
                result.errors[i].fix = Some(fix);
                break;
            }
        }
    }
}

/// Does `fix` remove the failure `target` of member `name` without adding one?
fn works(
    text: &str,
    name: &str,
    fix: &Fix,
    target: (&'static str, Span),
    before: &[(&'static str, Span)],
    config: &Config,
) -> bool {
    let Some(edited) = apply(text, &fix.edits) else { return false };
    let Ok(Ok(program)) = crate::guard::catch_panic(|| crate::source::front_end(&edited)) else {
        return false;
    };
    let Some((member, _)) = select_members(&program, &[name.to_string()]).into_iter().next() else {
        return false;
    };
    let check = Config {
        trace: false,
        counterexample: false,
        stats: false,
        smoke: true,
        fixes: false,
        ..config.clone()
    };
    let Ok(Ok(r)) =
        crate::guard::catch_panic(|| crate::verify::verify_member(&program, member, &check))
    else {
        return false;
    };
    if r.status == Status::Timeout || r.warnings.iter().any(|w| w.id == "vacuous") {
        return false;
    }
    r.errors.iter().all(|e| match back(&fix.edits, e.span) {
        Some(span) => (e.id, span) != target && before.contains(&(e.id, span)),
        None => false,
    })
}

/// `text` with `edits` (in source order, not overlapping) applied.
pub fn apply(text: &str, edits: &[(Span, String)]) -> Option<String> {
    let mut out = String::new();
    let mut at = 0;
    for (s, t) in edits {
        let (a, b) = (s.start as usize, s.end as usize);
        if a < at
            || b < a
            || b > text.len()
            || !text.is_char_boundary(a)
            || !text.is_char_boundary(b)
        {
            return None;
        }
        out.push_str(&text[at..a]);
        out.push_str(t);
        at = b;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// A span of the edited text as a span of the original; `None` inside an edit.
fn back(edits: &[(Span, String)], s: Span) -> Option<Span> {
    let map = |p: u32| -> Option<u32> {
        let mut shift: i64 = 0;
        for (e, t) in edits {
            let new_start = e.start as i64 + shift;
            let new_end = new_start + t.len() as i64;
            let p = p as i64;
            if p < new_start {
                break;
            }
            if p < new_end {
                return None;
            }
            shift += t.len() as i64 - (e.end as i64 - e.start as i64);
        }
        u32::try_from(p as i64 - shift).ok()
    };
    Some(Span { start: map(s.start)?, end: map(s.end)?.max(map(s.start)?) })
}

/// The candidate fixes of failure `e`, likeliest first.
fn candidates(
    program: &Program,
    text: &str,
    result: &MemberResult,
    e: &VerificationError,
    config: &Config,
) -> Vec<Fix> {
    let m = &program.classes[result.member.class].members[result.member.member];
    let method = matches!(m.kind, MemberKind::Method | MemberKind::Constructor);
    let mut out = vec![];
    if !matches!(m.kind, MemberKind::Method | MemberKind::Constructor | MemberKind::Pure) {
        return out;
    }
    // A missing permission to a field: ask for it in the precondition (and give it
    // back in the postcondition).
    if e.reason == "insufficient.permission"
        && let Some(loc) = missing_location(&e.message)
    {
        let acc = format!("acc({loc})");
        if let Some(pre) = clause(text, m, "requires", &acc) {
            if !config.infer
                && e.id == "insufficient.permission"
                && let Some(open) =
                    open_candidate(&program.classes[result.member.class], text, m, e, &loc)
            {
                out.push(open);
            }
            let pre_only = Fix {
                message: format!("add `requires {acc};` to the precondition"),
                edits: vec![pre.clone()],
            };
            // A method whose postcondition gives permissions back (or speaks of the
            // location) gives this one back too, if that works.
            let gives_back = m.ensures.iter().any(|e| {
                let t = crate::rules::show::expr(e);
                t.contains("acc(") || t.contains(&loc)
            });
            let both = if method && let Some(post) = clause(text, m, "ensures", &acc) {
                let mut edits = vec![pre.clone(), post];
                edits.sort_by_key(|(s, _)| s.start);
                Some(Fix {
                    message: format!(
                        "add `requires {acc};` to the precondition and `ensures {acc};` to the postcondition"
                    ),
                    edits,
                })
            } else {
                None
            };
            // Inside a loop, the loop's invariant must carry the permission through
            // (the loop body sees only what the invariant gives it).
            if let Some(inv) =
                innermost_loop(m, e.span).and_then(|l| loop_invariant(text, &l, &acc))
            {
                let with_pre = {
                    let mut edits = vec![inv.clone(), pre.clone()];
                    edits.sort_by_key(|(s, _)| s.start);
                    Fix {
                        message: format!(
                            "add `requires {acc};` to the precondition and `invariant {acc};` to the loop"
                        ),
                        edits,
                    }
                };
                out.push(Fix {
                    message: format!("add `invariant {acc};` to the loop"),
                    edits: vec![inv],
                });
                out.push(with_pre);
            }
            match both {
                Some(both) if gives_back => out.extend([both, pre_only]),
                Some(both) => out.extend([pre_only, both]),
                None => out.push(pre_only),
            }
        }
    }
    // A receiver that may be null.
    if e.reason == "receiver.null"
        && let Some(x) = quoted(&e.message)
        && is_path(&x)
        && let Some(pre) = clause(text, m, "requires", &format!("{x} != null"))
    {
        out.push(Fix {
            message: format!("add `requires {x} != null;` to the precondition"),
            edits: vec![pre],
        });
    }
    // A divisor, or an index, that is a parameter the caller may choose badly.
    if e.id == "division.by.zero"
        && let Some(d) = quoted(&e.message)
        && is_param(m, &d)
        && let Some(pre) = clause(text, m, "requires", &format!("{d} != 0"))
    {
        out.push(Fix {
            message: format!("add `requires {d} != 0;` to the precondition"),
            edits: vec![pre],
        });
    }
    if e.id == "index.out.of.bounds"
        && let Some((a, i)) = quoted(&e.message).as_deref().and_then(array_index)
        && is_param(m, &i)
        && innermost_loop(m, e.span).is_none()
    {
        // After the other `requires` clauses: they may say that the array is not null.
        let bound = format!("0 <= {i} && {i} < {a}.length");
        if let Some(pre) = last_requires(text, m, &bound) {
            out.push(Fix {
                message: format!("add `requires {bound};` to the precondition"),
                edits: vec![pre],
            });
        }
    }
    // A predicate instance the postcondition wants, not closed (inference off).
    if !config.infer
        && method
        && e.id == "postcondition.violated"
        && let Some(p) =
            e.message.split("no predicate instance `").nth(1).and_then(|r| r.split('`').next())
        && let Some((at, _)) = e.notes.first()
    {
        let ins = line_insert(
            text,
            at.start as usize,
            &format!("close {p};"),
            at.start == at.end.saturating_sub(1) && text[at.start as usize..].starts_with('}'),
        );
        out.push(Fix {
            message: format!("add `close {p};` before the method ends"),
            edits: vec![ins],
        });
    }
    // A loop invariant that does not bound the loop's counter, or does not say what
    // a local changed in step with the counter holds.
    if method
        && matches!(
            e.id,
            "invariant.not.preserved"
                | "postcondition.violated"
                | "assert.failed"
                | "index.out.of.bounds"
        )
        && let Body::Block(b) = &m.body
    {
        let mut loops = vec![];
        each_loop(&b.stmts, &mut |before, st| {
            if let StmtKind::While { cond, invariants, body } = &st.kind {
                loops.push((
                    before.to_vec(),
                    cond.clone(),
                    invariants.clone(),
                    body.clone(),
                    st.span,
                ));
            }
        });
        for (before, cond, invs, body, whole) in loops {
            // Only loops the failing path went through: the failure is in the loop or
            // after it, or is the postcondition.
            if e.id != "postcondition.violated" && e.span.end <= whole.start {
                continue;
            }
            let l = Loop { invariants: invs.clone(), body: body.span };
            let has = |inv: &str| invs.iter().any(|i| crate::rules::show::expr(i) == inv);
            let bound = counter_bound(&cond).filter(|inv| !has(inv));
            let steps: Vec<String> = induction_invariants(&before, &cond, &body)
                .into_iter()
                .filter(|i| !has(i))
                .collect();
            let steps = (!steps.is_empty()).then(|| steps.join(" && "));
            let mut add = |inv: String| {
                if let Some(ins) = loop_invariant(text, &l, &inv) {
                    out.push(Fix {
                        message: format!("add `invariant {inv};` to the loop"),
                        edits: vec![ins],
                    });
                }
            };
            match (bound, steps) {
                (None, None) => continue,
                (Some(b), None) => add(b),
                (None, Some(s)) => add(s),
                (Some(b), Some(s)) => {
                    add(b.clone());
                    add(s.clone());
                    add(format!("{b} && {s}"));
                }
            }
            break;
        }
    }
    out
}

/// Call `f` on every statement, with the statements before it in its own block.
fn each_loop<'a>(stmts: &'a [Stmt], f: &mut dyn FnMut(&'a [Stmt], &'a Stmt)) {
    for (k, st) in stmts.iter().enumerate() {
        f(&stmts[..k], st);
        match &st.kind {
            StmtKind::If { then, els, .. } => {
                each_loop(&then.stmts, f);
                if let Some(e) = els {
                    each_loop(std::slice::from_ref(&**e), f);
                }
            }
            StmtKind::While { body, .. } => each_loop(&body.stmts, f),
            StmtKind::Block(b) => each_loop(&b.stmts, f),
            _ => {}
        }
    }
}

/// The local a statement assigns, and by how much when it is a step `x = x + c;`
/// or `x = x - c;` (`c` a literal).
fn assigned(st: &Stmt) -> Option<(String, Option<i64>)> {
    let StmtKind::Assign { lhs, rhs } = &st.kind else { return None };
    let x = local_name(lhs)?;
    let step = match rhs {
        crate::syntax::ast::Rhs::Expr(Expr { kind: ExprKind::Binary { op, l, r }, .. }) => {
            match (op, local_name(l), &r.kind) {
                (crate::syntax::ast::BinOp::Add, Some(y), ExprKind::Int(c)) if y == x => Some(*c),
                (crate::syntax::ast::BinOp::Sub, Some(y), ExprKind::Int(c)) if y == x => {
                    c.checked_neg()
                }
                _ => None,
            }
        }
        _ => None,
    };
    Some((x, step))
}

fn local_name(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Local(x) | ExprKind::Name(x) => Some(x.clone()),
        _ => None,
    }
}

/// The expression local `x` was declared with among `before` (its block's statements
/// before the loop), when nothing there assigns it afterwards.
fn initial(before: &[Stmt], x: &str) -> Option<Expr> {
    let k = before
        .iter()
        .rposition(|st| matches!(&st.kind, StmtKind::Local { name, .. } if name.name == x))?;
    let StmtKind::Local { init: Some(crate::syntax::ast::Rhs::Expr(e)), .. } = &before[k].kind
    else {
        return None;
    };
    let mut changed = false;
    crate::syntax::ast::each_stmt(&before[k + 1..], &mut |st: &Stmt| {
        changed |= assigned(st).is_some_and(|(y, _)| y == x);
    });
    (!changed).then(|| e.clone())
}

/// For each local `x` that the loop's body steps once by `x = x ± c;` beside its
/// counter's `i = i + 1;` (the loop `while (i < n)`), the invariant relating `x` to
/// the counter from their initial values (`j == i`, `k == n - i`): a loop keeps it,
/// and a proof after the loop needs it to know `x`.
fn induction_invariants(
    before: &[Stmt],
    cond: &Expr,
    body: &crate::syntax::ast::Block,
) -> Vec<String> {
    let ExprKind::Binary { op: crate::syntax::ast::BinOp::Lt, l, .. } = &cond.kind else {
        return vec![];
    };
    let Some(i) = local_name(l) else { return vec![] };
    let mut all = vec![];
    crate::syntax::ast::each_stmt(&body.stmts, &mut |st: &Stmt| {
        if let Some((x, _)) = assigned(st) {
            all.push(x);
        }
    });
    let once = |x: &str| all.iter().filter(|y| *y == x).count() == 1;
    let steps: Vec<(String, i64)> = body
        .stmts
        .iter()
        .filter_map(assigned)
        .filter_map(|(x, c)| Some((x, c?)))
        .filter(|(x, _)| once(x))
        .collect();
    if !steps.contains(&(i.clone(), 1)) {
        return vec![];
    }
    let shown = |x: &str| -> Option<String> {
        let e = initial(before, x)?;
        let t = crate::rules::show::expr(&e);
        // The initial value must not read what the loop changes.
        let words: Vec<&str> = t.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
        (!words.iter().any(|w| all.iter().any(|y| y == w))).then_some(t)
    };
    let Some(i0) = shown(&i) else { return vec![] };
    let delta = if i0 == "0" { i.clone() } else { format!("({i} - {i0})") };
    let mut out = vec![];
    for (x, c) in steps {
        if x == i {
            continue;
        }
        let Some(x0) = shown(&x) else { continue };
        let term = match c.abs() {
            1 => delta.clone(),
            k => format!("{k} * {delta}"),
        };
        let sign = if c < 0 { "-" } else { "+" };
        let rhs = match (x0.as_str(), c < 0) {
            ("0", false) => term,
            ("0", true) => format!("-{term}"),
            (x0, _) if x0.contains(' ') => format!("({x0}) {sign} {term}"),
            (x0, _) => format!("{x0} {sign} {term}"),
        };
        out.push(format!("{x} == {rhs}"));
    }
    out
}

/// A loop: its invariants and the span of its body.
struct Loop {
    invariants: Vec<Expr>,
    body: Span,
}

/// The innermost loop of `m` whose body holds `at`.
fn innermost_loop(m: &crate::syntax::ast::Member, at: Span) -> Option<Loop> {
    let Body::Block(b) = &m.body else { return None };
    let mut best: Option<Loop> = None;
    crate::syntax::ast::each_stmt(&b.stmts, &mut |st: &Stmt| {
        if let StmtKind::While { invariants, body, .. } = &st.kind
            && body.span.start <= at.start
            && at.end <= body.span.end
            && best.as_ref().is_none_or(|l| l.body.start <= body.span.start)
        {
            best = Some(Loop { invariants: invariants.clone(), body: body.span });
        }
    });
    best
}

/// The edit adding `invariant what;` to loop `l`, before its other invariants (so it
/// frames them).
fn loop_invariant(text: &str, l: &Loop, what: &str) -> Option<(Span, String)> {
    let anchor = match l.invariants.first() {
        Some(i) => keyword_before(text, i.span.start as usize, "invariant")?,
        None => l.body.start as usize,
    };
    Some(insert_at(text, anchor, &format!("invariant {what};"), anchor == l.body.start as usize))
}

/// Is `x` a parameter of `m`?
fn is_param(m: &crate::syntax::ast::Member, x: &str) -> bool {
    m.params.iter().any(|p| p.name.name == x)
}

/// `("a", "i")` for the quoted access `a[i]` of a parameter-like array and index.
fn array_index(s: &str) -> Option<(String, String)> {
    let (a, rest) = s.split_once('[')?;
    let i = rest.strip_suffix(']')?;
    (is_path(a) && is_ident(i)).then(|| (a.to_string(), i.to_string()))
}

/// The loop `while (i < n)` keeps `i <= n` when it counts up by one: the invariant a
/// proof after the loop (`i == n`) needs.
fn counter_bound(cond: &Expr) -> Option<String> {
    if let ExprKind::Binary { op: crate::syntax::ast::BinOp::Lt, l, r } = &cond.kind
        && matches!(l.kind, ExprKind::Local(_) | ExprKind::Name(_))
    {
        return Some(format!("{} <= {}", crate::rules::show::expr(l), crate::rules::show::expr(r)));
    }
    None
}

/// `open r.q();` before the statement of failure `e`, for a predicate `q` without
/// parameters of the member's class, when the location is a field of `r`.
fn open_candidate(
    class: &crate::syntax::ast::Class,
    text: &str,
    m: &crate::syntax::ast::Member,
    e: &VerificationError,
    loc: &str,
) -> Option<Fix> {
    let (recv, _) = loc.rsplit_once('.')?;
    if recv != "this" || m.is_static {
        return None;
    }
    let q =
        class.members.iter().find(|x| x.kind == MemberKind::Predicate && x.params.is_empty())?;
    let stmt = format!("open {}();", q.name.name);
    let ins = line_insert(text, e.span.start as usize, &stmt, false);
    Some(Fix { message: format!("add `{stmt}` before this statement"), edits: vec![ins] })
}

/// The location a missing-permission message names: `b.n` in "no permission to
/// access `this.n` (that is, `b.n`)", else the quoted expression (a bare field name
/// meaning `this.f`). `None` for arrays and anything not a field path.
pub fn missing_location(message: &str) -> Option<String> {
    let rest = message.split("no permission to access `").nth(1)?;
    let first = rest.split('`').next()?;
    let loc = match rest.split("(that is, `").nth(1) {
        Some(r) if rest.find("(that is, `") < rest.find(": ") => r.split('`').next()?.to_string(),
        _ => first.to_string(),
    };
    let loc = if is_ident(&loc) { format!("this.{loc}") } else { loc };
    (loc.contains('.') && is_path(&loc)).then_some(loc)
}

/// The first quoted expression of a message.
fn quoted(message: &str) -> Option<String> {
    Some(message.split('`').nth(1)?.to_string())
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(x) if x.is_ascii_alphabetic() || x == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `x`, `this.f`, `x.f.g`: names joined by dots.
fn is_path(s: &str) -> bool {
    s.split('.').all(is_ident)
}

/// Where `kw` (`requires`, `ensures`, `invariant`) starts, when the clause whose
/// expression starts at `start` is written `kw expr`.
fn keyword_before(text: &str, start: usize, kw: &str) -> Option<usize> {
    let before = text.get(..start)?.trim_end();
    before.ends_with(kw).then(|| before.len() - kw.len())
}

/// The edit adding `kw clause;` to member `m`: before its first `requires` (so the
/// new clause frames the others), or its first `ensures`, or its body.
fn clause(
    text: &str,
    m: &crate::syntax::ast::Member,
    kw: &str,
    body: &str,
) -> Option<(Span, String)> {
    let first = |es: &[Expr], k: &str| {
        es.first().and_then(|e| keyword_before(text, e.span.start as usize, k))
    };
    let anchor = match kw {
        "requires" => first(&m.requires, "requires").or_else(|| first(&m.ensures, "ensures")),
        _ => first(&m.ensures, "ensures"),
    };
    let (anchor, is_body) = match anchor {
        Some(a) => (a, false),
        None => (body_start(text, m)?, true),
    };
    Some(insert_at(text, anchor, &format!("{kw} {body};"), is_body))
}

/// The edit adding `requires clause;` to member `m` after its other `requires`
/// clauses: before its first `ensures`, or its body.
fn last_requires(text: &str, m: &crate::syntax::ast::Member, body: &str) -> Option<(Span, String)> {
    let (anchor, is_body) = match m
        .ensures
        .first()
        .and_then(|e| keyword_before(text, e.span.start as usize, "ensures"))
    {
        Some(a) => (a, false),
        None => (body_start(text, m)?, true),
    };
    Some(insert_at(text, anchor, &format!("requires {body};"), is_body))
}

/// Where the body's `{` is.
fn body_start(text: &str, m: &crate::syntax::ast::Member) -> Option<usize> {
    match &m.body {
        Body::Block(b) => Some(b.span.start as usize),
        Body::Return(e) => text.get(..e.span.start as usize)?.rfind('{'),
        Body::None => None,
    }
}

/// Insert `what` before `anchor`: on a line of its own when `anchor` starts its
/// line (indented like it, or one step more before a body's `{`), else inline.
fn insert_at(text: &str, anchor: usize, what: &str, deeper: bool) -> (Span, String) {
    let line_start = text[..anchor].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..anchor];
    let at = |p: usize| Span::new(p, p);
    if indent.chars().all(|c| c == ' ' || c == '\t') {
        let extra = if deeper { "  " } else { "" };
        (at(line_start), format!("{indent}{extra}{what}\n"))
    } else {
        (at(anchor), format!("{what} "))
    }
}

/// Insert the statement `what` on its own line before the line holding `pos` (one
/// indentation step deeper when that line is a closing `}`).
fn line_insert(text: &str, pos: usize, what: &str, closing: bool) -> (Span, String) {
    let pos = pos.min(text.len());
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let indent: String =
        text[line_start..].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    let extra = if closing { "  " } else { "" };
    (Span::new(line_start, line_start), format!("{indent}{extra}{what}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_missing_location_is_read_in_the_callers_terms() {
        assert_eq!(
            missing_location(
                "no permission to access `this.n` (that is, `b.n`): none is held here"
            )
            .as_deref(),
            Some("b.n")
        );
        assert_eq!(
            missing_location("no permission to access `n`: none is held here").as_deref(),
            Some("this.n")
        );
        assert_eq!(missing_location("no permission to access `a[i]`: none is held here"), None);
    }

    #[test]
    fn edits_apply_and_spans_map_back() {
        let edits = vec![(Span::new(2, 2), "XY".to_string())];
        assert_eq!(apply("abcd", &edits).as_deref(), Some("abXYcd"));
        assert_eq!(back(&edits, Span::new(4, 5)), Some(Span::new(2, 3)));
        assert_eq!(back(&edits, Span::new(0, 1)), Some(Span::new(0, 1)));
        assert_eq!(back(&edits, Span::new(3, 3)), None);
    }
}
