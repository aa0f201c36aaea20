//! Showing things to the user: expressions in source syntax (for messages naming the
//! failing conjunct), and concrete counterexamples from a model, in source terms.
//!
//! Architecture invariant: read-only; it asks the decider for a model but never
//! changes the path condition.

use crate::rules::Verifier;
use crate::rules::result::{EntryModel, ModelValue};
use crate::state::State;
use crate::state::chunk::ChunkKind;
use crate::state::term::{Sort, Term};
use crate::syntax::ast::{CallRecv, Expr, ExprKind, UnOp};

/// The opening words of a message for a failure reported with `id`.
pub fn describe(id: &str, conjunct: &str) -> String {
    match id {
        "assert.failed" => format!("assertion `{conjunct}` might not hold"),
        "postcondition.violated" => format!("postcondition `{conjunct}` might not hold"),
        "call.precondition" => format!("the callee's precondition `{conjunct}` might not hold"),
        "invariant.not.established" => {
            format!("loop invariant `{conjunct}` might not hold on entry")
        }
        "invariant.not.preserved" => format!("loop invariant `{conjunct}` might not be preserved"),
        "join.failed" => format!("join assertion `{conjunct}` might not hold"),
        "close.failed" => format!("predicate body conjunct `{conjunct}` might not hold"),
        _ => format!("`{conjunct}` fails"),
    }
}

/// An expression in (approximately) source syntax, as the user wrote it: triggers the
/// checker inferred are left out (messages quote the program).
pub fn expr(e: &Expr) -> String {
    let mut s = Out { text: String::new(), inferred: false };
    write(e, &mut s, 0);
    s.text
}

/// An expression as checked: with the triggers in use, written or inferred (section
/// 13: `--trace` prints them with the quantifier; so do the quantifier statistics).
pub fn expr_checked(e: &Expr) -> String {
    let mut s = Out { text: String::new(), inferred: true };
    write(e, &mut s, 0);
    s.text
}

/// The text being written, and whether inferred triggers are part of it.
struct Out {
    text: String,
    inferred: bool,
}

impl Out {
    fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
    }

    fn push(&mut self, c: char) {
        self.text.push(c);
    }
}

fn prec(e: &Expr) -> u8 {
    use crate::syntax::ast::BinOp::*;
    match &e.kind {
        ExprKind::Cond { .. }
        | ExprKind::Opening { .. }
        | ExprKind::Using { .. }
        | ExprKind::Quant(_) => 1,
        ExprKind::SeqConcat(..) => 7,
        ExprKind::Binary { op, .. } => match op {
            Implies => 2,
            Or => 3,
            And => 4,
            Eq | Ne => 5,
            Lt | Le | Gt | Ge => 6,
            Add | Sub => 7,
            Mul | Div | Mod => 8,
        },
        ExprKind::Unary { .. } => 9,
        _ => 10,
    }
}

fn args(a: &[Expr], out: &mut Out) {
    out.push('(');
    for (i, x) in a.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(x, out, 0);
    }
    out.push(')');
}

