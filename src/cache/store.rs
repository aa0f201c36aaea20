//! The cache folder: one JSON file per entry, `DIR/v1/<key[..2]>/<key>.json`.
//!
//! Writes are atomic (a temporary file in the same folder, renamed over the entry), so
//! concurrent runs and crashes leave either no entry or a whole one. Anything that goes
//! wrong when reading (a missing, unreadable, truncated or foreign file) is a miss;
//! anything that goes wrong when writing (a read-only folder, a full disk) leaves the
//! entry unwritten. Neither is ever an error of the run.
//!
//! Architecture invariant: this module knows files, not verification: it moves
//! [`Entry`] values in and out of the folder.

use super::entry::Entry;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The default folder: `$XDG_CACHE_HOME/idf-verify`, else `~/.cache/idf-verify`.
pub fn default_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = xdg.filter(|p| p.is_absolute()).or_else(|| {
        std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache"))
    })?;
    Some(base.join("idf-verify"))
}

pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn new(dir: &Path) -> Store {
        Store { dir: dir.join("v1") }
    }

    /// Keys are lowercase hex (from `key.rs`); anything else is never a path here.
    fn path(&self, key: &str) -> Option<PathBuf> {
        let hex = key.len() >= 16 && key.bytes().all(|b| b.is_ascii_hexdigit());
        hex.then(|| self.dir.join(&key[..2]).join(format!("{key}.json")))
    }

    /// The entry stored under `key`, if a readable one is there.
    pub fn load(&self, key: &str) -> Option<Entry> {
        let bytes = std::fs::read(self.path(key)?).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Store `entry` under `key`; false if it could not be written.
    pub fn save(&self, key: &str, entry: &Entry) -> bool {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let Some(path) = self.path(key) else { return false };
        let Some(dir) = path.parent() else { return false };
        let Ok(text) = serde_json::to_vec(entry) else { return false };
        if std::fs::create_dir_all(dir).is_err() {
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
