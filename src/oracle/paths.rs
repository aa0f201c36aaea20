//! `idf-verify test --paths` (the default): whitebox testing. The symbolic executor
//! runs a member (as verification does) and, at every path end (completed, failed,
//! or stopped by the time budget), the solver gives up to a few distinct models of
//! the path condition (`rules/paths.rs`); each becomes a concrete input state (as a replayed
//! counterexample does, `replay::inputs_with_elements`) and the interpreter runs it.
//! Random input states are used only where the solver gives none that reach a path:
//! when some path end has no model (or was not recorded), when the precondition
//! accepts no solved input, or when some path is not reached concretely by its inputs
//! (values the model does not give, such as those folded inside predicate instances;
//! a loop whose iterations the model does not fix). The random states are those of
//! `idf-verify test` without `--paths` (the same seeds), so such a member gets at least
//! what random testing finds.
//!
//! Coverage: a path's end is *reached concretely* when a run from an input solved
//! from that path ends the way the path ends: a failed path by a concrete failure
//! with the same id on the same line, a completed path by a run that passes, a path
//! stopped by the budget by any run the precondition accepts. (A run from a model
//! of a path's condition takes that path when the interpreter and the verifier agree
//! and the model fixes every value the path reads; the check makes coverage a fact
//! about runs, not about models.)
//!
//! Architecture invariant: beside `testing` and `replay`, below the pipeline; it uses
//! `verify::explore_paths` and the interpreter, and never prints.

use crate::interp::inputs::{complete, mutate, random_inputs};
use crate::interp::{Inputs, Limits, Outcome, line_of, run_member_repaired, run_member_with};
use crate::oracle::testing::{DIVERGING, Found, MemberReport, PathCounts, note_failure};
use crate::rules::info::Info;
use crate::syntax::ast::{MemberRef, Program};
use crate::verify::{Config, PathEndKind, explore_paths};

/// Random completions tried for a path whose model alone the precondition rejects
/// (values the model does not give, e.g. fields folded inside predicate instances).
const COMPLETIONS: u64 = 8;

/// Changes (`interp::repair`) tried on a solved input the precondition rejects.
const REPAIRS: usize = 64;

/// Mutants tried for a path that no solved input reached.
const MUTANTS: u64 = 24;

/// The interpreter's budgets for a run: a tenth of the default steps and a twentieth
/// of the default nesting. A run that needs more is counted out of steps (never a
/// verdict); a member that loops or recurses for ever on some inputs (a pure method
/// that calls itself) would otherwise spend most of the testing time there.
const LIMITS: Limits = Limits { steps: 100_000, depth: 1_000, max_array: 1_000_000 };

/// Explore paths as verification does, merging the states in which the branches of
/// an `if` end: a path end's condition then allows each combination of branches, and
/// its models choose among them (distinct models tend to choose differently).
/// Without merging, `n` `if`s in a row are `2^n` paths.
const MERGE: bool = true;

