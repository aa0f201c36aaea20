//! `exec` (the paper's Figure 8, plus LANGUAGE.md section 7): statements, method and
//! constructor calls, `new`, loops with invariants, `join`, arrays.
//!
//! `return` calls the `ret` continuation (which checks the postcondition) instead of
//! the statement's continuation, so it ends the path wherever it appears.

use crate::rules::eval::Lookup;
use crate::rules::{Mode, Q, Verifier, elem_of, join, sort_of};
use crate::state::State;
use crate::state::chunk::{Chunk, ChunkKind};
use crate::state::heap::Heap;
use crate::state::term::{Sort, Term};
use crate::syntax::ast::{Block, Expr, ExprKind, MemberKind, Rhs, Span, Stmt, StmtKind, Type};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

/// See [`Verifier::scope`].
#[derive(Clone, PartialEq)]
struct Scope {
    depth: usize,
    nest: super::Nesting,
}

/// The continuation for `return`.
pub type Ret<'a, 'p> = &'a dyn Fn(&mut Verifier<'p>, State);

impl<'p> Verifier<'p> {
    pub fn exec_block(&mut self, s: State, stmts: &'p [Stmt], ret: Ret<'_, 'p>, q: Q<'_, 'p, ()>) {
        // A `join` splits the block: everything before it is explored, every path
        // consumes the join's assertion, and the rest runs once.
        if let Some(j) = stmts.iter().position(|st| matches!(st.kind, StmtKind::Join(_))) {
            return self.exec_join(s, stmts, j, ret, q);
        }
        self.exec_seq(s, stmts, ret, q)
    }

    /// A join-free sequence of statements, run as a trampoline: when a statement's
    /// rule calls its continuation once, in the scope the statement started in (no
    /// frame pushed, the same mode and nesting), the state is handed back and the
    /// next statement runs after the rule has returned, so straight-line code does not
    /// deepen the Rust stack. A continuation called in a pushed frame (a branch) runs
    /// the rest of the sequence there, as continuation-passing does.
    fn exec_seq(&mut self, s: State, stmts: &'p [Stmt], ret: Ret<'_, 'p>, q: Q<'_, 'p, ()>) {
        let (mut s, mut stmts) = (s, stmts);
        loop {
            let (first, rest) = match stmts.split_first() {
                None => return q(self, s, ()),
                Some((first, [])) => return self.exec(s, first, ret, q),
                Some(split) => split,
            };
            let scope = self.scope();
            let handed: RefCell<Option<(State, u64)>> = RefCell::new(None);
            self.exec(s, first, ret, &|v, s, ()| {
                if handed.borrow().is_none() && v.scope() == scope {
                    *handed.borrow_mut() = Some((s, v.dec.epoch()));
                } else {
                    v.exec_seq(s, rest, ret, q)
                }
            });
            let Some((next, epoch)) = handed.into_inner() else { return };
            // The rule must not have changed the path condition or its scope after
            // calling the continuation: the rest would then run under other facts.
            if self.dec.epoch() != epoch || self.scope() != scope {
                return self.internal(
                    &next,
                    first.span,
                    "a statement's rule went on after its continuation",
                );
            }
            (s, stmts) = (next, rest);
        }
    }

    /// What a statement's continuation sees of the verifier besides the state: the
    /// solver frame and the modes and nesting rules set around their continuations.
    fn scope(&self) -> Scope {
        Scope { depth: self.dec.depth(), nest: self.nest.clone() }
    }

    pub fn exec(&mut self, s: State, st: &'p Stmt, ret: Ret<'_, 'p>, q: Q<'_, 'p, ()>) {
        if self.stopped() {
            return;
        }
        // Continuation-passing makes the Rust stack as deep as the path is long: grow
        // it on the heap when it runs low, so no program length overflows it.
        self.stats.exec_depth += 1;
        self.stats.exec_depth_max = self.stats.exec_depth_max.max(self.stats.exec_depth);
        stacker::maybe_grow(crate::rules::STACK_RED_ZONE, crate::rules::STACK_SEGMENT, || {
            self.exec_traced(s, st, ret, q)
        });
        self.stats.exec_depth -= 1;
    }

    fn exec_traced(&mut self, s: State, st: &'p Stmt, ret: Ret<'_, 'p>, q: Q<'_, 'p, ()>) {
        if !self.config.trace {
            return self.exec_stmt(s, st, ret, q);
        }
        // With --trace, each statement leaves an entry with the state after it.
        let compound =
            matches!(st.kind, StmtKind::If { .. } | StmtKind::While { .. } | StmtKind::Block(_));
        self.exec_stmt(s, st, ret, &|v, s, ()| {
            if !compound {
                v.trace_step(&s, || stmt_head(st), st.span);
            }
            q(v, s, ())
        })
    }

