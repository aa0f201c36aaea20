//! SARIF 2.1.0 output (`--format sarif`): one run whose tool lists a rule per error id of
//! LANGUAGE.md section 8 (plus `vacuous`), one result per verification error, warning
//! and input error, and the tool's own trouble (internal errors, an interrupted batch) as
//! `toolExecutionNotifications`.
//!
//! Architecture invariant: this module owns the SARIF shape and the result fingerprints
//! and nothing else. It reads the pipeline's [`Run`] like `json` and `human` do (same
//! spans, same 1-based lines; columns are Unicode code points, said by `columnKind`),
//! decides no verdict, and its exit status is the other formats' (`super::exit_code`).
//! The document is built as a `serde_json::Value`: its shape is checked against the
//! official schema by `tests/sarif.rs`, not by the compiler.
//!
//! Choices, for consumers such as GitHub code scanning:
//! - a `verification.timeout` is a result of level `warning` (the member is not verified
//!   and the run exits 1, but nothing was found wrong in the code); a failed check, an
//!   input error, `error`; a `vacuous` warning (`--smoke`), `warning`;
//! - a path given relative stays a relative URI reference against the base id
//!   `%SRCROOT%`, which `originalUriBaseIds` maps to the working directory; an absolute
//!   path becomes a `file://` URI;
//! - `partialFingerprints["idfVerify/v1"]` hashes the rule id, the reason, the member
//!   name, the whitespace-normalised text of the failing line and of the failing
//!   sub-expression, plus an occurrence count among equal hashes of one file: it does
//!   not move when lines are inserted above, and holds no time.

use super::{Lines, exit_code, summarize};
use crate::pipeline::FileStatus;
use crate::pipeline::MemberOutcome;
use crate::pipeline::Run;
use crate::syntax::ast::Span;
use crate::verify::{MemberResult, VerificationError};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

/// The schema URI the document names (OASIS errata 01).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of our fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "idfVerify/v1";

/// The base id of relative URIs.
const SRCROOT: &str = "%SRCROOT%";

/// One rule: (id, short description, help text, default level).
pub struct Rule {
    pub id: &'static str,
    pub short: &'static str,
    pub help: &'static str,
    pub level: &'static str,
}

const fn rule(
    id: &'static str,
    short: &'static str,
    help: &'static str,
    level: &'static str,
) -> Rule {
    Rule { id, short, help, level }
}

