//! Robustness and rendering of the front end, through the library: degenerate, huge,
//! deeply nested and random inputs each give a diagnostic or success (never a panic or a
//! stack overflow), and snapshots pin the rendering of parse, type and I/O errors.
//!
//! Architecture invariant: these tests call `driver` exactly as the CLI does (on a
//! large-stack thread), so what passes here cannot crash the binary.

use codespan_reporting::term::termcolor::NoColor;
use idf_verify::driver::{self, FileReport, FileStatus, Source};
use idf_verify::report::human::{self, HumanOptions};
use idf_verify::syntax::InputError;
use idf_verify::syntax::ast::Program;

fn front(text: String) -> Result<Program, Vec<InputError>> {
    driver::with_big_stack(move || driver::catch_panic(|| driver::front_end(&text)))
        .expect("the front end panicked")
}

fn first_error(text: String) -> InputError {
    front(text).expect_err("should be rejected").remove(0)
}

fn temp_file(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("idf-verify-frontend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn empty_file_is_an_empty_program() {
    assert_eq!(front(String::new()).unwrap().classes.len(), 0);
    assert_eq!(front("  // only a comment\n/* and another */\n".into()).unwrap().classes.len(), 0);
}

#[test]
fn non_utf8_is_an_io_error_on_its_line() {
    let path = temp_file("bad.jv", b"class A {\n  int x; \xff\xfe\n}\n");
    let (source, text) = driver::load(&path);
    let err = text.unwrap_err();
    assert_eq!(err.id, "io.error");
    let span = err.span.expect("points at the byte");
    assert_eq!(idf_verify::report::Lines::new(&source.text).line_col(span.start as usize), (2, 10));
}

#[test]
fn missing_file_is_an_io_error() {
    let (_, text) = driver::load(std::path::Path::new("/nonexistent/file.jv"));
    let err = text.unwrap_err();
    assert_eq!((err.id, err.span), ("io.error", None));
}

#[test]
fn ten_megabytes_of_classes() {
    let mut text = String::with_capacity(10_500_000);
    let mut i = 0;
    while text.len() < 10_000_000 {
        text.push_str(&format!(
            "class C{i} {{ int f; C{i}() {{ }} void m(int x) requires acc(f); ensures acc(f) && f == x; {{ f = x; }} }}\n"
        ));
        i += 1;
    }
    let program = front(text).expect("well-formed");
    assert_eq!(program.classes.len(), i);
}

fn in_method(body: &str) -> String {
    format!("class A {{ static void m() {{ {body} }} }}")
}

#[test]
fn ten_thousand_nested_parentheses() {
    let n = 10_000;
    let text = in_method(&format!("bool b = {}true{};", "(".repeat(n), ")".repeat(n)));
    assert!(front(text).is_ok(), "parentheses add no nesting to the tree");
}

#[test]
fn ten_thousand_nested_blocks() {
    let n = 10_000;
    let e = first_error(in_method(&format!("{}{}", "{".repeat(n), "}".repeat(n))));
    assert_eq!(e.id, "parse.error");
    assert!(e.message.contains("nesting too deep"), "{}", e.message);
}

#[test]
fn ten_thousand_nested_negations() {
    let e = first_error(in_method(&format!("bool b = {}true;", "!".repeat(10_000))));
    assert!(e.message.contains("nesting too deep"), "{}", e.message);
}

#[test]
fn long_operator_chains_and_else_if_chains() {
    let sum = vec!["1"; 10_000].join(" + ");
    assert!(
        first_error(in_method(&format!("int x = {sum};"))).message.contains("nesting too deep")
    );
    let chain = "if (true) { } else ".repeat(10_000) + "{ }";
    assert!(first_error(in_method(&chain)).message.contains("nesting too deep"));
    // Just under the limit is fine.
    let ok = vec!["1"; 400].join(" + ");
    assert!(front(in_method(&format!("int x = {ok};"))).is_ok());
}

#[test]
fn random_token_soup_never_panics() {
    const WORDS: &[&str] = &[
        "class",
        "A",
        "B",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        "[]",
        ";",
        ",",
        ".",
        "=",
        ":=",
        "==",
        "!=",
        "<",
        "+",
        "-",
        "*",
        "/",
        "%",
        "!",
        "&&",
        "||",
        "==>",
        "?",
        ":",
        "int",
        "bool",
        "void",
        "static",
        "pure",
        "predicate",
        "requires",
        "ensures",
        "return",
        "if",
        "else",
        "while",
        "invariant",
        "assert",
        "open",
        "close",
        "use",
        "join",
        "opening",
        "using",
        "in",
        "old",
        "acc",
        "untouched",
        "result",
        "this",
        "null",
        "true",
        "new",
        "x",
        "f",
        "m",
        "0",
        "7",
        "/*",
        "*/",
        "//",
        "\n",
        "#",
        "é",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let len = (next() % 60) as usize;
        let mut text =
            String::from("class A { int f; pure int g() requires acc(f); { return f; } ");
        for _ in 0..len {
            text.push_str(WORDS[(next() % WORDS.len() as u64) as usize]);
            text.push(' ');
        }
        let _ = front(text);
    }
}

/// Render a file's diagnostics without colour, as the CLI prints them.
fn render(path: &str, text: &str, status: FileStatus) -> String {
    let report =
        FileReport { source: Source { path: path.into(), text: text.into() }, status, scope: None };
    let mut out = NoColor::new(Vec::new());
    human::render_file(&mut out, &report, HumanOptions::default()).unwrap();
    String::from_utf8(out.into_inner()).unwrap()
}

fn render_source(text: &str) -> String {
    let status = match front(text.to_string()) {
        Ok(_) => FileStatus::Checked(Vec::new()),
        Err(errors) => FileStatus::Input(errors),
    };
    render("example.jv", text, status)
}

#[test]
fn snapshot_parse_error() {
    insta::assert_snapshot!(render_source("class A {\n  int x\n  void m() { }\n}\n"));
}

#[test]
fn snapshot_type_errors() {
    insta::assert_snapshot!(render_source(
        "class A {\n  int x;\n  int x;\n  void m() requires acc(x) || true; {\n    bool b = 1;\n  }\n}\n"
    ));
}

#[test]
fn snapshot_io_errors() {
    let path = temp_file("latin1.jv", b"class A {\n  // caf\xe9\n}\n");
    let (source, text) = driver::load(&path);
    let rendered = render("latin1.jv", &source.text, FileStatus::Input(vec![text.unwrap_err()]));
    insta::assert_snapshot!(rendered);
    let (_, missing) = driver::load(std::path::Path::new("missing.jv"));
    insta::assert_snapshot!(render(
        "missing.jv",
        "",
        FileStatus::Input(vec![missing.unwrap_err()])
    ));
}

/// The binary's exit statuses and output channels (LANGUAGE.md section 9).
mod cli {
    use std::process::Command;

    fn run(args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_idf-verify")).args(args).output().unwrap();
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
    }

    fn program(name: &str) -> String {
        format!("{}/tests/programs/frontend/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn usage_errors_exit_2() {
        assert_eq!(run(&[]).0, 2);
        assert_eq!(run(&["--no-such-flag", "x.jv"]).0, 2);
        assert_eq!(run(&["--format", "xml", "x.jv"]).0, 2);
        assert_eq!(run(&["--help"]).0, 0);
    }

    #[test]
    fn input_errors_exit_2_and_expect_accepts_them() {
        let bad = program("t03_operators.jv");
        let (code, out, err) = run(&[&bad]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(out.contains("error[type.error]"), "{out}");
        assert!(!err.contains("panicked"), "{err}");
        let (code, out, _) = run(&["--expect", &bad]);
        assert_eq!(code, 0, "{out}");
        assert_eq!(run(&["/no/such/file.jv"]).0, 2);
    }

    #[test]
    fn json_document_for_input_errors() {
        let (code, out, _) = run(&["--format", "json", &program("p03_bad_character.jv")]);
        assert_eq!(code, 2);
        let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
        assert_eq!(doc["version"], 1);
        let file = &doc["files"][0];
        assert_eq!(file["status"], "input-error");
        assert_eq!(file["diagnostics"][0]["id"], "parse.error");
        assert_eq!(file["diagnostics"][0]["line"], 3);
        assert_eq!(doc["summary"]["input_errors"], 1);
    }

    #[test]
    fn unmatched_method_filter_is_a_usage_error() {
        let (code, _, err) = run(&["--method", "Nope.nothing", &program("ok02_resolution.jv")]);
        assert_eq!(code, 2);
        assert!(err.contains("Nope.nothing"), "{err}");
    }
}
