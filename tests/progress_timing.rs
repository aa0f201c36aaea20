//! Progress and timing (issue 14, item 3), through the binary: `--stats` totals are the
//! sums of the per-member statistics, `--slowest N` lists N members slowest first (human,
//! and a JSON field only when asked), and no progress bar reaches a stderr that is not a
//! terminal. No assertion depends on how long anything took.

mod skip;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

/// (exit code, stdout, stderr), run in the crate's folder.
fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const FILES: [&str; 2] = ["examples/cell.jv", "tests/sarif/failing.jv"];

/// The number before `word` in `line` (`... 12 queries, ...`).
fn number_before(line: &str, word: &str) -> f64 {
    let at = line.find(&format!(" {word}")).unwrap_or_else(|| panic!("{word} in {line}"));
    let before = line[..at].rsplit([' ', '(']).next().unwrap();
    before.parse().unwrap_or_else(|_| panic!("{before} in {line}"))
}

#[test]
fn stats_totals_are_the_sums_of_the_members() {
    let (code, out, _) = run(&["--stats", FILES[0], FILES[1]]);
    assert_eq!(code, 1, "{out}");
    let per_member: Vec<&str> = out.lines().filter(|l| l.starts_with("    stats: ")).collect();
    let members = out.lines().filter(|l| l.starts_with("✓ ") || l.starts_with("✗ ")).count();
    assert_eq!(per_member.len(), members);
    assert!(members >= 10, "{out}");
    let total = out.lines().find(|l| l.starts_with("stats total (")).expect("a totals line");
    assert_eq!(number_before(total, "member"), members as f64, "{total}");
    for word in ["paths", "queries", "branches", "pushes"] {
        let sum: f64 = per_member.iter().map(|l| number_before(l, word)).sum();
        assert_eq!(number_before(total, word), sum, "{word}: {total}");
    }
    let z3: f64 = per_member.iter().map(|l| number_before(l, "ms in Z3")).sum();
    // Per-member times print to 0.1 ms: the total agrees within their rounding.
    assert!(
        (number_before(total, "ms in Z3") - z3).abs() <= 0.06 * members as f64 + 0.1,
        "{total}"
    );
    // The totals come after the summary line.
    let summary = out.lines().position(|l| l.contains(" verified, ")).unwrap();
    let totals = out.lines().position(|l| l.starts_with("stats total (")).unwrap();
    assert!(totals > summary);
    // Without --stats, neither.
    let (_, plain, _) = run(&[FILES[0]]);
    assert!(!plain.contains("stats"), "{plain}");
}

#[test]
fn stats_totals_in_json_are_the_sums() {
    let (_, out, _) = run(&["--format", "json", "--stats", FILES[0], FILES[1]]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let members: Vec<&Value> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["members"].as_array().unwrap())
        .collect();
    let totals = &doc["summary"]["stats"];
    assert_eq!(totals["members"].as_u64().unwrap() as usize, members.len());
    for key in ["paths", "queries", "branches", "pruned", "pushes"] {
        let sum: u64 = members.iter().map(|m| m["stats"][key].as_u64().unwrap()).sum();
        assert_eq!(totals[key].as_u64().unwrap(), sum, "{key}");
    }
    let z3: f64 = members.iter().map(|m| m["stats"]["z3_ms"].as_f64().unwrap()).sum();
    assert!((totals["z3_ms"].as_f64().unwrap() - z3).abs() < 0.01);
    // Not asked for: absent.
    let (_, out, _) = run(&["--format", "json", FILES[0]]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert!(doc["summary"].get("stats").is_none());
    assert!(doc.get("slowest").is_none());
}

/// The `slowest members:` block: (name, file, ms, verdict) per line.
fn slowest_lines(out: &str) -> Vec<(String, String, f64, String)> {
    let lines: Vec<&str> = out.lines().collect();
    let start = lines.iter().position(|l| l.starts_with("slowest member")).expect("a list");
    lines[start + 1..]
        .iter()
        .take_while(|l| l.starts_with("  "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 6, "{l}");
            assert_eq!(w[4], "ms", "{l}");
            (w[1].to_string(), w[2].to_string(), w[3].parse().unwrap(), w[5].to_string())
        })
        .collect()
}

