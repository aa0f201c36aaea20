//! Value quantifiers and sequence operations in `eval` (LANGUAGE.md sections 13-14).
//!
//! A quantifier's body is evaluated once, over fresh symbols for its bound variables,
//! in a `join` (no path splits: guarded operands become `ite`s, and every check of the
//! body is made under the guards that lead to it, for the fresh symbols, so it holds
//! for every value). Its value is `∀ i. body[i' := i]` (or `∃`) with the trigger terms
//! the body evaluated to at the checker's trigger expressions (`Verifier::watch`).
//! Facts the evaluation assumed that mention a bound symbol are assumed back under
//! the binder, with its triggers (and, for a pure-method application, that
//! application as an alternative trigger), never as ground facts of the symbol.
//!
//! Sequences are terms of a sort per element sort (Z3's sequence theory: see the
//! README, "Sequences"); each operation checks its "defined when" column with the
//! reason `index.out.of.bounds`.
//!
//! Architecture invariant: nothing here consumes or produces; a quantifier whose body
//! failed a check ends the path (the failure is in the ledger), as `eval_guarded` does.

use crate::rules::{Leaf, Q, Verifier, sort_of};
use crate::state::State;
use crate::state::term::{Op, Sort, Term};
use crate::syntax::ast::{Expr, ExprKind, Quant, QuantKind, Span};
use std::rc::Rc;

impl<'p> Verifier<'p> {
    /// Evaluate the value quantifier `qn`, the expression `e` (section 13).
    pub fn eval_quant(&mut self, s: State, e: &'p Expr, qn: &'p Quant, q: Q<'_, 'p, Term>) {
        self.dec.quantified = true;
        // The name the solver counts its instances (and those of the facts its body
        // gives under the binder) under: the quantifier as written, triggers included.
        let name: Rc<str> = format!("`{}`", crate::rules::show::expr_checked(e)).into();
        self.quant_spans.entry(name.clone()).or_insert(e.span);
        let mut inner = s.clone();
        let mut vars = vec![];
        for b in &qn.vars {
            let base = b.name.name.replace(crate::check::trigger::FRESH_MARK, "_");
            let x = self.fresh(&base, Sort::Int);
            inner.set(&b.name.name, x.clone());
            vars.push(x);
        }
        let spans: Vec<Span> =
            qn.triggers.iter().flat_map(|g| g.terms.iter().map(|t| t.span)).collect();
        let mine: Vec<Span> =
            spans.iter().copied().filter(|sp| !self.watch.contains_key(sp)).collect();
        for sp in &mine {
            self.watch.insert(*sp, None);
        }
        let before = self.stats.ledger;
        let born_before = self.made.births.len() as u64;
        let bound_before = self.quant_vars.len();
        self.quant_vars.extend(vars.iter().cloned());
        // The body's existential facts stay quantifiers: they are bound under the
        // binder (a witness constant would be one witness for every instance).
        let skolemize = std::mem::replace(&mut self.dec.skolemize, false);
        let leaves = self.join(&|v, k| {
            v.eval(inner.clone(), &qn.body, &|v, _s, t| k(v, t));
        });
        self.dec.skolemize = skolemize;
        self.quant_vars.truncate(bound_before);
        let mut leaves = crate::rules::expand(&leaves);
        let mut recorded: Vec<Option<Term>> =
            spans.iter().map(|sp| self.watch.get(sp).cloned().flatten()).collect();
        // What the body made (a snapshot map, a value read) is made once per value of
        // the bound variables: a function of them, not one symbol for all.
        let made = self.body_skolems(&leaves, &vars, born_before, e.span);
        if !made.is_empty() {
            let sub = |t: &Term| t.substitute(&made);
            for l in &mut leaves {
                for list in [&mut l.conds, &mut l.facts, &mut l.derived, &mut l.axioms] {
                    for t in list.iter_mut() {
                        *t = sub(t);
                    }
                }
                l.value = sub(&l.value);
            }
            for t in recorded.iter_mut().flatten() {
                *t = sub(t);
            }
        }
        for sp in &mine {
            self.watch.remove(sp);
        }
        let after = self.stats.ledger;
        if after.failed > before.failed || after.timeout > before.timeout {
            return;
        }
        self.stats.ledger.started += 1;
        let mut groups: Vec<Vec<Term>> = vec![];
        let mut at = 0;
        for g in &qn.triggers {
            let terms: Option<Vec<Term>> =
                recorded[at..at + g.terms.len()].iter().cloned().collect();
            at += g.terms.len();
            if let Some(terms) = terms {
                let mut pattern = vec![];
                for t in &terms {
                    Term::pattern_terms(t, &vars, &mut pattern);
                }
                // One term written that became several, each naming every bound
                // variable (`(s + t).contains(i)` is `s.contains(i) || t.contains(i)`):
                // alternatives, as the term matches where either does, not a
                // multi-trigger that needs both.
                let alternatives = terms.len() == 1
                    && pattern.len() > 1
                    && pattern.iter().all(|p| Term::covers(std::slice::from_ref(p), &vars));
                if alternatives {
                    groups.extend(pattern.into_iter().map(|p| vec![p]));
                } else if Term::covers(&pattern, &vars) {
                    groups.push(pattern);
                }
            }
        }
        self.assume_bound_facts(&leaves, &vars, &groups, &name);
        if qn.kind == QuantKind::Exists {
            self.mention_ground_terms(&leaves, &vars);
        }
        let mut it = leaves.iter().rev();
        let last = it.next().map(|l| l.value.clone()).unwrap_or_else(Term::tt);
        let body =
            it.fold(last, |acc, l| Term::ite(Term::and_all(l.conds.clone()), l.value.clone(), acc));
        let forall = qn.kind == QuantKind::Forall;
        let finite = if groups.is_empty() { self.finite_range(&vars, &body, forall) } else { None };
        let t = match finite {
            Some((t, values)) => {
                // The instances name the body's terms at literal values (`f(4)` for
                // `f(i * i)`), which the facts under the binder, triggered by the
                // bound forms, would never match: those facts are assumed at the
                // same values.
                self.assume_fact_instances(&leaves, &vars[0], &values);
                t
            }
            None => {
                let t = Term::quant_named(
                    forall,
                    vars.clone(),
                    groups,
                    body.clone(),
                    Some(name.clone()),
                );
                if forall && matches!(t.op(), Op::Quant(_)) {
                    let facts = bound_facts(&leaves, &vars);
                    let mut all = vec![t.clone()];
                    all.extend(self.offset_forms(&vars, &recorded, &body, &facts, &name));
                    self.dec.record_goal_instance(t.clone(), body, facts);
                    Term::and_all(all)
                } else {
                    t
                }
            }
        };
        q(self, s, t)
    }

