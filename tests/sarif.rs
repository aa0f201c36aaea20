//! `--format sarif` (issue 14, item 2): documents of a failing member, an input error and
//! several files are valid against the official SARIF 2.1.0 schema (vendored in
//! `tests/sarif/`, OASIS errata 01) and, when it is installed (`.ci/run` installs it;
//! under `CI=true` it must be), against Microsoft's SARIF validator; one document is a
//! snapshot; fingerprints survive a second run and moved lines; exit statuses are the
//! other formats'.

mod skip;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Run the binary in the crate's folder (paths relative to it): (exit code, stdout).
fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(bin()).current_dir(root()).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap())
}

fn sarif(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "sarif"];
    all.extend_from_slice(args);
    let (code, out) = run(&all);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    (code, v)
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("tests/sarif/sarif-schema-2.1.0.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).expect("the SARIF schema compiles")
}

/// Every schema violation of `doc`, one per line.
fn violations(doc: &Value) -> String {
    schema().iter_errors(doc).map(|e| format!("{} at {}\n", e, e.instance_path())).collect()
}

fn assert_valid(doc: &Value) {
    let v = violations(doc);
    assert!(v.is_empty(), "not valid SARIF 2.1.0:\n{v}");
}

fn results(doc: &Value) -> &Vec<Value> {
    doc["runs"][0]["results"].as_array().unwrap()
}

fn rule_ids(doc: &Value) -> Vec<&str> {
    results(doc).iter().map(|r| r["ruleId"].as_str().unwrap()).collect()
}

#[test]
fn the_schema_rejects_what_it_must() {
    // The validator is real: a document without `version`, or with a line 0, fails.
    let (_, mut doc) = sarif(&["tests/sarif/failing.jv"]);
    assert_valid(&doc);
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    assert!(!violations(&doc).is_empty());
    doc.as_object_mut().unwrap().remove("version");
    assert!(!violations(&doc).is_empty());
}

