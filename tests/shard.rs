//! Sharding (issue 13, item 6): `--shard K/N` splits a batch by member; the union of
//! the shards' members is the unsharded run's, disjoint; each file's input errors are
//! reported by one shard; `idf-verify merge` gives back the unsharded JSON document
//! (modulo times) and its exit status, and refuses documents that do not merge.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("idf-shard-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn paths() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["examples", "tests/debugging", "tests/programs/frontend"]
        .iter()
        .map(|d| root.join(d))
        .collect()
}

fn run(args: &[&str], paths: &[PathBuf]) -> (i32, String) {
    // A solver budget: a query that never ends fails the test instead of hanging it.
    let budget: &[&str] = if args.contains(&"--timeout") { &[] } else { &["--timeout", "30"] };
    let out = Command::new(bin()).args(budget).args(args).args(paths).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// (file, member) of every member of a document.
fn members(doc: &Value) -> Vec<(String, String)> {
    let mut out = vec![];
    for f in doc["files"].as_array().unwrap() {
        for m in f["members"].as_array().unwrap() {
            out.push((f["path"].as_str().unwrap().into(), m["name"].as_str().unwrap().into()));
        }
    }
    out
}

/// Files with input errors, with their diagnostics.
fn input_errors(doc: &Value) -> Vec<(String, Value)> {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] != "ok")
        .map(|f| (f["path"].as_str().unwrap().to_string(), f["diagnostics"].clone()))
        .collect()
}

fn without_times(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "time_ms")
                .map(|(k, v)| (k.clone(), without_times(v)))
                .collect(),
        ),
        Value::Array(xs) => Value::Array(xs.iter().map(without_times).collect()),
        other => other.clone(),
    }
}

