//! Mutation test for vacuity: in every verifying method and constructor of
//! `examples/` and of the acceptance suite (`../shared/suite`, when this checkout
//! has it beside it), insert `assert false;` before each statement and require the
//! mutant to fail with `assert.failed` exactly there. A mutant that verifies means
//! no path reached that statement: a silently dropped path, or a vacuous contract.
//!
//! Points no path reaches by construction are skipped: statements after a `return`
//! in the same block, members whose check `--smoke` finds vacuous, and the `assert`s
//! and `return`s it reports unreached (so every unreachable point is either caught
//! here or reported to the user). Mutants run in parallel in this process (one
//! member each).

mod skip;

use idf_verify::guard::STACK_SIZE;
use idf_verify::source::collect_files;
use idf_verify::source::front_end;
use idf_verify::source::select_members;
use idf_verify::syntax::ast::{Body, MemberKind, Stmt, StmtKind};
use idf_verify::verify::{Config, Status, verify_member};
use rayon::prelude::*;
use std::path::Path;

/// The start offsets of the statements of `stmts` where `assert false;` may go.
fn insertion_points(stmts: &[Stmt], out: &mut Vec<u32>) {
    for st in stmts {
        out.push(st.span.start);
        descend(st, out);
        if matches!(st.kind, StmtKind::Return(_)) {
            // The rest of the block is unreachable by construction.
            break;
        }
    }
}

/// Points inside a compound statement (not before it).
fn descend(st: &Stmt, out: &mut Vec<u32>) {
    match &st.kind {
        StmtKind::If { then, els, .. } => {
            insertion_points(&then.stmts, out);
            match els.as_deref() {
                // `else if`: nothing may go between `else` and `if`.
                Some(e @ Stmt { kind: StmtKind::If { .. }, .. }) => descend(e, out),
                Some(Stmt { kind: StmtKind::Block(b), .. }) => insertion_points(&b.stmts, out),
                Some(other) => insertion_points(std::slice::from_ref(other), out),
                None => {}
            }
        }
        StmtKind::While { body, .. } => insertion_points(&body.stmts, out),
        StmtKind::Block(b) => insertion_points(&b.stmts, out),
        _ => {}
    }
}

struct Mutant {
    file: String,
    member: String,
    offset: u32,
    text: String,
}

fn mutants_of(path: &Path) -> Vec<Mutant> {
    let Ok(text) = std::fs::read_to_string(path) else { return vec![] };
    let Ok(program) = front_end(&text) else { return vec![] };
    let config = Config { smoke: true, timeout: Some(60.0), ..Config::default() };
    let mut out = vec![];
    for (r, name) in select_members(&program, &[]) {
        let m = &program.classes[r.class].members[r.member];
        if !matches!(m.kind, MemberKind::Method | MemberKind::Constructor) {
            continue;
        }
        let Ok(res) = verify_member(&program, r, &config) else { continue };
        // Only verifying members, and not those no path runs through.
        if res.status != Status::Verified || res.warnings.iter().any(|w| w.span == m.name.span) {
            continue;
        }
        let Body::Block(b) = &m.body else { continue };
        let mut points = vec![];
        insertion_points(&b.stmts, &mut points);
        // An `assert` or `return` that `--smoke` already reports unreachable (a
        // branch the precondition rules out) is not a point any path reaches.
        points.retain(|p| !res.warnings.iter().any(|w| w.span.start == *p));
        for p in points {
            let at = p as usize;
            let mutated = format!("{}assert false; {}", &text[..at], &text[at..]);
            out.push(Mutant {
                file: path.display().to_string(),
                member: name.clone(),
                offset: p,
                text: mutated,
            });
        }
    }
    out
}

/// `None` when the mutant fails as it must; otherwise why not.
fn check(m: &Mutant) -> Option<String> {
    let line = m.text[..m.offset as usize].matches('\n').count() + 1;
    let what = format!("{}:{line} ({})", m.file, m.member);
    let program = match front_end(&m.text) {
        Ok(p) => p,
        Err(e) => return Some(format!("{what}: the mutant does not parse: {}", e[0].message)),
    };
    let Some((r, _)) = select_members(&program, std::slice::from_ref(&m.member)).pop() else {
        return Some(format!("{what}: member lost"));
    };
    // Every other mutant is verified with state merging off: both must fail it.
    let config =
        Config { timeout: Some(60.0), merge: m.offset.is_multiple_of(2), ..Config::default() };
    match verify_member(&program, r, &config) {
        Err(e) => Some(format!("{what}: internal error: {e}")),
        // Reported at the conjunct `false`, inside the inserted statement.
        Ok(res)
            if res.errors.iter().any(|e| {
                e.id == "assert.failed" && (m.offset..m.offset + 13).contains(&e.span.start)
            }) =>
        {
            None
        }
        Ok(res) => Some(format!(
            "{what}: `assert false;` inserted here was not reported ({:?}, {} errors)",
            res.status,
            res.errors.len()
        )),
    }
}

#[test]
fn assert_false_before_any_statement_of_a_verified_member_fails() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("examples")];
    let suite = root.join("../shared/suite");
    if suite.is_dir() {
        dirs.push(suite);
    } else {
        skip::skipped(&format!("{} is absent: only examples/ were mutated", suite.display()));
    }
    // The suite's `bad/` inputs do not parse: they give no mutants.
    let files = collect_files(&dirs);
    assert!(!files.is_empty(), "no examples");
    let pool = rayon::ThreadPoolBuilder::new().stack_size(STACK_SIZE).build().expect("pool");
    let (count, failures) = pool.install(|| {
        let mutants: Vec<Mutant> = files.par_iter().flat_map(|f| mutants_of(f)).collect();
        let failures: Vec<String> = mutants.par_iter().filter_map(check).collect();
        (mutants.len(), failures)
    });
    assert!(count > 100, "only {count} mutants: the examples lost their statements?");
    assert!(failures.is_empty(), "{} of {count} mutants:\n{}", failures.len(), failures.join("\n"));
}