    fn exec_stmt(&mut self, s: State, st: &'p Stmt, ret: Ret<'_, 'p>, q: Q<'_, 'p, ()>) {
        if self.config.smoke
            && matches!(st.kind, StmtKind::Assert(_) | StmtKind::Return(_))
            && !self.report.reached.contains(&st.span)
            && self.path_feasible()
        {
            self.report.reached.insert(st.span);
        }
        match &st.kind {
            StmtKind::Local { ty, name, init } => match init {
                None => {
                    let mut s = s;
                    s.set(&name.name, default_value(ty));
                    q(self, s, ())
                }
                Some(rhs) => self.with_hint(&name.name, |v| {
                    v.exec_rhs(s, rhs, &|v, mut s, t| {
                        v.note_ref(&t);
                        s.set(&name.name, t);
                        q(v, s, ())
                    })
                }),
            },
            StmtKind::Assign { lhs, rhs } => self.exec_assign(s, lhs, rhs, q),
            StmtKind::Call(call) => self.exec_call(s, call, &|v, s, _| q(v, s, ())),
            StmtKind::If { cond, then, els } => self.eval(s, cond, &|v, s, c| {
                let els = els.as_deref();
                // An `if` in tail position of a merging `if`'s branch runs inside that
                // one's join (`exec_if_merging`), without a join of its own.
                let flat = v.flat_ifs.contains(&(st as *const Stmt));
                if v.config.merge && !c.is_true() && !c.is_false() && !flat {
                    v.exec_if_merging(s, c, cond, then, els, ret, q)
                } else {
                    v.exec_if(s, c, cond, then, els, ret, q)
                }
            }),
            StmtKind::While { cond, invariants, body } => {
                self.exec_while(s, st.span, cond, invariants, body, ret, q)
            }
            StmtKind::Assert(a) => {
                let original = s.clone();
                self.consume_with(
                    Mode::Consume { id: "assert.failed", call: None },
                    s,
                    std::slice::from_ref(a),
                    &|v, _s, _| q(v, original.clone(), ()),
                )
            }
            StmtKind::Open(call) => self.open_instance(s, call, st.span, true, q),
            StmtKind::Close(call) => self.exec_close(s, call, st.span, q),
            StmtKind::Use(call) => {
                let save = self.nest.mode;
                self.nest.mode = Mode::Stmt;
                self.eval_pure_call(s, call, true, &|v, s, _| q(v, s, ()));
                self.nest.mode = save;
            }
            StmtKind::Join(_) => q(self, s, ()),
            StmtKind::Return(e) => match e {
                None => {
                    self.report.exit = Some(st.span);
                    ret(self, s)
                }
                Some(e) => {
                    let at = st.span;
                    let k = |v: &mut Verifier<'p>, mut s: State, t: Term| {
                        s.set("result", t);
                        v.report.exit = Some(at);
                        ret(v, s)
                    };
                    // `return m(..);` with a non-pure `m` calls it first.
                    if self.is_method_call(e) {
                        self.exec_call(s, e, &k)
                    } else {
                        self.eval(s, e, &k)
                    }
                }
            },
            StmtKind::Block(b) => self.exec_block(s, &b.stmts, ret, q),
        }
    }

    /// The right side of an assignment or declaration.
    fn exec_rhs(&mut self, s: State, rhs: &'p Rhs, q: Q<'_, 'p, Term>) {
        match rhs {
            Rhs::Expr(e) if self.is_method_call(e) => self.exec_call(s, e, q),
            Rhs::Expr(e) => self.eval(s, e, q),
            Rhs::New { class, args, span } => self.exec_new(s, &class.name, args, *span, q),
            Rhs::NewArray { elem, len, span } => self.eval(s, len, &|v, s, n| {
                let ok = Term::le(Term::int(0), n.clone());
                if !v.check(&s, &ok, *span, "index.out.of.bounds", || {
                    "the array length might be negative".to_string()
                }) {
                    return;
                }
                let base = v.made.name_hint.take().unwrap_or_else(|| "arr".to_string());
                let a = v.new_object(&base);
                v.dec.assume(Term::eq(Term::len(a.clone()), n));
                let e = elem_of(&Type::Array(Box::new(elem.clone())));
                let contents = Term::default_of(Sort::Arr(e));
                let a2 = a.clone();
                v.add_chunk(s, Chunk::array(a, contents), &|v, s, ()| q(v, s, a2.clone()))
            }),
        }
    }

    /// Run `f` with a name for the object a `new` in it allocates (the local it is
    /// assigned to), so traces read `c1@1` rather than `cell@1`.
    fn with_hint(&mut self, name: &str, f: impl FnOnce(&mut Self)) {
        let saved = self.made.name_hint.replace(name.to_string());
        f(self);
        self.made.name_hint = saved;
    }

    fn is_method_call(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call { target: Some(t), .. } => {
                let k = self.prog.classes[t.class].members[t.member].kind;
                k == MemberKind::Method
            }
            _ => false,
        }
    }

    /// `if (c) then else els`, each feasible branch going on to `q` on its own path.
    #[allow(clippy::too_many_arguments)]
    fn exec_if(
        &mut self,
        s: State,
        c: Term,
        cond: &'p Expr,
        then: &'p Block,
        els: Option<&'p Stmt>,
        ret: Ret<'_, 'p>,
        q: Q<'_, 'p, ()>,
    ) {
        let head = || format!("if ({})", crate::rules::show::expr(cond));
        self.branch(
            s,
            c,
            &|v, s, ()| {
                v.trace_step(&s, || format!("{}: then", head()), cond.span);
                v.exec_block(s, &then.stmts, ret, q)
            },
            &|v, s, ()| {
                v.trace_step(&s, || format!("{}: else", head()), cond.span);
                match els {
                    Some(e) => v.exec(s, e, ret, q),
                    None => q(v, s, ()),
                }
            },
        )
    }

    /// `if` with state merging (`merge`): the branches run in a join; the states they
    /// end in become one (values `ite(guard, v1, v2)`, each branch's facts under its
    /// guard) and the code after the `if` runs once. When they do not merge exactly,
    /// or a branch failed or ran out of time, each leaf goes on on its own path with
    /// its branch conditions and facts, as without merging. A member that fails after
    /// a merge is verified again without merging (`verify`), so what a failure shows
    /// (its trace, its counterexample) is what separate paths show.
    ///
    /// The `if`s in tail position of the branches (an `else if` chain, an `if` ending a
    /// branch) run inside this join without joins of their own: nested joins would
    /// re-assume every inner leaf's facts at every level, so a chain of n arms would
    /// cost n² assumptions (and n³ in the size of their guards). Many leaves merge by
    /// their branching tree (`join::Splits`), each shared entry assumed once; when
    /// they do not merge, the `if` runs again without merging (re-assuming each leaf's
    /// whole path would again be quadratic), as `--no-merge` runs it.
    #[allow(clippy::too_many_arguments)]
    fn exec_if_merging(
        &mut self,
        s: State,
        c: Term,
        cond: &'p Expr,
        then: &'p Block,
        els: Option<&'p Stmt>,
        ret: Ret<'_, 'p>,
        q: Q<'_, 'p, ()>,
    ) {
        self.stats.if_joins += 1;
        let before = self.stats.ledger;
        let failures_before = self.report.failures.len();
        let mut flat = vec![];
        tail_ifs(then, els, &mut flat);
        flat.retain(|st| self.flat_ifs.insert(*st as *const Stmt));
        let leaves = self.join(&|v, k| {
            v.exec_if(s.clone(), c.clone(), cond, then, els, ret, &|v, s, ()| k(v, s));
        });
        let unflatten = |v: &mut Self| {
            for st in &flat {
                v.flat_ifs.remove(&(*st as *const Stmt));
            }
        };
        if leaves.is_empty() {
            return unflatten(self);
        }
        let after = self.stats.ledger;
        let clean = after.failed == before.failed && after.timeout == before.timeout;
        let expanded = crate::rules::expanded_len(&leaves);
        let small = expanded <= SMALL_JOIN;
        // Going on from each leaf re-assumes its whole path: fine when that is not much
        // more than the join assumed.
        let own: usize = leaves.iter().map(|l| l.own.len()).sum();
        let separate = expanded <= SMALL_JOIN + 4 * own;
        let mut definitions: Vec<Term> = vec![];
        // Compact merges: the fresh number of the leaf a state belongs to.
        let mut arm: Option<Term> = None;
        let merged = if clean && !self.timed_out && leaves.len() > 1 {
            let mut assigned = BTreeSet::new();
            assigned_in(&then.stmts, &mut assigned);
            if let Some(e) = els {
                assigned_in(std::slice::from_ref(e), &mut assigned);
            }
            let assigned: Vec<&str> = assigned.iter().map(String::as_str).collect();
            if small {
                let full = crate::rules::expand(&leaves);
                let arms: Vec<join::Arm<'_>> = full
                    .iter()
                    .map(|l| join::Arm { guard: Term::and_all(l.conds.clone()), state: &l.value })
                    .collect();
                join::merge_states(&s, &assigned, &arms, &mut |hint, ite| {
                    let x = self.fresh(hint, ite.sort());
                    if let Some((lo, hi)) = join::literal_bounds(&ite) {
                        definitions.push(Term::le(lo, x.clone()));
                        definitions.push(Term::le(x.clone(), hi));
                    }
                    definitions.push(Term::eq(x.clone(), ite));
                    x
                })
            } else if let Some(sp) = join::Splits::of(&leaves) {
                // `arm`: which leaf, by the branching tree; one of them. A merged value
                // is `v_i` when `arm = i`: one flat implication per leaf, which the
                // solver refutes case by case without walking an `ite` chain.
                let n = leaves.len();
                let a = self.fresh("arm", Sort::Int);
                let numbers: Vec<Term> = (0..n).map(|i| Term::int(i as i64)).collect();
                let is: Vec<Term> =
                    numbers.iter().map(|i| Term::eq(a.clone(), i.clone())).collect();
                definitions.push(Term::le(Term::int(0), a.clone()));
                definitions.push(Term::le(a.clone(), Term::int(n as i64 - 1)));
                definitions.push(Term::eq(a.clone(), sp.choose(&numbers)));
                definitions.push(Term::or_all(is.clone()));
                arm = Some(a);
                let states: Vec<&State> = leaves.iter().map(|l| &l.value).collect();
                join::merge_states_with(&s, &assigned, &states, &mut |hint, values| {
                    let x = self.fresh(hint, values[0].sort());
                    let ints: Option<Vec<i64>> = values.iter().map(Term::as_int).collect();
                    if let Some(ints) = ints
                        && let (Some(lo), Some(hi)) = (ints.iter().min(), ints.iter().max())
                    {
                        definitions.push(Term::le(Term::int(*lo), x.clone()));
                        definitions.push(Term::le(x.clone(), Term::int(*hi)));
                    }
                    for (i, v) in values.iter().enumerate() {
                        definitions
                            .push(Term::implies(is[i].clone(), Term::eq(x.clone(), v.clone())));
                    }
                    x
                })
            } else {
                None
            }
        } else {
            None
        };
        unflatten(self);
        if let Some(m) = merged {
            self.stats.merges += 1;
            self.stats.ledger.started += 1;
            match &arm {
                None => self.assume_leaf_facts(&crate::rules::expand(&leaves)),
                Some(arm) => self.assume_by_splits(&leaves, arm),
            }
            if after.completed > before.completed {
                // Some paths left the `if` by `return` (and completed): the merged path
                // is the leaves' alone, so one of their conditions holds. Without this,
                // a state merged from `lo = mid + 1` and `hi = mid` after `else return
                // mid;` also allows `a[mid] == x` with `hi = mid`.
                let full = crate::rules::expand(&leaves);
                let some =
                    Term::or_all(full.iter().map(|l| Term::and_all(l.conds.clone())).collect());
                self.dec.assume(some);
            }
            for d in definitions {
                self.dec.assume(d);
            }
            let n = leaves.len();
            let what = || format!("if ({}): {n} paths merged", crate::rules::show::expr(cond));
            self.trace_step(&m, what, cond.span);
            return q(self, m, ());
        }
        if !separate && !self.timed_out {
            // Run the `if` again as separate paths, its tail `if`s flat as before: the
            // failures the join recorded are recorded again.
            self.report.failures.truncate(failures_before);
            for st in &flat {
                self.flat_ifs.insert(*st as *const Stmt);
            }
            self.stats.ledger.started += 1;
            self.exec_if(s, c, cond, then, els, ret, q);
            return unflatten(self);
        }
        for leaf in crate::rules::expand(&leaves) {
            self.stats.ledger.started += 1;
            self.in_frame(|v| {
                for t in &leaf.conds {
                    v.dec.assume_branch(t.clone());
                }
                for t in &leaf.axioms {
                    v.dec.assume_axiom(t.clone());
                }
                for t in &leaf.facts {
                    v.dec.assume(t.clone());
                }
                for t in &leaf.derived {
                    v.dec.assume_derived(t.clone());
                }
                q(v, leaf.value.clone(), ())
            });
        }
    }

    /// Assume what the leaves of a join assumed, each entry once, under the range of
    /// leaves whose paths hold it (`join::entry_ranges`): `lo <= arm <= hi`, where
    /// `arm` is the number of the leaf the state belongs to, a fresh symbol defined by
    /// the branching tree (`arm = ite(c1, 0, ite(c2, 1, ...))`). Exact on the leaves:
    /// on leaf i's path `arm = i`. Axiom instances hold on every path, unguarded;
    /// the conditions where paths part are what `arm`'s definition says; other branch
    /// conditions (one-sided branches, and those every leaf took, e.g. past an arm
    /// that returned) are facts under their range like the rest.
    fn assume_by_splits(&mut self, leaves: &[crate::rules::JoinLeaf<State>], arm: &Term) {
        use crate::decider::Kind;
        let n = leaves.len();
        for (e, lo, hi, split) in join::entry_ranges(leaves) {
            if split {
                continue;
            }
            let (a, b) = (Term::int(lo as i64), Term::int(hi as i64));
            let guard = match (lo, hi) {
                _ if lo == 0 && hi == n - 1 => Term::tt(),
                _ if lo == hi => Term::eq(arm.clone(), a),
                (0, _) => Term::le(arm.clone(), b),
                _ if hi == n - 1 => Term::le(a, arm.clone()),
                _ => Term::and(Term::le(a, arm.clone()), Term::le(arm.clone(), b)),
            };
            match e.kind {
                Kind::Axiom => self.dec.assume_axiom(e.term),
                // Assumed again with the first entry that mentions its symbol.
                Kind::Definition => {}
                Kind::Derived => self.dec.assume_derived(Term::implies(guard, e.term)),
                Kind::Fact | Kind::Branch => self.dec.assume(Term::implies(guard, e.term)),
            }
        }
    }

    fn exec_assign(&mut self, s: State, lhs: &'p Expr, rhs: &'p Rhs, q: Q<'_, 'p, ()>) {
        match &lhs.kind {
            ExprKind::Local(x) | ExprKind::Name(x) => self.with_hint(x, |v| {
                v.exec_rhs(s, rhs, &|v, mut s, t| {
                    v.note_ref(&t);
                    s.set(x, t);
                    q(v, s, ())
                })
            }),
            ExprKind::Field { recv, field, class } => {
                let name = self.info.field(class.unwrap_or(0), &field.name);
                self.eval(s, recv, &|v, s, t| {
                    v.exec_rhs(s, rhs, &|v, s, val| {
                        v.write_field(s, t.clone(), name.clone(), val, lhs, 0, q)
                    })
                })
            }
            ExprKind::Index { arr, idx } => self.eval(s, arr, &|v, s, ta| {
                v.eval(s, idx, &|v, s, ti| {
                    v.exec_rhs(s, rhs, &|v, mut s, val| {
                    if crate::rules::segment::has_segments(&s.heap) {
                        // Array chunks with index conditions (LANGUAGE.md section 12).
                        let nn = Term::ne(ta.clone(), Term::null());
                        if !v.check(&s, &nn, lhs.span, "receiver.null", || {
                            "the array might be null".to_string()
                        }) || !v.check_bounds(&s, &ta, &ti, lhs)
                        {
                            return;
                        }
                        return match v.write_segment(&mut s.heap, &ta, &ti, &val) {
                            Ok(()) => q(v, s, ()),
                            Err(true) => v.fail_unknown(&s, lhs.span),
                            Err(false) => {
                                let what = format!(
                                    "no permission to write `{}`: the amounts held of the index `{ti}` do not sum to write",
                                    crate::rules::show::expr(lhs)
                                );
                                v.fail(&s, lhs.span, "insufficient.permission", what)
                            }
                        };
                    }
                    match v.lookup_write(
                        &mut s.heap,
                        &ChunkKind::Array,
                        Some(&ta),
                        &[],
                    ) {
                        Lookup::Found(i) => {
                            if !v.check_bounds(&s, &ta, &ti, lhs) {
                                return;
                            }
                            let contents = s.heap.get(&i).value.clone();
                            s.heap.set_value(&i, Term::store(contents, ti.clone(), val));
                            q(v, s, ())
                        }
                        Lookup::Unknown => v.fail_unknown(&s, lhs.span),
                        Lookup::NotFound => {
                            let what =
                                for_write(v.missing_field_message(&s, lhs, &ChunkKind::Array, &ta));
                            v.fail(&s, lhs.span, "insufficient.permission", what)
                        }
                    }
                    })
                })
            }),
            _ => self.internal(&s, lhs.span, "assignment to a non-location"),
        }
    }

    /// `t.f = val`: the chunk for `t.f` gets the new value.
    #[allow(clippy::too_many_arguments)]
    fn write_field(
        &mut self,
        s: State,
        t: Term,
        name: Rc<str>,
        val: Term,
        lhs: &'p Expr,
        depth: u32,
        q: Q<'_, 'p, ()>,
    ) {
        let kind = ChunkKind::Field(name.clone());
        let mut s = s;
        match self.lookup_write(&mut s.heap, &kind, Some(&t), &[]) {
            Lookup::Found(i) => {
                let mut s = s;
                self.note_ref(&val);
                s.heap.set_value(&i, val);
                q(self, s, ())
            }
            Lookup::Unknown => self.fail_unknown(&s, lhs.span),
            Lookup::NotFound => {
                if self.config.infer
                    && depth < crate::rules::MAX_OPEN
                    && let Some((i, bp)) = self.find_provider(&s.heap, &t, &name)
                {
                    return self.open_chunk(s, i, bp, &|v, s, ()| {
                        v.write_field(s, t.clone(), name.clone(), val.clone(), lhs, depth + 1, q)
                    });
                }
                let what = for_write(self.missing_field_message(&s, lhs, &kind, &t));
                self.fail(&s, lhs.span, "insufficient.permission", what);
            }
        }
    }

    /// A method call `e.m(args)` (statement or whole right side): receiver non-null,
    /// consume the precondition, produce the postcondition (`old` = the caller's heap
    /// before the call); the continuation gets the result (or `unit`).
    pub fn exec_call(&mut self, s: State, call: &'p Expr, q: Q<'_, 'p, Term>) {
        let ExprKind::Call { recv, args, target: Some(target), .. } = &call.kind else {
            return self.internal(&s, call.span, "not a call");
        };
        let target = *target;
        let m = &self.prog.classes[target.class].members[target.member];
        if m.kind == MemberKind::Pure {
            return self.eval(s, call, q);
        }

        self.eval_receiver(s, recv, call.span, &|v, s, t0| {
            v.eval_list(s, args, &|v, s, targs| {
                let store = v.callee_store(target, t0.clone(), &targs);
                v.call_contract(s, target, store, call.span, q)
            })
        })
    }

    /// Consume a callee's precondition and produce its postcondition.
    fn call_contract(
        &mut self,
        s: State,
        target: crate::syntax::ast::MemberRef,
        store: crate::state::Store,
        span: Span,
        q: Q<'_, 'p, Term>,
    ) {
        let m = &self.prog.classes[target.class].members[target.member];
        let callee = State { heap: s.heap.clone(), old: s.old.clone(), store: store.clone() };
        // The callee's `old` is the heap it started in: a constructor's began with the
        // new object's fields at their defaults (`old(this.f)` in its `ensures`).
        let mut entry_heap = s.heap.clone();
        if m.kind == MemberKind::Constructor
            && let Some(this) = store.get("this")
        {
            for c in self.field_chunks(target.class, this) {
                entry_heap.add(c);
            }
        }
        let caller_heap = Rc::new(entry_heap);
        let callee_name = self.info.member_names.get(&target).cloned().unwrap_or_default();
        self.consume_with(
            Mode::Consume { id: "call.precondition", call: Some(span) },
            callee,
            &m.requires,
            &|v, rest, _| {
                let mut shown = rest.clone();
                shown.store = s.store.clone();
                v.trace_step(
                    &shown,
                    || format!("call {callee_name}: consume its precondition"),
                    span,
                );
                let mut post_store = store.clone();
                let result = if m.kind == MemberKind::Constructor {
                    post_store.get("this").cloned().unwrap_or_else(Term::null)
                } else if m.ty == Type::Void {
                    Term::unit()
                } else {
                    let r = v.fresh("result", sort_of(&m.ty));
                    v.assume_typed(&r, &m.ty, false);
                    post_store.insert_mut("result".into(), r.clone());
                    r
                };
                let post = State { heap: rest.heap, old: caller_heap.clone(), store: post_store };
                let snap = v.fresh("s", Sort::Snap);
                let caller_store = s.store.clone();
                let caller_old = s.old.clone();
                let outer = std::mem::replace(&mut v.call_post, true);
                v.produce_all(post, snap, &m.ensures, &|v, after, ()| {
                    let back = State {
                        heap: after.heap,
                        old: caller_old.clone(),
                        store: caller_store.clone(),
                    };
                    v.trace_step(
                        &back,
                        || format!("call {callee_name}: produce its postcondition"),
                        span,
                    );
                    let inner = std::mem::replace(&mut v.call_post, outer);
                    q(v, back, result.clone());
                    v.call_post = inner;
                });
                v.call_post = outer;
            },
        )
    }

    /// `new C(args)`: a fresh non-null object; with a constructor, its contract; with
    /// none, permission to every field at its default value.
    fn exec_new(
        &mut self,
        s: State,
        class: &str,
        args: &'p [Expr],
        span: Span,
        q: Q<'_, 'p, Term>,
    ) {
        let Some(ci) = self.prog.classes.iter().position(|c| c.name.name == class) else {
            // `new Object()`
            let o = self.new_object("obj");
            return q(self, s, o);
        };
        let cls = &self.prog.classes[ci];
        let base = self.made.name_hint.take().unwrap_or_else(|| class.to_lowercase());
        let o = self.new_object(&base);
        // Java's `new C(..)` makes an object of exactly class `C` (section 10).
        self.assume_class(&o, ci);
        let ctor = cls.members.iter().position(|m| m.kind == MemberKind::Constructor);
        self.eval_list(s, args, &|v, s, targs| match ctor {
            Some(mi) => {
                let target = crate::syntax::ast::MemberRef { class: ci, member: mi };
                let store = v.callee_store(target, Some(o.clone()), &targs);
                v.call_contract(s, target, store, span, q)
            }
            None => {
                let fields: Vec<Chunk> = v.field_chunks(ci, &o);
                v.add_chunks(s, fields, &|v, s, ()| q(v, s, o.clone()))
            }
        })
    }

    /// A freshly allocated object (Java's `new`, LANGUAGE.md section 5): non-null and
    /// different from every reference that existed before it. Objects allocated in
    /// this member are numbered (`alloc#(o) = k`), which makes them pairwise distinct
    /// with one fact each; every other reference gets a disequality: every one a chunk
    /// or a local ever held in this member (`note_ref`, recorded as chunks are added or
    /// written and as locals are assigned, on any path: a reference of another path is
    /// a symbol this path leaves free, so the disequality is harmless there). No heap
    /// or store scan per `new`: a thousand `new`s in a row stay linear.
    pub fn new_object(&mut self, base: &str) -> Term {
        let o = self.fresh(base, Sort::Ref);
        self.dec.assume(Term::ne(o.clone(), Term::null()));
        let alloc = crate::state::term::Func {
            name: "alloc#".into(),
            domain: vec![Sort::Ref].into(),
            range: Sort::Int,
        };
        let k = self.made.allocated.len() as i64 + 1;
        self.dec.assume(Term::eq(Term::app(&alloc, vec![o.clone()]), Term::int(k)));
        for i in 0..self.made.chunk_refs.len() {
            let r = self.made.chunk_refs[i].clone();
            self.dec.assume(Term::ne(o.clone(), r));
        }
        self.made.allocated.insert(o.clone());
        let birth = self.birth(&o);
        self.made.allocations.push((o.clone(), birth));
        o
    }

    /// Remember the references a chunk holds (receiver, arguments, value), for `new`.
    pub fn note_refs(&mut self, c: &Chunk) {
        for t in c.recv.iter().chain(c.args.iter()).chain([&c.value]) {
            self.note_ref(t);
        }
    }

    /// Note a reference a chunk or a local holds. Objects allocated before it was
    /// first noted did not get a disequality from it at their `new`: one allocated
    /// after every symbol it is built from existed gets one here (a reference that
    /// was folded inside a predicate when `new` ran, met when the predicate is opened).
    pub fn note_ref(&mut self, t: &Term) {
        if t.sort() != Sort::Ref
            || matches!(t.op(), crate::state::term::Op::Null)
            || self.made.allocated.contains(t)
        {
            return;
        }
        let before = match self.made.chunk_refs_seen.get(t) {
            Some(&k) => k,
            None => {
                let k = self.made.allocations.len();
                self.made.chunk_refs_seen.insert(t.clone(), k);
                self.made.chunk_refs.push(t.clone());
                k
            }
        };
        if before == 0 {
            return;
        }
        let birth = self.birth(t);
        let first = self.made.allocations.partition_point(|(_, b)| *b <= birth);
        for j in first..before {
            let o = self.made.allocations[j].0.clone();
            self.dec.assume(Term::ne(t.clone(), o));
        }
    }

    /// Chunks for every field of class `ci` of object `o`, at default values.
    pub fn field_chunks(&self, ci: usize, o: &Term) -> Vec<Chunk> {
        self.prog.classes[ci]
            .members
            .iter()
            .filter(|m| m.kind == MemberKind::Field)
            .map(|m| {
                Chunk::field(self.info.field(ci, &m.name.name), o.clone(), default_value(&m.ty))
            })
            .collect()
    }

    pub fn add_chunks(&mut self, s: State, mut cs: Vec<Chunk>, q: Q<'_, 'p, ()>) {
        match cs.pop() {
            None => q(self, s, ()),
            Some(c) => {
                let rest = cs;
                self.add_chunk(s, c, &|v, s, ()| v.add_chunks(s, rest.clone(), q))
            }
        }
    }

    /// `close e.q(args);` (or `close acc(e.q(args), p);`): consume the body (scaled by
    /// the amount), add the instance at that amount with the body's snapshot.
    fn exec_close(&mut self, s: State, call: &'p Expr, span: Span, q: Q<'_, 'p, ()>) {
        if let ExprKind::Frac { acc, amount } = &call.kind {
            return self.eval(s, amount, &|v, s, t| {
                let pi = Term::to_perm(t);
                if !v.check_nonneg(&s, &pi, call) {
                    return;
                }
                v.close_amount(s, acc, pi, span, q)
            });
        }
        self.close_amount(s, call, Term::write(), span, q)
    }

    fn close_amount(&mut self, s: State, call: &'p Expr, pi: Term, span: Span, q: Q<'_, 'p, ()>) {
        let ExprKind::Call { recv, args, target: Some(p), .. } = &call.kind else {
            return self.internal(&s, span, "close of a non-call");
        };
        let p = *p;
        let Some(body) = self.body_of(p) else {
            return self.internal(&s, span, "a predicate without a body");
        };
        self.eval_receiver(s, recv, span, &|v, s, t0| {
            v.eval_list(s, args, &|v, s, targs| {
                let store = v.callee_store(p, t0.clone(), &targs);
                let inner = State { heap: s.heap.clone(), old: s.old.clone(), store };
                let caller_store = s.store.clone();
                let t0 = t0.clone();
                let outer_scale = std::mem::replace(&mut v.scale, pi.clone());
                v.consume_with(
                    Mode::Consume { id: "close.failed", call: Some(span) },
                    inner,
                    std::slice::from_ref(body),
                    &|v, rest, snap| {
                        let inner_scale = std::mem::replace(&mut v.scale, outer_scale.clone());
                        let back =
                            State { heap: rest.heap, old: rest.old, store: caller_store.clone() };
                        v.after_ghost(&snap);
                        let c = v.pred_chunk(p, t0.clone(), targs.clone(), snap).at(pi.clone());
                        v.add_chunk(back, c, q);
                        v.scale = inner_scale;
                    },
                );
                v.scale = outer_scale;
            })
        })
    }

    /// `while (c) invariant I; { body }` (LANGUAGE.md section 7).
    #[allow(clippy::too_many_arguments)]
    fn exec_while(
        &mut self,
        s: State,
        span: Span,
        cond: &'p Expr,
        invs: &'p [Expr],
        body: &'p Block,
        ret: Ret<'_, 'p>,
        q: Q<'_, 'p, ()>,
    ) {
        let mut assigned = BTreeSet::new();
        assigned_in(&body.stmts, &mut assigned);
        // The locals no invariant mentions (for messages about their values).
        let mut mentioned = BTreeSet::new();
        for i in invs {
            names_in(i, &mut mentioned);
        }
        self.consume_with(
            Mode::Consume { id: "invariant.not.established", call: None },
            s,
            invs,
            &|v, frame, consumed| {
                // Two paths go on: the body's check and the code after the loop.
                v.stats.ledger.started += 1;
                // Fresh values for the locals the loop assigns.
                let mut havocked = frame.clone();
                // For testing: the loop's state equal to its entry state (preferred,
                // never assumed).
                let mut links: Vec<Term> = vec![];
                for x in &assigned {
                    if let Some(t) = havocked.get(x).cloned() {
                        let f = v.fresh(x, t.sort());
                        if !mentioned.contains(x) {
                            v.made.unconstrained.insert(f.clone(), x.clone());
                        }
                        v.assume_local_typed(x, &f);
                        if v.path_inputs > 0 {
                            links.push(Term::eq(f.clone(), t));
                        }
                        havocked.set(x, f);
                    }
                }
                let linked = v.loop_links.len();
                // 1. The body, once, from I && c, with nothing else in the heap.
                let start = State {
                    heap: Heap::new(),
                    old: havocked.old.clone(),
                    store: havocked.store.clone(),
                };
                v.in_frame(|v| {
                    let snap = v.fresh("inv", Sort::Snap);
                    if v.path_inputs > 0 {
                        if consumed.sort() == Sort::Snap {
                            v.loop_links.push(Term::eq(snap.clone(), consumed.clone()));
                        }
                        v.loop_links.extend(links.iter().cloned());
                    }
                    v.produce_all(start.clone(), snap, invs, &|v, s, ()| {
                        v.eval(s, cond, &|v, s, c| {
                            let frame_heap = frame.heap.clone();
                            let body_ret = move |v: &mut Verifier<'p>, s: State| {
                                let mut s = s;
                                for c in frame_heap.iter() {
                                    s.heap.add(c.clone());
                                }
                                ret(v, s)
                            };
                            v.branch_then(
                                s,
                                c,
                                &|v, s, ()| {
                                    v.exec_block(s, &body.stmts, &body_ret, &|v, s, ()| {
                                        v.consume_with(
                                            Mode::Consume {
                                                id: "invariant.not.preserved",
                                                call: None,
                                            },
                                            s,
                                            invs,
                                            &|v, _, _| v.stats.ledger.completed += 1,
                                        )
                                    })
                                },
                                // The loop is left: the path after the loop covers it.
                                &|v, _, ()| v.stats.ledger.completed += 1,
                            )
                        })
                    });
                    v.loop_links.truncate(linked);
                });
                // 2. After the loop: the frame plus I && !c.
                let snap = v.fresh("inv", Sort::Snap);
                if v.path_inputs > 0 {
                    if consumed.sort() == Sort::Snap {
                        v.loop_links.push(Term::eq(snap.clone(), consumed.clone()));
                    }
                    v.loop_links.extend(links.iter().cloned());
                }
                v.produce_all(havocked, snap, invs, &|v, s, ()| {
                    v.eval(s, cond, &|v, s, c| {
                        // Another iteration: the body's check covers it.
                        v.branch_then(s, Term::not(c), &|v, s, ()| q(v, s, ()), &|v, _, ()| {
                            v.stats.ledger.completed += 1
                        })
                    })
                });
                v.loop_links.truncate(linked);
            },
        );
        let _ = span;
    }

    /// A block with a `join` at index `j`: explore the prefix, consume the join's
    /// assertion on every path, then run the rest once from a state that knows only it.
    fn exec_join(
        &mut self,
        s: State,
        stmts: &'p [Stmt],
        j: usize,
        ret: Ret<'_, 'p>,
        q: Q<'_, 'p, ()>,
    ) {
        let StmtKind::Join(a) = &stmts[j].kind else {
            return self.internal(&s, stmts[j].span, "a join that is not one");
        };
        let (prefix, rest) = (&stmts[..j], &stmts[j + 1..]);
        let reached = std::cell::Cell::new(0u32);
        self.in_frame(|v| {
            v.exec_block(s.clone(), prefix, ret, &|v, s, ()| {
                v.stats.paths += 1;
                v.trace_step(&s, || "join: consume the join assertion".to_string(), stmts[j].span);
                v.consume_with(
                    Mode::Consume { id: "join.failed", call: None },
                    s,
                    std::slice::from_ref(a),
                    &|v, _, _| {
                        v.stats.ledger.merged += 1;
                        reached.set(reached.get() + 1);
                    },
                )
            })
        });
        if reached.get() == 0 {
            return;
        }
        // Locals assigned or declared before the join get fresh values.
        let mut assigned = BTreeSet::new();
        assigned_in(prefix, &mut assigned);
        declared_in(prefix, &mut assigned);
        let mut after = State { heap: Heap::new(), old: s.old.clone(), store: s.store.clone() };
        for x in &assigned {
            let sort = s
                .get(x)
                .map(|t| t.sort())
                .or_else(|| declared_sort(prefix, x))
                .unwrap_or(Sort::Int);
            let f = self.fresh(x, sort);
            self.assume_local_typed(x, &f);
            after.set(x, f);
        }
        let snap = self.fresh("join", Sort::Snap);
        self.stats.ledger.started += 1;
        self.produce(after, snap, a, &|v, s, ()| v.exec_block(s, rest, ret, q))
    }
}

