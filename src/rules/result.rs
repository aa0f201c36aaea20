//! What verifying one member yields: its verdict, its errors (id, reason, position,
//! message, notes), and optional trace, counterexample and statistics.
//!
//! Architecture invariant: these are plain values. The verifier fills them and never
//! prints; `crate::report` renders them and never decides verdicts.

use crate::syntax::ast::{MemberKind, MemberRef, Span};
use serde::Serialize;

/// How verification is run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Ghost-operation inference (LANGUAGE.md section 6); `--no-infer` turns it off.
    pub infer: bool,
    /// Per-member solver timeout in seconds.
    pub timeout: Option<f64>,
    /// Record the symbolic states along each failing path.
    pub trace: bool,
    /// Ask Z3 for a model of each failing boolean check.
    pub counterexample: bool,
    /// Collect per-member statistics.
    pub stats: bool,
    /// With `stats`: count each quantifier's instances (Z3 writes its trace log for
    /// that, which doubles a quantifier-heavy member's time). `--stats` asks for them;
    /// the result cache, which keeps every miss's statistics, does not.
    pub quantifier_counts: bool,
    /// Vacuity check: warn (`vacuous`) when no path of a verified member reaches its
    /// end, or some `assert` or `return` of it.
    pub smoke: bool,
    /// Merge the states in which the branches of an `if` end (`--no-merge` turns it
    /// off).
    pub merge: bool,
    /// Z3's resource limit per solver query (`--rlimit`; `None`: none): unlike
    /// `timeout`, the same on every machine and under any load.
    pub rlimit: Option<u32>,
    /// Stops this member's verification from another thread (the scheduler gives each
    /// member its own); a stopped member ends as a timeout, never verified.
    pub interrupt: Option<crate::decider::Interrupt>,
    /// Suggest fixes for failures (each one verified before it is offered: the
    /// pipeline's `fix`); off under `--expect`, where nobody reads them.
    pub fixes: bool,
    /// With `counterexample`: write each failure a replay confirms as a regression test
    /// into this folder (`verify --counterexample --save DIR`; the oracle's `save`).
    pub save: Option<std::path::PathBuf>,
}

/// Z3's resource units a solver query may spend by default (`--rlimit`): about five
/// times what the hardest query of the project's tests needs (Z3 4.8 counts two units
/// per unit of this limit: that query counted 1.8 million, in half a second), so
/// verdicts never depend on the machine's load, while a matching loop ends as a
/// reported timeout in about 25 s (20,000,000 took three minutes: the time per unit
/// grows as the loop's terms pile up).
pub const DEFAULT_RLIMIT: u32 = 5_000_000;

/// When `--timeout` is not given, the scheduler still abandons a member that runs
/// past this many seconds (reported as a timeout): a backstop for the rare query that
/// ignores its resource limit (nonlinear arithmetic in Z3 4.8), so that every run
/// ends. It is not a solver timeout: a timed Z3 query starts a timer thread, which
/// doubled the suite's run time.
pub const DEFAULT_TIMEOUT: f64 = 300.0;

impl Default for Config {
    fn default() -> Self {
        Config {
            infer: true,
            timeout: None,
            trace: false,
            counterexample: false,
            stats: false,
            quantifier_counts: false,
            smoke: false,
            merge: true,
            rlimit: Some(DEFAULT_RLIMIT),
            interrupt: None,
            save: None,
            fixes: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Verified,
    Failed,
    Timeout,
}

/// One entry of a failing path's trace: what was executed and the symbolic state after it.
#[derive(Clone, Debug, Serialize)]
pub struct TraceEntry {
    /// What happened: `exec x = e`, `call c.setX(..)`, `produce pre`, `consume post`, ...
    pub what: String,
    #[serde(skip)]
    pub span: Span,
    /// 1-based line, filled by the reporter from `span`.
    pub line: usize,
    /// `x ↦ t` entries.
    pub store: Vec<String>,
    /// `t.f ↦ v` and `t.q[s](args)` entries.
    pub heap: Vec<String>,
    /// Path-condition conjuncts added since the previous entry.
    pub path_condition: Vec<String>,
}

/// A failed check.
#[derive(Clone, Debug)]
pub struct VerificationError {
    /// An id of LANGUAGE.md section 8 (`assert.failed`, ...).
    pub id: &'static str,
    /// Why: `assertion.false`, `insufficient.permission`, `receiver.null`,
    /// `division.by.zero`, `index.out.of.bounds`, `termination.unproven`, `timeout`.
    pub reason: &'static str,
    pub message: String,
    pub span: Span,
    /// Secondary labels, e.g. the callee's failing conjunct for `call.precondition`.
    pub notes: Vec<(Span, String)>,
    pub trace: Option<Vec<TraceEntry>>,
    /// `name = value` lines from a Z3 model.
    pub counterexample: Option<Vec<String>>,
    /// The same model's values of the member's entry state (for replaying it).
    pub entry: Option<EntryModel>,
    /// What running the member from that entry state did (filled by the pipeline).
    pub replay: Option<Replay>,
    /// A suggested fix that was verified to remove this failure (filled by the
    /// pipeline when `Config::fixes` is on).
    pub fix: Option<Fix>,
}

/// A suggested edit of the source: what it does, and the text to insert at each
/// position (an empty span) or to put in place of each span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// `add \`requires acc(this.n);\` to the precondition`, ...
    pub message: String,
    /// Non-overlapping edits, in source order.
    pub edits: Vec<(Span, String)>,
}

/// A value in a model, as the solver printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelValue {
    Int(String),
    Bool(bool),
    Null,
    /// An object, by the model's name for it.
    Ref(String),
    /// A sequence, element by element.
    Seq(Vec<ModelValue>),
}

