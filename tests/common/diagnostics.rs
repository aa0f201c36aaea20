//! Shared by the snapshot tests of rendered diagnostics (tests/messages.rs,
//! tests/debugging.rs): verify one member of a source text and render its errors as
//! the command line prints them.

use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;
use idf_verify::guard::with_big_stack;
use idf_verify::pipeline::fix;
use idf_verify::report::Lines;
use idf_verify::report::human::verification_diagnostic;
use idf_verify::source::{front_end, select_members};
use idf_verify::verify::{Config, MemberResult, verify_member};

/// Member `name` (`Class.member`) of `text` verified with `config`, with fixes
/// suggested when `config.fixes` asks for them (as the command line does).
pub fn verified(text: &str, name: &str, config: &Config) -> MemberResult {
    let text = text.to_string();
    let (name, config) = (name.to_string(), config.clone());
    with_big_stack(move || {
        let prog = front_end(&text).expect("well-formed");
        let (m, _) =
            select_members(&prog, std::slice::from_ref(&name)).into_iter().next().expect("member");
        let mut r = verify_member(&prog, m, &config).expect("no internal error");
        fix::suggest(&prog, &text, &mut r, &config);
        r
    })
}

/// The errors of member `name` of `text` (shown as the file `file`), rendered.
pub fn rendered(file: &str, text: &str, name: &str, config: &Config) -> String {
    let r = verified(text, name, config);
    let files = SimpleFile::new(file, text);
    let lines = Lines::new(text);
    let mut out = String::new();
    for e in &r.errors {
        let d = verification_diagnostic(e, &lines);
        term::emit_to_string(&mut out, &term::Config::default(), &files, &d).expect("render");
    }
    out
}

/// One snapshot test per failing member: `snapshot!(check; test, "Class.member",
/// "id")` renders the member with the caller's `rendered`, asserts that the error id
/// is there, runs `check` on the text, and compares it with the stored snapshot.
#[macro_export]
macro_rules! snapshot {
    ($check:path; $test:ident, $member:literal, $id:literal) => {
        #[test]
        fn $test() {
            let text = rendered($member);
            assert!(text.contains(concat!("error[", $id, "]")), "{text}");
            $check(&text);
            insta::assert_snapshot!(text);
        }
    };
}
