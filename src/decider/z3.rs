//! The Z3 backend: translates terms to Z3 ASTs (cached by term id) and runs checks.
//!
//! Architecture invariant: this is the only module of idf-verify that touches Z3, and
//! the only one with `unsafe` code. Snapshots are a Z3 datatype (`unit |
//! combine(first, second) | wrap_S(unwrap_S)`), which gives the paper's prelude axioms
//! (3.2.2) without quantifiers; references are an uninterpreted sort with a constant
//! `null`; array contents are Z3 arrays.
//!
//! It calls Z3's C API (`z3-sys`, the layer under the z3 crate, linking the same
//! library) directly, for two things the z3 crate does not allow:
//! - each member gets a context of its own (what Z3 does depends on its context's
//!   history: a verdict must depend on the member alone), and the z3 crate makes every
//!   thread a default context besides on first use: a second context's worth of fresh
//!   memory (~6 ms of page faults) per thread for nothing;
//! - Z3's simple solver (`Z3_mk_simple_solver`, the incremental SMT kernel), not the
//!   crate's combined solver, whose tactic front end the decider never uses (it pushes
//!   before its first assertion) and which costs ~2.5 ms more to make.
//!
//! A context here is a plain one (not reference-counted): its terms live as long as it
//! does, which is one member; solvers, models and parameter sets are counted. The
//! translation caches terms across solver pops: z3_api.h says a plain context's AST
//! "remains valid until there is a call to Z3_solver_pop that takes the current scope
//! below the level where the object was created", but Z3 (4.8.12 here, and the 4.15
//! sources) keeps a plain context's ASTs in a trail that only the context-level
//! `Z3_push`/`Z3_pop` (which nothing here calls) trims, so they live until the context
//! is deleted. Should a Z3 version trim it on solver pops, switch to
//! `Z3_mk_context_rc` and take a reference to every AST made here.

use super::profile;
use crate::state::term::{Elem, Func, Op, Sort, Term, TermMap};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::rc::Rc;
use z3_sys::*;

/// The answer to a satisfiability check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sat {
    Sat,
    Unsat,
    Unknown,
}

/// Quantifier instances per check (Z3's `smt.qi.max_instances`): the programs of the
/// project's tests need at most a few thousand; a matching loop makes tens of
/// thousands a second.
pub const MAX_INSTANCES: u64 = 20_000;
const MAX_INSTANCES_PARAM: &std::ffi::CStr = c"20000";

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
        // No snapshot holds an amount (no `perm` fields or elements): never reached.
        Sort::Perm => 2,
        // Sequences are wrapped by uninterpreted functions (`Backend::seq_wrap`).
        Sort::Seq(..) => 1,
    }
}

/// A constructor of the Snap datatype with its tester and field accessors.
struct Variant {
    constructor: Z3_func_decl,
    tester: Z3_func_decl,
    accessors: Vec<Z3_func_decl>,
}

/// A constructor's fields: name and sort (`None`: the datatype being declared).
type Fields<'a> = Vec<(&'a str, Option<Z3_sort>)>;

/// A value of a solver parameter.
#[derive(Clone, Copy, Debug)]
enum Param {
    U32(u32),
    Bool(bool),
}

/// Z3 reports an error through this handler; the failed call returns null, which the
/// caller turns into a panic (an internal error of the member, exit 3), never an abort.
unsafe extern "C" fn ignore_error(_: Z3_context, _: Z3_error_code) {}

/// The library's version, for the result cache's key.
pub fn version() -> String {
    // SAFETY: Z3 returns a static string.
    unsafe { CStr::from_ptr(Z3_get_full_version()).to_string_lossy().into_owned() }
}

/// A way to stop a member's solver work from another thread (a cancelled run, a member
/// past its budget): [`Interrupt::interrupt`] calls `Z3_interrupt` on every context of
/// the member alive at that moment, and every later check of those contexts answers
/// `unknown` without asking Z3. A check already under way stops at Z3's next
/// resource check (a query that never makes one runs on: the scheduler abandons it).
/// `Z3_interrupt` is lost when no check is under way, so the caller repeats it while
/// the member runs. Clones share the request.
#[derive(Clone, Default)]
pub struct Interrupt(std::sync::Arc<InterruptState>);

#[derive(Default)]
struct InterruptState {
    requested: std::sync::atomic::AtomicBool,
    /// The member's live contexts; a context leaves this list (under its lock) before
    /// it is deleted, so `Z3_interrupt` never meets a deleted one.
    contexts: std::sync::Mutex<Vec<LiveContext>>,
}

/// A context pointer handed between threads: only `Z3_interrupt`, which Z3 allows
/// from any thread, is called on it elsewhere than its own.
struct LiveContext(Z3_context);
// SAFETY: see above; the pointer is used only under `InterruptState::contexts`.
unsafe impl Send for LiveContext {}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Interrupt({})", self.requested())
    }
}

impl Interrupt {
    /// Has this member been asked to stop?
    pub fn requested(&self) -> bool {
        self.0.requested.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Ask the member to stop: interrupt the check under way in each of its contexts.
    pub fn interrupt(&self) {
        self.0.requested.store(true, std::sync::atomic::Ordering::SeqCst);
        let contexts = self.0.contexts.lock().unwrap_or_else(|e| e.into_inner());
        for c in contexts.iter() {
            // SAFETY: a live context (see `contexts`); Z3_interrupt is thread-safe.
            unsafe { Z3_interrupt(c.0) }
        }
    }

    fn register(&self, ctx: Z3_context) {
        let mut contexts = self.0.contexts.lock().unwrap_or_else(|e| e.into_inner());
        contexts.push(LiveContext(ctx));
    }

    /// Is `other` a clone of this one (the same member's request)?
    pub fn same(&self, other: &Interrupt) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }

    /// Does no context of the member remain (its verification is over)?
    pub fn finished(&self) -> bool {
        self.0.contexts.lock().map_or(true, |c| c.is_empty())
    }

    fn unregister(&self, ctx: Z3_context) {
        let mut contexts = self.0.contexts.lock().unwrap_or_else(|e| e.into_inner());
        contexts.retain(|c| c.0 != ctx);
    }
}

/// A Z3 context of its own, with a simple solver and the translation of terms into it.
/// Everything here is single-threaded (the pointers make it neither `Send` nor `Sync`).
pub struct Backend {
    ctx: Z3_context,
    solver: Z3_solver,
    /// The last check stopped at the instance limit (`MAX_INSTANCES`) without an
    /// answer: E-matching, not the solver's resource limit, ended it.
    pub capped: bool,
    /// Some quantifier has been translated (E-matching may run).
    quantified: bool,
    /// Term id → its Z3 form.
    cache: TermMap<u64, Z3_ast>,
    /// Keyed by the whole signature: two programs may declare `C.p` with different sorts.
    funcs: HashMap<Func, Z3_func_decl>,
    int: Z3_sort,
    boolean: Z3_sort,
    ref_sort: Z3_sort,
    snap: Z3_sort,
    variants: Vec<Variant>,
    null: Z3_ast,
    len: Z3_func_decl,
    timeout_set: bool,
    /// `at` of each sequence sort: an uninterpreted alias of Z3's `seq.nth`, so that
    /// indices match triggers by E-matching (Z3 rewrites `seq.nth` terms away from
    /// the patterns that mention them), defined by `∀ s, i {at(s, i)}. at(s, i) =
    /// seq.nth(s, i)`.
    seq_at: HashMap<Sort, Z3_func_decl>,
    /// Those definitions, and the axioms of each sequence sort, each with the solver
    /// frame it is asserted in (`usize::MAX`: not yet). They are found while a path is
    /// translated, frames deep; a pop below its frame asserts one again, in the frame
    /// the pop leaves, before the next assertion or check (`assert_definitions`), so
    /// every check sees all of them, and the solver keeps their instances from one
    /// check to the next (given as assumptions instead, each check internalized them
    /// and instantiated them from nothing again).
    definitions: Vec<(Z3_ast, usize)>,
    /// The number of solver frames pushed and not popped.
    level: usize,
    /// The sequence sorts whose axioms are in `definitions`.
    seq_axiomatized: Vec<Sort>,
    /// Tuple constructors by their fields' sorts, to evaluate many terms in a model at
    /// once (`eval_all`).
    tuples: HashMap<Vec<usize>, Z3_func_decl>,
    /// The member's stop request, when it can be stopped (`Backend::stoppable`).
    interrupt: Option<Interrupt>,
    /// The names of the named quantifiers given to Z3: the quantifier id `q!K` is
    /// `qids[K]` (`profile`).
    qids: Vec<Rc<str>>,
    qid_index: HashMap<Rc<str>, usize>,
    /// The trace log Z3 writes, when this context counts quantifier instances
    /// (`Backend::traced`).
    trace: Option<profile::TraceLog>,
    /// The other solver of this context, while `solver` is in use (`swap_solver`).
    other: Option<SolverState>,
}

/// What belongs to one solver of a context: its frames, which definitions it holds
/// (in which frame, parallel to `Backend::definitions`; missing: none), and whether
/// a timeout was set on it.
struct SolverState {
    solver: Z3_solver,
    at: Vec<usize>,
    level: usize,
    timeout_set: bool,
}

/// The functions of an axiomatized sequence sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SeqFn {
    Empty,
    Unit,
    Concat,
    Len,
    At,
    Extract,
    Contains,
    Equal,
}

/// The laws `seq_axioms` gives, in its order, as a user writes them: the names their
/// instances are counted under (`--stats`, a timeout's message).
const SEQ_LAWS: [&str; 20] = [
    "|[]| == 0",
    "|s| >= 0",
    "|s| == 0 ==> s == []",
    "|[x]| == 1 && [x][0] == x",
    "|a + b| == |a| + |b|",
    "(a + b)[i] == (i < |a| ? a[i] : b[i - |a|])",
    "|s[o..o + n]| == n",
    "s[o..o + n][i] == s[o + i]",
    "s[o..o + n][i - o] == s[i]",
    "(a + b)[i] == a[i]",
    "(a + b)[|a| + i] == b[i]",
    "s[o..o + n].contains(x) <==> exists i :: o <= i < o + n && s[i] == x",
    "|a| == |b| && forall i :: a[i] == b[i] ==> a == b",
    "s.contains(x) <==> exists i :: s[i] == x",
    "(a + b).contains(x) <==> a.contains(x) || b.contains(x)",
    "[y].contains(x) <==> x == y",
    "![].contains(x)",
    "(a + b)[0..|a|] == a",
    "(a + b)[|a|..|a| + |b|] == b",
    "s[0..|s|] == s",
];

