//! Every output path is total, and file names are reported exactly: a stream that cannot
//! be written (a full disk) is exit 3, never a panic (101), whichever subcommand and
//! format wrote to it; a closed pipe is the reader's choice and changes nothing; a name
//! with a backslash, a control character or bytes that are not UTF-8 is shown escaped
//! to a terminal and exactly (with its bytes) in JSON, JSONL and SARIF.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_idf-verify")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("idf-outputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// How a stream is given to the child.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stream {
    /// Read by the test.
    Piped,
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
    /// A pipe whose reader is gone: every write fails with EPIPE.
    Closed,
}

fn stdio(s: Stream) -> Stdio {
    match s {
        Stream::Piped => Stdio::piped(),
        Stream::Full => Stdio::from(std::fs::File::create("/dev/full").unwrap()),
        Stream::Closed => {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            Stdio::from(writer)
        }
    }
}

/// Exit status and stderr (empty unless piped).
fn run(args: &[String], out: Stream, err: Stream) -> (i32, String) {
    let o = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdio(out))
        .stderr(stdio(err))
        .output()
        .unwrap();
    let code = o.status.code().unwrap_or_else(|| panic!("{args:?}: killed by a signal"));
    (code, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[cfg(unix)]
#[test]
fn unwritable_streams_are_exit_3_and_closed_pipes_change_nothing() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let d = scratch("streams");
    let ok = d.join("ok.jv");
    std::fs::write(&ok, "class A { void m() { } }\n").unwrap();
    let bad = d.join("bad.jv");
    std::fs::write(&bad, "class A { void m() { x } }\n").unwrap();
    let failing = d.join("failing.jv");
    std::fs::write(&failing, "class A { void m() { assert 1 == 2; } }\n").unwrap();
    let p = |f: &PathBuf| f.to_str().unwrap().to_string();
    let s = |x: &str| x.to_string();
    // (arguments, whether the run writes on stdout)
    let cases: Vec<(Vec<String>, bool)> = vec![
        (vec![s("--no-cache"), p(&ok)], true),
        (vec![s("--no-cache"), p(&failing)], true),
        (vec![s("--no-cache"), p(&bad)], true),
        (vec![s("--no-cache"), s("--format"), s("json"), p(&failing)], true),
        (vec![s("--no-cache"), s("--format"), s("jsonl"), p(&failing)], true),
        (vec![s("--no-cache"), s("--format"), s("sarif"), p(&bad)], true),
        (vec![s("--no-cache"), s("--expect"), p(&failing)], true),
        (vec![s("--no-cache"), s("--stats"), p(&ok)], true),
        (vec![s("--no-cache"), p(&d.join("missing.jv"))], true),
        (vec![s("--no-cache"), s("--method"), s("Nope.nope"), p(&ok)], false),
        (vec![s("test"), s("--runs"), s("2"), p(&failing)], true),
        (vec![s("test"), s("--runs"), s("2"), p(&bad)], true),
        (vec![s("merge"), p(&ok)], false),
        (vec![s("--help")], true),
        (vec![s("lsp"), s("--help")], true),
        (vec![s("merge"), s("--help")], true),
        (vec![s("--version")], true),
        (vec![s("--bogus")], false),
    ];
    for (args, writes_stdout) in &cases {
        // What the run says when it can say everything.
        let (normal, _) = run(args, Stream::Piped, Stream::Piped);
        assert!((0..=2).contains(&normal), "{args:?}: {normal}");
        for (out, err) in [
            (Stream::Full, Stream::Piped),
            (Stream::Piped, Stream::Full),
            (Stream::Full, Stream::Full),
            (Stream::Closed, Stream::Piped),
            (Stream::Piped, Stream::Closed),
            (Stream::Closed, Stream::Closed),
            (Stream::Full, Stream::Closed),
        ] {
            let (code, text) = run(args, out, err);
            let what = format!("{args:?} stdout {out:?} stderr {err:?}: {code} {text}");
            assert!(!text.contains("panicked"), "{what}");
            assert!(code == normal || code == 3, "{what}");
            if out == Stream::Closed && err != Stream::Full {
                // Nothing was lost that the reader wanted.
                assert_eq!(code, normal, "{what}");
            }
            if out == Stream::Full && err == Stream::Piped && code == 3 {
                // Exit 3 always says why when it can.
                assert!(text.contains("cannot write"), "{what}");
            }
            if out == Stream::Full && err == Stream::Piped && *writes_stdout {
                // Every subcommand that writes on stdout notices the full disk.
                assert_eq!(code, 3, "{what}");
            }
            if err == Stream::Full && !writes_stdout {
                // Its only words were lost.
                assert_eq!(code, 3, "{what}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A file name with an escape sequence, a backslash, and one that is not UTF-8 (with a
/// backslash too).
#[cfg(unix)]
#[test]
fn odd_file_names_are_reported_exactly_in_every_format() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let d = scratch("names");
    let body = "class A { void m() { assert 1 == 2; } }\n";
    let esc = "e\u{1b}[31mred.jv";
    let bidi = "r\u{202e}txt.jv";
    let names: Vec<&[u8]> = vec![esc.as_bytes(), b"a\\b.jv", b"n\\\xffx.jv", bidi.as_bytes()];
    for n in &names {
        std::fs::write(d.join(OsStr::from_bytes(n)), body).unwrap();
    }
    // An unreadable one whose name is quoted in its io.error message.
    let fifo = d.join("f\u{1b}[2J.jv");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    let have_fifo = unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0;
    let go = |args: &[&str]| {
        let o = Command::new(bin())
            .args(["--no-cache", "--color", "never"])
            .args(args)
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
        o.stdout
    };

    // Human output and --expect: nothing raw reaches the terminal; escapes instead.
    for args in [&["."][..], &["--expect", "."][..]] {
        let out = go(args);
        assert!(!out.contains(&0x1b), "{args:?}: {}", String::from_utf8_lossy(&out));
        let out = String::from_utf8(out).expect("human output is UTF-8");
        assert!(out.contains("e\\u{1b}[31mred.jv"), "{out}");
        assert!(out.contains("a\\b.jv"), "{out}");
        // Not UTF-8: the bad byte as \xff, the backslash doubled.
        assert!(out.contains("n\\\\\\xffx.jv"), "{out}");
        // A bidirectional override cannot reorder what follows it on the terminal.
        assert!(!out.contains('\u{202e}') && out.contains("r\\u{202e}txt.jv"), "{out}");
        if have_fifo {
            assert!(out.contains("f\\u{1b}[2J.jv"), "{out}");
        }
    }

    // JSON: a UTF-8 name exactly; otherwise `path_bytes` holds the bytes.
    let doc: serde_json::Value = serde_json::from_slice(&go(&["--format", "json", "."])).unwrap();
    let files = doc["files"].as_array().unwrap();
    let bytes_of = |f: &serde_json::Value| -> Vec<u8> {
        match f.get("path_bytes") {
            Some(b) => b.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u8).collect(),
            None => f["path"].as_str().unwrap().as_bytes().to_vec(),
        }
    };
    for n in &names {
        let want = [b"./".as_slice(), n].concat();
        let f = files.iter().find(|f| bytes_of(f) == want);
        let f = f.unwrap_or_else(|| panic!("{:?} not in {doc}", String::from_utf8_lossy(n)));
        assert_eq!(f.get("path_bytes").is_some(), std::str::from_utf8(n).is_err(), "{f}");
    }
    assert!(files.iter().any(|f| f["path"] == format!("./{esc}")), "{doc}");

    // `--expect` as JSON: the mismatches name their files the same way.
    let doc: serde_json::Value =
        serde_json::from_slice(&go(&["--expect", "--format", "json", "."])).unwrap();
    let listed = doc["expect"]["mismatches"].as_array().unwrap();
    for n in &names {
        let want = [b"./".as_slice(), n].concat();
        assert!(listed.iter().any(|m| bytes_of(m) == want), "{doc}");
    }

    // JSON Lines: every record valid JSON, the same bytes as `file_bytes`.
    let lines = go(&["--format", "jsonl", "."]);
    let records: Vec<serde_json::Value> = String::from_utf8(lines)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let raw: Vec<u8> = [b"./".as_slice(), names[2]].concat();
    assert!(
        records.iter().any(|r| r.get("file_bytes")
            == Some(&serde_json::json!(raw.iter().map(|b| *b as u64).collect::<Vec<_>>()))),
        "{records:?}"
    );

    // SARIF: URIs percent-encoded from the bytes; `\` is a character, not a folder.
    let log: serde_json::Value = serde_json::from_slice(&go(&["--format", "sarif", "."])).unwrap();
    let uris: Vec<&str> = log["runs"][0]["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["location"]["uri"].as_str().unwrap())
        .collect();
    for want in ["e%1B%5B31mred.jv", "a%5Cb.jv", "n%5C%FFx.jv"] {
        assert!(uris.contains(&want), "{want} not in {uris:?}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// The source lines under a diagnostic: control and bidirectional formatting characters
/// replaced by visible ones of the same length, so spans still fit.
#[test]
fn source_lines_show_no_invisible_characters() {
    use idf_verify::report::human::visible;
    use idf_verify::syntax::lexer::is_invisible_control;
    let text = "a\u{0}b\u{1b}[2J\u{9b}c\u{202e}d\u{2066}e\té\n";
    let shown = visible(text);
    assert_eq!(shown.len(), text.len());
    assert_eq!(shown.chars().count(), text.chars().count());
    assert!(
        !shown.chars().any(|c| is_invisible_control(c) && !matches!(c, '\t' | '\n')),
        "{shown:?}"
    );
    assert!(shown.contains("\té\n"));
    // The same characters in a file: one parse error, its line shown harmlessly.
    let d = scratch("invisible");
    let f = d.join("i.jv");
    std::fs::write(&f, "class A { \u{202e} }\n").unwrap();
    let out =
        Command::new(bin()).args(["--no-cache", "--color", "never"]).arg(&f).output().unwrap();
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(!out.contains('\u{202e}'), "{out}");
    assert!(out.contains("unexpected character '\\u{202e}'"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}
