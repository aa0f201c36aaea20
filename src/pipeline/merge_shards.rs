//! `idf-verify merge SHARD.json...` (issue 13, item 6): the JSON documents of the
//! shards of one batch (`--shard K/N --format json`, `crate::shard`) merged into the
//! document the unsharded run prints (LANGUAGE.md section 9), with the exit status it
//! would have had.
//!
//! The shards' layouts must agree and every shard 1..N must be there exactly once;
//! each file comes back in the layout's order, each member from the shard that owns
//! it, in program order; a member or an input-error file that its shard does not
//! report is an error, never a gap. Times: a member keeps its own; the summary's is
//! the longest shard's (the shards run side by side).
//!
//! Architecture invariant: merge reads only the shards' documents (never sources) and
//! never panics: a malformed document is an error message (exit 2).

use crate::pipeline::shard::{file_shard, member_shard};
use serde_json::{Map, Value};

/// Why shard documents do not merge.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no shard documents given")]
    NoDocuments,
    #[error("{name}: not a JSON document: {source}")]
    NotJson { name: String, source: serde_json::Error },
    #[error("{name}: no `shard` key (write it with `--shard K/N --format json`)")]
    NoShardKey { name: String },
    #[error("{name}: malformed `shard` key")]
    MalformedShardKey { name: String },
    #[error("shard {k}/{count} is missing")]
    Missing { k: usize, count: usize },
    #[error("{name}: shard {k}/{count} is not of the same batch as the others")]
    OtherBatch { name: String, k: usize, count: usize },
    #[error("{name}: shard {k}/{count} is given twice")]
    Twice { name: String, k: usize, count: usize },
    /// A document that does not say what the layout says it must.
    #[error("{0}")]
    Inconsistent(String),
    #[error("cannot write the merged document: {0}")]
    Write(serde_json::Error),
}

impl From<String> for MergeError {
    fn from(s: String) -> MergeError {
        MergeError::Inconsistent(s)
    }
}

impl From<&str> for MergeError {
    fn from(s: &str) -> MergeError {
        MergeError::Inconsistent(s.to_string())
    }
}

