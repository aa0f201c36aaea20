//! Whitebox testing (`idf-verify test --paths`): inputs solved from the symbolic
//! executor's path conditions find failures behind preconditions that random input
//! states almost never satisfy; `--save` writes a failure as a regression test that
//! fails before the fix and verifies after it.

use idf_verify::oracle::testing::{MemberReport, PathCounts, TestOptions, test_member_random};
use idf_verify::source::{front_end, select_members};
use std::path::{Path, PathBuf};
use std::process::Command;

fn program_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/whitebox")
}

/// What a test of one member found (the part that crosses threads).
#[derive(Debug)]
struct Found {
    /// Each distinct failure: id, line, the inputs shown.
    failures: Vec<(&'static str, usize, String)>,
    runs: u64,
    accepted: u64,
    diverged: bool,
    paths: Option<PathCounts>,
}

impl From<MemberReport> for Found {
    fn from(r: MemberReport) -> Found {
        Found {
            failures: r.failures.iter().map(|f| (f.id, f.line, f.shown.clone())).collect(),
            runs: r.runs,
            accepted: r.accepted,
            diverged: r.diverged,
            paths: r.paths,
        }
    }
}

/// The one member of `file`: tested at random (seed 7, 300 runs) and with `--paths`.
fn both(file: &str) -> (Found, Found) {
    both_of(file, None)
}

/// As `both`, for member `name` (`Class.member`) of `file`.
fn both_of(file: &str, name: Option<&str>) -> (Found, Found) {
    let path = program_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let names: Vec<String> = name.into_iter().map(String::from).collect();
    idf_verify::guard::with_big_stack(move || {
        let program = front_end(&text).expect("the test program checks");
        let (member, _) = select_members(&program, &names).into_iter().next().expect("a member");
        let opts = TestOptions { runs: 300, seed: 7, ..TestOptions::default() };
        let random = test_member_random(&program, file, &text, member, &opts);
        let info = idf_verify::rules::info::Info::new(&program);
        let config = idf_verify::verify::Config::default();
        let solved = idf_verify::oracle::paths::test_member_paths(
            &program, &info, file, &text, member, &config, 3, 300, 7,
        )
        .expect("no internal error");
        (Found::from(random), Found::from(solved))
    })
}

fn ids(r: &Found) -> Vec<(&'static str, usize)> {
    r.failures.iter().map(|f| (f.0, f.1)).collect()
}

#[test]
fn an_equality_precondition_is_solved_not_guessed() {
    let (random, solved) = both("equality.jv");
    assert!(random.failures.is_empty(), "{:?}", ids(&random));
    assert_eq!(ids(&solved), vec![("postcondition.violated", 6)]);
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached), (2, 2), "{p:?}");
    // The failing path has one input (`y == 7` fixes `x`); the other has three.
    assert_eq!(p.solved, 4, "{p:?}");
    assert_eq!(p.random, 0, "no random inputs where the solver gives some");
    assert!(solved.failures[0].2.contains("y = 7"), "{}", solved.failures[0].2);
}

#[test]
fn a_sorted_array_is_solved_element_by_element() {
    let (random, solved) = both("sorted.jv");
    assert_eq!(random.accepted, 0, "random arrays are shorter than 6");
    assert!(random.failures.is_empty());
    assert_eq!(ids(&solved), vec![("postcondition.violated", 8)]);
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached), (2, 2), "{p:?}");
    // Every solved input satisfies the precondition (the quantifier's instances for
    // the elements read are known to the solver before the model is read).
    assert_eq!(solved.accepted, solved.runs, "{solved:?}");
}

/// A path the verifier fails on but no input reaches (a false alarm of an incomplete
/// quantifier instantiation) gets no input: its condition with the failed check
/// negated has no model once the elements are known.
#[test]
fn a_false_alarm_path_gets_no_input() {
    let (_, solved) = both("chain.jv");
    assert_eq!(ids(&solved), vec![("postcondition.violated", 10)]);
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached, p.solved), (2, 1, 3), "{p:?}");
}

#[test]
fn a_list_of_seven_is_solved() {
    let (random, solved) = both("seven.jv");
    assert_eq!(random.accepted, 0);
    assert_eq!(ids(&solved), vec![("assert.failed", 9)]);
    assert!(solved.failures[0].2.contains("42}"), "{}", solved.failures[0].2);
    // A failed `assert` ends its path: one path, reached.
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached), (1, 1), "{p:?}");
}

#[test]
fn an_object_input_is_solved_field_by_field() {
    let (random, solved) = both("account.jv");
    assert!(random.failures.is_empty(), "{:?}", ids(&random));
    assert_eq!(ids(&solved), vec![("postcondition.violated", 9)]);
    assert!(solved.failures[0].2.contains("limit: 9"), "{}", solved.failures[0].2);
}

