//! The result cache (issue 13, item 4). The anchor test is the stale-cache bug Viper's
//! server had (a cached verdict surviving a change of a dependency): each kind of
//! dependency is edited in turn, and exactly its dependants must be verified again,
//! with the verdicts a fresh run gives. Then: a cached run prints what a fresh one
//! prints (human, JSON, JSON Lines); moved members keep their cached diagnostics at
//! their new lines; corrupt entries are misses; timeouts are never stored.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

/// A fresh folder under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("idf-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str], paths: &[&Path]) -> (i32, String) {
    // A solver budget: a query that never ends fails the test instead of hanging it.
    let budget: &[&str] = if args.contains(&"--timeout") { &[] } else { &["--timeout", "30"] };
    let out = Command::new(bin()).args(budget).args(args).args(paths).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every file under `dir` (the cache's entries).
fn entries_under(dir: &Path) -> Vec<PathBuf> {
    let mut entries = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                entries.push(e.path());
            }
        }
    }
    entries
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The members of a JSON document, as JSON.
fn members_of(doc: &Value) -> Vec<Value> {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["members"].as_array().unwrap().clone())
        .collect()
}

/// The members of a JSON document: (name, whether it came from the cache).
fn members(doc: &Value) -> Vec<(String, bool)> {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["members"].as_array().unwrap().clone())
        .map(|m| {
            let cached = m["stats"]["cached"].as_bool().unwrap_or(false);
            (m["name"].as_str().unwrap().to_string(), cached)
        })
        .collect()
}

/// A document without times, statistics and `cached` marks (what a cached and a fresh
/// run share).
fn verdicts(doc: &Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("time_ms");
                m.remove("stats");
                m.remove("cached");
                m.values_mut().for_each(strip);
            }
            Value::Array(xs) => xs.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = doc.clone();
    strip(&mut v);
    v
}

const BASE: &str = r#"class Cell {
  int val;
  Cell() ensures ok() && get() == 0; { val = 0; }
  predicate ok() { return acc(val); }
  pure int get() requires ok(); { return val; }
  void put(int v) requires ok(); ensures ok() && get() == v; { val = v; }
}

class Box {
  int w;
  static pure int twice(int a) { return a + a; }
  static void useTwice() { assert Box.twice(2) == 4; }
}

class Client {
  static void callsPut() { Cell c = new Cell(); c.put(5); assert c.get() == 5; }
  static void alone() { int k = 3; assert k == 3; }
  static void readsW(Box b) requires b != null && acc(b.w); { b.w = 1; }
}

interface Shape {
  predicate inv();
  pure int area() requires inv(); ensures result >= 0;
}

class Sq implements Shape {
  int side;
  predicate inv() { return acc(side) && side >= 0; }
  pure int area() requires inv(); ensures result >= 0; { return side; }
}

class Geo {
  static void measure(Shape s) requires s != null && s.inv(); ensures s.inv();
  { int a = s.area(); assert a >= 0; }
}
"#;

const ALL: &[&str] = &[
    "Cell.new",
    "Cell.ok",
    "Cell.get",
    "Cell.put",
    "Box.twice",
    "Box.useTwice",
    "Client.callsPut",
    "Client.alone",
    "Client.readsW",
    "Shape.inv",
    "Shape.area",
    "Sq.inv",
    "Sq.area",
    "Geo.measure",
];

