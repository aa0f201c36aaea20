//! Surface syntax: the AST, the lexer and the LALRPOP parser, and the input-error
//! value every front-end stage reports.
//!
//! Architecture invariant: `syntax` knows nothing of checking or verification. It turns
//! text into an [`ast::Program`] whose every node carries its byte span, or into a list of
//! [`InputError`]s; it never panics on any input and bounds nesting depth so that no later
//! recursive pass can overflow the stack.
pub mod ast;
pub mod lexer;
pub mod parse;

pub use parse::{MAX_DEPTH, parse};

use ast::Span;

/// An input error (`parse.error`, `type.error` or `io.error`), found before verification.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{id}: {message}")]
pub struct InputError {
    /// `parse.error`, `type.error` or `io.error`.
    pub id: &'static str,
    pub message: String,
    /// Where; `None` when there is no source to point into (a missing file).
    pub span: Option<Span>,
    /// The text of the primary label.
    pub label: String,
    /// Secondary labels (e.g. the earlier declaration of a duplicate).
    pub notes: Vec<(Span, String)>,
}

impl InputError {
    pub fn new(
        id: &'static str,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        InputError {
            id,
            message: message.into(),
            span: Some(span),
            label: label.into(),
            notes: Vec::new(),
        }
    }

    pub fn parse(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Self::new("parse.error", message, span, label)
    }

    pub fn type_error(message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Self::new("type.error", message, span, label)
    }

    pub fn with_note(mut self, span: Span, note: impl Into<String>) -> Self {
        self.notes.push((span, note.into()));
        self
    }
}
