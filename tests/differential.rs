//! Differential soundness fuzzing (issue 11, part 4): random programs in the shapes
//! that matter (`differential/shapes.rs`) are verified member by member; every member the
//! verifier calls verified is run by the concrete interpreter on random input states.
//! A concrete failure in the activation of a verified member (its precondition held
//! when it was entered) is an UNSOUND verdict: the test fails and writes the program,
//! the member, the inputs and the failure to `target/differential/`.
//!
//! It also counts false alarms: members the verifier rejects whose every concrete run
//! (at least one accepted input) passes and none of whose counterexamples is confirmed
//! by replaying it (`idf_verify::replay`).
//!
//! CI runs a fixed set of seeds. The long run (release build, both cores):
//! `DIFF_FUZZ_N=10000 cargo test --release --test differential -- --ignored --nocapture`
//! (`DIFF_FUZZ_SEED` moves the seeds, `DIFF_FUZZ_JOBS` sets the threads,
//! `DIFF_FUZZ_RUNS` the inputs per member, `DIFF_FUZZ_STOP=1` stops at the first unsound
//! verdict and prints how many programs it took, `DIFF_FUZZ_SAVE_FALSE=1` writes the
//! programs of false alarms to `target/differential/` too).

#[path = "differential/families.rs"]
mod families;
#[path = "differential/replay_check.rs"]
mod replay_check;
#[path = "differential/shapes.rs"]
mod shapes;

use idf_verify::guard::with_big_stack;
use idf_verify::interp::{Outcome, inputs::random_inputs, line_of, run_member};
use idf_verify::source::front_end;
use idf_verify::syntax::ast::{MemberKind, MemberRef, Program};
use idf_verify::verify::{Config, Status, verify_member};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Counts of one run.
#[derive(Default, Debug, Clone)]
struct Tally {
    programs: usize,
    members: usize,
    verified: usize,
    /// Methods and constructors (the generated code; the rest is a fixed library).
    methods: usize,
    methods_verified: usize,
    /// Verified members run on at least one accepted input.
    checked: usize,
    concrete_runs: usize,
    unsound: usize,
    false_alarms: usize,
    out_of_steps: usize,
    internal: usize,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.programs += o.programs;
        self.members += o.members;
        self.verified += o.verified;
        self.methods += o.methods;
        self.methods_verified += o.methods_verified;
        self.checked += o.checked;
        self.concrete_runs += o.concrete_runs;
        self.unsound += o.unsound;
        self.false_alarms += o.false_alarms;
        self.out_of_steps += o.out_of_steps;
        self.internal += o.internal;
    }
}

/// An unsound verdict: a verified member that fails concretely.
struct Unsound {
    /// The program's index in its campaign.
    index: usize,
    seed: u64,
    program: String,
    report: String,
}

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| {
        let v = v.trim();
        match v.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => v.parse().ok(),
        }
    })
}

fn splitmix(x: u64) -> u64 {
    shapes::Rng(x).next()
}

fn member_name(p: &Program, m: MemberRef) -> String {
    let c = &p.classes[m.class];
    let mem = &c.members[m.member];
    if mem.kind == MemberKind::Constructor {
        format!("{}.new", c.name.name)
    } else {
        format!("{}.{}", c.name.name, mem.name.name)
    }
}

