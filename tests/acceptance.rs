//! The acceptance suites gate CI: every `.jv` file of `../shared/suite` (with its
//! `bad/` inputs) and of `../shared/soundness` must meet its `// expect:` comments,
//! exactly as `idf-verify --expect` checks them, except the files listed in
//! `tests/acceptance-pending.txt`, which must still miss one (so the list only shrinks).
//! When this checkout has no `../shared` beside it, the test says so (and fails under `CI=true`).

mod skip;

use idf_verify::pipeline::Options;
use idf_verify::report::expect;
use std::path::Path;

#[test]
fn acceptance_suites_meet_their_expectations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared");
    if !shared.join("suite").is_dir() {
        skip::skipped(&format!(
            "{} is absent: the acceptance suites did not run",
            shared.display()
        ));
        return;
    }
    let pending_text =
        std::fs::read_to_string(root.join("tests/acceptance-pending.txt")).unwrap_or_default();
    let pending: Vec<&str> = pending_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let dirs = [shared.join("suite"), shared.join("soundness")];
    let run = idf_verify::pipeline::run::run(&dirs, &Options::default());
    assert!(run.files.len() >= 30, "only {} acceptance files", run.files.len());
    let mut problems = vec![];
    for f in &run.files {
        let rel = Path::new(&f.source.path)
            .strip_prefix(&shared)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| f.source.path.clone());
        let mismatches = expect::check_file(f);
        let is_pending = pending.contains(&rel.as_str());
        match (is_pending, mismatches.is_empty()) {
            (false, false) => problems.extend(mismatches.iter().map(|m| m.render(&rel))),
            (true, true) => problems.push(format!(
                "{rel} meets its expectations now: remove it from tests/acceptance-pending.txt"
            )),
            _ => {}
        }
    }
    for p in &pending {
        if !run.files.iter().any(|f| f.source.path.ends_with(p)) {
            problems.push(format!("pending file {p} does not exist"));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
