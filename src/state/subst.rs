//! Substitution over hash-consed terms: replacing symbols by terms, rebuilding every
//! node through its smart constructor so that the result folds (`first(combine(a, b))`
//! becomes `a`, a decided `ite` its branch). Pure-method definitions are stored over
//! formal symbols and instantiated per application with this.
//!
//! Architecture invariant: the walk is memoised per call (terms are DAGs) and grows
//! its stack on the heap, so neither sharing nor depth makes it blow up.

use crate::state::term::{Op, Term, TermMap};

impl Term {
    /// The node `op(args)` rebuilt through its smart constructor.
    pub fn rebuild(op: &Op, sort: crate::state::term::Sort, args: Vec<Term>) -> Term {
        let a = |i: usize| args[i].clone();
        match op {
            Op::Var(..)
            | Op::Int(_)
            | Op::BigInt(_)
            | Op::Bool(_)
            | Op::Class(..)
            | Op::Null
            | Op::Rat(..)
            | Op::SeqEmpty(_)
            | Op::Unit => {
                // Leaves have no arguments; `substitute` handles symbols itself.
                match op {
                    Op::Var(n, s) => Term::var(n, *s),
                    Op::Int(n) => Term::int(*n),
                    Op::BigInt(n) => Term::big_int(n),
                    Op::Bool(b) => Term::bool(*b),
                    Op::Null => Term::null(),
                    Op::Class(i, n) => Term::class(*i, n),
                    Op::Rat(n, d) => Term::rat(crate::state::term::Rat::new(*n, *d)),
                    Op::SeqEmpty(s) => Term::seq_empty(*s),
                    _ => Term::unit(),
                }
            }
            Op::Add => Term::add(a(0), a(1)),
            Op::Sub => Term::sub(a(0), a(1)),
            Op::Mul => Term::mul(a(0), a(1)),
            Op::Div => Term::div(a(0), a(1)),
            Op::PDiv => Term::pdiv(a(0), a(1)),
            Op::ToPerm => Term::to_perm(a(0)),
            Op::Mod => Term::rem(a(0), a(1)),
            Op::Neg => Term::neg(a(0)),
            Op::Lt => Term::lt(a(0), a(1)),
            Op::Le => Term::le(a(0), a(1)),
            Op::Eq => Term::eq(a(0), a(1)),
            Op::Not => Term::not(a(0)),
            Op::And => Term::and_all(args),
            Op::Or => Term::or(a(0), a(1)),
            Op::Implies => Term::implies(a(0), a(1)),
            Op::Ite => Term::ite(a(0), a(1), a(2)),
            Op::Combine => Term::combine(a(0), a(1)),
            Op::First => Term::first(a(0)),
            Op::Second => Term::second(a(0)),
            Op::Wrap(_) => Term::wrap(a(0)),
            Op::Unwrap(_) => Term::unwrap(a(0), sort),
            Op::App(f) => Term::app(f, args),
            Op::Len => Term::len(a(0)),
            Op::Select => Term::select(a(0), a(1)),
            Op::Store => Term::store(a(0), a(1), a(2)),
            Op::ConstArr(e) => Term::const_arr(*e, a(0)),
            Op::Quant(b) => {
                // Arguments: bound variables, trigger groups, body.
                let n = b.nvars as usize;
                let mut at = n;
                let mut groups = vec![];
                for &g in b.groups.iter() {
                    groups.push(args[at..at + g as usize].to_vec());
                    at += g as usize;
                }
                let body = args[args.len() - 1].clone();
                // A substituted trigger term may have folded (`vs[i]` with `vs` a
                // concatenation becomes `ite(i < |s|, s[i], ..)`; with `vs` a unit, the
                // element): such a group is read again as at evaluation, its largest
                // matchable sub-terms, or dropped when they do not cover the variables.
                let vars = &args[..n];
                let groups = groups
                    .into_iter()
                    .filter_map(|g| {
                        if Term::covers(&g, vars) && g.iter().all(Term::nodes_ite_free) {
                            return Some(g);
                        }
                        let mut pattern = vec![];
                        for t in &g {
                            Term::pattern_terms(t, vars, &mut pattern);
                        }
                        Term::covers(&pattern, vars).then_some(pattern)
                    })
                    .collect();
                Term::quant_named(b.forall, vars.to_vec(), groups, body, b.name.clone())
            }
            Op::SeqUnit => Term::seq_unit(a(0)).unwrap_or_else(|| a(0)),
            Op::SeqConcat => Term::seq_concat(a(0), a(1)),
            Op::SeqLen => Term::seq_len(a(0)),
            Op::SeqAt => Term::seq_at(a(0), a(1)),
            Op::SeqExtract => Term::seq_extract(a(0), a(1), a(2)),
            Op::SeqContains => Term::seq_contains(a(0), a(1)),
        }
    }

