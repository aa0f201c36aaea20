//! Running a batch: files loaded and checked in parallel, the selected members handed
//! to the cache and the scheduler, results streamed in a deterministic order.
//!
//! Architecture invariant: never prints and never decides how results look; a panic or
//! an `Err` from the verifier becomes a [`MemberOutcome::Internal`] (exit 3).

use super::schedule::Item;
use super::shard::Shard;
use super::{Event, FileReport, FileStatus, MemberOutcome, Options, Run, next_program_key};
use crate::guard::STACK_SIZE;
use crate::source::{Source, collect_files, front_file, select_members};
use crate::syntax::InputError;
use crate::syntax::ast::{MemberRef, Program, Span};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// Load, check and verify the given files.
pub fn run(paths: &[PathBuf], opts: &Options) -> Run {
    run_streaming(paths, opts, &mut |_| {})
}

/// Announces files in order.
struct Streamer<'a> {
    sources: &'a [Source],
    input: &'a [Option<Vec<InputError>>],
    announced: usize,
}

impl Streamer<'_> {
    fn upto(&mut self, n: usize, sink: &mut dyn FnMut(Event<'_>)) {
        while self.announced < n.min(self.sources.len()) {
            let i = self.announced;
            sink(Event::File(&self.sources[i], self.input[i].as_deref()));
            self.announced += 1;
        }
    }
}

/// As `run`, handing each file and member to `sink` as soon as it and everything
/// before it are done (so one slow member hides only what follows it, and only until
/// its budget runs out: a member past its `--timeout` by a margin is abandoned and
/// reported as a timeout, whatever its solver query does).
pub fn run_streaming(paths: &[PathBuf], opts: &Options, sink: &mut dyn FnMut(Event<'_>)) -> Run {
    let start = Instant::now();
    let files = collect_files(paths);
    let threads = worker_count(opts);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.min(files.len().max(1)))
        .stack_size(STACK_SIZE)
        .build()
        .expect("cannot build the thread pool");
    let fronts: Vec<(Source, Result<Program, Vec<InputError>>)> =
        pool.install(|| files.par_iter().map(|p| front_file(p)).collect());
    drop(pool);
    verify_fronts(fronts, start, threads, opts, sink)
}

/// As `run_streaming`, for one file whose front end the caller ran ([`front_text`]
/// on a text held in memory, e.g. an editor's buffer); nothing is read from disk.
pub fn run_front_streaming(
    source: Source,
    front: Result<Program, Vec<InputError>>,
    opts: &Options,
    sink: &mut dyn FnMut(Event<'_>),
) -> Run {
    verify_fronts(vec![(source, front)], Instant::now(), worker_count(opts), opts, sink)
}

/// Worker threads for `opts.jobs` (0: one per core).
fn worker_count(opts: &Options) -> usize {
    if opts.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.jobs
    }
}