    /// The same universal quantifier over a bound variable shifted by an offset that
    /// a trigger's read took in evaluation: `(s + t)[i]` is `ite(i < |s|, s[i], t[i -
    /// |s|])`, whose `t[i - |s|]` no pattern can hold (arithmetic over a bound
    /// variable), so a read `t[k]` would never instantiate it. Over `j` with `i := j +
    /// |s|` the read is `t[j]`, a trigger; the two quantifiers say the same. Each is
    /// recorded as a goal with its body and the body's `facts`, shifted alike.
    fn offset_forms(
        &mut self,
        vars: &[Term],
        recorded: &[Option<Term>],
        body: &Term,
        facts: &[Term],
        name: &Rc<str>,
    ) -> Vec<Term> {
        const MAX_FORMS: usize = 2;
        let mut shifts: Vec<(Term, Term)> = vec![];
        for t in recorded.iter().flatten() {
            for n in t.nodes_where(|n| matches!(n.op(), Op::SeqAt | Op::Select)) {
                let idx = &n.args()[1];
                if *idx.op() != Op::Sub {
                    continue;
                }
                let (v, e) = (&idx.args()[0], &idx.args()[1]);
                let free = e.symbols();
                if vars.contains(v)
                    && !vars.iter().any(|x| free.contains(x))
                    && e.bound_vars().is_empty()
                    && !shifts.contains(&(v.clone(), e.clone()))
                {
                    shifts.push((v.clone(), e.clone()));
                }
            }
        }
        let mut out = vec![];
        for (v, e) in shifts.into_iter().take(MAX_FORMS) {
            let j = self.fresh("k", Sort::Int);
            let mut map = crate::state::term::TermMap::default();
            map.insert(v.clone(), Term::add(j.clone(), e));
            let alt_vars: Vec<Term> =
                vars.iter().map(|x| if *x == v { j.clone() } else { x.clone() }).collect();
            let mut pattern = vec![];
            for t in recorded.iter().flatten() {
                Term::pattern_terms(&t.substitute(&map), &alt_vars, &mut pattern);
            }
            let groups: Vec<Vec<Term>> = pattern
                .iter()
                .filter(|p| Term::covers(std::slice::from_ref(p), &alt_vars))
                .map(|p| vec![p.clone()])
                .collect();
            if groups.is_empty() {
                continue;
            }
            let alt_body = body.substitute(&map);
            let alt =
                Term::quant_named(true, alt_vars, groups, alt_body.clone(), Some(name.clone()));
            if matches!(alt.op(), Op::Quant(_)) {
                let alt_facts = facts.iter().map(|f| f.substitute(&map)).collect();
                self.dec.record_goal_instance(alt.clone(), alt_body, alt_facts);
                out.push(alt);
            }
        }
        out
    }

