//! `idf-verify lsp` driven over pipes with JSON-RPC, as an editor would: initialize,
//! open a document, diagnostics (ids, lines, related information, counterexamples),
//! code lenses, hover, an edit that fixes the error, shutdown and exit; input errors;
//! a member that times out beside quick ones; and bad input of every kind (malformed
//! frames, unknown methods, invalid params, a huge file), which gets error responses
//! per the protocol while the server goes on.

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long any single expected message may take (a guard against a hung server,
/// not a performance assertion).
const PATIENCE: Duration = Duration::from_secs(180);

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    /// Messages read but not yet asked for.
    queue: VecDeque<Value>,
    next_id: i64,
}

fn read_frame(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            length = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_idf-verify"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start idf-verify lsp");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            while let Some(v) = read_frame(&mut stdout) {
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Client { child, stdin, rx, queue: VecDeque::new(), next_id: 1 }
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        self.raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Send a request and wait for its response.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(&format!("the response to {method}"), |m| {
            m["id"] == json!(id) && m.get("method").is_none()
        })
    }

    /// The first message (read or queued) that `pred` accepts; the others stay queued.
    fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.queue.iter().position(&pred) {
            return self.queue.remove(i).unwrap();
        }
        loop {
            match self.rx.recv_timeout(PATIENCE) {
                Ok(m) if pred(&m) => return m,
                Ok(m) => self.queue.push_back(m),
                Err(_) => panic!("no {what}; read instead: {:#?}", self.queue),
            }
        }
    }

    fn initialize(&mut self, options: Value) {
        let r = self.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": options}),
        );
        assert_eq!(r["result"]["capabilities"]["hoverProvider"], json!(true), "{r}");
        assert_eq!(r["result"]["capabilities"]["textDocumentSync"]["change"], json!(1), "{r}");
        self.notify("initialized", json!({}));
    }

    fn open(&mut self, uri: &str, version: i64, text: &str) {
        let doc = json!({"uri": uri, "languageId": "jv", "version": version, "text": text});
        self.notify("textDocument/didOpen", json!({ "textDocument": doc }));
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// The diagnostics of `version` once its run is done: the last ones published
    /// before the server logs the end of that run.
    fn settled(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let marker = format!("{uri} v{version}: ");
        self.wait_for(&format!("the end of the run of {marker}"), |m| {
            m["method"] == "window/logMessage"
                && m["params"]["message"].as_str().is_some_and(|s| s.starts_with(&marker))
        });
        let mut last = None;
        while let Some(i) = self.queue.iter().position(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == json!(uri)
        }) {
            let m = self.queue.remove(i).unwrap();
            assert!(
                m["params"]["version"].as_i64().is_some_and(|v| v <= version),
                "diagnostics of a newer version before the run of v{version} ended: {m}"
            );
            last = Some(m);
        }
        let last = last.unwrap_or_else(|| panic!("no diagnostics for v{version}"));
        assert_eq!(last["params"]["version"], json!(version), "{last}");
        last["params"]["diagnostics"].as_array().unwrap().clone()
    }

    fn lenses(&mut self, uri: &str) -> Vec<(u64, String)> {
        let r = self.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}}));
        r["result"]
            .as_array()
            .unwrap_or_else(|| panic!("{r}"))
            .iter()
            .map(|l| {
                (
                    l["range"]["start"]["line"].as_u64().unwrap(),
                    l["command"]["title"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn hover(&mut self, uri: &str, line: u64, character: u64) -> Value {
        let params = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}});
        self.request("textDocument/hover", params)["result"].clone()
    }

    /// `shutdown`, `exit`, and the process's exit status.
    fn finish(mut self) -> i32 {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "{r}");
        assert!(r.get("error").is_none(), "{r}");
        self.notify("exit", Value::Null);
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

fn failing_text() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lsp/failing.jv")).unwrap()
}

fn codes_and_lines(diags: &[Value]) -> Vec<(String, u64)> {
    diags
        .iter()
        .map(|d| {
            (d["code"].as_str().unwrap().to_string(), d["range"]["start"]["line"].as_u64().unwrap())
        })
        .collect()
}

const URI: &str = "file:///work/failing.jv";

