//! `idf-verify test PATHS`: run every member concretely on random input states (issue
//! 11, part 3) and report each distinct concrete failure with the inputs that reached
//! it. Inputs that do not satisfy a member's precondition are rejected and do not
//! count; a run that exhausts its budget is counted, never reported as a failure.
//!
//! Architecture invariant: this sits below the pipeline, beside `replay`: it uses the front
//! end and the interpreter only, never the verifier, and it prints (the library
//! modules below it never do). Input states come from [`random_inputs`] by rejection,
//! not from solver models, so a precondition that few random states satisfy gets few
//! accepted runs (the summary says how many).

use crate::interp::inputs::random_inputs;
use crate::interp::value::ObjKind;
use crate::interp::{Inputs, Outcome, line_of, run_member};
use crate::source::collect_files;
use crate::source::escape_controls;
use crate::source::front_end;
use crate::source::load;
use crate::source::select_members;
use crate::syntax::ast::{MemberRef, Program};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// Options of `idf-verify test`.
#[derive(Clone, Debug)]
pub struct TestOptions {
    pub paths: Vec<PathBuf>,
    /// Input states tried per member.
    pub runs: u64,
    pub seed: u64,
    /// `Class.member` names; empty means all.
    pub methods: Vec<String>,
}

/// Totals of a run of `idf-verify test`.
#[derive(Clone, Debug, Default)]
pub struct TestSummary {
    pub members: usize,
    pub runs: u64,
    pub accepted: u64,
    pub failures: usize,
    pub out_of_steps: u64,
    pub input_errors: usize,
}

/// The inputs of a run, readably: receiver, arguments, then every object.
pub fn show_inputs(program: &Program, member: MemberRef, inputs: &Inputs) -> String {
    let m = &program.classes[member.class].members[member.member];
    let mut parts = vec![];
    if let Some(t) = &inputs.this {
        parts.push(format!("this = {t}"));
    }
    for (p, v) in m.params.iter().zip(&inputs.args) {
        parts.push(format!("{} = {v}", p.name.name));
    }
    let layout = crate::interp::value::Layout::new(program);
    for (o, obj) in inputs.heap.objects.iter().enumerate() {
        let body = match &obj.kind {
            ObjKind::Class(Some(c)) => {
                let fields: Vec<String> = layout.field_names[*c]
                    .iter()
                    .zip(&obj.slots)
                    .map(|(f, v)| format!("{f}: {v}"))
                    .collect();
                format!("{} {{{}}}", program.classes[*c].name.name, fields.join(", "))
            }
            ObjKind::Class(None) => "Object {}".to_string(),
            ObjKind::Array(t) => {
                let elems: Vec<String> = obj.slots.iter().map(|v| v.to_string()).collect();
                format!("{t}[] {{{}}}", elems.join(", "))
            }
        };
        parts.push(format!("o{o} = {body}"));
    }
    if parts.is_empty() { "(no inputs)".to_string() } else { parts.join(", ") }
}

/// Run `idf-verify test`, printing to `out`; returns the totals.
pub fn run_tests(opts: &TestOptions, out: &mut dyn Write) -> TestSummary {
    let mut sum = TestSummary::default();
    for path in collect_files(&opts.paths) {
        let (source, text) = load(&path);
        let program = match text.map_err(|e| vec![e]).and_then(|t| front_end(&t)) {
            Ok(p) => p,
            Err(errors) => {
                sum.input_errors += 1;
                for e in errors {
                    let line = e.span.map(|s| line_of(&source.text, s)).unwrap_or(0);
                    let _ = writeln!(
                        out,
                        "{}:{line}: {}: {}",
                        escape_controls(&source.path),
                        e.id,
                        e.message
                    );
                }
                continue;
            }
        };
        for (member, name) in select_members(&program, &opts.methods) {
            sum.members += 1;
            // Distinct failures (id, position) with their count and first inputs.
            let mut failures: BTreeMap<(u32, &'static str), (usize, String, String)> =
                BTreeMap::new();
            let (mut accepted, mut steps) = (0u64, 0u64);
            for k in 0..opts.runs {
                let seed = opts.seed.wrapping_mul(0x9E37_79B9).wrapping_add(k);
                let inputs = random_inputs(&program, member, seed);
                sum.runs += 1;
                match run_member(&program, member, &inputs) {
                    Outcome::Rejected(_) => continue,
                    Outcome::Passed => {}
                    Outcome::OutOfSteps => steps += 1,
                    Outcome::Failed(f) => {
                        let e = failures.entry((f.span.start, f.id)).or_insert_with(|| {
                            let who = &program.classes[f.member.class].members[f.member.member];
                            let msg = format!(
                                "{}:{}: {} ({}) in `{}.{}`: {}",
                                escape_controls(&source.path),
                                line_of(&source.text, f.span),
                                f.id,
                                f.reason,
                                program.classes[f.member.class].name.name,
                                who.name.name,
                                f.message
                            );
                            (0, msg, show_inputs(&program, member, &inputs))
                        });
                        e.0 += 1;
                    }
                }
                accepted += 1;
            }
            sum.accepted += accepted;
            sum.out_of_steps += steps;
            sum.failures += failures.len();
            let verdict = if failures.is_empty() { "ok" } else { "FAILED" };
            let _ = writeln!(
                out,
                "{verdict} {name}: {} runs, {accepted} accepted, {} distinct failure{}{}",
                opts.runs,
                failures.len(),
                if failures.len() == 1 { "" } else { "s" },
                if steps > 0 { format!(", {steps} out of steps") } else { String::new() }
            );
            for (count, msg, inputs) in failures.values() {
                let _ =
                    writeln!(out, "  {msg} ({count} run{})", if *count == 1 { "" } else { "s" });
                let _ = writeln!(out, "    inputs: {inputs}");
            }
            let _ = out.flush();
        }
    }
    let _ = writeln!(
        out,
        "{} members, {} runs, {} accepted, {} distinct failures, {} out of steps",
        sum.members, sum.runs, sum.accepted, sum.failures, sum.out_of_steps
    );
    sum
}