/// Verify every member of one program and run the verified ones concretely.
fn check_program(index: usize, seed: u64, runs: usize, fam: u64) -> (Tally, Vec<Unsound>) {
    // `DIFF_FUZZ_FAMILY` checks programs of one family of `families.rs` alone.
    let src = match std::env::var("DIFF_FUZZ_FAMILY") {
        Ok(name) => families::Fam::new(seed).one(&name).expect("DIFF_FUZZ_FAMILY names a family"),
        Err(_) => shapes::generate(seed, fam),
    };
    let mut t = Tally { programs: 1, ..Tally::default() };
    let program = match front_end(&src) {
        Ok(p) => p,
        Err(e) => panic!("generator bug (seed {seed:#x}): the front end rejects\n{src}\n{e:?}"),
    };
    // Every other program is verified with state merging off: the verdicts of both
    // must be sound.
    let config = Config { timeout: Some(5.0), merge: index.is_multiple_of(2), ..Config::default() };
    let mut verdicts: HashMap<MemberRef, Status> = HashMap::new();
    let mut members = vec![];
    for (ci, class) in program.classes.iter().enumerate() {
        for (mi, m) in class.members.iter().enumerate() {
            if m.kind == MemberKind::Field {
                continue;
            }
            let member = MemberRef { class: ci, member: mi };
            t.members += 1;
            let r = catch_unwind(AssertUnwindSafe(|| verify_member(&program, member, &config)));
            match r {
                Ok(Ok(res)) => {
                    verdicts.insert(member, res.status);
                    members.push(member);
                }
                _ => t.internal += 1,
            }
        }
    }
    let mut found = vec![];
    for &member in &members {
        let verified = verdicts.get(&member) == Some(&Status::Verified);
        let kind = program.classes[member.class].members[member.member].kind;
        let is_method = matches!(kind, MemberKind::Method | MemberKind::Constructor);
        if verified {
            t.verified += 1;
        }
        if is_method {
            t.methods += 1;
            t.methods_verified += verified as usize;
        }
        let mut accepted = 0;
        let mut all_passed = true;
        let mut reported = false;
        for k in 0..runs {
            let inputs =
                random_inputs(&program, member, splitmix(seed ^ ((k as u64 + 1) * 0x51_7cc1)));
            let outcome = run_member(&program, member, &inputs);
            match &outcome {
                Outcome::Rejected(_) => continue,
                Outcome::OutOfSteps => {
                    t.out_of_steps += 1;
                    all_passed = false;
                }
                Outcome::Passed => {}
                Outcome::Failed(f) => {
                    all_passed = false;
                    if verdicts.get(&f.member) == Some(&Status::Verified) && !reported {
                        reported = true;
                        t.unsound += 1;
                        let report = format!(
                            "UNSOUND: `{}` is verified, but running `{}` on\n  {:?}\nfails with {} ({}) on line {} in `{}`: {}",
                            member_name(&program, f.member),
                            member_name(&program, member),
                            inputs,
                            f.id,
                            f.reason,
                            line_of(&src, f.span),
                            member_name(&program, f.member),
                            f.message
                        );
                        found.push(Unsound { index, seed, program: src.clone(), report });
                    }
                }
            }
            accepted += 1;
            t.concrete_runs += 1;
        }
        if verified && accepted > 0 {
            t.checked += 1;
        }
        let failed = verdicts.get(&member) == Some(&Status::Failed);
        if failed && accepted > 0 && all_passed && !replay_check::confirms(&program, &src, member) {
            t.false_alarms += 1;
            if std::env::var("DIFF_FUZZ_SAVE_FALSE").is_ok() {
                let dir =
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/differential");
                let _ = std::fs::create_dir_all(&dir);
                let name = member_name(&program, member);
                let path = dir.join(format!("false-alarm-{index:05}-{name}.jv"));
                let head = format!(
                    "// false alarm: `{name}` fails verification, its {accepted} accepted runs pass\n"
                );
                let _ = std::fs::write(path, format!("{head}{src}"));
            }
        }
    }
    (t, found)
}

fn save(u: &Unsound) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/differential");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("unsound-{:05}-{:016x}.jv", u.index, u.seed));
    let comment: String = u.report.lines().map(|l| format!("// {l}\n")).collect();
    let _ = std::fs::write(
        &path,
        format!(
            "{comment}// program #{} of the campaign, seed {:#x}\n{}",
            u.index, u.seed, u.program
        ),
    );
    path.display().to_string()
}

