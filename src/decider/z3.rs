//! The Z3 backend: translates terms to Z3 ASTs (cached by term id) and runs checks.
//!
//! Architecture invariant: this is the only module of idf-verify that imports `z3`.
//! Snapshots are a Z3 datatype (`unit | combine(first, second) | wrap_S(unwrap_S)`),
//! which gives the paper's prelude axioms (3.2.2) without quantifiers; references are
//! an uninterpreted sort with a constant `null`; array contents are Z3 arrays.

use super::simple_solver::{Param, SimpleSolver};
use crate::state::term::{Elem, Func, Op, Sort, Term};
use std::collections::HashMap;
use z3::ast::{Array, Ast, Bool, Dynamic, Int};
use z3::{DatatypeAccessor, DatatypeBuilder, DatatypeSort, FuncDecl, SatResult};

/// The answer to a satisfiability check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sat {
    Sat,
    Unsat,
    Unknown,
}

struct Inner {
    solver: SimpleSolver,
    cache: HashMap<u64, Dynamic>,
    /// Keyed by the whole signature: the backend outlives one program, and two
    /// programs may declare `C.p` with different sorts.
    funcs: HashMap<Func, FuncDecl>,
    ref_sort: z3::Sort,
    snap: DatatypeSort,
    null: Dynamic,
    len: FuncDecl,
    timeout_set: bool,
}

/// Index of each variant in the Snap datatype.
const UNIT: usize = 0;
const COMBINE: usize = 1;
fn wrap_variant(s: Sort) -> usize {
    match s {
        Sort::Int => 2,
        Sort::Bool => 3,
        Sort::Ref => 4,
        Sort::Arr(Elem::Int) => 5,
        Sort::Arr(Elem::Bool) => 6,
        Sort::Arr(Elem::Ref) => 7,
        Sort::Snap => 1,
    }
}

impl Inner {
    fn new() -> Inner {
        let ref_sort = z3::Sort::uninterpreted("Ref".into());
        let arr = |e: &z3::Sort| z3::Sort::array(&z3::Sort::int(), e);
        let snap = DatatypeBuilder::new("Snap")
            .variant("unit", vec![])
            .variant(
                "combine",
                vec![
                    ("first", DatatypeAccessor::datatype("Snap")),
                    ("second", DatatypeAccessor::datatype("Snap")),
                ],
            )
            .variant("fromInt", vec![("toInt", DatatypeAccessor::sort(z3::Sort::int()))])
            .variant("fromBool", vec![("toBool", DatatypeAccessor::sort(z3::Sort::bool()))])
            .variant("fromRef", vec![("toRef", DatatypeAccessor::sort(ref_sort.clone()))])
            .variant(
                "fromIntArr",
                vec![("toIntArr", DatatypeAccessor::sort(arr(&z3::Sort::int())))],
            )
            .variant(
                "fromBoolArr",
                vec![("toBoolArr", DatatypeAccessor::sort(arr(&z3::Sort::bool())))],
            )
            .variant("fromRefArr", vec![("toRefArr", DatatypeAccessor::sort(arr(&ref_sort)))])
            .finish();
        let null = Dynamic::new_const("null", &ref_sort);
        let len = FuncDecl::new("len", &[&ref_sort], &z3::Sort::int());
        let mut solver = SimpleSolver::new();
        solver.set_param("model", Param::Bool(true));
        // Ctrl-C is the driver's (it stops the run); Z3 must not turn it into a
        // query's `unknown` (a reported timeout).
        solver.set_param("ctrl_c", Param::Bool(false));
        Inner {
            solver,
            cache: HashMap::new(),
            funcs: HashMap::new(),
            ref_sort,
            snap,
            null,
            len,
            timeout_set: false,
        }
    }

    pub fn set_timeout_ms(&mut self, ms: u32) {
        self.solver.set_param("timeout", Param::U32(ms.max(1)));
        self.timeout_set = true;
    }

    fn set_rlimit(&mut self, n: u32) {
        self.solver.set_param("rlimit", Param::U32(n.max(1)));
    }

    /// Remove a timeout set for the previous member (setting parameters takes a lock
    /// Z3 shares between threads: only when one was set).
    pub fn clear_timeout(&mut self) {
        if self.timeout_set {
            self.set_timeout_ms(u32::MAX);
            self.timeout_set = false;
        }
    }

