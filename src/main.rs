//! The `idf-verify` command line (LANGUAGE.md section 9): parse flags with clap, run the
//! driver, print with `report`, and map the outcome to an exit status.
//!
//! Architecture invariant: exit statuses are decided here and in `report` only: 0
//! verified (or every expectation met), 1 failed or timed out (or a mismatch), 2 input or
//! usage error, 3 internal error. No panic ever reaches the user as a backtrace.

use clap::{Parser, ValueEnum};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream};
use idf_verify::pipeline::Options;
use idf_verify::pipeline::Run;
use idf_verify::report::{self, expect, human};
use idf_verify::verify::Config;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
    /// JSON Lines: one record per file with input errors and per member, as they
    /// finish, then a summary record.
    Jsonl,
    /// SARIF 2.1.0 (static analysis results, e.g. for GitHub code scanning): one log.
    Sarif,
}

/// Verify `.jv` programs by symbolic execution for implicit dynamic frames.
///
/// `idf-verify FILE...` verifies (the `verify` subcommand is the default); a path named
/// like a subcommand is verified with `idf-verify -- test` or `idf-verify verify test`.
#[derive(Parser, Debug)]
#[command(
    name = "idf-verify",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    verify: VerifyArgs,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Verify files or folders (what `idf-verify PATH...` does).
    Verify(VerifyArgs),
    /// Run every member concretely on inputs solved from its paths, or random ones (a
    /// testing oracle).
    Test(TestArgs),
    /// Speak the Language Server Protocol on stdin and stdout (for editors).
    ///
    /// Client settings (initializationOptions): timeout (seconds per member, default
    /// 10, null for none), jobs (members in parallel, default all cores), debounceMs
    /// (default 300), smoke.
    Lsp(LspArgs),
    /// Join the JSON documents of `--shard K/N` runs into the unsharded run's document.
    Merge(MergeArgs),
    /// Show or empty the result cache (where it is, how many entries, how large).
    Cache(CacheArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorWhen {
    /// Colours when stdout is a terminal and `NO_COLOR` is not set.
    Auto,
    Always,
    Never,
}

#[derive(clap::Args, Debug)]
struct VerifyArgs {
    /// Files, or folders searched recursively for *.jv.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Colours in human output.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    color: ColorWhen,
    /// Quiet: print failures, warnings and the summary only (no line per verified member).
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Verbose: per-member statistics as with --stats.
    #[arg(short, long)]
    verbose: bool,
    /// human: per-member lines, diagnostics, summary (streamed); json: one JSON
    /// document; jsonl: JSON Lines, streamed.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Check `// expect: ID` comments instead of plain verdicts.
    #[arg(long)]
    expect: bool,
    /// Verify only this member (repeatable); the constructor is `Class.new`.
    #[arg(long = "method", value_name = "Class.member")]
    methods: Vec<String>,
    /// On failure, print the symbolic states along the failing path.
    #[arg(long)]
    trace: bool,
    /// On a failed boolean check, print concrete values from a model.
    #[arg(long)]
    counterexample: bool,
    /// Per member: solver queries, branches, chunks, time in Z3, the quantifiers
    /// instantiated most; totals at the end.
    #[arg(long)]
    stats: bool,
    /// At the end, list the N slowest members (name, file, time, verdict).
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    slowest: Option<usize>,
    /// Members verified in parallel (default: all cores).
    #[arg(short, long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// Whole-run time limit: past it no member starts and members not finished are
    /// reported as verification.timeout.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    deadline: Option<f64>,
    /// Per-member time limit; exceeding it reports verification.timeout. Without it, a
    /// member still running after 300 s (a query that ignores the resource limit,
    /// --rlimit, which normally stops queries) is abandoned and reported as a timeout.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    timeout: Option<f64>,
    /// Z3's resource limit per solver query (default 5,000,000): a query that spends
    /// more answers `unknown`, reported as verification.timeout. Unlike --timeout, the
    /// same on every machine and under any load. 0: no limit.
    #[arg(long, value_name = "N")]
    rlimit: Option<u32>,
    /// No ghost-operation inference (the paper's base algorithm).
    #[arg(long)]
    no_infer: bool,
    /// Vacuity check: warn (`vacuous`) when no path of a verified member reaches its
    /// end, or one of its `assert`s or `return`s.
    #[arg(long)]
    smoke: bool,
    /// Explore every path of an `if` separately instead of merging the states its
    /// branches end in.
    #[arg(long)]
    no_merge: bool,
    /// Do not suggest fixes. Without it, each failure of a failed member gets a
    /// suggested fix when a mechanical one (a missing `acc` in the precondition,
    /// `requires x != null`, a loop bound, `open`/`close` with --no-infer) verifies;
    /// never with --expect.
    #[arg(long)]
    no_fixes: bool,
    /// The result cache's folder (default: $IDF_VERIFY_CACHE_DIR, else
    /// $XDG_CACHE_HOME/idf-verify, else ~/.cache/idf-verify): a member whose text and
    /// dependencies are unchanged is not verified again.
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// The result cache's bound (bytes, or with K, M, G; 0: none; default:
    /// $IDF_VERIFY_CACHE_LIMIT, else 256M): past it, least recently used entries go.
    #[arg(long, value_name = "SIZE", value_parser = idf_verify::pipeline::cache::folder::parse_size)]
    cache_limit: Option<u64>,
    /// Verify every member, reading and writing no cache.
    #[arg(long)]
    no_cache: bool,
    /// With --counterexample: write each failure its replay confirms as a regression
    /// test (a `.jv` file whose `main` calls the member on the replayed inputs) into DIR.
    /// Members are verified again (no cache).
    #[arg(long, value_name = "DIR", requires = "counterexample", conflicts_with = "cache")]
    save: Option<PathBuf>,
    /// Verify only shard K of N (1 <= K <= N) of the members: each member lands in
    /// exactly one shard; `idf-verify merge` joins the shards' JSON documents.
    #[arg(long, value_name = "K/N")]
    shard: Option<idf_verify::pipeline::shard::Shard>,
}

/// The longest `--timeout` accepted (a week), and the most `--jobs`.
const MAX_TIMEOUT: f64 = 7.0 * 24.0 * 3600.0;
const MAX_JOBS: usize = 256;

/// `idf-verify cache info|clear`.
#[derive(clap::Args, Debug)]
struct CacheArgs {
    #[command(subcommand)]
    action: CacheAction,
    /// The cache's folder (default: as for verify).
    #[arg(long, value_name = "DIR", global = true)]
    cache: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum CacheAction {
    /// Where the cache is, how many entries it holds, how large it is and may grow.
    Info,
    /// Remove every entry (the files the cache wrote; the folder itself stays).
    Clear,
}

/// `idf-verify test PATHS`: run every member concretely on inputs solved from its
/// paths' conditions (or, with `--random`, on random input states).
#[derive(clap::Args, Debug)]
struct TestArgs {
    /// Files, or folders searched recursively for *.jv.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Random input states tried per member (with --paths: per member the solved
    /// inputs do not cover).
    #[arg(long, value_name = "N", default_value_t = 100)]
    runs: u64,
    /// Seed of the input generator.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// Run only this member (repeatable); the constructor is `Class.new`.
    #[arg(long = "method", value_name = "Class.member")]
    methods: Vec<String>,
    /// Whitebox testing (the default): inputs solved from the path conditions of the
    /// symbolic executor's paths (random inputs only where the solver gives none that
    /// reach a path); reports path coverage.
    #[arg(long = "paths", conflicts_with = "random")]
    solve: bool,
    /// Random input states only (rejected when they do not satisfy the precondition),
    /// no symbolic execution.
    #[arg(long)]
    random: bool,
    /// With --paths: distinct inputs solved per path.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100))]
    per_path: usize,
    /// With --paths: the symbolic executor's time limit per member.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    timeout: Option<f64>,
    /// Write each distinct concrete failure into DIR as a regression test (a `.jv`
    /// file: the program and a `main` that calls the member on the failing inputs).
    #[arg(long, value_name = "DIR")]
    save: Option<PathBuf>,
    /// human: a line per member and the failures; json: one JSON document.
    #[arg(long, value_enum, default_value = "human")]
    format: TestFormat,
    /// Members tested in parallel (default: all cores).
    #[arg(short, long, value_name = "N", value_parser = parse_jobs)]
    jobs: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TestFormat {
    Human,
    Json,
}

/// `idf-verify lsp`: the server takes its settings from the client.
#[derive(clap::Args, Debug)]
struct LspArgs {
    /// Accepted for editors that pass it (the server always speaks on stdin and stdout).
    #[arg(long)]
    stdio: bool,
}

/// `idf-verify merge SHARD.json...`.
#[derive(clap::Args, Debug)]
struct MergeArgs {
    /// The JSON documents of the `--shard K/N` runs (`--format json`).
    #[arg(required = true, value_name = "SHARD.json")]
    files: Vec<PathBuf>,
}

/// `idf-verify test ...`: 0 no concrete failure, 1 some, 2 input errors, 3 internal
/// errors.
fn test_main(cli: TestArgs) -> i32 {
    let opts = idf_verify::oracle::testing::TestOptions {
        paths: cli.paths,
        runs: cli.runs,
        seed: cli.seed,
        methods: cli.methods,
        // `--paths` is the default; `--random` turns it off.
        solve: cli.solve || !cli.random,
        per_path: cli.per_path,
        timeout: cli.timeout,
        save: cli.save,
        json: cli.format == TestFormat::Json,
        stop: Some(&idf_verify::pipeline::INTERRUPTED),
        jobs: idf_verify::pipeline::run::worker_count(&idf_verify::pipeline::Options {
            jobs: cli.jobs.unwrap_or(0),
            ..Default::default()
        }),
    };
    install_interrupt_handler();
    let (sum, written) = idf_verify::guard::with_big_stack(|| {
        let mut out = Recording { inner: std::io::stdout().lock(), error: None };
        let sum = idf_verify::oracle::testing::run_tests(&opts, &mut out);
        let flushed = out.flush();
        (sum, out.error.map_or(flushed, Err))
    });
    let code = if sum.interrupted {
        idf_verify::pipeline::interrupted_status()
    } else if sum.internal > 0 {
        3
    } else if sum.input_errors > 0 {
        2
    } else if sum.failures > 0 {
        1
    } else {
        0
    };
    output_status(written, code)
}

/// A writer that remembers its first error, for reports written line by line whose
/// writers do not stop at one.
struct Recording<W> {
    inner: W,
    error: Option<std::io::Error>,
}

impl<W: Write> Write for Recording<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).inspect_err(|e| self.note(e))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().inspect_err(|e| self.note(e))
    }
}