#[test]
fn diagnostics_lenses_hover_then_a_fix_clears_them() {
    let mut c = Client::start();
    c.initialize(json!({"debounceMs": 50}));
    let text = failing_text();
    c.open(URI, 1, &text);
    let diags = c.settled(URI, 1);
    assert_eq!(
        codes_and_lines(&diags),
        [("assert.failed".to_string(), 15), ("call.precondition".to_string(), 21)],
        "{diags:#?}"
    );
    let assert_failed = &diags[0];
    assert_eq!(assert_failed["source"], "idf-verify");
    let message = assert_failed["message"].as_str().unwrap();
    assert!(message.contains("counterexample:") && message.contains("a.balance = 5"), "{message}");
    assert!(message.contains("confirmed by execution"), "{message}");
    // The callee's failing conjunct is related information, in the callee's contract.
    let related = &diags[1]["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], URI, "{related}");
    assert_eq!(related["location"]["range"]["start"]["line"], 8, "{related}");
    assert!(related["message"].as_str().unwrap().contains("n > 0"), "{related}");

    let lenses = c.lenses(URI);
    let by_line: Vec<(u64, &str)> =
        lenses.iter().map(|(l, t)| (*l, t.split(' ').next().unwrap())).collect();
    assert_eq!(
        by_line,
        [(5, "verified"), (7, "verified"), (12, "failed"), (18, "failed")],
        "{lenses:?}"
    );
    assert!(lenses[0].1.ends_with(" ms"), "{lenses:?}");

    // Hover on the failing assert: the state there, as --trace prints it.
    let h = c.hover(URI, 15, 6);
    let value = h["contents"]["value"].as_str().unwrap_or_else(|| panic!("{h}"));
    assert!(value.contains("Account.wrongSum") && value.contains("assert.failed"), "{value}");
    assert!(
        value.contains("store: a ↦") && value.contains("heap: ") && value.contains(".balance ↦"),
        "{value}"
    );
    assert!(value.contains("path condition: "), "{value}");
    // On the call before it: the state after the call.
    let h = c.hover(URI, 14, 6);
    assert!(h["contents"]["value"].as_str().is_some_and(|v| v.contains("a.deposit(5)")), "{h}");
    // In a verified member there is nothing to show.
    assert_eq!(c.hover(URI, 10, 6), Value::Null);

    let fixed =
        text.replace("a.balance == 6", "a.balance == 5").replace("deposit(0)", "deposit(1)");
    c.change(URI, 2, &fixed);
    assert_eq!(c.settled(URI, 2), Vec::<Value>::new());
    let lenses = c.lenses(URI);
    assert_eq!(lenses.len(), 4, "{lenses:?}");
    assert!(lenses.iter().all(|(_, t)| t.starts_with("verified ")), "{lenses:?}");
    // After an edit the old failure's hover is gone with it.
    assert_eq!(c.hover(URI, 15, 6), Value::Null);
    assert_eq!(c.finish(), 0);
}

#[test]
fn input_errors_are_diagnostics_with_their_ids() {
    let mut c = Client::start();
    c.initialize(json!({"debounceMs": 0}));
    c.open("file:///p.jv", 1, "class A {\n  void m() {\n    int x = ;\n  }\n}\n");
    let d = c.settled("file:///p.jv", 1);
    assert_eq!(codes_and_lines(&d), [("parse.error".to_string(), 2)], "{d:#?}");
    c.change("file:///p.jv", 2, "class A {\n  void m() {\n    bool x = 1;\n  }\n}\n");
    let d = c.settled("file:///p.jv", 2);
    assert_eq!(codes_and_lines(&d), [("type.error".to_string(), 2)], "{d:#?}");
    // No member was verified: no lens.
    assert!(c.lenses("file:///p.jv").is_empty());
    // Closing clears the diagnostics.
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": "file:///p.jv"}}));
    let m =
        c.wait_for("diagnostics after close", |m| m["method"] == "textDocument/publishDiagnostics");
    assert_eq!(m["params"]["diagnostics"], json!([]), "{m}");
    assert_eq!(c.finish(), 0);
}

#[test]
fn a_member_that_times_out_does_not_hold_back_the_others() {
    let hang = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/hang/nonlinear_timeout.jv"
    ))
    .unwrap();
    // The hanging member first, then quick members in the same file.
    let text = hang.replace(
        "\n}\n",
        "\n  static void quick(int y) requires y > 0; { assert y >= 1; }\n  static void wrong() { assert 1 == 2; }\n}\n",
    );
    let mut c = Client::start();
    c.initialize(json!({"timeout": 1, "jobs": 2}));
    c.open("file:///hang.jv", 1, &text);
    let d = c.settled("file:///hang.jv", 1);
    let codes: Vec<String> = codes_and_lines(&d).into_iter().map(|(c, _)| c).collect();
    assert_eq!(codes, ["verification.timeout", "assert.failed"], "{d:#?}");
    let titles: Vec<String> = c.lenses("file:///hang.jv").into_iter().map(|(_, t)| t).collect();
    assert_eq!(titles.len(), 3, "{titles:?}");
    assert_eq!(titles[0], "timeout");
    assert!(titles[1].starts_with("verified "), "{titles:?}");
    assert_eq!(titles[2], "failed");
    assert_eq!(c.finish(), 0);
}