    fn sort(&self, s: Sort) -> z3::Sort {
        match s {
            Sort::Int => z3::Sort::int(),
            Sort::Bool => z3::Sort::bool(),
            Sort::Ref => self.ref_sort.clone(),
            Sort::Snap => self.snap.sort.clone(),
            Sort::Arr(e) => z3::Sort::array(&z3::Sort::int(), &self.sort(Sort::of_elem(e))),
        }
    }

    fn func(&mut self, f: &Func) -> &FuncDecl {
        if !self.funcs.contains_key(f) {
            let dom: Vec<z3::Sort> = f.domain.iter().map(|s| self.sort(*s)).collect();
            let dom_refs: Vec<&z3::Sort> = dom.iter().collect();
            let d = FuncDecl::new(&*f.name, &dom_refs, &self.sort(f.range));
            self.funcs.insert(f.clone(), d);
        }
        &self.funcs[f]
    }

    /// The Z3 form of a term (cached).
    pub fn translate(&mut self, t: &Term) -> Dynamic {
        if let Some(d) = self.cache.get(&t.id()) {
            return d.clone();
        }
        // Recursion follows term depth (a long straight-line program builds deep
        // terms): grow the stack on the heap when it runs low.
        stacker::maybe_grow(1 << 20, 64 << 20, || self.translate_new(t))
    }

    fn translate_new(&mut self, t: &Term) -> Dynamic {
        if let Some(d) = self.shape_test(t) {
            self.cache.insert(t.id(), d.clone());
            return d;
        }
        let args: Vec<Dynamic> = t.args().iter().map(|a| self.translate(a)).collect();
        let int = |i: usize| args[i].as_int().expect("int");
        let boolean = |i: usize| args[i].as_bool().expect("bool");
        let d: Dynamic = match t.op() {
            Op::Var(name, _) => Dynamic::new_const(&**name, &self.sort(t.sort())),
            Op::Int(n) => Int::from_i64(*n).into(),
            Op::BigInt(n) => n
                .parse::<Int>()
                .map_err(|_| ())
                .map(Dynamic::from)
                .unwrap_or_else(|()| Int::from_i64(0).into()),
            Op::Bool(b) => Bool::from_bool(*b).into(),
            Op::Class(i, _) => Int::from_i64(*i as i64).into(),
            Op::Null => self.null.clone(),
            Op::Unit => self.snap.variants[UNIT].constructor.apply(&[]),
            Op::Add => Int::add(&[int(0), int(1)]).into(),
            Op::Sub => Int::sub(&[int(0), int(1)]).into(),
            Op::Mul => Int::mul(&[int(0), int(1)]).into(),
            Op::Div => java_div(&int(0), &int(1)).into(),
            Op::Mod => {
                let (a, b) = (int(0), int(1));
                let q = java_div(&a, &b);
                Int::sub(&[a, Int::mul(&[b, q])]).into()
            }
            Op::Neg => int(0).unary_minus().into(),
            Op::Lt => int(0).lt(int(1)).into(),
            Op::Le => int(0).le(int(1)).into(),
            Op::Eq => args[0].eq(&args[1]).into(),
            Op::Not => boolean(0).not().into(),
            Op::And => {
                Bool::and(&args.iter().map(|a| a.as_bool().expect("bool")).collect::<Vec<_>>())
                    .into()
            }
            Op::Or => Bool::or(&[boolean(0), boolean(1)]).into(),
            Op::Implies => boolean(0).implies(boolean(1)).into(),
            Op::Ite => boolean(0).ite(&args[1], &args[2]),
            Op::Combine => self.snap.variants[COMBINE].constructor.apply(&[&args[0], &args[1]]),
            Op::First => self.snap.variants[COMBINE].accessors[0].apply(&[&args[0]]),
            Op::Second => self.snap.variants[COMBINE].accessors[1].apply(&[&args[0]]),
            Op::Wrap(s) => self.snap.variants[wrap_variant(*s)].constructor.apply(&[&args[0]]),
            Op::Unwrap(s) => self.snap.variants[wrap_variant(*s)].accessors[0].apply(&[&args[0]]),
            Op::App(f) => {
                let refs: Vec<&dyn Ast> = args.iter().map(|a| a as &dyn Ast).collect();
                self.func(f).apply(&refs)
            }
            Op::Len => self.len.apply(&[&args[0]]),
            Op::Select => args[0].as_array().expect("array").select(&args[1]),
            Op::Store => args[0].as_array().expect("array").store(&args[1], &args[2]).into(),
            Op::ConstArr(_) => Array::const_array(&z3::Sort::int(), &args[0]).into(),
        };
        self.cache.insert(t.id(), d.clone());
        d
    }