/// The default value of a local or field of type `ty`.
pub fn default_value(ty: &Type) -> Term {
    Term::default_of(sort_of(ty))
}

/// A short description of a statement for traces.
fn stmt_head(st: &Stmt) -> String {
    match &st.kind {
        StmtKind::Local { ty, name, init: None } => format!("{ty} {}", name.name),
        StmtKind::Local { ty, name, init: Some(rhs) } => {
            format!("{ty} {} = {}", name.name, rhs_text(rhs))
        }
        StmtKind::Assign { lhs, rhs } => {
            format!("{} = {}", crate::rules::show::expr_checked(lhs), rhs_text(rhs))
        }
        StmtKind::Call(c) => crate::rules::show::expr_checked(c),
        StmtKind::If { cond, .. } => format!("if ({})", crate::rules::show::expr_checked(cond)),
        StmtKind::While { cond, .. } => {
            format!("while ({})", crate::rules::show::expr_checked(cond))
        }
        StmtKind::Assert(a) => format!("assert {}", crate::rules::show::expr_checked(a)),
        StmtKind::Open(c) => format!("open {}", crate::rules::show::expr_checked(c)),
        StmtKind::Close(c) => format!("close {}", crate::rules::show::expr_checked(c)),
        StmtKind::Use(c) => format!("use {}", crate::rules::show::expr_checked(c)),
        StmtKind::Join(a) => format!("join {}", crate::rules::show::expr_checked(a)),
        StmtKind::Return(_) => "return".to_string(),
        StmtKind::Block(_) => "block".to_string(),
    }
}

