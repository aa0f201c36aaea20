//! The path ledger balances on every member of the acceptance suite (when this
//! checkout has `../shared/suite` beside it), of `examples/` and of the data-driven
//! programs: every path that started ended as completed, failed, pruned, timed out or
//! merged into a join, as `--stats` shows.

use idf_verify::driver::{STACK_SIZE, collect_files, front_end, select_members};
use idf_verify::verify::{Config, verify_member};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

fn check_file(path: &PathBuf) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return vec![] };
    let Ok(program) = front_end(&text) else { return vec![] };
    let config = Config { stats: true, ..Config::default() };
    let mut out = vec![];
    for (r, name) in select_members(&program, &[]) {
        match verify_member(&program, r, &config) {
            Err(e) => out.push(format!("{}: {name}: {e}", path.display())),
            Ok(res) => {
                let Some(s) = res.stats else {
                    out.push(format!("{}: {name}: no stats", path.display()));
                    continue;
                };
                let l = s.ledger;
                if !l.balanced() || l.started == 0 {
                    out.push(format!("{}: {name}: ledger {l:?}", path.display()));
                }
            }
        }
    }
    out
}

#[test]
fn every_path_ends_in_the_ledger() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("examples"), root.join("tests/programs/verify")];
    let suite = root.join("../shared/suite");
    if suite.is_dir() {
        dirs.push(suite);
    }
    let files = collect_files(&dirs);
    assert!(files.len() > 50, "only {} files", files.len());
    let pool = rayon::ThreadPoolBuilder::new().stack_size(STACK_SIZE).build().expect("pool");
    let bad: Vec<String> = pool.install(|| files.par_iter().flat_map(check_file).collect());
    assert!(bad.is_empty(), "{} members:\n{}", bad.len(), bad.join("\n"));
}