/// Test `member` on inputs solved from its paths' conditions; `runs` random inputs
/// (seeded by `seed`) where the solver gives none that reach a path. `Err` is an
/// internal error of the symbolic executor.
#[allow(clippy::too_many_arguments)]
pub fn test_member_paths(
    program: &Program,
    info: &Info,
    path: &str,
    text: &str,
    member: MemberRef,
    config: &Config,
    per_path: usize,
    runs: u64,
    seed: u64,
) -> Result<MemberReport, String> {
    let mut explored = explore_paths(program, info, member, config, per_path, MERGE)?;
    // As verification does for a failing member: the branches apart, so that each
    // failure ends a path of its own (a merged path ends at its first failure).
    if explored.merged && explored.ends.iter().any(|e| matches!(e.how, PathEndKind::Failed { .. }))
    {
        explored = explore_paths(program, info, member, config, per_path, false)?;
    }
    let mut report = MemberReport::default();
    let mut counts = PathCounts {
        paths: explored.ends.len() as u64 + explored.dropped,
        ..PathCounts::default()
    };
    let mut failures: Vec<Found> = vec![];
    let mut unsolved = explored.dropped > 0;
    // Runs out of steps in a row, and whether that stopped the member's runs.
    let streak = std::cell::Cell::new(0u32);
    let diverging = || streak.get() >= DIVERGING;
    for end in &explored.ends {
        // The inputs of this path the precondition accepted (for mutants, below).
        let mut kept: Vec<Inputs> = vec![];
        counts.solved += end.inputs.len() as u64;
        if end.inputs.is_empty() {
            unsolved = true;
        }
        let mut reached = false;
        // Run `inputs`: `None` when the precondition rejects them, else whether the run
        // ended the way the path ends.
        let run_on = |report: &mut MemberReport,
                      failures: &mut Vec<Found>,
                      inputs: &mut Inputs,
                      repair: bool|
         -> Option<bool> {
            report.runs += 1;
            let outcome = if repair {
                let (outcome, repaired) =
                    run_member_repaired(program, member, inputs, LIMITS, REPAIRS);
                *inputs = repaired;
                outcome
            } else {
                run_member_with(program, member, inputs, LIMITS)
            };
            let ended = match &outcome {
                Outcome::Rejected(_) => return None,
                Outcome::OutOfSteps => {
                    report.out_of_steps += 1;
                    streak.set(streak.get() + 1);
                    false
                }
                Outcome::Passed => {
                    matches!(end.how, PathEndKind::Completed | PathEndKind::OutOfBudget)
                }
                Outcome::Failed(f) => match end.how {
                    PathEndKind::Failed { id, span } => {
                        f.id == id
                            && f.member == member
                            && line_of(text, f.span) == line_of(text, span)
                    }
                    PathEndKind::OutOfBudget => true,
                    PathEndKind::Completed => false,
                },
            };
            report.accepted += 1;
            if !matches!(outcome, Outcome::OutOfSteps) {
                streak.set(0);
            }
            if let Outcome::Failed(f) = &outcome {
                note_failure(failures, program, path, text, member, f, inputs);
            }
            Some(ended)
        };
        for (k, input) in end.inputs.iter().enumerate() {
            if diverging() {
                break;
            }
            let (exact, fixed, sized) =
                crate::oracle::replay::inputs_with_elements(program, member, input);
            // The model's state first; when the precondition rejects it, random
            // completions of what the model leaves open.
            if std::env::var_os("IDF_DEBUG_PATHS").is_some() {
                crate::say!(
                    "path {:?}: {:?} -> {}",
                    end.how,
                    input,
                    crate::oracle::testing::show_inputs(program, member, &exact)
                );
            }
            let mut candidates = vec![exact.clone()];
            for c in 1..=COMPLETIONS {
                let mut inputs = exact.clone();
                let s = seed.wrapping_mul(0x9E37_79B9).wrapping_add(c + 31 * k as u64);
                complete(program, &mut inputs, &fixed, &sized, s);
                candidates.push(inputs);
            }
            for (c, mut inputs) in candidates.into_iter().enumerate() {
                // The model's own state is repaired where the precondition rejects it.
                let Some(ended) = run_on(&mut report, &mut failures, &mut inputs, c == 0) else {
                    continue;
                };
                reached |= ended;
                kept.push(inputs);
                // One accepted run per solved input: the completions are only for a
                // model the precondition rejects.
                break;
            }
        }
        // A path its inputs did not reach (the model fixed the entry state, but the
        // path also depends on what a callee's contract hides, or a loop's iterations):
        // mutants of those inputs, a few values changed each.
        let mut k = 0;
        while !reached && !kept.is_empty() && k < MUTANTS && !diverging() {
            let s = seed.wrapping_mul(0x9E37_79B9).wrapping_add(0x5EED + k);
            let mut inputs = mutate(&kept[k as usize % kept.len()], s);
            k += 1;
            if let Some(ended) = run_on(&mut report, &mut failures, &mut inputs, false) {
                reached |= ended;
            }
        }
        counts.reached += u64::from(reached);
    }
    if unsolved || report.accepted == 0 || counts.reached < counts.paths {
        counts.random = runs;
        for k in 0..runs {
            if diverging() {
                break;
            }
            let s = seed.wrapping_mul(0x9E37_79B9).wrapping_add(k);
            let inputs: Inputs = random_inputs(program, member, s);
            report.runs += 1;
            match run_member_with(program, member, &inputs, LIMITS) {
                Outcome::Rejected(_) => continue,
                Outcome::Passed => streak.set(0),
                Outcome::OutOfSteps => {
                    report.out_of_steps += 1;
                    streak.set(streak.get() + 1);
                }
                Outcome::Failed(f) => {
                    streak.set(0);
                    note_failure(&mut failures, program, path, text, member, &f, &inputs)
                }
            }
            report.accepted += 1;
        }
    }
    report.paths = Some(counts);
    report.failures = failures;
    report.diverged = diverging();
    Ok(report)
}