/// Run `text` with the cache (and `flags`): the members verified (not cached), and
/// the document; check the verdicts against a run without the cache.
fn rerun(dir: &Path, cache: &Path, text: &str, flags: &[&str]) -> (BTreeSet<String>, Value) {
    let file = dir.join("deps.jv");
    std::fs::write(&file, text).unwrap();
    let cache = cache.to_str().unwrap();
    let mut args = vec!["--format", "json", "--stats", "--cache", cache];
    args.extend(flags);
    let (code, out) = run(&args, &[&file]);
    let doc = json(&out);
    let mut fresh_args = vec!["--format", "json", "--no-cache"];
    fresh_args.extend(flags);
    let (fresh_code, fresh) = run(&fresh_args, &[&file]);
    assert_eq!(code, fresh_code, "{out}");
    assert_eq!(
        verdicts(&doc),
        verdicts(&json(&fresh)),
        "a cached verdict differs from a fresh one"
    );
    let verified = members(&doc).into_iter().filter(|(_, c)| !c).map(|(n, _)| n).collect();
    (verified, doc)
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn status(doc: &Value, name: &str) -> String {
    doc["files"][0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .map(|m| m["status"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no member {name}"))
}

fn edit(from: &str, to: &str) -> String {
    assert_eq!(BASE.matches(from).count(), 1, "{from}");
    BASE.replace(from, to)
}

#[test]
fn exactly_the_dependants_of_an_edit_are_verified_again() {
    let dir = scratch("deps");
    let cache = dir.join("cache");
    let (first, doc) = rerun(&dir, &cache, BASE, &[]);
    assert_eq!(first, set(ALL));
    assert!(ALL.iter().all(|m| status(&doc, m) == "verified"), "{doc}");
    let (again, _) = rerun(&dir, &cache, BASE, &[]);
    assert_eq!(again, set(&[]), "nothing changed");

    // Each edit is made to the base program (whose entries stay in the cache).
    let cases: Vec<(&str, String, &[&str])> = vec![
        (
            "callee contract",
            edit("ensures ok() && get() == v;", "ensures ok();"),
            &["Cell.put", "Client.callsPut"],
        ),
        (
            "callee body (its callers are not verified again)",
            edit("{ val = v; }", "{ val = v; val = v; }"),
            &["Cell.put"],
        ),
        (
            "predicate body",
            edit("return acc(val);", "return acc(val) && val >= 0;"),
            &["Cell.new", "Cell.ok", "Cell.get", "Cell.put", "Client.callsPut"],
        ),
        ("pure method body", edit("a + a", "a + 1"), &["Box.twice", "Box.useTwice"]),
        (
            "pure method contract",
            edit(
                "pure int get() requires ok();",
                "pure int get() requires ok(); ensures result == val;",
            ),
            &["Cell.new", "Cell.get", "Cell.put", "Client.callsPut"],
        ),
        ("field declaration", edit("int w;", "public int w;"), &["Client.readsW"]),
        (
            "implementing class's body (dynamic dispatch)",
            edit("{ return side; }", "{ return side - 1; }"),
            &["Shape.area", "Sq.area", "Geo.measure"],
        ),
        (
            "interface member's contract",
            edit(
                "pure int area() requires inv(); ensures result >= 0;\n}",
                "pure int area() requires inv(); ensures result >= 0 && true;\n}",
            ),
            &["Shape.area", "Sq.area", "Geo.measure"],
        ),
        (
            "a new implementing class",
            format!(
                "{BASE}\nclass Tri implements Shape {{\n  int t;\n  predicate inv() {{ return acc(t); }}\n  pure int area() requires inv(); ensures result >= 0; {{ return 0; }}\n}}\n"
            ),
            &["Shape.inv", "Shape.area", "Sq.inv", "Sq.area", "Geo.measure", "Tri.inv", "Tri.area"],
        ),
        ("comments and blank lines above everything", format!("// moved\n\n\n{BASE}"), &[]),
    ];
    for (what, text, expected) in &cases {
        let (verified, doc) = rerun(&dir, &cache, text, &[]);
        assert_eq!(verified, set(expected), "{what}");
        // The verdicts a dependency's change brings (checked against a fresh run in
        // `rerun`; here, that the edits do change something).
        match *what {
            "callee contract" => assert_eq!(status(&doc, "Client.callsPut"), "failed"),
            "predicate body" => assert_eq!(status(&doc, "Cell.put"), "failed"),
            "pure method body" => assert_eq!(status(&doc, "Box.useTwice"), "failed"),
            "implementing class's body (dynamic dispatch)" => {
                assert_eq!(status(&doc, "Sq.area"), "failed")
            }
            _ => {}
        }
    }

    // Flags that change a verdict or its printed form: every member again, once.
    for flags in [&["--no-infer"][..], &["--smoke"], &["--timeout", "60"], &["--trace"]] {
        let (verified, _) = rerun(&dir, &cache, BASE, flags);
        assert_eq!(verified, set(ALL), "{flags:?}");
        let (verified, _) = rerun(&dir, &cache, BASE, flags);
        assert_eq!(verified, set(&[]), "{flags:?} again");
    }
    // Flags that do not: none.
    let (verified, _) = rerun(&dir, &cache, BASE, &["--jobs", "1"]);
    assert_eq!(verified, set(&[]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Human output without the times of members and of the run.
fn timeless(text: &str) -> String {
    text.lines()
        .map(|l| match (l.rfind(" ("), l.ends_with(" ms)"), l.rfind(" in ")) {
            (Some(i), true, _) => l[..i].to_string(),
            (_, _, Some(i)) if l.ends_with(" ms") => l[..i].to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first line where two outputs differ, if any, fails the test.
fn same_lines(a: &str, b: &str, flags: &[&str]) {
    if let Some((i, (x, y))) = a.lines().zip(b.lines()).enumerate().find(|(_, (x, y))| x != y) {
        panic!("{flags:?}: line {}: `{x}` vs `{y}`", i + 1);
    }
    assert_eq!(a.lines().count(), b.lines().count(), "{flags:?}");
}

/// A cached run prints what the run that stored its entries printed (but for the times,
/// and each member marked `cached`), and the verdicts and
/// diagnostics of a fresh run. (Counterexample values are Z3's choice of model, which
/// may differ between two fresh runs, and traces print what the solver was asked: with
/// `--counterexample` and `--trace` the cached output is compared with the run that
/// stored it only.)
#[test]
fn a_cached_run_prints_what_a_fresh_run_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("bytes");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    // Failures with notes, traces, inherited contracts, interfaces, replays.
    let big: Vec<PathBuf> =
        ["examples", "tests/programs/verify/interfaces", "tests/debugging", "tests/interp/replay"]
            .iter()
            .map(|d| root.join(d))
            .collect();
    let small: Vec<PathBuf> =
        ["tests/debugging", "tests/interp/replay"].iter().map(|d| root.join(d)).collect();
    let cases: [(&[&str], &Vec<PathBuf>, bool); 3] =
        [(&[], &big, true), (&["--trace"], &big, false), (&["--counterexample"], &small, false)];
    for (flags, dirs, against_fresh) in cases {
        let paths: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        for format in ["human", "json", "jsonl"] {
            let mut args = vec!["--format", format];
            args.extend(flags);
            let cold = run(&[&args[..], &["--cache", c]].concat(), &paths);
            let warm = run(&[&args[..], &["--cache", c]].concat(), &paths);
            assert_eq!(warm.0, cold.0);
            let fresh = against_fresh.then(|| run(&[&args[..], &["--no-cache"]].concat(), &paths));
            if let Some(fresh) = &fresh {
                assert_eq!(warm.0, fresh.0);
            }
            match format {
                "json" => {
                    assert_eq!(verdicts(&json(&warm.1)), verdicts(&json(&cold.1)));
                    if let Some(fresh) = &fresh {
                        assert_eq!(verdicts(&json(&warm.1)), verdicts(&json(&fresh.1)));
                    }
                }
                "jsonl" => {
                    let lines = |t: &str| t.lines().map(|l| verdicts(&json(l))).collect::<Vec<_>>();
                    assert_eq!(lines(&warm.1), lines(&cold.1));
                    if let Some(fresh) = &fresh {
                        assert_eq!(lines(&warm.1), lines(&fresh.1));
                    }
                }
                _ => {
                    same_lines(&timeless(&warm.1), &timeless(&cold.1), flags);
                    if let Some(fresh) = &fresh {
                        same_lines(&timeless(&warm.1), &timeless(&fresh.1), flags);
                    }
                }
            }
        }
    }
    // Against the run that stored them: the same lines but for the times, and every
    // member marked `cached` (human: on its line; json and jsonl: `"cached": true`).
    let file = dir.join("failures.jv");
    std::fs::copy(root.join("tests/debugging/failures.jv"), &file).unwrap();
    for format in ["human", "json", "jsonl"] {
        // A folder per format: the first run of each is cold.
        let own = dir.join(format!("own-cache-{format}"));
        let o = own.to_str().unwrap();
        let cold = run(&["--format", format, "--cache", o, "--trace"], &[&file]);
        let warm = run(&["--format", format, "--cache", o, "--trace"], &[&file]);
        match format {
            "human" => {
                same_lines(&timeless(&warm.1), &timeless(&cold.1), &["--trace"]);
                let lines = |t: &str, what: &str| t.lines().filter(|l| l.contains(what)).count();
                let member_lines = lines(&cold.1, " failed (") + lines(&cold.1, " verified (");
                assert!(member_lines > 0 && lines(&cold.1, "(cached, ") == 0, "{}", cold.1);
                assert_eq!(lines(&warm.1, "(cached, "), member_lines, "{}", warm.1);
            }
            _ => {
                let docs = |t: &str| -> Vec<Value> {
                    if format == "json" { vec![json(t)] } else { t.lines().map(json).collect() }
                };
                let (w, c) = (docs(&warm.1), docs(&cold.1));
                assert_eq!(
                    w.iter().map(verdicts).collect::<Vec<_>>(),
                    c.iter().map(verdicts).collect::<Vec<_>>()
                );
                let marks = |ds: &[Value]| -> Vec<bool> {
                    ds.iter()
                        .flat_map(|d| {
                            let ms: Vec<Value> = match (d.get("files"), d.get("member")) {
                                (Some(_), _) => members_of(d),
                                (None, Some(m)) => vec![m.clone()],
                                _ => vec![],
                            };
                            ms.into_iter().map(|m| m["cached"] == true).collect::<Vec<_>>()
                        })
                        .collect()
                };
                let (wm, cm) = (marks(&w), marks(&c));
                assert!(!wm.is_empty() && wm.iter().all(|m| *m), "{format}: {}", warm.1);
                assert!(cm.iter().all(|m| !m), "{format}: {}", cold.1);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn moved_members_keep_their_cached_diagnostics_at_their_new_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("moved");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let text = std::fs::read_to_string(root.join("tests/debugging/failures.jv")).unwrap();
    let file = dir.join("failures.jv");
    std::fs::write(&file, &text).unwrap();
    run(&["--cache", c], &[&file]);
    // Another class above, and lines inside: every member moves.
    std::fs::write(&file, format!("class Above {{\n  int z;\n}}\n\n\n{text}")).unwrap();
    let (code, warm) = run(&["--cache", c, "--stats", "--format", "json"], &[&file]);
    let (fresh_code, fresh) = run(&["--no-cache", "--format", "json"], &[&file]);
    assert_eq!(code, fresh_code);
    let doc = json(&warm);
    assert!(members(&doc).iter().all(|(_, cached)| *cached), "{warm}");
    assert!(warm.contains("\"errors\": [\n"), "the file has failures: {warm}");
    assert_eq!(verdicts(&doc), verdicts(&json(&fresh)));
    let (_, human) = run(&["--cache", c], &[&file]);
    let (_, fresh_human) = run(&["--no-cache"], &[&file]);
    assert_eq!(timeless(&human), timeless(&fresh_human));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corrupt_entries_are_misses_and_timeouts_are_never_stored() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("corrupt");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let file = root.join("examples/cell.jv");
    let (code, first) = run(&["--cache", c, "--format", "json"], &[&file]);
    let entries = entries_under(&cache);
    assert!(!entries.is_empty());
    // Truncated, empty, garbage, and valid JSON of another shape.
    for (i, e) in entries.iter().enumerate() {
        let bytes = std::fs::read(e).unwrap();
        let bad: Vec<u8> = match i % 4 {
            0 => bytes[..bytes.len() / 2].to_vec(),
            1 => vec![],
            2 => vec![0xff, 0x00, 0x13],
            _ => b"{\"format\": 1, \"key\": 3}".to_vec(),
        };
        std::fs::write(e, bad).unwrap();
    }
    let (code2, again) = run(&["--cache", c, "--format", "json", "--stats"], &[&file]);
    assert_eq!(code, code2);
    let doc = json(&again);
    assert!(members(&doc).iter().all(|(_, cached)| !cached), "{again}");
    assert_eq!(verdicts(&doc), verdicts(&json(&first)));

    // A member that times out is verified again next time.
    let hang = root.join("tests/hang/nonlinear_timeout.jv");
    let args = ["--cache", c, "--format", "json", "--stats", "--timeout", "1"];
    let (code, out) = run(&args, &[&hang]);
    assert_eq!(code, 1, "{out}");
    let (_, out) = run(&args, &[&hang]);
    let doc = json(&out);
    let timed_out: Vec<&Value> = doc["files"][0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["status"] == "timeout")
        .collect();
    assert!(!timed_out.is_empty(), "{out}");
    assert!(timed_out.iter().all(|m| m["stats"]["cached"] != true), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An unwritable cache folder is no error: the run verifies and reports as usual.
#[test]
fn an_unusable_cache_folder_is_not_an_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("unusable");
    let not_a_dir = dir.join("file");
    std::fs::write(&not_a_dir, "x").unwrap();
    let file = root.join("examples/cell.jv");
    let (code, out) = run(&["--cache", not_a_dir.to_str().unwrap()], &[&file]);
    let (fresh_code, fresh) = run(&["--no-cache"], &[&file]);
    assert_eq!(code, fresh_code);
    assert_eq!(timeless(&out), timeless(&fresh));
    let _ = std::fs::remove_dir_all(&dir);
}

/// An entry edited by hand (a failure rewritten to say `verified`, one byte changed
/// anywhere) is a miss, never a verdict: every entry carries a digest of its key and
/// content.
#[test]
fn edited_entries_are_misses() {
    let dir = scratch("edited");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let file = dir.join("wrong.jv");
    std::fs::write(
        &file,
        "class W { int f;\n  void m() requires acc(f); ensures acc(f) && f == 1; { f = 2; }\n}\n",
    )
    .unwrap();
    let (code, first) = run(&["--cache", c, "--format", "json"], &[&file]);
    assert_eq!(code, 1, "{first}");
    let entries = entries_under(&cache);
    assert!(!entries.is_empty());
    for (i, e) in entries.iter().enumerate() {
        let text = std::fs::read_to_string(e).unwrap();
        let forged = if text.contains("\"failed\"") {
            text.replace("\"failed\"", "\"verified\"")
        } else {
            // One byte of the content changed.
            let mut b = text.into_bytes();
            let at = b.len() - 1 - i % 5;
            b[at] = if b[at] == b' ' { b'\t' } else { b' ' };
            String::from_utf8_lossy(&b).into_owned()
        };
        std::fs::write(e, forged).unwrap();
    }
    let (code2, again) = run(&["--cache", c, "--format", "json", "--stats"], &[&file]);
    assert_eq!(code2, 1, "{again}");
    let doc = json(&again);
    assert!(members(&doc).iter().all(|(_, cached)| !cached), "{again}");
    assert_eq!(verdicts(&doc), verdicts(&json(&first)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The binary with `args`, the environment without any variable that chooses the cache
/// folder, plus `env`: (exit code, stdout, stderr).
fn run_env(args: &[&str], env: &[(&str, &Path)]) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.env_remove("IDF_VERIFY_CACHE_DIR")
        .env_remove("IDF_VERIFY_CACHE_LIMIT")
        .env_remove("XDG_CACHE_HOME")
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

/// A hit is visible without `--stats`: `cached` on its human line, `"cached": true` in
/// JSON, with this run's time (the time to read it, within this run's total), never
/// the time of the run that verified it.
#[test]
fn hits_say_cached_with_this_runs_time() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("visible");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let file = root.join("examples/cell.jv");
    let (_, cold) = run(&["--cache", c], &[&file]);
    assert!(!cold.contains("cached"), "{cold}");
    let (_, warm) = run(&["--cache", c], &[&file]);
    let member_lines: Vec<&str> = warm.lines().filter(|l| l.ends_with(" ms)")).collect();
    assert!(!member_lines.is_empty(), "{warm}");
    assert!(member_lines.iter().all(|l| l.contains(" verified (cached, ")), "{warm}");
    let (_, warm) = run(&["--cache", c, "--format", "json"], &[&file]);
    let doc = json(&warm);
    let total = doc["summary"]["time_ms"].as_f64().unwrap();
    for m in members_of(&doc) {
        assert_eq!(m["cached"], true, "{m}");
        assert!(m.get("stats").is_none(), "statistics only with --stats: {m}");
        assert!(m["time_ms"].as_f64().unwrap() <= total, "a time of another run: {warm}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `idf-verify cache info` says where the cache is, how many entries and bytes it
/// holds and its bound; `cache clear` removes the entries, nothing else; the folder
/// comes from `--cache`, else `IDF_VERIFY_CACHE_DIR`, else `XDG_CACHE_HOME`, else
/// `HOME`.
#[test]
fn cache_info_and_clear() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("info");
    let cache = dir.join("by-var");
    let file = root.join("examples/cell.jv");
    let f = file.to_str().unwrap();
    let var = [("IDF_VERIFY_CACHE_DIR", cache.as_path())];
    let (code, _, _) = run_env(&[f], &var);
    assert_eq!(code, 0);
    let (code, info, _) = run_env(&["cache", "info"], &var);
    assert_eq!(code, 0, "{info}");
    assert!(info.contains(&format!("location: {}\n", cache.display())), "{info}");
    assert!(info.contains("entries:  7\n"), "cell.jv has 7 members: {info}");
    let bytes: u64 = entries_under(&cache).iter().map(|e| e.metadata().unwrap().len()).sum();
    assert!(info.contains(&format!("bytes:    {bytes} (")), "{bytes}: {info}");
    assert!(info.contains("limit:    256.0 MiB"), "{info}");
    // A file of the user's in the folder survives a clear.
    std::fs::write(cache.join("mine.txt"), "mine").unwrap();
    let (code, out, _) = run_env(&["cache", "clear"], &var);
    assert_eq!(code, 0);
    assert!(out.starts_with("removed 7 entries"), "{out}");
    assert_eq!(entries_under(&cache), vec![cache.join("mine.txt")]);
    let (_, info, _) = run_env(&["cache", "info", "--cache", cache.to_str().unwrap()], &[]);
    assert!(info.contains("entries:  0\n"), "{info}");
    // XDG_CACHE_HOME, then HOME.
    let (_, info, _) = run_env(&["cache", "info"], &[("XDG_CACHE_HOME", &dir)]);
    assert!(info.contains(&format!("location: {}", dir.join("idf-verify").display())), "{info}");
    let (_, info, _) = run_env(&["cache", "info"], &[("HOME", &dir)]);
    let home_cache = dir.join(".cache").join("idf-verify");
    assert!(info.contains(&format!("location: {}", home_cache.display())), "{info}");
    assert!(info.contains("off: its parent folder does not exist"), "{info}");
    for sub in
        [&["cache", "--help"][..], &["cache", "info", "--help"], &["cache", "clear", "--help"]]
    {
        let (code, out, _) = run_env(sub, &[]);
        assert_eq!(code, 0, "{sub:?}");
        assert!(out.contains("Usage: idf-verify cache"), "{out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// No folder above the cache's is ever made: with `HOME` a folder that does not exist
/// (and no other variable), a run creates nothing, verifies as usual, and `--stats`
/// says the cache was off. An explicit `--cache` whose parent is missing is the same.
#[test]
fn a_missing_home_is_never_created() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("home");
    let home = dir.join("nonexistent");
    let file = root.join("examples/cell.jv");
    let f = file.to_str().unwrap();
    let (code, out, err) = run_env(&["--stats", f], &[("HOME", &home)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("cache: off ("), "{out}");
    assert!(!home.exists(), "HOME was created");
    let deep = dir.join("a").join("b");
    let (code, out, _) = run_env(&["--stats", "--cache", deep.to_str().unwrap(), f], &[]);
    assert_eq!(code, 0);
    assert!(out.contains("cache: off ("), "{out}");
    assert!(!dir.join("a").exists());
    // A cache folder whose parent exists is made.
    let (_, out, _) = run_env(&["--stats", "--cache", dir.join("c").to_str().unwrap(), f], &[]);
    assert!(out.contains("7 stored in"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The folder stays within its bound: past it, the least recently used entries go
/// (a hit counts as a use).
#[test]
fn the_folder_stays_within_its_bound() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("bound");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let size =
        |d: &Path| -> u64 { entries_under(d).iter().map(|e| e.metadata().unwrap().len()).sum() };
    // Unbounded: every member of four files is stored.
    let files: Vec<PathBuf> = ["cell.jv", "account.jv", "list.jv", "visitor.jv"]
        .iter()
        .map(|f| root.join("examples").join(f))
        .filter(|p| p.exists())
        .collect();
    assert!(files.len() >= 2, "examples are missing");
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    run(&["--cache", c, "--cache-limit", "0"], &paths);
    let all = size(&cache);
    let count = entries_under(&cache).len();
    assert!(count > 4, "{count}");
    // Bound to half: the next run that stores evicts down to at most the bound.
    let half = (all / 2).to_string();
    let cell = root.join("examples/cell.jv");
    std::fs::write(dir.join("new.jv"), "class N { static void m() { assert 1 == 1; } }\n").unwrap();
    let (_, out) =
        run(&["--cache", c, "--cache-limit", &half, "--stats", "-q"], &[&dir.join("new.jv")]);
    assert!(out.contains("evicted"), "{out}");
    assert!(size(&cache) <= all / 2, "{} > {}", size(&cache), all / 2);
    // The environment variable is the flag's default; a bad value is a usage error.
    let quarter = (all / 4).to_string();
    std::fs::write(dir.join("new2.jv"), "class M { static void m() { assert 2 == 2; } }\n")
        .unwrap();
    let out = Command::new(bin())
        .env("IDF_VERIFY_CACHE_LIMIT", &quarter)
        .args(["--cache", c, "--stats", "-q"])
        .arg(dir.join("new2.jv"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains("evicted"), "{out}");
    assert!(size(&cache) <= all / 4, "{} > {}", size(&cache), all / 4);
    let mut cmd = Command::new(bin());
    let out =
        cmd.env("IDF_VERIFY_CACHE_LIMIT", "lots").args(["--cache", c]).arg(&cell).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("IDF_VERIFY_CACHE_LIMIT"));
    let (code, _) = run(&["--cache", c, "--cache-limit", "12Q"], &[&cell]);
    assert_eq!(code, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every one-byte damage of a few entries, at every offset, is a miss (or, were the
/// damage to leave the entry intact, the same entry): never another verdict. Read
/// through the library's store, as the run does; a sample of damaged entries is then
/// run through the binary, whose verdicts must be a fresh run's.
#[test]
fn every_one_byte_damage_is_a_miss() {
    use idf_verify::pipeline::cache::store::Store;
    let dir = scratch("damage");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let file = dir.join("mixed.jv");
    std::fs::write(
        &file,
        "class W { int f;\n  void bad() requires acc(f); ensures acc(f) && f == 1; { f = 2; }\n  \
         void good() requires acc(f); ensures acc(f) && f == 2; { f = 2; }\n  \
         pure int get() requires acc(f); { return f; }\n}\n",
    )
    .unwrap();
    let (code, first) = run(&["--cache", c, "--format", "json"], &[&file]);
    assert_eq!(code, 1, "{first}");
    let entries = entries_under(&cache);
    assert_eq!(entries.len(), 3, "{entries:?}");
    let store = Store::new(&cache);
    let (mut damages, mut misses) = (0, 0);
    for e in &entries {
        let key = e.file_stem().unwrap().to_str().unwrap().to_string();
        let good = std::fs::read(e).unwrap();
        let reference =
            serde_json::to_string(&store.load(&key).expect("an intact entry is a hit")).unwrap();
        for at in 0..good.len() {
            for flip in [0x01u8, 0x20, 0x80] {
                let mut bad = good.clone();
                bad[at] ^= flip;
                std::fs::write(e, &bad).unwrap();
                damages += 1;
                match store.load(&key) {
                    None => misses += 1,
                    Some(entry) => assert_eq!(
                        serde_json::to_string(&entry).unwrap(),
                        reference,
                        "byte {at} ^ {flip:#x} of {} was served",
                        e.display()
                    ),
                }
            }
        }
        std::fs::write(e, &good).unwrap();
    }
    eprintln!("{damages} one-byte damages, {misses} misses");
    assert_eq!(misses, damages, "a damaged entry was served");
    // Through the binary: damaged at a spread of offsets, the verdicts stay a fresh run's.
    for step in 0..6 {
        for e in &entries {
            let mut bytes = std::fs::read(e).unwrap();
            let at = (bytes.len() - 1) * step / 5;
            bytes[at] ^= 0x01;
            std::fs::write(e, &bytes).unwrap();
        }
        let (code, again) = run(&["--cache", c, "--format", "json"], &[&file]);
        assert_eq!(code, 1, "{again}");
        let doc = json(&again);
        assert!(members(&doc).iter().all(|(_, cached)| !cached), "{again}");
        assert_eq!(verdicts(&doc), verdicts(&json(&first)));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An entry replaced by a FIFO, a symbolic link to `/dev/zero`, a 2 GiB (sparse) file
/// or a folder is a miss at once: the run neither blocks nor reads it.
#[test]
fn entries_that_are_not_small_files_are_misses() {
    let dir = scratch("kinds");
    let cache = dir.join("cache");
    let c = cache.to_str().unwrap();
    let file = dir.join("ok.jv");
    std::fs::write(
        &file,
        "class K { int f;\n  void a() requires acc(f); { f = 1; }\n  void b() requires acc(f); { f = 2; }\n  \
         void c() requires acc(f); { f = 3; }\n  void d() requires acc(f); { f = 4; }\n}\n",
    )
    .unwrap();
    let (code, _) = run(&["--cache", c], &[&file]);
    assert_eq!(code, 0);
    let entries = entries_under(&cache);
    assert_eq!(entries.len(), 4, "{entries:?}");
    for e in &entries {
        std::fs::remove_file(e).unwrap();
    }
    let fifo = std::process::Command::new("mkfifo").arg(&entries[0]).status();
    if !fifo.is_ok_and(|s| s.success()) {
        std::fs::create_dir(&entries[0]).unwrap();
    }
    std::os::unix::fs::symlink("/dev/zero", &entries[1]).unwrap();
    let huge = std::fs::File::create(&entries[2]).unwrap();
    huge.set_len(2 << 30).unwrap();
    std::fs::create_dir(&entries[3]).unwrap();
    // A run that blocked on the FIFO or read /dev/zero would never end: bounded wait.
    let mut child = Command::new(bin())
        .args(["--cache", c, "--format", "json", "--stats"])
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the run blocked on an entry that is not a regular file");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert_eq!(status.code(), Some(0), "{out}");
    let doc = json(&out);
    assert_eq!(members(&doc).len(), 4);
    assert!(members(&doc).iter().all(|(_, cached)| !cached), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The safety net under the tests' own `--no-cache` and temporary `--cache` folders:
/// cargo gives every test process, and so every binary a test starts, a cache folder
/// under `target/` (`.cargo/config.toml`), never the user's.
#[test]
fn tests_run_with_a_cache_folder_under_target() {
    let dir = std::env::var_os("IDF_VERIFY_CACHE_DIR")
        .expect("IDF_VERIFY_CACHE_DIR is not set: is .cargo/config.toml's [env] gone?");
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    assert!(Path::new(&dir).starts_with(&target), "{}", Path::new(&dir).display());
}