    /// The symbols the evaluation of a quantifier's body made (born after
    /// `born_before`) that depend on its bound variables `vars`, each mapped to a
    /// function of them (`sk#∀..#V@1(i)`): kept as one symbol, a snapshot map defined
    /// at `i` under the binder would be defined at every instance at once, and two
    /// instances would contradict each other. A symbol depends on them when a fact or
    /// branch condition of the body mentions it with a bound variable or with a symbol
    /// that depends on them. The others (a map over the chunks a read met, defined
    /// whatever `i` is) stay symbols: one value for every instance is what they are,
    /// and a function of `i` would make the solver define one per instance.
    fn body_skolems(
        &self,
        leaves: &[Leaf<Term>],
        vars: &[Term],
        born_before: u64,
        span: Span,
    ) -> crate::state::term::TermMap<Term, Term> {
        let born = |x: &Term| self.made.births.get(x).is_some_and(|&b| b > born_before);
        // Each fact's free symbols made by the body, and whether it mentions a bound
        // variable. A fact under a guard that mentions nothing the body made (the
        // guard of an operand, `start <= i ==> ..`) is read without it: the guard only
        // says where the body made the fact, and what holds under it of the symbol
        // alone holds of one symbol for every instance.
        let mut facts: Vec<(Vec<Term>, bool)> = vec![];
        for l in leaves {
            for t in l.conds.iter().chain(&l.facts).chain(&l.derived).chain(&l.axioms) {
                let t = match t.op() {
                    Op::Implies if !t.args()[0].symbols().iter().any(&born) => &t.args()[1],
                    _ => t,
                };
                let bound = t.bound_vars();
                let syms: Vec<Term> =
                    t.symbols().into_iter().filter(|x| !bound.contains(x)).collect();
                let mentions_var = syms.iter().any(|x| vars.contains(x));
                let made: Vec<Term> =
                    syms.into_iter().filter(|x| !vars.contains(x) && born(x)).collect();
                if !made.is_empty() {
                    facts.push((made, mentions_var));
                }
            }
        }
        let mut dependent: Vec<Term> = vec![];
        loop {
            let before = dependent.len();
            for (made, mentions_var) in &facts {
                if *mentions_var || made.iter().any(|x| dependent.contains(x)) {
                    for x in made {
                        if !dependent.contains(x) {
                            dependent.push(x.clone());
                        }
                    }
                }
            }
            if dependent.len() == before {
                break;
            }
        }
        let owner = match self.axioms.target {
            Some(r) => format!("{}.{}", r.class, r.member),
            None => String::new(),
        };
        let domain: Rc<[Sort]> = vars.iter().map(|v| v.sort()).collect();
        let mut out = crate::state::term::TermMap::default();
        for x in dependent {
            let Op::Var(n, sort) = x.op() else { continue };
            let f = crate::state::term::Func {
                name: format!("sk#\u{2200}{owner}@{}#{n}", span.start).into(),
                domain: domain.clone(),
                range: *sort,
            };
            out.insert(x.clone(), Term::app(&f, vars.to_vec()));
        }
        out
    }

