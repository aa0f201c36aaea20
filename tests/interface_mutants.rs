//! Robustness of interfaces (LANGUAGE.md section 10): random edits of the interface
//! programs (`tests/programs/verify/interfaces`, `examples/visitor.jv` and the suite's
//! `21_visitor.jv` when it is beside this checkout) go through the front end and, when
//! they still check, every member through `verify_member`, with and without inference.
//! Verdicts do not matter: nothing may panic, and no member may end in an internal
//! error (which includes a path ledger that does not balance).
//!
//! An edit deletes a line, swaps one name of the program for another (a class for an
//! interface, a predicate for a pure method, ...), drops a contract clause, or drops
//! an `implements`/`extends` list. `MUTANTS=<n>` sets how many (default 80),
//! `MUTANT_SEED=<s>` the seed, `MUTANT_PRINT=1` prints each mutant.

use idf_verify::guard::catch_panic;
use idf_verify::guard::with_big_stack;
use idf_verify::source::front_end;
use idf_verify::syntax::ast::{MemberKind, MemberRef};
use idf_verify::verify::{Config, verify_member};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

use idf_verify::rng::Rng;

fn sources() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join("tests/programs/verify/interfaces"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jv"))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths.push(root.join("examples/visitor.jv"));
    let suite = root.join("../shared/suite/21_visitor.jv");
    if suite.is_file() {
        paths.push(suite);
    }
    paths.into_iter().filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t))).collect()
}

/// The identifiers of a program that name declarations (after `class`, `interface`,
/// `predicate`, `pure T`, and member names before `(`).
fn names(src: &str) -> Vec<String> {
    let words: Vec<&str> =
        src.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).collect();
    let mut out: Vec<String> = vec![];
    for w in words.windows(2) {
        if matches!(
            w[0],
            "class" | "interface" | "predicate" | "implements" | "extends" | "int" | "void"
        ) && w[1].chars().next().is_some_and(|c| c.is_alphabetic())
            && !out.iter().any(|x| x == w[1])
        {
            out.push(w[1].to_string());
        }
    }
    out
}

fn mutate(src: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = src.lines().collect();
    match rng.below(4) {
        0 => {
            // Delete a line.
            let i = rng.below(lines.len());
            lines
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n")
        }
        1 => {
            // Replace one occurrence of a declared name by another.
            let ns = names(src);
            if ns.len() < 2 {
                return src.to_string();
            }
            let (a, b) = (&ns[rng.below(ns.len())], &ns[rng.below(ns.len())]);
            let hits: Vec<usize> = src.match_indices(a.as_str()).map(|(i, _)| i).collect();
            if hits.is_empty() {
                return src.to_string();
            }
            let at = hits[rng.below(hits.len())];
            format!("{}{}{}", &src[..at], b, &src[at + a.len()..])
        }
        2 => {
            // Drop one `requires` or `ensures` clause.
            let hits: Vec<usize> = src
                .match_indices("requires ")
                .chain(src.match_indices("ensures "))
                .map(|(i, _)| i)
                .collect();
            if hits.is_empty() {
                return src.to_string();
            }
            let at = hits[rng.below(hits.len())];
            match src[at..].find(';') {
                Some(end) => format!("{}{}", &src[..at], &src[at + end + 1..]),
                None => src.to_string(),
            }
        }
        _ => {
            // Drop an `implements` or `extends` list.
            let hits: Vec<usize> = src
                .match_indices(" implements ")
                .chain(src.match_indices(" extends "))
                .map(|(i, _)| i)
                .collect();
            if hits.is_empty() {
                return src.to_string();
            }
            let at = hits[rng.below(hits.len())];
            match src[at..].find('{') {
                Some(end) => format!("{} {}", &src[..at], &src[at + end..]),
                None => src.to_string(),
            }
        }
    }
}

/// Problems found in one mutant (panics and internal errors), and whether it checked.
fn check(src: &str) -> (Vec<String>, bool) {
    let text = src.to_string();
    let front = with_big_stack(move || catch_panic(|| front_end(&text)));
    let prog = match front {
        Err(p) => return (vec![format!("front end panicked: {p}")], false),
        Ok(Err(_)) => return (vec![], false),
        Ok(Ok(p)) => p,
    };
    let configs = [
        Config { timeout: Some(2.0), ..Config::default() },
        Config {
            infer: false,
            timeout: Some(2.0),
            trace: true,
            counterexample: true,
            ..Config::default()
        },
    ];
    let mut out = vec![];
    for (ci, class) in prog.classes.iter().enumerate() {
        for (mi, m) in class.members.iter().enumerate() {
            if m.kind == MemberKind::Field {
                continue;
            }
            for config in &configs {
                let member = MemberRef { class: ci, member: mi };
                let r = with_big_stack(|| catch_panic(|| verify_member(&prog, member, config)));
                let name = format!("{}.{}", class.name.name, m.name.name);
                match r {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => out.push(format!("{name}: internal error: {e}")),
                    Err(p) => out.push(format!("{name}: panic: {p}")),
                }
            }
        }
    }
    (out, true)
}

#[test]
fn edited_interface_programs_never_crash() {
    let n: usize = std::env::var("MUTANTS").ok().and_then(|s| s.parse().ok()).unwrap_or(80);
    let seed: u64 =
        std::env::var("MUTANT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x1f_ace);
    let print = std::env::var("MUTANT_PRINT").is_ok();
    let srcs = sources();
    assert!(!srcs.is_empty(), "no interface programs found");
    let mutants: Vec<(String, String)> = (0..n)
        .map(|i| {
            let mut rng = Rng(seed ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
            let (path, src) = &srcs[rng.below(srcs.len())];
            let mut m = src.clone();
            for _ in 0..1 + rng.below(3) {
                m = mutate(&m, &mut rng);
            }
            (format!("mutant {i} of {}", path.display()), m)
        })
        .collect();
    let results: Vec<(Vec<String>, bool)> = mutants
        .par_iter()
        .map(|(what, src)| {
            if print {
                eprintln!("// {what}\n{src}");
            }
            let (f, checked) = check(src);
            (f.into_iter().map(|f| format!("{what}: {f}\n{src}")).collect(), checked)
        })
        .collect();
    let checked = results.iter().filter(|r| r.1).count();
    eprintln!("{n} mutants, {checked} passed the front end and were verified");
    let findings: Vec<String> = results.into_iter().flat_map(|r| r.0).collect();
    assert!(findings.is_empty(), "{} findings:\n{}", findings.len(), findings.join("\n\n"));
}