/// Check `n` programs from `base` on `jobs` threads; with `stop`, stop at the first
/// unsound verdict. Returns the tally, the unsound verdicts and, with `stop`, the
/// index of the program that showed the first.
fn campaign(
    base: u64,
    n: usize,
    jobs: usize,
    runs: usize,
    stop: bool,
    fam: u64,
) -> (Tally, Vec<Unsound>, Option<usize>) {
    let next = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let total = Mutex::new(Tally::default());
    let unsound = Mutex::new(Vec::new());
    let first = Mutex::new(None::<usize>);
    let progress = std::env::var("DIFF_FUZZ_PROGRESS").is_ok();
    // `DIFF_FUZZ_START` continues a campaign: programs `start..start + n` of the seed.
    let start = env("DIFF_FUZZ_START").unwrap_or(0) as usize;
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                with_big_stack(|| {
                    loop {
                        let i = start + next.fetch_add(1, Ordering::Relaxed);
                        if i >= start + n || halt.load(Ordering::Relaxed) {
                            break;
                        }
                        let seed = splitmix(base ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
                        let (t, found) = check_program(i, seed, runs, fam);
                        let mut tot = total.lock().unwrap();
                        tot.add(&t);
                        if progress && tot.programs % 100 == 0 {
                            eprintln!("{} programs: {tot:?}", tot.programs);
                        }
                        drop(tot);
                        if !found.is_empty() {
                            // Written at once: a long run stopped early keeps them.
                            for u in &found {
                                eprintln!("{}\n  program written to {}", u.report, save(u));
                            }
                            let mut f = first.lock().unwrap();
                            if f.is_none_or(|x| i < x) {
                                *f = Some(i);
                            }
                            if stop {
                                halt.store(true, Ordering::Relaxed);
                            }
                            unsound.lock().unwrap().extend(found);
                        }
                    }
                })
            });
        }
    });
    (total.into_inner().unwrap(), unsound.into_inner().unwrap(), first.into_inner().unwrap())
}

fn summarize(t: &Tally, found: &[Unsound]) -> String {
    let mut out = format!(
        "{} programs, {} members, {} verified ({} of {} methods), {} verified verdicts checked by {} concrete runs: {} unsound, {} false alarms (failed, every run passed, no counterexample confirmed), {} runs out of steps, {} internal errors",
        t.programs,
        t.members,
        t.verified,
        t.methods_verified,
        t.methods,
        t.checked,
        t.concrete_runs,
        t.unsound,
        t.false_alarms,
        t.out_of_steps,
        t.internal
    );
    for u in found {
        out.push_str(&format!("\n\n{}\n  program written to {}", u.report, save(u)));
    }
    out
}

/// How often (percent) a CI program carries families of `families.rs`.
const CI_FAMILIES: u64 = 25;

/// CI: a fixed set of seeds, in a debug build, in well under a minute.
#[test]
fn verified_members_never_fail_concretely() {
    let n = env("DIFF_FUZZ_CI_N").unwrap_or(120) as usize;
    // A quarter of the programs carry families (`families.rs`), so that CI keeps its time.
    let (t, found, _) = campaign(0xd1ff_5eed, n, 2, 12, false, CI_FAMILIES);
    let summary = summarize(&t, &found);
    eprintln!("{summary}");
    assert!(found.is_empty(), "{summary}");
    assert!(t.checked > 0, "no verified member was checked: {summary}");
}

/// The long run: `DIFF_FUZZ_N` programs (default 10,000).
#[test]
#[ignore]
fn differential_campaign() {
    let n = env("DIFF_FUZZ_N").unwrap_or(10_000) as usize;
    let base = env("DIFF_FUZZ_SEED").unwrap_or(0x005e_ed0f_d1ff);
    let jobs = env("DIFF_FUZZ_JOBS").unwrap_or(2) as usize;
    let runs = env("DIFF_FUZZ_RUNS").unwrap_or(20) as usize;
    let stop = env("DIFF_FUZZ_STOP").is_some();
    let fam = env("DIFF_FUZZ_FAMILIES").unwrap_or(90);
    let (t, found, first) = campaign(base, n, jobs, runs, stop, fam);
    let summary = summarize(&t, &found);
    println!("{summary}");
    if let Some(i) = first {
        println!("first unsound verdict in program #{} (0-based {i})", i + 1);
    }
    assert!(found.is_empty(), "{} unsound verdicts", found.len());
}

