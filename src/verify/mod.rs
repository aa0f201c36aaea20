//! Validity of each member (the paper's section 3.5 and 3.6): sets up a fresh
//! symbolic state, produces contracts, runs the rules, and collects errors.
//!
//! Architecture invariant: `verify_member` is the only entry point the driver uses;
//! it never prints and never panics on a well-typed program (infrastructure problems
//! come back as `Err(String)`, which the driver maps to exit 3).

pub mod member;
pub mod result;

pub use result::{Config, MemberResult, Stats, Status, TraceEntry, VerificationError};

use crate::rules::Verifier;
use crate::rules::info::Info;
use crate::syntax::ast::{MemberRef, Program};
use std::collections::HashSet;
use std::time::Instant;

/// Verify one member of a checked program. Fields are never passed here.
pub fn verify_member(
    program: &Program,
    member: MemberRef,
    config: &Config,
) -> Result<MemberResult, String> {
    let info = Info::new(program);
    verify_member_with(program, &info, member, config)
}

/// As `verify_member`, with the program's `Info` computed once by the caller.
pub fn verify_member_with(
    program: &Program,
    info: &Info,
    member: MemberRef,
    config: &Config,
) -> Result<MemberResult, String> {
    let start = Instant::now();
    let m = program
        .classes
        .get(member.class)
        .and_then(|c| c.members.get(member.member))
        .ok_or_else(|| "no such member".to_string())?;
    crate::state::term::reset_interner();
    let mut v = Verifier::new(program, info, config.clone());
    v.verify(member);
    let timed_out = v.timed_out;
    // Every path must have ended in the ledger: anything else is a bug in the rules,
    // never a verdict.
    if !v.ledger.balanced() {
        let name = info.member_names.get(&member).cloned().unwrap_or_default();
        return Err(format!(
            "internal error in {name}: a path ended outside the ledger ({:?})",
            v.ledger
        ));
    }
    let mut errors: Vec<VerificationError> = Vec::new();
    let mut seen = HashSet::new();
    for f in v.failures.drain(..) {
        if f.err.id == "internal.error" {
            return Err(f.err.message);
        }
        if seen.insert((f.err.id, f.err.span)) {
            errors.push(f.err);
        }
    }
    if timed_out && !errors.iter().any(|e| e.id == "verification.timeout") {
        errors.push(VerificationError {
            id: "verification.timeout",
            reason: "timeout",
            message: "the member's time budget ran out".into(),
            span: m.name.span,
            notes: vec![],
            trace: None,
            counterexample: None,
        });
    }
    for e in errors.iter_mut().filter(|e| e.id == "verification.timeout") {
        e.span = m.name.span;
    }
    errors.sort_by_key(|e| (e.span.start, e.id));
    let status = if errors.iter().any(|e| e.id == "verification.timeout") {
        Status::Timeout
    } else if errors.is_empty() {
        Status::Verified
    } else {
        Status::Failed
    };
    let time_ms = start.elapsed().as_secs_f64() * 1000.0;
    let stats = config.stats.then_some(Stats {
        paths: v.paths,
        queries: v.dec.counters.queries,
        pushes: v.dec.counters.pushes,
        branches: v.branches,
        pruned: v.pruned,
        ledger: v.ledger,
        chunks_max: v.chunks_max,
        z3_ms: v.dec.counters.z3_time.as_secs_f64() * 1000.0,
        total_ms: time_ms,
    });
    let name = info.member_names.get(&member).cloned().unwrap_or_default();
    Ok(MemberResult { member, name, kind: m.kind, status, errors, time_ms, stats })
}