fn write(e: &Expr, out: &mut Out, outer: u8) {
    let p = prec(e);
    let paren = p < outer;
    if paren {
        out.push('(');
    }
    match &e.kind {
        ExprKind::Int(n) => out.push_str(&n.to_string()),
        ExprKind::BigInt(n) => out.push_str(n),
        ExprKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        ExprKind::Null => out.push_str("null"),
        ExprKind::This => out.push_str("this"),
        ExprKind::Result => out.push_str("result"),
        ExprKind::Name(n) | ExprKind::Local(n) => out.push_str(n),
        ExprKind::Field { recv, field, .. } => {
            if !implicit_this(recv, field.span) {
                write(recv, out, 10);
                out.push('.');
            }
            out.push_str(&field.name);
        }
        ExprKind::Length(a) => {
            write(a, out, 10);
            out.push_str(".length");
        }
        ExprKind::Index { arr, idx } => {
            write(arr, out, 10);
            out.push('[');
            write(idx, out, 0);
            out.push(']');
        }
        ExprKind::Call { recv, name, args: a, .. } => {
            match recv {
                CallRecv::Expr(r) if !implicit_this(r, name.span) => {
                    write(r, out, 10);
                    out.push('.');
                }
                CallRecv::Static(c) if !name.span.range().is_empty() && c.is_empty() => {}
                _ => {}
            }
            out.push_str(&name.name);
            args(a, out);
        }
        ExprKind::Unary { op, e } => {
            out.push_str(match op {
                UnOp::Not => "!",
                UnOp::Neg => "-",
            });
            write(e, out, 9);
        }
        ExprKind::Binary { op, l, r } => {
            // Left-associative, except `==>`: the other side needs parentheses at
            // equal precedence.
            let (pl, pr) =
                if *op == crate::syntax::ast::BinOp::Implies { (p + 1, p) } else { (p, p + 1) };
            write(l, out, pl);
            out.push(' ');
            out.push_str(op.symbol());
            out.push(' ');
            write(r, out, pr);
        }
        ExprKind::Cond { c, a, b } => {
            write(c, out, 2);
            out.push_str(" ? ");
            write(a, out, 2);
            out.push_str(" : ");
            write(b, out, 1);
        }
        ExprKind::Old(x) => {
            out.push_str("old(");
            write(x, out, 0);
            out.push(')');
        }
        ExprKind::Acc(x) => {
            out.push_str("acc(");
            write(x, out, 0);
            out.push(')');
        }
        ExprKind::AccArray(x) => {
            out.push_str("acc(");
            write(x, out, 10);
            out.push_str("[*])");
        }
        ExprKind::Frac { acc, amount } => {
            // `acc(loc, p)`; a predicate instance reads `acc(e.q(..), p)`.
            let mut inner = Out { text: String::new(), inferred: out.inferred };
            write(acc, &mut inner, 0);
            let inner = inner.text;
            match inner.strip_prefix("acc(").and_then(|x| x.strip_suffix(')')) {
                Some(loc) => out.push_str(&format!("acc({loc}, ")),
                None => out.push_str(&format!("acc({inner}, ")),
            }
            write(amount, out, 0);
            out.push(')');
        }
        ExprKind::Write => out.push_str("write"),
        ExprKind::NoPerm => out.push_str("none"),
        ExprKind::PermOf(x) => {
            out.push_str("perm(");
            write(x, out, 0);
            out.push(')');
        }
        ExprKind::Untouched(x) => {
            out.push_str("untouched(");
            write(x, out, 0);
            out.push(')');
        }
        ExprKind::Opening { pred, body } => {
            out.push_str("opening ");
            write(pred, out, 10);
            out.push_str(" in ");
            write(body, out, 1);
        }
        ExprKind::Using { call, body } => {
            out.push_str("using ");
            write(call, out, 10);
            out.push_str(" in ");
            write(body, out, 1);
        }
        ExprKind::Quant(q) => {
            out.push_str(q.kind.keyword());
            for (i, b) in q.vars.iter().enumerate() {
                out.push_str(if i == 0 { " " } else { ", " });
                out.push_str(&format!("{} {}", b.ty, b.name.name));
            }
            out.push_str(" ::");
            // The triggers in use: those written, and those inferred when asked for.
            let shown = if q.inferred && !out.inferred { &[][..] } else { &q.triggers[..] };
            for t in shown {
                out.push_str(" {");
                for (i, x) in t.terms.iter().enumerate() {
                    out.push_str(if i == 0 { " " } else { ", " });
                    write(x, out, 0);
                }
                out.push_str(" }");
            }
            out.push(' ');
            write(&q.body, out, 1);
        }
        ExprKind::SeqLit { elem, elems } => {
            out.push_str(&format!("seq<{elem}>"));
            args(elems, out);
        }
        ExprKind::SeqLen(x) => {
            write(x, out, 10);
            out.push_str(".length");
        }
        ExprKind::SeqIndex { seq, idx } => {
            write(seq, out, 10);
            out.push('[');
            write(idx, out, 0);
            out.push(']');
        }
        ExprKind::Slice { seq, lo, hi } => {
            write(seq, out, 10);
            out.push('[');
            if let Some(lo) = lo {
                write(lo, out, 0);
            }
            out.push_str("..");
            if let Some(hi) = hi {
                write(hi, out, 0);
            }
            out.push(']');
        }
        ExprKind::SeqConcat(l, r) => {
            write(l, out, 7);
            out.push_str(" + ");
            write(r, out, 8);
        }
        ExprKind::SeqContains { seq, elem } => {
            write(seq, out, 10);
            out.push_str(".contains(");
            write(elem, out, 0);
            out.push(')');
        }
        ExprKind::SeqUpdated { seq, idx, val } => {
            write(seq, out, 10);
            out.push_str(".updated(");
            write(idx, out, 0);
            out.push_str(", ");
            write(val, out, 0);
            out.push(')');
        }
    }
    if paren {
        out.push(')');
    }
}

/// Is `r` the `this` the checker inserted for a bare name at `name`?
fn implicit_this(r: &Expr, name: crate::syntax::ast::Span) -> bool {
    matches!(r.kind, ExprKind::This) && r.span.start >= name.start
}