/// Every id `idf-verify` reports (LANGUAGE.md section 8, and `vacuous` of `--smoke`), in
/// a fixed order: a result's `ruleIndex` is its position here.
pub const RULES: &[Rule] = &[
    rule(
        "assert.failed",
        "An assert statement may fail.",
        "Reported at the failing conjunct of an `assert`. Every failure while consuming the assertion (a false conjunct, a missing permission, an undefined sub-expression) carries this id; the reason says which.",
        "error",
    ),
    rule(
        "postcondition.violated",
        "A postcondition may not hold.",
        "Reported at the failing conjunct of the `ensures` clause, on some path through the body.",
        "error",
    ),
    rule(
        "call.precondition",
        "A callee's precondition may not hold at a call.",
        "Reported at the call (also `new C(..)` and `use`); a related location names the callee's failing precondition conjunct.",
        "error",
    ),
    rule(
        "insufficient.permission",
        "A field or array access lacks permission.",
        "Reported at the field read or write (`e.f`, `a[i]`) for which the current heap holds no permission (`acc(e.f)` or `acc(a[*])`).",
        "error",
    ),
    rule(
        "receiver.null",
        "A receiver may be null.",
        "Reported at a call or access whose receiver may be null.",
        "error",
    ),
    rule(
        "close.failed",
        "An explicit close may fail.",
        "Reported at an explicit `close` whose predicate body does not hold.",
        "error",
    ),
    rule(
        "open.failed",
        "An explicit open has no predicate instance.",
        "Reported at an explicit `open` or `opening` when the heap holds no instance of the predicate.",
        "error",
    ),
    rule(
        "invariant.not.established",
        "A loop invariant may not hold on entry.",
        "Reported at the failing conjunct of a loop `invariant`, when consumed before the loop.",
        "error",
    ),
    rule(
        "invariant.not.preserved",
        "A loop invariant may not be preserved.",
        "Reported at the failing conjunct of a loop `invariant`, when consumed after the body.",
        "error",
    ),
    rule(
        "join.failed",
        "A join assertion may not hold.",
        "Reported at the failing conjunct of a `join`.",
        "error",
    ),
    rule(
        "not.wellformed",
        "A contract, predicate or pure body is not well-defined.",
        "Reported at the sub-expression of a contract, predicate body or pure body that is not framed (no permission granted by an earlier conjunct) or not defined.",
        "error",
    ),
    rule(
        "termination.unproven",
        "A pure call may not terminate.",
        "Reported at a pure call in a pure body that fails the termination check: the callee is not declared earlier, consuming its precondition leaves no chunk, and the call is not inside an `opening` that closed nothing.",
        "error",
    ),
    rule(
        "override.unsound",
        "A class member does not refine the interface's contract.",
        "Reported at a class member whose contract does not refine the interface member it implements; a related location names the failing conjunct.",
        "error",
    ),
    rule(
        "division.by.zero",
        "A divisor may be zero.",
        "Reported at the `/` or `%` whose divisor may be zero.",
        "error",
    ),
    rule(
        "index.out.of.bounds",
        "An array index may be out of bounds.",
        "Reported at the `a[i]` whose index may lie outside `0 <= i < a.length`, or at `new T[n]` with a possibly negative `n`.",
        "error",
    ),
    rule(
        "verification.timeout",
        "The solver gave up on a member.",
        "Reported at the member when the solver gave up or the member's time budget (`--timeout`, `--deadline`) ran out. The member is not verified (the run exits 1), but nothing was shown wrong.",
        "warning",
    ),
    rule(
        "vacuous",
        "A verified member's end (or an assert or return) is unreachable.",
        "With `--smoke`: no path of a verified member reaches its end, or one of its `assert`s or `return`s, so it may be verified vacuously (a contradictory precondition, say).",
        "warning",
    ),
    rule(
        "no.trigger",
        "A value quantifier has no trigger.",
        "LANGUAGE.md section 13: no trigger was written or could be inferred, so where the quantifier is assumed nothing instantiates it. Name its bound variables in an array read, a sequence index or a pure-method call, or write a trigger.",
        "warning",
    ),
    rule(
        "parse.error",
        "The file does not parse.",
        "An input error before verification: the text is not a `.jv` program. Nothing in the file is verified.",
        "error",
    ),
    rule(
        "type.error",
        "The program is ill-typed or names something unknown.",
        "An input error before verification: name resolution or type checking failed. Nothing in the file is verified.",
        "error",
    ),
    rule(
        "io.error",
        "The file cannot be read.",
        "An input error before verification: the file is missing, unreadable, not a regular file, or not UTF-8.",
        "error",
    ),
];

/// What the document needs beyond the run.
#[derive(Clone, Debug, Default)]
pub struct SarifOptions {
    /// The working directory, the base of relative paths (`originalUriBaseIds`).
    pub cwd: Option<std::path::PathBuf>,
}

fn rule_index(id: &str) -> Option<usize> {
    RULES.iter().position(|r| r.id == id)
}

/// FNV-1a (64 bit): stable across runs, platforms and Rust versions (unlike `std`'s
/// `DefaultHasher`).
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0xff;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        for b in p.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// Runs of whitespace as one space, trimmed.
fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text of the line holding `offset` (without its line end).
fn line_text(text: &str, offset: usize) -> &str {
    let offset = clamp(text, offset);
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    &text[start..end]
}

/// `offset` within `text`, moved back to a character boundary.
fn clamp(text: &str, offset: usize) -> usize {
    let mut o = offset.min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o
}

fn span_text(text: &str, span: Span) -> &str {
    let (a, b) = (clamp(text, span.start as usize), clamp(text, span.end as usize));
    if a <= b { &text[a..b] } else { "" }
}

/// The fingerprint hash of a result: rule id, reason, member, and the normalised texts
/// of the failing line and sub-expression (never a line number or a time).
pub fn fingerprint_hash(id: &str, reason: &str, member: &str, text: &str, span: Span) -> u64 {
    let line = normalize(line_text(text, span.start as usize));
    let sub = normalize(span_text(text, span));
    fnv1a(&[id, reason, member, &line, &sub])
}

/// A path as a URI reference: (uri, base id). Relative paths stay relative (forward
/// slashes, `./` dropped) against [`SRCROOT`]; absolute ones become `file://` URIs.
pub fn path_uri(path: &str) -> (String, Option<&'static str>) {
    path_bytes_uri(path.as_bytes())
}

