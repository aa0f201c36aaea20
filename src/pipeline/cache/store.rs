//! Entries in the cache folder: one file per entry, `DIR/v2/<key[..2]>/<key>.json`: a
//! first line holding the SHA3-256 digest of the key and the JSON that follows, then the
//! JSON. `DIR` is made when the first entry is stored if its parent folder exists;
//! nothing above it is ever made.
//!
//! Writes are atomic (a temporary file in the same folder, renamed over the entry), so
//! concurrent runs and crashes leave either no entry or a whole one. Anything that goes
//! wrong when reading (a missing, unreadable, truncated, damaged, edited or foreign file;
//! a FIFO, a device, a folder; a file larger than any entry) is a miss, and the reader
//! never blocks on or reads more than `MAX_ENTRY` bytes of it; anything that goes wrong
//! when writing (a read-only folder, a full disk) leaves the entry unwritten. Neither is
//! ever an error of the run.
//!
//! Architecture invariant: this module knows files, not verification: it moves
//! [`Entry`] values in and out of the folder.

use super::entry::Entry;
use sha3::{Digest, Sha3_256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The folder of this entry layout's entries, under the cache folder.
pub const VERSION_DIR: &str = "v2";

pub struct Store {
    /// The cache folder: made if missing, never any folder above it.
    root: PathBuf,
    /// `root/VERSION_DIR`.
    dir: PathBuf,
}

impl Store {
    pub fn new(dir: &Path) -> Store {
        Store { root: dir.to_path_buf(), dir: dir.join(VERSION_DIR) }
    }

    /// Keys are lowercase hex (from `key.rs`); anything else is never a path here.
    fn path(&self, key: &str) -> Option<PathBuf> {
        let hex = key.len() >= 16 && key.bytes().all(|b| b.is_ascii_hexdigit());
        hex.then(|| self.dir.join(&key[..2]).join(format!("{key}.json")))
    }

    /// The entry stored under `key`, if a whole, unaltered one is there. A hit marks
    /// the entry as used now (its modification time, at most once a minute), which
    /// is what eviction (`folder::evict`) goes by.
    pub fn load(&self, key: &str) -> Option<Entry> {
        let (file, bytes) = read_bounded(&self.path(key)?)?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let (digest, json) = text.split_once('\n')?;
        if digest != seal(key, json.as_bytes()) {
            return None;
        }
        let entry = serde_json::from_str(json).ok()?;
        let now = std::time::SystemTime::now();
        let fresh = file.metadata().and_then(|m| m.modified()).is_ok_and(|t| {
            now.duration_since(t).is_ok_and(|d| d < std::time::Duration::from_secs(60))
        });
        if !fresh {
            // Best effort: a read-only cache still serves its entries.
            let _ = file.set_modified(now);
        }
        Some(entry)
    }

    /// Make the folders an entry goes in: the cache folder itself if missing (its
    /// parent must exist: nothing above it is ever made), then those below it.
    fn make_dirs(&self, sub: &Path) -> bool {
        [self.root.as_path(), self.dir.as_path(), sub].into_iter().all(
            |d| match std::fs::create_dir(d) {
                Ok(()) => true,
                Err(e) => e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir(),
            },
        )
    }

    /// Store `entry` under `key`; false if it could not be written.
    pub fn save(&self, key: &str, entry: &Entry) -> bool {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let Some(path) = self.path(key) else { return false };
        let Some(dir) = path.parent() else { return false };
        let Ok(json) = serde_json::to_vec(entry) else { return false };
        if json.len() + 65 > MAX_ENTRY {
            return false;
        }
        let mut text = seal(key, &json).into_bytes();
        text.push(b'\n');
        text.extend_from_slice(&json);
        if !self.make_dirs(dir) {
            return false;
        }
        let tmp = dir.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = std::fs::write(&tmp, &text).is_ok() && std::fs::rename(&tmp, &path).is_ok();
        if !written {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

/// No entry is larger than this (a member's errors, models and trace fit in far less).
pub const MAX_ENTRY: usize = 4 << 20;

/// The digest that seals an entry: SHA3-256 of the key, a newline and the JSON.
fn seal(key: &str, json: &[u8]) -> String {
    let mut h = Sha3_256::new();
    h.update(key.as_bytes());
    h.update(b"\n");
    h.update(json);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of `path` if it is a regular file of at most `MAX_ENTRY` bytes. Opened
/// without blocking (a FIFO put there would otherwise wait for a writer), checked on
/// the open handle (no swap between the check and the read), and read no further than
/// the bound.
fn read_bounded(path: &Path) -> Option<(std::fs::File, Vec<u8>)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_ENTRY as u64 {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&file).take(MAX_ENTRY as u64 + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() <= MAX_ENTRY).then_some((file, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("idf-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn entries_that_are_not_small_regular_files_are_misses() {
        let d = temp_dir("kinds");
        let store = Store::new(&d);
        let key = "0123456789abcdef0123";
        let path = store.path(key).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // A folder where the entry should be.
        std::fs::create_dir_all(&path).unwrap();
        assert!(store.load(key).is_none());
        std::fs::remove_dir_all(&path).unwrap();
        // A FIFO: opening it must not wait for a writer.
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
            assert!(store.load(key).is_none());
            std::fs::remove_file(&path).unwrap();
        }
        // A file larger than any entry.
        std::fs::write(&path, vec![b' '; MAX_ENTRY + 1]).unwrap();
        assert!(store.load(key).is_none());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_seal_covers_the_key_and_every_byte() {
        let json = br#"{"status":"verified"}"#;
        let s = seal("00aa", json);
        assert_eq!(s.len(), 64);
        assert_ne!(s, seal("00ab", json));
        let mut edited = json.to_vec();
        edited[11] = b'V';
        assert_ne!(s, seal("00aa", &edited));
    }
}
