//! Robustness and rendering of the front end, through the library: degenerate, huge,
//! deeply nested and random inputs each give a diagnostic or success (never a panic or a
//! stack overflow), and snapshots pin the rendering of parse, type and I/O errors.
//!
//! Architecture invariant: these tests call `driver` exactly as the CLI does (on a
//! large-stack thread), so what passes here cannot crash the binary.

mod skip;

use codespan_reporting::term::termcolor::NoColor;
use idf_verify::pipeline::FileReport;
use idf_verify::pipeline::FileStatus;
use idf_verify::report::human::{self, HumanOptions};
use idf_verify::source::Source;
use idf_verify::syntax::InputError;
use idf_verify::syntax::ast::Program;

fn front(text: String) -> Result<Program, Vec<InputError>> {
    idf_verify::guard::with_big_stack(move || {
        idf_verify::guard::catch_panic(|| idf_verify::source::front_end(&text))
    })
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
    let (source, text) = idf_verify::source::load(&path);
    let err = text.unwrap_err();
    assert_eq!(err.id, "io.error");
    let span = err.span.expect("points at the byte");
    assert_eq!(idf_verify::report::Lines::new(&source.text).line_col(span.start as usize), (2, 10));
}

#[test]
fn missing_file_is_an_io_error() {
    let (_, text) = idf_verify::source::load(std::path::Path::new("/nonexistent/file.jv"));
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
    // Flat chains of one operator nest nothing: generated specifications chain
    // thousands of conjuncts, and they are accepted (each link counts 1/64 level).
    let sum = vec!["1"; 10_000].join(" + ");
    assert!(front(in_method(&format!("int x = {sum};"))).is_ok());
    let conj = vec!["true"; 2_000].join(" && ");
    assert!(front(in_method(&format!("assert {conj};"))).is_ok());
    let chain = "if (true) { } else ".repeat(10_000) + "{ }";
    assert!(front(in_method(&chain)).is_ok());
    // Beyond 500 x 64 links the limit says what it counts.
    let long = vec!["1"; 40_000].join(" + ");
    let e = first_error(in_method(&format!("int x = {long};")));
    assert!(e.message.contains("or a chain of more than 32000 operators"), "{}", e.message);
    // Nesting one operator inside another is nesting, not a chain.
    let nested = format!("int x = {}1{};", "(1 - ".repeat(600), ")".repeat(600));
    let e = first_error(in_method(&nested));
    assert!(e.message.contains("nesting too deep"), "{}", e.message);
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
    let report = FileReport { source: Source::new(path, text), status, scope: None };
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
    let (source, text) = idf_verify::source::load(&path);
    let rendered = render("latin1.jv", &source.text, FileStatus::Input(vec![text.unwrap_err()]));
    insta::assert_snapshot!(rendered);
    let (_, missing) = idf_verify::source::load(std::path::Path::new("missing.jv"));
    insta::assert_snapshot!(render(
        "missing.jv",
        "",
        FileStatus::Input(vec![missing.unwrap_err()])
    ));
}

/// The binary's exit statuses and output channels (LANGUAGE.md section 9).
mod cli {
    use std::process::Command;

