//! What a user sees for each kind of mistake, in the language's terms: snapshot tests
//! of the rendered diagnostic of each failing member of `tests/messages/mistakes.jv`
//! (with the suggested fix, when one is verified to work), a check that no message
//! shows solver vocabulary, and tests that each kind of fix is offered when it works
//! and only then. Bless changes with `INSTA_UPDATE=always cargo test --test messages`
//! after reading the diff.

#[path = "common/diagnostics.rs"]
#[macro_use]
mod diagnostics;

use diagnostics::verified;
use idf_verify::pipeline::fix;
use idf_verify::source::front_end;
use idf_verify::verify::Config;

const SOURCE: &str = include_str!("messages/mistakes.jv");

/// The rendered errors of member `name` of the mistakes file.
fn rendered_with(name: &str, config: &Config) -> String {
    diagnostics::rendered("mistakes.jv", SOURCE, name, config)
}

fn rendered(name: &str) -> String {
    rendered_with(name, &Config { fixes: true, ..Config::default() })
}

/// Words and shapes of the solver's state that no message may show.
const SOLVER_WORDS: &[&str] = &[
    "chunk",
    "↦",
    "@",
    "toInt",
    "toRef",
    "unit",
    "snapshot",
    "first(",
    "second(",
    "path condition",
    "!val!",
    "Seq(",
    "Int)",
    "i#",
    "≤",
    "∧",
];

fn assert_plain(text: &str) {
    for w in SOLVER_WORDS {
        assert!(!text.contains(w), "`{w}` in:\n{text}");
    }
}

snapshot!(assert_plain; pure_method_without_permission, "Account.get", "not.wellformed");
snapshot!(assert_plain; missing_acc_in_the_precondition, "Account.missingAcc", "insufficient.permission");
snapshot!(assert_plain; wrong_postcondition, "Account.wrongPost", "postcondition.violated");
snapshot!(assert_plain; postcondition_names_the_return, "Account.twoReturns", "postcondition.violated");
snapshot!(assert_plain; predicate_not_closed, "Account.notClosed", "postcondition.violated");
snapshot!(assert_plain; close_fails, "Account.closeFails", "close.failed");
snapshot!(assert_plain; open_without_instance, "Account.openMissing", "open.failed");
snapshot!(assert_plain; null_receiver, "Account.nullReceiver", "receiver.null");
snapshot!(assert_plain; call_without_permission, "Account.callWithout", "call.precondition");
snapshot!(assert_plain; assert_after_a_call, "Account.afterCall", "assert.failed");
snapshot!(assert_plain; invariant_not_preserved, "Account.loop", "invariant.not.preserved");
snapshot!(assert_plain; invariant_not_established, "Account.noEntry", "invariant.not.established");
snapshot!(assert_plain; loop_without_bound, "Account.count", "postcondition.violated");
snapshot!(assert_plain; pure_calls_by_name, "Account.pureAdd", "postcondition.violated");
snapshot!(assert_plain; half_permission_write, "Account.halfWrite", "insufficient.permission");
snapshot!(assert_plain; division_by_zero, "Account.divide", "division.by.zero");
snapshot!(assert_plain; index_out_of_bounds, "Account.outOfBounds", "index.out.of.bounds");
snapshot!(assert_plain; join_failed, "Account.joined", "join.failed");
snapshot!(assert_plain; unframed_contract, "Account.badContract", "not.wellformed");
snapshot!(assert_plain; permission_given_back, "Keeper.bump", "insufficient.permission");
snapshot!(assert_plain; loop_without_permission, "Loops.sum", "insufficient.permission");
snapshot!(assert_plain; loop_locals_by_name, "Loops.steps", "postcondition.violated");
snapshot!(assert_plain; index_is_a_parameter, "Loops.at", "index.out.of.bounds");
snapshot!(assert_plain; sequence_assert, "Loops.pushed", "assert.failed");
snapshot!(assert_plain; local_in_step_with_the_counter, "Loops.inStep", "postcondition.violated");
snapshot!(assert_plain; segment_not_held, "Segments.lower", "call.precondition");

#[test]
fn values_are_shown_in_terms_of_the_inputs() {
    assert!(rendered("Account.wrongPost").contains("`old(this.n) + 1 == old(this.n) + 2`"));
    assert!(rendered("Account.pureAdd").contains("`this.get() == this.get() + k`"));
    assert!(rendered("Account.twoReturns").contains("this `return` reaches the postcondition"));
    assert!(
        rendered("Account.wrongPost").contains("the end of the body reaches the postcondition")
    );
}

#[test]
fn a_loops_locals_are_named_and_comparisons_read_the_way_they_are_written() {
    let text = rendered("Loops.steps");
    assert!(text.contains("on this path it reads `k + i > n`"), "{text}");
    let text = rendered("Loops.inStep");
    assert!(text.contains("on this path it reads `j == n`"), "{text}");
    // Why `j` is unknown after the loop: no invariant mentions it.
    assert!(text.contains("`j` is changed by a loop whose invariants do not mention it"), "{text}");
    assert!(!text.contains("`i` is changed"), "{text}");
    // `y == 3` read as `3 == y` says nothing more: no reading is shown.
    assert!(!rendered("Account.halfWrite").contains("it reads"));
}

#[test]
fn a_sequence_in_a_counterexample_is_shown_by_its_elements() {
    let config = Config { counterexample: true, ..Config::default() };
    let text = rendered_with("Loops.pushed", &config);
    assert!(text.contains("s = seq(1, 2, 3)"), "{text}");
    assert_plain(&text);
}