/// `IDF_Z3_SEQ=1` (a developer's switch, for measuring): sequences in Z3's own
/// sequence theory instead of the axiomatized sorts (README, "Sequences").
fn native_sequences() -> bool {
    static NATIVE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *NATIVE.get_or_init(|| std::env::var_os("IDF_Z3_SEQ").is_some_and(|v| v == "1"))
}

impl Default for Backend {
    fn default() -> Self {
        Backend::new()
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        // No interrupt reaches the context once it has left the member's list.
        if let Some(i) = &self.interrupt {
            i.unregister(self.ctx);
        }
        // SAFETY: the solver's reference was taken in `new`; the context is deleted last
        // and nothing made in it outlives this value.
        unsafe {
            Z3_solver_dec_ref(self.ctx, self.solver);
            if let Some(o) = &self.other {
                Z3_solver_dec_ref(self.ctx, o.solver);
            }
            Z3_del_context(self.ctx);
        }
    }
}

/// `Some` of a Z3 result, or the panic of a failed call (an ill-sorted term: a bug).
fn ok<T>(r: Option<T>, what: &str) -> T {
    r.unwrap_or_else(|| panic!("Z3 rejected {what}"))
}

impl Backend {
    pub fn new() -> Backend {
        Backend::with_trace(None)
    }

    /// A backend that counts the instances of each named quantifier (`instances`).
    pub fn traced(interrupt: Option<Interrupt>) -> Backend {
        let mut b = Backend::with_trace(Some(profile::trace_path()));
        if let Some(i) = interrupt {
            i.register(b.ctx);
            b.interrupt = Some(i);
        }
        b
    }

    /// Has this backend axioms with quantifiers (the laws of a sequence sort)?
    pub fn has_axioms(&self) -> bool {
        !self.definitions.is_empty()
    }

    /// Does this backend count quantifier instances?
    pub fn is_traced(&self) -> bool {
        self.trace.is_some()
    }

    /// Delete the context and read how often each named quantifier was instantiated
    /// in it, most first (nothing for a backend that is not `traced`).
    pub fn instances(mut self) -> Vec<(Rc<str>, u64)> {
        let trace = self.trace.take();
        let names = std::mem::take(&mut self.qids);
        // The log is complete once the context is deleted.
        drop(self);
        trace.map(|t| t.read_instances(&names)).unwrap_or_default()
    }

    fn with_trace(trace: Option<PathBuf>) -> Backend {
        // SAFETY: a new context, configured and given an error handler before use; every
        // object made below belongs to it.
        unsafe {
            // E-matching only (LANGUAGE.md section 13): no model-based quantifier
            // instantiation, in every context this process makes.
            static GLOBAL: std::sync::Once = std::sync::Once::new();
            GLOBAL.call_once(|| {
                let (k, v) = (c"smt.mbqi", c"false");
                Z3_global_param_set(k.as_ptr(), v.as_ptr());
                // At most so many quantifier instances per check: a matching loop
                // ends as E-matching that found no proof (the query fails) in a
                // fraction of a second, not at the resource limit seconds later.
                let (k, v) = (c"smt.qi.max_instances", MAX_INSTANCES_PARAM);
                Z3_global_param_set(k.as_ptr(), v.as_ptr());
                // `IDF_Z3_PARAMS=k=v,..` (a developer's switch, for measuring):
                // further global parameters.
                if let Ok(extra) = std::env::var("IDF_Z3_PARAMS") {
                    for kv in extra.split(',') {
                        if let Some((k, v)) = kv.split_once('=') {
                            let k = CString::new(k).unwrap_or_default();
                            let v = CString::new(v).unwrap_or_default();
                            Z3_global_param_set(k.as_ptr(), v.as_ptr());
                        }
                    }
                }
            });
            let cfg = ok(Z3_mk_config(), "a configuration");
            if let Some(p) = &trace {
                let file = CString::new(p.to_string_lossy().as_bytes()).unwrap_or_default();
                Z3_set_param_value(cfg, c"trace".as_ptr(), c"true".as_ptr());
                Z3_set_param_value(cfg, c"trace_file_name".as_ptr(), file.as_ptr());
            }
            let ctx = ok(Z3_mk_context(cfg), "a context");
            Z3_del_config(cfg);
            Z3_set_error_handler(ctx, Some(ignore_error));
            let solver = ok(Z3_mk_simple_solver(ctx), "a solver");
            Z3_solver_inc_ref(ctx, solver);
            let int = ok(Z3_mk_int_sort(ctx), "Int");
            let boolean = ok(Z3_mk_bool_sort(ctx), "Bool");
            let ref_sort = ok(Z3_mk_uninterpreted_sort(ctx, symbol(ctx, "Ref")), "Ref");
            let (snap, variants) = snap_datatype(ctx, int, boolean, ref_sort);
            let mut b = Backend {
                ctx,
                solver,
                cache: TermMap::default(),
                funcs: HashMap::new(),
                int,
                boolean,
                ref_sort,
                snap,
                variants,
                null: ok(Z3_mk_const(ctx, symbol(ctx, "null"), ref_sort), "null"),
                len: ok(
                    Z3_mk_func_decl(ctx, symbol(ctx, "len"), 1, [ref_sort].as_ptr(), int),
                    "len",
                ),
                timeout_set: false,
                seq_at: HashMap::new(),
                definitions: vec![],
                level: 0,
                seq_axiomatized: vec![],
                tuples: HashMap::new(),
                interrupt: None,
                qids: vec![],
                qid_index: HashMap::new(),
                // Z3 has opened the log by now: a name no longer needed.
                trace: trace.map(|p| profile::TraceLog::opened(&p)),
                other: None,
                capped: false,
                quantified: false,
            };
            b.configure_solver();
            b
        }
    }

    /// The parameters every solver of a context starts with.
    fn configure_solver(&mut self) {
        self.set_param("model", Param::Bool(true));
        // Ctrl-C is the pipeline's (it stops the run); Z3 must not turn it into a
        // query's `unknown` (a reported timeout).
        self.set_param("ctrl_c", Param::Bool(false));
    }

    /// Put the context's other solver in use (made, empty, on first use), keeping this
    /// one as it is until swapped back. Both share what the context has translated and
    /// declared; each has its own frames and assertions.
    pub fn swap_solver(&mut self) {
        let fresh = self.other.is_none();
        let next = match self.other.take() {
            Some(s) => s,
            None => {
                // SAFETY: a new solver of this context, counted until `Drop`.
                let solver = ok(unsafe { Z3_mk_simple_solver(self.ctx) }, "a solver");
                // SAFETY: as above.
                unsafe { Z3_solver_inc_ref(self.ctx, solver) };
                SolverState { solver, at: vec![], level: 0, timeout_set: false }
            }
        };
        let current = SolverState {
            solver: self.solver,
            at: self.definitions.iter().map(|(_, at)| *at).collect(),
            level: self.level,
            timeout_set: self.timeout_set,
        };
        self.solver = next.solver;
        self.level = next.level;
        self.timeout_set = next.timeout_set;
        for (k, (_, at)) in self.definitions.iter_mut().enumerate() {
            *at = next.at.get(k).copied().unwrap_or(usize::MAX);
        }
        self.other = Some(current);
        if fresh {
            self.configure_solver();
        }
    }

    /// A new backend asserting `assumptions`, with the query limits given (for the
    /// questions asked of a context made for them: models, distinct models).
    fn holding(assumptions: &[Term], limits: Limits) -> Backend {
        let b = Backend::stoppable(limits.interrupt.clone());
        b.limited(assumptions, limits)
    }

    /// This backend with the query limits given, asserting `assumptions`.
    fn limited(mut self, assumptions: &[Term], limits: Limits) -> Backend {
        let b = &mut self;
        if let Some(ms) = limits.timeout_ms {
            b.set_timeout_ms(ms);
        }
        if let Some(n) = limits.rlimit {
            b.set_rlimit(n);
        }
        for a in assumptions {
            b.assert(a);
        }
        self
    }

    pub fn stoppable(interrupt: Option<Interrupt>) -> Backend {
        let mut b = Backend::new();
        if let Some(i) = interrupt {
            i.register(b.ctx);
            b.interrupt = Some(i);
        }
        b
    }