/// A model's values of a member's entry state: `this` and the parameters, and the
/// fields and array lengths the state held on entry (after its precondition).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryModel {
    pub store: Vec<(String, ModelValue)>,
    /// (receiver, `Class.field`, value).
    pub fields: Vec<(ModelValue, String, ModelValue)>,
    /// (array, length).
    pub lengths: Vec<(ModelValue, ModelValue)>,
}

/// A counterexample replayed by the concrete interpreter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replay {
    /// The run failed with the same id on the same line.
    pub confirmed: bool,
    /// The entry state it ran from, readably.
    pub inputs: String,
    /// What the run did instead, when not confirmed.
    pub outcome: String,
    /// With `--save`, for a confirmed failure: the regression test written (its path),
    /// or why none was.
    pub saved: Option<Result<String, String>>,
}

impl VerificationError {
    /// An error with no notes, trace, counterexample or replay.
    pub fn plain(id: &'static str, reason: &'static str, message: String, span: Span) -> Self {
        VerificationError {
            id,
            reason,
            message,
            span,
            notes: vec![],
            trace: None,
            counterexample: None,
            entry: None,
            replay: None,
            fix: None,
        }
    }
}

/// Per-member statistics (`--stats`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Paths explored to their end (a postcondition or a `join` reached).
    pub paths: u64,
    pub queries: u64,
    pub pushes: u64,
    pub branches: u64,
    pub pruned: u64,
    /// How every path ended (started = completed + failed + pruned + timeout + merged).
    pub ledger: crate::rules::ledger::Ledger,
    pub chunks_max: u64,
    /// `if` statements whose branch states merged into one.
    pub merges: u64,
    /// Axiom instances of pure methods assumed on the member's paths, and how many
    /// of them the solver was given (lazily: only when a check needed them).
    pub axioms: u64,
    pub axioms_to_z3: u64,
    /// The deepest nesting of statement rules on the Rust stack (not shown, not
    /// cached: a test's measure that straight-line code runs flat).
    #[serde(skip)]
    pub exec_depth_max: u64,
    pub z3_ms: f64,
    pub total_ms: f64,
    /// The quantifiers the solver instantiated most in the member's queries, most
    /// first (at most `TOP_QUANTIFIERS`; rendered with their lines by the reports;
    /// not cached).
    #[serde(skip)]
    pub quantifiers: Vec<QuantInstances>,
    /// Read from the result cache (`crate::cache`): these are the statistics of the
    /// run that verified it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

/// How many quantifiers `--stats` lists per member.
pub const TOP_QUANTIFIERS: usize = 5;

/// A quantifier the solver instantiated, with how often.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantInstances {
    /// In the user's terms: a quantifier of the program as written (in backquotes),
    /// or a law of sequences.
    pub name: String,
    /// Where the program writes it (none for a law of sequences).
    pub span: Option<Span>,
    pub instances: u64,
}

#[derive(Clone, Debug)]
pub struct MemberResult {
    pub member: MemberRef,
    /// `Class.member`; the constructor is `Class.new`.
    pub name: String,
    pub kind: MemberKind,
    pub status: Status,
    pub errors: Vec<VerificationError>,
    /// Warnings (`vacuous`, from `--smoke`); they do not change the verdict.
    pub warnings: Vec<VerificationError>,
    /// This run's time for the member (for a result read from the cache, the time it
    /// took to read it).
    pub time_ms: f64,
    pub stats: Option<Stats>,
    /// Read from the result cache (`crate::pipeline::cache`), not verified in this run.
    pub cached: bool,
}
