//! The documentation's programs: every fenced code block in `docs/*.md` is a whole
//! ```` ```jv ```` program, checked with `idf-verify --expect` (its `// expect:`
//! comments are its failing lines; every other member must verify). A block fenced
//! any other way is refused: the docs show nothing that no test runs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The fenced blocks of a Markdown text: (line of the opening fence, its info string,
/// the body).
fn blocks(text: &str) -> Vec<(usize, String, String)> {
    let mut out = vec![];
    let mut open: Option<(usize, String, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            match open.take() {
                Some(b) => out.push(b),
                None => open = Some((i + 1, info.trim().to_string(), String::new())),
            }
        } else if let Some((_, _, body)) = open.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

fn docs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_code_block_in_the_docs_is_a_checked_program() {
    let scratch = std::env::temp_dir().join(format!("idf-docs-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut checked = 0;
    for doc in docs() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.file_stem().unwrap().to_string_lossy().into_owned();
        for (line, info, body) in blocks(&text) {
            assert_eq!(
                info,
                "jv",
                "{}:{line}: a code block that is not a ```jv program",
                doc.display()
            );
            let file = scratch.join(format!("{name}_{line}.jv"));
            std::fs::write(&file, &body).unwrap();
            let out = Command::new(env!("CARGO_BIN_EXE_idf-verify"))
                .args(["--no-cache", "--expect"])
                .arg(&file)
                .output()
                .unwrap();
            let report = String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(0), "{}:{line}:\n{report}", doc.display());
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(checked >= 14, "{checked} programs in docs/");
}

#[test]
fn a_block_that_is_not_a_program_is_found() {
    let text = "x\n```jv\nclass A { }\n```\n```\nsketch\n```\n";
    let b = blocks(text);
    assert_eq!(b.len(), 2);
    assert_eq!((b[0].0, b[0].1.as_str(), b[0].2.as_str()), (2, "jv", "class A { }\n"));
    assert_eq!(b[1].1, "");
}