    /// Has this backend's member been asked to stop?
    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(Interrupt::requested)
    }

    fn set_param(&mut self, name: &str, value: Param) {
        let c = self.ctx;
        // SAFETY: the params object is counted while in use and released after.
        unsafe {
            let p = ok(Z3_mk_params(c), "parameters");
            Z3_params_inc_ref(c, p);
            let k = symbol(c, name);
            match value {
                Param::U32(v) => Z3_params_set_uint(c, p, k, v),
                Param::Bool(v) => Z3_params_set_bool(c, p, k, v),
            }
            Z3_solver_set_params(c, self.solver, p);
            Z3_params_dec_ref(c, p);
        }
    }

    pub fn set_timeout_ms(&mut self, ms: u32) {
        self.set_param("timeout", Param::U32(ms.max(1)));
        self.timeout_set = true;
    }

    /// At most `n` resource units per query (0: no limit).
    pub fn set_rlimit(&mut self, n: u32) {
        self.set_param("rlimit", Param::U32(n));
    }

    /// Remove a timeout set earlier (only when one was set).
    pub fn clear_timeout(&mut self) {
        if self.timeout_set {
            self.set_timeout_ms(u32::MAX);
            self.timeout_set = false;
        }
    }

    fn sort(&self, s: Sort) -> Z3_sort {
        match s {
            Sort::Int => self.int,
            Sort::Bool => self.boolean,
            Sort::Ref => self.ref_sort,
            Sort::Snap => self.snap,
            // SAFETY: a sort of this context (Z3 shares it between calls).
            Sort::Perm => ok(unsafe { Z3_mk_real_sort(self.ctx) }, "Real"),
            Sort::Arr(e) => {
                let elem = self.sort(Sort::of_elem(e));
                // SAFETY: sorts of this context.
                ok(unsafe { Z3_mk_array_sort(self.ctx, self.int, elem) }, "an array sort")
            }
            Sort::Seq(..) if native_sequences() => {
                let elem = self.sort(s.seq_elem());
                // SAFETY: sorts of this context.
                ok(unsafe { Z3_mk_seq_sort(self.ctx, elem) }, "a sequence sort")
            }
            // An uninterpreted sort per sequence sort (the same name gives the same
            // sort in one context), with the axioms of `seq_axioms`.
            Sort::Seq(..) => ok(
                unsafe { Z3_mk_uninterpreted_sort(self.ctx, symbol(self.ctx, &format!("{s:?}"))) },
                "a sequence sort",
            ),
        }
    }

    /// `fromSeq`/`toSeq` of a sequence sort: uninterpreted functions between it and
    /// Snap (the Snap datatype has no variant per sequence sort; `Term::unwrap` folds
    /// `toSeq(fromSeq(s))` syntactically, which is all the rules rely on).
    fn seq_wrap(&mut self, sort: Sort, wrap: bool) -> Z3_func_decl {
        let name = format!("{}{sort:?}", if wrap { "from" } else { "to" });
        let f = if wrap {
            Func { name: name.into(), domain: vec![sort].into(), range: Sort::Snap }
        } else {
            Func { name: name.into(), domain: vec![Sort::Snap].into(), range: sort }
        };
        self.func(&f)
    }

    /// An operation on axiomatized sequences: the application of its function
    /// (membership takes the element, not the unit sequence the term holds).
    fn seq_function(&mut self, t: &Term, a: &[Z3_ast]) -> Z3_ast {
        let (sort, which) = match t.op() {
            Op::SeqEmpty(s) => (*s, SeqFn::Empty),
            Op::SeqUnit => (t.sort(), SeqFn::Unit),
            Op::SeqConcat => (t.sort(), SeqFn::Concat),
            Op::SeqLen => (t.args()[0].sort(), SeqFn::Len),
            Op::SeqAt => (t.args()[0].sort(), SeqFn::At),
            Op::SeqExtract => (t.sort(), SeqFn::Extract),
            _ => (t.args()[0].sort(), SeqFn::Contains),
        };
        let f = self.seq_decl(sort, which);
        if which == SeqFn::Contains {
            let sub = &t.args()[1];
            if let Op::SeqUnit = sub.op() {
                let x = self.translate(&sub.args()[0]);
                return self.app(f, &[a[0], x]);
            }
            // `contains(s, t)` for a `t` that is not a unit: the rules never build it
            // (the smart constructor sees units); an unknown value keeps it sound.
            let g = Func {
                name: format!("subseq#{sort:?}").into(),
                domain: vec![sort, sort].into(),
                range: Sort::Bool,
            };
            let d = self.func(&g);
            return self.app(d, a);
        }
        self.app(f, a)
    }

    /// The function `which` of the axiomatized sequence sort `sort`; the first use of
    /// the sort adds its axioms to `definitions`.
    fn seq_decl(&mut self, sort: Sort, which: SeqFn) -> Z3_func_decl {
        let e = sort.seq_elem();
        let func = |name: &str, domain: Vec<Sort>, range: Sort| Func {
            name: format!("{name}#{sort:?}").into(),
            domain: domain.into(),
            range,
        };
        let f = match which {
            SeqFn::Empty => func("empty", vec![], sort),
            SeqFn::Unit => func("unit", vec![e], sort),
            SeqFn::Concat => func("concat", vec![sort, sort], sort),
            SeqFn::Len => func("len", vec![sort], Sort::Int),
            SeqFn::At => func("at", vec![sort, Sort::Int], e),
            SeqFn::Extract => func("extract", vec![sort, Sort::Int, Sort::Int], sort),
            SeqFn::Contains => func("contains", vec![sort, e], Sort::Bool),
            SeqFn::Equal => func("equal", vec![sort, sort], Sort::Bool),
        };
        let d = self.func(&f);
        if !self.seq_axiomatized.contains(&sort) {
            self.seq_axiomatized.push(sort);
            self.seq_axioms(sort);
        }
        d
    }

    /// The laws of finite sequences for `sort` (Dafny's and Viper's axioms, each with
    /// its triggers), added to `definitions`.
    fn seq_axioms(&mut self, sort: Sort) {
        let e = sort.seq_elem();
        let tag = format!("{sort:?}");
        let var = |n: &str, s: Sort| Term::var(&format!("{n}#{tag}"), s);
        let (a, b, x, i, o, n) = (
            var("a", sort),
            var("b", sort),
            var("x", e),
            var("i", Sort::Int),
            var("o", Sort::Int),
            var("n", Sort::Int),
        );
        let len = |s: &Term| Term::raw(Op::SeqLen, Sort::Int, vec![s.clone()]);
        let at = |s: &Term, k: &Term| Term::raw(Op::SeqAt, e, vec![s.clone(), k.clone()]);
        let unit = Term::raw(Op::SeqUnit, sort, vec![x.clone()]);
        let cat = Term::raw(Op::SeqConcat, sort, vec![a.clone(), b.clone()]);
        let ext = Term::raw(Op::SeqExtract, sort, vec![a.clone(), o.clone(), n.clone()]);
        let cat_ext = Term::raw(Op::SeqExtract, sort, vec![cat.clone(), o.clone(), n.clone()]);
        let empty = Term::raw(Op::SeqEmpty(sort), sort, vec![]);
        let zero = Term::int(0);
        let in_range = |k: &Term, s: &Term| {
            Term::and(Term::le(zero.clone(), k.clone()), Term::lt(k.clone(), len(s)))
        };
        let fits = Term::and_all(vec![
            Term::le(zero.clone(), o.clone()),
            Term::le(zero.clone(), n.clone()),
            Term::le(Term::add(o.clone(), n.clone()), len(&a)),
        ]);
        let q = |vars: Vec<&Term>, trig: Vec<Vec<Term>>, body: Term| {
            Term::quant(true, vars.into_iter().cloned().collect(), trig, body)
        };
        let equal = Term::raw(Op::Eq, Sort::Bool, vec![a.clone(), b.clone()]);
        let member = Term::raw(Op::SeqContains, Sort::Bool, vec![a.clone(), unit.clone()]);
        let axioms = vec![
            Term::raw(Op::Eq, Sort::Bool, vec![len(&empty), zero.clone()]),
            q(vec![&a], vec![vec![len(&a)]], Term::le(zero.clone(), len(&a))),
            q(
                vec![&a],
                vec![vec![len(&a)]],
                Term::implies(
                    Term::raw(Op::Eq, Sort::Bool, vec![len(&a), zero.clone()]),
                    Term::raw(Op::Eq, Sort::Bool, vec![a.clone(), empty.clone()]),
                ),
            ),
            q(
                vec![&x],
                vec![vec![unit.clone()]],
                Term::and(
                    Term::raw(Op::Eq, Sort::Bool, vec![len(&unit), Term::int(1)]),
                    Term::raw(Op::Eq, Sort::Bool, vec![at(&unit, &zero), x.clone()]),
                ),
            ),
            q(
                vec![&a, &b],
                vec![vec![cat.clone()]],
                Term::raw(Op::Eq, Sort::Bool, vec![len(&cat), Term::add(len(&a), len(&b))]),
            ),
            q(
                vec![&a, &b, &i],
                vec![vec![at(&cat, &i)]],
                Term::raw(
                    Op::Eq,
                    Sort::Bool,
                    vec![
                        at(&cat, &i),
                        Term::ite(
                            Term::lt(i.clone(), len(&a)),
                            at(&a, &i),
                            at(&b, &Term::sub(i.clone(), len(&a))),
                        ),
                    ],
                ),
            ),
            q(
                vec![&a, &o, &n],
                vec![vec![ext.clone()]],
                Term::implies(
                    fits.clone(),
                    Term::raw(Op::Eq, Sort::Bool, vec![len(&ext), n.clone()]),
                ),
            ),
            q(
                vec![&a, &o, &n, &i],
                vec![vec![at(&ext, &i)]],
                Term::implies(
                    Term::and(
                        fits.clone(),
                        Term::and(
                            Term::le(zero.clone(), i.clone()),
                            Term::lt(i.clone(), n.clone()),
                        ),
                    ),
                    Term::raw(
                        Op::Eq,
                        Sort::Bool,
                        vec![at(&ext, &i), at(&a, &Term::add(o.clone(), i.clone()))],
                    ),
                ),
            ),
            // The same law from the other side (Viper's and Dafny's second trigger of
            // `drop`/`take`): an element of `a` the program names, with a slice of
            // `a`, gives the slice's element at that place (`s[i]` and `s[1..]` give
            // `s[1..][i - 1]`, which `s[1..]`'s quantifiers match).
            q(
                vec![&a, &o, &n, &i],
                vec![vec![at(&a, &i), ext.clone()]],
                Term::implies(
                    Term::and(
                        fits.clone(),
                        Term::and(
                            Term::le(o.clone(), i.clone()),
                            Term::lt(i.clone(), Term::add(o.clone(), n.clone())),
                        ),
                    ),
                    Term::raw(
                        Op::Eq,
                        Sort::Bool,
                        vec![at(&ext, &Term::sub(i.clone(), o.clone())), at(&a, &i)],
                    ),
                ),
            ),
            // Likewise an element of the left part of a concatenation (Viper's second
            // trigger of indexing into an append).
            q(
                vec![&a, &b, &i],
                vec![vec![at(&a, &i), cat.clone()]],
                Term::implies(
                    in_range(&i, &a),
                    Term::raw(Op::Eq, Sort::Bool, vec![at(&cat, &i), at(&a, &i)]),
                ),
            ),
            // And of the right part: an element of `b` the program names, with
            // `a ++ b`, gives `(a ++ b)[|a| + i]` (so `sorted(seq(v) + t)`'s quantifier,
            // over reads of `seq(v) + t`, speaks of the reads of `t`).
            q(
                vec![&a, &b, &i],
                vec![vec![at(&b, &i), cat.clone()]],
                Term::implies(
                    in_range(&i, &b),
                    Term::raw(
                        Op::Eq,
                        Sort::Bool,
                        vec![at(&cat, &Term::add(len(&a), i.clone())), at(&b, &i)],
                    ),
                ),
            ),
            // Membership in a slice: an index of the sliced sequence in its range
            // (Viper's and Dafny's `contains` over `drop` and `take`).
            q(
                vec![&a, &o, &n, &x],
                vec![vec![Term::raw(Op::SeqContains, Sort::Bool, vec![ext.clone(), unit.clone()])]],
                Term::implies(
                    fits.clone(),
                    Term::raw(
                        Op::Eq,
                        Sort::Bool,
                        vec![
                            Term::raw(Op::SeqContains, Sort::Bool, vec![ext.clone(), unit.clone()]),
                            Term::quant(
                                false,
                                vec![i.clone()],
                                vec![vec![at(&a, &i)]],
                                Term::and_all(vec![
                                    Term::le(o.clone(), i.clone()),
                                    Term::lt(i.clone(), Term::add(o.clone(), n.clone())),
                                    Term::raw(Op::Eq, Sort::Bool, vec![at(&a, &i), x.clone()]),
                                ]),
                            ),
                        ],
                    ),
                ),
            ),
            // Extensionality: same length and elements make equal sequences. The
            // other direction is congruence: `equal(a, b)` makes `a` and `b` one
            // value (below), whose lengths and elements are then the same without an
            // instance; written as an `iff`, every equality on the path became a
            // quantifier over indices, instantiated at every index of either side
            // and of every concatenation equal to one (a list's reversal by
            // contents: 13,000 instances for one proof). Here the element quantifier
            // is only ever negated: Z3 makes it one witness index per pair.
            q(
                vec![&a, &b],
                vec![vec![equal.clone()]],
                Term::implies(
                    Term::and(
                        Term::raw(Op::Eq, Sort::Bool, vec![len(&a), len(&b)]),
                        q(
                            vec![&i],
                            vec![vec![at(&a, &i)], vec![at(&b, &i)]],
                            Term::implies(
                                in_range(&i, &a),
                                Term::raw(Op::Eq, Sort::Bool, vec![at(&a, &i), at(&b, &i)]),
                            ),
                        ),
                    ),
                    equal.clone(),
                ),
            ),
            // Membership: some index holds it.
            q(
                vec![&a, &x],
                vec![vec![member.clone()]],
                Term::raw(
                    Op::Eq,
                    Sort::Bool,
                    vec![
                        member.clone(),
                        Term::quant(
                            false,
                            vec![i.clone()],
                            vec![vec![at(&a, &i)]],
                            Term::and(
                                in_range(&i, &a),
                                Term::raw(Op::Eq, Sort::Bool, vec![at(&a, &i), x.clone()]),
                            ),
                        ),
                    ],
                ),
            ),
            // Membership through the constructors (E-matching modulo equalities finds a
            // `contains` of a sequence known equal to a literal).
            q(
                vec![&a, &b, &x],
                vec![vec![Term::raw(Op::SeqContains, Sort::Bool, vec![cat.clone(), unit.clone()])]],
                Term::raw(
                    Op::Eq,
                    Sort::Bool,
                    vec![
                        Term::raw(Op::SeqContains, Sort::Bool, vec![cat.clone(), unit.clone()]),
                        Term::or(
                            Term::raw(Op::SeqContains, Sort::Bool, vec![a.clone(), unit.clone()]),
                            Term::raw(Op::SeqContains, Sort::Bool, vec![b.clone(), unit.clone()]),
                        ),
                    ],
                ),
            ),
            q(
                vec![&var("y", e), &x],
                vec![vec![Term::raw(
                    Op::SeqContains,
                    Sort::Bool,
                    vec![Term::raw(Op::SeqUnit, sort, vec![var("y", e)]), unit.clone()],
                )]],
                Term::raw(
                    Op::Eq,
                    Sort::Bool,
                    vec![
                        Term::raw(
                            Op::SeqContains,
                            Sort::Bool,
                            vec![Term::raw(Op::SeqUnit, sort, vec![var("y", e)]), unit.clone()],
                        ),
                        Term::raw(Op::Eq, Sort::Bool, vec![var("y", e), x.clone()]),
                    ],
                ),
            ),
            Term::quant(
                true,
                vec![x.clone()],
                vec![vec![Term::raw(
                    Op::SeqContains,
                    Sort::Bool,
                    vec![empty.clone(), unit.clone()],
                )]],
                Term::not(Term::raw(
                    Op::SeqContains,
                    Sort::Bool,
                    vec![empty.clone(), unit.clone()],
                )),
            ),
            // Slices as sequences, not only through their elements (Viper's and Dafny's
            // `drop`/`take` of an append): E-matching works up to equalities, so a
            // slice of a sequence the path equates with a concatenation (a list's
            // `contents()` unfolded: `c == seq(v) + t`) that takes exactly one part is
            // that part, and a function of `c[1..]` is that function of `t`
            // (`rev(c[1..]) == rev(t)`), which no element-wise law says. Only whole
            // parts: a law giving a slice of a part makes new slices, each one more
            // term for every element-wise law (+30% of Z3's work on the suite's
            // sequence file for nothing it needed).
            q(
                vec![&a, &b, &o, &n],
                vec![vec![cat_ext.clone()]],
                Term::implies(
                    Term::and(
                        Term::raw(Op::Eq, Sort::Bool, vec![o.clone(), zero.clone()]),
                        Term::raw(Op::Eq, Sort::Bool, vec![n.clone(), len(&a)]),
                    ),
                    Term::raw(Op::Eq, Sort::Bool, vec![cat_ext.clone(), a.clone()]),
                ),
            ),
            q(
                vec![&a, &b, &o, &n],
                vec![vec![cat_ext.clone()]],
                Term::implies(
                    Term::and(
                        Term::raw(Op::Eq, Sort::Bool, vec![o.clone(), len(&a)]),
                        Term::raw(Op::Eq, Sort::Bool, vec![n.clone(), len(&b)]),
                    ),
                    Term::raw(Op::Eq, Sort::Bool, vec![cat_ext.clone(), b.clone()]),
                ),
            ),
            // The whole of a sequence as a slice of it is the sequence (Dafny's
            // `Seq#Take(s, |s|) == s`), whatever term the bounds are written with
            // (`s[..i]` where the path says `i == |s|`).
            {
                let take =
                    Term::raw(Op::SeqExtract, sort, vec![a.clone(), zero.clone(), n.clone()]);
                q(
                    vec![&a, &n],
                    vec![vec![take.clone()]],
                    Term::implies(
                        Term::raw(Op::Eq, Sort::Bool, vec![n.clone(), len(&a)]),
                        Term::raw(Op::Eq, Sort::Bool, vec![take, a.clone()]),
                    ),
                )
            },
        ];
        debug_assert_eq!(axioms.len(), SEQ_LAWS.len());
        for (ax, law) in axioms.iter().zip(SEQ_LAWS) {
            let ax = ax.with_quant_name(&format!("the sequence law `{law}`"));
            let d = self.translate(&ax);
            self.definitions.push((d, usize::MAX));
        }
        // Extensional equality is equality: `equal(a, b) ⇒ a = b` (the `=` of the
        // sort, which `Op::Eq` on sequences does not translate to).
        let c = self.ctx;
        let (za, zb) = (self.translate(&a), self.translate(&b));
        let ze = self.translate(&equal);
        // SAFETY: ASTs of this context; arrays live across the calls.
        unsafe {
            let eq = ok(Z3_mk_eq(c, za, zb), "=");
            let imp = ok(Z3_mk_implies(c, ze, eq), "=>");
            let pat = ok(Z3_mk_pattern(c, 1, [ze].as_ptr()), "a pattern");
            let bound = [ok(Z3_to_app(c, za), "a"), ok(Z3_to_app(c, zb), "b")];
            let ax =
                ok(Z3_mk_forall_const(c, 0, 2, bound.as_ptr(), 1, [pat].as_ptr(), imp), "an axiom");
            self.definitions.push((ax, usize::MAX));
        }
    }

    /// The `at` function of sequence sort `sort` (declared, with its definition, on
    /// first use).
    fn seq_at(&mut self, sort: Sort) -> Z3_func_decl {
        if let Some(f) = self.seq_at.get(&sort) {
            return *f;
        }
        let c = self.ctx;
        let (zs, ze) = (self.sort(sort), self.sort(sort.seq_elem()));
        // SAFETY: sorts, symbols and ASTs of this context; arrays live across calls.
        unsafe {
            let f = ok(
                Z3_mk_func_decl(
                    c,
                    symbol(c, &format!("at#{sort:?}")),
                    2,
                    [zs, self.int].as_ptr(),
                    ze,
                ),
                "at",
            );
            let s = ok(Z3_mk_const(c, symbol(c, "at#s"), zs), "at#s");
            let i = ok(Z3_mk_const(c, symbol(c, "at#i"), self.int), "at#i");
            let app = self.app(f, &[s, i]);
            let nth = ok(Z3_mk_seq_nth(c, s, i), "seq.nth");
            let eq = ok(Z3_mk_eq(c, app, nth), "at = nth");
            let pat = ok(Z3_mk_pattern(c, 1, [app].as_ptr()), "a pattern");
            let bound = [ok(Z3_to_app(c, s), "s"), ok(Z3_to_app(c, i), "i")];
            let def = ok(
                Z3_mk_forall_const(c, 0, 2, bound.as_ptr(), 1, [pat].as_ptr(), eq),
                "the definition of at",
            );
            self.definitions.push((def, usize::MAX));
            self.seq_at.insert(sort, f);
            f
        }
    }

    /// A quantifier over the constants `vars` with the trigger groups `groups`; with no
    /// group, a pattern no ground term matches (an uninterpreted function applied to
    /// the bound variables, which occurs nowhere else), so Z3 never instantiates it.
    fn quantifier(&mut self, t: &Term, forall: bool) -> Option<Z3_ast> {
        let (vars, groups, body) = t.quant_parts();
        let c = self.ctx;
        // Z3 shares structurally equal quantifiers whatever their ids: every
        // quantifier made here for `t`, the probes below included, carries its id, so
        // that the one asserted is the named one.
        let qid = t.quant_name().map(|name| self.qid(name));
        let bound: Vec<Z3_app> = vars
            .iter()
            .map(|v| {
                let a = self.translate(v);
                // SAFETY: a constant of this context.
                ok(unsafe { Z3_to_app(c, a) }, "a bound variable")
            })
            .collect();
        let mut patterns: Vec<Z3_pattern> = vec![];
        let b = self.translate(body);
        for g in &groups {
            // Z3 accepts no conditional in a pattern, nor one without the bound
            // variables (it warns on stderr and drops the group).
            if g.iter().any(|x| !x.nodes_ite_free()) || !Term::covers(g, vars) {
                continue;
            }
            let terms: Vec<Z3_ast> = g.iter().map(|x| self.translate(x)).collect();
            // SAFETY: the array lives across the call.
            let Some(p) = (unsafe { Z3_mk_pattern(c, terms.len() as u32, terms.as_ptr()) }) else {
                continue;
            };
            // A group Z3 rejects (a term it does not accept in a pattern) is left out:
            // fewer instances, never a wrong one.
            let accepted = mk_quantifier(c, forall, qid, &bound, &[p], b).is_some()
                // SAFETY: a plain query of this context's last error.
                && unsafe { Z3_get_error_code(c) } == ErrorCode::Ok;
            if accepted {
                patterns.push(p);
            }
        }
        if patterns.is_empty() {
            let dom: Vec<Sort> = vars.iter().map(|v| v.sort()).collect();
            let f = Func { name: "no$trigger".into(), domain: dom.into(), range: Sort::Bool };
            let d = self.func(&f);
            let args: Vec<Z3_ast> = vars.iter().map(|v| self.translate(v)).collect();
            let app = self.app(d, &args);
            // SAFETY: as above.
            patterns.push(ok(unsafe { Z3_mk_pattern(c, 1, [app].as_ptr()) }, "a pattern"));
        }
        mk_quantifier(c, forall, qid, &bound, &patterns, b)
    }

    /// The Z3 quantifier id of `name`: `q!K`, `K` its index in `qids`.
    fn qid(&mut self, name: &Rc<str>) -> Z3_symbol {
        let k = match self.qid_index.get(name) {
            Some(k) => *k,
            None => {
                self.qids.push(name.clone());
                self.qid_index.insert(name.clone(), self.qids.len() - 1);
                self.qids.len() - 1
            }
        };
        symbol(self.ctx, &format!("{}{k}", profile::QID_PREFIX))
    }

    fn func(&mut self, f: &Func) -> Z3_func_decl {
        if let Some(d) = self.funcs.get(f) {
            return *d;
        }
        let dom: Vec<Z3_sort> = f.domain.iter().map(|s| self.sort(*s)).collect();
        let range = self.sort(f.range);
        // SAFETY: the domain array lives across the call.
        let d = ok(
            unsafe {
                Z3_mk_func_decl(
                    self.ctx,
                    symbol(self.ctx, &f.name),
                    dom.len() as u32,
                    dom.as_ptr(),
                    range,
                )
            },
            "a function",
        );
        self.funcs.insert(f.clone(), d);
        d
    }

    /// The Z3 form of a term (cached).
    fn translate(&mut self, t: &Term) -> Z3_ast {
        if let Some(d) = self.cache.get(&t.id()) {
            return *d;
        }
        // Recursion follows term depth (a long straight-line program builds deep
        // terms): grow the stack on the heap when it runs low.
        let d = stacker::maybe_grow(1 << 20, 64 << 20, || self.translate_new(t));
        self.cache.insert(t.id(), d);
        d
    }

    fn app(&self, f: Z3_func_decl, args: &[Z3_ast]) -> Z3_ast {
        // SAFETY: the argument array lives across the call.
        ok(unsafe { Z3_mk_app(self.ctx, f, args.len() as u32, args.as_ptr()) }, "an application")
    }

    fn translate_new(&mut self, t: &Term) -> Z3_ast {
        if let Some(d) = self.shape_test(t) {
            return d;
        }
        match t.op() {
            Op::Quant(b) => {
                self.quantified = true;
                let forall = b.forall;
                if let Some(q) = self.quantifier(t, forall) {
                    return q;
                }
                if std::env::var_os("IDF_DEBUG_QUANT").is_some() {
                    crate::say!("Z3 rejected the quantifier {t}");
                }
                // Patterns Z3 rejects (an `ite` or a connective inside): the quantifier
                // without them, which only weakens what an assumed one gives.
                let (vars, _, body) = t.quant_parts();
                let bare = Term::quant_named(
                    forall,
                    vars.to_vec(),
                    vec![],
                    body.clone(),
                    t.quant_name().cloned(),
                );
                return ok(self.quantifier(&bare, forall), "a quantifier");
            }
            Op::Wrap(s @ Sort::Seq(..)) => {
                let f = self.seq_wrap(*s, true);
                let a = self.translate(&t.args()[0]);
                return self.app(f, &[a]);
            }
            Op::Unwrap(s @ Sort::Seq(..)) => {
                let f = self.seq_wrap(*s, false);
                let a = self.translate(&t.args()[0]);
                return self.app(f, &[a]);
            }
            _ => {}
        }
        let a: Vec<Z3_ast> = t.args().iter().map(|x| self.translate(x)).collect();
        let c = self.ctx;
        let v = &self.variants;
        // SAFETY: every argument is an AST of this context, of the sort the operation
        // takes (terms are well-sorted); arrays live across their calls.
        let r = unsafe {
            match t.op() {
                Op::Var(name, _) => Z3_mk_const(c, symbol(c, name), self.sort(t.sort())),
                Op::Int(n) => Z3_mk_int64(c, *n, self.int),
                Op::BigInt(n) => {
                    let s = CString::new(n.as_bytes()).unwrap_or_default();
                    Z3_mk_numeral(c, s.as_ptr(), self.int)
                }
                Op::Rat(n, d) => {
                    let s = CString::new(format!("{n}/{d}")).unwrap_or_default();
                    Z3_mk_numeral(c, s.as_ptr(), self.sort(Sort::Perm))
                }
                Op::ToPerm => Z3_mk_int2real(c, a[0]),
                Op::PDiv => Z3_mk_div(c, a[0], a[1]),
                Op::Bool(true) => Z3_mk_true(c),
                Op::Bool(false) => Z3_mk_false(c),
                Op::Class(i, _) => Z3_mk_int64(c, *i as i64, self.int),
                Op::Null => Some(self.null),
                Op::Unit => Some(self.app(v[UNIT].constructor, &[])),
                Op::Add => Z3_mk_add(c, 2, a.as_ptr()),
                Op::Sub => Z3_mk_sub(c, 2, a.as_ptr()),
                Op::Mul => Z3_mk_mul(c, 2, a.as_ptr()),
                Op::Div => Some(java_div(c, self.int, a[0], a[1])),
                Op::Mod => {
                    let q = java_div(c, self.int, a[0], a[1]);
                    let bq = ok(Z3_mk_mul(c, 2, [a[1], q].as_ptr()), "b * q");
                    Z3_mk_sub(c, 2, [a[0], bq].as_ptr())
                }
                Op::Neg => Z3_mk_unary_minus(c, a[0]),
                Op::Lt => Z3_mk_lt(c, a[0], a[1]),
                Op::Le => Z3_mk_le(c, a[0], a[1]),
                Op::Eq if matches!(t.args()[0].sort(), Sort::Seq(..)) && !native_sequences() => {
                    let f = self.seq_decl(t.args()[0].sort(), SeqFn::Equal);
                    Some(self.app(f, &a))
                }
                Op::Eq => Z3_mk_eq(c, a[0], a[1]),
                Op::Not => Z3_mk_not(c, a[0]),
                Op::And => Z3_mk_and(c, a.len() as u32, a.as_ptr()),
                Op::Or => Z3_mk_or(c, a.len() as u32, a.as_ptr()),
                Op::Implies => Z3_mk_implies(c, a[0], a[1]),
                Op::Ite => Z3_mk_ite(c, a[0], a[1], a[2]),
                Op::Combine => Some(self.app(v[COMBINE].constructor, &a)),
                Op::First => Some(self.app(v[COMBINE].accessors[0], &a)),
                Op::Second => Some(self.app(v[COMBINE].accessors[1], &a)),
                Op::Wrap(s) => Some(self.app(v[wrap_variant(*s)].constructor, &a)),
                Op::Unwrap(s) => Some(self.app(v[wrap_variant(*s)].accessors[0], &a)),
                Op::App(f) => {
                    let d = self.func(f);
                    Some(self.app(d, &a))
                }
                Op::Len => Some(self.app(self.len, &a)),
                Op::Select => Z3_mk_select(c, a[0], a[1]),
                Op::Store => Z3_mk_store(c, a[0], a[1], a[2]),
                Op::ConstArr(_) => Z3_mk_const_array(c, self.int, a[0]),
                Op::Quant(_) => unreachable!("translated above"),
                Op::SeqEmpty(s) if native_sequences() => Z3_mk_seq_empty(c, self.sort(*s)),
                Op::SeqUnit if native_sequences() => Z3_mk_seq_unit(c, a[0]),
                Op::SeqConcat if native_sequences() => Z3_mk_seq_concat(c, 2, a.as_ptr()),
                Op::SeqLen if native_sequences() => Z3_mk_seq_length(c, a[0]),
                Op::SeqAt if native_sequences() => {
                    let at = self.seq_at(t.args()[0].sort());
                    Some(self.app(at, &a))
                }
                Op::SeqExtract if native_sequences() => Z3_mk_seq_extract(c, a[0], a[1], a[2]),
                Op::SeqContains if native_sequences() => Z3_mk_seq_contains(c, a[0], a[1]),
                Op::SeqEmpty(_)
                | Op::SeqUnit
                | Op::SeqConcat
                | Op::SeqLen
                | Op::SeqAt
                | Op::SeqExtract
                | Op::SeqContains => Some(self.seq_function(t, &a)),
            }
        };
        ok(r, "a term")
    }

    /// A snapshot's shape, `s = combine(first(s), second(s))` or `s = fromT(toT(s))`
    /// (what producing an assertion assumes of its snapshot), as the datatype's tester
    /// (`is-combine(s)`, `is-fromT(s)`): the same meaning, and Z3 decides testers
    /// directly instead of reasoning about the equation (a tree's pure-method axioms
    /// carry dozens in their guards: 244 -> 164 ms on one such query).
    fn shape_test(&mut self, t: &Term) -> Option<Z3_ast> {
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
        Some(self.app(self.variants[variant].tester, &[x]))
    }

    pub fn push(&mut self) {
        // SAFETY: the solver of this context.
        unsafe { Z3_solver_push(self.ctx, self.solver) }
        self.level += 1;
    }

    pub fn pop(&mut self) {
        // SAFETY: as above; the decider pops only frames it pushed.
        unsafe { Z3_solver_pop(self.ctx, self.solver, 1) }
        self.level = self.level.saturating_sub(1);
        // Those asserted in the frame popped are gone (a push makes a new frame of the
        // same depth: the depth alone does not say they are there).
        for (_, at) in &mut self.definitions {
            if *at > self.level {
                *at = usize::MAX;
            }
        }
    }

    pub fn assert(&mut self, t: &Term) {
        let b = self.translate(t);
        self.assert_definitions();
        // SAFETY: a Boolean AST of this context.
        unsafe { Z3_solver_assert(self.ctx, self.solver, b) }
    }

    /// Assert, in the current frame, every definition not asserted in a frame that is
    /// still there (new ones, and those a pop took away).
    fn assert_definitions(&mut self) {
        let level = self.level;
        for (d, at) in &mut self.definitions {
            if *at == usize::MAX {
                // SAFETY: a Boolean AST of this context.
                unsafe { Z3_solver_assert(self.ctx, self.solver, *d) }
                *at = level;
            }
        }
    }

    /// Is the current assertion set together with `t` satisfiable?
    pub fn check_with(&mut self, t: &Term) -> Sat {
        let b = self.translate(t);
        self.assert_definitions();
        let dumped = dump_dir().map(|dir| dump_query(dir, &self.smtlib(), &self.show(b)));
        let start = std::time::Instant::now();
        // SAFETY: the assumption array lives across the call.
        let assumptions = [b];
        if self.interrupted() {
            return Sat::Unknown;
        }
        self.capped = false;
        let counted = if self.has_axioms() || self.quantified {
            self.stat("quant instantiations")
        } else {
            0
        };
        let r = match unsafe {
            Z3_solver_check_assumptions(
                self.ctx,
                self.solver,
                assumptions.len() as u32,
                assumptions.as_ptr(),
            )
        } {
            Z3_L_TRUE => Sat::Sat,
            Z3_L_FALSE => Sat::Unsat,
            // Stopped from outside: Z3 then often names the theory it was in
            // ("incomplete (theory arithmetic)"), which is no answer either.
            _ if self.interrupted() => Sat::Unknown,
            // E-matching ran out of instances (no model-based instantiation), or
            // stopped at `MAX_INSTANCES` (`capped`: a matching loop, most likely): the
            // query is not proved, and nothing timed out (LANGUAGE.md section 13).
            _ if self.incomplete() => {
                let made = self.stat("quant instantiations").saturating_sub(counted);
                self.capped = made >= MAX_INSTANCES;
                Sat::Sat
            }
            _ => Sat::Unknown,
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

    /// The resource units Z3 has counted in this context so far (its statistic `rlimit
    /// count`; 0 when absent): for the query log.
    pub fn rlimit_count(&self) -> u64 {
        self.stat("rlimit count")
    }

    /// The solver's statistic `key` (an unsigned count; 0 when absent).
    fn stat(&self, key: &str) -> u64 {
        // SAFETY: the statistics object is counted while read.
        unsafe {
            let Some(st) = Z3_solver_get_statistics(self.ctx, self.solver) else { return 0 };
            Z3_stats_inc_ref(self.ctx, st);
            let mut n = 0;
            for i in 0..Z3_stats_size(self.ctx, st) {
                let k = Z3_stats_get_key(self.ctx, st, i);
                if !k.is_null()
                    && std::ffi::CStr::from_ptr(k).to_bytes() == key.as_bytes()
                    && Z3_stats_is_uint(self.ctx, st, i)
                {
                    n = Z3_stats_get_uint_value(self.ctx, st, i) as u64;
                }
            }
            Z3_stats_dec_ref(self.ctx, st);
            n
        }
    }

    /// Did the last `unknown` come from incompleteness (quantifiers, sequences) rather
    /// than a limit?
    fn incomplete(&self) -> bool {
        // SAFETY: the string is copied before the next call into Z3.
        let why = unsafe {
            let s = Z3_solver_get_reason_unknown(self.ctx, self.solver);
            if s.is_null() {
                String::new()
            } else {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            }
        };
        if std::env::var_os("IDF_DEBUG_UNKNOWN").is_some() {
            crate::say!("unknown: {why}");
        }
        why.contains("incomplete")
    }

    /// Values of `terms` in a model of the assertions plus `t` (for counterexamples),
    /// printed by Z3.
    fn model_values(&mut self, t: &Term, terms: &[Term]) -> Option<Vec<Option<String>>> {
        if self.check_with(t) != Sat::Sat {
            return None;
        }
        let asts: Vec<Z3_ast> = terms.iter().map(|x| self.translate(x)).collect();
        let c = self.ctx;
        // SAFETY: the model is counted while read and released after; each printed
        // string is copied before the next call into Z3.
        unsafe {
            let m = Z3_solver_get_model(c, self.solver)?;
            Z3_model_inc_ref(c, m);
            let values = asts
                .iter()
                .map(|&x| {
                    // Overwritten by a successful evaluation.
                    let mut out: Z3_ast = x;
                    Z3_model_eval(c, m, x, true, &mut out).then(|| self.show(out))
                })
                .collect();
            Z3_model_dec_ref(c, m);
            Some(values)
        }
    }

    /// Which of the Boolean `probes` are false in the model of the last check (which
    /// must have answered `Sat`, with no call into the solver since): a probe false
    /// there is not entailed by what the solver was given. `false` where no model or
    /// no Boolean value could be read.
    pub fn false_in_model(&mut self, probes: &[Term]) -> Vec<bool> {
        let c = self.ctx;
        // SAFETY: the model is counted while read and released after; every AST is of
        // context `c`, and translating a probe does not touch the solver.
        unsafe {
            let Some(m) = Z3_solver_get_model(c, self.solver) else {
                return vec![false; probes.len()];
            };
            Z3_model_inc_ref(c, m);
            let out = probes
                .iter()
                .map(|p| {
                    let x = self.translate(p);
                    let mut v: Z3_ast = x;
                    Z3_model_eval(c, m, x, true, &mut v) && Z3_get_bool_value(c, v) == Z3_L_FALSE
                })
                .collect();
            Z3_model_dec_ref(c, m);
            out
        }
    }

    /// An AST in SMT-LIB.
    fn show(&self, a: Z3_ast) -> String {
        // SAFETY: the string is copied before the next call into Z3.
        unsafe {
            let s = Z3_ast_to_string(self.ctx, a);
            if s.is_null() {
                String::new()
            } else {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            }
        }
    }

    /// A value of a model as Z3 prints it (`5`, `(- 5)`, `true`, `Ref!val!1`), without
    /// the printer for integers and Booleans (set up anew at each call, it cost more
    /// than the rest of reading a model).
    fn show_value(&self, v: Z3_ast) -> String {
        let c = self.ctx;
        // SAFETY: `v` is an AST of this context; the numeral's string is copied before
        // the next call into Z3.
        unsafe {
            match Z3_get_bool_value(c, v) {
                Z3_L_TRUE => return "true".into(),
                Z3_L_FALSE => return "false".into(),
                _ => {}
            }
            let kind = Z3_get_sort(c, v).map(|s| Z3_get_sort_kind(c, s));
            if kind == Some(SortKind::Int) && Z3_is_numeral_ast(c, v) {
                let s = Z3_get_numeral_string(c, v);
                if !s.is_null() {
                    let n = CStr::from_ptr(s).to_string_lossy();
                    return match n.strip_prefix('-') {
                        Some(abs) => format!("(- {abs})"),
                        None => n.into_owned(),
                    };
                }
            }
            // An element of an uninterpreted sort's universe (`Ref!val!1`): its name.
            if kind == Some(SortKind::Uninterpreted)
                && let Some(a) = Z3_to_app(c, v).filter(|&a| Z3_get_app_num_args(c, a) == 0)
                && let Some(d) = Z3_get_app_decl(c, a)
                && let Some(name) = Z3_get_decl_name(c, d)
                && Z3_get_symbol_kind(c, name) == SymbolKind::String
            {
                let s = Z3_get_symbol_string(c, name);
                if !s.is_null() {
                    return CStr::from_ptr(s).to_string_lossy().into_owned();
                }
            }
        }
        self.show(v)
    }

    /// The solver's assertions in SMT-LIB (for `IDF_DUMP_SMT`).
    fn smtlib(&self) -> String {
        // SAFETY: as above.
        unsafe {
            let s = Z3_solver_to_string(self.ctx, self.solver);
            if s.is_null() {
                String::new()
            } else {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            }
        }
    }
}

/// The Snap datatype of context `c`: its sort and its variants, in the order of `UNIT`,
/// `COMBINE`, `wrap_variant`.
fn snap_datatype(
    c: Z3_context,
    int: Z3_sort,
    boolean: Z3_sort,
    ref_sort: Z3_sort,
) -> (Z3_sort, Vec<Variant>) {
    let arr = |e: Z3_sort| {
        // SAFETY: sorts of this context.
        ok(unsafe { Z3_mk_array_sort(c, int, e) }, "an array sort")
    };
    // (name, fields: (name, sort; `None` = Snap itself)).
    let spec: Vec<(&str, Fields<'_>)> = vec![
        ("unit", vec![]),
        ("combine", vec![("first", None), ("second", None)]),
        ("fromInt", vec![("toInt", Some(int))]),
        ("fromBool", vec![("toBool", Some(boolean))]),
        ("fromRef", vec![("toRef", Some(ref_sort))]),
        ("fromIntArr", vec![("toIntArr", Some(arr(int)))]),
        ("fromBoolArr", vec![("toBoolArr", Some(arr(boolean)))]),
        ("fromRefArr", vec![("toRefArr", Some(arr(ref_sort)))]),
    ];
    // SAFETY: the constructors are made, used to declare the datatype, queried and
    // deleted here; the arrays passed live across each call.
    unsafe {
        let mut constructors: Vec<Z3_constructor> = spec
            .iter()
            .map(|(name, fields)| {
                let names: Vec<Z3_symbol> = fields.iter().map(|(n, _)| symbol(c, n)).collect();
                let sorts: Vec<Option<Z3_sort>> = fields.iter().map(|(_, s)| *s).collect();
                let mut refs: Vec<u32> = vec![0; fields.len()];
                ok(
                    Z3_mk_constructor(
                        c,
                        symbol(c, name),
                        symbol(c, &format!("is-{name}")),
                        fields.len() as u32,
                        names.as_ptr(),
                        sorts.as_ptr(),
                        refs.as_mut_ptr(),
                    ),
                    "a constructor",
                )
            })
            .collect();
        let sort = ok(
            Z3_mk_datatype(
                c,
                symbol(c, "Snap"),
                constructors.len() as u32,
                constructors.as_mut_ptr(),
            ),
            "the Snap datatype",
        );
        let variants = constructors
            .iter()
            .zip(&spec)
            .map(|(k, (name, fields))| {
                let mut constructor = std::mem::MaybeUninit::uninit();
                let mut tester = std::mem::MaybeUninit::uninit();
                let mut accessors: Vec<std::mem::MaybeUninit<Z3_func_decl>> =
                    (0..fields.len()).map(|_| std::mem::MaybeUninit::uninit()).collect();
                Z3_query_constructor(
                    c,
                    *k,
                    fields.len() as u32,
                    constructor.as_mut_ptr(),
                    tester.as_mut_ptr(),
                    accessors.as_mut_ptr().cast(),
                );
                // Errors are not raised (`ignore_error`): a failed query would leave
                // the outputs unwritten.
                assert!(
                    Z3_get_error_code(c) == ErrorCode::Ok,
                    "Z3 rejected the Snap datatype's constructor {name}"
                );
                Variant {
                    constructor: constructor.assume_init(),
                    tester: tester.assume_init(),
                    accessors: accessors.into_iter().map(|a| a.assume_init()).collect(),
                }
            })
            .collect();
        for k in constructors {
            Z3_del_constructor(c, k);
        }
        (sort, variants)
    }
}

/// A Z3 symbol for `name`.
fn symbol(c: Z3_context, name: &str) -> Z3_symbol {
    let s = CString::new(name.replace('\0', "?")).unwrap_or_default();
    // SAFETY: Z3 copies the name.
    ok(unsafe { Z3_mk_string_symbol(c, s.as_ptr()) }, "a symbol")
}

/// `∀ bound {patterns}. body` (or `∃`), with the quantifier id `qid` when given.
fn mk_quantifier(
    c: Z3_context,
    forall: bool,
    qid: Option<Z3_symbol>,
    bound: &[Z3_app],
    patterns: &[Z3_pattern],
    body: Z3_ast,
) -> Option<Z3_ast> {
    let (nb, np) = (bound.len() as u32, patterns.len() as u32);
    // SAFETY: the arrays live across the calls; every AST is of context `c`.
    unsafe {
        match qid {
            Some(q) => Z3_mk_quantifier_const_ex(
                c,
                forall,
                0,
                q,
                q,
                nb,
                bound.as_ptr(),
                np,
                patterns.as_ptr(),
                0,
                std::ptr::null(),
                body,
            ),
            None if forall => {
                Z3_mk_forall_const(c, 0, nb, bound.as_ptr(), np, patterns.as_ptr(), body)
            }
            None => Z3_mk_exists_const(c, 0, nb, bound.as_ptr(), np, patterns.as_ptr(), body),
        }
    }
}

/// The limits of a question asked of a context made for it.
pub struct Limits {
    pub timeout_ms: Option<u32>,
    pub rlimit: Option<u32>,
    pub interrupt: Option<Interrupt>,
}

/// Values of `terms` in a model of `assumptions` plus `t`, found in a new Z3 context
/// made for this one question: the model depends only on these terms and their order,
/// never on what the member's solver saw before, so counterexamples are the same byte
/// for byte whatever ran before and whatever `--jobs` is. A context costs about a
/// millisecond once the process has made one: only failures with a counterexample pay it.
pub fn fresh_model_values(
    assumptions: &[Term],
    t: &Term,
    terms: &[Term],
    prefer: &[Term],
    limits: Limits,
) -> Option<Vec<Option<String>>> {
    let mut b = Backend::holding(assumptions, limits);
    // A model that also satisfies `prefer` when there is one.
    if !prefer.is_empty() {
        b.push();
        for p in prefer {
            b.assert(p);
        }
        if let Some(values) = b.model_values(t, terms) {
            return Some(values);
        }
        b.pop();
    }
    b.model_values(t, terms)
}

/// The resource limit of a query asked again to count quantifier instances when the
/// member's queries have none.
pub const PROFILE_RLIMIT: u32 = 5_000_000;

/// The instances of each named quantifier in a check of `assumptions`, in a new
/// context made for it (`Backend::traced`), most first.
pub fn fresh_instances(assumptions: &[Term], limits: Limits) -> Vec<(Rc<str>, u64)> {
    let mut b = Backend::traced(limits.interrupt.clone()).limited(assumptions, limits);
    b.check_with(&Term::tt());
    b.instances()
}

/// `IDF_DUMP_SMT=DIR` (a developer's switch): every query is written to `DIR` as an
/// SMT-LIB file, `q<N>.smt2` (the solver's assertions, the query, `check-sat`, and a
/// last comment line with the answer and the time the check took here).
fn dump_dir() -> Option<&'static std::path::Path> {
    static DIR: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| std::env::var_os("IDF_DUMP_SMT").map(std::path::PathBuf::from)).as_deref()
}