    /// The terms of a trigger term's evaluation the solver can match: the term itself
    /// when it is an application of a function (a read, a pure call, a sequence
    /// operation) without conditionals or arithmetic above the bound symbols; otherwise
    /// its largest sub-terms that are (an index into a concatenation evaluates to
    /// `ite(i < |s|, s[i], t[i - |s|])`: its patterns are `s[i]` and `t[i - |s|]`'s
    /// reads where they mention a bound symbol).
    pub fn pattern_terms(t: &Term, vars: &[Term], out: &mut Vec<Term>) {
        let syms = t.symbols();
        if !vars.iter().any(|x| syms.contains(x)) {
            return;
        }
        let matchable = matches!(
            t.op(),
            Op::App(_)
                | Op::Select
                | Op::SeqAt
                | Op::SeqExtract
                | Op::SeqContains
                | Op::SeqLen
                | Op::Len
        );
        let clean = |x: &Term| {
            // Bound symbols only as whole arguments, or inside matchable sub-terms.
            x.args().iter().all(|a| {
                matches!(a.op(), Op::Var(..))
                    || !vars.iter().any(|v| a.symbols().contains(v))
                    || matches!(
                        a.op(),
                        Op::App(_) | Op::Select | Op::SeqAt | Op::SeqExtract | Op::SeqLen | Op::Len
                    )
                    // `s.contains(i)`: membership of the unit sequence (the solver's
                    // `contains#(s, i)`).
                    || *x.op() == Op::SeqContains
                        && *a.op() == Op::SeqUnit
                        && matches!(a.args()[0].op(), Op::Var(..))
            })
        };
        if matchable && clean(t) && t.nodes_ite_free() {
            if !out.contains(t) {
                out.push(t.clone());
            }
            return;
        }
        for a in t.args() {
            Term::pattern_terms(a, vars, out);
        }
    }

    /// Do the terms of a trigger group mention every bound symbol, and is each an
    /// application (not a bare symbol or a literal)?
    pub fn covers(terms: &[Term], vars: &[Term]) -> bool {
        let syms: Vec<Term> = terms.iter().flat_map(|t| t.symbols()).collect();
        vars.iter().all(|x| syms.contains(x))
            && terms.iter().all(|t| {
                !matches!(t.op(), Op::Var(..) | Op::Int(_) | Op::Bool(_) | Op::Null)
                    && !t.args().is_empty()
            })
    }

    /// `self` with every symbol in `map` replaced by its image.
    pub fn substitute(&self, map: &TermMap<Term, Term>) -> Term {
        let mut memo: TermMap<u64, Term> = TermMap::default();
        subst(self, map, &mut memo)
    }

    /// `self` rebuilt node by node in this thread's current interner, so that it is
    /// shared (pointer-equal) with the same term built anew after a reset.
    pub fn reintern(&self) -> Term {
        let mut memo: TermMap<u64, Term> = TermMap::default();
        reintern(self, &mut memo)
    }

    /// The symbols occurring in `self`, each once, in first-seen order.
    pub fn symbols(&self) -> Vec<Term> {
        self.nodes_where(|t| matches!(t.op(), Op::Var(..)))
    }