    /// Without the result cache: every run verifies (and writes no user's cache).
    fn run(args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_idf-verify"))
            .arg("--no-cache")
            .args(args)
            .output()
            .unwrap();
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

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("idf-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn example() -> String {
        format!("{}/examples/cell.jv", env!("CARGO_MANIFEST_DIR"))
    }

    /// Subcommands are clap's: each has `--help` (exit 0), `help` is one, `verify` is
    /// the default, and a path named like a subcommand is verified after `--` or
    /// `verify`. `-q` hides verified members, `--color` and `NO_COLOR` decide colours.
    #[test]
    fn subcommands_and_output_switches() {
        let bin = env!("CARGO_BIN_EXE_idf-verify");
        let go = |args: &[&str], env: &[(&str, &str)]| {
            let out = std::process::Command::new(bin)
                .args(args)
                .envs(env.iter().copied())
                .output()
                .unwrap();
            let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
            (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
        };
        let (code, out, _) = go(&["help"], &[]);
        assert_eq!(code, 0);
        for sub in ["verify", "test", "lsp", "merge"] {
            assert!(out.contains(sub), "{out}");
            let (code, out, _) = go(&[sub, "--help"], &[]);
            assert_eq!(code, 0, "{sub} --help");
            assert!(out.contains("Usage: idf-verify"), "{out}");
        }
        let d = scratch("subcommand-named");
        std::fs::create_dir_all(d.join("test")).unwrap();
        std::fs::copy(example(), d.join("test/cell.jv")).unwrap();
        let cwd = d.to_str().unwrap();
        for args in [&["--no-cache", "--", "test"][..], &["verify", "--no-cache", "test"][..]] {
            let out = std::process::Command::new(bin).args(args).current_dir(cwd).output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {text}");
            assert!(text.contains("Cell.setX verified"), "{text}");
        }
        let (code, out, _) = go(&["-q", "--no-cache", &example()], &[]);
        assert_eq!(code, 0);
        assert!(!out.contains("verified ("), "{out}");
        assert!(out.contains("0 failed"), "{out}");
        let (_, out, _) = go(&["--color", "always", "--no-cache", &example()], &[]);
        assert!(out.contains('\u{1b}'), "{out}");
        let (_, out, _) = go(&["--no-cache", &example()], &[("NO_COLOR", "1")]);
        assert!(!out.contains('\u{1b}'), "{out}");
        let (code, out, _) = go(&["-j", "1", "-v", "--no-cache", &example()], &[]);
        assert_eq!(code, 0);
        assert!(out.contains("stats:"), "{out}");
    }

    /// `--expect --format json`: one JSON document listing the mismatches, same exit.
    #[test]
    fn expect_mode_speaks_json_when_asked() {
        let d = scratch("expect-json");
        let f = d.join("m.jv");
        std::fs::write(
            &f,
            "class A {\n  void m() {\n    // expect: assert.failed\n    assert true;\n  }\n}\n",
        )
        .unwrap();
        let (code, out, _) = run(&["--expect", "--format", "json", f.to_str().unwrap()]);
        assert_eq!(code, 1, "{out}");
        let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
        assert_eq!(doc["expect"]["expectations"], 1);
        let m = &doc["expect"]["mismatches"][0];
        assert_eq!(
            (m["kind"].as_str(), m["id"].as_str(), m["line"].as_u64()),
            (Some("missing"), Some("assert.failed"), Some(4))
        );
        let (code, out, _) = run(&["--expect", "--format", "json", &example()]);
        assert_eq!(code, 0, "{out}");
        let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
        assert_eq!(doc["expect"]["mismatches"], serde_json::json!([]));
    }

    #[test]
    fn out_of_range_timeout_and_jobs_are_usage_errors() {
        assert_eq!(run(&["--timeout", "1e19", &example()]).0, 2);
        assert_eq!(run(&["--timeout", "0", &example()]).0, 2);
        assert_eq!(run(&["--jobs", "20000", &example()]).0, 2);
        assert_eq!(run(&["--jobs", "0", &example()]).0, 2);
        assert_eq!(run(&["--jobs", "2", "--timeout", "30", &example()]).0, 0);
    }

    #[test]
    fn a_full_disk_is_exit_3() {
        if !std::path::Path::new("/dev/full").exists() {
            return;
        }
        let full = std::fs::File::create("/dev/full").unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_idf-verify"))
            .arg("--no-cache")
            .arg(example())
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
    }

    /// File names are shown exactly and harmlessly: control characters escaped (an
    /// escape sequence in a name cannot reach the terminal), bytes that are not UTF-8
    /// as `\xNN` (not a lossy U+FFFD that two names could share).
    #[cfg(unix)]
    #[test]
    fn odd_file_names_are_shown_escaped() {
        use std::os::unix::ffi::OsStrExt;
        let d = scratch("odd-names");
        let esc = d.join("a\u{1b}[31mred.jv");
        std::fs::copy(example(), &esc).unwrap();
        let bad = d.join(std::ffi::OsStr::from_bytes(b"b\xff.jv"));
        std::fs::write(&bad, "class {").unwrap();
        let (_, out, _) = run(&[d.to_str().unwrap()]);
        assert!(!out.contains('\u{1b}'), "{out:?}");
        assert!(out.contains("a\\u{1b}[31mred.jv"), "{out}");
        assert!(out.contains("b\\xff.jv"), "{out}");
    }

    /// Every output path is total: stderr or stdout that cannot be written (a full
    /// disk) is exit 3, never a panic, whichever subcommand wrote.
    #[test]
    fn unwritable_outputs_are_exit_3_everywhere() {
        if !std::path::Path::new("/dev/full").exists() {
            return;
        }
        let bin = env!("CARGO_BIN_EXE_idf-verify");
        let full = || std::fs::File::create("/dev/full").unwrap();
        let cases: Vec<(Vec<String>, bool)> = vec![
            // (arguments, whether stdout (else stderr) is the full one)
            (vec!["merge".into()], false),
            (vec!["merge".into(), "/nonexistent.json".into()], false),
            (vec!["lsp".into(), "--bogus".into()], false),
            (vec!["lsp".into(), "--help".into()], true),
            (vec!["test".into(), "--runs".into(), "3".into(), example()], true),
            (vec!["--no-cache".into(), "--method".into(), "Nope.nope".into(), example()], false),
        ];
        for (args, on_stdout) in cases {
            let mut cmd = std::process::Command::new(bin);
            cmd.args(&args);
            if on_stdout {
                cmd.stdout(full());
            } else {
                cmd.stderr(full());
            }
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), Some(3), "{args:?}");
            let text = String::from_utf8_lossy(&out.stderr);
            assert!(!text.contains("panicked"), "{args:?}: {text}");
        }
    }

