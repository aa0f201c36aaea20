//! State merging (`if` joins, on by default) changes how many paths run, never what is
//! reported: every project program gives the same JSON (verdicts, errors, messages,
//! traces, counterexamples, warnings) with merging on and off (`--no-merge`), timings
//! and statistics aside. A failure after a merge is reported from a run without
//! merging, so its trace and counterexample are those of its own path.

mod common;
use common::strip_timings;
use std::path::Path;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

fn files(merge: bool, extra: &[&str]) -> Vec<serde_json::Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(bin());
    cmd.args(["--no-cache", "--format", "json", "--smoke", "--timeout", "60"]).args(extra);
    if !merge {
        cmd.arg("--no-merge");
    }
    cmd.arg(root.join("examples")).arg(root.join("tests/programs/verify"));
    let out = cmd.output().unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    strip_timings(&mut doc["files"]);
    doc["files"].as_array().expect("files").clone()
}

/// `text` with the numbers of fresh symbols (`V@7`, `i@3'36`) replaced by `_`: a run
/// without merging after a merged one reuses the pure-method definitions the first
/// translated, so its symbols may be numbered from a different start; which symbol is
/// which is still compared (by name and position).
fn unnumbered(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        // `@12`, and a bound variable's renaming `'36` (`i@3'36`).
        if (c == '@' || c == '\'') && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('_');
        }
    }
    out
}

fn same_with_and_without_merging(extra: &[&str]) {
    let (merged, separate) = (files(true, extra), files(false, extra));
    assert_eq!(merged.len(), separate.len());
    assert!(merged.len() > 100);
    for (m, s) in merged.iter().zip(&separate) {
        let (m, s) = (unnumbered(&m.to_string()), unnumbered(&s.to_string()));
        assert_eq!(m, s, "merged vs separate paths");
    }
}

#[test]
#[ignore = "slow in a debug build: .ci/run runs it with --release --ignored"]
fn symbol_numbers_are_ignored_and_nothing_else() {
    assert_eq!(unnumbered("V@7[i@12'36] = x@ + a@b + 'c'"), "V@_[i@_'_] = x@ + a@b + 'c'");
}

#[test]
#[ignore = "slow in a debug build: .ci/run runs it with --release --ignored"]
fn verdicts_and_errors_do_not_depend_on_merging() {
    same_with_and_without_merging(&[]);
}

#[test]
#[ignore = "slow in a debug build: .ci/run runs it with --release --ignored"]
fn traces_and_counterexamples_do_not_depend_on_merging() {
    same_with_and_without_merging(&["--trace", "--counterexample"]);
}

/// A failure after a merged `if` is on its line, with the trace of one path through
/// the branch it took.
#[test]
#[ignore = "slow in a debug build: .ci/run runs it with --release --ignored"]
fn a_failure_after_a_merge_shows_its_path() {
    let dir = std::env::temp_dir().join(format!("idf-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("m.jv");
    std::fs::write(
        &f,
        "class P {\n  static int m(int x, int y)\n    ensures result >= 2;\n  {\n    int r = 0;\n    if (x == 0) { r = r + 1; } else { r = r + 2; }\n    if (y == 0) { r = r + 1; } else { r = r + 2; }\n    assert r != 3;\n    return r;\n  }\n}\n",
    )
    .unwrap();
    let out = Command::new(bin())
        .args(["--no-cache", "--trace", "--counterexample", "--stats"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("m.jv:8:12"), "the assert's line: {text}");
    assert!(text.contains("if (x == 0): then") || text.contains("if (x == 0): else"), "{text}");
    assert!(!text.contains("paths merged"), "the trace is one path's: {text}");
    assert!(text.contains("2 merges"), "merging happened first: {text}");
}
