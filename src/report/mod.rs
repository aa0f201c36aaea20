//! Reporting: human (codespan-reporting), JSON, and `--expect` comparison, all read from
//! the driver's [`Run`].
//!
//! Architecture invariant: reporting never decides verdicts; it renders what the driver
//! and verifier produced and derives exit codes from it (LANGUAGE.md section 9).

pub mod expect;
pub mod human;
pub mod json;

use crate::driver::{FileStatus, MemberOutcome, Run};
use crate::verify::Status;

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, before[line_start..].chars().count() + 1)
}

/// Counts for the summary line and the JSON `summary`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub verified: usize,
    pub failed: usize,
    pub timeout: usize,
    /// Input diagnostics (parse, type, I/O), over all files.
    pub input_errors: usize,
    /// Members (or files) the tool itself failed on.
    pub internal: usize,
}

pub fn summarize(run: &Run) -> Summary {
    let mut s = Summary::default();
    for f in &run.files {
        match &f.status {
            FileStatus::Input(errs) => {
                for e in errs {
                    if e.id == "internal.error" {
                        s.internal += 1;
                    } else {
                        s.input_errors += 1;
                    }
                }
            }
            FileStatus::Checked(members) => {
                for m in members {
                    match m {
                        MemberOutcome::Done(r) => match r.status {
                            Status::Verified => s.verified += 1,
                            Status::Failed => s.failed += 1,
                            Status::Timeout => s.timeout += 1,
                        },
                        MemberOutcome::Internal { .. } => s.internal += 1,
                    }
                }
            }
        }
    }
    s
}

/// The exit status of a plain run: 3 internal error, 2 input error, 1 failure, 0 verified.
pub fn exit_code(run: &Run) -> i32 {
    let s = summarize(run);
    if s.internal > 0 {
        3
    } else if s.input_errors > 0 {
        2
    } else if s.failed + s.timeout > 0 {
        1
    } else {
        0
    }
}
