//! JSON output (`--format json`): one document, exactly the shape of LANGUAGE.md
//! section 9, plus `trace`/`counterexample` on errors and `stats` on members when present.
//!
//! Architecture invariant: positions are 1-based line and column (in characters),
//! computed from the same spans the human output renders.

use super::{line_col, summarize};
use crate::driver::{FileStatus, MemberOutcome, Run};
use crate::syntax::ast::{MemberKind, Span};
use crate::verify::{MemberResult, Status, VerificationError};
use serde_json::{Value, json};

pub fn kind_name(kind: MemberKind) -> &'static str {
    match kind {
        MemberKind::Field => "field",
        MemberKind::Constructor => "constructor",
        MemberKind::Method => "method",
        MemberKind::Pure => "pure",
        MemberKind::Predicate => "predicate",
    }
}

fn position(text: &str, span: Option<Span>) -> (Value, Value) {
    match span {
        Some(s) => {
            let (l, c) = line_col(text, s.start as usize);
            (json!(l), json!(c))
        }
        None => (Value::Null, Value::Null),
    }
}

fn error_json(e: &VerificationError, text: &str) -> Value {
    let (line, column) = position(text, Some(e.span));
    let mut v = json!({"id": e.id, "reason": e.reason, "message": e.message, "line": line, "column": column});
    if let Some(trace) = &e.trace {
        let entries: Vec<_> = trace
            .iter()
            .map(|t| {
                let mut t = t.clone();
                t.line = line_col(text, t.span.start as usize).0;
                t
            })
            .collect();
        v["trace"] = json!(entries);
    }
    if let Some(cex) = &e.counterexample {
        v["counterexample"] = json!(cex);
    }
    v
}

fn member_json(r: &MemberResult, text: &str) -> Value {
    let status = match r.status {
        Status::Verified => "verified",
        Status::Failed => "failed",
        Status::Timeout => "timeout",
    };
    let errors: Vec<_> = r.errors.iter().map(|e| error_json(e, text)).collect();
    let mut v = json!({"name": r.name, "kind": kind_name(r.kind), "status": status,
                       "time_ms": r.time_ms, "errors": errors});
    if let Some(stats) = &r.stats {
        v["stats"] = json!(stats);
    }
    v
}

/// The whole run as one JSON document.
pub fn to_json(run: &Run) -> Value {
    let files: Vec<Value> = run
        .files
        .iter()
        .map(|f| {
            let text = f.source.text.as_str();
            match &f.status {
                FileStatus::Input(errors) => {
                    let internal = errors.iter().any(|e| e.id == "internal.error");
                    let diags: Vec<_> = errors
                        .iter()
                        .map(|e| {
                            let (line, column) = position(text, e.span);
                            json!({"id": e.id, "message": e.message, "line": line, "column": column})
                        })
                        .collect();
                    json!({"path": f.source.path,
                           "status": if internal { "internal-error" } else { "input-error" },
                           "diagnostics": diags, "members": []})
                }
                FileStatus::Checked(members) => {
                    let members: Vec<_> = members
                        .iter()
                        .map(|m| match m {
                            MemberOutcome::Done(r) => member_json(r, text),
                            MemberOutcome::Internal { name, kind, span, message } => {
                                let (line, column) = position(text, Some(*span));
                                json!({"name": name, "kind": kind_name(*kind), "status": "internal-error",
                                       "time_ms": 0.0,
                                       "errors": [{"id": "internal.error", "reason": "internal.error",
                                                   "message": message, "line": line, "column": column}]})
                            }
                        })
                        .collect();
                    json!({"path": f.source.path, "status": "ok", "diagnostics": [], "members": members})
                }
            }
        })
        .collect();
    let s = summarize(run);
    let mut summary = json!({"verified": s.verified, "failed": s.failed, "timeout": s.timeout,
                             "input_errors": s.input_errors, "time_ms": run.time_ms});
    if s.internal > 0 {
        summary["internal_errors"] = json!(s.internal);
    }
    json!({"version": 1, "files": files, "summary": summary})
}
