//! JSON output (`--format json`): one document, exactly the shape of LANGUAGE.md
//! section 9 (keys in that order), plus `trace`/`counterexample` on errors and `stats` on
//! members when present.
//!
//! Architecture invariant: positions are 1-based line and column (in characters),
//! computed from the same spans the human output renders; the document is built from
//! typed structs, so its shape is checked by the compiler.

use super::totals::{Slow, StatsTotals, slowest, stats_totals};
use super::{Lines, summarize};
use crate::pipeline::FileStatus;
use crate::pipeline::MemberOutcome;
use crate::pipeline::Run;
use crate::syntax::InputError;
use crate::syntax::ast::{MemberKind, Span};
use crate::verify::{MemberResult, Stats, Status, TraceEntry, VerificationError};
use serde::Serialize;

#[derive(Serialize)]
pub struct Document<'a> {
    pub version: u32,
    pub files: Vec<FileJson<'a>>,
    pub summary: SummaryJson,
    /// `--slowest N`: the N slowest members; absent unless asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest: Option<Vec<Slow<'a>>>,
}

#[derive(Serialize)]
pub struct FileJson<'a> {
    /// The file's name; escaped when it is not UTF-8 (`source::shown_path`), and then
    /// its exact bytes are `path_bytes`.
    pub path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_bytes: Option<&'a [u8]>,
    /// `ok`, `input-error` (or `internal-error` when the front end itself failed).
    pub status: &'static str,
    pub diagnostics: Vec<DiagnosticJson<'a>>,
    pub members: Vec<MemberJson<'a>>,
}

#[derive(Serialize)]
pub struct DiagnosticJson<'a> {
    pub id: &'a str,
    pub message: &'a str,
    /// `null` when there is no position (an unreadable file).
    pub line: Option<usize>,
    pub column: Option<usize>,
}

#[derive(Serialize)]
pub struct MemberJson<'a> {
    pub name: &'a str,
    pub kind: &'static str,
    /// `verified`, `failed`, `timeout` (or `internal-error`).
    pub status: &'static str,
    pub time_ms: f64,
    /// Read from the result cache (`time_ms` is then the time it took to read it);
    /// absent when verified in this run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    pub errors: Vec<ErrorJson<'a>>,
    /// `vacuous` warnings (`--smoke`); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ErrorJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<StatsJson<'a>>,
}

/// A member's statistics, with the quantifiers the solver instantiated most:
/// `"quantifiers": [{"name", "line", "instances"}]` (most first; `line` is null for a
/// law of sequences; absent when there are none).
#[derive(Serialize)]
pub struct StatsJson<'a> {
    #[serde(flatten)]
    pub stats: &'a Stats,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quantifiers: Vec<QuantJson<'a>>,
}

#[derive(Serialize)]
pub struct QuantJson<'a> {
    pub name: &'a str,
    pub line: Option<usize>,
    pub instances: u64,
}

/// A fix: `{"message", "edits": [{"line", "column", "end_line", "end_column", "text"}]}`
/// (1-based positions; an edit puts `text` in place of the range, which is empty for
/// an insertion).
#[derive(Serialize)]
pub struct FixJson<'a> {
    pub message: &'a str,
    pub edits: Vec<EditJson<'a>>,
}

#[derive(Serialize)]
pub struct EditJson<'a> {
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub text: &'a str,
}

#[derive(Serialize)]
pub struct ErrorJson<'a> {
    pub id: &'a str,
    pub reason: &'a str,
    pub message: &'a str,
    pub line: usize,
    pub column: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<TraceEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<&'a [String]>,
    /// A suggested fix, verified to remove this failure: its message and edits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<FixJson<'a>>,
    /// `confirmed` or `not-reproduced`: the counterexample's entry state run concretely.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<&'static str>,
    /// The entry state the replay ran from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_inputs: Option<&'a str>,
    /// What the replay did instead, when not confirmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_outcome: Option<&'a str>,
    /// With `--save`: the regression test written for a confirmed failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<&'a str>,
    /// With `--save`: why no regression test was written for a confirmed failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsaved: Option<&'a str>,
}

