//! Work linear in the input: a line of N characters that are not part of the language
//! gives one error (not N, each costing a scan of the line), and a member's check does
//! not revisit every pure method of the program (which made files of many members
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

/// The pure methods are translated once per program: after the first member's
/// `translate_all`, the next member's finds nothing left to scan.
#[test]
fn pure_methods_are_scanned_once_per_program() {
    with_big_stack(|| {
        let program = front_end(&solver_free(50)).unwrap();
        let info = Info::new(&program);
        let config = Config::default();
        let at = usize::from(config.infer);
        assert_eq!(info.func_order.len(), 50);
        assert_eq!(info.translated[at].get(), 0);
        let mut first = Verifier::new(&program, &info, config.clone());
        first.translate_all();
        assert_eq!(info.translated[at].get(), 50);
        let defs: Vec<_> =
            info.func_order.iter().map(|p| info.defs[at].borrow()[p].clone()).collect();
        let mut next = Verifier::new(&program, &info, config);
        next.translate_all();
        assert_eq!(info.translated[at].get(), 50);
        // Nothing translated again.
        for (p, d) in info.func_order.iter().zip(defs) {
            assert!(std::rc::Rc::ptr_eq(&info.defs[at].borrow()[p], &d));
        }
    });
}
