//! Snapshot tests of what a user sees when a proof fails (`--trace`,
//! `--counterexample`): the rendered diagnostic of each failing member of
//! `tests/debugging/failures.jv`, one failure id per member. Bless changes with
//! `INSTA_UPDATE=always cargo test --test debugging` after reading the diff.

use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;
use idf_verify::guard::with_big_stack;
use idf_verify::report::Lines;
use idf_verify::report::human::verification_diagnostic;
use idf_verify::source::front_end;
use idf_verify::syntax::ast::{MemberKind, MemberRef};
use idf_verify::verify::{Config, verify_member};

const SOURCE: &str = include_str!("debugging/failures.jv");

/// The rendered errors of member `name`, verified with trace and counterexample.
fn rendered(name: &str) -> String {
    with_big_stack(|| {
        let prog = front_end(SOURCE).expect("well-formed");
        let m = prog.classes[0]
            .members
            .iter()
            .position(|m| m.name.name == name && m.kind != MemberKind::Field);
        let m = m.expect("member");
        let config = Config { trace: true, counterexample: true, ..Config::default() };
        let r = verify_member(&prog, MemberRef { class: 0, member: m }, &config)
            .expect("no internal error");
        let file = SimpleFile::new("failures.jv", SOURCE);
        let lines = Lines::new(SOURCE);
        let mut out = String::new();
        for e in &r.errors {
            let d = verification_diagnostic(e, &lines);
            term::emit_to_string(&mut out, &term::Config::default(), &file, &d).expect("render");
        }
        out
    })
}

macro_rules! snapshot {
    ($test:ident, $member:literal, $id:literal) => {
        #[test]
        fn $test() {
            let text = rendered($member);
            assert!(text.contains(concat!("error[", $id, "]")), "{text}");
            insta::assert_snapshot!(text);
        }
    };
}

snapshot!(postcondition_violated, "setWrong", "postcondition.violated");
snapshot!(assert_failed, "assertFails", "assert.failed");
snapshot!(insufficient_permission, "noPermission", "insufficient.permission");
snapshot!(call_precondition, "callWithoutPermission", "call.precondition");
snapshot!(division_by_zero, "divide", "division.by.zero");
snapshot!(index_out_of_bounds, "outOfBounds", "index.out.of.bounds");
snapshot!(invariant_not_preserved, "loop", "invariant.not.preserved");
snapshot!(join_failed, "joined", "join.failed");

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
