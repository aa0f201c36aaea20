//! What the result cache tells its user: `idf-verify cache info` and `cache clear`, and
//! the `cache:` line that ends a human run with `--stats`.
//!
//! Architecture invariant: text only; the folder is measured and changed by
//! `pipeline::cache::folder`.

use crate::pipeline::CacheStats;
use crate::pipeline::cache::folder::{self, Usage};
use std::path::Path;

/// When no variable names a folder (`cache info|clear` without `--cache`).
pub const NO_FOLDER: &str = "no cache folder: none of $IDF_VERIFY_CACHE_DIR, $XDG_CACHE_HOME, \
                             $HOME is set to an absolute path (pass --cache DIR)";

/// `idf-verify cache info`: where, how many entries, how many bytes, the bound.
pub fn info(dir: &Path, usage: Usage, limit: u64) -> String {
    let state = if dir.is_dir() {
        ""
    } else if folder::usable(dir) {
        " (not made yet)"
    } else {
        " (off: its parent folder does not exist, and is never made)"
    };
    let others = match usage.files - usage.entries {
        0 => String::new(),
        n => format!(" (and {n} files of other builds or unfinished writes)"),
    };
    let size = if usage.bytes < 1024 {
        String::new()
    } else {
        format!(" ({})", folder::show_size(usage.bytes))
    };
    let bound = if limit == 0 { "none".to_string() } else { folder::show_size(limit) };
    format!(
        "location: {}{state}\nentries:  {}{others}\nbytes:    {}{size}\nlimit:    {bound}",
        shown(dir),
        usage.entries,
        usage.bytes,
    )
}

/// `idf-verify cache clear`: what was removed.
pub fn cleared(dir: &Path, removed: Usage) -> String {
    format!(
        "removed {} entr{} ({}) from {}",
        removed.files,
        if removed.files == 1 { "y" } else { "ies" },
        folder::show_size(removed.bytes),
        shown(dir)
    )
}

/// The last line of a human run with `--stats` (and a cache).
pub fn run_line(dir: &Path, s: &CacheStats) -> String {
    if s.off {
        return format!(
            "cache: off ({} cannot be made: its parent folder does not exist)",
            shown(dir)
        );
    }
    format!(
        "cache: {} hit{}, {} verified, {} stored in {}{}",
        s.hits,
        if s.hits == 1 { "" } else { "s" },
        s.misses,
        s.stored,
        shown(dir),
        match s.evicted {
            0 => String::new(),
            n => format!(", {n} evicted (over its bound)"),
        }
    )
}

/// A folder's name as the user reads it: exact where it is text, escaped where not.
fn shown(dir: &Path) -> String {
    crate::source::escape_controls(&crate::source::shown_path(dir)).into_owned()
}
