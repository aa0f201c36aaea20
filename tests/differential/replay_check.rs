//! Whether a member's failure is real: a counterexample of it replays concretely
//! (`idf_verify::replay`). `benches/differential_against.sh` replaces this file by a
//! stub for commits that have no replay.

use idf_verify::syntax::ast::{MemberRef, Program};
use idf_verify::verify::{Config, verify_member};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Does a counterexample of the member's failures replay concretely (the failure is
/// real, the random inputs only missed it)?
pub fn confirms(program: &Program, src: &str, member: MemberRef) -> bool {
    let config = Config { timeout: Some(5.0), counterexample: true, ..Config::default() };
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut res = verify_member(program, member, &config).ok()?;
        idf_verify::oracle::replay::replay_member(program, src, &mut res, None);
        Some(res.errors.iter().any(|e| e.replay.as_ref().is_some_and(|r| r.confirmed)))
    }));
    matches!(r, Ok(Some(true)))
}