/// Concrete values, from a model of the path condition and the negated `goal`, of
/// the store's variables and the heap's fields, in source terms (`c.x = 4`); and the
/// same model's values of the member's entry state (its `this` and parameters, and
/// the fields and array lengths of the heap on entry), for replaying it.
pub fn counterexample(
    v: &mut Verifier<'_>,
    state: &State,
    goal: &Term,
) -> Option<(Vec<String>, Option<EntryModel>)> {
    let mut labels = vec![];
    let mut terms = vec![];
    let mut classes = vec![];
    // Sequences are shown by their elements or their length, read from the model
    // (the solver's own name for a sequence value means nothing to the user).
    let mut seqs: Vec<(String, Term)> = vec![];
    for (k, t) in &state.store {
        if matches!(t.sort(), Sort::Int | Sort::Bool | Sort::Ref | Sort::Perm) {
            labels.push(k.to_string());
            terms.push(t.clone());
            classes.push(v.class_label(t));
        } else if matches!(t.sort(), Sort::Seq(..)) {
            seqs.push((k.to_string(), t.clone()));
        }
    }
    // Fields and pure calls by their source names; those the state gives no name
    // (a snapshot's parts) are left out.
    let names = v.names(state);
    for c in state.heap.iter() {
        if let (ChunkKind::Field(name), Some(r)) = (&c.kind, &c.recv)
            && let Some(r) = names.render_now(r)
        {
            let short = name.rsplit('.').next().unwrap_or(name);
            match c.value.sort() {
                Sort::Seq(..) => seqs.push((format!("{r}.{short}"), c.value.clone())),
                Sort::Int | Sort::Bool | Sort::Ref | Sort::Perm => {
                    labels.push(format!("{r}.{short}"));
                    terms.push(c.value.clone());
                }
                // Values the program cannot name (snapshots, array contents).
                _ => {}
            }
        }
    }
    // Pure-method applications in the goal.
    let mut apps = vec![];
    collect_apps(goal, &mut apps, &mut std::collections::HashSet::new());
    for t in apps {
        if let Some(l) = names.render_now(&t).or_else(|| names.render(&t))
            && !terms.contains(&t)
        {
            if matches!(t.sort(), Sort::Seq(..)) {
                seqs.push((l, t));
            } else if matches!(t.sort(), Sort::Int | Sort::Bool | Sort::Ref | Sort::Perm) {
                labels.push(l);
                terms.push(t);
            }
        }
    }
    let shown = terms.len();
    // The entry state: the member's entry symbols and the old heap's chunks.
    let mut store = vec![];
    if let Some(r) = v.member {
        let m = &v.prog.classes[r.class].members[r.member];
        if !m.is_static {
            store.push(("this".to_string(), Sort::Ref));
        }
        for p in &m.params {
            store.push((p.name.name.clone(), crate::rules::sort_of(&p.ty)));
        }
    }
    // Sequence parameters of integers or booleans, read for the replay as far as the
    // model gives them whole.
    let seq_params: Vec<(String, Term)> = store
        .iter()
        .filter(|(_, s)| {
            matches!(s, Sort::Seq(..)) && matches!(s.seq_elem(), Sort::Int | Sort::Bool)
        })
        .map(|(x, s)| (x.clone(), Term::var(x, *s)))
        .collect();
    store.retain(|(_, s)| matches!(s, Sort::Int | Sort::Bool | Sort::Ref));
    for (x, sort) in &store {
        terms.push(Term::var(x, *sort));
    }
    let mut fields = vec![];
    let mut lengths = vec![];
    for c in state.old.iter() {
        match (&c.kind, &c.recv) {
            (ChunkKind::Field(name), Some(r))
                if matches!(c.value.sort(), Sort::Int | Sort::Bool | Sort::Ref) =>
            {
                fields.push(name.to_string());
                terms.push(r.clone());
                terms.push(c.value.clone());
            }
            (ChunkKind::Array, Some(r)) => {
                lengths.push(());
                terms.push(r.clone());
                terms.push(Term::len(r.clone()));
            }
            _ => {}
        }
    }
    // Each sequence's length and first elements, after everything else.
    let seq_start = terms.len();
    for (_, t) in seqs.iter().chain(&seq_params) {
        terms.push(Term::seq_len(t.clone()));
        for k in 0..SEQ_SHOWN {
            terms.push(Term::seq_at(t.clone(), Term::int(k as i64)));
        }
    }
    // Small values where the failure allows them: integers within a thousand, arrays of
    // at most eight elements, sequences short enough to be shown whole (the solver's first model may give `s.length =
    // 7720` and no element).
    let mut prefer = vec![];
    for t in &terms[..seq_start] {
        if *t.op() == crate::state::term::Op::Len {
            // Arrays short enough for a run to show whole.
            prefer.push(Term::le(t.clone(), Term::int(SEQ_SHOWN as i64 * 2)));
        } else if t.sort() == Sort::Int {
            prefer.push(Term::le(Term::int(-SMALL), t.clone()));
            prefer.push(Term::le(t.clone(), Term::int(SMALL)));
        }
    }
    for (_, t) in seqs.iter().chain(&seq_params) {
        prefer.push(Term::le(Term::seq_len(t.clone()), Term::int(SEQ_SHOWN as i64)));
    }
    // The model's element for `null` (the solver names every object alike).
    terms.push(Term::null());
    let mut values = v.dec.model_values(&Term::not(goal.clone()), &terms, &prefer)?;
    terms.pop();
    let null = values.pop().flatten();
    let mut seq_values = values.split_off(seq_start);
    let param_values = seq_values.split_off((SEQ_SHOWN + 1) * seqs.len());
    terms.truncate(seq_start);
    for (t, val) in terms.iter().zip(values.iter_mut()) {
        if t.sort() == Sort::Ref && val.is_some() && *val == null {
            *val = Some("null".to_string());
        }
    }
    let mut out = vec![];
    // Objects are numbered in the order this counterexample first shows them (Z3's own
    // numbers depend on what else the solver saw).
    let mut objects: Vec<String> = vec![];
    for (i, ((l, t), val)) in labels.iter().zip(&terms).zip(&values).take(shown).enumerate() {
        if let Some(val) = val {
            let val = if t.sort() == Sort::Ref {
                if val == "null" {
                    val.clone()
                } else {
                    let k = objects.iter().position(|o| o == val).unwrap_or_else(|| {
                        objects.push(val.clone());
                        objects.len() - 1
                    });
                    format!("object#{k}")
                }
            } else if t.sort() == Sort::Perm {
                readable_perm(val)
            } else {
                readable_int(val)
            };
            // The object's class, where the path condition says it (section 10).
            match classes.get(i).cloned().flatten() {
                Some(c) if val != "null" => out.push(format!("{l} = {val} : {c}")),
                _ => out.push(format!("{l} = {val}")),
            }
        }
    }
    for ((l, t), vals) in seqs.iter().zip(seq_values.chunks(SEQ_SHOWN + 1)) {
        if let Some(line) = show_seq(l, t.sort().seq_elem(), vals) {
            out.push(line);
        }
    }
    let model = |i: usize| -> Option<ModelValue> {
        let t = terms.get(i)?;
        let raw = values.get(i)?.as_ref()?;
        Some(match t.sort() {
            Sort::Bool => ModelValue::Bool(raw == "true"),
            Sort::Int => ModelValue::Int(readable_int(raw)),
            _ if raw == "null" => ModelValue::Null,
            _ => ModelValue::Ref(raw.clone()),
        })
    };
    let mut entry = EntryModel::default();
    let mut i = shown;
    for (x, _) in &store {
        if let Some(val) = model(i) {
            entry.store.push((x.clone(), val));
        }
        i += 1;
    }
    let mut f = fields.into_iter();
    let mut l = lengths.into_iter();
    for c in state.old.iter() {
        match (&c.kind, &c.recv) {
            (ChunkKind::Field(_), Some(_))
                if matches!(c.value.sort(), Sort::Int | Sort::Bool | Sort::Ref) =>
            {
                let name = f.next().unwrap_or_default();
                if let (Some(r), Some(val)) = (model(i), model(i + 1)) {
                    entry.fields.push((r, name, val));
                }
                i += 2;
            }
            (ChunkKind::Array, Some(_)) => {
                l.next();
                if let (Some(r), Some(n)) = (model(i), model(i + 1)) {
                    entry.lengths.push((r, n));
                }
                i += 2;
            }
            _ => {}
        }
    }
    for ((x, t), vals) in seq_params.iter().zip(param_values.chunks(SEQ_SHOWN + 1)) {
        if let Some(val) = model_seq(t.sort().seq_elem(), vals) {
            entry.store.push((x.clone(), val));
        }
    }
    Some((out, v.member.map(|_| entry)))
}

