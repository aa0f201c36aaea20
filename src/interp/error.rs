//! How a concrete run stops: a failure (with the id and position LANGUAGE.md section 8
//! gives it), a rejected input, or an exhausted budget; and how a failure found deep in
//! an expression gets its id from where it stands.
//!
//! Architecture invariant: evaluation reports a [`Raw`] failure (its reason and the
//! offending sub-expression); the innermost enclosing context decides the id: a
//! statement (the reason is the id), a consumed assertion (its id, at the failing
//! conjunct or at the call), or a pure body or contract being run for its own sake
//! (`not.wellformed`). A [`Failure`] is final and names the member whose activation
//! it happened in, which is the member it refutes.

use crate::syntax::ast::{MemberRef, Span};

/// A concrete failure: what LANGUAGE.md section 8 would report, and the member whose
/// activation failed (its precondition held when it was entered).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub id: &'static str,
    /// Why: `assertion.false`, `insufficient.permission`, ... (equal to `id` in code).
    pub reason: &'static str,
    pub span: Span,
    pub member: MemberRef,
    pub message: String,
}

/// A failure before its context gave it an id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Raw {
    pub reason: &'static str,
    pub span: Span,
    /// It happened while checking a pure call's precondition (at `span`, the call).
    pub via_call: bool,
    /// The innermost conjunct of a consumed assertion it happened in.
    pub conjunct: Option<Span>,
    pub message: String,
}

/// Why a computation stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    Raw(Raw),
    Fail(Failure),
    /// The generated input does not satisfy the precondition.
    Rejected(String),
    /// The step or depth budget ran out.
    OutOfSteps,
}

pub type R<T> = Result<T, Stop>;

pub fn raw<T>(reason: &'static str, span: Span, message: impl Into<String>) -> R<T> {
    Err(Stop::Raw(Raw { reason, span, via_call: false, conjunct: None, message: message.into() }))
}

/// Where failures inside a consumed assertion are reported.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pub id: &'static str,
    /// For call preconditions and `close`: the position of the call.
    pub call: Option<Span>,
}

impl Stop {
    /// A raw failure inside the precondition of the pure call at `call`.
    pub fn via_call(self, call: Span) -> Stop {
        match self {
            Stop::Raw(r) => Stop::Raw(Raw {
                reason: r.reason,
                span: call,
                via_call: true,
                conjunct: None,
                message: format!("the precondition of this call fails: {}", r.message),
            }),
            other => other,
        }
    }

    /// Note the conjunct a raw failure happened in, unless an inner one is known.
    pub fn in_conjunct(self, conjunct: Span) -> Stop {
        match self {
            Stop::Raw(mut r) => {
                r.conjunct.get_or_insert(conjunct);
                Stop::Raw(r)
            }
            other => other,
        }
    }

    /// Finalize a raw failure as a statement's: the reason is the id.
    pub fn in_stmt(self, member: MemberRef) -> Stop {
        match self {
            Stop::Raw(r) => Stop::Fail(Failure {
                id: if r.via_call { "call.precondition" } else { r.reason },
                reason: r.reason,
                span: r.span,
                member,
                message: r.message,
            }),
            other => other,
        }
    }

    /// Finalize a raw failure inside a consumed assertion.
    pub fn in_assertion(self, ctx: Ctx, member: MemberRef) -> Stop {
        match self {
            Stop::Raw(r) => Stop::Fail(Failure {
                id: ctx.id,
                reason: r.reason,
                span: ctx.call.or(r.conjunct).unwrap_or(r.span),
                member,
                message: r.message,
            }),
            other => other,
        }
    }

    /// Finalize a raw failure of a contract, pure body or predicate body run for its
    /// own sake.
    pub fn not_wellformed(self, member: MemberRef) -> Stop {
        match self {
            Stop::Raw(r) => Stop::Fail(Failure {
                id: "not.wellformed",
                reason: r.reason,
                span: r.span,
                member,
                message: r.message,
            }),
            other => other,
        }
    }
}