    /// A snapshot's shape, `s = combine(first(s), second(s))` or `s = fromT(toT(s))`
    /// (what producing an assertion assumes of its snapshot), as the datatype's tester
    /// (`is-combine(s)`, `is-fromT(s)`): the same meaning, and Z3 decides testers
    /// directly instead of reasoning about the equation (a tree's pure-method axioms
    /// carry dozens in their guards: 244 -> 164 ms on one such query).
    fn shape_test(&mut self, t: &Term) -> Option<Dynamic> {
        let Op::Eq = t.op() else { return None };
        let (a, b) = (&t.args()[0], &t.args()[1]);
        let is_shape = |s: &Term, v: &Term| -> Option<usize> {
            match v.op() {
                Op::Combine
                    if matches!(v.args()[0].op(), Op::First)
                        && v.args()[0].args()[0] == *s
                        && matches!(v.args()[1].op(), Op::Second)
                        && v.args()[1].args()[0] == *s =>
                {
                    Some(COMBINE)
                }
                Op::Wrap(k)
                    if matches!(v.args()[0].op(), Op::Unwrap(j) if j == k)
                        && v.args()[0].args()[0] == *s =>
                {
                    Some(wrap_variant(*k))
                }
                _ => None,
            }
        };
        let (s, variant) = match is_shape(a, b) {
            Some(k) => (a, k),
            None => (b, is_shape(b, a)?),
        };
        let x = self.translate(s);
        Some(self.snap.variants[variant].tester.apply(&[&x]))
    }

    pub fn push(&mut self) {
        self.solver.push();
    }
    pub fn pop(&mut self) {
        self.solver.pop(1);
    }
    pub fn assert(&mut self, t: &Term) {
        let b = self.translate(t).as_bool().expect("assumption of sort Bool");
        self.solver.assert(&b);
    }
    /// Is the current assertion set together with `t` satisfiable?
    pub fn check_with(&mut self, t: &Term) -> Sat {
        let b = self.translate(t).as_bool().expect("Bool");
        let dumped = dump_dir().map(|dir| dump_query(dir, &self.solver.to_smtlib(), &b));
        let start = std::time::Instant::now();
        let r = match self.solver.check_assumptions(&[b]) {
            SatResult::Sat => Sat::Sat,
            SatResult::Unsat => Sat::Unsat,
            SatResult::Unknown => Sat::Unknown,
        };
        if let Some(path) = dumped {
            let line = format!("; {r:?} in {:.2} ms\n", start.elapsed().as_secs_f64() * 1000.0);
            let _ = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
        }
        r
    }

    /// Values of `terms` in a model of the assertions plus `t` (for counterexamples).
    fn model_values(&mut self, t: &Term, terms: &[Term]) -> Option<Vec<Option<String>>> {
        if self.check_with(t) != Sat::Sat {
            return None;
        }
        let asts: Vec<Dynamic> = terms.iter().map(|x| self.translate(x)).collect();
        self.solver.model_values(&asts)
    }
}

/// Values of `terms` in a model of `assumptions` plus `t`, found in a new Z3 context
/// made for this one question: the model depends only on these terms and their order,
/// never on what the thread's reused solver saw before (the members verified earlier on
/// it), so counterexamples are the same byte for byte whatever ran before and whatever
/// `--jobs` is. A context costs a few milliseconds: only failures with a counterexample
/// pay it.
pub fn fresh_model_values(
    assumptions: &[Term],
    t: &Term,
    terms: &[Term],
    timeout_ms: Option<u32>,
    rlimit: Option<u32>,
) -> Option<Vec<Option<String>>> {
    with_context(&new_context(), || {
        let mut b = Inner::new();
        if let Some(ms) = timeout_ms {
            b.set_timeout_ms(ms);
        }
        if let Some(n) = rlimit {
            b.set_rlimit(n);
        }
        for a in assumptions {
            b.assert(a);
        }
        b.model_values(t, terms)
    })
}

/// Data handed to a closure that `with_z3_config` runs at once on the calling thread.
/// Its `Send + Sync` bound keeps Z3 objects of two contexts apart; terms are not Z3
/// objects, and they never leave this thread.
struct SameThread<T>(T);
// SAFETY: `with_z3_context` calls its callback synchronously on the current thread
// (see z3's lib.rs): the wrapped value is never sent to, nor shared with, another thread.
unsafe impl<T> Send for SameThread<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SameThread<T> {}
impl<T: Copy> SameThread<T> {
    /// The value (a method call, so that the closure captures the whole wrapper).
    fn get(&self) -> T {
        self.0
    }
}