    /// A quantifier with no trigger over one integer that its body confines to a few
    /// literal values (`exists k :: 0 <= k && k < 3 && s[k] == 2` over a literal
    /// sequence, whose reads fold to values: no term is left to match), as the
    /// conjunction (`forall`) or disjunction (`exists`) of its instances at those
    /// values. E-matching could instantiate it nowhere; the instances say exactly what
    /// it says once the solver shows that the body is vacuous outside the range (the
    /// range is guessed from the literals the bound symbol is compared with).
    fn finite_range(
        &mut self,
        vars: &[Term],
        body: &Term,
        forall: bool,
    ) -> Option<(Term, Vec<Term>)> {
        const MAX_VALUES: i64 = 16;
        let [x] = vars else { return None };
        let mut lits: Vec<i64> = vec![];
        for n in body.nodes_where(|t| matches!(t.op(), Op::Lt | Op::Le | Op::Eq)) {
            let (a, b) = (&n.args()[0], &n.args()[1]);
            let lit = if a == x {
                b.as_int()
            } else if b == x {
                a.as_int()
            } else {
                None
            };
            lits.extend(lit);
        }
        let (lo, hi) = (*lits.iter().min()?, lits.iter().max()?.checked_add(1)?);
        if hi.checked_sub(lo)? > MAX_VALUES {
            return None;
        }
        let at = |v: i64| {
            let mut m = crate::state::term::TermMap::default();
            m.insert(x.clone(), Term::int(v));
            body.substitute(&m)
        };
        // Outside [lo, hi) the body is `true` (forall) or `false` (exists) on this path.
        let c = self.fresh("k", Sort::Int);
        let mut m = crate::state::term::TermMap::default();
        m.insert(x.clone(), c.clone());
        let inst = body.substitute(&m);
        let outside = Term::or(Term::lt(c.clone(), Term::int(lo)), Term::le(Term::int(hi), c));
        let counter = if forall { Term::not(inst) } else { inst };
        if self.dec.check(&Term::and(outside, counter)) != crate::decider::Sat::Unsat {
            return None;
        }
        let each: Vec<Term> = (lo..hi).map(at).collect();
        let values = (lo..hi).map(Term::int).collect();
        Some((if forall { Term::and_all(each) } else { Term::or_all(each) }, values))
    }

    /// Assume the facts of a quantifier's body that mention its bound symbol `x` at
    /// each of `values` (they hold for every value of `x`, so at these too).
    fn assume_fact_instances(&mut self, leaves: &[Leaf<Term>], x: &Term, values: &[Term]) {
        let mut seen = std::collections::HashSet::new();
        let at = |t: &Term, v: &Term| -> Option<Term> {
            if !t.symbols().contains(x) {
                return None;
            }
            let mut m = crate::state::term::TermMap::default();
            m.insert(x.clone(), v.clone());
            Some(t.substitute(&m))
        };
        for l in leaves {
            let guard = Term::and_all(l.conds.clone());
            for v in values {
                for a in &l.axioms {
                    if let Some(t) = at(a, v)
                        && seen.insert(t.clone())
                    {
                        self.dec.assume_axiom(t);
                    }
                }
                for f in &l.facts {
                    if let Some(t) = at(&Term::implies(guard.clone(), f.clone()), v)
                        && seen.insert(t.clone())
                    {
                        self.dec.assume(t);
                    }
                }
                for f in &l.derived {
                    if let Some(t) = at(&Term::implies(guard.clone(), f.clone()), v)
                        && seen.insert(t.clone())
                    {
                        self.dec.assume_derived(t);
                    }
                }
            }
        }
    }