/// Write a query's file; its answer and time are appended after the check.
fn dump_query(dir: &std::path::Path, assertions: &str, query: &str) -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let text = format!("{assertions}\n(assert {query})\n(check-sat)\n");
    let path = dir.join(format!("q{n}.smt2"));
    if let Err(e) = std::fs::write(&path, text) {
        crate::say!("IDF_DUMP_SMT: {e}");
    }
    path
}

/// Java's truncating division, from Z3's Euclidean `div`:
/// `ite((a >= 0) = (b >= 0), |a| div |b|, -(|a| div |b|))`.
fn java_div(c: Z3_context, int: Z3_sort, a: Z3_ast, b: Z3_ast) -> Z3_ast {
    // SAFETY: integer ASTs of context `c`.
    unsafe {
        let zero = ok(Z3_mk_int64(c, 0, int), "0");
        let abs = |x: Z3_ast| {
            let ge = ok(Z3_mk_ge(c, x, zero), ">=");
            let neg = ok(Z3_mk_unary_minus(c, x), "-");
            ok(Z3_mk_ite(c, ge, x, neg), "ite")
        };
        let q = ok(Z3_mk_div(c, abs(a), abs(b)), "div");
        let same_sign =
            ok(Z3_mk_iff(c, ok(Z3_mk_ge(c, a, zero), ">="), ok(Z3_mk_ge(c, b, zero), ">=")), "iff");
        ok(Z3_mk_ite(c, same_sign, q, ok(Z3_mk_unary_minus(c, q), "-")), "ite")
    }
}

