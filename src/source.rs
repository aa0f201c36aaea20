//! Sources: finding `.jv` files (folders searched recursively), reading them exactly
//! (a FIFO or a device is an `io.error`, never a hang), the front end (parse, check)
//! on a text, the members a `--method` filter selects, and the line map that turns
//! byte offsets into lines and columns.
//!
//! Architecture invariant: below the pipeline, the oracle and reporting; it imports
//! only `syntax`, `check` and `guard`.

use crate::check::check;
use crate::guard::catch_panic;
use crate::syntax::InputError;
use crate::syntax::ast::{MemberKind, MemberRef, Program, Span};
use crate::syntax::parse;
use std::path::{Path, PathBuf};

/// A source file as read: its path as given and its text (lossily decoded if it is not
/// UTF-8, for rendering and for reading expectation comments).
#[derive(Clone, Debug)]
pub struct Source {
    /// The path as reports show it ([`shown_path`]): the name itself when it is UTF-8.
    pub path: String,
    pub text: String,
    /// The name's bytes when they are not UTF-8 (then `path` is escaped, not the name).
    pub raw_path: Option<Vec<u8>>,
}

impl Source {
    /// A source whose name is UTF-8 (a file named by a string, an editor's buffer).
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Source {
        Source { path: path.into(), text: text.into(), raw_path: None }
    }

    /// The name's exact bytes (for URIs: never the escaped `path`).
    pub fn path_bytes(&self) -> &[u8] {
        self.raw_path.as_deref().unwrap_or(self.path.as_bytes())
    }
}

/// Files named on the command line, with folders searched recursively for `*.jv`
/// (sorted). A path that does not exist is kept, so that loading reports it.
pub fn collect_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found);
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    out
}

/// Every `*.jv` below `dir`. A folder that cannot be read (or an entry that cannot be
/// listed) is kept as a path, so that loading reports it as an `io.error`: nothing
/// is skipped silently.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(_) => return out.push(dir.to_path_buf()),
    };
    for entry in entries {
        let Ok(entry) = entry else {
            out.push(dir.to_path_buf());
            continue;
        };
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, out),
            _ if path.extension().is_some_and(|e| e == "jv") => out.push(path),
            Ok(_) => {}
            Err(_) => out.push(path),
        }
    }
}

/// Read a file: its source, and its text or an `io.error`. Only regular files are read
/// (a FIFO named `x.jv` would block for ever); a UTF-8 byte-order mark is dropped.
pub fn load(path: &Path) -> (Source, Result<String, InputError>) {
    let shown = shown_path(path);
    let raw = raw_path(path);
    // Messages quote the name harmlessly; `Source::path` keeps it as it is.
    let quoted = escape_controls(&shown).into_owned();
    let io_error = |message: String| {
        let err =
            InputError { id: "io.error", message, span: None, label: String::new(), notes: vec![] };
        (Source { path: shown.clone(), text: String::new(), raw_path: raw.clone() }, Err(err))
    };
    match std::fs::metadata(path) {
        Err(e) => return io_error(format!("cannot read `{quoted}`: {e}")),
        Ok(m) if m.is_dir() => {
            return io_error(format!("cannot read the folder `{quoted}` (or one of its entries)"));
        }
        Ok(m) if !m.is_file() => {
            return io_error(format!("`{quoted}` is not a regular file"));
        }
        Ok(_) => {}
    }
    match std::fs::read(path) {
        Err(e) => io_error(format!("cannot read `{quoted}`: {e}")),
        Ok(mut bytes) => {
            if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
                bytes.drain(..3);
            }
            let (mut source, text) = load_bytes(shown, bytes);
            source.raw_path = raw;
            (source, text)
        }
    }
}

/// A path as reports show it: a UTF-8 name as it is; a name that is not UTF-8 with
/// each byte that is not as `\xNN` and each `\` as `\\` (a lossy `U+FFFD` would make
/// two different names look the same; the doubled `\` keeps two such names apart).
pub fn shown_path(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        if let Ok(s) = std::str::from_utf8(bytes) {
            return s.to_string();
        }
        let mut out = String::new();
        for chunk in bytes.utf8_chunks() {
            out.push_str(&chunk.valid().replace('\\', "\\\\"));
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        path.display().to_string()
    }
}