    #[test]
    fn a_fifo_in_a_folder_is_an_io_error_not_a_hang() {
        let d = scratch("fifo");
        std::fs::copy(example(), d.join("cell.jv")).unwrap();
        let fifo = d.join("x.jv");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            crate::skip::skipped("`mkfifo` failed: the FIFO check did not run");
            return;
        }
        let (code, out, _) = run(&[d.to_str().unwrap()]);
        assert_eq!(code, 2, "{out}");
        assert!(out.contains("is not a regular file"), "{out}");
        assert!(out.contains("Cell.setX verified"), "{out}");
    }

    #[test]
    fn an_unreadable_folder_is_an_io_error() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("unreadable");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::copy(example(), d.join("cell.jv")).unwrap();
        let locked = d.join("locked");
        std::fs::create_dir(&locked).unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads every folder: then the binary runs as `nobody` (setpriv).
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        // A copy of the binary in a folder every user can reach (the build's own folder
        // may sit under a home that `nobody` cannot enter).
        let bin_dir = scratch("unreadable-bin");
        std::fs::set_permissions(&bin_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = bin_dir.join("idf-verify");
        std::fs::copy(env!("CARGO_BIN_EXE_idf-verify"), &bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = if root {
            std::process::Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin)
                .arg("--no-cache")
                .arg(&d)
                .output()
        } else {
            std::process::Command::new(&bin).arg("--no-cache").arg(&d).output()
        };
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
        let Ok(out) = out else {
            crate::skip::skipped(
                "`setpriv` cannot run the binary as `nobody`: the unreadable-folder check did not run",
            );
            return;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        if root && text.contains("Permission denied") && !text.contains("Cell") {
            crate::skip::skipped(
                "`nobody` cannot reach the test folder: the unreadable-folder check did not run",
            );
            return;
        }
        let _ = std::fs::remove_dir_all(&bin_dir);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(text.contains("cannot read the folder"), "{text}");
        assert!(text.contains("Cell.setX verified"), "{text}");
    }

    #[test]
    fn a_byte_order_mark_is_accepted_and_control_bytes_are_shown() {
        let d = scratch("bom");
        let bom = d.join("bom.jv");
        std::fs::write(&bom, b"\xef\xbb\xbfclass A { static void m() { assert 1 == 1; } }\n")
            .unwrap();
        assert_eq!(run(&[bom.to_str().unwrap()]).0, 0);
        let nul = d.join("nul.jv");
        std::fs::write(&nul, b"class A { \x00 }\n").unwrap();
        let (code, out, _) = run(&[nul.to_str().unwrap()]);
        assert_eq!(code, 2);
        assert!(out.contains("'\\0'") && out.contains("class A { ? }"), "{out}");
        assert!(!out.contains('\0'), "a raw NUL was echoed");
    }

    #[test]
    fn a_run_that_verifies_nothing_says_so() {
        let d = scratch("empty");
        let f = d.join("fields.jv");
        std::fs::write(&f, "class A { int x; }\n").unwrap();
        let (code, out, _) = run(&[f.to_str().unwrap()]);
        assert_eq!(code, 0);
        assert!(out.contains("no member was verified"), "{out}");
    }
}
