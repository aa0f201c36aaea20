//! Cache entries: a member's result as stored on disk (JSON), with every span made
//! relative to the dependency item it falls in (`key::Keyed::anchors`), so that the
//! entry prints the same diagnostics wherever its items have moved in the file.
//!
//! Only real verdicts are entries: `verified` or `failed`, with everything the human,
//! JSON and JSON Lines outputs print of them (errors with their notes, traces,
//! counterexamples and replays, warnings, time, statistics). A result with a span that
//! falls outside every anchor, or with a symbol of a definition's translation
//! (`sk#`, numbered by the translation of the whole program), is not stored.
//!
//! Architecture invariant: the mirror structs below are built with full struct
//! literals (never `..Default`), so a field added to `MemberResult`,
//! `VerificationError` or `Stats` fails to compile here instead of being dropped from
//! entries silently.

use crate::rules::ledger::Ledger;
use crate::syntax::ast::{MemberKind, MemberRef, Span};
use crate::verify::{
    EntryModel, MemberResult, ModelValue, Replay, Stats, Status, TraceEntry, VerificationError,
};
use serde::{Deserialize, Serialize};

/// The entry format's version (changing the layout below bumps it; the tool id changes
/// anyway with the code).
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
pub struct Entry {
    format: u32,
    /// The key it was stored under (a renamed or copied file is a miss).
    key: String,
    status: String,
    errors: Vec<ErrorE>,
    warnings: Vec<ErrorE>,
    time_ms: f64,
    stats: Option<StatsE>,
}

/// A span as (anchor index, start, end) relative to the anchor's start.
type RelSpan = (usize, u32, u32);

#[derive(Serialize, Deserialize)]
struct ErrorE {
    id: String,
    reason: String,
    message: String,
    span: RelSpan,
    notes: Vec<(RelSpan, String)>,
    trace: Option<Vec<TraceE>>,
    counterexample: Option<Vec<String>>,
    entry: Option<EntryE>,
    replay: Option<(bool, String, String)>,
    /// A suggested fix: its message and edits.
    #[serde(default)]
    fix: Option<(String, Vec<(RelSpan, String)>)>,
}

#[derive(Serialize, Deserialize)]
struct TraceE {
    what: String,
    span: RelSpan,
    store: Vec<String>,
    heap: Vec<String>,
    path_condition: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone)]
enum ValueE {
    Int(String),
    Bool(bool),
    Null,
    Ref(String),
    Seq(Vec<ValueE>),
}

#[derive(Serialize, Deserialize)]
struct EntryE {
    store: Vec<(String, ValueE)>,
    fields: Vec<(ValueE, String, ValueE)>,
    lengths: Vec<(ValueE, ValueE)>,
}

#[derive(Serialize, Deserialize)]
struct StatsE {
    paths: u64,
    queries: u64,
    pushes: u64,
    branches: u64,
    pruned: u64,
    ledger: [u64; 6],
    chunks_max: u64,
    #[serde(default)]
    merges: u64,
    #[serde(default)]
    axioms: u64,
    #[serde(default)]
    axioms_to_z3: u64,
    z3_ms: f64,
    total_ms: f64,
}

/// Spans to and from anchors.
struct Anchors<'a>(&'a [Span]);

impl Anchors<'_> {
    fn rel(&self, s: Span) -> Option<RelSpan> {
        // The innermost anchor holding the span (anchors may nest: a member's range
        // holds nothing else, but a declaration's name is outside its members).
        let i = self
            .0
            .iter()
            .enumerate()
            .filter(|(_, a)| a.start <= s.start && s.end <= a.end)
            .min_by_key(|(_, a)| a.end - a.start)?
            .0;
        Some((i, s.start - self.0[i].start, s.end - self.0[i].start))
    }

    fn abs(&self, (i, start, end): RelSpan) -> Option<Span> {
        let a = self.0.get(i)?;
        let s = Span { start: a.start.checked_add(start)?, end: a.start.checked_add(end)? };
        (s.start <= s.end && s.end <= a.end).then_some(s)
    }
}

fn value_e(v: &ModelValue) -> ValueE {
    match v {
        ModelValue::Int(s) => ValueE::Int(s.clone()),
        ModelValue::Bool(b) => ValueE::Bool(*b),
        ModelValue::Null => ValueE::Null,
        ModelValue::Ref(s) => ValueE::Ref(s.clone()),
        ModelValue::Seq(xs) => ValueE::Seq(xs.iter().map(value_e).collect()),
    }
}

