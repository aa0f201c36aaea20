//! Sharding (`--shard K/N`; issue 13, item 6): one batch verified on N machines. Each
//! member lands in exactly one shard, by a stable hash (FNV-1a) of its file's path as
//! given and its name, whatever `--jobs`, the machine or the other files; a file's
//! input errors (parse, type, I/O) are reported by one shard only, by the hash of its
//! path. Every shard still reads and checks every file (it must, to list the members).
//!
//! A shard's JSON document (`--format json`) is the usual one plus a `shard` key: the
//! shard's index and count and the layout of the whole batch (every file in order with
//! every selected member, or `null` for a file with input errors), which
//! `idf-verify merge` (`super::merge_shards`) uses to put the shards' members back in order
//! and to check that nothing is missing.
//!
//! Architecture invariant: the assignment is a pure function of (path, member name,
//! N); the pipeline only filters by it.

use crate::source::Source;
use crate::syntax::InputError;
use crate::syntax::ast::Program;
use serde::Serialize;

/// Shard `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
    /// Whole files to a shard, by the hash of their path (for `--expect`: an
    /// expectation may concern another member's error, e.g. one reported in an
    /// interface's contract that a class member inherits).
    #[serde(skip)]
    pub by_file: bool,
}

/// At most this many shards.
pub const MAX_SHARDS: usize = 10_000;

impl std::str::FromStr for Shard {
    type Err = String;
    /// `K/N` with `1 <= K <= N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard K/N with 1 <= K <= N <= {MAX_SHARDS}");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n) = (k.trim().parse::<usize>(), n.trim().parse::<usize>());
        match (k, n) {
            (Ok(k), Ok(n)) if 1 <= k && k <= n && n <= MAX_SHARDS => {
                Ok(Shard { index: k, count: n, by_file: false })
            }
            _ => Err(bad()),
        }
    }
}

/// FNV-1a, 64 bits: stable across machines, builds and Rust versions.
fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0xff;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        for &b in *p {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The shard (1-based) of member `name` of the file shown as `path`.
pub fn member_shard(path: &str, name: &str, count: usize) -> usize {
    (fnv(&[b"member", path.as_bytes(), name.as_bytes()]) % count.max(1) as u64) as usize + 1
}

/// The shard (1-based) that reports the input errors of the file shown as `path`.
pub fn file_shard(path: &str, count: usize) -> usize {
    (fnv(&[b"file", path.as_bytes()]) % count.max(1) as u64) as usize + 1
}

impl Shard {
    pub fn owns_member(&self, path: &str, name: &str) -> bool {
        if self.by_file {
            return self.owns_file(path);
        }
        member_shard(path, name, self.count) == self.index
    }
    pub fn owns_file(&self, path: &str) -> bool {
        file_shard(path, self.count) == self.index
    }
}

/// The whole batch as every shard sees it.
#[derive(Clone, Debug, Serialize)]
pub struct Layout {
    pub index: usize,
    pub count: usize,
    pub files: Vec<LayoutFile>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LayoutFile {
    pub path: String,
    /// Every selected member in program order; `None` for a file with input errors.
    pub members: Option<Vec<String>>,
}

/// The layout of a batch from its front ends (before sharding).
pub fn layout(
    shard: Shard,
    fronts: &[(Source, Result<Program, Vec<InputError>>)],
    methods: &[String],
) -> Layout {
    let files = fronts
        .iter()
        .map(|(source, program)| LayoutFile {
            path: source.path.clone(),
            members: program.as_ref().ok().map(|p| {
                crate::source::select_members(p, methods).into_iter().map(|(_, n)| n).collect()
            }),
        })
        .collect();
    Layout { index: shard.index, count: shard.count, files }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3, by_file: false }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/100000"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_member_lands_in_exactly_one_shard() {
        for n in 1..6 {
            for name in ["A.m", "A.new", "B.p", "Cell.setX"] {
                let owners: Vec<usize> = (1..=n)
                    .filter(|&k| {
                        Shard { index: k, count: n, by_file: false }.owns_member("x/a.jv", name)
                    })
                    .collect();
                assert_eq!(owners.len(), 1, "{name} of {n}");
                assert_eq!(owners[0], member_shard("x/a.jv", name, n));
            }
        }
        // Stable: the same answer on every machine and build.
        assert_eq!(fnv(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
    }
}