/// A solver in a Z3 context of its own. What Z3 does depends on its context's
/// history (the ids of the terms it has seen order its heuristics): a hard query
/// (nonlinear arithmetic) answered in milliseconds after one member timed out after
/// another on a shared context. Each decider (one per member, made when the member
/// first needs Z3) has its own, so a verdict depends on the member alone, whatever ran
/// before it on the thread and whatever `--jobs` is.
pub struct Backend {
    ctx: z3::Context,
    inner: Inner,
}

impl Backend {
    pub fn new() -> Backend {
        let ctx = new_context();
        let inner = with_context(&ctx, Inner::new);
        Backend { ctx, inner }
    }
    /// Run `f` on the solver with its context as the thread's.
    fn within<R>(&mut self, f: impl FnOnce(&mut Inner) -> R) -> R {
        let inner = &mut self.inner;
        with_context(&self.ctx, || f(inner))
    }
    pub fn set_timeout_ms(&mut self, ms: u32) {
        self.within(|b| b.set_timeout_ms(ms))
    }
    pub fn set_rlimit(&mut self, n: u32) {
        self.within(|b| b.set_rlimit(n))
    }
    pub fn clear_timeout(&mut self) {
        self.within(|b| b.clear_timeout())
    }
    pub fn push(&mut self) {
        self.within(|b| b.push())
    }
    pub fn pop(&mut self) {
        self.within(|b| b.pop())
    }
    pub fn assert(&mut self, t: &Term) {
        self.within(|b| b.assert(t))
    }
    /// Is the current assertion set together with `t` satisfiable?
    pub fn check_with(&mut self, t: &Term) -> Sat {
        self.within(|b| b.check_with(t))
    }
}

impl Default for Backend {
    fn default() -> Self {
        Backend::new()
    }
}

/// Run `f` with `ctx` as the thread's Z3 context.
fn with_context<R>(ctx: &z3::Context, f: impl FnOnce() -> R) -> R {
    let job = std::cell::Cell::new(Some(f));
    let out: std::cell::Cell<Option<R>> = std::cell::Cell::new(None);
    let (job_ref, out_ref) = (SameThread(&job), SameThread(&out));
    z3::with_z3_context(ctx, move || {
        if let Some(f) = job_ref.get().take() {
            out_ref.get().set(Some(f()));
        }
    });
    out.into_inner().expect("the callback ran")
}

/// A new Z3 context (with the default configuration).
///
/// The z3 crate gives every thread a default context the first time any of its context
/// functions runs there (`with_z3_context` reads it to restore it after): a whole
/// context (~6 ms of fresh memory) that would never be used. The first context asked
/// for on a thread is that one, still fresh (nothing here uses Z3 outside
/// `with_context`), so a thread that verifies one member makes one context, not two.
fn new_context() -> z3::Context {
    thread_local! {
        static DEFAULT_UNUSED: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    }
    if DEFAULT_UNUSED.with(|d| d.replace(false)) {
        return z3::Context::thread_local();
    }
    let out: std::cell::Cell<Option<z3::Context>> = std::cell::Cell::new(None);
    let out_ref = SameThread(&out);
    z3::with_z3_config(&z3::Config::new(), move || {
        out_ref.get().set(Some(z3::Context::thread_local()));
    });
    out.into_inner().expect("the callback ran")
}

/// `IDF_DUMP_SMT=DIR` (a developer's switch): every query is written to `DIR` as an
/// SMT-LIB file, `q<N>.smt2` (the solver's assertions, the query, `check-sat`, and a
/// last comment line with the answer and the time the check took here).
fn dump_dir() -> Option<&'static std::path::Path> {
    static DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| std::env::var_os("IDF_DUMP_SMT").map(std::path::PathBuf::from)).as_deref()
}

/// Write a query's file; its answer and time are appended after the check.
fn dump_query(dir: &std::path::Path, assertions: &str, query: &Bool) -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = format!("{assertions}\n(assert {query})\n(check-sat)\n");
    let path = dir.join(format!("q{n}.smt2"));
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("IDF_DUMP_SMT: {e}");
    }
    path
}

/// Java's truncating division, from Z3's Euclidean `div`.
fn java_div(a: &Int, b: &Int) -> Int {
    let zero = Int::from_i64(0);
    let abs = |x: &Int| x.ge(&zero).ite(x, &x.unary_minus());
    let q = abs(a).div(abs(b));
    let same_sign = a.ge(&zero).iff(b.ge(&zero));
    same_sign.ite(&q, &q.unary_minus())
}