impl<W> Recording<W> {
    fn note(&mut self, e: &std::io::Error) {
        if self.error.is_none() {
            self.error = Some(std::io::Error::new(e.kind(), e.to_string()));
        }
    }
}

/// `idf-verify merge SHARD.json...`: print the unsharded run's JSON document; exit with
/// its status (2 when the documents do not merge).
fn merge_main(cli: MergeArgs) -> i32 {
    let files = cli.files;
    let mut docs = vec![];
    for f in &files {
        // Named in messages exactly and harmlessly (`source::shown_path`).
        let name = quoted(f);
        match read_shard(f) {
            Ok(bytes) => docs.push((name, bytes)),
            Err(e) => {
                idf_verify::say!("error: cannot read `{name}`: {e}");
                return 2;
            }
        }
    }
    match idf_verify::pipeline::merge_shards::merge(&docs) {
        Ok((text, code)) => output_status(writeln!(std::io::stdout().lock(), "{text}"), code),
        Err(message) => {
            idf_verify::say!("error: {message}");
            2
        }
    }
}

/// A path as messages for the terminal quote it: not UTF-8 escaped as `\xNN`, control
/// characters as `\u{..}`.
fn quoted(path: &std::path::Path) -> String {
    let shown = idf_verify::source::shown_path(path);
    idf_verify::source::escape_controls(&shown).into_owned()
}