/// Generated programs pass the front end, and generation is deterministic.
#[test]
fn generator_is_well_typed_and_deterministic() {
    for i in 0..200u64 {
        let seed = splitmix(i);
        let src = shapes::generate(seed, 100);
        assert_eq!(src, shapes::generate(seed, 100));
        if let Err(e) = front_end(&src) {
            panic!("seed {seed:#x}:\n{src}\n{e:?}");
        }
    }
}

/// `DIFF_FUZZ_PRINT=<seed>` prints the program of one seed.
#[test]
fn print_program() {
    if let Some(seed) = env("DIFF_FUZZ_PRINT") {
        println!("{}", shapes::generate(seed, env("DIFF_FUZZ_FAMILIES").unwrap_or(90)));
    }
}

/// The project's own programs (`tests/programs`, `examples`, `../shared/suite`): every
/// member the verifier verifies runs on random inputs without a concrete failure in a
/// verified member's activation. Ignored in CI (it verifies every program again, which
/// `tests/programs.rs` already does): `cargo test --release --test differential --
/// --ignored verified_test_programs`.
#[test]
#[ignore]
fn verified_test_programs_never_fail_concretely() {
    fn jv_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
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
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![];
    for d in ["tests/programs/verify", "examples", "../shared/suite"] {
        jv_files(&root.join(d), &mut files);
    }
    files.sort();
    let config = Config { timeout: Some(5.0), ..Config::default() };
    let runs = env("DIFF_SUITE_RUNS").unwrap_or(8);
    let problems = Mutex::new(vec![]);
    let checked = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                with_big_stack(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    let Ok(text) = std::fs::read_to_string(path) else { continue };
                    if text.contains("// flags:") || text.contains("// check-only") {
                        continue;
                    }
                    let Ok(program) = front_end(&text) else { continue };
                    let mut verdicts = HashMap::new();
                    for (ci, class) in program.classes.iter().enumerate() {
                        for (mi, m) in class.members.iter().enumerate() {
                            if m.kind == MemberKind::Field {
                                continue;
                            }
                            let member = MemberRef { class: ci, member: mi };
                            let r = catch_unwind(AssertUnwindSafe(|| {
                                verify_member(&program, member, &config)
                            }));
                            if let Ok(Ok(res)) = r {
                                verdicts.insert(member, res.status);
                            }
                        }
                    }
                    for &member in verdicts.keys() {
                        for k in 0..runs {
                            let inputs = random_inputs(&program, member, k);
                            if let Outcome::Failed(f) = run_member(&program, member, &inputs)
                                && verdicts.get(&f.member) == Some(&Status::Verified)
                            {
                                    problems.lock().unwrap().push(format!(
                                        "{}: `{}` is verified but fails concretely with {} on line {}: {} (inputs {inputs:?})",
                                        path.display(),
                                        member_name(&program, f.member),
                                        f.id,
                                        line_of(&text, f.span),
                                        f.message
                                    ));
                            }
                            checked.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    eprintln!("{} files, {} runs", files.len(), checked.load(Ordering::Relaxed));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `DIFF_FUZZ_FAMILY=<family>` (`dispatch`, `ensures`, `nested`, `ctor`, `chains`,
/// `sorted`, `trees`) with `DIFF_FUZZ_PRINT=<seed>` prints one program of that family
/// alone (`tests/differential/families.rs`).
#[test]
fn print_family() {
    if let (Ok(name), Some(seed)) = (std::env::var("DIFF_FUZZ_FAMILY"), env("DIFF_FUZZ_PRINT")) {
        match families::Fam::new(seed).one(&name) {
            Some(src) => println!("{src}"),
            None => panic!("no family `{name}`"),
        }
    }
}
