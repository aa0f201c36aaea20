//! Snapshot tests of what a user sees when a proof fails (`--trace`,
//! `--counterexample`): the rendered diagnostic of each failing member of
//! `tests/debugging/failures.jv`, one failure id per member. Bless changes with
//! `INSTA_UPDATE=always cargo test --test debugging` after reading the diff.

#[path = "common/diagnostics.rs"]
#[macro_use]
mod diagnostics;

use idf_verify::verify::Config;

const SOURCE: &str = include_str!("debugging/failures.jv");

/// The rendered errors of member `name` of class `Cell`, verified with trace and
/// counterexample.
fn rendered(name: &str) -> String {
    let config = Config { trace: true, counterexample: true, ..Config::default() };
    diagnostics::rendered("failures.jv", SOURCE, &format!("Cell.{name}"), &config)
}

/// The trace shows the solver's state on purpose: nothing to check beyond the id.
fn any(_: &str) {}

snapshot!(any; postcondition_violated, "setWrong", "postcondition.violated");
snapshot!(any; assert_failed, "assertFails", "assert.failed");
snapshot!(any; insufficient_permission, "noPermission", "insufficient.permission");
snapshot!(any; call_precondition, "callWithoutPermission", "call.precondition");
snapshot!(any; division_by_zero, "divide", "division.by.zero");
snapshot!(any; index_out_of_bounds, "outOfBounds", "index.out.of.bounds");
snapshot!(any; invariant_not_preserved, "loop", "invariant.not.preserved");
snapshot!(any; join_failed, "joined", "join.failed");

#[test]
fn the_failing_postcondition_shows_the_heap_chunk_and_the_path_condition() {
    let text = rendered("setWrong");
    assert!(text.contains("this.x ↦ v + 1"), "{text}");
    assert!(text.contains("path condition +"), "{text}");
}

#[test]
fn the_counterexample_names_fields_in_source_terms() {
    let text = rendered("assertFails");
    assert!(text.contains("c.x = 4"), "{text}");
}

#[test]
fn the_counterexample_shows_sequences_by_their_elements() {
    let text = rendered("sequences");
    assert!(text.contains("s = seq(5, "), "{text}");
    assert!(text.contains("t = seq(5, "), "{text}");
    assert!(!text.contains("!val!"), "{text}");
}