/// The largest shard document read (a run of 100,000 members with statistics writes
/// about 60 MB): a larger file is refused, not read into memory.
const MAX_SHARD_BYTES: u64 = 256 << 20;

/// A shard document: a regular file (a FIFO or a device would block or never end) of
/// at most [`MAX_SHARD_BYTES`], read on the handle that was checked.
fn read_shard(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let too_big = || {
        std::io::Error::other(format!(
            "larger than {} MiB: not a shard document",
            MAX_SHARD_BYTES >> 20
        ))
    };
    if meta.len() > MAX_SHARD_BYTES {
        return Err(too_big());
    }
    // The file may grow after the check: never read more than the bound.
    let mut bytes = vec![];
    file.take(MAX_SHARD_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SHARD_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t.is_finite() && t > 0.0 && t <= MAX_TIMEOUT => Ok(t),
        _ => Err(format!("`{s}` is not a number of seconds in (0, {MAX_TIMEOUT}]")),
    }
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_JOBS).contains(&n) => Ok(n),
        _ => Err(format!("`{s}` is not a number of jobs in 1..={MAX_JOBS}")),
    }
}

/// What a failed write of the results means: a closed pipe (`| head`) is not an error
/// of the verifier; anything else (a full disk) is exit 3, never a silent success.
fn output_status(r: std::io::Result<()>, code: i32) -> i32 {
    match r {
        Ok(()) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            idf_verify::say!("error: cannot write the results: {e}");
            3
        }
    }
}