#[test]
fn newer_versions_replace_older_runs() {
    let mut c = Client::start();
    c.initialize(json!({"debounceMs": 0}));
    let text = failing_text();
    c.open(URI, 1, &text);
    // Edits in quick succession: only the last one's results may stand.
    for v in 2..=6 {
        let t = text.replace("a.balance == 6", &format!("a.balance == {v}"));
        c.change(URI, v, &t);
    }
    let fixed = text.replace("a.balance == 6", "a.balance == 5");
    c.change(URI, 7, &fixed);
    let d = c.settled(URI, 7);
    assert_eq!(codes_and_lines(&d), [("call.precondition".to_string(), 21)], "{d:#?}");
    // Nothing from an older version arrives after the newest one settled.
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    assert!(
        !c.queue.iter().any(|m| m["method"] == "textDocument/publishDiagnostics"),
        "{:#?}",
        c.queue
    );
    assert_eq!(c.finish(), 0);
}

fn error_code(r: &Value) -> i64 {
    r["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error response: {r}"))
}

#[test]
fn bad_input_gets_error_responses_and_the_server_goes_on() {
    let mut c = Client::start();
    // Before initialize: requests are refused.
    let r = c.request("textDocument/hover", json!({}));
    assert_eq!(error_code(&r), -32002, "{r}");
    // Not JSON, and JSON that is not a message: errors with a null id.
    c.raw(b"Content-Length: 9\r\n\r\n{not json");
    let r = c.wait_for("a parse error", |m| m["id"].is_null() && m.get("error").is_some());
    assert_eq!(error_code(&r), -32700, "{r}");
    c.raw(b"Content-Length: 5\r\n\r\n[1,2]");
    let r = c.wait_for("an invalid request", |m| m["id"].is_null() && m.get("error").is_some());
    assert_eq!(error_code(&r), -32600, "{r}");
    // A header without a length, then a frame that is fine.
    c.raw(b"Content-Type: nothing\r\n\r\n");
    let r = c.wait_for("a header error", |m| m["id"].is_null() && m.get("error").is_some());
    assert_eq!(error_code(&r), -32700, "{r}");
    let r = c.request("initialize", json!({"capabilities": "not an object"}));
    assert_eq!(error_code(&r), -32602, "{r}");
    c.initialize(json!({"debounceMs": 0, "timeout": "ten"}));
    let r = c.request("initialize", json!({"capabilities": {}}));
    assert_eq!(error_code(&r), -32600, "{r}");
    let r = c.request("workspace/unknownThing", json!({}));
    assert_eq!(error_code(&r), -32601, "{r}");
    let r = c.request("textDocument/hover", json!({"textDocument": 3}));
    assert_eq!(error_code(&r), -32602, "{r}");
    // Unknown notifications are ignored; one with bad params is logged.
    c.notify("$/somethingNew", json!({}));
    c.notify("textDocument/didOpen", json!({"textDocument": {"uri": 5}}));
    let m = c.wait_for("a log of the bad didOpen", |m| m["method"] == "window/logMessage");
    assert!(m["params"]["message"].as_str().unwrap().contains("didOpen"), "{m}");
    // Requests about documents nobody opened, and positions past the end.
    assert_eq!(c.hover("file:///nowhere.jv", 99, 99), Value::Null);
    assert!(c.lenses("file:///nowhere.jv").is_empty());
    // A huge file: 200,000 comment lines, then a failing member.
    let mut huge = "// filler line of a huge file\n".repeat(200_000);
    huge.push_str("class H {\n  static void m() { assert 1 == 2; }\n}\n");
    c.open("file:///huge.jv", 1, &huge);
    let d = c.settled("file:///huge.jv", 1);
    assert_eq!(codes_and_lines(&d), [("assert.failed".to_string(), 200_001)], "{d:#?}");
    assert!(c.hover("file:///huge.jv", 200_001, 25).is_object());
    // A deeply nested expression and bytes that are not a program.
    let deep = format!(
        "class D {{ static void m() {{ assert {}1{} == 1; }} }}",
        "(".repeat(20_000),
        ")".repeat(20_000)
    );
    c.open("file:///deep.jv", 1, &deep);
    let d = c.settled("file:///deep.jv", 1);
    assert!(d.iter().all(|d| d["code"] != "internal.error"), "{d:#?}");
    c.open("file:///junk.jv", 1, "\u{0}\u{1}}}{{ class ( ; \u{feff}");
    let d = c.settled("file:///junk.jv", 1);
    assert_eq!(d[0]["code"], "parse.error", "{d:#?}");
    // An edit with a range (incremental sync, which the server did not ask for).
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///huge.jv", "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 200_001, "character": 27}, "end": {"line": 200_001, "character": 33}}, "text": "1 == 1"}
        ]}),
    );
    assert_eq!(c.settled("file:///huge.jv", 2), Vec::<Value>::new());
    // After shutdown, requests are refused; exit then ends with 0.
    let r = c.request("shutdown", Value::Null);
    assert_eq!(r["result"], Value::Null);
    let r = c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    assert_eq!(error_code(&r), -32600, "{r}");
    c.notify("exit", Value::Null);
    assert_eq!(c.child.wait().unwrap().code(), Some(0));
}

