//! Straight-line code runs flat (issue 13 item 3): the statement rules active on the
//! Rust stack at once (`Stats::exec_depth_max`) do not grow with the number of
//! statements, only with the nesting of blocks and with branches whose paths go on
//! separately. And what runs flat still verifies and fails as before: each program
//! has a failing sibling, reported at the right line.

use idf_verify::pipeline::MemberOutcome;
use idf_verify::verify::{Config, MemberResult, Status};

const CELL: &str = "class Cell {
  int x;
  Cell() ensures valid() && getX() == 0; { x = 0; }
  void setX(int v) requires valid(); ensures valid() && getX() == v; { x = v; }
  predicate valid() { return acc(x); }
  pure int getX() requires valid(); { return x; }
  void setPos(int v) requires valid() && (v > 0 ==> getX() >= 0); ensures valid() && getX() == v; { x = v; }
}
";

/// Verify `Main.main` of `CELL` + a class `Main` whose `main(int p)` has `body`.
fn main_of(body: &str, merge: bool) -> MemberResult {
    let text = format!("{CELL}class Main {{\n  static void main(int p) {{\n{body}  }}\n}}\n");
    let program = idf_verify::guard::with_big_stack(|| idf_verify::source::front_text(&text))
        .expect("front end");
    let members = idf_verify::source::select_members(&program, &["Main.main".to_string()]);
    let (member, name) = members.into_iter().next().expect("Main.main");
    let config = Config { stats: true, merge, timeout: Some(120.0), ..Config::default() };
    match idf_verify::guard::with_big_stack(|| {
        idf_verify::pipeline::schedule::verify_one(
            &program,
            idf_verify::pipeline::next_program_key(),
            member,
            &name,
            &config,
        )
    }) {
        MemberOutcome::Done(r) => r,
        MemberOutcome::Internal { message, .. } => panic!("internal error: {message}"),
    }
}

fn depth(r: &MemberResult) -> u64 {
    r.stats.as_ref().expect("stats").exec_depth_max
}

/// `n` cells created and set, each with a call whose contract branches on `v > 0`.
fn chain(n: usize) -> String {
    let mut b = String::new();
    for i in 1..=n {
        b += &format!("    Cell c{i} = new Cell();\n    c{i}.setX({i});\n    c{i}.setPos({i});\n");
        b += &format!("    int y{i} = c{i}.getX() + 1;\n    {{ int z{i} = y{i}; }}\n");
    }
    b
}

#[test]
fn a_long_chain_runs_flat_and_still_verifies() {
    let short = main_of(&(chain(3) + "    assert c1.getX() == 1;\n"), true);
    let long = main_of(&(chain(600) + "    assert c1.getX() == 1;\n"), true);
    assert_eq!(short.status, Status::Verified, "{:?}", short.errors);
    assert_eq!(long.status, Status::Verified, "{:?}", long.errors);
    assert!(depth(&short) >= 2, "the block nests: {}", depth(&short));
    assert_eq!(depth(&long), depth(&short), "3,000 statements nest no deeper than 15");
}

#[test]
fn the_failing_sibling_fails_at_its_line() {
    // Cell 1 was set to 1: asserting 2 fails, at the assert, after 3,000 statements.
    let r = main_of(&(chain(600) + "    assert c1.getX() == 2;\n"), true);
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert_eq!(r.errors[0].id, "assert.failed");
    // A dropped permission in the middle fails there (the next statement's call).
    let mut body = chain(300);
    body += "    Cell d = new Cell();\n    d.setX(5);\n";
    body +=
        "    Cell e = d;\n    e.setX(6);\n    assert d.getX() == 6;\n    assert d.getX() == 5;\n";
    let r = main_of(&body, true);
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert_eq!(r.errors[0].id, "assert.failed");
}

#[test]
fn branches_that_merge_run_flat_and_separate_ones_nest_per_branch() {
    let ifs = |n: usize| {
        let mut b = String::from("    int k = 0;\n    Cell c = new Cell();\n");
        for i in 0..n {
            b += &format!("    if (p == {i}) {{ c.setX(k); }} else {{ c.setX(k + 1); }}\n");
            b += "    k = k + 1;\n";
        }
        b += "    assert c.getX() >= 0;\n";
        b
    };
    let (few, many) = (main_of(&ifs(2), true), main_of(&ifs(40), true));
    assert_eq!(few.status, Status::Verified, "{:?}", few.errors);
    assert_eq!(many.status, Status::Verified, "{:?}", many.errors);
    assert_eq!(depth(&many), depth(&few), "merged ifs nest no deeper than two");
    // Without merging the code after each `if` runs inside the branch that reached it:
    // the nesting grows with the ifs on the path, not with the statements.
    let (few, many) = (main_of(&ifs(2), false), main_of(&ifs(12), false));
    assert_eq!(many.status, Status::Verified, "{:?}", many.errors);
    assert!(depth(&many) > depth(&few));
    assert!(depth(&many) <= depth(&few) + 10 * 3, "{} vs {}", depth(&many), depth(&few));
}