/// Keep freed memory in the process (glibc): every member that needs Z3 makes and
/// drops a Z3 context of its own (about 20 MB), which glibc would otherwise hand back
/// to the kernel each time, only to fault it in again page by page (a third of the
/// run time of a small file).
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

/// Let glibc's allocator back its heaps with transparent huge pages: most of a small
/// run's time otherwise goes to faulting in Z3's fresh memory 4 KiB at a time (a file
/// of 20 members: 9,800 page faults, 600 with huge pages; 15-30% less CPU time, each
/// worker thread's first member 5 ms faster). The switch is a tunable glibc reads at
/// start-up only (`GLIBC_TUNABLES`), so the process starts itself again once with it,
/// unless the user set tunables of their own, the kernel gives huge pages only to
/// memory that asks (`madvise` mode) and not at all, or the start fails (then it
/// goes on as it is).
fn use_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os("GLIBC_TUNABLES").is_some() {
            return;
        }
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !mode.is_ok_and(|m| m.contains("[madvise]")) {
            return;
        }
        let Ok(exe) = std::env::current_exe() else { return };
        let mut args = std::env::args_os();
        let Some(arg0) = args.next() else { return };
        // Returns only if the start failed.
        let _ = std::process::Command::new(exe)
            .arg0(arg0)
            .args(args)
            .env("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1")
            .exec();
    }
}

fn main() {
    use_huge_pages();
    tune_allocator();
    idf_verify::guard::install_panic_hook();
    let code = idf_verify::guard::catch_panic(real_main).unwrap_or_else(|message| {
        idf_verify::say!("internal error: {message}");
        3
    });
    // A message that could not reach stderr: the run cannot tell its user what
    // happened, which is the tool's failure (exit 3), whatever the verdict was.
    let code = if idf_verify::console::stderr_failed() { 3 } else { code };
    std::process::exit(code);
}

/// Ctrl-C, SIGTERM and SIGHUP: the first stops the run (no member starts; what
/// finished is reported, as a whole document in every format; exit 128 + the signal's
/// number: 130, 143, 129); a second one exits at once.
fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        if idf_verify::pipeline::INTERRUPTED.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    #[cfg(unix)]
    {
        let handler: extern "C" fn(libc::c_int) = on_terminate;
        // SAFETY: the handler only touches atomics and calls `_exit`, both
        // async-signal-safe.
        unsafe {
            libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
            libc::signal(libc::SIGHUP, handler as libc::sighandler_t);
        }
    }
}

#[cfg(unix)]
extern "C" fn on_terminate(sig: libc::c_int) {
    use std::sync::atomic::Ordering::SeqCst;
    if idf_verify::pipeline::INTERRUPTED.load(SeqCst) {
        // SAFETY: `_exit` is async-signal-safe.
        unsafe { libc::_exit(128 + sig) }
    }
    idf_verify::pipeline::SIGNAL.store(sig, SeqCst);
    idf_verify::pipeline::INTERRUPTED.store(true, SeqCst);
}

fn real_main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    match cli.command {
        None => verify_main(cli.verify),
        Some(Command::Verify(v)) => verify_main(v),
        Some(Command::Test(t)) => test_main(t),
        Some(Command::Lsp(_)) => idf_verify::lsp::main(),
        Some(Command::Merge(m)) => merge_main(m),
        Some(Command::Cache(c)) => cache_main(c),
    }
}

/// `idf-verify cache info|clear`: 0, or 2 on a bad `IDF_VERIFY_CACHE_LIMIT`, 3 when the
/// answer cannot be written.
fn cache_main(cli: CacheArgs) -> i32 {
    use idf_verify::pipeline::cache::folder;
    let limit = match folder::limit(None) {
        Ok(l) => l,
        Err(e) => {
            idf_verify::say!("error: {e}");
            return 2;
        }
    };
    let text = match (cli.cache.or_else(folder::default_dir), cli.action) {
        (None, _) => report::cache::NO_FOLDER.to_string(),
        (Some(dir), CacheAction::Info) => report::cache::info(&dir, folder::usage(&dir), limit),
        (Some(dir), CacheAction::Clear) => report::cache::cleared(&dir, folder::clear(&dir)),
    };
    output_status(writeln!(std::io::stdout().lock(), "{text}"), 0)
}

