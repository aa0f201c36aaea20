//! The pipeline: find `.jv` files, load, parse, check, verify every selected member
//! (`run`, `schedule`, with the result `cache` and `shard`ing), and hand back plain
//! results for `crate::report`; `merge_shards` joins the documents of sharded runs.
//! This module owns the run's types (options, results, events): a leaf that its
//! submodules and reporting read.
//!
//! Architecture invariant: the pipeline never prints and never decides how results look.
//! Everything runs on threads with large stacks; a panic or an `Err` from the verifier
//! becomes a [`MemberOutcome::Internal`] (exit 3), never a crash.
//!
//! Layering: `run` -> `cache` -> `schedule` -> (`fix`, `crate::verify`, `crate::oracle`);
//! `shard` and `merge_shards` hash and join; none of them is imported here except
//! `shard`'s plain types.

pub mod cache;
pub mod fix;
pub mod merge_shards;
pub mod run;
pub mod schedule;
pub mod shard;

use crate::source::Source;
use crate::syntax::InputError;
use crate::syntax::ast::{MemberKind, Span};
use crate::verify::{Config, MemberResult};
use std::path::PathBuf;

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `Class.member` names to verify; empty means all.
    pub methods: Vec<String>,
    pub config: Config,
    /// Worker threads; 0 means one per core.
    pub jobs: usize,
    /// `false`: stop after checking (no member is verified).
    pub check_only: bool,
    /// A whole-run time limit in seconds (`--deadline`): past it no member starts,
    /// and members not finished are reported as timeouts.
    pub deadline: Option<f64>,
    /// This run's own stop flag (the language server cancels a run when a newer edit
    /// arrives): once set, it acts on this run as Ctrl-C ([`INTERRUPTED`]) does on all.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The result cache (`cache`); `None`: verify every member.
    pub cache: Option<CacheFolder>,
    /// `--shard K/N`: verify only this shard's members (`crate::shard`).
    pub shard: Option<shard::Shard>,
}

impl Options {
    /// Whether this run should stop: Ctrl-C, or its own `cancel` flag.
    pub fn stopped(&self) -> bool {
        stopped(&self.cancel)
    }
}

/// Whether a run with this `cancel` flag should stop (Ctrl-C stops every run).
pub fn stopped(cancel: &Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    INTERRUPTED.load(SeqCst) || cancel.as_ref().is_some_and(|c| c.load(SeqCst))
}

// One per member, made once and moved a few times: boxing the result would only add
// an allocation per member.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum MemberOutcome {
    Done(MemberResult),
    /// The verifier returned `Err` or panicked.
    Internal {
        name: String,
        kind: MemberKind,
        span: Span,
        message: String,
    },
}

impl MemberOutcome {
    pub fn name(&self) -> &str {
        match self {
            MemberOutcome::Done(r) => &r.name,
            MemberOutcome::Internal { name, .. } => name,
        }
    }
}

#[derive(Clone, Debug)]
pub enum FileStatus {
    /// Parse, type or I/O errors: nothing was verified.
    Input(Vec<InputError>),
    /// Checked; the selected members' outcomes in program order.
    Checked(Vec<MemberOutcome>),
}

#[derive(Clone, Debug)]
pub struct FileReport {
    pub source: Source,
    pub status: FileStatus,
    /// With `--method`: the spans of the members selected in this file (`--expect` then
    /// looks only at expectations inside them). `None`: the whole file counts.
    pub scope: Option<Vec<Span>>,
}

#[derive(Clone, Debug)]
pub struct Run {
    pub files: Vec<FileReport>,
    pub time_ms: f64,
    /// `--method` names that matched no member of any file.
    pub unmatched_methods: Vec<String>,
    /// Stopped by Ctrl-C or `Options::cancel`: only the members that finished are reported.
    pub interrupted: bool,
    /// With `--shard`: the whole batch's layout (for `idf-verify merge`).
    pub shard: Option<shard::Layout>,
    /// What the result cache did.
    pub cache: CacheStats,
}

/// A number no other program of this process has.
pub fn next_program_key() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// What `run_streaming` hands its sink, in a deterministic order (files in order,
/// members in program order) as soon as everything before it is done.
pub enum Event<'a> {
    /// First, once every file's front end is done: how many members of each file (in
    /// order) will be verified (0 for a file with input errors).
    Planned(&'a [usize]),
    /// A file's front end is done: its source, and its input errors if any.
    File(&'a Source, Option<&'a [InputError]>),
    /// A member of the last file announced finished.
    Member(&'a Source, &'a MemberOutcome),
}

/// Set by the first Ctrl-C: no member starts after it, members in flight are
/// abandoned, and the run reports what finished (every run: see [`Options::cancel`]
/// for stopping one).
pub static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The terminating signal that set [`INTERRUPTED`] (SIGTERM, SIGHUP; 0: none, or
/// Ctrl-C), so that every report of the run states the status the process exits with.
pub static SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The exit status of an interrupted run: 128 + the signal's number (130 for Ctrl-C).
pub fn interrupted_status() -> i32 {
    match SIGNAL.load(std::sync::atomic::Ordering::SeqCst) {
        0 => 130,
        sig => 128 + sig,
    }
}

/// Where the result cache lives and how large it may grow.
#[derive(Clone, Debug)]
pub struct CacheFolder {
    pub dir: PathBuf,
    /// Its bound in bytes (0: none): past it, least recently used entries are evicted.
    pub limit: u64,
}

/// What the cache did in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: usize,
    pub misses: usize,
    pub stored: usize,
    /// Entries evicted to keep the folder within its bound.
    pub evicted: usize,
    /// The folder could not be made without making a folder above it (a missing
    /// `$HOME`): the cache was off.
    pub off: bool,
}