#[derive(Serialize)]
pub struct SummaryJson {
    pub verified: usize,
    pub failed: usize,
    pub timeout: usize,
    pub input_errors: usize,
    pub time_ms: f64,
    #[serde(skip_serializing_if = "is_zero")]
    pub internal_errors: usize,
    /// The run was stopped by a signal: members that had not finished are missing
    /// (absent when the run ended by itself).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `--stats`: statistics summed over the members; absent without `--stats`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<StatsTotals>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Milliseconds, to the microsecond.
fn ms(t: f64) -> f64 {
    (t * 1000.0).round() / 1000.0
}

pub fn kind_name(kind: MemberKind) -> &'static str {
    match kind {
        MemberKind::Field => "field",
        MemberKind::Constructor => "constructor",
        MemberKind::Method => "method",
        MemberKind::Pure => "pure",
        MemberKind::Predicate => "predicate",
    }
}

fn diagnostic<'a>(e: &'a InputError, lines: &Lines<'_>) -> DiagnosticJson<'a> {
    let pos = e.span.map(|s| lines.line_col(s.start as usize));
    DiagnosticJson {
        id: e.id,
        message: &e.message,
        line: pos.map(|p| p.0),
        column: pos.map(|p| p.1),
    }
}

fn error<'a>(e: &'a VerificationError, lines: &Lines<'_>) -> ErrorJson<'a> {
    let (line, column) = lines.line_col(e.span.start as usize);
    let trace = e.trace.as_ref().map(|trace| {
        trace
            .iter()
            .map(|t| TraceEntry { line: lines.line(t.span.start as usize), ..t.clone() })
            .collect()
    });
    ErrorJson {
        id: e.id,
        reason: e.reason,
        message: &e.message,
        line,
        column,
        trace,
        counterexample: e.counterexample.as_deref(),
        fix: e.fix.as_ref().map(|f| FixJson {
            message: &f.message,
            edits: f
                .edits
                .iter()
                .map(|(s, text)| {
                    let (line, column) = lines.line_col(s.start as usize);
                    let (end_line, end_column) = lines.line_col(s.end as usize);
                    EditJson { line, column, end_line, end_column, text }
                })
                .collect(),
        }),
        replay: e.replay.as_ref().map(|r| if r.confirmed { "confirmed" } else { "not-reproduced" }),
        replay_inputs: e.replay.as_ref().map(|r| r.inputs.as_str()),
        replay_outcome: e.replay.as_ref().filter(|r| !r.confirmed).map(|r| r.outcome.as_str()),
        saved: e.replay.as_ref().and_then(|r| r.saved.as_ref()?.as_ref().ok()).map(String::as_str),
        unsaved: e
            .replay
            .as_ref()
            .and_then(|r| r.saved.as_ref()?.as_ref().err())
            .map(String::as_str),
    }
}

fn member<'a>(r: &'a MemberResult, lines: &Lines<'_>) -> MemberJson<'a> {
    let status = match r.status {
        Status::Verified => "verified",
        Status::Failed => "failed",
        Status::Timeout => "timeout",
    };
    MemberJson {
        name: &r.name,
        kind: kind_name(r.kind),
        status,
        time_ms: ms(r.time_ms),
        cached: r.cached,
        errors: r.errors.iter().map(|e| error(e, lines)).collect(),
        warnings: r.warnings.iter().map(|e| error(e, lines)).collect(),
        stats: r.stats.as_ref().map(|stats| StatsJson {
            stats,
            quantifiers: stats
                .quantifiers
                .iter()
                .map(|q| QuantJson {
                    name: &q.name,
                    line: q.span.map(|sp| lines.line(sp.start as usize)),
                    instances: q.instances,
                })
                .collect(),
        }),
    }
}

fn internal<'a>(
    name: &'a str,
    kind: MemberKind,
    span: Span,
    message: &'a str,
    lines: &Lines<'_>,
) -> MemberJson<'a> {
    let (line, column) = lines.line_col(span.start as usize);
    let e = ErrorJson {
        id: "internal.error",
        reason: "internal.error",
        message,
        line,
        column,
        trace: None,
        counterexample: None,
        replay: None,
        fix: None,
        replay_inputs: None,
        replay_outcome: None,
        saved: None,
        unsaved: None,
    };
    MemberJson {
        name,
        kind: kind_name(kind),
        status: "internal-error",
        time_ms: 0.0,
        cached: false,
        errors: vec![e],
        warnings: vec![],
        stats: None,
    }
}

