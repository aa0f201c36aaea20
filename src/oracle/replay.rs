//! Replayed counterexamples (issue 11, part 2): the model of a failed check gives a
//! member's entry state (its `this` and parameters, the fields and array lengths it
//! held on entry); the concrete interpreter runs the member from that state, and the
//! failure is `confirmed` when the run fails with the same id on the same line, else
//! `not reproduced` (the failure may be an incompleteness: a value the verifier did
//! not know).
//!
//! Architecture invariant: this sits below the pipeline, above both `verify` and
//! `interp`, which never meet anywhere else. What the model does not give (fields
//! folded inside predicate instances, array elements, fields no chunk covered) starts
//! at its default value, so "not reproduced" is an answer about that state only.

use crate::interp::value::{Heap, Layout, ObjKind, Object};
use crate::interp::{Inputs, Limits, Outcome, Value, line_of, run_member_counted};
use crate::syntax::ast::{MemberRef, Program, Type};
use crate::verify::{EntryModel, MemberResult, ModelValue, PathInput, Replay};
use num_bigint::BigInt;
use std::collections::{HashMap, HashSet};

/// The longest array a model's length may make.
const MAX_LEN: usize = 10_000;

/// Build the input state a model describes: everything the model does not give is
/// at its default value.
pub fn inputs_of(program: &Program, member: MemberRef, entry: &EntryModel) -> Inputs {
    inputs_and_fixed(program, member, entry).0
}

/// The input state a model describes, the (object, slot) pairs the model gives, and
/// the arrays whose length it gives.
#[allow(clippy::type_complexity)]
fn inputs_and_fixed(
    program: &Program,
    member: MemberRef,
    entry: &EntryModel,
) -> (Inputs, HashSet<(usize, usize)>, HashSet<usize>) {
    let (inputs, fixed, sized, _) = build(program, member, entry);
    (inputs, fixed, sized)
}

/// As `inputs_and_fixed`, with what a path's model gives beyond the entry model: the
/// array elements (per array of the model: the elements by index; `None` keeps the
/// default), and the sequence and amount parameters: the inputs solved from a path
/// condition (`idf-verify test --paths`).
#[allow(clippy::type_complexity)]
pub fn inputs_with_elements(
    program: &Program,
    member: MemberRef,
    input: &PathInput,
) -> (Inputs, HashSet<(usize, usize)>, HashSet<usize>) {
    let (mut inputs, mut fixed, sized, ids) = build(program, member, &input.entry);
    for (a, elems) in &input.elements {
        let ModelValue::Ref(a) = a else { continue };
        let Some(&o) = ids.get(a) else { continue };
        let n = inputs.heap.len_of(o).unwrap_or(0);
        for (i, v) in elems.iter().enumerate().take(n) {
            if let Some(v) = v
                && !fixed.contains(&(o, i))
            {
                inputs.heap.set(o, i, value_in(&ids, v));
                fixed.insert((o, i));
            }
        }
    }
    let params = program
        .classes
        .get(member.class)
        .and_then(|c| c.members.get(member.member))
        .map(|m| m.params.as_slice())
        .unwrap_or(&[]);
    let at = |name: &str| params.iter().position(|p| p.name.name == name);
    for (name, elems) in &input.seqs {
        let Some(k) = at(name) else { continue };
        let elem_ty = match &params[k].ty {
            Type::Seq(t) => (**t).clone(),
            _ => continue,
        };
        let xs: Vec<Value> = elems
            .iter()
            .map(|v| {
                v.as_ref().map(|v| value_in(&ids, v)).unwrap_or_else(|| Value::default_of(&elem_ty))
            })
            .collect();
        if let Some(slot) = inputs.args.get_mut(k) {
            *slot = Value::Seq(std::rc::Rc::new(xs));
        }
    }
    for (name, r) in &input.perms {
        let (Some(k), Some(r)) = (at(name), parse_rat(r)) else { continue };
        if let Some(slot) = inputs.args.get_mut(k) {
            *slot = Value::amount(r);
        }
    }
    (inputs, fixed, sized)
}

/// `n` or `n/d` as a rational.
fn parse_rat(r: &str) -> Option<crate::interp::rat::Rat> {
    let (n, d) = r.split_once('/').unwrap_or((r, "1"));
    crate::interp::rat::Rat::new(n.parse::<BigInt>().ok()?, d.parse::<BigInt>().ok()?)
}