#[test]
fn a_failing_member_is_a_result_with_a_related_location() {
    let (code, doc) = sarif(&["--trace", "--counterexample", "tests/sarif/failing.jv"]);
    assert_eq!(code, 1);
    assert_valid(&doc);
    assert_eq!(doc["version"], "2.1.0");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 1);
    assert_eq!(rule_ids(&doc), ["call.precondition", "assert.failed", "invariant.not.preserved"]);
    let call = &results(&doc)[0];
    assert_eq!(call["level"], "error");
    let region = &call["locations"][0]["physicalLocation"]["region"];
    assert_eq!((region["startLine"].as_u64(), region["startColumn"].as_u64()), (Some(18), Some(5)));
    assert_eq!(
        call["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "tests/sarif/failing.jv"
    );
    assert_eq!(
        call["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
        "Account.overdraw"
    );
    // The callee's failing conjunct, as the human output's secondary label.
    let related = &call["relatedLocations"][0];
    assert_eq!(related["physicalLocation"]["region"]["startLine"], 7);
    assert_eq!(related["physicalLocation"]["region"]["snippet"]["text"], "amount <= balance");
    // Rules: one per id, each result's index pointing at its own.
    let rules = doc["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results(&doc) {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
        assert!(!rules[i]["help"]["text"].as_str().unwrap().is_empty());
    }
    // --trace: a code flow through the failing path.
    assert!(
        call["codeFlows"][0]["threadFlows"][0]["locations"]
            .as_array()
            .is_some_and(|l| !l.is_empty())
    );
    assert_eq!(doc["runs"][0]["invocations"][0]["exitCode"], 1);
}

#[test]
fn input_errors_and_several_files() {
    let (code, doc) = sarif(&[
        "tests/sarif/bad.jv",
        "examples/cell.jv",
        "tests/sarif/failing.jv",
        "tests/sarif/missing.jv",
    ]);
    assert_eq!(code, 2);
    assert_valid(&doc);
    let ids = rule_ids(&doc);
    assert_eq!(
        ids,
        [
            "parse.error",
            "call.precondition",
            "assert.failed",
            "invariant.not.preserved",
            "io.error"
        ]
    );
    let artifacts = doc["runs"][0]["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 4);
    for r in results(&doc) {
        let loc = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        let i = loc["index"].as_u64().unwrap() as usize;
        assert_eq!(artifacts[i]["location"]["uri"], loc["uri"]);
    }
    let parse = &results(&doc)[0];
    assert_eq!(parse["locations"][0]["physicalLocation"]["region"]["startLine"], 4);
    // A file that cannot be read has a location without a region.
    let io = &results(&doc)[4];
    assert!(io["locations"][0]["physicalLocation"].get("region").is_none());
    assert_eq!(
        io["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "tests/sarif/missing.jv"
    );
}

#[test]
fn absolute_paths_are_file_uris() {
    let abs = root().join("examples/cell.jv");
    let (code, doc) = sarif(&[abs.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_valid(&doc);
    let uri = doc["runs"][0]["artifacts"][0]["location"]["uri"].as_str().unwrap();
    assert!(uri.starts_with("file:///") && uri.ends_with("/examples/cell.jv"), "{uri}");
    assert!(results(&doc).is_empty());
}

#[test]
fn vacuous_warnings_and_timeouts_are_warnings() {
    let d = std::env::temp_dir().join(format!("idf-sarif-{}-warn", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("v.jv");
    let text = "class V {\n  static void m(int x)\n    requires x > 0;\n  {\n    if (x < 0) {\n      assert false;\n    }\n  }\n}\n";
    std::fs::write(&f, text).unwrap();
    let (code, doc) = sarif(&["--smoke", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_valid(&doc);
    assert_eq!(rule_ids(&doc), ["vacuous"]);
    assert_eq!(results(&doc)[0]["level"], "warning");
    // The solver's give-up on the nonlinear hang (a short budget).
    let (code, doc) = sarif(&["--timeout", "1", "tests/hang/nonlinear_timeout.jv"]);
    assert_eq!(code, 1);
    assert_valid(&doc);
    assert!(rule_ids(&doc).contains(&"verification.timeout"));
    for r in results(&doc).iter().filter(|r| r["ruleId"] == "verification.timeout") {
        assert_eq!(r["level"], "warning");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn exit_codes_are_the_other_formats() {
    for path in ["examples/cell.jv", "tests/sarif/failing.jv", "tests/sarif/bad.jv"] {
        let (human, _) = run(&[path]);
        let (json, _) = run(&["--format", "json", path]);
        let (sarif, _) = run(&["--format", "sarif", path]);
        assert_eq!((sarif, sarif), (human, json), "{path}");
    }
}

/// The document with what changes from machine to machine taken out (the working
/// directory; the version, which changes with every release).
fn stable(mut doc: Value) -> Value {
    let run = &mut doc["runs"][0];
    run.as_object_mut().unwrap().remove("originalUriBaseIds");
    run["tool"]["driver"]["version"] = "[version]".into();
    run["tool"]["driver"]["semanticVersion"] = "[version]".into();
    doc
}

#[test]
fn snapshot_of_a_document() {
    let (_, doc) = sarif(&["tests/sarif/failing.jv", "tests/sarif/bad.jv"]);
    assert_valid(&doc);
    insta::assert_snapshot!(serde_json::to_string_pretty(&stable(doc)).unwrap());
}

fn fingerprints(doc: &Value) -> Vec<(String, String)> {
    results(doc)
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["partialFingerprints"]["idfVerify/v1"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn fingerprints_are_stable_across_runs_and_moved_lines() {
    let (_, first) = sarif(&["tests/sarif/failing.jv", "tests/sarif/bad.jv"]);
    let (_, second) = sarif(&["tests/sarif/failing.jv", "tests/sarif/bad.jv"]);
    let fp = fingerprints(&first);
    assert_eq!(fp.len(), 4);
    assert_eq!(fp, fingerprints(&second));
    let distinct: std::collections::HashSet<_> = fp.iter().map(|(_, f)| f).collect();
    assert_eq!(distinct.len(), fp.len(), "{fp:?}");

    // The same programs moved down by a few lines (and re-indented), in another folder.
    let d: PathBuf = std::env::temp_dir().join(format!("idf-sarif-{}-moved", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let mut paths = Vec::new();
    for name in ["failing.jv", "bad.jv"] {
        let text = std::fs::read_to_string(root().join("tests/sarif").join(name)).unwrap();
        let moved: String = text.lines().map(|l| format!("  {l}\n")).collect();
        let p = d.join(name);
        std::fs::write(&p, format!("// moved\n\n\n{moved}")).unwrap();
        paths.push(p.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = paths.iter().map(|s| s.as_str()).collect();
    let (_, moved) = sarif(&args);
    assert_eq!(fingerprints(&moved), fp);
    let line = |doc: &Value| {
        results(doc)[1]["locations"][0]["physicalLocation"]["region"]["startLine"].clone()
    };
    assert_eq!(line(&moved).as_u64().unwrap(), line(&first).as_u64().unwrap() + 3);

    // A changed failing line is a new result.
    let failing =
        std::fs::read_to_string(&paths[0]).unwrap().replace("assert x > 0;", "assert x > 1;");
    std::fs::write(&paths[0], failing).unwrap();
    let (_, changed) = sarif(&args);
    let now = fingerprints(&changed);
    assert_eq!(now[0], fp[0]);
    assert_ne!(now[1], fp[1]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Microsoft's validator, where `.ci/run` installs it (or `SARIF_MULTITOOL` names it).
fn multitool() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SARIF_MULTITOOL").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let p = root().join(".ci/node_modules-dir/node_modules/.bin/sarif-multitool");
    p.exists().then_some(p)
}

#[test]
fn microsofts_sarif_validator_finds_no_error() {
    let Some(tool) = multitool() else {
        skip::skipped(
            "@microsoft/sarif-multitool is not installed (.ci/run installs it): only the schema checks ran",
        );
        return;
    };
    let d = std::env::temp_dir().join(format!("idf-sarif-{}-multitool", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let cases: [&[&str]; 3] = [
        &["--trace", "tests/sarif/failing.jv"],
        &["tests/sarif/bad.jv", "examples/cell.jv", "tests/sarif/missing.jv"],
        &["tests/sarif/failing.jv", "tests/sarif/bad.jv"],
    ];
    for (i, args) in cases.iter().enumerate() {
        let (_, doc) = sarif(args);
        let input = d.join(format!("case{i}.sarif"));
        let output = d.join(format!("case{i}.validation.sarif"));
        std::fs::write(&input, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let out = Command::new(&tool)
            .arg("validate")
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .unwrap();
        let console = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "the validator failed: {console}");
        // Its verdicts are a SARIF log: no result may be an error (warnings are advice).
        let log: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
        let errors: Vec<&Value> = log["runs"][0]["results"]
            .as_array()
            .map(|rs| rs.iter().filter(|r| r["level"] == "error").collect())
            .unwrap_or_default();
        assert!(errors.is_empty(), "case {i} {args:?}: {console}");
    }
    // And the validator is real: a line 0 is an error.
    let (_, mut doc) = sarif(&["tests/sarif/failing.jv"]);
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        0.into();
    let input = d.join("broken.sarif");
    let output = d.join("broken.validation.sarif");
    std::fs::write(&input, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out =
        Command::new(&tool).arg("validate").arg(&input).arg("-o").arg(&output).output().unwrap();
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let errors = log["runs"][0]["results"]
        .as_array()
        .map_or(0, |rs| rs.iter().filter(|r| r["level"] == "error").count());
    assert!(errors > 0, "{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn every_error_id_of_the_language_is_a_rule() {
    let Ok(lang) = std::fs::read_to_string(root().join("../shared/LANGUAGE.md")) else {
        skip::skipped(
            "no ../shared/LANGUAGE.md beside the checkout: the rules were not compared with its error ids",
        );
        return;
    };
    let (_, doc) = sarif(&["examples/cell.jv"]);
    let rules: Vec<&str> = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    // The first column of section 8's table: `| `id` | ...` (some rows name several).
    let mut ids = Vec::new();
    let section8 = lang
        .lines()
        .skip_while(|l| !l.starts_with("## 8."))
        .take_while(|l| !l.starts_with("## 9."));
    for line in section8.filter(|l| l.starts_with("| `")) {
        let first = line.split('|').nth(1).unwrap_or("");
        ids.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    assert!(ids.len() >= 19, "{ids:?}");
    for id in &ids {
        assert!(rules.contains(&id.as_str()), "no rule for {id}");
    }
}