/// One JSON Lines record (`--format jsonl`) for a streamed event: a file's input
/// errors, or one member with its file's path.
pub fn event_line(ev: &crate::pipeline::Event<'_>, views: &mut super::FileView) -> Option<String> {
    use crate::pipeline::Event;
    let mut v = match ev {
        Event::Planned(_) | Event::File(_, None) => return None,
        Event::File(source, Some(errors)) => {
            let lines = Lines::new(&source.text);
            let diags: Vec<DiagnosticJson<'_>> =
                errors.iter().map(|e| diagnostic(e, &lines)).collect();
            serde_json::json!({"file": source.path, "status": "input-error", "diagnostics": diags})
        }
        Event::Member(source, m) => {
            let view = views.of(source);
            let lines = Lines::with_starts(&source.text, &view.starts);
            let member = match m {
                MemberOutcome::Done(r) => member(r, &lines),
                MemberOutcome::Internal { name, kind, span, message } => {
                    internal(name, *kind, *span, message, &lines)
                }
            };
            serde_json::json!({"file": source.path, "member": member})
        }
    };
    if let Event::File(source, _) | Event::Member(source, _) = ev
        && let Some(raw) = &source.raw_path
    {
        // A name that is not UTF-8: `file` is escaped, these are its bytes.
        v["file_bytes"] = serde_json::json!(raw);
    }
    Some(v.to_string())
}

/// The last JSON Lines record: the summary.
pub fn summary_line(run: &Run) -> String {
    summary_line_with(run, None)
}

/// The summary record, with `slowest` when `--slowest N` asked for it and `stats`
/// (totals) when members carry statistics.
pub fn summary_line_with(run: &Run, slowest_n: Option<usize>) -> String {
    let s = summarize(run);
    let mut v = serde_json::json!({"summary": {
        "verified": s.verified, "failed": s.failed, "timeout": s.timeout,
        "input_errors": s.input_errors, "internal_errors": s.internal,
        "interrupted": run.interrupted, "time_ms": ms(run.time_ms)}});
    if let Some(t) = stats_totals(run) {
        v["summary"]["stats"] = serde_json::json!(t);
    }
    if let Some(n) = slowest_n {
        v["slowest"] = serde_json::json!(slowest(run, n));
    }
    v.to_string()
}

/// The whole run as one document.
pub fn document(run: &Run) -> Document<'_> {
    document_with(run, None)
}

/// The document, with the `slowest` field when `--slowest N` asked for it.
pub fn document_with(run: &Run, slowest_n: Option<usize>) -> Document<'_> {
    let files = run
        .files
        .iter()
        .map(|f| {
            let lines = Lines::new(&f.source.text);
            let path = f.source.path.as_str();
            let path_bytes = f.source.raw_path.as_deref();
            match &f.status {
                FileStatus::Input(errors) => FileJson {
                    path,
                    path_bytes,
                    status: if errors.iter().any(|e| e.id == "internal.error") {
                        "internal-error"
                    } else {
                        "input-error"
                    },
                    diagnostics: errors.iter().map(|e| diagnostic(e, &lines)).collect(),
                    members: Vec::new(),
                },
                FileStatus::Checked(members) => FileJson {
                    path,
                    path_bytes,
                    status: "ok",
                    diagnostics: Vec::new(),
                    members: members
                        .iter()
                        .map(|m| match m {
                            MemberOutcome::Done(r) => member(r, &lines),
                            MemberOutcome::Internal { name, kind, span, message } => {
                                internal(name, *kind, *span, message, &lines)
                            }
                        })
                        .collect(),
                },
            }
        })
        .collect();
    let s = summarize(run);
    let summary = SummaryJson {
        verified: s.verified,
        failed: s.failed,
        timeout: s.timeout,
        input_errors: s.input_errors,
        time_ms: ms(run.time_ms),
        internal_errors: s.internal,
        interrupted: run.interrupted,
        stats: stats_totals(run),
    };
    Document { version: 1, files, summary, slowest: slowest_n.map(|n| slowest(run, n)) }
}

/// The document as pretty-printed JSON text.
pub fn to_json(run: &Run) -> String {
    to_json_with(run, None)
}

/// `to_json` with the `slowest` field when asked for.
pub fn to_json_with(run: &Run, slowest_n: Option<usize>) -> String {
    serde_json::to_string_pretty(&document_with(run, slowest_n))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// A sharded run's JSON document: the usual one, then `shard`.
pub fn sharded_document(run: &Run, layout: &crate::pipeline::shard::Layout) -> String {
    #[derive(Serialize)]
    struct Sharded<'a> {
        #[serde(flatten)]
        doc: Document<'a>,
        shard: &'a crate::pipeline::shard::Layout,
    }
    let doc = Sharded { doc: document(run), shard: layout };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
