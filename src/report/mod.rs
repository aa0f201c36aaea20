//! Reporting: human (codespan-reporting), JSON, SARIF, and `--expect` comparison, all
//! read from the pipeline's [`Run`]; the progress bar and end-of-run totals beside them.
//!
//! Architecture invariant: reporting never decides verdicts; it renders what the pipeline
//! and verifier produced and derives exit codes from it (LANGUAGE.md section 9).

pub mod cache;
pub mod expect;
pub mod human;
pub mod json;
pub mod progress;
pub mod sarif;
pub mod totals;

/// What streaming a file's members needs of its text, computed once per file (not per
/// member: a file of 10,000 members would make that quadratic).
#[derive(Default)]
pub struct FileView {
    path: String,
    len: usize,
    /// The text with control bytes made visible (`human::visible`).
    pub shown: String,
    pub starts: Vec<usize>,
}

impl FileView {
    /// The view of `source`, recomputed only when the file changes.
    pub fn of(&mut self, source: &crate::source::Source) -> &FileView {
        if self.path != source.path || self.len != source.text.len() || self.starts.is_empty() {
            self.path = source.path.clone();
            self.len = source.text.len();
            self.shown = human::visible(&source.text).into_owned();
            self.starts = line_starts(&source.text);
        }
        self
    }
}

use crate::pipeline::{FileStatus, MemberOutcome, Run};
pub use crate::source::{Lines, line_starts};
use crate::verify::Status;

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

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn line_agrees_with_line_col_everywhere() {
        let text = "ab\nçd\n\n\u{0}\u{0}x\n";
        let l = Lines::new(text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(l.line(offset), l.line_col(offset).0, "at {offset}");
        }
    }

    #[test]
    fn lines_and_columns() {
        let l = Lines::new("ab\nçd\n\nx");
        assert_eq!(l.line_col(0), (1, 1));
        assert_eq!(l.line_col(2), (1, 3));
        assert_eq!(l.line_col(3), (2, 1));
        assert_eq!(l.line_col(5), (2, 2)); // after the two-byte `ç`
        assert_eq!(l.line_col(4), (2, 1)); // inside `ç`: back to its start
        assert_eq!(l.line_col(7), (3, 1));
        assert_eq!(l.line_col(8), (4, 1));
        assert_eq!(l.line_col(100), (4, 2));
    }
}
