//! Human output: one line per member, codespan-reporting diagnostics for every error
//! (the error id as the diagnostic code), optional statistics, and a summary line.
//!
//! Architecture invariant: rendering is a pure function of the [`Run`] and the writer;
//! the same text goes to a terminal (with colour) and to snapshot tests (without).

use super::{Lines, Summary, summarize};
use crate::pipeline::FileReport;
use crate::pipeline::FileStatus;
use crate::pipeline::MemberOutcome;
use crate::pipeline::Run;
use crate::syntax::InputError;
use crate::verify::{MemberResult, Stats, Status, VerificationError};
use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::termcolor::WriteColor;
use codespan_reporting::term::{self, Config, termcolor::Color, termcolor::ColorSpec};
use std::io;

#[derive(Clone, Copy, Debug, Default)]
pub struct HumanOptions {
    pub stats: bool,
    /// No line for a member verified without warnings (failures and the summary only).
    pub quiet: bool,
}

type File<'a> = SimpleFile<&'a str, &'a str>;

/// Render a whole run.
pub fn render<W: WriteColor>(w: &mut W, run: &Run, opts: HumanOptions) -> io::Result<()> {
    let many = run.files.len() > 1;
    for f in &run.files {
        if many {
            w.set_color(ColorSpec::new().set_bold(true))?;
            writeln!(w, "{}", escape_controls(&f.source.path))?;
            w.reset()?;
        }
        render_file(w, f, opts)?;
    }
    summary_line(w, &summarize(run), run.time_ms, run.interrupted)
}

/// The source as shown under diagnostics: each control character other than tab and
/// line ends, and each bidirectional formatting character, becomes `?` (ASCII), `¿`
/// (two bytes) or `\u{fffd}` (three): the same length, so spans still fit; a NUL in the
/// input is visible and the caret under it is drawn, and no escape sequence or reordering
/// of the source reaches the terminal.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden =
        |c: char| crate::syntax::lexer::is_invisible_control(c) && !matches!(c, '\t' | '\n' | '\r');
    if text.contains(hidden) {
        text.chars()
            .map(|c| match (hidden(c), c.len_utf8()) {
                (false, _) => c,
                (true, 1) => '?',
                (true, 2) => '¿',
                (true, _) => '\u{fffd}',
            })
            .collect::<String>()
            .into()
    } else {
        text.into()
    }
}

/// Render one streamed event (`crate::pipeline::run::run_streaming`); `many`: several files, so
/// each gets a header line.
pub fn render_event<W: WriteColor>(
    w: &mut W,
    ev: &crate::pipeline::Event<'_>,
    many: bool,
    opts: HumanOptions,
    views: &mut super::FileView,
) -> io::Result<()> {
    use crate::pipeline::Event;
    match ev {
        Event::Planned(_) => Ok(()),
        Event::File(source, errors) => {
            if many {
                w.set_color(ColorSpec::new().set_bold(true))?;
                writeln!(w, "{}", escape_controls(&source.path))?;
                w.reset()?;
            }
            if let Some(errors) = errors {
                let shown = visible(&source.text);
                let name = escape_controls(&source.path);
                let file = SimpleFile::new(name.as_ref(), shown.as_ref());
                for e in *errors {
                    emit(w, &file, &input_diagnostic(e, &escape_controls(&source.path)))?;
                }
            }
            Ok(())
        }
        Event::Member(source, m) => {
            // A codespan file indexes its lines when made: only for a member with
            // something to show under its source.
            if let MemberOutcome::Done(r) = m
                && r.errors.is_empty()
                && r.warnings.is_empty()
            {
                if opts.quiet && r.status == Status::Verified {
                    return Ok(());
                }
                member_line(w, r)?;
                if let (true, Some(stats)) = (opts.stats, &r.stats) {
                    if stats.quantifiers.is_empty() {
                        stats_line(w, stats, None)?;
                    } else {
                        let view = views.of(source);
                        stats_line(
                            w,
                            stats,
                            Some(&Lines::with_starts(&source.text, &view.starts)),
                        )?;
                    }
                }
                return w.flush();
            }
            let view = views.of(source);
            let name = escape_controls(&source.path);
            let file = SimpleFile::new(name.as_ref(), view.shown.as_str());
            render_member(w, &file, &Lines::with_starts(&source.text, &view.starts), m, opts)?;
            w.flush()
        }
    }
}