/// A usage error or `--help`/`--version`: clap's text and status (2, or 0 for help),
/// 3 when that text cannot be written.
fn clap_exit(e: &clap::Error) -> i32 {
    let written = e.print().and_then(|()| std::io::stdout().flush());
    match written {
        Ok(()) => e.exit_code(),
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => e.exit_code(),
        Err(err) => {
            // Help and version go to stdout, usage errors to stderr: say so on stderr
            // (which, when it is the stream that failed, stays silent: still exit 3).
            if e.use_stderr() {
                return 3;
            }
            idf_verify::say!("error: cannot write the help: {err}");
            3
        }
    }
}

fn verify_main(cli: VerifyArgs) -> i32 {
    install_interrupt_handler();
    // `-v` is `--stats` for every output.
    let stats = cli.stats || cli.verbose;
    let opts = Options {
        methods: cli.methods.clone(),
        config: Config {
            infer: !cli.no_infer,
            timeout: cli.timeout,
            trace: cli.trace,
            counterexample: cli.counterexample,
            stats,
            quantifier_counts: stats,
            smoke: cli.smoke,
            merge: !cli.no_merge,
            fixes: !cli.expect && !cli.no_fixes,
            rlimit: match cli.rlimit {
                Some(0) => None,
                Some(n) => Some(n),
                None => Config::default().rlimit,
            },
            interrupt: None,
            save: cli.save.clone(),
        },
        jobs: cli.jobs.unwrap_or(0),
        check_only: false,
        deadline: cli.deadline,
        cancel: None,
        cache: if cli.no_cache || cli.save.is_some() {
            None
        } else {
            let dir = cli.cache.clone().or_else(idf_verify::pipeline::cache::folder::default_dir);
            match (dir, idf_verify::pipeline::cache::folder::limit(cli.cache_limit)) {
                (None, _) => None,
                (Some(dir), Ok(limit)) => Some(idf_verify::pipeline::CacheFolder { dir, limit }),
                (Some(_), Err(e)) => {
                    idf_verify::say!("error: {e}");
                    return 2;
                }
            }
        },
        // `--expect` shards by file (`shard::Shard::by_file`).
        shard: cli.shard.map(|s| idf_verify::pipeline::shard::Shard { by_file: cli.expect, ..s }),
    };
    let file_count = idf_verify::source::collect_files(&cli.paths).len();
    if file_count == 0 {
        idf_verify::say!("error: no .jv files found");
        return 2;
    }
    // Human and JSON Lines output stream as members finish; the others need the run.
    let mut out = StandardStream::stdout(color_choice(cli.color));
    let mut streamed: std::io::Result<()> = Ok(());
    let mut views = report::FileView::default();
    let hopts = human::HumanOptions { stats, quiet: cli.quiet };
    let machine = cli.format != Format::Human;
    let term = std::env::var("TERM").ok();
    let mut progress = report::progress::Progress::new(report::progress::should_show(
        machine,
        std::io::stderr().is_terminal(),
        term.as_deref(),
    ));
    let run = if cli.expect || matches!(cli.format, Format::Json | Format::Sarif) {
        idf_verify::pipeline::run::run_streaming(&cli.paths, &opts, &mut |ev| progress.observe(&ev))
    } else {
        idf_verify::pipeline::run::run_streaming(&cli.paths, &opts, &mut |ev| {
            progress.observe(&ev);
            if streamed.is_err() {
                return;
            }
            streamed = match cli.format {
                Format::Jsonl => match report::json::event_line(&ev, &mut views) {
                    Some(line) => writeln!(out, "{line}").and_then(|()| out.flush()),
                    None => Ok(()),
                },
                _ => progress.suspend(|| {
                    human::render_event(&mut out, &ev, file_count > 1, hopts, &mut views)
                }),
            };
        })
    };
    progress.finish();
    if !run.unmatched_methods.is_empty() {
        let names = run.unmatched_methods.join(", ");
        let names = idf_verify::source::escape_controls(&names);
        idf_verify::say!("error: no member matches --method {names}");
        return 2;
    }
    let (written, code) = if cli.expect {
        expect_mode(&run, cli.format != Format::Human)
    } else {
        let written = match cli.format {
            Format::Json => match &run.shard {
                Some(layout) => {
                    writeln!(out, "{}", idf_verify::report::json::sharded_document(&run, layout))
                }
                None => writeln!(out, "{}", report::json::to_json_with(&run, cli.slowest)),
            },
            Format::Jsonl => streamed.and_then(|()| {
                writeln!(out, "{}", report::json::summary_line_with(&run, cli.slowest))
            }),
            Format::Sarif => {
                let sopts = report::sarif::SarifOptions { cwd: std::env::current_dir().ok() };
                writeln!(out, "{}", report::sarif::to_sarif(&run, &sopts))
            }
            Format::Human => streamed
                .and_then(|()| human::render_summary(&mut out, &run))
                .and_then(|()| human_totals(&mut out, &run, cli.slowest))
                .and_then(|()| match (&opts.cache, stats) {
                    (Some(c), true) => {
                        writeln!(out, "{}", report::cache::run_line(&c.dir, &run.cache))
                    }
                    _ => Ok(()),
                }),
        };
        (written, report::exit_code(&run))
    };
    let flushed = written.and_then(|()| out.flush()).and_then(|()| std::io::stdout().flush());
    let code = if run.interrupted { idf_verify::pipeline::interrupted_status() } else { code };
    output_status(flushed, code)
}