/// The fields are folded inside a predicate instance the member never opens: they are
/// read from the instance's snapshot as producing its body would split it.
#[test]
fn values_folded_in_an_unopened_instance_are_solved() {
    let (random, solved) = both_of("folded.jv", Some("Pair.check"));
    assert_eq!(random.accepted, 0, "random pairs do not satisfy both equations");
    assert_eq!(ids(&solved), vec![("assert.failed", 17)]);
    assert!(solved.failures[0].2.contains("a: 130, b: 70"), "{}", solved.failures[0].2);
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached, p.random), (1, 1, 0), "{p:?}");
}

/// A sequence parameter tied to an array inside an opened predicate body: both are
/// solved (the sequence element by element), and they agree.
#[test]
fn a_sequence_parameter_and_an_opened_body_are_solved() {
    let (random, solved) = both_of("stack.jv", Some("Stack.pop"));
    assert_eq!(random.accepted, 0);
    assert_eq!(ids(&solved), vec![("postcondition.violated", 17)]);
    let shown = &solved.failures[0].2;
    assert!(shown.contains("vs = seq("), "{shown}");
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached, p.random), (1, 1, 0), "{p:?}");
    assert_eq!(solved.accepted, solved.runs, "{solved:?}");
}

/// A path from a loop invariant's state (its array values fresh) gets inputs whose
/// entry state is that loop state: the array has the key twice.
#[test]
fn a_path_from_a_loop_head_is_solved_in_terms_of_the_entry_state() {
    let (random, solved) = both("last.jv");
    assert_eq!(random.accepted, 0, "random arrays are shorter than 6");
    assert_eq!(ids(&solved), vec![("postcondition.violated", 9)]);
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached, p.random), (2, 2, 0), "{p:?}");
}

/// A solved input whose field (folded in an instance the member never opens) the
/// precondition rejects is repaired: the field set so that the body's fact holds.
#[test]
fn a_rejected_solved_input_is_repaired_at_the_false_fact() {
    let (random, solved) = both_of("held.jv", Some("Held.wrongArg"));
    assert!(random.failures.is_empty(), "{:?}", ids(&random));
    assert_eq!(ids(&solved), vec![("open.failed", 13)]);
    assert!(solved.failures[0].2.contains("x: 100"), "{}", solved.failures[0].2);
    assert_eq!(solved.accepted, solved.runs, "every solved input accepted once repaired");
    let p = solved.paths.clone().unwrap();
    assert_eq!(p.random, 0, "{p:?}");
}

/// The failure depends on a value the callee's contract hides: the solved inputs
/// satisfy the path condition, and their mutants reach the failure.
#[test]
fn a_failure_behind_a_callee_contract_is_reached_by_mutants() {
    let (random, solved) = both_of("hidden.jv", Some("Hidden.caller"));
    assert_eq!(random.accepted, 0, "random arrays are shorter than 5");
    assert_eq!(ids(&solved), vec![("postcondition.violated", 15)]);
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached, p.random), (1, 1, 0), "{p:?}");
}

/// Closing a predicate over a cycle fails concretely (the inner close finds the
/// permissions taken) rather than running out of steps.
#[test]
fn a_cyclic_list_fails_to_close_concretely() {
    let (_, solved) = both_of("cycle.jv", Some("Node.cyclic"));
    assert_eq!(ids(&solved), vec![("call.precondition", 18)]);
}

#[test]
fn a_correct_member_has_every_path_reached_and_no_failure() {
    let (_, solved) = both("fine.jv");
    assert!(solved.failures.is_empty());
    let p = solved.paths.clone().unwrap();
    assert_eq!((p.paths, p.reached), (2, 2), "{p:?}");
}

#[test]
fn a_member_that_never_terminates_gets_no_further_runs_after_a_streak_out_of_steps() {
    let limit = u64::from(idf_verify::oracle::testing::DIVERGING);
    let (random, solved) = both_of("spin.jv", Some("Spin.spin"));
    for r in [&random, &solved] {
        assert!(r.diverged, "{r:?}");
        assert!(r.failures.is_empty(), "{r:?}");
        assert_eq!(r.accepted, limit, "{r:?}");
    }
    // Ending on all inputs but one: every run asked for is made.
    let (random, _) = both_of("spin.jv", Some("Spin.almost"));
    assert!(!random.diverged, "{random:?}");
    assert_eq!(random.runs, 300, "{random:?}");
}

#[test]
fn solved_arrays_are_short_where_the_path_allows() {
    let (_, solved) = both("short.jv");
    assert_eq!(ids(&solved), vec![("assert.failed", 7)]);
    let shown = &solved.failures[0].2;
    // `o0 = int[] {.., 42}`: at most 8 elements, all shown.
    let elems = shown.split('{').nth(1).and_then(|x| x.split('}').next()).expect(shown);
    let n = elems.split(',').count();
    assert!((3..=8).contains(&n) && elems.trim_end().ends_with("42"), "{shown}");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_idf-verify"))
}

