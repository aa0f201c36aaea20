//! The progress bar of a batch on a terminal: files and members done, failures so far,
//! elapsed time, drawn on stderr with `indicatif`.
//!
//! Architecture invariant: the bar is drawn only when [`should_show`] says so: human
//! output (never JSON, JSON Lines or SARIF, whose readers parse what they get) and a
//! stderr that is a terminal (not a pipe, not a file, not `TERM=dumb`). It never
//! garbles the human output streamed on stdout: every write of it goes through
//! [`Progress::suspend`], which takes the bar off the screen, writes, and redraws it,
//! under the bar's own lock (its ticker thread cannot draw half-way through a write).
//! When the run ends the bar is cleared before the summary is written, and a bar
//! dropped early (a panic) clears itself too.

use crate::pipeline::Event;
use crate::pipeline::MemberOutcome;
use crate::verify::Status;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use std::time::Duration;

/// Whether to draw a bar: only for human output (`machine_output`: JSON, JSON Lines,
/// SARIF), only when stderr is a terminal, and never on a `dumb` terminal (which cannot
/// move its cursor back over the bar).
pub fn should_show(machine_output: bool, stderr_is_terminal: bool, term: Option<&str>) -> bool {
    !machine_output && stderr_is_terminal && term != Some("dumb")
}

/// What the bar counts, from the pipeline's events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub files: usize,
    pub files_done: usize,
    pub members: usize,
    pub members_done: usize,
    /// Members failed, timed out or internal errors, and files with input errors.
    pub failures: usize,
    /// Members still to come of each file, from `Event::Planned`.
    left: Vec<usize>,
    /// The index of the next file to be announced.
    next_file: usize,
}

impl Counts {
    /// Count one event.
    pub fn observe(&mut self, ev: &Event<'_>) {
        match ev {
            Event::Planned(per_file) => {
                self.left = per_file.to_vec();
                self.files = per_file.len();
                self.members = per_file.iter().sum();
            }
            Event::File(_, errors) => {
                if errors.is_some() {
                    self.failures += 1;
                }
                if self.left.get(self.next_file).is_none_or(|&n| n == 0) {
                    self.files_done += 1;
                }
                self.next_file += 1;
            }
            Event::Member(_, m) => {
                self.members_done += 1;
                let failed = match m {
                    MemberOutcome::Done(r) => r.status != Status::Verified,
                    MemberOutcome::Internal { .. } => true,
                };
                if failed {
                    self.failures += 1;
                }
                if let Some(left) = self.next_file.checked_sub(1).and_then(|i| self.left.get_mut(i))
                {
                    *left = left.saturating_sub(1);
                    if *left == 0 {
                        self.files_done += 1;
                    }
                }
            }
        }
    }

    /// The bar's text: `3/10 files, 42/120 members, 1 failed`.
    pub fn message(&self) -> String {
        format!(
            "{}/{} file{}, {}/{} member{}, {} failed",
            self.files_done,
            self.files,
            if self.files == 1 { "" } else { "s" },
            self.members_done,
            self.members,
            if self.members == 1 { "" } else { "s" },
            self.failures
        )
    }

    /// How far along the bar is (members; files when there are none), out of what.
    pub fn position(&self) -> (u64, u64) {
        if self.members > 0 {
            (self.members_done as u64, self.members as u64)
        } else {
            (self.files_done as u64, self.files.max(1) as u64)
        }
    }
}

/// The bar's layout: the bar, the counts, the elapsed time.
pub const TEMPLATE: &str = "{bar:30.cyan/blue} {msg} [{elapsed}]";

/// A bar (or nothing) and its counts.
pub struct Progress {
    bar: Option<ProgressBar>,
    pub counts: Counts,
}

impl Progress {
    /// A bar on stderr when `show`; otherwise every method only counts.
    pub fn new(show: bool) -> Progress {
        let bar = show.then(|| {
            let style = ProgressStyle::with_template(TEMPLATE)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr())
                .with_style(style)
                .with_message("reading and checking the files")
                .with_finish(ProgressFinish::AndClear);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress { bar, counts: Counts::default() }
    }

    /// Whether a bar is drawn.
    pub fn shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Count an event and redraw.
    pub fn observe(&mut self, ev: &Event<'_>) {
        self.counts.observe(ev);
        if let Some(bar) = &self.bar {
            let (pos, len) = self.counts.position();
            bar.set_length(len);
            bar.set_position(pos);
            bar.set_message(self.counts.message());
        }
    }

    /// Run `f` (a write to stdout or stderr) with the bar off the screen.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Take the bar off the screen for good (before the summary).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_only_for_human_output_on_a_terminal() {
        assert!(should_show(false, true, Some("xterm-256color")));
        assert!(should_show(false, true, None));
        assert!(!should_show(true, true, Some("xterm")), "json, jsonl, sarif: never");
        assert!(!should_show(false, false, Some("xterm")), "stderr piped or in a file");
        assert!(!should_show(false, true, Some("dumb")));
    }

    #[test]
    fn messages_count_files_members_and_failures() {
        let c = Counts::default();
        assert_eq!(c.message(), "0/0 files, 0/0 members, 0 failed");
        assert_eq!(c.position(), (0, 1));
        let c = Counts {
            files: 1,
            files_done: 0,
            members: 1,
            members_done: 1,
            failures: 1,
            ..Counts::default()
        };
        assert_eq!(c.message(), "0/1 file, 1/1 member, 1 failed");
        assert_eq!(c.position(), (1, 1));
    }

    #[test]
    fn files_are_done_when_their_last_member_is() {
        use crate::source::Source;
        use crate::syntax::InputError;
        use crate::syntax::ast::{MemberKind, Span};
        let src = Source::new("a.jv", "");
        let internal = MemberOutcome::Internal {
            name: "A.m".into(),
            kind: MemberKind::Method,
            span: Span::new(0, 0),
            message: "boom".into(),
        };
        let errs = [InputError::new("parse.error", "bad", Span::new(0, 0), "")];
        let mut c = Counts::default();
        c.observe(&Event::Planned(&[2, 0, 0, 1]));
        assert_eq!(c.message(), "0/4 files, 0/3 members, 0 failed");
        c.observe(&Event::File(&src, None));
        c.observe(&Event::Member(&src, &internal));
        assert_eq!(c.message(), "0/4 files, 1/3 members, 1 failed");
        c.observe(&Event::Member(&src, &internal));
        assert_eq!(c.message(), "1/4 files, 2/3 members, 2 failed");
        c.observe(&Event::File(&src, Some(&errs))); // input errors: done at once
        c.observe(&Event::File(&src, None)); // no member selected
        assert_eq!(c.message(), "3/4 files, 2/3 members, 3 failed");
        c.observe(&Event::File(&src, None));
        c.observe(&Event::Member(&src, &internal));
        assert_eq!(c.message(), "4/4 files, 3/3 members, 4 failed");
        assert_eq!(c.position(), (3, 3));
    }

    #[test]
    fn a_hidden_bar_still_counts_and_runs_writes() {
        let mut p = Progress::new(false);
        assert!(!p.shown());
        p.observe(&Event::Planned(&[2, 0]));
        assert_eq!(p.counts.message(), "0/2 files, 0/2 members, 0 failed");
        assert_eq!(p.suspend(|| 7), 7);
        p.finish();
    }
}