fn merge(files: &[PathBuf]) -> (i32, String, String) {
    let out = Command::new(bin()).arg("merge").args(files).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn shards_partition_the_members_and_merge_back_into_the_unsharded_run() {
    let dir = scratch("merge");
    let ps = paths();
    let (code, whole) = run(&["--no-cache", "--format", "json"], &ps);
    let whole = json(&whole);
    assert_eq!(code, 2, "the batch has input errors");
    let all = members(&whole);
    assert!(all.len() > 100);
    for n in [1usize, 2, 3] {
        let mut seen: Vec<(String, String)> = vec![];
        let mut errors: Vec<(String, Value)> = vec![];
        let mut docs = vec![];
        // `--jobs` differs per shard: the split does not depend on it.
        for k in 1..=n {
            let shard = format!("{k}/{n}");
            let jobs = format!("{}", k % 2 + 1);
            let (code, out) =
                run(&["--no-cache", "--format", "json", "--shard", &shard, "--jobs", &jobs], &ps);
            let doc = json(&out);
            assert!(matches!(code, 0..=2), "{out}");
            seen.extend(members(&doc));
            errors.extend(input_errors(&doc));
            assert_eq!(doc["shard"]["index"], k);
            let f = dir.join(format!("shard-{k}-of-{n}.json"));
            std::fs::write(&f, out).unwrap();
            docs.push(f);
        }
        // Disjoint, and together every member of the unsharded run.
        let unique: BTreeSet<&(String, String)> = seen.iter().collect();
        assert_eq!(unique.len(), seen.len(), "a member in two shards of {n}");
        assert_eq!(unique, all.iter().collect::<BTreeSet<_>>(), "shards of {n}");
        // Each file's input errors, once.
        errors.sort_by(|a, b| a.0.cmp(&b.0));
        let mut expected = input_errors(&whole);
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(errors, expected);
        // Merged (in any order of the documents): the unsharded document, modulo times.
        docs.reverse();
        let (code, merged, err) = merge(&docs);
        assert_eq!(code, 2, "{err}");
        assert_eq!(without_times(&json(&merged)), without_times(&whole), "merge of {n}");
        // Keys come out in the schema's order.
        let text_keys = |t: &str| -> Vec<String> {
            t.lines()
                .filter_map(|l| l.trim_start().strip_prefix('"'))
                .filter_map(|l| l.split('"').next().map(str::to_string))
                .collect()
        };
        let whole_text = run(&["--no-cache", "--format", "json"], &ps).1;
        assert_eq!(text_keys(&merged), text_keys(&whole_text));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_merged_exit_status_is_the_unsharded_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("status");
    for (paths, code) in [
        (vec![root.join("examples/cell.jv")], 0),
        (vec![root.join("examples/cell.jv"), root.join("tests/debugging")], 1),
    ] {
        let (whole, _) = run(&["--no-cache"], &paths);
        assert_eq!(whole, code);
        let docs: Vec<PathBuf> = (1..=2)
            .map(|k| {
                let (_, out) =
                    run(&["--no-cache", "--format", "json", "--shard", &format!("{k}/2")], &paths);
                let f = dir.join(format!("{code}-{k}.json"));
                std::fs::write(&f, out).unwrap();
                f
            })
            .collect();
        assert_eq!(merge(&docs).0, code);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn documents_that_do_not_merge_are_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("refused");
    let cell = vec![root.join("examples")];
    let shard = |k: usize, n: usize, paths: &[PathBuf]| {
        let (_, out) =
            run(&["--no-cache", "--format", "json", "--shard", &format!("{k}/{n}")], paths);
        let f = dir.join(format!("{k}-{n}-{}.json", paths.len()));
        std::fs::write(&f, out).unwrap();
        f
    };
    let (a, b) = (shard(1, 2, &cell), shard(2, 2, &cell));
    assert_eq!(merge(&[a.clone(), b.clone()]).0, 0);
    let other = shard(2, 2, &[root.join("examples"), root.join("tests/debugging")]);
    let plain = dir.join("plain.json");
    std::fs::write(&plain, run(&["--no-cache", "--format", "json"], &cell).1).unwrap();
    let garbage = dir.join("garbage.json");
    std::fs::write(&garbage, [0xff, 0x7b, 0x00]).unwrap();
    let truncated = dir.join("truncated.json");
    let text = std::fs::read_to_string(&a).unwrap();
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    // A member removed from a shard: never a silent gap.
    let mut doc = json(&std::fs::read_to_string(&b).unwrap());
    let ms = doc["files"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find_map(|f| f["members"].as_array_mut().filter(|m| !m.is_empty()));
    ms.unwrap().pop();
    let gap = dir.join("gap.json");
    std::fs::write(&gap, doc.to_string()).unwrap();
    let wrong_shape = dir.join("shape.json");
    std::fs::write(
        &wrong_shape,
        r#"{"version": 1, "shard": {"index": 1, "count": 1, "files": [3]}}"#,
    )
    .unwrap();
    let missing = dir.join("does-not-exist.json");
    // Counts no batch has (never a size to allocate by), and a status no run prints.
    let huge = dir.join("huge.json");
    let mut doc = json(&std::fs::read_to_string(&a).unwrap());
    doc["shard"]["count"] = serde_json::json!(1_000_000_000_000u64);
    std::fs::write(&huge, doc.to_string()).unwrap();
    let huger = dir.join("huger.json");
    doc["shard"]["count"] = serde_json::json!(1u64 << 62);
    std::fs::write(&huger, doc.to_string()).unwrap();
    let mut doc = json(&std::fs::read_to_string(&b).unwrap());
    first_member(&mut doc)["status"] = serde_json::json!("proved");
    let status = dir.join("status.json");
    std::fs::write(&status, doc.to_string()).unwrap();
    // Counts that are not non-negative integers, and times that are not times.
    let mut numbers = vec![];
    for (i, bad) in [serde_json::json!(-1), serde_json::json!(1.5), serde_json::json!("2")]
        .into_iter()
        .enumerate()
    {
        let mut doc = json(&std::fs::read_to_string(&a).unwrap());
        doc["shard"]["count"] = bad;
        let f = dir.join(format!("count-{i}.json"));
        std::fs::write(&f, doc.to_string()).unwrap();
        numbers.push((vec![f, b.clone()], "malformed `shard` key"));
    }
    let mut doc = json(&std::fs::read_to_string(&b).unwrap());
    doc["summary"]["time_ms"] = serde_json::json!(-5);
    let bad_time = dir.join("time.json");
    std::fs::write(&bad_time, doc.to_string()).unwrap();
    numbers.push((vec![a.clone(), bad_time], "time_ms"));
    let mut doc = json(&std::fs::read_to_string(&b).unwrap());
    first_member(&mut doc)["time_ms"] = serde_json::json!("soon");
    let member_time = dir.join("member-time.json");
    std::fs::write(&member_time, doc.to_string()).unwrap();
    numbers.push((vec![a.clone(), member_time], "time_ms"));
    // Members and documents no run writes: another version of the output, an unknown
    // kind, errors that disagree with the status, an error without a position.
    let first_member = |doc: &mut Value| -> Value {
        doc["files"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find_map(|f| f["members"].as_array_mut().filter(|m| !m.is_empty()))
            .unwrap()[0]
            .take()
    };
    let error = serde_json::json!({"id": "assert.failed", "reason": "assertion.false",
        "message": "assertion might not hold", "line": 3, "column": 5});
    type Change<'a> = Box<dyn Fn(&mut Value) + 'a>;
    let forged: [(&str, Change, &str); 5] = [
        ("version", Box::new(|d| d["version"] = serde_json::json!(2)), "version 1"),
        ("kind", Box::new(|m| m["kind"] = serde_json::json!("lemma")), "kind"),
        (
            "verified-errors",
            Box::new(|m| m["errors"] = serde_json::json!([error])),
            "verified but has errors",
        ),
        (
            "failed-no-error",
            Box::new(|m| m["status"] = serde_json::json!("failed")),
            "has no error",
        ),
        (
            "line-0",
            Box::new(|m| {
                m["status"] = serde_json::json!("failed");
                let mut e = error.clone();
                e["line"] = serde_json::json!(0);
                m["errors"] = serde_json::json!([e]);
            }),
            "line or column",
        ),
    ];
    for (name, change, why) in forged {
        let mut doc = json(&std::fs::read_to_string(&b).unwrap());
        if name == "version" {
            change(&mut doc);
        } else {
            let mut m = first_member(&mut doc);
            change(&mut m);
            let slot = doc["files"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find_map(|f| {
                    f["members"].as_array_mut().filter(|ms| ms.first().is_some_and(Value::is_null))
                })
                .unwrap();
            slot[0] = m;
        }
        let f = dir.join(format!("forged-{name}.json"));
        std::fs::write(&f, doc.to_string()).unwrap();
        numbers.push((vec![a.clone(), f], why));
    }
    // Not regular files, or too large to be a shard's document: refused before reading
    // (a sparse file: no disk used).
    let big = dir.join("big.json");
    std::fs::File::create(&big).unwrap().set_len(300 << 20).unwrap();
    let mut odd: Vec<(Vec<PathBuf>, &str)> = vec![
        (vec![dir.clone(), b.clone()], "not a regular file"),
        (vec![big, b.clone()], "larger than 256 MiB"),
    ];
    if Path::new("/dev/zero").exists() {
        odd.push((vec![PathBuf::from("/dev/zero"), b.clone()], "not a regular file"));
    }
    // A FIFO is not a document (reading it would wait for a writer for ever).
    let fifo = dir.join("fifo.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    let have_fifo = unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0;
    for (docs, why) in [
        (vec![a.clone()], "shard 2/2 is missing"),
        (vec![a.clone(), a.clone(), b.clone()], "given twice"),
        (vec![a.clone(), other], "not of the same batch"),
        (vec![plain], "no `shard` key"),
        (vec![garbage, b.clone()], "not a JSON document"),
        (vec![truncated, b.clone()], "not a JSON document"),
        (vec![a.clone(), gap], "does not report"),
        (vec![wrong_shape], "files"),
        (vec![missing], "cannot read"),
        (vec![], "Usage: idf-verify merge"),
        (vec![huge, b.clone()], "is missing"),
        (vec![huger], "is missing"),
        (vec![a.clone(), status], "`proved`"),
    ]
    .into_iter()
    .chain(numbers)
    .chain(odd)
    .chain(have_fifo.then(|| (vec![fifo], "not a regular file")))
    {
        let (code, out, err) = merge(&docs);
        assert_eq!(code, 2, "{why}: {out}");
        assert!(err.contains(why), "{why}: {err}");
        assert!(out.is_empty(), "{why}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// With `--expect`, shards split the batch by file (an expectation may concern
/// another member's error, as an inherited contract's): every shard of a suite that
/// meets its expectations passes, and together they check every file once.
#[test]
fn expect_mode_shards_by_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let verify = root.join("tests/programs/verify");
    let mut ps: Vec<PathBuf> = ["arrays", "contracts", "interfaces", "wellformed"]
        .iter()
        .map(|d| verify.join(d))
        .collect();
    // Files that do not parse or check.
    let frontend = root.join("tests/programs/frontend");
    let mut bad: Vec<PathBuf> = std::fs::read_dir(&frontend)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('p')))
        .collect();
    bad.sort();
    assert!(bad.len() > 3);
    ps.extend(bad);
    assert_eq!(run(&["--no-cache", "--expect"], &ps).0, 0);
    let mut files = 0;
    for k in 1..=3 {
        let (code, out) = run(&["--no-cache", "--expect", "--shard", &format!("{k}/3")], &ps);
        assert_eq!(code, 0, "shard {k}: {out}");
        let line = out.lines().last().unwrap_or_default().to_string();
        let (_, rest) = line.split_once("expect: ").unwrap_or_else(|| panic!("{out}"));
        files += rest.split(' ').next().unwrap().parse::<usize>().unwrap();
    }
    let (_, whole) = run(&["--no-cache", "--expect"], &ps);
    assert!(whole.contains(&format!("expect: {files} files")), "{files}: {whole}");
}

/// Shards read from a warm cache merge into the unsharded warm run's document: the
/// members' `cached` marks kept, in the schema's key order.
#[test]
fn cached_shards_merge_with_their_marks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("cached");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let ps = vec![root.join("examples/cell.jv"), root.join("examples/account.jv")];
    run(&["--cache", c], &ps);
    let (_, whole) = run(&["--cache", c, "--format", "json"], &ps);
    assert!(whole.contains("\"cached\": true"), "{whole}");
    let mut docs = vec![];
    for k in 1..=2 {
        let (_, out) = run(&["--cache", c, "--format", "json", "--shard", &format!("{k}/2")], &ps);
        let f = dir.join(format!("shard-{k}.json"));
        std::fs::write(&f, out).unwrap();
        docs.push(f);
    }
    let (code, merged, err) = merge(&docs);
    assert_eq!(code, 0, "{err}");
    let timeless = |t: &str| -> Vec<String> {
        t.lines().filter(|l| !l.contains("\"time_ms\"")).map(str::to_string).collect()
    };
    assert_eq!(timeless(&merged), timeless(&whole));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first member record of a shard's JSON document.
fn first_member(doc: &mut serde_json::Value) -> &mut serde_json::Value {
    let members = doc["files"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find_map(|f| f["members"].as_array_mut().filter(|m| !m.is_empty()))
        .unwrap();
    &mut members[0]
}