#[test]
fn exit_without_shutdown_and_a_closed_input_end_with_status_1() {
    let mut c = Client::start();
    c.initialize(json!({}));
    c.notify("exit", Value::Null);
    assert_eq!(c.child.wait().unwrap().code(), Some(1));
    let mut c = Client::start();
    c.initialize(json!({}));
    drop(c.stdin);
    assert_eq!(c.child.wait().unwrap().code(), Some(1));
}

/// The threads of the server's process now.
fn threads(c: &Client) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.child.id())).unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line["Threads:".len()..].trim().parse().unwrap()
}

/// A member whose query Z3 works on for minutes, ignoring its resource limit, but which
/// an interrupt stops (a product of four factors against a product of two primes).
const HARD: &str = "class N {\n  static void m(int x, int y, int z, int w)\n    requires x > 1 && y > 1 && z > 1 && w > 1;\n  {\n    assert x * y * z * w != 1000000016000000063;\n  }\n}\n";

/// Edits that cancel runs stuck in a hard query leave no solver work behind: each
/// cancelled run's query is interrupted, its worker ends, and the threads come back
/// to what an idle server has (Z3 keeps a few idle timer threads).
#[test]
fn cancelled_runs_leave_no_solver_work_behind() {
    let mut c = Client::start();
    // No time limit: without interrupts, every cancelled run's worker stays in Z3.
    c.initialize(json!({"timeout": null, "debounceMs": 0, "jobs": 1}));
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    let idle = threads(&c);
    c.open(URI, 1, HARD);
    for v in 2..=12 {
        std::thread::sleep(Duration::from_millis(300));
        c.change(URI, v, &format!("{HARD}// edit {v}\n"));
    }
    let easy = "class N {\n  static void m(int x) requires x > 1; { assert x * x > 1; }\n}\n";
    c.change(URI, 13, easy);
    let d = c.settled(URI, 13);
    assert!(d.is_empty(), "{d:#?}");
    let start = std::time::Instant::now();
    while threads(&c) > idle + 4 {
        assert!(start.elapsed() < Duration::from_secs(60), "threads: {}", threads(&c));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(c.finish(), 0);
}

/// A member whose query ignores interrupts too (Z3 4.8.12's nlsat on a long product),
/// from tests/hang/nonlinear_timeout.jv.
fn deaf(edit: usize) -> String {
    let product = vec!["x"; 50].join(" * ");
    format!(
        "class C {{\n  static void power(int x) {{\n    int k = {edit};\n    if (x > {product}) {{ }}\n  }}\n}}\n"
    )
}

/// Edits inside a member whose query cannot be stopped leave at most that one busy
/// thread behind, not one more per edit: while it runs, the member (by name) is
/// reported as a timeout at once instead of run again.
#[test]
fn edits_inside_a_member_deaf_to_interrupts_leave_one_busy_thread() {
    let mut c = Client::start();
    c.initialize(json!({"timeout": 1, "debounceMs": 0, "jobs": 1}));
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    let idle = threads(&c);
    c.open(URI, 1, &deaf(1));
    let d = c.settled(URI, 1);
    assert_eq!(codes_and_lines(&d), [("verification.timeout".to_string(), 1)], "{d:#?}");
    for v in 2..=6 {
        c.change(URI, v, &deaf(v as usize));
        let d = c.settled(URI, v);
        assert_eq!(codes_and_lines(&d), [("verification.timeout".to_string(), 1)], "{d:#?}");
    }
    // The first run's worker stays in Z3 (and Z3 keeps a few idle timer threads); each
    // later edit would otherwise have left one more.
    let busy = threads(&c);
    assert!(busy <= idle + 4, "{busy} threads, {idle} idle");
    assert_eq!(c.finish(), 0);
}

/// Runs in flight are bounded by `jobs`: documents opened while the one slot is taken
/// wait (no thread of theirs starts), run in their newest version when their turn
/// comes, and a document closed while it waits is never run.
#[test]
fn runs_wait_for_a_slot_and_run_their_newest_version() {
    let mut c = Client::start();
    c.initialize(json!({"timeout": 3, "debounceMs": 0, "jobs": 1}));
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    let idle = threads(&c);
    c.open("file:///hard.jv", 1, HARD);
    let quick = "class Q {\n  static void m(int y) requires y > 0; { assert y >= 1; }\n}\n";
    for i in 0..12 {
        c.open(&format!("file:///q{i}.jv"), 1, quick);
    }
    c.change("file:///q0.jv", 2, &quick.replace("y >= 1", "y >= 2"));
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": "file:///q1.jv"}}));
    // Once the server has read all that (it answers in order): one run and its worker
    // (and Z3's timer), whatever is waiting.
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": "file:///q2.jv"}}));
    let busy = threads(&c);
    assert!(busy <= idle + 4, "{busy} threads, {idle} idle");
    let d = c.settled("file:///hard.jv", 1);
    assert_eq!(codes_and_lines(&d), [("verification.timeout".to_string(), 1)], "{d:#?}");
    let d = c.settled("file:///q0.jv", 2);
    assert_eq!(codes_and_lines(&d), [("assert.failed".to_string(), 1)], "{d:#?}");
    for i in 2..12 {
        assert!(c.settled(&format!("file:///q{i}.jv"), 1).is_empty());
    }
    let logs: Vec<String> = c
        .queue
        .iter()
        .filter(|m| m["method"] == "window/logMessage")
        .map(|m| m["params"]["message"].to_string())
        .collect();
    assert!(!logs.iter().any(|l| l.contains("q0.jv v1:") || l.contains("q1.jv")), "{logs:?}");
    assert_eq!(c.finish(), 0);
}

/// A request whose id the server cannot take is answered: with its id when that is a
/// valid JSON-RPC id (an integer of any size), else with id null; framing holds after
/// a header line without a colon.
#[test]
fn requests_with_odd_ids_are_answered_with_their_ids() {
    let mut c = Client::start();
    c.initialize(json!({}));
    c.raw(b"Content-Length: 63\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":2147483648,\"method\":\"textDocument/hover\"}");
    let r = c.wait_for("an error for id 2147483648", |m| m.get("error").is_some());
    assert_eq!(r["id"], json!(2147483648u64), "{r}");
    c.raw(b"Content-Length: 57\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"textDocument/hover\"}");
    let r = c.wait_for("an error for id true", |m| m.get("error").is_some());
    assert!(r["id"].is_null(), "{r}");
    c.raw(b"Garbage without a colon\r\n\r\n");
    let r = c.wait_for("an error for the garbage", |m| m.get("error").is_some());
    assert!(r["id"].is_null(), "{r}");
    let r = c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    assert!(r["result"].is_array(), "{r}");
    assert_eq!(c.finish(), 0);
}

/// Apply LSP text edits (UTF-16 positions, here ASCII) to `text`, last first.
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let (line, ch) =
            (p["line"].as_u64().unwrap() as usize, p["character"].as_u64().unwrap() as usize);
        text.split_inclusive('\n').take(line).map(str::len).sum::<usize>() + ch
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (a, b, t) in spans {
        out.replace_range(a..b, t);
    }
    out
}

