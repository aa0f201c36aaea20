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

/// What `idf-verify --counterexample --method MEMBER tests/debugging/FILE` prints (its
/// failures replayed, as the command line does).
fn counterexample_of(file: &str, member: &str) -> String {
    let path = format!("{}/tests/debugging/{file}", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_idf-verify"))
        .args(["--no-cache", "--no-fixes", "--counterexample", "--method", member])
        .arg(path)
        .output()
        .expect("runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_sequence_in_a_counterexample_is_short_and_replayed() {
    // Nothing in the path bounds `s`: the solver's first model may make it thousands of
    // elements long and give none of them.
    let text = counterexample_of("failures.jv", "Cell.prepend");
    assert!(text.contains("error[postcondition.violated]"), "{text}");
    assert!(text.contains("    s = seq("), "{text}");
    // The run starts from that sequence (not from an empty one) and fails too.
    assert!(text.contains("confirmed by execution from s = seq("), "{text}");
}

#[test]
fn replaying_a_long_array_stops_within_its_budget_and_shows_a_short_input() {
    let text = counterexample_of("long_replay.jv", "Scan.firstIsPositive");
    assert!(text.contains("error[assert.failed]"), "{text}");
    assert!(text.contains("by execution from"), "{text}");
    // An array of thousands of elements is shown by its first ones and its length.
    assert!(text.contains("(length "), "{text}");
    assert!(text.lines().all(|l| l.len() < 2_000), "{text}");
}
