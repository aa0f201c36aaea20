//! The cache folder as a whole: where it is by default, how large it is, emptying it
//! (`idf-verify cache info|clear`), and keeping it under its size bound by evicting
//! the least recently used entries.
//!
//! Only what the cache itself writes is ever touched: files named like entries
//! (`v<N>/<xx>/<hex>.json`) and their temporary files (`v<N>/<xx>/.<hex>.….tmp`), and
//! those folders once empty. Anything else in the folder (a user's file, a folder
//! given by mistake as `--cache ~`) is neither counted nor removed, and the walk never
//! follows a symbolic link.
//!
//! Architecture invariant: this module knows the folder's layout, not entries' content
//! (that is `store`'s); the run reaches it only through [`evict`] after storing.

use super::store::VERSION_DIR;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The default bound on the folder's size: 256 MiB (a member's entry is a few KiB).
pub const DEFAULT_LIMIT: u64 = 256 << 20;

/// The environment variables that choose the folder and its bound when no flag does.
pub const DIR_VAR: &str = "IDF_VERIFY_CACHE_DIR";
pub const LIMIT_VAR: &str = "IDF_VERIFY_CACHE_LIMIT";

/// The default folder: `$IDF_VERIFY_CACHE_DIR`, else `$XDG_CACHE_HOME/idf-verify`,
/// else `$HOME/.cache/idf-verify` (only absolute paths are taken from variables).
pub fn default_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    var(DIR_VAR)
        .or_else(|| var("XDG_CACHE_HOME").map(|x| x.join("idf-verify")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("idf-verify")))
}

/// The bound: `flag` (`--cache-limit`), else `$IDF_VERIFY_CACHE_LIMIT`, else
/// [`DEFAULT_LIMIT`]; a variable that is not a size is an error.
pub fn limit(flag: Option<u64>) -> Result<u64, String> {
    match (flag, std::env::var(LIMIT_VAR)) {
        (Some(n), _) => Ok(n),
        (None, Ok(v)) if !v.is_empty() => parse_size(&v).map_err(|e| format!("{LIMIT_VAR}: {e}")),
        _ => Ok(DEFAULT_LIMIT),
    }
}

/// Whether a cache can live at `dir`: it is a folder, or it can be made without making
/// any folder above it (its parent is a folder). With `HOME=/nonexistent`, the default
/// folder is not usable and the cache is off: the run creates nothing.
pub fn usable(dir: &Path) -> bool {
    // A relative name's parent may be empty: the current folder.
    let parent = dir.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    dir.is_dir() || parent.is_some_and(Path::is_dir)
}

/// A size such as `1048576`, `512K`, `256M` or `2G` (powers of 1024); `0`: no bound.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => {
                    return Err(format!(
                        "`{s}` is not a size (bytes, or a number with K, M, G, T)"
                    ));
                }
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .ok_or_else(|| format!("`{s}` is not a size (bytes, or a number with K, M, G, T)"))
}

/// A size for people: `1.2 MiB`.
pub fn show_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} bytes") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// A file the cache wrote.
struct File {
    path: PathBuf,
    bytes: u64,
    /// Last written or read (a hit refreshes it: `store::Store::load`).
    used: SystemTime,
    /// An entry of this build's layout (others are never read again).
    current: bool,
    /// A temporary file (a write in flight, or left by a crash).
    temporary: bool,
}

/// Every file the cache wrote under `dir`, and the folders that hold them (deepest
/// first).
fn walk(dir: &Path) -> (Vec<File>, Vec<PathBuf>) {
    let mut files = vec![];
    let mut folders = vec![];
    let is_hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    let real_dirs = |d: &Path| -> Vec<(String, PathBuf)> {
        let Ok(rd) = std::fs::read_dir(d) else { return vec![] };
        rd.flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
            .collect()
    };
    for (version, vdir) in real_dirs(dir) {
        let digits = version.strip_prefix('v').unwrap_or("");
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        for (prefix, pdir) in real_dirs(&vdir) {
            if prefix.len() != 2 || !is_hex(&prefix) {
                continue;
            }
            let Ok(rd) = std::fs::read_dir(&pdir) else { continue };
            for e in rd.flatten() {
                let Ok(name) = e.file_name().into_string() else { continue };
                let entry =
                    name.strip_suffix(".json").is_some_and(|k| is_hex(k) && k.starts_with(&prefix));
                let temporary = name.starts_with('.') && name.ends_with(".tmp");
                if !entry && !temporary {
                    continue;
                }
                // Not followed: a link's own size and time.
                let Ok(meta) = e.metadata() else { continue };
                files.push(File {
                    path: e.path(),
                    bytes: meta.len(),
                    used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    current: version == VERSION_DIR && entry,
                    temporary,
                });
            }
            folders.push(pdir);
        }
        folders.push(vdir);
    }
    (files, folders)
}