/// The merged document's text and its exit status, or why the shards do not merge.
pub fn merge(docs: &[(String, Vec<u8>)]) -> Result<(String, i32), MergeError> {
    if docs.is_empty() {
        return Err(MergeError::NoDocuments);
    }
    let mut parsed: Vec<(String, Value)> = vec![];
    for (name, bytes) in docs {
        let v: Value = serde_json::from_slice(bytes)
            .map_err(|source| MergeError::NotJson { name: name.clone(), source })?;
        parsed.push((name.clone(), v));
    }
    let shard = |name: &str, v: &Value| -> Result<(usize, usize, Value), MergeError> {
        let s = v.get("shard").ok_or_else(|| MergeError::NoShardKey { name: name.into() })?;
        let num = |k: &str| s.get(k).and_then(Value::as_u64).map(|n| n as usize);
        match (num("index"), num("count"), s.get("files")) {
            (Some(k), Some(n), Some(files)) if 1 <= k && k <= n && files.is_array() => {
                Ok((k, n, files.clone()))
            }
            _ => Err(MergeError::MalformedShardKey { name: name.into() }),
        }
    };
    for (name, v) in &parsed {
        if v.get("version") != Some(&Value::from(1)) {
            return Err(MergeError::Inconsistent(format!(
                "{name}: not a document of version 1 of the JSON output"
            )));
        }
    }
    let (_, count, layout) = shard(&parsed[0].0, &parsed[0].1)?;
    // Every shard 1..N must be given: a count beyond the documents given cannot merge
    // (and is not a size to allocate by).
    if count > docs.len() {
        let given: std::collections::HashSet<usize> =
            parsed.iter().filter_map(|(n, v)| shard(n, v).ok().map(|(k, _, _)| k)).collect();
        let k = (1..=docs.len() + 1).find(|k| !given.contains(k)).unwrap_or(1);
        return Err(MergeError::Missing { k, count });
    }
    let mut by_index: Vec<Option<&Value>> = vec![None; count + 1];
    for (name, v) in &parsed {
        let (k, n, files) = shard(name, v)?;
        if n != count || files != layout {
            return Err(MergeError::OtherBatch { name: name.clone(), k, count: n });
        }
        if by_index[k].is_some() {
            return Err(MergeError::Twice { name: name.clone(), k, count: n });
        }
        by_index[k] = Some(v);
    }
    if let Some(k) = (1..=count).find(|&k| by_index[k].is_none()) {
        return Err(MergeError::Missing { k, count });
    }
    let shards: Vec<&Value> = by_index.into_iter().flatten().collect();
    // Each shard's files by path.
    let files_of = |v: &Value| -> Result<Map<String, Value>, String> {
        let files = v.get("files").and_then(Value::as_array).ok_or("a document has no `files`")?;
        let mut out = Map::new();
        for f in files {
            let path = f.get("path").and_then(Value::as_str).ok_or("a file has no `path`")?;
            out.insert(path.to_string(), f.clone());
        }
        Ok(out)
    };
    let shard_files: Vec<Map<String, Value>> =
        shards.iter().map(|v| files_of(v)).collect::<Result<_, _>>()?;
    let mut files = vec![];
    let (mut verified, mut failed, mut timeout, mut input_errors, mut internal) = (0, 0, 0, 0, 0);
    let layout = layout.as_array().cloned().unwrap_or_default();
    for lf in &layout {
        let path = lf.get("path").and_then(Value::as_str).ok_or("a layout file has no `path`")?;
        let file = match lf.get("members") {
            Some(Value::Array(names)) => {
                let mut taken = vec![0usize; count];
                let mut members = vec![];
                for name in names {
                    let name = name.as_str().ok_or("a layout member is not a name")?;
                    let k = member_shard(path, name, count);
                    let theirs = shard_files[k - 1]
                        .get(path)
                        .and_then(|f| f.get("members"))
                        .and_then(Value::as_array)
                        .and_then(|ms| ms.get(taken[k - 1]))
                        .filter(|m| m.get("name").and_then(Value::as_str) == Some(name))
                        .ok_or_else(|| {
                            format!("shard {k}/{count} does not report `{name}` of {path}")
                        })?;
                    taken[k - 1] += 1;
                    // Copied into the merged document: a time must be one.
                    if !theirs.get("time_ms").is_some_and(is_time) {
                        return Err(MergeError::Inconsistent(format!(
                            "shard {k}/{count}: member `{name}` of {path} has no time_ms (a non-negative number of milliseconds)"
                        )));
                    }
                    match theirs.get("status").and_then(Value::as_str) {
                        Some("verified") => verified += 1,
                        Some("failed") => failed += 1,
                        Some("timeout") => timeout += 1,
                        Some("internal-error") => internal += 1,
                        other => {
                            return Err(MergeError::Inconsistent(format!(
                                "shard {k}/{count}: member `{name}` of {path} has status {}, not verified, failed, timeout or internal-error",
                                other.map_or("none".to_string(), |s| format!("`{s}`"))
                            )));
                        }
                    }
                    if let Err(why) = check_member(theirs) {
                        return Err(MergeError::Inconsistent(format!(
                            "shard {k}/{count}: member `{name}` of {path}: {why}"
                        )));
                    }
                    members.push(theirs.clone());
                }
                for (k, f) in shard_files.iter().enumerate() {
                    let n = f.get(path).and_then(|f| f.get("members")).and_then(Value::as_array);
                    if n.map_or(0, Vec::len) != taken[k] {
                        return Err(MergeError::Inconsistent(format!(
                            "shard {}/{count} reports members of {path} the layout does not list",
                            k + 1
                        )));
                    }
                }
                let mut f = Map::new();
                f.insert("path".into(), path.into());
                // A name that is not UTF-8: its exact bytes, as every shard has them.
                if let Some(bytes) =
                    shard_files.iter().find_map(|sf| sf.get(path).and_then(|x| x.get("path_bytes")))
                {
                    f.insert("path_bytes".into(), bytes.clone());
                }
                f.insert("status".into(), "ok".into());
                f.insert("diagnostics".into(), Value::Array(vec![]));
                f.insert("members".into(), Value::Array(members));
                Value::Object(f)
            }
            Some(Value::Null) => {
                let k = file_shard(path, count);
                let f = shard_files[k - 1].get(path).cloned().ok_or_else(|| {
                    format!("shard {k}/{count} does not report the input errors of {path}")
                })?;
                check_input_error_file(&f)
                    .map_err(|why| format!("shard {k}/{count}: file {path}: {why}"))?;
                let diags = f.get("diagnostics").and_then(Value::as_array).cloned();
                for d in diags.unwrap_or_default() {
                    if d.get("id").and_then(Value::as_str) == Some("internal.error") {
                        internal += 1;
                    } else {
                        input_errors += 1;
                    }
                }
                f
            }
            _ => return Err(format!("malformed layout entry for {path}").into()),
        };
        files.push(file);
    }
    let mut time: f64 = 0.0;
    for (k, v) in shards.iter().enumerate() {
        match v.get("summary").and_then(|s| s.get("time_ms")) {
            Some(t) if is_time(t) => time = time.max(t.as_f64().unwrap_or(0.0)),
            _ => {
                return Err(MergeError::Inconsistent(format!(
                    "shard {}/{count}: the summary has no time_ms (a non-negative number of milliseconds)",
                    k + 1
                )));
            }
        }
    }
    let mut summary = Map::new();
    summary.insert("verified".into(), verified.into());
    summary.insert("failed".into(), failed.into());
    summary.insert("timeout".into(), timeout.into());
    summary.insert("input_errors".into(), input_errors.into());
    summary.insert(
        "time_ms".into(),
        serde_json::Number::from_f64(time).map_or(Value::Null, Value::Number),
    );
    if internal > 0 {
        summary.insert("internal_errors".into(), internal.into());
    }
    let mut doc = Map::new();
    doc.insert("version".into(), 1.into());
    doc.insert("files".into(), Value::Array(files));
    doc.insert("summary".into(), Value::Object(summary));
    let code = if internal > 0 {
        3
    } else if input_errors > 0 {
        2
    } else if failed + timeout > 0 {
        1
    } else {
        0
    };
    let text =
        serde_json::to_string_pretty(&Ordered(&Value::Object(doc))).map_err(MergeError::Write)?;
    Ok((text, code))
}

