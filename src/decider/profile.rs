//! Quantifier instances counted per quantifier: Z3 4.8.12 has no API for them (its
//! statistics give one total; `smt.qi.profile` prints to its standard error), so a
//! context that is asked for them writes Z3's trace log (the axiom profiler's input,
//! `trace=true`) to a temporary file, read once the context is deleted.
//!
//! In the log, `[mk-quant] #N qid ...` introduces quantifier `#N` with its id (the
//! backend gives each named quantifier the id `q!K`, `K` indexing its names),
//! `[new-match] FP #N ...` a match of `#N` found under the fingerprint `FP`, and
//! `[instance] FP ...` the instance made from it: instances are counted, matches that
//! never became one are not.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The prefix of the quantifier ids the backend gives: `q!K` names `names[K]`.
pub const QID_PREFIX: &str = "q!";

/// A new temporary path for one context's trace log.
pub fn trace_path() -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("idf-verify-{}-{n}.z3log", std::process::id()))
}

/// A context's trace log. Opened for reading as soon as Z3 has created it, and its
/// name removed then: the file lives as long as the open handles (Z3's and this one),
/// so a process that dies mid-count leaves nothing behind in the temporary folder.
/// Where the file cannot be opened early, it is kept by name and removed when read.
pub struct TraceLog {
    file: Option<std::fs::File>,
    path: PathBuf,
}

impl TraceLog {
    pub fn opened(path: &Path) -> TraceLog {
        let file = std::fs::File::open(path).ok();
        // Unlinking an open file is what POSIX systems allow; elsewhere the name stays
        // until the log is read.
        if file.is_some() && cfg!(unix) {
            let _ = std::fs::remove_file(path);
        }
        TraceLog { file, path: path.to_path_buf() }
    }

    /// The instances of each named quantifier in the log (complete once its context
    /// is deleted), most first (ties by name); quantifiers without instances are left
    /// out. An unreadable log counts nothing.
    pub fn read_instances(self, names: &[Rc<str>]) -> Vec<(Rc<str>, u64)> {
        let file = self.file.or_else(|| std::fs::File::open(&self.path).ok());
        let counts =
            file.map(|f| count(std::io::BufReader::new(f), names.len())).unwrap_or_default();
        let _ = std::fs::remove_file(&self.path);
        let mut out: Vec<(Rc<str>, u64)> = counts
            .into_iter()
            .enumerate()
            .filter(|(_, n)| *n > 0)
            .filter_map(|(k, n)| names.get(k).map(|s| (s.clone(), n)))
            .collect();
        sort(&mut out);
        out
    }
}

/// Most instances first, then by name (a stable order for equal counts).
pub fn sort(v: &mut [(Rc<str>, u64)]) {
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}

/// Instances per name index, from a trace log.
fn count(log: impl BufRead, names: usize) -> Vec<u64> {
    let mut counts = vec![0u64; names];
    // Z3's quantifier `#N` → name index; a match's fingerprint → name index.
    let mut quants: HashMap<String, usize> = HashMap::new();
    let mut matches: HashMap<String, usize> = HashMap::new();
    for line in log.split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(line) = std::str::from_utf8(&line) else { continue };
        let mut words = line.split_ascii_whitespace();
        match words.next() {
            Some("[mk-quant]") => {
                let (Some(id), Some(qid)) = (words.next(), words.next()) else { continue };
                if let Some(k) = qid.strip_prefix(QID_PREFIX).and_then(|k| k.parse::<usize>().ok())
                    && k < names
                {
                    quants.insert(id.to_string(), k);
                }
            }
            Some("[new-match]") => {
                let (Some(fp), Some(id)) = (words.next(), words.next()) else { continue };
                match quants.get(id) {
                    Some(&k) => matches.insert(fp.to_string(), k),
                    None => matches.remove(fp),
                };
            }
            Some("[instance]") => {
                if let Some(&k) = words.next().and_then(|fp| matches.get(fp)) {
                    counts[k] += 1;
                }
            }
            _ => {}
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_instances_of_named_quantifiers_by_their_matches() {
        let log = "\
[mk-quant] #10 q!1 1 #8 #9
[mk-quant] #20 q!0 1 #18 #19
[mk-quant] #30 k!3 1 #28 #29
[new-match] 0xa #10 #8 #5 ; #6
[instance] 0xa #40
[new-match] 0xb #20 #18 #5 ; #6
[instance] 0xb #41
[new-match] 0xc #10 #8 #7 ; #6
[instance] 0xc #42
[new-match] 0xd #30 #28 #7 ; #6
[instance] 0xd #43
[new-match] 0xe #10 #8 #7 ; #6
";
        // `q!1` matched three times and was instantiated twice; `k!3` is not ours.
        assert_eq!(count(log.as_bytes(), 2), vec![1, 2]);
    }

    #[test]
    fn a_reused_fingerprint_counts_for_its_latest_match() {
        let log = "\
[mk-quant] #10 q!0 1 #8 #9
[mk-quant] #30 k!3 1 #28 #29
[new-match] 0xa #10 #8 #5 ; #6
[new-match] 0xa #30 #28 #5 ; #6
[instance] 0xa #40
";
        assert_eq!(count(log.as_bytes(), 1), vec![0]);
    }
}
