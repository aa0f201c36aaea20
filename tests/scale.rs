//! Work linear in the input: a line of N characters that are not part of the language
//! gives one error (not N, each costing a scan of the line), and a member's check does
//! not translate every pure method of the program (which made files of many members
//! quadratic). No timing is asserted: the sizes are large enough that the quadratic
//! versions did not finish in a test run's patience, and the structure is checked.

use idf_verify::guard::with_big_stack;
use idf_verify::pipeline::{FileStatus, MemberOutcome, Options};
use idf_verify::rules::Verifier;
use idf_verify::rules::info::Info;
use idf_verify::source::front_end;
use idf_verify::verify::{Config, Status};

#[test]
fn a_line_of_bad_characters_is_one_error() {
    for bad in ["\u{0}", "#", "é", "\u{1b}"] {
        let text = format!("class A {{\n{}\n}}\n", bad.repeat(1 << 20));
        let errors = front_end(&text).unwrap_err();
        assert_eq!(errors.len(), 1, "{bad:?}");
        assert_eq!(errors[0].id, "parse.error");
        assert_eq!(errors[0].span.map(|s| s.start), Some(10), "{bad:?}");
    }
    // One per line, each the first of its line.
    let text = "class A {\n # $ %\n @ #\n}\n";
    let errors = front_end(text).unwrap_err();
    let firsts: Vec<&str> = errors.iter().map(|e| &text[e.span.unwrap().range()]).collect();
    assert_eq!(firsts, ["#", "@"]);
}

/// N classes, each with a predicate and a pure method over it: 2N members, N pure
/// methods, none needing the solver to verify.
fn solver_free(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "class C{i} {{ int f; predicate p() {{ return acc(f); }} pure int g() requires p(); {{ return {i}; }} }}\n"
        ));
    }
    s
}

#[test]
fn many_solver_free_members_all_verify() {
    let d = std::env::temp_dir().join(format!("idf-scale-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("many.jv");
    std::fs::write(&f, solver_free(1500)).unwrap();
    let opts = Options { jobs: 2, ..Options::default() };
    let run = idf_verify::pipeline::run::run(std::slice::from_ref(&f), &opts);
    let FileStatus::Checked(members) = &run.files[0].status else { panic!("input errors") };
    assert_eq!(members.len(), 3000);
    for m in members {
        assert!(matches!(m, MemberOutcome::Done(r) if r.status == Status::Verified), "{m:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A member's check translates the pure methods it reaches, not every pure method of
/// the program (definitions are translated afresh for each member, so translating them
/// all made a file of N members quadratic).
#[test]
fn a_member_translates_only_the_pure_methods_it_reaches() {
    with_big_stack(|| {
        let text = format!(
            "{}class Client {{ static void m(C7 c) requires c != null && c.p(); {{ int x = c.g(); }} }}\n",
            solver_free(50)
        );
        let program = front_end(&text).unwrap();
        let info = Info::new(&program);
        let config = Config::default();
        let at = usize::from(config.infer);
        assert_eq!(info.func_order.len(), 50);
        let r = |class, member| idf_verify::syntax::ast::MemberRef { class, member };
        // Class C7: field f (0), predicate p (1), pure method g (2); Client.m calls g.
        for (member, expected) in [(r(50, 0), vec![r(7, 2)]), (r(7, 2), vec![]), (r(7, 1), vec![])]
        {
            info.forget_definitions();
            let mut v = Verifier::new(&program, &info, config.clone());
            v.translate_for(member);
            let mut done: Vec<_> = info.defs[at].borrow().keys().copied().collect();
            done.sort();
            assert_eq!(done, expected, "{member:?}");
        }
    });
}
