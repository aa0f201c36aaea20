//! `--expect`: reading `// expect: ID` comments and comparing them with what was reported
//! (LANGUAGE.md section 8). The test harness `tests/programs.rs` uses the same functions.
//!
//! Architecture invariant: an expectation names a line, never a column; the comparison
//! is a multiset comparison per line, so a line expecting one error must get exactly one.

use super::Lines;
use crate::pipeline::FileReport;
use crate::pipeline::FileStatus;
use crate::pipeline::MemberOutcome;
use std::collections::BTreeMap;

/// One `// expect: ID` comment, attributed to the next line holding code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// 1-based line the error is expected on.
    pub line: usize,
    pub id: String,
}

/// One error as reported: input error or verification error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reported {
    /// 1-based line; 0 when the error has no position (an unreadable file).
    pub line: usize,
    pub id: String,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    Missing { line: usize, id: String },
    Unexpected { line: usize, id: String, message: String },
}

impl Mismatch {
    /// `file:line: expected X, got nothing` / `unexpected Y at file:line: message`.
    pub fn render(&self, path: &str) -> String {
        let path = crate::source::escape_controls(path);
        match self {
            Mismatch::Missing { line, id } => format!("{path}:{line}: expected {id}, got nothing"),
            Mismatch::Unexpected { line: 0, id, message } => {
                format!("unexpected {id} in {path}: {message}")
            }
            Mismatch::Unexpected { line, id, message } => {
                format!("unexpected {id} at {path}:{line}: {message}")
            }
        }
    }
}

impl Mismatch {
    /// The mismatch as a JSON object (`--expect --format json`).
    pub fn to_json(&self, path: &str) -> serde_json::Value {
        match self {
            Mismatch::Missing { line, id } => serde_json::json!({
                "path": path, "line": line, "kind": "missing", "id": id,
            }),
            Mismatch::Unexpected { line, id, message } => serde_json::json!({
                "path": path, "line": line, "kind": "unexpected", "id": id, "message": message,
            }),
        }
    }
}

/// Does this line hold code outside comments? Updates whether a `/* */` comment is open.
fn has_code(line: &str, in_block: &mut bool) -> bool {
    let mut rest = line;
    let mut code = false;
    while !rest.is_empty() {
        if *in_block {
            match rest.find("*/") {
                Some(i) => {
                    rest = &rest[i + 2..];
                    *in_block = false;
                }
                None => return code,
            }
        } else {
            let trimmed = rest.trim_start();
            if trimmed.starts_with("//") || trimmed.is_empty() {
                return code;
            }
            if let Some(after) = trimmed.strip_prefix("/*") {
                *in_block = true;
                rest = after;
            } else {
                code = true;
                // Skip to the next comment start, if any.
                match trimmed.find("/") {
                    Some(0) => rest = &trimmed[1..],
                    Some(i) => rest = &trimmed[i..],
                    None => return true,
                }
            }
        }
    }
    code
}