/// A model's value in the heap whose objects `ids` names.
fn value_in(ids: &HashMap<String, usize>, v: &ModelValue) -> Value {
    match v {
        ModelValue::Int(n) => Value::Int(n.parse::<BigInt>().unwrap_or_default()),
        ModelValue::Bool(b) => Value::Bool(*b),
        ModelValue::Null => Value::Null,
        ModelValue::Ref(r) => ids.get(r).map(|&o| Value::Ref(o)).unwrap_or(Value::Null),
        ModelValue::Seq(xs) => {
            Value::Seq(std::rc::Rc::new(xs.iter().map(|x| value_in(ids, x)).collect()))
        }
    }
}

#[allow(clippy::type_complexity)]
fn build(
    program: &Program,
    member: MemberRef,
    entry: &EntryModel,
) -> (Inputs, HashSet<(usize, usize)>, HashSet<usize>, HashMap<String, usize>) {
    let layout = Layout::of(program);
    let Some(m) = program.classes.get(member.class).and_then(|c| c.members.get(member.member))
    else {
        return (Inputs::default(), HashSet::new(), HashSet::new(), HashMap::new());
    };
    let class_kind = |t: &Type| match t {
        Type::Class(c) => ObjKind::Class(layout.class_index.get(c).copied()),
        Type::Array(e) => ObjKind::Array((**e).clone()),
        _ => ObjKind::Class(None),
    };
    // What each object of the model is, in order of appearance.
    let mut order: Vec<String> = vec![];
    let mut kinds: HashMap<String, ObjKind> = HashMap::new();
    let mut note = |v: &ModelValue, k: ObjKind| {
        if let ModelValue::Ref(r) = v {
            if !kinds.contains_key(r) {
                order.push(r.clone());
            }
            let e = kinds.entry(r.clone()).or_insert(k.clone());
            if *e == ObjKind::Class(None) {
                *e = k;
            }
        }
    };
    for (x, v) in &entry.store {
        let ty = if x == "this" {
            Type::Class(program.classes[member.class].name.name.clone())
        } else {
            m.params.iter().find(|p| p.name.name == *x).map(|p| p.ty.clone()).unwrap_or(Type::Int)
        };
        note(v, class_kind(&ty));
    }
    let field_of = |name: &str| -> Option<(usize, usize, Type)> {
        let (c, f) = name.rsplit_once('.')?;
        let ci = *layout.class_index.get(c)?;
        let (slot, ty) = layout.fields.get(ci)?.get(f)?.clone();
        Some((ci, slot, ty))
    };
    for (r, name, v) in &entry.fields {
        if let Some((ci, _, ty)) = field_of(name) {
            note(r, ObjKind::Class(Some(ci)));
            note(v, class_kind(&ty));
        }
    }
    for (a, _) in &entry.lengths {
        note(a, ObjKind::Array(Type::Int));
    }
    let mut heap = Heap::default();
    let mut ids: HashMap<String, usize> = HashMap::new();
    for r in &order {
        let obj = match &kinds[r] {
            ObjKind::Class(Some(ci)) => layout.new_object(*ci),
            ObjKind::Class(None) => Object { kind: ObjKind::Class(None), slots: vec![] },
            ObjKind::Array(t) => {
                let n = entry
                    .lengths
                    .iter()
                    .find(|(a, _)| *a == ModelValue::Ref(r.clone()))
                    .and_then(|(_, n)| match n {
                        ModelValue::Int(n) => n.parse::<usize>().ok(),
                        _ => None,
                    })
                    .unwrap_or(0)
                    .min(MAX_LEN);
                Object { kind: ObjKind::Array(t.clone()), slots: vec![Value::default_of(t); n] }
            }
        };
        ids.insert(r.clone(), heap.alloc(obj));
    }
    let value = |v: &ModelValue| value_in(&ids, v);
    let mut fixed = HashSet::new();
    // A field given twice (a path's inputs read the entry heap first, then the
    // instances' bodies, shallow before deep) keeps its first value.
    for (r, name, v) in &entry.fields {
        if let (Some((_, slot, _)), ModelValue::Ref(r)) = (field_of(name), r)
            && let Some(&o) = ids.get(r)
            && !fixed.contains(&(o, slot))
        {
            heap.set(o, slot, value(v));
            fixed.insert((o, slot));
        }
    }
    let sized: HashSet<usize> = entry
        .lengths
        .iter()
        .filter_map(|(a, _)| match a {
            ModelValue::Ref(r) => ids.get(r).copied(),
            _ => None,
        })
        .collect();
    let this = entry.store.iter().find(|(x, _)| x == "this").map(|(_, v)| value(v));
    let args = m
        .params
        .iter()
        .map(|p| {
            entry
                .store
                .iter()
                .find(|(x, _)| *x == p.name.name)
                .map(|(_, v)| value(v))
                .unwrap_or_else(|| Value::default_of(&p.ty))
        })
        .collect();
    (Inputs { heap, this, args }, fixed, sized, ids)
}