    /// Assume the facts of the leaves of a quantifier's body: those that mention a
    /// bound symbol under the binder, the others as `eval_guarded` does.
    fn assume_bound_facts(
        &mut self,
        leaves: &[Leaf<Term>],
        vars: &[Term],
        groups: &[Vec<Term>],
        name: &Rc<str>,
    ) {
        let mut seen = std::collections::HashSet::new();
        // The quantifier's triggers, and each application of a pure method that
        // mentions every bound symbol.
        let triggers_of = |t: &Term, vars: &[Term]| -> Vec<Vec<Term>> {
            let mut triggers: Vec<Vec<Term>> =
                groups.iter().filter(|g| Term::covers(g, vars)).cloned().collect();
            for a in t.apps() {
                let s = a.symbols();
                if vars.iter().all(|x| s.contains(x))
                    && a.nodes_ite_free()
                    && !triggers.iter().any(|g| g == std::slice::from_ref(&a))
                {
                    triggers.push(vec![a]);
                }
            }
            triggers
        };
        let bind = |t: Term| -> Option<Term> {
            let syms = t.symbols();
            if !vars.iter().any(|x| syms.contains(x)) {
                return Some(t);
            }
            let mut triggers = triggers_of(&t, vars);
            let (mut t, mut vs) = (t, vars.to_vec());
            if triggers.is_empty() {
                // A bound variable fixed by an equation of the guard (`k$1 == k + 1`,
                // made for a trigger `g(k + 1)`) is replaced by its value: what is
                // left may have a trigger (`g(k$1)`).
                (t, vs) = eliminate_offsets(&t, vars);
                triggers = triggers_of(&t, &vs);
            }
            // Section 13's loop guard, for each fact: not a trigger whose term the fact
            // names again at a shifted bound variable (a recursive method's unfolding
            // `fib(i) == fib(i - 1) + fib(i - 2)` under the quantifier's trigger
            // `fib(i)`: each instance makes `fib(t - 1)`, which matches again, without
            // end).
            triggers.retain(|g| !g.iter().any(|p| renamed_shifted(p, &t, &vs)));
            if triggers.is_empty() {
                // Nothing could instantiate it: dropping it loses nothing.
                return None;
            }
            Some(Term::quant_named(true, vs, triggers, t, Some(name.clone())))
        };
        for l in leaves {
            for a in &l.axioms {
                if let Some(t) = bind(a.clone())
                    && seen.insert(t.clone())
                {
                    self.dec.assume_axiom(t);
                }
            }
            let guard = Term::and_all(l.conds.clone());
            for f in &l.facts {
                if let Some(t) = bind(Term::implies(guard.clone(), f.clone()))
                    && seen.insert(t.clone())
                {
                    self.dec.assume(t);
                }
            }
            for f in &l.derived {
                if let Some(t) = bind(Term::implies(guard.clone(), f.clone()))
                    && seen.insert(t.clone())
                {
                    self.dec.assume_derived(t);
                }
            }
        }
    }

    /// The reads and applications in an `exists` body that mention no bound symbol
    /// are terms of the path (`int m = a[0];` then `exists k :: .. a[k] == m`): they
    /// are made known to the solver as ground terms (an uninterpreted `mention`
    /// predicate holds of them, which says nothing), so they can instantiate the
    /// negated body's triggers.
    fn mention_ground_terms(&mut self, leaves: &[Leaf<Term>], vars: &[Term]) {
        for l in leaves {
            let mut found = vec![];
            ground_reads(&l.value, vars, &mut found);
            for t in found {
                let f = crate::state::term::Func {
                    name: format!("mention#{:?}", t.sort()).into(),
                    domain: vec![t.sort()].into(),
                    range: Sort::Bool,
                };
                self.dec.assume(Term::app(&f, vec![t]));
            }
        }
    }

