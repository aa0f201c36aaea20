//! The result cache (`--cache DIR`, `--no-cache`): never verify a member twice. Before
//! the scheduler runs, each member's key ([`key`]: a hash of its text and of everything
//! its verification reads, the configuration and the tool's build) is looked up in the
//! folder ([`store`]); a hit is reported as the verified result was (its errors,
//! notes, traces, models), marked `cached` with this run's time (the time to read it),
//! and only the misses are verified. Every real verdict of a miss is then stored
//! ([`entry`]), and the folder is kept within its bound ([`folder`]).
//!
//! Architecture invariant: part of the pipeline, above `verify`; it wraps
//! `schedule::run_members` with the same contract (outcomes handed back in the items'
//! order). It never changes a verdict: an entry is read only under the exact key it
//! was written under, and timeouts, interruptions and internal errors are never
//! written.

pub mod entry;
pub mod folder;
pub mod key;
pub mod store;

use crate::pipeline::Options;
use crate::pipeline::schedule::Item;
use crate::pipeline::{CacheStats, MemberOutcome};
use std::collections::HashMap;
use std::time::Instant;

/// As `schedule::run_members`, with the cache of `opts.cache` (none: verify all).
pub fn run_members(
    items: Vec<Item>,
    threads: usize,
    opts: &Options,
    start: Instant,
    done: &mut dyn FnMut(usize, MemberOutcome),
) -> (bool, CacheStats) {
    let Some(cache) = opts.cache.as_ref() else {
        let interrupted = crate::pipeline::schedule::run_members(items, threads, opts, start, done);
        return (interrupted, CacheStats::default());
    };
    if !folder::usable(&cache.dir) {
        let interrupted = crate::pipeline::schedule::run_members(items, threads, opts, start, done);
        return (interrupted, CacheStats { off: true, ..CacheStats::default() });
    }
    let store = store::Store::new(&cache.dir);
    let stats_wanted = opts.config.stats;
    // Keys, per program (one plan per program, shared by its members).
    let mut plans: HashMap<u64, key::Plan<'_>> = HashMap::new();
    let keyed: Vec<key::Keyed> = items
        .iter()
        .map(|it| {
            plans
                .entry(it.key)
                .or_insert_with(|| key::Plan::new(&it.program, &it.text, &opts.config))
                .key(it.member)
        })
        .collect();
    drop(plans);
    let slots: Vec<Option<MemberOutcome>> = items
        .iter()
        .zip(&keyed)
        .map(|(it, k)| {
            let kind = it.program.classes[it.member.class].members[it.member.member].kind;
            let read = Instant::now();
            let mut r =
                store.load(&k.key)?.result(&k.key, &k.anchors, it.member, &it.name, kind)?;
            r.time_ms = read.elapsed().as_secs_f64() * 1000.0;
            if !stats_wanted {
                r.stats = None;
            }
            Some(MemberOutcome::Done(r))
        })
        .collect();
    let mut stats =
        CacheStats { hits: slots.iter().filter(|s| s.is_some()).count(), ..CacheStats::default() };
    let (misses, miss_index): (Vec<Item>, Vec<usize>) = items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| slots[*i].is_none())
        .map(|(i, it)| (it, i))
        .unzip();
    stats.misses = misses.len();
    // Entries always hold statistics, so that `--stats` can show a hit's.
    let mut inner = opts.clone();
    inner.config.stats = true;
    let mut out = InOrder { slots, next: 0 };
    out.flush(done);
    let interrupted =
        crate::pipeline::schedule::run_members(misses, threads, &inner, start, &mut |mi, o| {
            let i = miss_index[mi];
            let mut o = o;
            if let MemberOutcome::Done(r) = &mut o {
                let k = &keyed[i];
                if let Some(e) = entry::Entry::of(r, &k.key, &k.anchors)
                    && store.save(&k.key, &e)
                {
                    stats.stored += 1;
                }
                if !stats_wanted {
                    r.stats = None;
                }
            }
            out.slots[i] = Some(o);
            out.flush(done);
        });
    if stats.stored > 0 {
        stats.evicted = folder::evict(&cache.dir, cache.limit);
    }
    if interrupted {
        // What finished is reported in order (the scheduler skipped what did not).
        for (i, s) in out.slots.iter_mut().enumerate().skip(out.next) {
            if let Some(o) = s.take() {
                done(i, o);
            }
        }
    }
    (interrupted, stats)
}

/// Outcomes handed on in the items' order as soon as every earlier one is there.
struct InOrder {
    slots: Vec<Option<MemberOutcome>>,
    next: usize,
}

impl InOrder {
    fn flush(&mut self, done: &mut dyn FnMut(usize, MemberOutcome)) {
        while let Some(o) = self.slots.get_mut(self.next).and_then(Option::take) {
            done(self.next, o);
            self.next += 1;
        }
    }
}