fn rhs_text(rhs: &Rhs) -> String {
    match rhs {
        Rhs::Expr(e) => crate::rules::show::expr_checked(e),
        Rhs::New { class, args, .. } => {
            let a: Vec<String> = args.iter().map(crate::rules::show::expr).collect();
            format!("new {}({})", class.name, a.join(", "))
        }
        Rhs::NewArray { elem, len, .. } => {
            format!("new {elem}[{}]", crate::rules::show::expr_checked(len))
        }
    }
}

/// Joins whose leaves' whole paths hold at most this many entries in all merge (or
/// go on as separate leaves) with each leaf's guard the conjunction of its path's
/// branch conditions; larger ones by their branching tree (`join::Splits`).
const SMALL_JOIN: usize = 256;

/// The `if` statements in tail position of the branches `then` and `els`: the last
/// statement of a branch (through blocks), and the same in their branches in turn.
fn tail_ifs<'p>(then: &'p Block, els: Option<&'p Stmt>, out: &mut Vec<&'p Stmt>) {
    let mut todo: Vec<&'p Stmt> = then.stmts.last().into_iter().chain(els).collect();
    while let Some(st) = todo.pop() {
        match &st.kind {
            StmtKind::If { then, els, .. } => {
                out.push(st);
                todo.extend(then.stmts.last());
                todo.extend(els.as_deref());
            }
            StmtKind::Block(b) => todo.extend(b.stmts.last()),
            _ => {}
        }
    }
}