/// Verify the selected members of files whose front end is done, streaming to `sink`.
fn verify_fronts(
    fronts: Vec<(Source, Result<Program, Vec<InputError>>)>,
    start: Instant,
    threads: usize,
    opts: &Options,
    sink: &mut dyn FnMut(Event<'_>),
) -> Run {
    let layout = opts.shard.map(|s| crate::pipeline::shard::layout(s, &fronts, &opts.methods));
    let mut fronts = fronts;
    if let Some(s) = opts.shard {
        // A file's input errors are reported by one shard only (and by file, the shard
        // sees only its files).
        fronts.retain(|(source, p)| (p.is_ok() && !s.by_file) || s.owns_file(&source.path));
    }
    let mut work: Vec<crate::pipeline::schedule::Item> = Vec::new();
    let mut scopes: Vec<Option<Vec<Span>>> = vec![None; fronts.len()];
    let mut programs: Vec<Option<std::sync::Arc<Program>>> = Vec::new();
    let mut sources: Vec<Source> = Vec::new();
    let mut input: Vec<Option<Vec<InputError>>> = Vec::new();
    for (fi, (source, program)) in fronts.into_iter().enumerate() {
        sources.push(source);
        match program {
            Ok(program) => {
                let program = std::sync::Arc::new(program);
                if !opts.check_only {
                    let selected = select_members(&program, &opts.methods);
                    if !opts.methods.is_empty() {
                        let span = |m: &MemberRef| program.classes[m.class].members[m.member].span;
                        scopes[fi] = Some(selected.iter().map(|(m, _)| span(m)).collect());
                    }
                    let key = next_program_key();
                    let text = std::sync::Arc::new(sources[fi].text.clone());
                    work.extend(selected.into_iter().map(|(member, name)| {
                        crate::pipeline::schedule::Item {
                            file: fi,
                            program: program.clone(),
                            text: text.clone(),
                            key,
                            member,
                            name,
                        }
                    }));
                }
                programs.push(Some(program));
                input.push(None);
            }
            Err(errors) => {
                programs.push(None);
                input.push(Some(errors));
            }
        }
    }
    let unmatched: Vec<String> = opts
        .methods
        .iter()
        .filter(|name| !work.iter().any(|w| &w.name == *name))
        .cloned()
        .collect();
    if let Some(s) = opts.shard {
        let checked: Vec<bool> = input.iter().map(Option::is_none).collect();
        restrict(s, &mut work, &mut scopes, &sources, &checked);
    }
    let mut planned = vec![0; sources.len()];
    for w in &work {
        planned[w.file] += 1;
    }
    sink(Event::Planned(&planned));
    // Stream in order: a file is announced when the members of the files before it
    // are done; its members follow in program order.
    let mut per_file: Vec<Vec<MemberOutcome>> = vec![Vec::new(); sources.len()];
    let mut streamer = Streamer { sources: &sources, input: &input, announced: 0 };
    let work_files: Vec<usize> = work.iter().map(|w| w.file).collect();
    let (interrupted, cache) =
        crate::pipeline::cache::run_members(work, threads, opts, start, &mut |wi, outcome| {
            let fi = work_files[wi];
            streamer.upto(fi + 1, sink);
            sink(Event::Member(&sources[fi], &outcome));
            per_file[fi].push(outcome);
        });
    if !interrupted {
        streamer.upto(sources.len(), sink);
    }
    let reports: Vec<FileReport> = sources
        .into_iter()
        .zip(input)
        .zip(per_file.into_iter().zip(scopes))
        .map(|((source, errors), (members, scope))| FileReport {
            source,
            status: match errors {
                None => FileStatus::Checked(members),
                Some(errors) => FileStatus::Input(errors),
            },
            scope,
        })
        .collect();
    drop(programs);
    let unmatched_methods = if opts.check_only { Vec::new() } else { unmatched };
    Run {
        files: reports,
        time_ms: start.elapsed().as_secs_f64() * 1000.0,
        unmatched_methods,
        interrupted,
        shard: layout,
        cache,
    }
}

/// Keep the members of `work` this shard owns; with `--expect`, only their spans count
/// (`scopes`, indexed like `sources`, for every file that checked).
pub fn restrict(
    shard: Shard,
    work: &mut Vec<Item>,
    scopes: &mut [Option<Vec<Span>>],
    sources: &[Source],
    checked: &[bool],
) {
    work.retain(|w| shard.owns_member(&sources[w.file].path, &w.name));
    if shard.by_file {
        // Whole files: their expectations all count.
        return;
    }
    for (fi, scope) in scopes.iter_mut().enumerate() {
        if checked.get(fi).copied().unwrap_or(false) {
            *scope = Some(vec![]);
        }
    }
    for w in work.iter() {
        let span = w.program.classes[w.member.class].members[w.member.member].span;
        if let Some(s) = scopes.get_mut(w.file).and_then(Option::as_mut) {
            s.push(span);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::with_big_stack;
    use crate::pipeline::INTERRUPTED;
    use crate::source::{front_end, front_text};

    #[test]
    fn a_cancelled_run_verifies_nothing_and_others_run_on() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let text = "class A { void a() { } void b() { assert 1 == 2; } }";
        let source = Source::new("a.jv", text);
        let run_with = |flag: &Arc<AtomicBool>| {
            let opts = Options { jobs: 1, cancel: Some(flag.clone()), ..Options::default() };
            let mut members = Vec::new();
            let run = with_big_stack(|| {
                run_front_streaming(source.clone(), front_text(text), &opts, &mut |ev| {
                    if let Event::Member(_, m) = ev {
                        members.push(m.name().to_string());
                    }
                })
            });
            (run.interrupted, members)
        };
        let cancelled = Arc::new(AtomicBool::new(true));
        assert_eq!(run_with(&cancelled), (true, vec![]));
        // The flag stops its own run only: not every run, as Ctrl-C does.
        assert!(!INTERRUPTED.load(Ordering::SeqCst));
        let fresh = Arc::new(AtomicBool::new(false));
        assert_eq!(run_with(&fresh), (false, vec!["A.a".to_string(), "A.b".to_string()]));
    }

    #[test]
    fn selects_members_by_name() {
        let p = front_end("class A { int f; A() { } void m() { } predicate p() { return true; } }")
            .unwrap();
        let names: Vec<String> = select_members(&p, &[]).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["A.new", "A.m", "A.p"]);
        let only = select_members(&p, &["A.m".to_string()]);
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].0, MemberRef { class: 0, member: 2 });
    }
}