/// A sequence of integers or booleans whose model gives its length (at most
/// `SEQ_SHOWN`) and every element (`vals`: the length, then the first elements).
fn model_seq(elem: Sort, vals: &[Option<String>]) -> Option<ModelValue> {
    let n: usize = readable_int(vals.first()?.as_ref()?).parse().ok()?;
    if n > SEQ_SHOWN {
        return None;
    }
    let elems = vals.get(1..=n)?.iter().map(|x| {
        let raw = x.as_ref()?;
        Some(match elem {
            Sort::Bool => ModelValue::Bool(raw == "true"),
            _ => ModelValue::Int(readable_int(raw)),
        })
    });
    Some(ModelValue::Seq(elems.collect::<Option<Vec<_>>>()?))
}

/// Z3 prints negative numbers as `(- 1)`.
/// A Z3 real (`(/ 3.0 4.0)`, `(- (/ 1.0 2.0))`, `1.0`) as a fraction (`3/4`, `-1/2`, `1`).
fn readable_perm(v: &str) -> String {
    let v = v.trim();
    if let Some(inner) = v.strip_prefix("(- ").and_then(|x| x.strip_suffix(')')) {
        return format!("-{}", readable_perm(inner));
    }
    let num = |x: &str| x.strip_suffix(".0").unwrap_or(x).to_string();
    if let Some(inner) = v.strip_prefix("(/ ").and_then(|x| x.strip_suffix(')')) {
        let mut parts = inner.split_whitespace();
        if let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) {
            return format!("{}/{}", num(a), num(b));
        }
    }
    num(v)
}