/// One model of a path condition, as `distinct_models` reads it: the values of the
/// terms asked for, then of the terms `more` asked for after seeing those.
pub type ModelRead = (Vec<Option<String>>, Vec<Option<String>>);

impl Backend {
    /// Up to `k` models of the assertions, each differing from the ones before in the
    /// value of some `Int` or `Bool` term read (a blocking clause over the inputs,
    /// asserted after each model). `more` names further terms to read once the first
    /// values are known (array elements, once a length is). Those terms are made known
    /// to the solver (as `t#k = t` for a new constant) before the model is read, so that
    /// E-matching instantiates the quantified facts about them: the model then
    /// satisfies what the path knows of each element read (a sorted array is sorted).
    fn distinct_models(
        &mut self,
        terms: &[Term],
        more: &dyn Fn(&[Option<String>]) -> Vec<Term>,
        k: usize,
        blocks: &mut Vec<Z3_ast>,
    ) -> Vec<ModelRead> {
        let mut out = vec![];
        let mut touched = crate::state::term::TermSet::default();
        'models: for _ in 0..k {
            if self.check_with(&Term::tt()) != Sat::Sat {
                break;
            }
            // Read, make the further terms known, check again, until they are all known.
            let mut rounds = 0;
            let (values, extra, block) = loop {
                let Some((values, _, block)) = self.read_model(terms, &[]) else { break 'models };
                let extra = more(&values);
                let new: Vec<Term> =
                    extra.iter().filter(|t| !touched.contains(*t)).cloned().collect();
                if new.is_empty() && rounds == 0 {
                    if extra.is_empty() {
                        break (values, vec![], block);
                    }
                    // The model just read: only the further terms are left to read.
                    let Some((_, extra_values, more_block)) = self.read_model(&[], &extra) else {
                        break 'models;
                    };
                    break (values, extra_values, [block, more_block].concat());
                }
                if new.is_empty() || rounds == 1 {
                    let Some((values, extra_values, block)) = self.read_model(terms, &extra) else {
                        break 'models;
                    };
                    break (values, extra_values, block);
                }
                rounds += 1;
                for t in new {
                    self.touch(&t, touched.len());
                    touched.insert(t);
                }
                if self.check_with(&Term::tt()) != Sat::Sat {
                    break 'models;
                }
            };
            out.push((values, extra));
            if block.is_empty() {
                break;
            }
            let c = self.ctx;
            // SAFETY: Boolean ASTs of this context.
            unsafe {
                let all = ok(Z3_mk_and(c, block.len() as u32, block.as_ptr()), "and");
                let not = ok(Z3_mk_not(c, all), "not");
                Z3_solver_assert(c, self.solver, not);
                blocks.push(not);
            }
        }
        out
    }

