//! The path ledger balances on every member of the acceptance suite (when this
//! checkout has `../shared/suite` beside it), of `examples/` and of the data-driven
//! programs: every path that started ended as completed, failed, pruned, timed out or
//! merged into a join, as `--stats` shows.

use idf_verify::pipeline::FileStatus;
use idf_verify::pipeline::MemberOutcome;
use idf_verify::pipeline::Options;
use idf_verify::verify::{Config, Status};
use std::path::Path;

#[test]
fn every_path_ends_in_the_ledger() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("examples"), root.join("tests/programs/verify")];
    let suite = root.join("../shared/suite");
    if suite.is_dir() {
        dirs.push(suite);
    }
    // Through the driver, with a generous budget: a query that never ends is
    // abandoned as a timeout (and then has no ledger to check), never a hung test.
    let config = Config { stats: true, timeout: Some(120.0), ..Config::default() };
    let run = idf_verify::pipeline::run::run(&dirs, &Options { config, ..Options::default() });
    assert!(run.files.len() > 50, "only {} files", run.files.len());
    let mut bad = vec![];
    for f in &run.files {
        let FileStatus::Checked(members) = &f.status else { continue };
        for m in members {
            match m {
                MemberOutcome::Internal { name, message, .. } => {
                    bad.push(format!("{}: {name}: {message}", f.source.path))
                }
                MemberOutcome::Done(r) => match &r.stats {
                    None if r.status == Status::Timeout => {}
                    None => bad.push(format!("{}: {}: no stats", f.source.path, r.name)),
                    Some(s) if !s.ledger.balanced() || s.ledger.started == 0 => {
                        bad.push(format!("{}: {}: ledger {:?}", f.source.path, r.name, s.ledger))
                    }
                    Some(_) => {}
                },
            }
        }
    }
    assert!(bad.is_empty(), "{} members:\n{}", bad.len(), bad.join("\n"));
}
