//! Fuzz target: verification of small inputs. Inputs of at most `MAX_LEN` bytes that pass
//! the front end have every member (at most `MAX_MEMBERS`) verified with a 1 s solver
//! budget per member (`Config { timeout: Some(1.0), .. }`), on a thread with the CLI's
//! stack size. Verdicts do not matter; a panic, or an internal error (`Err`, what the
//! CLI reports as exit 3), is a bug, and so is a run that libFuzzer's `-timeout` kills
//! (every solver query has a budget, so nothing else should take long).
#![no_main]

use idf_verify::driver::{front_end, next_program_key, select_members, with_big_stack};
use idf_verify::verify::{Config, verify_member_keyed};
use libfuzzer_sys::fuzz_target;

/// Larger inputs are skipped (they mostly exercise the solver's budget, not the verifier).
const MAX_LEN: usize = 2000;
/// Members verified per input, at most.
const MAX_MEMBERS: usize = 8;

fuzz_target!(|data: &[u8]| {
    if data.len() > MAX_LEN {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    with_big_stack(|| {
        let Ok(program) = front_end(text) else { return };
        let config = Config { timeout: Some(1.0), ..Config::default() };
        let key = next_program_key();
        for (member, name) in select_members(&program, &[]).into_iter().take(MAX_MEMBERS) {
            if let Err(e) = verify_member_keyed(&program, key, member, &config) {
                panic!("internal error verifying {name}: {e}");
            }
        }
    });
});
