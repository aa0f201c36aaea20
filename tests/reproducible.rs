//! Reproducible output (issue: a CI gate that cannot be fooled): the same file gives
//! the same counterexamples, traces and JSON, byte for byte, whether it is verified
//! alone or after other files on the same worker thread, and whatever `--jobs` is.
//! Timings (`time_ms`, `stats`, the summary) are the only fields allowed to differ.

mod common;
use common::strip_timings;
use std::path::Path;
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

/// Every file's JSON record without timings, keyed by path, from one run.
fn records(jobs: &str, paths: &[&Path]) -> std::collections::BTreeMap<String, String> {
    let out = Command::new(bin())
        .args(["--no-cache", "--format", "json", "--counterexample", "--trace", "--jobs", jobs])
        .args(paths)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    let mut map = std::collections::BTreeMap::new();
    for mut f in doc["files"].as_array().expect("files").iter().cloned() {
        strip_timings(&mut f);
        let path = f["path"].as_str().unwrap().to_string();
        map.insert(path, serde_json::to_string_pretty(&f).unwrap());
    }
    map
}

/// The folders whose failing members carry counterexamples and traces.
fn folders() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["examples", "tests/programs/verify"].iter().map(|d| root.join(d)).collect()
}

#[test]
#[ignore = "slow in a debug build: .ci/run runs it with --release --ignored"]
fn a_file_verified_after_others_reports_what_it_reports_alone() {
    let folders = folders();
    let refs: Vec<&Path> = folders.iter().map(|p| p.as_path()).collect();
    let batch = records("1", &refs);
    assert!(batch.len() > 100, "the batch holds the test programs");
    let with_counterexamples = batch.values().filter(|r| r.contains("\"counterexample\"")).count();
    assert!(with_counterexamples > 20, "{with_counterexamples} files with counterexamples");
    // Files whose members all verify print nothing a model or a trace could change.
    for (path, record) in batch.iter().filter(|(_, r)| r.contains("\"failed\"")) {
        let alone = records("1", &[Path::new(path)]);
        assert_eq!(alone.get(path), Some(record), "{path}: alone vs after other files");
    }
}

#[test]
#[ignore = "slow in a debug build: .ci/run runs it with --release --ignored"]
fn jobs_do_not_change_the_output() {
    let folders = folders();
    let refs: Vec<&Path> = folders.iter().map(|p| p.as_path()).collect();
    let one = records("1", &refs);
    assert_eq!(records("2", &refs), one);
}

/// `idf-verify test` runs members on several workers: its report (solved inputs and
/// failures included) is the same whatever `--jobs` is.
#[test]
#[ignore = "slow in a debug build: .ci/run runs it with --release --ignored"]
fn test_jobs_do_not_change_the_report() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/verify");
    let dirs = ["quant", "seq", "arrays", "heldout_qseq"].map(|d| root.join(d));
    let report = |jobs: &str| {
        let out = Command::new(bin())
            .args(["test", "--paths", "--format", "json", "--jobs", jobs])
            .args(&dirs)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let one = report("1");
    assert!(one.contains("\"inputs\""), "{one}");
    assert_eq!(report("2"), one);
}