fn status(c: &mut Command) -> (i32, String) {
    let out = c.output().expect("run idf-verify");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// Save the failure of `file`, check the saved test before the fix (`--expect` holds,
/// plain verification fails, `main` fails concretely), apply the fix (`bug` replaced
/// by `fix`, the expectation that named the bug deleted), check it after.
fn saved_round_trip(file: &str, class: &str, bug: &str, fix: &str) {
    saved_round_trip_by(&["test", "--paths"], "saved", file, class, bug, fix)
}

/// As `saved_round_trip`, the test saved by `idf-verify ARGS --save DIR FILE`, whose
/// output names it after `said`.
fn saved_round_trip_by(args: &[&str], said: &str, file: &str, class: &str, bug: &str, fix: &str) {
    // One folder per way of saving: two tests may save the same class at once.
    let how = args.join("").replace('-', "");
    let dir =
        std::env::temp_dir().join(format!("idf-whitebox-{}-{how}-{class}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, text) =
        status(bin().args(args).arg("--save").arg(&dir).arg(program_dir().join(file)));
    assert_eq!(code, 1, "{text}");
    let saved = dir.join(format!("{class}.jv"));
    assert!(text.contains(&format!("{said} {}", saved.display())), "{text}");
    let main = format!("{class}.main");
    // Before the fix.
    let (code, text) = status(bin().args(["--no-cache", "--expect"]).arg(&saved));
    assert_eq!(code, 0, "{text}");
    let (code, text) = status(bin().args(["--no-cache"]).arg(&saved));
    assert_eq!(code, 1, "{text}");
    let (code, text) = status(bin().args(["test", "--runs", "1", "--method", &main]).arg(&saved));
    assert_eq!(code, 1, "{text}");
    // The fix.
    let before = std::fs::read_to_string(&saved).unwrap();
    assert!(before.contains(bug), "{before}");
    let fixed: String = before
        .replace(bug, fix)
        .lines()
        .filter(|l| !l.trim_start().starts_with("// expect:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&saved, fixed).unwrap();
    let (code, text) = status(bin().args(["--no-cache"]).arg(&saved));
    assert_eq!(code, 0, "{text}");
    let (code, text) = status(bin().args(["test", "--runs", "1", "--method", &main]).arg(&saved));
    assert_eq!(code, 0, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_saved_test_of_static_inputs_fails_before_the_fix_and_verifies_after() {
    saved_round_trip("equality.jv", "Regression_Eq_f_0", "return 0 - 1;", "return 1;");
}

#[test]
fn a_saved_test_of_an_object_fails_before_the_fix_and_verifies_after() {
    saved_round_trip(
        "account.jv",
        "Regression_Account_withdraw_0",
        "balance = balance - 1000;",
        "balance = balance - 0;",
    );
}

#[test]
fn a_saved_test_of_an_array_fails_before_the_fix_and_verifies_after() {
    saved_round_trip(
        "seven.jv",
        "Regression_Seven_last_0",
        "assert k != 42;",
        "assert k == xs[6];",
    );
}

#[test]
fn a_saved_test_of_a_sequence_and_a_folded_array_fails_before_the_fix_and_verifies_after() {
    saved_round_trip(
        "stack.jv",
        "Regression_Stack_pop_0",
        "int r = items[0];",
        "int r = items[size];",
    );
}

/// A receiver of a class with a constructor: built with `new Counter(0)`, its fields
/// then given the run's values (through the `valid()` the constructor returns).
#[test]
fn a_saved_test_of_a_class_with_a_constructor_fails_before_the_fix_and_verifies_after() {
    saved_round_trip("counter.jv", "Regression_Counter_inc_0", "n = n + 2;", "n = n + 1;");
}

/// `verify --counterexample --save DIR`: a failure the replay of its counterexample
/// confirms is saved the same way.
#[test]
fn a_test_saved_from_a_confirmed_counterexample_fails_before_the_fix_and_verifies_after() {
    saved_round_trip_by(
        &["--no-fixes", "--counterexample"],
        "regression test saved:",
        "equality.jv",
        "Regression_Eq_f_0",
        "return 0 - 1;",
        "return 1;",
    );
}

/// `--format json`: per member its paths, and the coverage in the summary.
#[test]
fn json_reports_paths_and_coverage() {
    let out = bin()
        .args(["test", "--paths", "--format", "json"])
        .arg(program_dir().join("equality.jv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["version"], 1);
    let m = &doc["members"][0];
    assert_eq!(m["name"], "Eq.f");
    assert_eq!(m["status"], "failed");
    assert_eq!(m["paths"]["paths"], 2);
    assert_eq!(m["paths"]["reached"], 2);
    assert_eq!(m["failures"][0]["id"], "postcondition.violated");
    assert_eq!(m["failures"][0]["line"], 6);
    assert_eq!(doc["summary"]["paths"], 2);
    assert_eq!(doc["summary"]["reached"], 2);
    assert_eq!(doc["summary"]["failures"], 1);
}
