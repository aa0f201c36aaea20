//! What one verification run of a document found, and how the editor sees it:
//! diagnostics (error ids as codes, the callee's conjunct as related information,
//! counterexample and replay in the message), per-member status lenses, and the
//! symbolic state of a failing path on hover (what `--trace` prints for that line).
//!
//! Architecture invariant: a pure view of the pipeline's results, as `crate::report` is
//! for the command line: nothing here decides a verdict. Every range is computed
//! against the text that was verified (its `LineIndex`), never a later edit.

use super::position::LineIndex;
use crate::pipeline::MemberOutcome;
use crate::syntax::InputError;
use crate::syntax::ast::Span;
use crate::verify::{Status, TraceEntry, VerificationError};
use lsp_types::{
    CodeLens, Command, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, Range, Uri,
};
use std::collections::HashMap;

/// The `source` of every diagnostic.
pub const SOURCE: &str = "idf-verify";

/// The longest hover text (a path condition can be long).
const MAX_HOVER: usize = 20_000;

/// A member selected for verification, as the front end saw it.
#[derive(Clone, Debug)]
pub struct MemberInfo {
    /// `Class.member` (`Class.new` for the constructor).
    pub name: String,
    pub name_span: Span,
    /// The whole member.
    pub span: Span,
}

/// One run's results so far.
#[derive(Debug)]
pub struct Analysis {
    /// The document version that was verified.
    pub version: i32,
    pub index: LineIndex,
    /// Parse, type or internal errors of the front end (then nothing is verified).
    pub input: Vec<InputError>,
    pub members: Vec<MemberInfo>,
    /// Parallel to `members`: their outcomes as they arrive.
    pub outcomes: Vec<Option<MemberOutcome>>,
    by_name: HashMap<String, usize>,
    /// The run ended (a member without an outcome then was never verified).
    pub done: bool,
    /// Why the run itself failed, if it did.
    pub failure: Option<String>,
}

impl Analysis {
    pub fn new(
        version: i32,
        index: LineIndex,
        checked: Result<Vec<MemberInfo>, Vec<InputError>>,
    ) -> Analysis {
        let (members, input) = match checked {
            Ok(members) => (members, Vec::new()),
            Err(errors) => (Vec::new(), errors),
        };
        let by_name = members.iter().enumerate().map(|(i, m)| (m.name.clone(), i)).collect();
        let outcomes = vec![None; members.len()];
        Analysis { version, index, input, members, outcomes, by_name, done: false, failure: None }
    }

    /// Record a member's outcome; true when it brings diagnostics.
    pub fn record(&mut self, outcome: MemberOutcome) -> bool {
        let shows = match &outcome {
            MemberOutcome::Done(r) => !r.errors.is_empty() || !r.warnings.is_empty(),
            MemberOutcome::Internal { .. } => true,
        };
        if let Some(&i) = self.by_name.get(outcome.name()) {
            self.outcomes[i] = Some(outcome);
        }
        shows
    }

    /// `3 members: 2 verified, 1 failed, 0 timeout` (or the input errors).
    pub fn counts(&self) -> String {
        if !self.input.is_empty() {
            return format!("{} input error(s)", self.input.len());
        }
        let (mut verified, mut failed, mut timeout, mut other) = (0, 0, 0, 0);
        for o in &self.outcomes {
            match o {
                Some(MemberOutcome::Done(r)) => match r.status {
                    Status::Verified => verified += 1,
                    Status::Failed => failed += 1,
                    Status::Timeout => timeout += 1,
                },
                _ => other += 1,
            }
        }
        format!(
            "{} members: {verified} verified, {failed} failed, {timeout} timeout, {other} other",
            self.members.len()
        )
    }