/// All expectations of a source text.
pub fn expectations(text: &str) -> Vec<Expectation> {
    let mut out = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut in_block = false;
    for (i, line) in text.lines().enumerate() {
        let was_in_block = in_block;
        if !was_in_block
            && let Some(rest) = line.trim_start().strip_prefix("//")
            && let Some(ids) = rest.trim_start().strip_prefix("expect:")
        {
            pending.extend(
                ids.split(|c: char| c.is_whitespace() || c == ',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
            continue;
        }
        if has_code(line, &mut in_block) {
            out.extend(pending.drain(..).map(|id| Expectation { line: i + 1, id }));
        }
    }
    // Expectations with no code after them: expected at the end of the file (where an
    // unexpected end of file is reported).
    let end = text.matches('\n').count() + 1;
    out.extend(pending.drain(..).map(|id| Expectation { line: end, id }));
    out
}

/// Everything reported for a file, by line.
pub fn reported(file: &FileReport) -> Vec<Reported> {
    let lines = Lines::new(&file.source.text);
    let at =
        |span: Option<crate::syntax::ast::Span>| span.map_or(0, |s| lines.line(s.start as usize));
    match &file.status {
        FileStatus::Input(errors) => errors
            .iter()
            .map(|e| Reported {
                line: at(e.span),
                id: e.id.to_string(),
                message: e.message.clone(),
            })
            .collect(),
        FileStatus::Checked(members) => members
            .iter()
            .flat_map(|m| match m {
                MemberOutcome::Done(r) => r
                    .errors
                    .iter()
                    .chain(&r.warnings)
                    .map(|e| Reported {
                        line: at(Some(e.span)),
                        id: e.id.to_string(),
                        message: e.message.clone(),
                    })
                    .collect::<Vec<_>>(),
                MemberOutcome::Internal { name, span, message, .. } => vec![Reported {
                    line: at(Some(*span)),
                    id: "internal.error".to_string(),
                    message: format!("{name}: {message}"),
                }],
            })
            .collect(),
    }
}

/// Compare expectations with reports, line by line, as multisets of ids.
pub fn compare(expected: &[Expectation], reported: &[Reported]) -> Vec<Mismatch> {
    let mut want: BTreeMap<(usize, &str), usize> = BTreeMap::new();
    for e in expected {
        *want.entry((e.line, &e.id)).or_default() += 1;
    }
    let mut out = Vec::new();
    for r in reported {
        match want.get_mut(&(r.line, r.id.as_str())) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(Mismatch::Unexpected {
                line: r.line,
                id: r.id.clone(),
                message: r.message.clone(),
            }),
        }
    }
    for ((line, id), n) in want {
        for _ in 0..n {
            out.push(Mismatch::Missing { line, id: id.to_string() });
        }
    }
    out.sort_by_key(|m| match m {
        Mismatch::Missing { line, .. } | Mismatch::Unexpected { line, .. } => *line,
    });
    out
}

/// The expectations of one file that concern what was verified (all of them, unless
/// `--method` selected some members: then those inside the selected members).
pub fn file_expectations(file: &FileReport) -> Vec<Expectation> {
    let mut all = expectations(&file.source.text);
    if let Some(spans) = &file.scope {
        let index = Lines::new(&file.source.text);
        let lines: Vec<(usize, usize)> = spans
            .iter()
            .map(|s| (index.line(s.start as usize), index.line(s.end as usize)))
            .collect();
        all.retain(|e| lines.iter().any(|(a, b)| (*a..=*b).contains(&e.line)));
    }
    all
}

/// The mismatches of one file.
pub fn check_file(file: &FileReport) -> Vec<Mismatch> {
    compare(&file_expectations(file), &reported(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(line: usize, id: &str) -> Expectation {
        Expectation { line, id: id.into() }
    }

    #[test]
    fn attributes_to_next_code_line() {
        let text = "class A {\n  // expect: a.b\n\n  // other\n  /* c */\n  // expect: c.d\n  x; // y\n/* open\n// expect: no\n*/ z\n// expect: e.f";
        assert_eq!(expectations(text), vec![exp(7, "a.b"), exp(7, "c.d"), exp(11, "e.f")]);
    }

    #[test]
    fn multiset_comparison() {
        let rep = |line, id: &str| Reported { line, id: id.into(), message: String::new() };
        assert!(compare(&[exp(3, "x")], &[rep(3, "x")]).is_empty());
        assert_eq!(compare(&[exp(3, "x")], &[rep(3, "x"), rep(3, "x")]).len(), 1);
        assert_eq!(
            compare(&[exp(3, "x")], &[rep(4, "x")]),
            vec![
                Mismatch::Missing { line: 3, id: "x".into() },
                Mismatch::Unexpected { line: 4, id: "x".into(), message: String::new() }
            ]
        );
        assert!(compare(&[exp(3, "x"), exp(3, "y")], &[rep(3, "y"), rep(3, "x")]).is_empty());
    }
}