/// What `idf-verify cache info` shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Entries this build may read.
    pub entries: u64,
    /// Every file the cache wrote (entries of older builds' layouts and temporary files
    /// included).
    pub files: u64,
    pub bytes: u64,
}

pub fn usage(dir: &Path) -> Usage {
    let (files, _) = walk(dir);
    Usage {
        entries: files.iter().filter(|f| f.current).count() as u64,
        files: files.len() as u64,
        bytes: files.iter().map(|f| f.bytes).sum(),
    }
}

/// Remove every file the cache wrote under `dir`, and its folders once empty (`dir`
/// itself stays): what was removed.
pub fn clear(dir: &Path) -> Usage {
    let (files, folders) = walk(dir);
    let mut removed = Usage::default();
    for f in &files {
        if std::fs::remove_file(&f.path).is_ok() {
            removed.files += 1;
            removed.entries += u64::from(f.current);
            removed.bytes += f.bytes;
        }
    }
    for d in &folders {
        let _ = std::fs::remove_dir(d);
    }
    removed
}

/// Keep `dir` within `limit` bytes (0: no bound): when it holds more, remove files
/// until it holds at most 90% of the bound (so that the next few runs do not evict
/// again), first temporary files left for over an hour and entries of other layouts,
/// then entries least recently used first. The number of files removed.
pub fn evict(dir: &Path, limit: u64) -> usize {
    if limit == 0 {
        return 0;
    }
    let (mut files, _) = walk(dir);
    let mut total: u64 = files.iter().map(|f| f.bytes).sum();
    if total <= limit {
        return 0;
    }
    let target = limit / 10 * 9;
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    // Temporary files still being written (younger than an hour) are never removed.
    files.retain(|f| !f.temporary || f.used < an_hour_ago);
    files.sort_by_key(|f| (f.current, f.used));
    let mut removed = 0;
    for f in &files {
        if total <= target {
            break;
        }
        if std::fs::remove_file(&f.path).is_ok() {
            total = total.saturating_sub(f.bytes);
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_usable_when_it_or_its_parent_exists() {
        let tmp = std::env::temp_dir();
        assert!(usable(&tmp));
        assert!(usable(&tmp.join("idf-not-made-yet")));
        assert!(!usable(&tmp.join("idf-not-made-yet").join("below")));
        assert!(usable(Path::new("relative-cache")), "in the current folder");
    }

    #[test]
    fn sizes_read_and_print() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("256m"), Ok(256 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("0"), Ok(0));
        assert!(parse_size("").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(show_size(12), "12 bytes");
        assert_eq!(show_size(1536), "1.5 KiB");
    }

    #[test]
    fn only_the_caches_own_files_are_counted_evicted_and_cleared() {
        let d = std::env::temp_dir().join(format!("idf-folder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let sub = d.join(VERSION_DIR).join("ab");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(d.join("v1").join("cd")).unwrap();
        // Three entries of 1000 bytes, oldest first; one of an older layout; a stranger.
        let now = SystemTime::now();
        for (i, name) in ["ab01.json", "ab02.json", "ab03.json"].iter().enumerate() {
            let p = sub.join(name);
            std::fs::write(&p, vec![b'x'; 1000]).unwrap();
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(now - Duration::from_secs(100 - i as u64 * 10)).unwrap();
        }
        std::fs::write(d.join("v1").join("cd").join("cd99.json"), vec![b'x'; 1000]).unwrap();
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        std::fs::write(sub.join("notes.json"), "mine").unwrap();
        assert_eq!(usage(&d), Usage { entries: 3, files: 4, bytes: 4000 });
        // Within the bound: nothing goes.
        assert_eq!(evict(&d, 4000), 0);
        // 2500 bytes: down to 2250: the older layout's entry, then the oldest entry.
        assert_eq!(evict(&d, 2500), 2);
        assert!(!sub.join("ab01.json").exists() && sub.join("ab02.json").exists());
        assert_eq!(usage(&d), Usage { entries: 2, files: 2, bytes: 2000 });
        assert_eq!(clear(&d).entries, 2);
        assert_eq!(usage(&d), Usage::default());
        // The user's files and the folder itself stay.
        assert!(d.join("notes.txt").exists() && sub.join("notes.json").exists());
        assert!(!d.join("v1").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