/// A member as `report::json` writes it: a known kind, and errors that agree with its
/// status (none when verified, at least one otherwise), each with an id, a reason, a
/// message and a position (line and column from 1).
fn check_member(m: &Value) -> Result<(), String> {
    let kind = m.get("kind").and_then(Value::as_str);
    if !matches!(kind, Some("method" | "constructor" | "pure" | "predicate")) {
        return Err("its kind is not method, constructor, pure or predicate".into());
    }
    let errors = m.get("errors").and_then(Value::as_array).ok_or("it has no `errors` list")?;
    let verified = m.get("status").and_then(Value::as_str) == Some("verified");
    if verified != errors.is_empty() {
        return Err(if verified {
            "it is verified but has errors".into()
        } else {
            "it is not verified but has no error".into()
        });
    }
    for e in errors {
        let text = |k: &str| e.get(k).and_then(Value::as_str).is_some();
        let position = |k: &str| e.get(k).and_then(Value::as_u64).is_some_and(|n| n >= 1);
        if !(text("id")
            && text("reason")
            && text("message")
            && position("line")
            && position("column"))
        {
            return Err("an error lacks its id, reason, message, line or column".into());
        }
    }
    Ok(())
}

/// A file with input errors as `report::json` writes it: status `input-error` (or
/// `internal-error`), no members, and at least one diagnostic, each with an id, a
/// message and a position (line and column from 1, or both `null`).
fn check_input_error_file(f: &Value) -> Result<(), String> {
    let status = f.get("status").and_then(Value::as_str);
    if !matches!(status, Some("input-error" | "internal-error")) {
        return Err("its status is not input-error or internal-error".into());
    }
    if f.get("members").and_then(Value::as_array).is_none_or(|m| !m.is_empty()) {
        return Err("a file with input errors has members".into());
    }
    let diags = f.get("diagnostics").and_then(Value::as_array).ok_or("it has no diagnostics")?;
    if diags.is_empty() {
        return Err("it has no diagnostics".into());
    }
    for d in diags {
        let text = |k: &str| d.get(k).and_then(Value::as_str).is_some();
        let position = match (d.get("line"), d.get("column")) {
            (Some(Value::Null), Some(Value::Null)) => true,
            (Some(l), Some(c)) => {
                l.as_u64().is_some_and(|n| n >= 1) && c.as_u64().is_some_and(|n| n >= 1)
            }
            _ => false,
        };
        if !(text("id") && text("message") && position) {
            return Err("a diagnostic lacks its id, message, line or column".into());
        }
    }
    Ok(())
}

/// A time in milliseconds as the documents write it: a finite number, not negative.
fn is_time(v: &Value) -> bool {
    v.as_f64().is_some_and(|t| t.is_finite() && t >= 0.0)
}

/// The keys of the documents in the order `report::json` writes them (one order that
/// fits every object of the schema); unknown keys follow, sorted.
const ORDER: &[&str] = &[
    "version",
    "files",
    "path",
    "path_bytes",
    "name",
    "kind",
    "status",
    "id",
    "reason",
    "message",
    "what",
    "line",
    "column",
    "store",
    "heap",
    "path_condition",
    "trace",
    "counterexample",
    "fix",
    "edits",
    "end_line",
    "end_column",
    "text",
    "replay",
    "replay_inputs",
    "replay_outcome",
    "saved",
    "unsaved",
    "diagnostics",
    "members",
    "verified",
    "started",
    "completed",
    "failed",
    "paths",
    "queries",
    "pushes",
    "branches",
    "pruned",
    "timeout",
    "merged",
    "ledger",
    "chunks_max",
    "z3_ms",
    "total_ms",
    "input_errors",
    "time_ms",
    "cached",
    "errors",
    "warnings",
    "stats",
    "internal_errors",
    "summary",
];

/// A JSON value written with its objects' keys in [`ORDER`].
struct Ordered<'a>(&'a Value);

impl serde::Serialize for Ordered<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Array(xs) => {
                let mut seq = s.serialize_seq(Some(xs.len()))?;
                for x in xs {
                    seq.serialize_element(&Ordered(x))?;
                }
                seq.end()
            }
            Value::Object(m) => {
                let rank = |k: &str| ORDER.iter().position(|o| *o == k).unwrap_or(ORDER.len());
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
                let mut map = s.serialize_map(Some(keys.len()))?;
                for k in keys {
                    map.serialize_entry(k, &Ordered(&m[k]))?;
                }
                map.end()
            }
            other => other.serialize(s),
        }
    }
}