    /// Assert `t#n = t` for a new constant `t#n`: the term `t` is then known to the
    /// solver (E-matching instantiates quantifiers on it).
    fn touch(&mut self, t: &Term, n: usize) {
        let x = self.translate(t);
        let c = self.ctx;
        // SAFETY: ASTs and sorts of this context.
        unsafe {
            let sort = ok(Z3_get_sort(c, x), "a sort");
            let k = ok(Z3_mk_const(c, symbol(c, &format!("touch#{n}")), sort), "a constant");
            Z3_solver_assert(c, self.solver, ok(Z3_mk_eq(c, k, x), "="));
        }
    }

    /// The values of `xs` in model `m` (completed), `None` for one Z3 cannot evaluate.
    /// Many terms are evaluated in one call, as the fields of a tuple: each call of
    /// `Z3_model_eval` sets up an evaluator of its own (~10 µs), which, for the few
    /// dozen terms of each model read, cost more than the check that found the model.
    ///
    /// # Safety
    /// `m` is a model of this context, counted while this runs; `xs` are its ASTs.
    unsafe fn eval_all(&mut self, m: Z3_model, xs: &[Z3_ast]) -> Vec<Option<Z3_ast>> {
        let c = self.ctx;
        let one = |x: Z3_ast| {
            let mut v = x;
            // SAFETY: as the caller's.
            unsafe { Z3_model_eval(c, m, x, true, &mut v) }.then_some(v)
        };
        if xs.len() < 2 {
            return xs.iter().map(|&x| one(x)).collect();
        }
        // SAFETY: ASTs of this context; the tuple's constructor is made once per
        // signature and lives with the context.
        unsafe {
            let sorts: Option<Vec<Z3_sort>> = xs.iter().map(|&x| Z3_get_sort(c, x)).collect();
            let Some(sorts) = sorts else { return xs.iter().map(|&x| one(x)).collect() };
            let key: Vec<usize> = sorts.iter().map(|s| s.as_ptr() as usize).collect();
            let mk = match self.tuples.get(&key) {
                Some(&mk) => mk,
                None => {
                    let name = symbol(c, &format!("eval#{}", self.tuples.len()));
                    let fields: Vec<Z3_symbol> = (0..xs.len())
                        .map(|i| symbol(c, &format!("eval#{}#{i}", self.tuples.len())))
                        .collect();
                    let mut mk = std::mem::MaybeUninit::<Z3_func_decl>::uninit();
                    let mut proj: Vec<std::mem::MaybeUninit<Z3_func_decl>> =
                        (0..xs.len()).map(|_| std::mem::MaybeUninit::uninit()).collect();
                    let made = Z3_mk_tuple_sort(
                        c,
                        name,
                        xs.len() as u32,
                        fields.as_ptr(),
                        sorts.as_ptr(),
                        mk.as_mut_ptr(),
                        proj.as_mut_ptr().cast(),
                    );
                    if made.is_none() || Z3_get_error_code(c) != ErrorCode::Ok {
                        return xs.iter().map(|&x| one(x)).collect();
                    }
                    let mk = mk.assume_init();
                    self.tuples.insert(key, mk);
                    mk
                }
            };
            let Some(t) = Z3_mk_app(c, mk, xs.len() as u32, xs.as_ptr()) else {
                return xs.iter().map(|&x| one(x)).collect();
            };
            let mut v = t;
            let app = if Z3_model_eval(c, m, t, true, &mut v) && Z3_is_app(c, v) {
                Z3_to_app(c, v)
            } else {
                None
            };
            let fields = app.filter(|&a| {
                Z3_get_app_decl(c, a).is_some_and(|d| Z3_is_eq_func_decl(c, d, mk))
                    && Z3_get_app_num_args(c, a) as usize == xs.len()
            });
            match fields {
                Some(a) => (0..xs.len()).map(|i| Z3_get_app_arg(c, a, i as u32)).collect(),
                None => xs.iter().map(|&x| one(x)).collect(),
            }
        }
    }