/// [`path_uri`] of a name's exact bytes (a name that is not UTF-8 is percent-encoded
/// byte for byte, never from an escaped or lossy string).
pub fn path_bytes_uri(path: &[u8]) -> (String, Option<&'static str>) {
    // `\` separates folders only on Windows; elsewhere it is a character of a name
    // (percent-encoded like any other).
    let slashed: Vec<u8> = if std::path::MAIN_SEPARATOR == '\\' {
        path.iter().map(|&b| if b == b'\\' { b'/' } else { b }).collect()
    } else {
        path.to_vec()
    };
    if Path::new(&*String::from_utf8_lossy(path)).is_absolute() {
        let mut s = slashed;
        if !s.starts_with(b"/") {
            s.insert(0, b'/');
        }
        (format!("file://{}", percent_encode(&s)), None)
    } else {
        let mut s = slashed.as_slice();
        while let Some(rest) = s.strip_prefix(b"./") {
            s = rest;
            while let Some(r) = s.strip_prefix(b"/") {
                s = r;
            }
        }
        (percent_encode(s), Some(SRCROOT))
    }
}

/// Percent-encode everything but unreserved characters and `/` (so a `:` in a relative
/// path cannot read as a scheme).
fn percent_encode(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The working directory as a `file://` URI ending in `/`.
fn dir_uri(dir: &Path) -> String {
    let (uri, _) = path_bytes_uri(&os_bytes(dir));
    let uri = if uri.starts_with("file://") { uri } else { format!("file:///{uri}") };
    if uri.ends_with('/') { uri } else { format!("{uri}/") }
}

/// A path's bytes (on Unix, exactly).
fn os_bytes(p: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().into_owned().into_bytes()
    }
}

/// Builds the results of one file.
struct FileCtx<'a> {
    text: &'a str,
    lines: Lines<'a>,
    artifact: Value,
    /// Occurrences of each fingerprint hash so far in this file.
    seen: HashMap<u64, usize>,
}