#[test]
fn a_suggested_fix_is_a_quick_fix_whose_edit_verifies() {
    let text = "class Account {\n  int n;\n  void deposit(int k)\n    requires k > 0;\n  {\n    n = n + k;\n  }\n}\n";
    let uri = "file:///work/fix.jv";
    let mut c = Client::start();
    let r = c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": {"debounceMs": 50}}),
    );
    assert_eq!(r["result"]["capabilities"]["codeActionProvider"], json!(true), "{r}");
    c.notify("initialized", json!({}));
    c.open(uri, 1, text);
    let diags = c.settled(uri, 1);
    assert_eq!(codes_and_lines(&diags), [("insufficient.permission".to_string(), 5)], "{diags:#?}");
    let message = diags[0]["message"].as_str().unwrap();
    assert!(message.contains("help: add `requires acc(this.n);`"), "{message}");
    // Asked on the failing line: one quick fix; elsewhere, none.
    let ask = |line: u64| {
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 3}},
               "context": {"diagnostics": []}})
    };
    let r = c.request("textDocument/codeAction", ask(5));
    let actions = r["result"].as_array().unwrap_or_else(|| panic!("{r}")).clone();
    assert_eq!(actions.len(), 1, "{r}");
    let a = &actions[0];
    assert_eq!(a["kind"], "quickfix", "{a}");
    assert_eq!(a["title"], "add `requires acc(this.n);` to the precondition", "{a}");
    assert_eq!(a["diagnostics"][0]["code"], "insufficient.permission", "{a}");
    let edits = a["edit"]["changes"][uri].as_array().unwrap_or_else(|| panic!("{a}"));
    let fixed = apply_edits(text, edits);
    assert!(fixed.contains("    requires acc(this.n);\n    requires k > 0;"), "{fixed}");
    let r = c.request("textDocument/codeAction", ask(1));
    assert_eq!(r["result"], json!([]), "{r}");
    // The edit applied, the document verifies.
    c.change(uri, 2, &fixed);
    assert_eq!(c.settled(uri, 2), Vec::<Value>::new());
    assert_eq!(c.finish(), 0);
}

