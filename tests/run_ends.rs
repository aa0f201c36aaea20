//! Every run ends, and reports what it did (issue: a CI gate that cannot be fooled):
//! a member whose solver query ignores `--timeout` is abandoned and reported as a
//! timeout while the quick members beside it are reported; Ctrl-C stops a batch with
//! exit 130 and reports what finished; `--format jsonl` streams one record per member.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

/// A folder holding the nonlinear hang and the examples.
fn batch(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = std::env::temp_dir().join(format!("idf-ends-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(root.join("tests/hang/nonlinear_timeout.jv"), d.join("a_hang.jv")).unwrap();
    for f in ["cell.jv", "stack.jv", "account.jv"] {
        std::fs::copy(root.join("examples").join(f), d.join(f)).unwrap();
    }
    d
}

/// Run to the end, killing the child after `limit` (then `None`).
fn run_with_limit(mut cmd: Command, limit: Duration) -> Option<(i32, String)> {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            return Some((out.status.code().unwrap_or(-1), text));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_query_that_ignores_its_timeout_does_not_stop_the_run() {
    let d = batch("timeout");
    let mut cmd = Command::new(bin());
    cmd.args(["--no-cache", "--timeout", "2"]).arg(&d);
    let (code, out) = run_with_limit(cmd, Duration::from_secs(120)).expect("the run ends");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("C.power timeout"), "{out}");
    assert!(out.contains("verification.timeout"), "{out}");
    assert!(out.contains("Cell.setX verified") && out.contains("Stack.push verified"), "{out}");
}

#[test]
fn ctrl_c_stops_a_batch_and_reports_what_finished() {
    use std::io::Read;
    let d = batch("sigint");
    // The hang last: the members before it stream out while it holds its worker.
    std::fs::rename(d.join("a_hang.jv"), d.join("z_hang.jv")).unwrap();
    let mut child =
        Command::new(bin()).arg("--no-cache").arg(&d).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // Wait (however loaded the machine) until every quick member is reported and the
    // hang is under way, then interrupt.
    let mut text = String::new();
    let start = Instant::now();
    while !text.contains("StackClient.main") {
        assert!(start.elapsed() < Duration::from_secs(120), "the quick members: {text}");
        if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(100)) {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let (stx, srx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = stx.send(child.wait());
    });
    let status = srx.recv_timeout(Duration::from_secs(60)).expect("exits after Ctrl-C").unwrap();
    while let Ok(chunk) = rx.recv_timeout(Duration::from_millis(500)) {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("interrupted"), "{text}");
    assert!(!text.contains("timeout ("), "Ctrl-C is not a timeout: {text}");
    assert!(text.contains("Cell.setX verified"), "{text}");
    assert!(!text.contains("C.power"), "the stuck member is not reported: {text}");
}

#[test]
fn json_lines_stream_one_record_per_member() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(bin());
    cmd.args(["--no-cache", "--format", "jsonl"]).arg(root.join("examples/cell.jv"));
    let (code, out) = run_with_limit(cmd, Duration::from_secs(60)).expect("ends");
    assert_eq!(code, 0, "{out}");
    let records: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).expect("one JSON value per line")).collect();
    let last = records.last().expect("records");
    assert_eq!(last["summary"]["failed"], 0);
    let members: Vec<&str> = records.iter().filter_map(|r| r["member"]["name"].as_str()).collect();
    assert!(members.contains(&"Cell.setX"), "{members:?}");
    assert_eq!(members.len() as u64, last["summary"]["verified"].as_u64().unwrap());
}

#[test]
fn a_run_deadline_ends_the_run_and_reports_the_rest_as_timeouts() {
    let d = batch("deadline");
    let mut cmd = Command::new(bin());
    // No per-member budget: only the run's deadline stops the hang.
    cmd.args(["--no-cache", "--deadline", "3", "--jobs", "1"]).arg(&d);
    let (code, out) = run_with_limit(cmd, Duration::from_secs(120)).expect("the run ends");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("C.power timeout"), "{out}");
    assert!(out.contains("--deadline passed"), "{out}");
}