/// After the human summary: `--stats` totals and the `--slowest` list.
fn human_totals(out: &mut dyn Write, run: &Run, slowest: Option<usize>) -> std::io::Result<()> {
    if let Some(t) = report::totals::stats_totals(run) {
        report::totals::render_stats_totals(out, &t)?;
    }
    match slowest {
        Some(n) => report::totals::render_slowest(out, &report::totals::slowest(run, n)),
        None => Ok(()),
    }
}

/// `--color`: `auto` colours a terminal unless `NO_COLOR` is set (no-color.org).
fn color_choice(when: ColorWhen) -> ColorChoice {
    match when {
        ColorWhen::Always => ColorChoice::Always,
        ColorWhen::Never => ColorChoice::Never,
        ColorWhen::Auto
            if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() =>
        {
            ColorChoice::Auto
        }
        ColorWhen::Auto => ColorChoice::Never,
    }
}

/// `--expect`: print every mismatch; 0 iff none (3 on an internal error, 2 on an
/// unreadable path).
fn expect_mode(run: &Run, json: bool) -> (std::io::Result<()>, i32) {
    let mut out = String::new();
    let (mut expected, mut mismatches) = (0, 0);
    let mut listed = vec![];
    for f in &run.files {
        let ms = expect::check_file(f);
        expected += expect::file_expectations(f).len();
        mismatches += ms.len();
        for m in &ms {
            out.push_str(&m.render(&f.source.path));
            out.push('\n');
            let mut m = m.to_json(&f.source.path);
            if let Some(raw) = &f.source.raw_path {
                // A name that is not UTF-8: `path` is escaped, these are its bytes.
                m["path_bytes"] = serde_json::json!(raw);
            }
            listed.push(m);
        }
    }
    out.push_str(&format!(
        "expect: {} file{}, {expected} expectation{}, {mismatches} mismatch{}",
        run.files.len(),
        if run.files.len() == 1 { "" } else { "s" },
        if expected == 1 { "" } else { "s" },
        if mismatches == 1 { "" } else { "es" }
    ));
    let s = report::summarize(run);
    let unreadable = run.files.iter().any(|f| {
        matches!(&f.status, idf_verify::pipeline::FileStatus::Input(errs) if errs.iter().any(|e| e.span.is_none() && e.id == "io.error"))
    });
    let code = if s.internal > 0 {
        out.push_str(&format!("internal error: the verifier failed on {} member(s)\n", s.internal));
        3
    } else if unreadable {
        2
    } else if mismatches > 0 {
        1
    } else {
        0
    };
    if json {
        // One JSON document (every machine format gives one with `--expect`).
        let doc = serde_json::json!({
            "version": 1,
            "expect": {
                "files": run.files.len(),
                "expectations": expected,
                "mismatches": listed,
            },
            "internal_errors": s.internal,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        return (writeln!(std::io::stdout().lock(), "{text}"), code);
    }
    (std::io::stdout().lock().write_all(out.as_bytes()), code)
}