/// Locals assigned (not declared) in `stmts`, including nested blocks.
pub fn assigned_in(stmts: &[Stmt], out: &mut BTreeSet<String>) {
    crate::syntax::ast::each_stmt(stmts, &mut |st| {
        if let StmtKind::Assign { lhs, .. } = &st.kind
            && let ExprKind::Local(x) | ExprKind::Name(x) = &lhs.kind
        {
            out.insert(x.clone());
        }
    });
}

fn declared_in(stmts: &[Stmt], out: &mut BTreeSet<String>) {
    for st in stmts {
        if let StmtKind::Local { name, .. } = &st.kind {
            out.insert(name.name.clone());
        }
    }
}

fn declared_sort(stmts: &[Stmt], x: &str) -> Option<Sort> {
    stmts.iter().find_map(|st| match &st.kind {
        StmtKind::Local { ty, name, .. } if name.name == x => Some(sort_of(ty)),
        _ => None,
    })
}

/// The names `e` reads (locals, parameters, and bare names of fields).
fn names_in(e: &Expr, out: &mut BTreeSet<String>) {
    if let ExprKind::Local(x) | ExprKind::Name(x) = &e.kind {
        out.insert(x.clone());
    }
    for c in e.children() {
        names_in(c, out);
    }
}

/// A missing-permission message for a write: a write needs the whole location, so
/// "less than needed" is said as "less than `write`".
fn for_write(what: String) -> String {
    what.replace(
        "might be less than needed",
        "might be less than `write`, the full permission a write needs",
    )
}