/// The summary line (and notes) after streamed events.
pub fn render_summary<W: WriteColor>(w: &mut W, run: &Run) -> io::Result<()> {
    summary_line(w, &summarize(run), run.time_ms, run.interrupted)?;
    if run.interrupted {
        writeln!(w, "interrupted: members that had not finished are not reported")?;
    }
    Ok(())
}

fn render_member<W: WriteColor>(
    w: &mut W,
    file: &File<'_>,
    lines: &Lines<'_>,
    m: &MemberOutcome,
    opts: HumanOptions,
) -> io::Result<()> {
    match m {
        MemberOutcome::Done(r) => {
            member_line(w, r)?;
            if let (true, Some(stats)) = (opts.stats, &r.stats) {
                stats_line(w, stats, Some(lines))?;
            }
            for e in &r.errors {
                emit(w, file, &verification_diagnostic(e, lines))?;
            }
            for e in &r.warnings {
                let d = Diagnostic::warning()
                    .with_code(e.id)
                    .with_message(&e.message)
                    .with_labels(vec![Label::primary((), e.span.range())]);
                emit(w, file, &d)?;
            }
        }
        MemberOutcome::Internal { name, message, .. } => {
            w.set_color(ColorSpec::new().set_fg(Some(Color::Magenta)).set_bold(true))?;
            write!(w, "! {name}")?;
            w.reset()?;
            writeln!(w, " internal error: {message}")?;
        }
    }
    Ok(())
}

pub fn render_file<W: WriteColor>(w: &mut W, f: &FileReport, opts: HumanOptions) -> io::Result<()> {
    let shown = visible(&f.source.text);
    let name = escape_controls(&f.source.path);
    let file = SimpleFile::new(name.as_ref(), shown.as_ref());
    let lines = Lines::new(&f.source.text);
    match &f.status {
        FileStatus::Input(errors) => {
            for e in errors {
                emit(w, &file, &input_diagnostic(e, &escape_controls(&f.source.path)))?;
            }
        }
        FileStatus::Checked(members) => {
            for m in members {
                render_member(w, &file, &lines, m, opts)?;
            }
        }
    }
    Ok(())
}

fn member_line<W: WriteColor>(w: &mut W, r: &MemberResult) -> io::Result<()> {
    let (mark, word, color) = match r.status {
        Status::Verified => ("✓", "verified", Color::Green),
        Status::Failed => ("✗", "failed", Color::Red),
        Status::Timeout => ("✗", "timeout", Color::Yellow),
    };
    w.set_color(ColorSpec::new().set_fg(Some(color)).set_bold(true))?;
    write!(w, "{mark}")?;
    w.reset()?;
    // A result read from the result cache says so, with this run's time (reading it).
    let cached = if r.cached { "cached, " } else { "" };
    writeln!(w, " {} {word} ({cached}{:.1} ms)", r.name, r.time_ms)
}

/// A member's statistics; `lines` gives the lines of the quantifiers it lists.
fn stats_line<W: WriteColor>(w: &mut W, s: &Stats, lines: Option<&Lines<'_>>) -> io::Result<()> {
    writeln!(
        w,
        "    stats: {} paths, {} branches, {} pruned, {} queries, {} pushes, {} chunks max, {} merges, {} axiom instances ({} to Z3), {:.1} ms in Z3, {:.1} ms outside\n    ledger: {} started = {} completed + {} failed + {} pruned + {} timeout + {} merged",
        s.paths,
        s.branches,
        s.pruned,
        s.queries,
        s.pushes,
        s.chunks_max,
        s.merges,
        s.axioms,
        s.axioms_to_z3,
        s.z3_ms,
        (s.total_ms - s.z3_ms).max(0.0),
        s.ledger.started,
        s.ledger.completed,
        s.ledger.failed,
        s.ledger.pruned,
        s.ledger.timeout,
        s.ledger.merged,
    )?;
    if !s.quantifiers.is_empty() {
        writeln!(w, "    quantifier instances (most first):")?;
        let width = s.quantifiers.iter().map(|q| q.instances.to_string().len()).max().unwrap_or(1);
        for q in &s.quantifiers {
            let at = match (q.span, lines) {
                (Some(sp), Some(l)) => format!(" (line {})", l.line(sp.start as usize)),
                _ => String::new(),
            };
            writeln!(w, "      {:>width$}  {}{at}", q.instances, escape_controls(&q.name))?;
        }
    }
    if s.cached {
        writeln!(
            w,
            "    cached: not verified again (the statistics are those of the run that verified it)"
        )?;
    }
    Ok(())
}

