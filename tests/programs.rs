//! The data-driven harness: every `tests/programs/**/*.jv` goes through the same pipeline
//! as `idf-verify --expect` (through the library, not the binary), and the test fails
//! listing every mismatch between `// expect: ID` comments and what was reported.
//!
//! Architecture invariant: the comparison is `report::expect`'s, shared with the CLI.
//! Leading comment lines may configure a file: `// check-only` (parse and check, do not
//! verify: for front-end programs not meant to be proved) and `// flags: --no-infer`
//! (the CLI flag of that name). An internal error of the verifier (its `Err` or a
//! panic) is a mismatch like any other. Every file runs with `--smoke`: a member that
//! verifies vacuously, or an `assert`/`return` no path reaches, must be expected
//! (`// expect: vacuous`); and again without it, as users run it (every expectation
//! but `vacuous` must then be met).

use idf_verify::pipeline::Options;
use idf_verify::report::expect;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The options a file's header asks for: (check only, inference on).
fn header(path: &Path) -> (bool, bool) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let (mut check_only, mut infer) = (false, true);
    for line in text.lines().map(str::trim).take_while(|l| l.starts_with("//")) {
        if line == "// check-only" {
            check_only = true;
        } else if let Some(flags) = line.strip_prefix("// flags:") {
            for flag in flags.split_whitespace() {
                match flag {
                    "--no-infer" => infer = false,
                    other => panic!("{}: unknown flag `{other}`", path.display()),
                }
            }
        }
    }
    (check_only, infer)
}

#[test]
fn programs_meet_their_expectations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let files = idf_verify::source::collect_files(&[root]);
    assert!(!files.is_empty(), "no programs found under tests/programs");
    let mut groups: BTreeMap<(bool, bool), Vec<PathBuf>> = BTreeMap::new();
    for f in files {
        groups.entry(header(&f)).or_default().push(f);
    }
    let mut failures = Vec::new();
    // Twice: with `--smoke`, and as users run it (without: branches are then pruned
    // by feasibility checks whose solver work is capped, and `vacuous` is not
    // reported, so those expectations are not asked for).
    for smoke in [true, false] {
        for ((check_only, infer), paths) in &groups {
            let mut opts = Options { check_only: *check_only, ..Options::default() };
            opts.config.infer = *infer;
            // Vacuity is checked everywhere: a verified member no path runs through
            // must say so with `// expect: vacuous`.
            opts.config.smoke = smoke;
            // A generous budget: a solver query that never ends becomes a reported
            // timeout (a mismatch), never a hung test run.
            opts.config.timeout = Some(120.0);
            let run = idf_verify::pipeline::run::run(paths, &opts);
            for f in &run.files {
                let vacuity = |m: &expect::Mismatch| matches!(m, expect::Mismatch::Missing { id, .. } if id == "vacuous");
                failures.extend(expect::check_file(f).iter().filter(|m| smoke || !vacuity(m)).map(
                    |m| {
                        format!(
                            "{}{}",
                            if smoke { "" } else { "(no smoke) " },
                            m.render(&f.source.path)
                        )
                    },
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}
