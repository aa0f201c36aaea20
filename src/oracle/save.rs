//! `idf-verify test --save DIR`: a concrete failure written as a regression test, a
//! `.jv` file that joins a suite.
//!
//! The file is self-contained: the program as it was (its own `// expect:` comments
//! left out), then a class `Regression_C_m_K` whose precondition-free `static void
//! main()` builds the failing run's inputs (objects with `new C()` and field
//! assignments, or `new C(args)` and every field assigned for a class with a
//! constructor; arrays with `new T[n]` and element assignments) and calls the member
//! with them. It is written for `idf-verify test --save` and for a counterexample whose
//! replay confirmed its failure (`verify --counterexample --save`). Verifying the file
//! exposes the bug where it is (the member fails, with
//! the failure the run met), and the file carries an `// expect: ID` comment before
//! every line the verifier reports, so `idf-verify --expect` accepts it as a record of
//! the known failure. Once the member is fixed in it (and the expectation that named
//! the bug deleted), the file verifies: the member is valid and `main`'s call meets
//! its precondition on those inputs. `idf-verify test --method Regression_C_m_K.main`
//! replays the run concretely: it fails before the fix and passes after it.
//!
//! Architecture invariant: beside `testing`; it writes files only into the folder
//! given, and verifies the composed text with `verify::verify_member` (never the
//! pipeline).

