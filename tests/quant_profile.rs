//! Quantifier instances in the user's terms: a member whose query runs into a
//! matching loop times out naming the quantifier that instantiated most (with a note
//! where it is written), and `--stats` lists, per member, the quantifiers the solver
//! instantiated most with their lines (human and JSON). The program is
//! tests/hang/matching_loop.jv, run with a small `--rlimit` so the loop ends quickly.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

fn program() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hang/matching_loop.jv")
}

/// The looping quantifier as the reports name it.
const LOOPING: &str = "`forall int i :: { f(i) } f(i) < f(2 * i) + f(2 * i + 1)`";

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(bin())
        .args(["--no-cache", "--rlimit", "100000"])
        .args(args)
        .arg(program())
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_matching_loop_times_out_naming_its_quantifier() {
    let (code, out) = run(&["--method", "Loop.loops"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("Loop.loops timeout"), "{out}");
    assert!(out.contains(&format!("the quantifier instantiated most was {LOOPING}")), "{out}");
    // The note points at the quantifier's line.
    assert!(out.contains("the solver instantiated this quantifier"), "{out}");
    assert!(out.contains("12 │     requires forall int i :: { f(i) }"), "{out}");
}

#[test]
fn a_member_that_does_not_time_out_names_no_quantifier() {
    let (code, out) = run(&["--method", "Loop.named"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("instantiated"), "{out}");
    assert!(!out.contains("quantifier instances"), "without --stats: {out}");
}

#[test]
fn stats_list_the_quantifiers_instantiated_most_with_their_lines() {
    let (code, out) = run(&["--stats", "--format", "json"]);
    assert_eq!(code, Some(1), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let members = v["files"][0]["members"].as_array().unwrap();
    let member = |name: &str| members.iter().find(|m| m["name"] == name).unwrap();
    let looping = &member("Loop.loops")["stats"]["quantifiers"][0];
    assert_eq!(looping["name"], LOOPING, "{out}");
    assert_eq!(looping["line"], 12, "{out}");
    let n = looping["instances"].as_u64().unwrap();
    assert!(n > 100, "a matching loop instantiates its quantifier many times: {n}");
    // A quantifier whose instances make no new match: a few instances, its own line.
    let named = member("Loop.named");
    assert_eq!(named["status"], "verified", "{out}");
    let q = &named["stats"]["quantifiers"][0];
    assert_eq!(q["name"], "`forall int i :: { a[i] } 0 <= i && i < a.length ==> a[i] > 0`");
    assert_eq!(q["line"], 21, "{out}");
    let n = q["instances"].as_u64().unwrap();
    assert!((1..10).contains(&n), "one instance per read the member names: {n}");

    let (_, human) = run(&["--stats", "--method", "Loop.loops"]);
    assert!(human.contains("quantifier instances (most first):"), "{human}");
    assert!(human.contains(&format!("  {LOOPING} (line 12)")), "{human}");
}

/// A process killed while a context counts instances leaves no trace log behind: the
/// log is read through a handle opened when Z3 created it, its name removed then.
#[cfg(target_os = "linux")]
#[test]
fn a_process_killed_while_counting_leaves_no_log() {
    let tmp = std::env::temp_dir().join(format!("idf-quant-kill-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = Command::new(bin())
        .args(["--no-cache", "--stats", "--jobs", "1", "--method", "Loop.loops"])
        .arg(program())
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the counting context has its log open (the default resource limit
    // keeps the matching loop going for seconds).
    let fds = PathBuf::from(format!("/proc/{}/fd", child.id()));
    let logging = || {
        std::fs::read_dir(&fds).into_iter().flatten().flatten().any(|e| {
            std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().contains(".z3log"))
        })
    };
    let mut seen = false;
    for _ in 0..600 {
        if logging() {
            seen = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(seen, "the counting context never opened its log");
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Counting instances makes Z3 write its trace log (twice the time of a
/// quantifier-heavy member), so it is done only when asked: the result cache keeps
/// every miss's statistics but not the counts, and `--stats` still gets them through
/// the cache.
#[test]
fn instances_are_counted_only_when_asked() {
    use idf_verify::pipeline::{FileStatus, MemberOutcome, Options};
    use idf_verify::verify::Config;
    let counted = |quantifier_counts: bool| {
        let config = Config { stats: true, quantifier_counts, ..Config::default() };
        let opts = Options { config, methods: vec!["Loop.named".into()], ..Options::default() };
        let run = idf_verify::pipeline::run::run(&[program()], &opts);
        let FileStatus::Checked(members) = &run.files[0].status else { panic!("not checked") };
        let MemberOutcome::Done(r) = &members[0] else { panic!("not done") };
        r.stats.as_ref().expect("statistics").quantifiers.len()
    };
    assert_eq!(counted(false), 0);
    assert!(counted(true) > 0);

    let cache = std::env::temp_dir().join(format!("idf-quant-cache-{}", std::process::id()));
    let dir = cache.to_string_lossy().into_owned();
    let out = Command::new(bin())
        .args(["--cache", &dir, "--rlimit", "100000", "--stats", "--method", "Loop.named"])
        .arg(program())
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&cache);
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains("quantifier instances (most first):"), "{out}");
}

/// Once a check of a member spends the resource limit, the member stops: one timeout,
/// not one per later check and branch, each spending the limit again (a matching loop
/// took seconds per check).
#[test]
fn a_member_stops_at_its_first_check_that_spends_the_limit() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hang/matching_loop_paths.jv");
    let out = Command::new(bin())
        .args(["--no-cache", "--rlimit", "100000", "--stats", "--format", "json"])
        .arg(file)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout).into_owned();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let members = v["files"][0]["members"].as_array().unwrap();
    let member = members.iter().find(|m| m["name"] == "Loops.everywhere").unwrap();
    assert_eq!(member["status"], "timeout", "{out}");
    let errors = member["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{out}");
    assert_eq!(errors[0]["id"], "verification.timeout", "{out}");
    assert!(errors[0]["message"].as_str().unwrap().contains(LOOPING), "{out}");
    // The check that gave up, and the one asked again of a context counting
    // instances: no later check reaches the solver.
    assert!(member["stats"]["queries"].as_u64().unwrap() <= 2, "{out}");
}
