//! The concrete interpreter on data: every `tests/interp/*.jv` has one class with a
//! `static void main()`; run concretely, it must fail with exactly the id and on the
//! line its single `// expect: ID` comment names (the comment stands on the line
//! before), or pass when it has none. `// outcome: out-of-steps` means the run must
//! end by the step budget. Each error id of LANGUAGE.md section 8 that code can
//! reach has a failing program and a passing sibling.

use idf_verify::interp::{Limits, Outcome, find_main, line_of, run_member, run_member_with};
use idf_verify::source::front_end;
use std::path::Path;

/// The expected (id, line) of a file, if any.
fn expectation(text: &str) -> Option<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if let Some(id) = l.trim().strip_prefix("// expect:") {
            let next = (i + 1..lines.len())
                .find(|&j| {
                    let t = lines[j].trim();
                    !t.is_empty() && !t.starts_with("//")
                })
                .unwrap_or(i + 1);
            return Some((id.trim().to_string(), next + 1));
        }
    }
    None
}

fn run_file(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let program = front_end(&text).map_err(|e| format!("front end: {e:?}"))?;
    let main = program
        .classes
        .iter()
        .find_map(|c| find_main(&program, &c.name.name))
        .ok_or("no `static void main()`")?;
    let outcome = run_member(&program, main, &Default::default());
    let want_steps = text.contains("// outcome: out-of-steps");
    match (expectation(&text), outcome) {
        (None, Outcome::OutOfSteps) if want_steps => Ok(()),
        (None, Outcome::Passed) if !want_steps => Ok(()),
        (Some((id, line)), Outcome::Failed(f)) => {
            let got = line_of(&text, f.span);
            if f.id == id && got == line {
                Ok(())
            } else {
                Err(format!(
                    "expected {id} on line {line}, got {} on line {got}: {}",
                    f.id, f.message
                ))
            }
        }
        (want, got) => Err(format!("expected {want:?} (out of steps: {want_steps}), got {got:?}")),
    }
}

#[test]
fn interpreter_programs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interp");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/interp")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jv"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "too few interpreter programs");
    let mut failures = vec![];
    for f in &files {
        if let Err(e) = run_file(f) {
            failures.push(format!("{}: {e}", f.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

/// Each error id a run can end with has a program that ends with it.
#[test]
fn every_error_id_is_covered() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interp");
    let mut seen = std::collections::HashSet::new();
    for e in std::fs::read_dir(&dir).expect("tests/interp").flatten() {
        if let Ok(text) = std::fs::read_to_string(e.path())
            && let Some((id, _)) = expectation(&text)
        {
            seen.insert(id);
        }
    }
    for id in [
        "assert.failed",
        "call.precondition",
        "postcondition.violated",
        "invariant.not.established",
        "invariant.not.preserved",
        "join.failed",
        "receiver.null",
        "division.by.zero",
        "index.out.of.bounds",
        "insufficient.permission",
        "close.failed",
        "open.failed",
        "not.wellformed",
    ] {
        assert!(seen.contains(id), "no interpreter program fails with {id}");
    }
}

/// The soundness regressions of `shared/soundness` (copied to `tests/interp/soundness`):
/// for each `// expect:` of an unsound verdict (A*, B*), random inputs reach that very
/// failure concretely; the false alarms (I*) never fail concretely.
#[test]
fn soundness_regressions_run_concretely() {
    use idf_verify::interp::inputs::random_inputs;
    use idf_verify::syntax::ast::{MemberKind, MemberRef};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interp/soundness");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("soundness").flatten().map(|e| e.path()).collect();
    files.sort();
    assert!(!files.is_empty());
    let mut problems = vec![];
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "jv")) {
        let text = std::fs::read_to_string(path).unwrap();
        let program = front_end(&text).unwrap();
        let want = expectation(&text);
        let mut reached = false;
        for (ci, class) in program.classes.iter().enumerate() {
            for (mi, m) in class.members.iter().enumerate() {
                if m.kind == MemberKind::Field {
                    continue;
                }
                let member = MemberRef { class: ci, member: mi };
                for seed in 0..300u64 {
                    let inputs = random_inputs(&program, member, seed);
                    match run_member(&program, member, &inputs) {
                        Outcome::Failed(f) => {
                            let got = (f.id.to_string(), line_of(&text, f.span));
                            if want.as_ref() == Some(&got) {
                                reached = true;
                            } else {
                                problems.push(format!(
                                    "{}: unexpected {} on line {} ({})",
                                    path.display(),
                                    got.0,
                                    got.1,
                                    f.message
                                ));
                            }
                        }
                        Outcome::OutOfSteps => {
                            problems.push(format!("{}: out of steps", path.display()))
                        }
                        Outcome::Passed | Outcome::Rejected(_) => {}
                    }
                }
            }
        }
        if want.is_some() && !reached {
            problems.push(format!("{}: {want:?} never reached concretely", path.display()));
        }
    }
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn jv_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            jv_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "jv") {
            out.push(p);
        }
    }
}