/// A file name as the terminal shows it: control and bidirectional formatting
/// characters escaped (`\u{1b}`, `\u{202e}`), so a name holding an escape sequence
/// cannot drive the terminal (also inside messages that quote the name).
pub fn escape_controls(name: &str) -> std::borrow::Cow<'_, str> {
    use crate::syntax::lexer::is_invisible_control;
    if !name.chars().any(is_invisible_control) {
        return name.into();
    }
    name.chars()
        .map(
            |c| {
                if is_invisible_control(c) { c.escape_unicode().to_string() } else { c.to_string() }
            },
        )
        .collect::<String>()
        .into()
}

/// The bytes of a name that is not UTF-8 (`Source::raw_path`).
fn raw_path(path: &Path) -> Option<Vec<u8>> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        std::str::from_utf8(bytes).is_err().then(|| bytes.to_vec())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

fn load_bytes(shown: String, bytes: Vec<u8>) -> (Source, Result<String, InputError>) {
    match String::from_utf8(bytes) {
        Ok(text) => (Source { path: shown, text: text.clone(), raw_path: None }, Ok(text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bad = e.utf8_error().error_len().unwrap_or(1);
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let err = InputError::new(
                "io.error",
                format!("the file is not valid UTF-8 (byte 0x{:02x})", e.as_bytes()[at]),
                // The lossy text holds U+FFFD (3 bytes) where the bad bytes were.
                Span::new(at, at + 3),
                format!("{bad} invalid byte{}", if bad == 1 { "" } else { "s" }),
            );
            (Source { path: shown, text, raw_path: None }, Err(err))
        }
    }
}

/// Parse and check one source text. At most one error is kept per line (the first):
/// one mistake often trips several rules at once, and an `// expect:` comment names
/// exactly the errors of its line.
pub fn front_end(text: &str) -> Result<Program, Vec<InputError>> {
    parse(text).and_then(check).map_err(|errors| {
        let lines = Lines::new(text);
        let mut seen = std::collections::HashSet::new();
        errors
            .into_iter()
            .filter(|e| e.span.is_none_or(|s| seen.insert(lines.line(s.start as usize))))
            .collect()
    })
}

/// The members to verify (everything but fields), filtered by `--method` names.
pub fn select_members(program: &Program, methods: &[String]) -> Vec<(MemberRef, String)> {
    let mut out = Vec::new();
    for (ci, class) in program.classes.iter().enumerate() {
        for (mi, m) in class.members.iter().enumerate() {
            if m.kind == MemberKind::Field {
                continue;
            }
            let name = if m.kind == MemberKind::Constructor {
                format!("{}.new", class.name.name)
            } else {
                format!("{}.{}", class.name.name, m.name.name)
            };
            if methods.is_empty() || methods.contains(&name) {
                out.push((MemberRef { class: ci, member: mi }, name));
            }
        }
    }
    out
}

/// The front end of one file, inside the current thread.
pub fn front_file(path: &Path) -> (Source, Result<Program, Vec<InputError>>) {
    let (source, text) = load(path);
    let program = match text {
        Err(e) => Err(vec![e]),
        Ok(text) => front_text(&text),
    };
    (source, program)
}

/// The front end of a text, inside the current thread (give it a [`STACK_SIZE`]
/// stack); a panic is an `internal.error`.
pub fn front_text(text: &str) -> Result<Program, Vec<InputError>> {
    match catch_panic(|| front_end(text)) {
        Ok(r) => r,
        Err(message) => Err(vec![InputError {
            id: "internal.error",
            message,
            span: None,
            label: String::new(),
            notes: Vec::new(),
        }]),
    }
}

/// Line starts of a text, to turn byte offsets into 1-based lines and columns (in
/// characters) in O(log n) each.
pub struct Lines<'a> {
    text: &'a str,
    starts: std::borrow::Cow<'a, [usize]>,
}

/// The line starts of `text`.
pub fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        Lines { text, starts: line_starts(text).into() }
    }

    /// With line starts computed before (`line_starts`), in O(1).
    pub fn with_starts(text: &'a str, starts: &'a [usize]) -> Lines<'a> {
        Lines { text, starts: starts.into() }
    }

    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        (line, self.text[start..offset].chars().count() + 1)
    }

    /// The line alone, in O(log lines): not counting the characters before `offset`
    /// on its line (a line of N bad characters would cost O(N^2) with one error each).
    pub fn line(&self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        self.starts.partition_point(|&s| s <= offset)
    }
}