use crate::interp::Inputs;
use crate::interp::value::{ObjKind, Value};
use crate::syntax::ast::{Body, MemberKind, MemberRef, Program, Type};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Write the regression test of a failure of `member` on `inputs` (the `k`-th
/// distinct failure of that member) into `dir`; returns its path, or why it cannot
/// be written.
pub fn save_failure(
    dir: &Path,
    program: &Program,
    text: &str,
    member: MemberRef,
    inputs: &Inputs,
    k: usize,
    id: &str,
) -> Result<PathBuf, String> {
    let (class_name, main, built) = caller(program, member, inputs, k)?;
    let body: String = text
        .lines()
        .filter(|l| {
            !l.trim_start()
                .strip_prefix("//")
                .is_some_and(|r| r.trim_start().starts_with("expect:"))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let composed = format!("{body}\n{main}");
    let expected = expectations_of(&composed)?;
    if built {
        reproduces(&composed, &class_name, id)?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let path = dir.join(format!("{class_name}.jv"));
    std::fs::write(&path, with_expectations(&composed, &expected))
        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    Ok(path)
}

/// A `main` whose inputs were built through constructors (their fields assigned
/// after, through what the constructor's postcondition returns) need not give the
/// member the run's state: the composed `main` must fail concretely with `id` in a
/// member of the program (the one tested or one it calls), or the test is not written.
fn reproduces(composed: &str, class: &str, id: &str) -> Result<(), String> {
    let program = crate::source::front_end(composed)
        .map_err(|_| "the regression test does not check".to_string())?;
    match crate::interp::run_main(&program, class) {
        // In a member of the program (the one tested, or a callee), not in `main`.
        crate::interp::Outcome::Failed(f)
            if f.id == id && program.classes[f.member.class].name.name != class =>
        {
            Ok(())
        }
        other => Err(format!(
            "its `main` builds inputs through constructors and does not repeat the failure ({})",
            match other {
                crate::interp::Outcome::Failed(f) => format!("it fails with {}", f.id),
                crate::interp::Outcome::Passed => "it passes".to_string(),
                crate::interp::Outcome::Rejected(why) => format!("rejected: {why}"),
                crate::interp::Outcome::OutOfSteps => "out of steps".to_string(),
            }
        )),
    }
}

/// The caller class: its name and text, and whether some input was built by a
/// constructor.
fn caller(
    program: &Program,
    member: MemberRef,
    inputs: &Inputs,
    k: usize,
) -> Result<(String, String, bool), String> {
    let class = program.classes.get(member.class).ok_or("no such class")?;
    let m = class.members.get(member.member).ok_or("no such member")?;
    let cname = &class.name.name;
    let mname = if m.kind == MemberKind::Constructor { "new" } else { m.name.name.as_str() };
    let name = format!("Regression_{cname}_{mname}_{k}");
    let mut s = String::new();
    let _ =
        writeln!(s, "// A regression test written by `idf-verify test --save`: the inputs of a");
    let _ = writeln!(s, "// run of `{cname}.{mname}` that failed concretely.");
    let _ = writeln!(s, "class {name} {{");
    let _ = writeln!(s, "    static void main() {{");
    // Every object first, then their fields and elements (they may point at each other).
    // Objects of a class with a constructor (`built`): every field is assigned after
    // it ran, whatever it left there.
    let mut built: Vec<usize> = vec![];
    for (o, obj) in inputs.heap.objects.iter().enumerate() {
        match &obj.kind {
            ObjKind::Class(Some(ci)) => {
                let c = &program.classes[*ci];
                let args = match c.members.iter().position(|m| m.kind == MemberKind::Constructor) {
                    Some(k) => {
                        built.push(o);
                        constructor_args(program, MemberRef { class: *ci, member: k })?
                    }
                    None => String::new(),
                };
                let _ = writeln!(s, "        {0} o{o} = new {0}({args});", c.name.name);
            }
            ObjKind::Class(None) => {
                let _ = writeln!(s, "        Object o{o} = new Object();");
            }
            ObjKind::Array(t) => {
                let _ = writeln!(s, "        {t}[] o{o} = new {t}[{}];", obj.slots.len());
            }
        }
    }
    let layout = crate::interp::value::Layout::of(program);
    for (o, obj) in inputs.heap.objects.iter().enumerate() {
        match &obj.kind {
            ObjKind::Class(Some(c)) => {
                for (f, v) in layout.field_names[*c].iter().zip(&obj.slots) {
                    if !is_default(v) || built.contains(&o) {
                        let _ = writeln!(s, "        o{o}.{f} = {};", literal(v, None)?);
                    }
                }
            }
            ObjKind::Array(_) => {
                for (i, v) in obj.slots.iter().enumerate() {
                    if !is_default(v) {
                        let _ = writeln!(s, "        o{o}[{i}] = {};", literal(v, None)?);
                    }
                }
            }
            ObjKind::Class(None) => {}
        }
    }
    let args: Vec<String> = m
        .params
        .iter()
        .zip(&inputs.args)
        .map(|(p, v)| literal(v, Some(&p.ty)))
        .collect::<Result<_, _>>()?;
    let args = args.join(", ");
    let recv = || match &inputs.this {
        Some(Value::Ref(o)) => Ok(format!("o{o}")),
        _ => Err("the run has no receiver".to_string()),
    };
    let call = match m.kind {
        MemberKind::Constructor => format!("{cname} r = new {cname}({args});"),
        MemberKind::Method if m.is_static => format!("{cname}.{mname}({args});"),
        MemberKind::Method => format!("{}.{mname}({args});", recv()?),
        MemberKind::Pure if m.is_static => format!("{} r = {cname}.{mname}({args});", m.ty),
        MemberKind::Pure => format!("{} r = {}.{mname}({args});", m.ty, recv()?),
        _ => return Err(format!("`{cname}.{mname}` is not a method: nothing to call")),
    };
    if matches!(m.body, Body::None) {
        return Err(format!("`{cname}.{mname}` has no body"));
    }
    let _ = writeln!(s, "        {call}");
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "}}");
    Ok((name, s, !built.is_empty()))
}

/// Arguments for the constructor `ctor` with which it runs to its end on a fresh
/// heap (each a literal: a reference argument is `null`): the defaults first, then
/// small random values. The object it makes is then given the run's field values by
/// assignments, through what its postcondition returns (a predicate instance is
/// opened for the writes and closed again for the call, by inference).
fn constructor_args(program: &Program, ctor: MemberRef) -> Result<String, String> {
    use crate::interp::{Outcome, run_member};
    let m = &program.classes[ctor.class].members[ctor.member];
    let literal_only = |v: &Value| !matches!(v, Value::Ref(_));
    let defaults: Vec<Value> = m.params.iter().map(|p| Value::default_of(&p.ty)).collect();
    let mut tries = vec![Inputs { args: defaults, ..Inputs::default() }];
    for seed in 0..64 {
        let mut r = crate::interp::inputs::random_inputs(program, ctor, seed);
        for a in &mut r.args {
            if !literal_only(a) {
                *a = Value::Null;
            }
        }
        r.heap = Default::default();
        tries.push(r);
    }
    for t in tries {
        if run_member(program, ctor, &t) == Outcome::Passed {
            let args: Vec<String> = m
                .params
                .iter()
                .zip(&t.args)
                .map(|(p, v)| literal(v, Some(&p.ty)))
                .collect::<Result<_, _>>()?;
            return Ok(args.join(", "));
        }
    }
    Err(format!(
        "no arguments found with which the constructor of `{}` runs (it builds an input)",
        program.classes[ctor.class].name.name
    ))
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Int(n) => n.sign() == num_bigint::Sign::NoSign,
        Value::Bool(b) => !b,
        Value::Null => true,
        _ => false,
    }
}

/// `v` as a `.jv` expression (`ty`: the parameter's type, for an empty sequence).
fn literal(v: &Value, ty: Option<&Type>) -> Result<String, String> {
    Ok(match v {
        Value::Int(n) if n.sign() == num_bigint::Sign::Minus => format!("({n})"),
        Value::Seq(xs) if xs.is_empty() => match ty {
            Some(Type::Seq(t)) => format!("seq<{t}>()"),
            _ => return Err("an empty sequence of unknown type".into()),
        },
        Value::Seq(xs) => {
            let inner = match ty {
                Some(Type::Seq(t)) => Some(&**t),
                _ => None,
            };
            let parts: Vec<String> =
                xs.iter().map(|x| literal(x, inner)).collect::<Result<_, _>>()?;
            format!("seq({})", parts.join(", "))
        }
        Value::Perm(r) => format!("({r})"),
        other => other.to_string(),
    })
}

/// What the verifier reports on `text`, by 1-based line: every member's errors and
/// warnings.
fn expectations_of(text: &str) -> Result<Vec<(usize, &'static str)>, String> {
    let program = crate::source::front_end(text).map_err(|errs| {
        let first = errs.first().map(|e| format!("{}: {}", e.id, e.message)).unwrap_or_default();
        format!("the regression test does not check: {first}")
    })?;
    let config = crate::verify::Config { timeout: Some(60.0), ..Default::default() };
    let mut out = vec![];
    let line = |start: u32| text[..(start as usize).min(text.len())].matches('\n').count() + 1;
    for (member, _) in crate::source::select_members(&program, &[]) {
        let r = crate::verify::verify_member(&program, member, &config)?;
        for e in r.errors.iter().chain(&r.warnings) {
            out.push((line(e.span.start), e.id));
        }
    }
    Ok(out)
}

/// `text` with an `// expect:` line before each line that has reports.
fn with_expectations(text: &str, expected: &[(usize, &'static str)]) -> String {
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        let ids: Vec<&str> =
            expected.iter().filter(|(n, _)| *n == i + 1).map(|(_, id)| *id).collect();
        if !ids.is_empty() {
            let indent: String = l.chars().take_while(|c| c.is_whitespace()).collect();
            let _ = writeln!(out, "{indent}// expect: {}", ids.join(" "));
        }
        let _ = writeln!(out, "{l}");
    }
    out
}