/// `--rlimit` bounds every solver query by Z3's resource count, not by time: the same
/// verdict on any machine and under any load. A budget too small for a query reports
/// a timeout; `--rlimit 0` lifts the limit.
#[test]
fn a_resource_limit_is_a_deterministic_budget() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = root.join("examples/account.jv");
    let run = |rlimit: &str| {
        let out = Command::new(bin())
            .args(["--no-cache", "--rlimit", rlimit, "--method", "Account.withdrawUpTo"])
            .arg(&file)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (code, text) = run("1");
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("Account.withdrawUpTo timeout"), "{text}");
    assert_eq!(run("1").0, Some(1), "the same verdict again");
    for enough in ["0", "20000000"] {
        let (code, text) = run(enough);
        assert_eq!(code, Some(0), "--rlimit {enough}: {text}");
    }
}

/// SIGTERM and SIGHUP stop a run as Ctrl-C does: what finished is reported as a whole
/// document (JSON Lines with its summary record; one JSON document), exit 128 + the
/// signal's number.
#[test]
fn sigterm_and_sighup_report_what_finished() {
    use std::io::Read;
    for (signal, code, format) in
        [("TERM", 143, "jsonl"), ("HUP", 129, "json"), ("TERM", 143, "sarif")]
    {
        let d = batch(&format!("sig{signal}"));
        std::fs::rename(d.join("a_hang.jv"), d.join("z_hang.jv")).unwrap();
        let mut child = Command::new(bin())
            .args(["--no-cache", "--jobs", "1", "--format", format])
            .arg(&d)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let mut text = String::new();
        if format == "jsonl" {
            // Wait until the quick members are reported and the hang is under way.
            let start = Instant::now();
            while !text.contains("StackClient.main") {
                assert!(start.elapsed() < Duration::from_secs(120), "{text}");
                if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(100)) {
                    text.push_str(&String::from_utf8_lossy(&chunk));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(1500));
        let _ =
            Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
        let (stx, srx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = stx.send(child.wait());
        });
        let status = srx.recv_timeout(Duration::from_secs(60)).expect("exits").unwrap();
        while let Ok(chunk) = rx.recv_timeout(Duration::from_millis(500)) {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert_eq!(status.code(), Some(code), "{signal}: {text}");
        if format == "jsonl" {
            let last = text.lines().last().unwrap_or_default();
            let record: serde_json::Value = serde_json::from_str(last).unwrap();
            assert!(record.get("summary").is_some(), "{signal}: {text}");
            assert!(text.contains("Cell.setX"), "{signal}: {text}");
        } else if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(doc["summary"].is_object(), "{signal}: {text}");
            assert_eq!(doc["summary"]["interrupted"], true, "{signal}: {text}");
        } else {
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(doc["runs"][0]["results"].is_array(), "{signal}: {text}");
            // The document states the status the process exits with.
            let invocation = &doc["runs"][0]["invocations"][0];
            assert_eq!(invocation["exitCode"], code, "{signal}: {text}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// A member whose query ignores its limits and interrupts alike keeps its thread busy
/// for good: the same member, unchanged, is not verified again in that process (a
/// timeout at once), so that no second thread is lost to it.
#[test]
fn a_member_that_could_not_be_stopped_is_not_run_again() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = std::env::temp_dir().join(format!("idf-ends-{}-stuck", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for name in ["a.jv", "b.jv"] {
        std::fs::copy(root.join("tests/hang/nonlinear_timeout.jv"), d.join(name)).unwrap();
    }
    let mut cmd = Command::new(bin());
    cmd.args(["--no-cache", "--jobs", "1", "--timeout", "1"]).arg(&d);
    let (code, out) = run_with_limit(cmd, Duration::from_secs(120)).expect("the run ends");
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("C.power timeout").count(), 2, "{out}");
    assert!(out.contains("solver query was abandoned"), "{out}");
    assert!(out.contains("not verified again"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A member whose query Z3 works on for minutes unless interrupted (a product of four
/// factors against a product of two primes), after quick ones.
const HARD_LAST: &str = "class Q {\n  static void m(int y) requires y > 0; { assert y >= 1; }\n}\nclass N {\n  static void m(int x, int y, int z, int w)\n    requires x > 1 && y > 1 && z > 1 && w > 1;\n  {\n    assert x * y * z * w != 1000000016000000063;\n  }\n}\n";

/// `idf-verify test` stops on SIGTERM and SIGHUP as verification does: the member under
/// way is interrupted and left out, what finished is reported with its summary and
/// `interrupted`, exit 128 + the signal's number.
#[test]
fn signals_stop_idf_verify_test_and_report_what_finished() {
    use std::io::BufRead;
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let d = std::env::temp_dir().join(format!("idf-ends-{}-test{signal}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("hard.jv"), HARD_LAST).unwrap();
        let mut child = Command::new(bin())
            .arg("test")
            .arg(&d)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        // Once the quick member is reported, the hard one is under way.
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        assert!(first.contains("Q.m"), "{first}");
        let _ =
            Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
        let mut rest = String::new();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = std::io::Read::read_to_string(&mut out, &mut rest);
            let _ = tx.send((child.wait(), rest));
        });
        let (status, rest) = rx.recv_timeout(Duration::from_secs(60)).expect("exits");
        assert_eq!(status.unwrap().code(), Some(code), "{signal}: {rest}");
        assert!(!rest.contains("N.m"), "{signal}: {rest}");
        assert!(rest.contains("1 members,"), "{signal}: {rest}");
        assert!(rest.contains("interrupted: members that had not finished"), "{signal}: {rest}");
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// `idf-verify test` ends at the first signal even while the member under way is in a
/// solver query that ignores interrupts (the path exploration of the nonlinear hang):
/// what finished is reported, exit 128 + the signal's number, no second signal needed.
#[test]
fn one_signal_stops_idf_verify_test_in_a_query_that_ignores_interrupts() {
    use std::io::BufRead;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hang = std::fs::read_to_string(root.join("tests/hang/nonlinear_timeout.jv")).unwrap();
    let quick = "class Q {\n  static void m(int y) requires y > 0; { assert y >= 1; }\n}\n";
    for (signal, code, format) in [("TERM", 143, "human"), ("INT", 130, "json")] {
        let d = std::env::temp_dir().join(format!("idf-ends-{}-stuck{signal}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("a_quick.jv"), quick).unwrap();
        std::fs::write(d.join("b_hang.jv"), &hang).unwrap();
        let mut child = Command::new(bin())
            .args(["test", "--format", format])
            .arg(&d)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The quick file comes first; once its member is done (stderr is quiet, so
        // wait for the path exploration of the hang to be under way a while).
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut line = String::new();
            while err.read_line(&mut line).is_ok_and(|n| n > 0) {
                line.clear();
            }
        });
        std::thread::sleep(Duration::from_secs(3));
        let _ =
            Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
        let mut out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut text);
            let _ = tx.send((child.wait(), text));
        });
        // One signal is enough: without it stopping, the query runs for minutes.
        let (status, text) = rx.recv_timeout(Duration::from_secs(60)).expect("exits");
        assert_eq!(status.unwrap().code(), Some(code), "{signal}: {text}");
        assert!(!text.contains("C.power"), "{signal}: {text}");
        if format == "json" {
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(doc["summary"]["interrupted"], true, "{text}");
            assert_eq!(doc["summary"]["members"], 1, "{text}");
        } else {
            assert!(text.contains("Q.m"), "{text}");
            assert!(text.contains("interrupted: members that had not finished"), "{text}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