/// The server's resident memory now, in KiB.
fn rss_kib(c: &Client) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", c.child.id())).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line["VmRSS:".len()..].trim().trim_end_matches("kB").trim().parse().unwrap()
}

/// A document of `n` members, each a small nonlinear check (solver work per member).
fn many_members(n: usize, salt: usize) -> String {
    let mut s = String::from("class M {\n");
    for k in 0..n {
        s.push_str(&format!(
            "  static void m{k}(int x, int y) requires x > {k} && y > {salt}; {{ assert x * y + {k} > {k}; }}\n"
        ));
    }
    s.push_str("}\n");
    s
}

/// Closing documents gives their memory back: after several documents of many members
/// were verified, edited and closed, the server's resident memory comes back near what
/// it was before they were opened (a generous margin: a fraction of what they took).
#[test]
fn closed_documents_give_their_memory_back() {
    let mut c = Client::start();
    c.initialize(json!({"timeout": 10, "debounceMs": 0, "jobs": 2}));
    // Warm up: one small document verified and closed, so that the baseline includes
    // what the first run sets up once (Z3's global state, the workers' stacks).
    c.open("file:///warm.jv", 1, &many_members(4, 0));
    c.settled("file:///warm.jv", 1);
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": "file:///warm.jv"}}));
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    let before = rss_kib(&c);
    let uris: Vec<String> = (0..4).map(|d| format!("file:///doc{d}.jv")).collect();
    for (d, uri) in uris.iter().enumerate() {
        c.open(uri, 1, &many_members(150, d));
        c.settled(uri, 1);
        c.change(uri, 2, &many_members(150, d + 10));
        c.settled(uri, 2);
    }
    let open = rss_kib(&c);
    for uri in &uris {
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
    }
    c.request("textDocument/codeLens", json!({"textDocument": {"uri": URI}}));
    let grown = open.saturating_sub(before);
    // Poll (memory is given back once the last run has ended), no timing assertion:
    // the bound is on memory, the wait only ends the test when it never comes.
    let start = std::time::Instant::now();
    loop {
        let now = rss_kib(&c);
        if now <= before + grown / 2 + 8 * 1024 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "before {before} KiB, open {open} KiB, after every close {now} KiB"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("before {before} KiB, open {open} KiB, after close {} KiB", rss_kib(&c));
    assert_eq!(c.finish(), 0);
}