    /// Evaluate a sequence operation (section 14).
    pub fn eval_seq(&mut self, s: State, e: &'p Expr, q: Q<'_, 'p, Term>) {
        match &e.kind {
            ExprKind::SeqLit { elems, .. } => {
                let sort = sort_of(&e.ty);
                self.eval_list(s, elems, &|v, s, ts| {
                    let mut out = Term::seq_empty(sort);
                    for t in ts {
                        match Term::seq_unit(t) {
                            Some(u) => out = Term::seq_concat(out, u),
                            None => return v.internal(&s, e.span, "a sequence of this sort"),
                        }
                    }
                    q(v, s, out)
                })
            }
            ExprKind::SeqLen(x) => self.eval(s, x, &|v, s, t| q(v, s, Term::seq_len(t))),
            ExprKind::SeqIndex { seq, idx } => self.eval(s, seq, &|v, s, ts| {
                v.eval(s, idx, &|v, s, ti| {
                    let len = Term::seq_len(ts.clone());
                    if !v.seq_bounds(
                        &s,
                        &[(Term::int(0), ti.clone(), false), (ti.clone(), len, true)],
                        e,
                    ) {
                        return;
                    }
                    if let Op::SeqExtract = ts.op()
                        && let Some(slot) = v.watch.get_mut(&e.span)
                        && slot.is_none()
                    {
                        // A trigger term that reads a slice: the read of the slice, not
                        // its folded `s[o + i]` (arithmetic above the bound variable
                        // matches nothing; see `Term::substitute`).
                        let sort = ts.sort().seq_elem();
                        *slot = Some(Term::raw(Op::SeqAt, sort, vec![ts.clone(), ti.clone()]));
                    }
                    q(v, s, Term::seq_at(ts.clone(), ti))
                })
            }),
            ExprKind::Slice { seq, lo, hi } => self.eval(s, seq, &|v, s, ts| {
                let ts2 = ts.clone();
                let with_lo = move |v: &mut Verifier<'p>, s: State, tlo: Term| {
                    let ts = ts2.clone();
                    let finish = |v: &mut Verifier<'p>, s: State, thi: Term| {
                        let len = Term::seq_len(ts.clone());
                        let ok = [
                            (Term::int(0), tlo.clone(), false),
                            (tlo.clone(), thi.clone(), false),
                            (thi.clone(), len, false),
                        ];
                        if !v.seq_bounds(&s, &ok, e) {
                            return;
                        }
                        let n = Term::sub(thi, tlo.clone());
                        q(v, s, Term::seq_extract(ts.clone(), tlo.clone(), n))
                    };
                    match hi {
                        Some(h) => v.eval(s, h, &finish),
                        None => {
                            let len = Term::seq_len(ts.clone());
                            finish(v, s, len)
                        }
                    }
                };
                match lo {
                    Some(l) => v.eval(s, l, &with_lo),
                    None => with_lo(v, s, Term::int(0)),
                }
            }),
            ExprKind::SeqConcat(a, b) => self.eval(s, a, &|v, s, ta| {
                v.eval(s, b, &|v, s, tb| q(v, s, Term::seq_concat(ta.clone(), tb)))
            }),
            ExprKind::SeqContains { seq, elem } => self.eval(s, seq, &|v, s, ts| {
                v.eval(s, elem, &|v, s, tx| match Term::seq_unit(tx) {
                    Some(u) => q(v, s, Term::seq_contains(ts.clone(), u)),
                    None => v.internal(&s, e.span, "a sequence of this sort"),
                })
            }),
            ExprKind::SeqUpdated { seq, idx, val } => self.eval(s, seq, &|v, s, ts| {
                v.eval(s, idx, &|v, s, ti| {
                    let ts = ts.clone();
                    v.eval(s, val, &|v, s, tv| {
                        let len = Term::seq_len(ts.clone());
                        let ok =
                            [(Term::int(0), ti.clone(), false), (ti.clone(), len.clone(), true)];
                        if !v.seq_bounds(&s, &ok, e) {
                            return;
                        }
                        let Some(unit) = Term::seq_unit(tv) else {
                            return v.internal(&s, e.span, "a sequence of this sort");
                        };
                        // s[..i] + seq(v) + s[i + 1..]
                        let after = Term::add(ti.clone(), Term::int(1));
                        let rest = Term::sub(len, after.clone());
                        let t = Term::seq_concat(
                            Term::seq_concat(
                                Term::seq_extract(ts.clone(), Term::int(0), ti.clone()),
                                unit,
                            ),
                            Term::seq_extract(ts.clone(), after, rest),
                        );
                        q(v, s, t)
                    })
                })
            }),
            _ => self.internal(&s, e.span, "a sequence operation"),
        }
    }

    /// Check `a <= b` (or `a < b` when strict) for each triple: the "defined when"
    /// column of section 14.
    fn seq_bounds(&mut self, s: &State, conds: &[(Term, Term, bool)], e: &Expr) -> bool {
        let ok = Term::and_all(
            conds
                .iter()
                .map(|(a, b, strict)| {
                    if *strict {
                        Term::lt(a.clone(), b.clone())
                    } else {
                        Term::le(a.clone(), b.clone())
                    }
                })
                .collect(),
        );
        self.check(s, &ok, e.span, "index.out.of.bounds", || {
            format!("`{}` might be out of bounds", crate::rules::show::expr(e))
        })
    }
}