/// No panic on any program: every member of every checked test program and example
/// runs on random inputs to an outcome.
#[test]
fn interpreter_never_panics() {
    use idf_verify::interp::inputs::random_inputs;
    use idf_verify::syntax::ast::{MemberKind, MemberRef};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    jv_files(&root.join("tests/programs"), &mut files);
    jv_files(&root.join("examples"), &mut files);
    jv_files(&root.join("../shared/suite"), &mut files);
    files.sort();
    let mut panics = vec![];
    let (mut runs, mut outcomes) = (0, std::collections::BTreeMap::<String, usize>::new());
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Ok(program) = front_end(&text) else { continue };
        for (ci, class) in program.classes.iter().enumerate() {
            for (mi, m) in class.members.iter().enumerate() {
                if m.kind == MemberKind::Field {
                    continue;
                }
                let member = MemberRef { class: ci, member: mi };
                for seed in 0..4u64 {
                    let inputs = random_inputs(&program, member, seed);
                    let limits = Limits { steps: 50_000, ..Limits::default() };
                    let r = std::panic::catch_unwind(|| {
                        run_member_with(&program, member, &inputs, limits)
                    });
                    runs += 1;
                    match r {
                        Ok(o) => {
                            let k = match o {
                                Outcome::Passed => "passed".to_string(),
                                Outcome::Failed(f) => f.id.to_string(),
                                Outcome::Rejected(_) => "rejected".to_string(),
                                Outcome::OutOfSteps => "out-of-steps".to_string(),
                            };
                            *outcomes.entry(k).or_default() += 1;
                        }
                        Err(_) => {
                            panics.push(format!("{} member {mi} seed {seed}", path.display()))
                        }
                    }
                }
            }
        }
    }
    eprintln!("{} files, {runs} runs: {outcomes:?}", files.len());
    assert!(runs > 100);
    assert!(panics.is_empty(), "{}", panics.join("\n"));
}

/// `idf-verify test PATHS`: concrete failures are reported with their inputs (exit 1);
/// a program whose runs all pass exits 0.
#[test]
fn test_subcommand_reports_concrete_failures() {
    let bin = env!("CARGO_BIN_EXE_idf-verify");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let failing = root.join("tests/interp/soundness/B3_unit_snapshot.jv");
    let out = std::process::Command::new(bin)
        .args(["test", "--runs", "40", "--seed", "3"])
        .arg(&failing)
        .output()
        .expect("run idf-verify test");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("B3_unit_snapshot.jv:13: assert.failed"), "{text}");
    assert!(text.contains("inputs: x = "), "{text}");
    let passing = root.join("tests/interp/soundness/I3_new_not_distinct.jv");
    let out = std::process::Command::new(bin)
        .args(["test", "--runs", "20"])
        .arg(&passing)
        .output()
        .expect("run idf-verify test");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

/// `--counterexample` replays each model's entry state: a real bug is `confirmed`, a
/// false alarm of `join` (which forgets) is `not-reproduced`; JSON carries both.
#[test]
fn counterexamples_are_replayed() {
    let bin = env!("CARGO_BIN_EXE_idf-verify");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interp/replay");
    let run = |file: &str| {
        let out = std::process::Command::new(bin)
            .args(["--no-cache", "--counterexample", "--format", "json"])
            .arg(root.join(file))
            .output()
            .expect("run idf-verify");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        let errors: Vec<serde_json::Value> = json["files"][0]["members"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["errors"].as_array().cloned().unwrap_or_default())
            .collect();
        errors
    };
    let errs = run("b3_confirmed.jv");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0]["replay"], "confirmed", "{errs:?}");
    assert_eq!(errs[0]["replay_inputs"], "x = 0", "{errs:?}");
    let errs = run("join_forgets.jv");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0]["replay"], "not-reproduced", "{errs:?}");
    assert!(errs[0]["replay_outcome"].as_str().unwrap_or("").contains("passed"), "{errs:?}");
}