#[test]
fn slowest_lists_n_members_slowest_first() {
    let (code, out, _) = run(&["--slowest", "3", FILES[0], FILES[1]]);
    assert_eq!(code, 1);
    let list = slowest_lines(&out);
    assert_eq!(list.len(), 3, "{out}");
    for (name, file, _, verdict) in &list {
        assert!(FILES.contains(&file.as_str()), "{file}");
        assert!(["verified", "failed", "timeout"].contains(&verdict.as_str()));
        // The member's own line says the same verdict.
        assert!(out.lines().any(|l| l.contains(&format!(" {name} {verdict} ("))), "{name}: {out}");
    }
    assert!(list.windows(2).all(|w| w[0].2 >= w[1].2), "{list:?}");
    // More than there are: all of them.
    let (_, out, _) = run(&["--slowest", "100", FILES[0]]);
    let members = out.lines().filter(|l| l.starts_with("✓ ") || l.starts_with("✗ ")).count();
    assert_eq!(slowest_lines(&out).len(), members);
    // Not asked: no list; 0 is a usage error.
    let (_, out, _) = run(&[FILES[0]]);
    assert!(!out.contains("slowest"));
    let (code, _, _) = run(&["--slowest", "0", FILES[0]]);
    assert_eq!(code, 2);
}

#[test]
fn slowest_in_json_and_jsonl_only_when_asked() {
    let (_, out, _) = run(&["--format", "json", "--slowest", "2", FILES[0], FILES[1]]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    let list = doc["slowest"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    let times: Vec<f64> = list.iter().map(|s| s["time_ms"].as_f64().unwrap()).collect();
    assert!(times[0] >= times[1]);
    for s in list {
        let member = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["path"] == s["file"])
            .flat_map(|f| f["members"].as_array().unwrap())
            .find(|m| m["name"] == s["name"])
            .expect("the member is in the document");
        assert_eq!(member["status"], s["status"]);
        assert_eq!(member["time_ms"], s["time_ms"]);
    }
    let (_, out, _) = run(&["--format", "jsonl", "--slowest", "1", FILES[0]]);
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(last["slowest"].as_array().unwrap().len(), 1);
    let (_, out, _) = run(&["--format", "jsonl", FILES[0]]);
    let last: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert!(last.get("slowest").is_none() && last.get("summary").is_some());
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    // The bar's text (`N/M files, ...`) never reaches a piped stderr, nor stdout.
    for format in ["human", "json", "jsonl", "sarif"] {
        let (_, out, err) = run(&["--format", format, FILES[0], FILES[1]]);
        assert!(!err.contains("files,") && !err.contains('\r'), "{format}: {err}");
        assert!(!out.contains("files, "), "{format}");
    }
}

/// Run under a pseudo-terminal (util-linux `script`; stdout and stderr both the
/// terminal): the raw bytes, or `None` when `script` is not there.
fn on_a_terminal(args: &str) -> Option<String> {
    let probe = Command::new("script").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        skip::skipped("no `script` (util-linux) here: the terminal checks did not run");
        return None;
    }
    let out = Command::new("script")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .args(["-qec", &format!("{} {args}", bin()), "/dev/null"])
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What a terminal shows of `raw`: a carriage return followed by "erase line" wipes the
/// line so far (the bar being taken off the screen), colours are dropped.
fn screen(raw: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in raw.split('\n') {
        let line = line.trim_end_matches('\r');
        let kept = line.rsplit("\r\x1b[2K").next().unwrap_or("");
        let mut plain = String::new();
        let mut chars = kept.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                // CSI: up to the final byte (a letter).
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                plain.push(c);
            }
        }
        lines.push(plain);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// Times masked (`(1.2 ms)`, `in 3.4 ms`).
fn untimed(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match (l.rfind(" ("), l.rfind(" in ")) {
            (Some(i), _) if l.ends_with(" ms)") => format!("{} (T)", &l[..i]),
            (_, Some(i)) if l.ends_with(" ms") => format!("{} in T", &l[..i]),
            _ => l.clone(),
        })
        .collect()
}

#[test]
fn on_a_terminal_the_bar_never_garbles_the_output() {
    let args = format!("{} {}", FILES[0], FILES[1]);
    let Some(raw) = on_a_terminal(&args) else { return };
    assert!(raw.contains("members, "), "the bar was drawn: {raw:?}");
    let (_, piped, _) = run(&FILES);
    let piped: Vec<String> = piped.lines().map(str::to_string).collect();
    assert_eq!(untimed(&screen(&raw)), untimed(&piped));
}

#[test]
fn on_a_terminal_machine_formats_have_no_bar() {
    for format in ["json", "sarif"] {
        let Some(raw) = on_a_terminal(&format!("--format {format} {} {}", FILES[0], FILES[1]))
        else {
            return;
        };
        let text = raw.replace("\r\n", "\n");
        let doc: Result<Value, _> = serde_json::from_str(&text);
        assert!(doc.is_ok(), "{format}: {text:?}");
    }
    let Some(raw) = on_a_terminal(&format!("--format jsonl {}", FILES[0])) else { return };
    for line in raw.replace("\r\n", "\n").lines() {
        assert!(serde_json::from_str::<Value>(line).is_ok(), "{line:?}");
    }
}