fn summary_line<W: WriteColor>(
    w: &mut W,
    s: &Summary,
    time_ms: f64,
    interrupted: bool,
) -> io::Result<()> {
    write!(
        w,
        "{} verified, {} failed, {} timeout, {} input error{}",
        s.verified,
        s.failed,
        s.timeout,
        s.input_errors,
        if s.input_errors == 1 { "" } else { "s" }
    )?;
    if s.internal > 0 {
        write!(w, ", {} internal error{}", s.internal, if s.internal == 1 { "" } else { "s" })?;
    }
    writeln!(w, " in {time_ms:.1} ms")?;
    if s.verified + s.failed + s.timeout + s.internal + s.input_errors == 0 && !interrupted {
        // Green, but say that nothing was checked.
        writeln!(
            w,
            "note: no member was verified (the files declare no methods, pure methods or predicates)"
        )?;
    }
    Ok(())
}

/// Emit a diagnostic; if its spans do not fit the file, fall back to a plain line.
fn emit<W: WriteColor>(w: &mut W, file: &File<'_>, d: &Diagnostic<()>) -> io::Result<()> {
    let config = Config::default();
    if term::emit_to_write_style(w, &config, file, d).is_err() {
        let code = d.code.as_deref().unwrap_or("error");
        writeln!(w, "error[{code}]: {}", d.message)?;
    }
    Ok(())
}

pub fn input_diagnostic(e: &InputError, path: &str) -> Diagnostic<()> {
    let d = Diagnostic::error().with_code(e.id).with_message(&e.message);
    let Some(span) = e.span else {
        return d.with_notes(vec![format!("in {path}")]);
    };
    let mut labels = vec![Label::primary((), span.range()).with_message(&e.label)];
    labels.extend(e.notes.iter().map(|(s, m)| Label::secondary((), s.range()).with_message(m)));
    d.with_labels(labels)
}

pub fn verification_diagnostic(e: &VerificationError, lines: &Lines<'_>) -> Diagnostic<()> {
    let label = if e.reason != e.id { e.reason } else { "" };
    let mut labels = vec![Label::primary((), e.span.range()).with_message(label)];
    labels.extend(e.notes.iter().map(|(s, m)| Label::secondary((), s.range()).with_message(m)));
    let mut notes = Vec::new();
    if let Some(cex) = &e.counterexample {
        notes.push(format!("counterexample:\n{}", cex.join("\n")));
    }
    if let Some(r) = &e.replay {
        if r.confirmed {
            notes.push(format!("confirmed by execution from {}", r.inputs));
            match &r.saved {
                Some(Ok(path)) => notes.push(format!("regression test saved: {path}")),
                Some(Err(why)) => notes.push(format!("regression test not saved: {why}")),
                None => {}
            }
        } else {
            notes.push(format!(
                "not reproduced by execution from {}: {} (the failure may be an incompleteness)",
                r.inputs, r.outcome
            ));
        }
    }
    if let Some(f) = &e.fix {
        notes.push(format!("help: {} (verified: with it, this error goes away)", f.message));
    }
    if let Some(trace) = &e.trace {
        let mut s = String::from("trace of the failing path:");
        for t in trace {
            let line = lines.line(t.span.start as usize);
            s.push_str(&format!("\nline {line}: {}", t.what));
            for (title, items) in
                [("store", &t.store), ("heap", &t.heap), ("path condition +", &t.path_condition)]
            {
                if !items.is_empty() {
                    s.push_str(&format!("\n    {title}: {}", items.join(", ")));
                }
            }
        }
        notes.push(s);
    }
    Diagnostic::error()
        .with_code(e.id)
        .with_message(&e.message)
        .with_labels(labels)
        .with_notes(notes)
}

pub use crate::source::escape_controls;