    pub fn diagnostics(&self, uri: &Uri) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> =
            self.input.iter().map(|e| self.input_diagnostic(e, uri)).collect();
        for outcome in self.outcomes.iter().flatten() {
            match outcome {
                MemberOutcome::Done(r) => {
                    for e in &r.errors {
                        out.push(self.verification_diagnostic(e, uri, DiagnosticSeverity::ERROR));
                    }
                    for e in &r.warnings {
                        out.push(self.verification_diagnostic(e, uri, DiagnosticSeverity::WARNING));
                    }
                }
                MemberOutcome::Internal { name, span, message, .. } => out.push(Diagnostic {
                    range: self.index.range(*span),
                    severity: Some(DiagnosticSeverity::ERROR),
                    code: Some(NumberOrString::String("internal.error".into())),
                    source: Some(SOURCE.into()),
                    message: format!("internal error while verifying {name}: {message}"),
                    ..Diagnostic::default()
                }),
            }
        }
        if let Some(failure) = &self.failure {
            out.push(Diagnostic {
                range: Range::default(),
                severity: Some(DiagnosticSeverity::ERROR),
                code: Some(NumberOrString::String("internal.error".into())),
                source: Some(SOURCE.into()),
                message: format!("internal error: {failure}"),
                ..Diagnostic::default()
            });
        }
        out
    }

    fn related(
        &self,
        uri: &Uri,
        notes: &[(Span, String)],
    ) -> Option<Vec<DiagnosticRelatedInformation>> {
        if notes.is_empty() {
            return None;
        }
        Some(
            notes
                .iter()
                .map(|(span, message)| DiagnosticRelatedInformation {
                    location: Location::new(uri.clone(), self.index.range(*span)),
                    message: message.clone(),
                })
                .collect(),
        )
    }

    fn input_diagnostic(&self, e: &InputError, uri: &Uri) -> Diagnostic {
        let mut message = e.message.clone();
        if !e.label.is_empty() && !e.message.contains(&e.label) {
            message.push_str(&format!(" ({})", e.label));
        }
        Diagnostic {
            range: e.span.map(|s| self.index.range(s)).unwrap_or_default(),
            severity: Some(DiagnosticSeverity::ERROR),
            code: Some(NumberOrString::String(e.id.into())),
            source: Some(SOURCE.into()),
            message,
            related_information: self.related(uri, &e.notes),
            ..Diagnostic::default()
        }
    }

    fn verification_diagnostic(
        &self,
        e: &VerificationError,
        uri: &Uri,
        severity: DiagnosticSeverity,
    ) -> Diagnostic {
        let mut message = e.message.clone();
        if let Some(cex) = &e.counterexample {
            message.push_str("\ncounterexample:");
            for line in cex {
                message.push_str(&format!("\n  {line}"));
            }
        }
        if let Some(r) = &e.replay {
            if r.confirmed {
                message.push_str(&format!("\nconfirmed by execution from {}", r.inputs));
            } else {
                message.push_str(&format!(
                    "\nnot reproduced by execution from {}: {} (the failure may be an incompleteness)",
                    r.inputs, r.outcome
                ));
            }
        }
        if let Some(f) = &e.fix {
            message.push_str(&format!("\nhelp: {} (a quick fix)", f.message));
        }
        Diagnostic {
            range: self.index.range(e.span),
            severity: Some(severity),
            code: Some(NumberOrString::String(e.id.into())),
            source: Some(SOURCE.into()),
            message,
            related_information: self.related(uri, &e.notes),
            data: Some(serde_json::json!({ "reason": e.reason })),
            ..Diagnostic::default()
        }
    }

    /// One lens per member, on its name: `verified 3 ms`, `failed`, `timeout`, ...
    pub fn code_lenses(&self) -> Vec<CodeLens> {
        self.members
            .iter()
            .zip(&self.outcomes)
            .map(|(m, o)| {
                let title = match o {
                    Some(MemberOutcome::Done(r)) => match r.status {
                        Status::Verified => format!("verified {}", millis(r.time_ms)),
                        Status::Failed => "failed".to_string(),
                        Status::Timeout => "timeout".to_string(),
                    },
                    Some(MemberOutcome::Internal { .. }) => "internal error".to_string(),
                    None if self.done => "not verified (stopped)".to_string(),
                    None => "verifying…".to_string(),
                };
                CodeLens {
                    range: self.index.range(m.name_span),
                    command: Some(Command { title, command: String::new(), arguments: None }),
                    data: None,
                }
            })
            .collect()
    }

    /// Markdown for a hover at `offset`: the symbolic states the failing paths of the
    /// member there reached on that line, as `--trace` prints them (with the whole
    /// path condition up to that point). `None` off a failing path.
    pub fn hover(&self, offset: usize) -> Option<String> {
        let line = self.index.line(offset);
        let at = offset.min(u32::MAX as usize) as u32;
        let i = self.members.iter().position(|m| m.span.start <= at && at <= m.span.end)?;
        let Some(MemberOutcome::Done(r)) = &self.outcomes[i] else { return None };
        let mut out = String::new();
        for e in r.errors.iter() {
            let Some(trace) = &e.trace else { continue };
            let shown = self.trace_at(trace, line);
            if shown.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push_str("\n---\n");
            }
            out.push_str(&format!(
                "**{}**: symbolic state on the path to `{}` (line {})\n",
                r.name,
                e.id,
                self.index.line(e.span.start as usize) + 1
            ));
            out.push_str(&shown);
        }
        if out.len() > MAX_HOVER {
            let mut cut = MAX_HOVER;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("\n```\n(cut)");
        }
        (!out.is_empty()).then_some(out)
    }

    /// The trace entries on `line` (0-based), each with the state after it.
    fn trace_at(&self, trace: &[TraceEntry], line: usize) -> String {
        let mut out = String::new();
        let mut path_condition: Vec<&str> = Vec::new();
        for t in trace {
            path_condition.extend(t.path_condition.iter().map(String::as_str));
            if self.index.line(t.span.start as usize) != line {
                continue;
            }
            out.push_str(&format!("\nafter `{}`:\n```text\n", t.what));
            for (title, items) in [("store", &t.store), ("heap", &t.heap)] {
                out.push_str(&format!("{title}: {}\n", listed(items.iter().map(String::as_str))));
            }
            let pc = listed(path_condition.iter().copied());
            out.push_str(&format!("path condition: {pc}\n```\n"));
        }
        out
    }
}

/// Items separated by commas, or `(empty)`.
fn listed<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let s = items.collect::<Vec<_>>().join(", ");
    if s.is_empty() { "(empty)".to_string() } else { s }
}

/// A duration for a lens: `0.4 ms`, `12 ms`.
fn millis(ms: f64) -> String {
    if ms < 10.0 { format!("{ms:.1} ms") } else { format!("{ms:.0} ms") }
}
