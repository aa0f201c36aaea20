//! `join` (the paper's section 6.1) cuts the paths explored through K independent
//! ifs from 2^K to 2·2^(K/2) (with state merging off, `--no-merge`), and automatic
//! state merging to one: the statistics count them.

use idf_verify::source::front_end;
use idf_verify::syntax::ast::{MemberKind, MemberRef, Program};
use idf_verify::verify::{Config, Status, verify_member};

fn program(k: usize, join: bool) -> String {
    let params: Vec<String> = (1..=k).map(|i| format!("int x{i}")).collect();
    let mut body = String::from("    int r = 0;\n");
    for i in 1..=k {
        body.push_str(&format!("    if (x{i} == 0) {{ r = r + 1; }} else {{ r = r + 2; }}\n"));
        if join && i == k / 2 {
            body.push_str(&format!("    join r >= {i} && r <= {};\n", 2 * i));
        }
    }
    body.push_str("    return r;\n");
    format!(
        "class P {{\n  static int m({}) ensures result >= {k} && result <= {}; {{\n{body}  }}\n}}\n",
        params.join(", "),
        2 * k
    )
}

fn paths(src: &str) -> (Status, u64) {
    let (status, paths, _) = verify(src, false);
    (status, paths)
}

/// Status, paths and merges of the first method of `src`.
fn verify(src: &str, merge: bool) -> (Status, u64, u64) {
    let prog: Program = front_end(src).expect("a well-formed program");
    let m = prog.classes[0].members.iter().position(|m| m.kind == MemberKind::Method).expect("m");
    let config = Config { stats: true, merge, ..Config::default() };
    let r = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            verify_member(&prog, MemberRef { class: 0, member: m }, &config)
                .expect("no internal error")
        })
        .expect("thread")
        .join()
        .expect("no panic");
    let stats = r.stats.expect("stats");
    (r.status, stats.paths, stats.merges)
}

#[test]
fn join_halves_the_exponent() {
    for k in [4usize, 6, 8, 10] {
        let (status, without) = paths(&program(k, false));
        assert_eq!(status, Status::Verified);
        assert_eq!(without, 1 << k, "2^{k} paths without join");
        let (status, with) = paths(&program(k, true));
        assert_eq!(status, Status::Verified);
        assert_eq!(with, 2 * (1 << (k / 2)), "2·2^({k}/2) paths with a join");
    }
}

#[test]
fn a_join_that_forgets_too_much_fails() {
    // After the join only r's bounds are known: the exact value is gone.
    let src = "class P { static void m(int x) { int r = 0; if (x == 0) { r = 1; } else { r = 2; } join r >= 1; assert r == 1 || r == 2; } }";
    let (status, _) = paths(src);
    assert_eq!(status, Status::Failed);
}

#[test]
fn merging_runs_the_code_after_each_if_once() {
    for k in [4usize, 10, 30] {
        let (status, paths, merges) = verify(&program(k, false), true);
        assert_eq!(status, Status::Verified);
        assert_eq!((paths, merges), (1, k as u64), "{k} ifs: one path, {k} merges");
    }
}

#[test]
fn a_merged_state_forgets_nothing() {
    // Merged, r is exactly 1 or 2 (no join forgets it), and nothing more.
    let ok = "class P { static void m(int x) { int r = 0; if (x == 0) { r = 1; } else { r = 2; } assert r == 1 || r == 2; assert x == 0 ==> r == 1; } }";
    assert_eq!(verify(ok, true).0, Status::Verified);
    let wrong = "class P { static void m(int x) { int r = 0; if (x == 0) { r = 1; } else { r = 2; } assert r == 1; } }";
    assert_eq!(verify(wrong, true).0, Status::Failed);
}

#[test]
fn a_merge_after_a_return_knows_one_of_its_leaves_was_taken() {
    // The path with x == 0 returned inside the `if`: the merged path is x < 0 or x > 0.
    // Without that fact the merged run fails and the member is verified only by
    // running it again unmerged (three paths instead of two).
    let src = "class P { static int m(int x) ensures result != 5; { int r = 0; if (x < 0) { r = 1; } else if (x > 0) { r = 2; } else { return 0; } assert x != 0; return r; } }";
    assert_eq!(verify(src, true), (Status::Verified, 2, 1));
    // And nothing more: x may still be either sign.
    let wrong = "class P { static int m(int x) { int r = 0; if (x < 0) { r = 1; } else if (x > 0) { r = 2; } else { return 0; } assert x > 0; return r; } }";
    assert_eq!(verify(wrong, true).0, Status::Failed);
}