impl FileCtx<'_> {
    fn region(&self, span: Span) -> Value {
        let (sl, sc) = self.lines.line_col(span.start as usize);
        let (el, ec) = self.lines.line_col(span.end.max(span.start) as usize);
        let mut r = json!({"startLine": sl, "startColumn": sc, "endLine": el, "endColumn": ec});
        let snippet = span_text(self.text, span);
        if !snippet.is_empty() && snippet.len() <= 400 {
            r["snippet"] = json!({"text": snippet});
        }
        r
    }

    fn location(&self, span: Option<Span>) -> Value {
        let mut phys = json!({"artifactLocation": self.artifact.clone()});
        if let Some(span) = span {
            phys["region"] = self.region(span);
        }
        json!({"physicalLocation": phys})
    }

    fn related(&self, notes: &[(Span, String)]) -> Vec<Value> {
        notes
            .iter()
            .enumerate()
            .map(|(i, (span, message))| {
                let mut l = self.location(Some(*span));
                l["id"] = json!(i);
                if !message.is_empty() {
                    l["message"] = json!({"text": message});
                }
                l
            })
            .collect()
    }

    fn fingerprint(&mut self, id: &str, reason: &str, member: &str, span: Option<Span>) -> Value {
        let h = match span {
            Some(span) => fingerprint_hash(id, reason, member, self.text, span),
            None => fnv1a(&[id, reason, member]),
        };
        let n = self.seen.entry(h).or_insert(0);
        *n += 1;
        json!({ FINGERPRINT_KEY: format!("{h:016x}:{n}") })
    }

    fn result(&mut self, e: &VerificationError, r: &MemberResult, warning: bool) -> Value {
        let level = if warning || e.id == "verification.timeout" { "warning" } else { "error" };
        let mut loc = self.location(Some(e.span));
        let short = r.name.split_once('.').map_or(r.name.as_str(), |(_, m)| m);
        loc["logicalLocations"] =
            json!([{"name": short, "fullyQualifiedName": r.name, "kind": "member"}]);
        let mut res = json!({
            "ruleId": e.id,
            "level": level,
            "message": {"text": e.message},
            "locations": [loc],
            "partialFingerprints": self.fingerprint(e.id, e.reason, &r.name, Some(e.span)),
        });
        if let Some(i) = rule_index(e.id) {
            res["ruleIndex"] = json!(i);
        }
        let related = self.related(&e.notes);
        if !related.is_empty() {
            res["relatedLocations"] = json!(related);
        }
        if let Some(trace) = &e.trace {
            let steps: Vec<Value> = trace
                .iter()
                .map(|t| {
                    let mut l = self.location(Some(t.span));
                    l["message"] = json!({"text": t.what});
                    json!({"location": l})
                })
                .collect();
            if !steps.is_empty() {
                res["codeFlows"] = json!([{"threadFlows": [{"locations": steps}]}]);
            }
        }
        let mut props = json!({"member": r.name, "reason": e.reason});
        if let Some(cex) = &e.counterexample {
            props["counterexample"] = json!(cex);
        }
        if let Some(rp) = &e.replay {
            props["replay"] = json!(if rp.confirmed { "confirmed" } else { "not-reproduced" });
            props["replayInputs"] = json!(rp.inputs);
        }
        res["properties"] = props;
        res
    }

    fn input_result(&mut self, e: &crate::syntax::InputError) -> Value {
        let mut loc = self.location(e.span);
        if e.span.is_none() {
            // A file that could not be read has no position: its start stands for the
            // whole file (code scanning places every result at a region).
            loc["physicalLocation"]["region"] =
                json!({"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1});
        }
        let mut res = json!({
            "ruleId": e.id,
            "level": "error",
            "message": {"text": e.message},
            "locations": [loc],
            "partialFingerprints": self.fingerprint(e.id, "", "", e.span),
        });
        if let Some(i) = rule_index(e.id) {
            res["ruleIndex"] = json!(i);
        }
        let related = self.related(&e.notes);
        if !related.is_empty() {
            res["relatedLocations"] = json!(related);
        }
        res
    }
}

fn notification(level: &str, id: &str, message: &str, location: Option<Value>) -> Value {
    let mut n = json!({
        "level": level,
        "message": {"text": message},
        "descriptor": {"id": id},
    });
    if let Some(l) = location {
        n["locations"] = json!([l]);
    }
    n
}

/// The whole run as one SARIF log.
pub fn document(run: &Run, opts: &SarifOptions) -> Value {
    let mut artifacts = Vec::new();
    let mut results = Vec::new();
    let mut notes = Vec::new();
    for (index, f) in run.files.iter().enumerate() {
        let (uri, base) = path_bytes_uri(f.source.path_bytes());
        let mut artifact = json!({"uri": uri});
        if let Some(base) = base {
            artifact["uriBaseId"] = json!(base);
        }
        artifacts.push(json!({"location": artifact.clone(), "roles": ["analysisTarget"]}));
        artifact["index"] = json!(index);
        let text = f.source.text.as_str();
        let mut ctx = FileCtx { text, lines: Lines::new(text), artifact, seen: HashMap::new() };
        match &f.status {
            FileStatus::Input(errors) => {
                for e in errors {
                    if e.id == "internal.error" {
                        let loc = ctx.location(e.span);
                        notes.push(notification("error", "internal.error", &e.message, Some(loc)));
                    } else {
                        results.push(ctx.input_result(e));
                    }
                }
            }
            FileStatus::Checked(members) => {
                for m in members {
                    match m {
                        MemberOutcome::Done(r) => {
                            for e in &r.errors {
                                results.push(ctx.result(e, r, false));
                            }
                            for e in &r.warnings {
                                results.push(ctx.result(e, r, true));
                            }
                        }
                        MemberOutcome::Internal { name, span, message, .. } => {
                            let loc = ctx.location(Some(*span));
                            let text = format!("internal error while verifying {name}: {message}");
                            notes.push(notification("error", "internal.error", &text, Some(loc)));
                        }
                    }
                }
            }
        }
    }
    let s = summarize(run);
    if run.interrupted {
        notes.push(notification(
            "warning",
            "interrupted",
            "interrupted: members that had not finished are not reported",
            None,
        ));
    }
    let code = if run.interrupted { crate::pipeline::interrupted_status() } else { exit_code(run) };
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": rule_name(r.id),
                "shortDescription": {"text": r.short},
                "fullDescription": {"text": r.help},
                "help": {"text": r.help},
                "defaultConfiguration": {"level": r.level},
            })
        })
        .collect();
    let mut run_v = json!({
        "tool": {"driver": {
            "name": "idf-verify",
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "rules": rules,
            // Every descriptor with a full description and help (GitHub's rule set asks
            // for both, as for rules).
            "notifications": [
                {"id": "internal.error",
                 "shortDescription": {"text": "The verifier itself failed."},
                 "fullDescription": {"text": "The verifier failed on a member or a file (a bug of idf-verify, never a verdict): that member or file has no result."},
                 "help": {"text": "Report it with the file that caused it; the rest of the run's results stand."},
                 "defaultConfiguration": {"level": "error"}},
                {"id": "interrupted",
                 "shortDescription": {"text": "The run was interrupted (Ctrl-C, SIGTERM or SIGHUP)."},
                 "fullDescription": {"text": "The run was stopped by Ctrl-C, SIGTERM or SIGHUP: the members that had not finished are not reported."},
                 "help": {"text": "Run again to completion for every member's result."},
                 "defaultConfiguration": {"level": "warning"}},
            ],
        }},
        "invocations": [{
            "executionSuccessful": s.internal == 0 && !run.interrupted,
            "exitCode": code,
            "toolExecutionNotifications": notes,
        }],
        "artifacts": artifacts,
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {
            "summary": {
                "verified": s.verified, "failed": s.failed, "timeout": s.timeout,
                "inputErrors": s.input_errors, "internalErrors": s.internal,
            },
        },
    });
    if let Some(cwd) = &opts.cwd {
        run_v["originalUriBaseIds"] = json!({ SRCROOT: {"uri": dir_uri(cwd)} });
    }
    json!({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run_v]})
}

