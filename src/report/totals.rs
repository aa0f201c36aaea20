//! Whole-run figures shown at the end: the `--stats` totals (statistics summed over every
//! member) and the `--slowest N` list, for the human output and as optional JSON fields.
//!
//! Architecture invariant: plain functions of the pipeline's [`Run`]; nothing here times
//! anything or decides a verdict. The order of the slowest list is total (time, then the
//! run's own file and member order), so equal times print the same way every run.

use crate::pipeline::FileStatus;
use crate::pipeline::MemberOutcome;
use crate::pipeline::Run;
use crate::verify::Status;
use serde::Serialize;
use std::io::{self, Write};

/// `--stats` summed over the members that carry statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StatsTotals {
    /// Members whose statistics are summed.
    pub members: usize,
    pub paths: u64,
    pub branches: u64,
    pub pruned: u64,
    pub queries: u64,
    pub pushes: u64,
    /// The largest heap of any member.
    pub chunks_max: u64,
    pub z3_ms: f64,
    /// Summed member times (more than the run's wall clock when members ran in parallel).
    pub total_ms: f64,
}

/// The totals, or `None` when no member has statistics (no `--stats`, or nothing ran).
pub fn stats_totals(run: &Run) -> Option<StatsTotals> {
    let mut t = StatsTotals::default();
    for r in done_members(run).map(|(_, r)| r) {
        let Some(s) = &r.stats else { continue };
        t.members += 1;
        t.paths += s.paths;
        t.branches += s.branches;
        t.pruned += s.pruned;
        t.queries += s.queries;
        t.pushes += s.pushes;
        t.chunks_max = t.chunks_max.max(s.chunks_max);
        t.z3_ms += s.z3_ms;
        t.total_ms += s.total_ms;
    }
    (t.members > 0).then(|| StatsTotals {
        z3_ms: round_ms(t.z3_ms),
        total_ms: round_ms(t.total_ms),
        ..t
    })
}

/// One entry of `--slowest`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Slow<'a> {
    pub name: &'a str,
    pub file: &'a str,
    pub time_ms: f64,
    /// `verified`, `failed` or `timeout`.
    pub status: &'static str,
}

fn done_members(run: &Run) -> impl Iterator<Item = (&str, &crate::verify::MemberResult)> {
    run.files.iter().flat_map(|f| {
        let members: &[MemberOutcome] = match &f.status {
            FileStatus::Checked(members) => members,
            FileStatus::Input(_) => &[],
        };
        members.iter().filter_map(move |m| match m {
            MemberOutcome::Done(r) => Some((f.source.path.as_str(), r)),
            MemberOutcome::Internal { .. } => None,
        })
    })
}

fn round_ms(t: f64) -> f64 {
    (t * 1000.0).round() / 1000.0
}

pub fn status_word(s: Status) -> &'static str {
    match s {
        Status::Verified => "verified",
        Status::Failed => "failed",
        Status::Timeout => "timeout",
    }
}

/// The `n` slowest verified, failed or timed-out members, slowest first (internal errors
/// have no time and are left out).
pub fn slowest(run: &Run, n: usize) -> Vec<Slow<'_>> {
    let mut all: Vec<(usize, Slow<'_>)> = done_members(run)
        .map(|(file, r)| Slow {
            name: &r.name,
            file,
            time_ms: round_ms(r.time_ms),
            status: status_word(r.status),
        })
        .enumerate()
        .collect();
    all.sort_by(|(i, a), (j, b)| b.time_ms.total_cmp(&a.time_ms).then(i.cmp(j)));
    all.into_iter().take(n).map(|(_, s)| s).collect()
}

/// `stats total: ...` after the summary line.
pub fn render_stats_totals(w: &mut dyn Write, t: &StatsTotals) -> io::Result<()> {
    writeln!(
        w,
        "stats total ({} member{}): {} paths, {} branches, {} pruned, {} queries, {} pushes, {} chunks max, {:.1} ms in Z3, {:.1} ms verifying",
        t.members,
        if t.members == 1 { "" } else { "s" },
        t.paths,
        t.branches,
        t.pruned,
        t.queries,
        t.pushes,
        t.chunks_max,
        t.z3_ms,
        t.total_ms,
    )
}

/// `slowest members:` and one aligned line per entry.
pub fn render_slowest(w: &mut dyn Write, list: &[Slow<'_>]) -> io::Result<()> {
    if list.is_empty() {
        return writeln!(w, "slowest members: none (no member was verified)");
    }
    writeln!(w, "slowest member{}:", if list.len() == 1 { "" } else { "s" })?;
    let name_w = list.iter().map(|s| s.name.chars().count()).max().unwrap_or(0);
    let file_w = list.iter().map(|s| s.file.chars().count()).max().unwrap_or(0);
    for (i, s) in list.iter().enumerate() {
        writeln!(
            w,
            "  {:>2}. {:<name_w$}  {:<file_w$}  {:>10.1} ms  {}",
            i + 1,
            s.name,
            s.file,
            s.time_ms,
            s.status
        )?;
    }
    Ok(())
}