/// Random completions tried when the model's state alone does not reproduce a failure.
const COMPLETIONS: u64 = 200;

/// Interpreter steps all the runs replaying one error may take together (each run
/// also keeps its own budget): a loop over a large array costs a run its whole budget,
/// and two hundred such runs took minutes. Counted in steps, not time, so that the
/// same input gives the same report.
const REPLAY_STEPS: u64 = 500_000;

/// Replay every counterexample of a member's errors; `text` is the program's source.
/// The model's state runs first, everything it does not give at its default; when
/// that does not reproduce the failure, random completions of it (the model's values
/// kept, the rest random) are tried.
pub fn replay_member(
    program: &Program,
    text: &str,
    result: &mut MemberResult,
    save: Option<&std::path::Path>,
) {
    let member = result.member;
    for (k, e) in result.errors.iter_mut().enumerate() {
        let Some(entry) = &e.entry else { continue };
        let (exact, fixed, sized) = inputs_and_fixed(program, member, entry);
        let want = line_of(text, e.span);
        let spent = std::cell::Cell::new(0u64);
        let run = |inputs: &Inputs| {
            let left = REPLAY_STEPS.saturating_sub(spent.get());
            let mut limits = Limits::default();
            limits.steps = limits.steps.min(left);
            let (outcome, steps) = run_member_counted(program, member, inputs, limits);
            spent.set(spent.get().saturating_add(steps));
            outcome
        };
        let run = |inputs: &Inputs| match run(inputs) {
            Outcome::Failed(f) => {
                let line = line_of(text, f.span);
                let same = f.id == e.id && line == want && f.member == member;
                (same, format!("{} on line {line}", f.id))
            }
            Outcome::Passed => (false, "the run passed".to_string()),
            Outcome::Rejected(why) => {
                (false, format!("the state does not satisfy the precondition ({why})"))
            }
            Outcome::OutOfSteps => (false, "the run ran out of steps".to_string()),
        };
        let (mut confirmed, mut outcome) = run(&exact);
        let mut shown = crate::oracle::testing::show_inputs(program, member, &exact);
        let mut confirmed_by = confirmed.then(|| exact.clone());
        let mut rejected = outcome.starts_with("the state does not satisfy");
        for seed in 1..=COMPLETIONS {
            if confirmed || spent.get() >= REPLAY_STEPS {
                break;
            }
            let mut inputs = exact.clone();
            crate::interp::inputs::complete(program, &mut inputs, &fixed, &sized, seed);
            let (same, what) = run(&inputs);
            let completed = |inputs: &Inputs| {
                format!(
                    "{} (the model's values, the rest completed at random)",
                    crate::oracle::testing::show_inputs(program, member, inputs)
                )
            };
            if same {
                confirmed = true;
                shown = completed(&inputs);
                confirmed_by = Some(inputs.clone());
            } else if rejected && !what.starts_with("the state does not satisfy") {
                // Say what a state the precondition accepts did.
                rejected = false;
                outcome = what;
                shown = completed(&inputs);
            }
        }
        let saved = match (save, &confirmed_by) {
            (Some(dir), Some(inputs)) => Some(
                crate::oracle::save::save_failure(dir, program, text, member, inputs, k, e.id)
                    .map(|p| p.display().to_string()),
            ),
            _ => None,
        };
        e.replay = Some(Replay { confirmed, inputs: shown, outcome, saved });
    }
}