/// `assert.failed` -> `AssertFailed`: the rule's readable name (never equal to its id,
/// as SARIF asks: `vacuous` is `VacuousVerification`).
fn rule_name(id: &str) -> String {
    if id == "vacuous" {
        return "VacuousVerification".into();
    }
    id.split('.')
        .map(|w| {
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The log as pretty-printed JSON text.
pub fn to_sarif(run: &Run, opts: &SarifOptions) -> String {
    serde_json::to_string_pretty(&document(run, opts))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(path_uri("examples/cell.jv"), ("examples/cell.jv".into(), Some(SRCROOT)));
        assert_eq!(path_uri("./a b.jv"), ("a%20b.jv".into(), Some(SRCROOT)));
        assert_eq!(path_uri("c:d.jv").0, "c%3Ad.jv");
        assert_eq!(path_uri("/tmp/x/é.jv"), ("file:///tmp/x/%C3%A9.jv".into(), None));
        assert_eq!(dir_uri(Path::new("/work/x")), "file:///work/x/");
        #[cfg(unix)]
        assert_eq!(path_uri("a\\b.jv").0, "a%5Cb.jv");
        // A name that is not UTF-8: its bytes, never an escape or U+FFFD.
        assert_eq!(path_bytes_uri(b"./n\xffx.jv"), ("n%FFx.jv".into(), Some(SRCROOT)));
        assert_eq!(path_bytes_uri(b"/t/\x1b[1m.jv").0, "file:///t/%1B%5B1m.jv");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let dir = Path::new(std::ffi::OsStr::from_bytes(b"/w/\xfe"));
            assert_eq!(dir_uri(dir), "file:///w/%FE/");
        }
    }

    #[test]
    fn rule_names() {
        assert_eq!(rule_name("assert.failed"), "AssertFailed");
        assert_eq!(rule_name("vacuous"), "VacuousVerification");
        for r in RULES {
            assert!(!rule_name(r.id).eq_ignore_ascii_case(r.id), "{}", r.id);
        }
    }

    #[test]
    fn fingerprints_ignore_line_numbers_and_indentation() {
        let a = "class A {\n  void m() {\n    assert x  > 0;\n  }\n}\n";
        let b = "\n\nclass A {\n\n  void m() {\n        assert x > 0;\n  }\n}\n";
        let sa = a.find("x  > 0").unwrap();
        let sb = b.find("x > 0").unwrap();
        let ha =
            fingerprint_hash("assert.failed", "assertion.false", "A.m", a, Span::new(sa, sa + 6));
        let hb =
            fingerprint_hash("assert.failed", "assertion.false", "A.m", b, Span::new(sb, sb + 5));
        assert_eq!(ha, hb);
        let hc =
            fingerprint_hash("assert.failed", "assertion.false", "A.n", b, Span::new(sb, sb + 5));
        assert_ne!(ha, hc);
    }

    #[test]
    fn line_text_of_offsets() {
        let t = "ab\ncd\n";
        assert_eq!(line_text(t, 0), "ab");
        assert_eq!(line_text(t, 4), "cd");
        assert_eq!(line_text(t, 6), "");
        assert_eq!(line_text(t, 99), "");
    }
}