#[test]
fn a_write_with_a_fraction_says_it_needs_write() {
    let text = rendered("Account.halfWrite");
    assert!(text.contains("less than `write`, the full permission a write needs"), "{text}");
}

#[test]
fn a_null_receiver_has_a_model_where_it_is_null() {
    let config = Config { counterexample: true, ..Config::default() };
    let text = rendered_with("Account.nullReceiver", &config);
    assert!(text.contains("x = null"), "{text}");
}

#[test]
fn an_unclosable_predicate_names_its_body_conjunct() {
    let text = rendered("Account.notClosed");
    assert!(text.contains("predicate body conjunct `this.n >= 0`"), "{text}");
    assert!(!text.contains("postcondition `this.n >= 0`"), "{text}");
}

/// The fix offered for the first error of `name` (under `config`), and the text it
/// gives.
fn fixed(text: &str, name: &str, config: &Config) -> Option<(String, String)> {
    let r = verified(text, name, config);
    let f = r.errors.first()?.fix.clone()?;
    let edited = fix::apply(text, &f.edits).expect("edits apply");
    Some((f.message, edited))
}

fn with_fixes() -> Config {
    Config { fixes: true, ..Config::default() }
}

/// `name` of `text` verifies with `config`, and without a vacuity warning.
fn verifies(text: &str, name: &str, config: &Config) -> bool {
    let r = verified(text, name, &Config { smoke: true, fixes: false, ..config.clone() });
    r.errors.is_empty() && r.warnings.is_empty()
}

#[test]
fn each_fix_kind_is_offered_when_it_works_and_the_fixed_member_verifies() {
    let cases = [
        ("Account.missingAcc", "add `requires acc(this.n);` to the precondition"),
        ("Account.get", "add `requires acc(this.balance);` to the precondition"),
        ("Account.callWithout", "add `requires acc(b.n);` to the precondition"),
        ("Account.nullReceiver", "add `requires x != null;` to the precondition"),
        ("Account.count", "add `invariant i <= n;` to the loop"),
        ("Account.divide", "add `requires b != 0;` to the precondition"),
        ("Loops.sum", "add `invariant acc(this.total);` to the loop"),
        ("Loops.at", "add `requires 0 <= i && i < a.length;` to the precondition"),
        ("Loops.inStep", "add `invariant j == i;` to the loop"),
        (
            "Keeper.bump",
            "add `requires acc(this.b);` to the precondition and `ensures acc(this.b);` to the postcondition",
        ),
    ];
    for (name, message) in cases {
        let (m, edited) = fixed(SOURCE, name, &with_fixes()).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(m, message, "{name}");
        assert!(verifies(&edited, name, &Config::default()), "{name}:\n{edited}");
    }
}

#[test]
fn open_and_close_are_offered_when_inference_is_off() {
    let config = Config { infer: false, fixes: true, ..Config::default() };
    let (m, edited) = fixed(SOURCE, "Ghost.set", &config).expect("a close");
    assert_eq!(m, "add `close valid();` before the method ends");
    assert!(edited.contains("    x = v;\n    close valid();\n  }"), "{edited}");
    assert!(verifies(&edited, "Ghost.set", &config));
    let (m, edited) = fixed(SOURCE, "Ghost.get", &config).expect("an open");
    assert_eq!(m, "add `open valid();` before this statement");
    assert!(verifies(&edited, "Ghost.get", &config));
    // With inference on, the same members verify: nothing to fix.
    assert!(verifies(SOURCE, "Ghost.set", &Config::default()));
}

#[test]
fn a_fix_that_does_not_work_is_never_offered() {
    // `acc(this.n)` on top of `acc(this.n, 1/2)` makes the precondition false.
    let r = verified(SOURCE, "Account.halfWrite", &with_fixes());
    assert!(r.errors.iter().all(|e| e.fix.is_none()), "{:?}", r.errors);
    // `requires x != null` removes the null receiver but the call then lacks `acc(x.a)`.
    let r = verified(SOURCE, "Keeper.bothNull", &with_fixes());
    assert!(r.errors.iter().all(|e| e.fix.is_none()), "{:?}", r.errors);
    // No mechanical fix for a wrong postcondition.
    let r = verified(SOURCE, "Account.wrongPost", &with_fixes());
    assert!(r.errors.iter().all(|e| e.fix.is_none()), "{:?}", r.errors);
    // Without `fixes`, nothing is suggested.
    let r = verified(SOURCE, "Account.missingAcc", &Config::default());
    assert!(r.errors.iter().all(|e| e.fix.is_none()));
}

#[test]
fn parse_errors_name_tokens_in_words() {
    let errs = front_end("class P { void m() { int y = 3 +; } }").expect_err("a parse error");
    let text = errs.iter().map(|e| e.message.clone()).collect::<Vec<_>>().join("\n");
    assert!(text.contains("expected an expression"), "{text}");
    assert!(!text.contains("BigNum") && !text.contains("Num"), "{text}");
}

#[test]
fn a_literal_reads_as_itself_when_a_variable_holds_the_same_value() {
    // The returned `1` and the `0` passed to `find` are not named after `result`
    // (which holds `1`) or another variable holding `0`.
    const SRC: &str = "class F {
  static pure int find(int x, int y) { return x == y ? 0 : 1; }
  static int wrong(int y)
    ensures result == find(0, y);
  { int z = 0; return 1; }
}
";
    let text = diagnostics::rendered("literals.jv", SRC, "F.wrong", &Config::default());
    assert!(text.contains("on this path it reads `1 == F.find(0, y)`"), "{text}");
    assert!(!text.contains("find(z"), "{text}");
    assert!(!text.contains("find(result"), "{text}");
}