    /// The bound variables of the quantifiers in `self`, each once.
    pub fn bound_vars(&self) -> Vec<Term> {
        let mut out: Vec<Term> = vec![];
        for q in self.nodes_where(|t| matches!(t.op(), Op::Quant(_))) {
            for v in q.quant_parts().0 {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
        }
        out
    }

    /// Does no conditional (`ite`) occur in `self`, written or in the solver's form
    /// of a node? Java's integer `/` and `%` reach the solver as conditionals
    /// (truncation from Euclidean division), and Z3 accepts no conditional in a
    /// pattern (it drops the pattern and warns on stderr).
    pub fn nodes_ite_free(&self) -> bool {
        self.nodes_where(|t| matches!(t.op(), Op::Ite | Op::Div | Op::Mod | Op::Quant(_)))
            .is_empty()
    }

    /// Every application of a program function in `self`, each once.
    pub fn apps(&self) -> Vec<Term> {
        self.nodes_where(|t| matches!(t.op(), Op::App(_)))
    }

    /// The distinct nodes of `self` (a DAG: each visited once, without recursion)
    /// that `keep` selects, in first-seen order.
    pub(crate) fn nodes_where(&self, keep: impl Fn(&Term) -> bool) -> Vec<Term> {
        let mut out = vec![];
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![self.clone()];
        while let Some(x) = stack.pop() {
            if !seen.insert(x.id()) {
                continue;
            }
            if keep(&x) {
                out.push(x.clone());
            }
            stack.extend(x.args().iter().cloned());
        }
        out
    }
}

fn reintern(t: &Term, memo: &mut TermMap<u64, Term>) -> Term {
    if let Some(r) = memo.get(&t.id()) {
        return r.clone();
    }
    let r = stacker::maybe_grow(1 << 20, 64 << 20, || {
        let args: Vec<Term> = t.args().iter().map(|a| reintern(a, memo)).collect();
        Term::rebuild(t.op(), t.sort(), args)
    });
    memo.insert(t.id(), r.clone());
    r
}

/// A new name for a bound variable, unique among the member's terms (`i@1'7`).
fn fresh_bound(name: &str) -> String {
    let n = crate::state::term::next_bound_number();
    let base = name.split('\'').next().unwrap_or(name);
    format!("{base}'{n}")
}

fn subst(t: &Term, map: &TermMap<Term, Term>, memo: &mut TermMap<u64, Term>) -> Term {
    if let Some(r) = memo.get(&t.id()) {
        return r.clone();
    }
    let r = if let Op::Var(..) = t.op() {
        map.get(t).cloned().unwrap_or_else(|| t.clone())
    } else if let Op::Quant(b) = t.op() {
        // Capture-avoiding: when substitution changes a quantifier, its bound
        // variables get new names first (a value put in may hold a symbol of the same
        // name: a definition's bound `i@1` and a caller's local `i@1`).
        let args: Vec<Term> = t.args().iter().map(|a| subst(a, map, memo)).collect();
        if args.iter().zip(t.args()).all(|(a, b)| a == b) {
            t.clone()
        } else {
            let mut inner = map.clone();
            for v in &t.args()[..b.nvars as usize] {
                if let Op::Var(name, sort) = v.op() {
                    inner.insert(v.clone(), Term::var(&fresh_bound(name), *sort));
                }
            }
            let mut memo2 = TermMap::default();
            let n = t.args().len();
            let args: Vec<Term> = t
                .args()
                .iter()
                .enumerate()
                .map(|(k, a)| {
                    let trigger = k >= b.nvars as usize && k + 1 < n;
                    if trigger && let Op::SeqAt = a.op() {
                        // A read of a slice stays a read of the slice in a trigger:
                        // folded to `s[o + i]` it would put arithmetic above the bound
                        // variable, and no read the program names would match it
                        // (the solver's slice axioms make `s[1..][k - 1]` from `s[k]`).
                        let sq = subst(&a.args()[0], &inner, &mut memo2);
                        if let Op::SeqExtract = sq.op() {
                            let i = subst(&a.args()[1], &inner, &mut memo2);
                            return Term::raw(Op::SeqAt, a.sort(), vec![sq, i]);
                        }
                    }
                    subst(a, &inner, &mut memo2)
                })
                .collect();
            Term::rebuild(t.op(), t.sort(), args)
        }
    } else if t.args().is_empty() {
        t.clone()
    } else {
        stacker::maybe_grow(1 << 20, 64 << 20, || {
            let args: Vec<Term> = t.args().iter().map(|a| subst(a, map, memo)).collect();
            if args.iter().zip(t.args()).all(|(a, b)| a == b) {
                t.clone()
            } else {
                Term::rebuild(t.op(), t.sort(), args)
            }
        })
    };
    memo.insert(t.id(), r.clone());
    r
}

#[cfg(test)]
mod tests {
    use crate::state::term::TermMap;
    use crate::state::term::{Func, Sort, Term};

    #[test]
    fn substitution_folds_snapshot_projections_and_decided_conditions() {
        let s = Term::var("s#C.p", Sort::Snap);
        let v = Term::var("v@1", Sort::Int);
        let w = Term::var("w@2", Sort::Ref);
        // ite(toRef(second(s)) = null, toInt(first(s)), 0)
        let body = Term::ite(
            Term::eq(Term::unwrap(Term::second(s.clone()), Sort::Ref), Term::null()),
            Term::unwrap(Term::first(s.clone()), Sort::Int),
            Term::int(0),
        );
        let mut map = TermMap::default();
        map.insert(s.clone(), Term::combine(Term::wrap(v.clone()), Term::wrap(Term::null())));
        assert_eq!(body.substitute(&map), v);
        map.insert(s, Term::combine(Term::wrap(v), Term::wrap(w.clone())));
        let r = body.substitute(&map);
        assert_eq!(r.op(), &crate::state::term::Op::Ite);
        assert!(r.symbols().contains(&w));
    }

    #[test]
    fn substitution_keeps_unmapped_symbols_and_finds_applications() {
        let f = Func { name: "C.f".into(), domain: vec![Sort::Snap].into(), range: Sort::Int };
        let s = Term::var("s", Sort::Snap);
        let x = Term::var("x", Sort::Int);
        let t = Term::add(Term::app(&f, vec![s.clone()]), x.clone());
        let mut map = TermMap::default();
        map.insert(s, Term::unit());
        let r = t.substitute(&map);
        assert_eq!(r, Term::add(Term::app(&f, vec![Term::unit()]), x.clone()));
        assert_eq!(r.apps(), vec![Term::app(&f, vec![Term::unit()])]);
        assert_eq!(r.symbols(), vec![x]);
    }
}