fn readable_int(v: &str) -> String {
    match v.strip_prefix("(- ").and_then(|x| x.strip_suffix(')')) {
        Some(n) => format!("-{n}"),
        None => v.to_string(),
    }
}

/// How many elements of a sequence a counterexample lists; a longer one is shown by
/// its length.
const SEQ_SHOWN: usize = 4;
/// Counterexamples prefer integers within `-SMALL ..= SMALL`.
const SMALL: i64 = 1000;

/// `l = seq(1, 2)` for a short sequence of integers or booleans whose model gives its
/// length and elements (`vals`: the length, then the first elements); `l.length = 7`
/// for a longer one or one of other elements; nothing when the model has no length.
fn show_seq(l: &str, elem: Sort, vals: &[Option<String>]) -> Option<String> {
    let len = readable_int(vals.first()?.as_ref()?);
    let n: usize = len.parse().ok()?;
    let scalar = matches!(elem, Sort::Int | Sort::Bool);
    if scalar && n <= SEQ_SHOWN {
        let elems: Option<Vec<String>> =
            vals.get(1..=n)?.iter().map(|x| x.as_deref().map(readable_int)).collect();
        if let Some(elems) = elems {
            let ty = if elem == Sort::Int { "int" } else { "bool" };
            return Some(if n == 0 {
                format!("{l} = seq<{ty}>()")
            } else {
                format!("{l} = seq({})", elems.join(", "))
            });
        }
    }
    Some(format!("{l}.length = {len}"))
}

/// The pure-method applications in `t` (a DAG: each node visited once).
fn collect_apps(t: &Term, apps: &mut Vec<Term>, seen: &mut std::collections::HashSet<Term>) {
    if !seen.insert(t.clone()) || apps.len() >= 32 {
        return;
    }
    if let crate::state::term::Op::App(_) = t.op()
        && !apps.contains(t)
    {
        apps.push(t.clone());
    }
    for a in t.args() {
        collect_apps(a, apps, seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::{BinOp, Span};

    fn e(kind: ExprKind) -> Expr {
        Expr::new(kind, Span::default())
    }
    fn local(x: &str) -> Expr {
        e(ExprKind::Local(x.into()))
    }
    fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        e(ExprKind::Binary { op, l: Box::new(l), r: Box::new(r) })
    }

    #[test]
    fn parentheses_follow_precedence_and_associativity() {
        let eq = bin(BinOp::Eq, local("b"), bin(BinOp::Eq, local("c"), local("d")));
        assert_eq!(expr(&eq), "b == (c == d)");
        let sub = bin(BinOp::Sub, local("a"), bin(BinOp::Sub, local("b"), local("c")));
        assert_eq!(expr(&sub), "a - (b - c)");
        let left = bin(BinOp::Sub, bin(BinOp::Sub, local("a"), local("b")), local("c"));
        assert_eq!(expr(&left), "a - b - c");
        let imp = bin(BinOp::Implies, local("p"), bin(BinOp::Implies, local("q"), local("r")));
        assert_eq!(expr(&imp), "p ==> q ==> r");
        let mul = bin(BinOp::Mul, bin(BinOp::Add, local("a"), local("b")), local("c"));
        assert_eq!(expr(&mul), "(a + b) * c");
    }
}