/// `t` (a fact `guard ⇒ f` under the binder of `vars`) without the bound variables
/// that an equation of its guard fixes as an offset of another one (`y == x + c`,
/// `y == c + x`, `y == x - c` with `c` free of them: `x` becomes `y - c`, `y + c`),
/// and the variables left. Over the integers the two say the same.
fn eliminate_offsets(t: &Term, vars: &[Term]) -> (Term, Vec<Term>) {
    let mut t = t.clone();
    let mut vars = vars.to_vec();
    'again: while let Op::Implies = t.op() {
        let guard = t.args()[0].clone();
        let conjuncts: Vec<Term> =
            if *guard.op() == Op::And { guard.args().to_vec() } else { vec![guard] };
        for c in &conjuncts {
            if *c.op() != Op::Eq {
                continue;
            }
            for (y, e) in [(&c.args()[0], &c.args()[1]), (&c.args()[1], &c.args()[0])] {
                if !vars.contains(y) {
                    continue;
                }
                let Some((x, value)) = solve_offset(e, y, &vars) else { continue };
                let mut m = crate::state::term::TermMap::default();
                m.insert(x.clone(), value);
                t = t.substitute(&m);
                vars.retain(|v| *v != x);
                continue 'again;
            }
        }
        break;
    }
    (t, vars)
}

/// For `e` of the form `x + c`, `c + x` or `x - c` (with `x` one of `vars` other than
/// `y` and `c` free of them), `x` and the value that makes `y == e`: `y - c`, `y + c`.
fn solve_offset(e: &Term, y: &Term, vars: &[Term]) -> Option<(Term, Term)> {
    let free = |c: &Term| !vars.iter().any(|v| c.symbols().contains(v));
    let is_var = |x: &Term| x != y && vars.contains(x);
    let (a, b) = match e.op() {
        Op::Add | Op::Sub => (&e.args()[0], &e.args()[1]),
        _ => return None,
    };
    match e.op() {
        Op::Add if is_var(a) && free(b) => Some((a.clone(), Term::sub(y.clone(), b.clone()))),
        Op::Add if is_var(b) && free(a) => Some((b.clone(), Term::sub(y.clone(), a.clone()))),
        Op::Sub if is_var(a) && free(b) => Some((a.clone(), Term::add(y.clone(), b.clone()))),
        _ => None,
    }
}

/// The largest reads (array, sequence) and pure applications in `t` without a bound
/// symbol.
fn ground_reads(t: &Term, vars: &[Term], out: &mut Vec<Term>) {
    let syms = t.symbols();
    let bound = vars.iter().any(|x| syms.contains(x));
    if !bound {
        if matches!(t.op(), Op::Select | Op::SeqAt | Op::App(_)) && !out.contains(t) {
            out.push(t.clone());
        }
        return;
    }
    for a in t.args() {
        ground_reads(a, vars, out);
    }
}

/// The facts of a quantifier body's leaves that mention one of its bound symbols
/// `vars`, each under the guards of its leaf: they hold at those symbols, whatever
/// their values.
fn bound_facts(leaves: &[Leaf<Term>], vars: &[Term]) -> Vec<Term> {
    let mentions = |t: &Term| {
        let syms = t.symbols();
        vars.iter().any(|x| syms.contains(x))
    };
    let mut out: Vec<Term> = vec![];
    for l in leaves {
        let guard = Term::and_all(l.conds.clone());
        let guarded =
            l.facts.iter().chain(&l.derived).map(|f| Term::implies(guard.clone(), f.clone()));
        for t in l.axioms.iter().cloned().chain(guarded) {
            if mentions(&t) && !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Does `t` name `p`'s function (or array map) with a bound symbol of `vars` below `+`
/// or `-` (or another arithmetic operator) in an argument (`fib(i - 1)` for the
/// trigger term `fib(i)`)?
fn renamed_shifted(p: &Term, t: &Term, vars: &[Term]) -> bool {
    let same_head = |q: &Term| match (p.op(), q.op()) {
        (Op::App(f), Op::App(g)) => f == g,
        (Op::Select, Op::Select) => p.args()[0] == q.args()[0],
        _ => false,
    };
    let arith = |a: &Term| {
        !a.nodes_where(|n| {
            matches!(n.op(), Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Mod | Op::Neg)
                && n.symbols().iter().any(|x| vars.contains(x))
        })
        .is_empty()
    };
    !t.nodes_where(|q| q != p && same_head(q) && q.args().iter().any(arith)).is_empty()
}