    /// The values of `terms` and `extra` in the current model (after a `Sat` check),
    /// and the equations `t = value` of those of sort `Int` or `Bool` (to block it).
    #[allow(clippy::type_complexity)]
    fn read_model(
        &mut self,
        terms: &[Term],
        extra: &[Term],
    ) -> Option<(Vec<Option<String>>, Vec<Option<String>>, Vec<Z3_ast>)> {
        let asts: Vec<(Z3_ast, bool)> = terms
            .iter()
            .chain(extra)
            .map(|t| (self.translate(t), matches!(t.sort(), Sort::Int | Sort::Bool)))
            .collect();
        let c = self.ctx;
        // SAFETY: the model is counted while read and released after; each printed
        // string is copied before the next call into Z3; every AST is of context `c`.
        unsafe {
            let m = Z3_solver_get_model(c, self.solver)?;
            Z3_model_inc_ref(c, m);
            let xs: Vec<Z3_ast> = asts.iter().map(|&(x, _)| x).collect();
            let evaluated = self.eval_all(m, &xs);
            let mut block = vec![];
            let mut values = vec![];
            for (&(x, blockable), v) in asts.iter().zip(evaluated) {
                if let Some(v) = v {
                    if blockable {
                        block.push(ok(Z3_mk_eq(c, x, v), "="));
                    }
                    values.push(Some(self.show_value(v)));
                } else {
                    values.push(None);
                }
            }
            Z3_model_dec_ref(c, m);
            let extra_values = values.split_off(terms.len());
            Some((values, extra_values, block))
        }
    }
}

