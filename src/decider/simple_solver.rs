//! Z3's simple solver (`Z3_mk_simple_solver`): the incremental SMT kernel alone, without
//! the tactic front end of the z3 crate's `Solver::new` (`Z3_mk_solver`, a "combined"
//! solver). The decider always pushes a frame before its first assertion, so a combined
//! solver runs this same kernel anyway (its incremental mode); making one costs ~2.5 ms
//! more per member (a quarter of a small file's run), for a tactic it never applies.
//!
//! The z3 crate has no constructor for it, so this wraps the C API (z3-sys, the library
//! the crate links) with the crate's context: the only `unsafe` Z3 code of idf-verify.
//! With `decider::z3`, the only module that touches Z3.

use z3::ast::{Ast, Bool, Dynamic};
use z3::{Context, SatResult};
use z3_sys::*;

/// A simple solver in the thread's current Z3 context (see `z3::with_context`); every
/// call must run with that context current.
pub struct SimpleSolver {
    /// Keeps the context alive as long as the solver (the crate counts references).
    ctx: Context,
    raw: Z3_solver,
}

impl SimpleSolver {
    pub fn new() -> SimpleSolver {
        let ctx = Context::thread_local();
        let c = ctx.get_z3_context();
        // SAFETY: `c` is a live context (held by `ctx`); the new solver is counted as
        // long as this value lives (`Drop`).
        let raw = unsafe {
            let raw = Z3_mk_simple_solver(c).expect("Z3_mk_simple_solver");
            Z3_solver_inc_ref(c, raw);
            raw
        };
        SimpleSolver { ctx, raw }
    }

    fn c(&self) -> Z3_context {
        self.ctx.get_z3_context()
    }

    /// Set one parameter (`timeout`, `rlimit`: unsigned; `model`, `ctrl_c`: Boolean).
    pub fn set_param(&mut self, name: &str, value: Param) {
        let c = self.c();
        let key = std::ffi::CString::new(name).expect("a parameter name");
        // SAFETY: the params object is counted while in use and released after.
        unsafe {
            let p = Z3_mk_params(c).expect("Z3_mk_params");
            Z3_params_inc_ref(c, p);
            let k = Z3_mk_string_symbol(c, key.as_ptr()).expect("a symbol");
            match value {
                Param::U32(v) => Z3_params_set_uint(c, p, k, v),
                Param::Bool(v) => Z3_params_set_bool(c, p, k, v),
            }
            Z3_solver_set_params(c, self.raw, p);
            Z3_params_dec_ref(c, p);
        }
    }

    pub fn push(&mut self) {
        // SAFETY: a live solver of a live context.
        unsafe { Z3_solver_push(self.c(), self.raw) }
    }

    pub fn pop(&mut self, n: u32) {
        // SAFETY: as above; the decider pops only frames it pushed.
        unsafe { Z3_solver_pop(self.c(), self.raw, n) }
    }

    pub fn assert(&mut self, b: &Bool) {
        // SAFETY: `b` is an AST of this context (the crate keeps it counted).
        unsafe { Z3_solver_assert(self.c(), self.raw, b.get_z3_ast()) }
    }

    pub fn check_assumptions(&mut self, assumptions: &[Bool]) -> SatResult {
        let asts: Vec<Z3_ast> = assumptions.iter().map(|a| a.get_z3_ast()).collect();
        // SAFETY: the assumptions are ASTs of this context, alive for the call.
        let r = unsafe {
            Z3_solver_check_assumptions(self.c(), self.raw, asts.len() as u32, asts.as_ptr())
        };
        match r {
            Z3_L_TRUE => SatResult::Sat,
            Z3_L_FALSE => SatResult::Unsat,
            _ => SatResult::Unknown,
        }
    }

    /// After a `Sat` check: the values of `terms` in its model, printed by Z3
    /// (`None` for a term the model cannot evaluate).
    pub fn model_values(&mut self, terms: &[Dynamic]) -> Option<Vec<Option<String>>> {
        let c = self.c();
        // SAFETY: the model and each evaluated AST are counted while read and released
        // after; the printed string is copied before the next call into Z3.
        unsafe {
            let m = Z3_solver_get_model(c, self.raw)?;
            Z3_model_inc_ref(c, m);
            let values = terms
                .iter()
                .map(|t| {
                    // Overwritten by a successful evaluation.
                    let mut out: Z3_ast = t.get_z3_ast();
                    if !Z3_model_eval(c, m, t.get_z3_ast(), true, &mut out) {
                        return None;
                    }
                    Z3_inc_ref(c, out);
                    let s = Z3_ast_to_string(c, out);
                    let text = (!s.is_null())
                        .then(|| std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned());
                    Z3_dec_ref(c, out);
                    text
                })
                .collect();
            Z3_model_dec_ref(c, m);
            Some(values)
        }
    }

    /// The solver's assertions in SMT-LIB (for debugging).
    pub fn to_smtlib(&self) -> String {
        // SAFETY: the string is copied before the next call into Z3.
        unsafe {
            let s = Z3_solver_to_string(self.c(), self.raw);
            if s.is_null() {
                return String::new();
            }
            std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
        }
    }
}

impl Drop for SimpleSolver {
    fn drop(&mut self) {
        // SAFETY: releases the reference taken in `new`; the context outlives this call
        // (`ctx` is dropped after).
        unsafe { Z3_solver_dec_ref(self.c(), self.raw) }
    }
}

/// A solver parameter's value.
#[derive(Clone, Copy, Debug)]
pub enum Param {
    U32(u32),
    Bool(bool),
}