fn value(v: &ValueE) -> ModelValue {
    match v {
        ValueE::Int(s) => ModelValue::Int(s.clone()),
        ValueE::Bool(b) => ModelValue::Bool(*b),
        ValueE::Null => ModelValue::Null,
        ValueE::Ref(s) => ModelValue::Ref(s.clone()),
        ValueE::Seq(xs) => ModelValue::Seq(xs.iter().map(value).collect()),
    }
}

fn error_e(e: &VerificationError, a: &Anchors<'_>) -> Option<ErrorE> {
    let VerificationError {
        id,
        reason,
        message,
        span,
        notes,
        trace,
        counterexample,
        entry,
        replay,
        fix,
    } = e;
    let notes = notes.iter().map(|(s, m)| Some((a.rel(*s)?, m.clone()))).collect::<Option<_>>()?;
    let fix = match fix {
        None => None,
        Some(f) => Some((
            f.message.clone(),
            f.edits.iter().map(|(s, t)| Some((a.rel(*s)?, t.clone()))).collect::<Option<_>>()?,
        )),
    };
    let trace = match trace {
        None => None,
        Some(t) => Some(
            t.iter()
                .map(|t| {
                    let TraceEntry { what, span, line: _, store, heap, path_condition } = t;
                    Some(TraceE {
                        what: what.clone(),
                        span: a.rel(*span)?,
                        store: store.clone(),
                        heap: heap.clone(),
                        path_condition: path_condition.clone(),
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
    };
    Some(ErrorE {
        id: id.to_string(),
        reason: reason.to_string(),
        message: message.clone(),
        span: a.rel(*span)?,
        notes,
        trace,
        counterexample: counterexample.clone(),
        entry: entry.as_ref().map(|EntryModel { store, fields, lengths }| EntryE {
            store: store.iter().map(|(x, v)| (x.clone(), value_e(v))).collect(),
            fields: fields.iter().map(|(o, f, v)| (value_e(o), f.clone(), value_e(v))).collect(),
            lengths: lengths.iter().map(|(o, n)| (value_e(o), value_e(n))).collect(),
        }),
        replay: replay.as_ref().map(|Replay { confirmed, inputs, outcome, saved: _ }| {
            (*confirmed, inputs.clone(), outcome.clone())
        }),
        fix,
    })
}

fn error(e: &ErrorE, a: &Anchors<'_>) -> Option<VerificationError> {
    let notes =
        e.notes.iter().map(|(s, m)| Some((a.abs(*s)?, m.clone()))).collect::<Option<_>>()?;
    let trace = match &e.trace {
        None => None,
        Some(t) => Some(
            t.iter()
                .map(|t| {
                    Some(TraceEntry {
                        what: t.what.clone(),
                        span: a.abs(t.span)?,
                        line: 0,
                        store: t.store.clone(),
                        heap: t.heap.clone(),
                        path_condition: t.path_condition.clone(),
                    })
                })
                .collect::<Option<Vec<_>>>()?,
        ),
    };
    Some(VerificationError {
        id: intern(&e.id),
        reason: intern(&e.reason),
        message: e.message.clone(),
        span: a.abs(e.span)?,
        notes,
        trace,
        counterexample: e.counterexample.clone(),
        entry: e.entry.as_ref().map(|x| EntryModel {
            store: x.store.iter().map(|(n, v)| (n.clone(), value(v))).collect(),
            fields: x.fields.iter().map(|(o, f, v)| (value(o), f.clone(), value(v))).collect(),
            lengths: x.lengths.iter().map(|(o, n)| (value(o), value(n))).collect(),
        }),
        replay: e.replay.as_ref().map(|(confirmed, inputs, outcome)| Replay {
            confirmed: *confirmed,
            inputs: inputs.clone(),
            outcome: outcome.clone(),
            saved: None,
        }),
        fix: match &e.fix {
            None => None,
            Some((message, edits)) => Some(crate::verify::Fix {
                message: message.clone(),
                edits: edits
                    .iter()
                    .map(|(s, t)| Some((a.abs(*s)?, t.clone())))
                    .collect::<Option<_>>()?,
            }),
        },
    })
}

/// Error ids and reasons are `&'static str`: each distinct string read from an entry
/// is leaked once per process (there are a few dozen).
fn intern(s: &str) -> &'static str {
    static SEEN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut seen) = SEEN.lock() else { return "internal.error" };
    if let Some(x) = seen.iter().find(|x| **x == s) {
        return x;
    }
    let x: &'static str = Box::leak(s.to_string().into_boxed_str());
    seen.push(x);
    x
}

/// Does a printed result mention a symbol of a definition's translation?
fn mentions_skolem(r: &MemberResult) -> bool {
    let has = |s: &str| s.contains("sk#");
    r.errors.iter().chain(&r.warnings).any(|e| {
        has(&e.message)
            || e.notes.iter().any(|(_, n)| has(n))
            || e.counterexample.iter().flatten().any(|c| has(c))
            || e.trace.iter().flatten().any(|t| {
                has(&t.what)
                    || t.store.iter().chain(&t.heap).chain(&t.path_condition).any(|x| has(x))
            })
    })
}

impl Entry {
    /// The entry of a result, if it is a real verdict that can be stored.
    pub fn of(r: &MemberResult, key: &str, anchors: &[Span]) -> Option<Entry> {
        let MemberResult {
            member: _,
            name: _,
            kind: _,
            status,
            errors,
            warnings,
            time_ms,
            stats,
            cached: _,
        } = r;
        let status = match status {
            Status::Verified => "verified",
            Status::Failed => "failed",
            Status::Timeout => return None,
        };
        if errors.iter().any(|e| e.id == "verification.timeout" || e.id == "internal.error")
            || mentions_skolem(r)
        {
            return None;
        }
        let a = Anchors(anchors);
        Some(Entry {
            format: FORMAT,
            key: key.to_string(),
            status: status.to_string(),
            errors: errors.iter().map(|e| error_e(e, &a)).collect::<Option<_>>()?,
            warnings: warnings.iter().map(|e| error_e(e, &a)).collect::<Option<_>>()?,
            time_ms: *time_ms,
            stats: stats.as_ref().map(|s| {
                let Stats {
                    paths,
                    queries,
                    pushes,
                    branches,
                    pruned,
                    ledger,
                    chunks_max,
                    merges,
                    axioms,
                    axioms_to_z3,
                    z3_ms,
                    total_ms,
                    exec_depth_max: _,
                    quantifiers: _,
                    cached: _,
                } = s;
                let Ledger { started, completed, failed, pruned: lp, timeout, merged } = *ledger;
                StatsE {
                    paths: *paths,
                    queries: *queries,
                    pushes: *pushes,
                    branches: *branches,
                    pruned: *pruned,
                    ledger: [started, completed, failed, lp, timeout, merged],
                    chunks_max: *chunks_max,
                    merges: *merges,
                    axioms: *axioms,
                    axioms_to_z3: *axioms_to_z3,
                    z3_ms: *z3_ms,
                    total_ms: *total_ms,
                }
            }),
        })
    }

    /// The result an entry holds, for member `member` named `name`; `None` when the
    /// entry does not fit (another key, a span outside its anchors).
    pub fn result(
        &self,
        key: &str,
        anchors: &[Span],
        member: MemberRef,
        name: &str,
        kind: MemberKind,
    ) -> Option<MemberResult> {
        if self.format != FORMAT || self.key != key {
            return None;
        }
        let status = match self.status.as_str() {
            "verified" => Status::Verified,
            "failed" => Status::Failed,
            _ => return None,
        };
        let a = Anchors(anchors);
        let errors: Vec<VerificationError> =
            self.errors.iter().map(|e| error(e, &a)).collect::<Option<_>>()?;
        // A verdict and its errors agree, or the entry is not one we wrote.
        if (status == Status::Verified) != errors.is_empty() || !self.time_ms.is_finite() {
            return None;
        }
        Some(MemberResult {
            member,
            name: name.to_string(),
            kind,
            status,
            errors,
            warnings: self.warnings.iter().map(|e| error(e, &a)).collect::<Option<_>>()?,
            // This run's time is the reader's to set (the verifying run's is in `stats`).
            time_ms: 0.0,
            stats: self.stats.as_ref().map(|s| Stats {
                paths: s.paths,
                queries: s.queries,
                pushes: s.pushes,
                branches: s.branches,
                pruned: s.pruned,
                ledger: Ledger {
                    started: s.ledger[0],
                    completed: s.ledger[1],
                    failed: s.ledger[2],
                    pruned: s.ledger[3],
                    timeout: s.ledger[4],
                    merged: s.ledger[5],
                },
                chunks_max: s.chunks_max,
                merges: s.merges,
                axioms: s.axioms,
                axioms_to_z3: s.axioms_to_z3,
                z3_ms: s.z3_ms,
                total_ms: s.total_ms,
                exec_depth_max: 0,
                quantifiers: vec![],
                cached: true,
            }),
            cached: true,
        })
    }
}