/// Up to `k` distinct models of `assumptions` (see `Backend::distinct_models`), in a
/// new Z3 context made for this question, as `fresh_model_values` does; models that
/// also satisfy the `tiers` (each a list of preferred facts, the most preferred
/// first): each tier but the last gives at most half of the `k` (rounded up), so
/// that the less constrained tiers still add variety; any models when no tier has one.
pub fn fresh_distinct_models(
    assumptions: &[Term],
    tiers: &[Vec<Term>],
    terms: &[Term],
    more: &dyn Fn(&[Option<String>]) -> Vec<Term>,
    k: usize,
    limits: Limits,
) -> Vec<ModelRead> {
    let mut b = Backend::holding(assumptions, limits);
    tiered_models(&mut b, tiers, terms, more, k)
}

/// As `fresh_distinct_models`, in `b` (a context made for a member's path ends, which
/// keeps what it translated from one path end to the next): `assumptions` are given in
/// a solver frame taken back after.
pub fn distinct_models_in(
    b: &mut Backend,
    assumptions: &[Term],
    tiers: &[Vec<Term>],
    terms: &[Term],
    more: &dyn Fn(&[Option<String>]) -> Vec<Term>,
    k: usize,
    limits: Limits,
) -> Vec<ModelRead> {
    match limits.timeout_ms {
        Some(ms) => b.set_timeout_ms(ms),
        None => b.clear_timeout(),
    }
    b.set_rlimit(limits.rlimit.unwrap_or(0));
    b.push();
    for a in assumptions {
        b.assert(a);
    }
    let out = tiered_models(b, tiers, terms, more, k);
    b.pop();
    out
}

/// Up to `k` distinct models of what `b` holds, tier by tier (see
/// `fresh_distinct_models`).
fn tiered_models(
    b: &mut Backend,
    tiers: &[Vec<Term>],
    terms: &[Term],
    more: &dyn Fn(&[Option<String>]) -> Vec<Term>,
    k: usize,
) -> Vec<ModelRead> {
    let tiers: Vec<&Vec<Term>> = tiers.iter().filter(|t| !t.is_empty()).collect();
    let mut out: Vec<ModelRead> = vec![];
    for (i, prefer) in tiers.iter().enumerate() {
        let quota = if i + 1 < tiers.len() { k.div_ceil(2) } else { k };
        let quota = quota.min(k - out.len());
        if quota == 0 {
            break;
        }
        b.push();
        for p in prefer.iter() {
            b.assert(p);
        }
        let mut found = vec![];
        for m in b.distinct_models(terms, more, quota, &mut found) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
        b.pop();
        // The models found stay excluded from the next tiers (the pop took back what
        // the tier's frame held).
        for x in found {
            // SAFETY: a Boolean AST of this context.
            unsafe { Z3_solver_assert(b.ctx, b.solver, x) };
        }
    }
    if out.is_empty() {
        out = b.distinct_models(terms, more, k, &mut vec![]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Terms read from one model at once (`eval_all`) have the values the model gives
    /// each of them: those of related terms agree, and each readable one is blocked.
    #[test]
    fn a_model_read_at_once_agrees_term_by_term() {
        let (x, y, b) =
            (Term::var("x", Sort::Int), Term::var("y", Sort::Int), Term::var("b", Sort::Bool));
        let r = Term::var("r", Sort::Ref);
        let mut z = Backend::new();
        z.assert(&Term::lt(Term::int(3), x.clone()));
        z.assert(&Term::eq(y.clone(), Term::add(x.clone(), Term::int(1))));
        z.assert(&b);
        z.assert(&Term::not(Term::eq(r.clone(), Term::null())));
        assert_eq!(z.check_with(&Term::tt()), Sat::Sat);
        let sum = Term::add(x.clone(), y.clone());
        let terms = [x.clone(), y.clone(), b.clone(), r.clone()];
        let (values, extra, block) = z.read_model(&terms, &[sum]).expect("a model");
        let int = |v: &Option<String>| v.as_deref().and_then(|s| s.parse::<i64>().ok());
        let (vx, vy) = (int(&values[0]).expect("x"), int(&values[1]).expect("y"));
        assert!(vx > 3 && vy == vx + 1, "{values:?}");
        assert_eq!(values[2].as_deref(), Some("true"));
        assert!(values[3].is_some());
        assert_eq!(int(&extra[0]), Some(vx + vy));
        // x, y, b and the sum are blocked; the reference is not (it is not Int or Bool).
        assert_eq!(block.len(), 4);
        // One term alone is read as well.
        let (one, _, _) = z.read_model(std::slice::from_ref(&y), &[]).expect("a model");
        assert_eq!(int(&one[0]), Some(vy));
    }
}
