//! The editor set-ups in `editors/`: the VS Code extension's manifest and TextMate
//! grammar (valid JSON, every file it names present, every keyword of the lexer
//! highlighted, dependencies locked), Neovim's syntax file (the highlight groups a
//! headless Neovim gives a sample), and the `.vsix` that `vsce` packages (one bundled
//! script that loads on its own; installing and packaging leave no untracked file). The checks that need a tool (nvim, vsce) are skipped with a loud note when it
//! is missing, and fail instead under `CI=true` (`.ci/run` installs both).

mod skip;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn vscode() -> PathBuf {
    root().join("editors/vscode")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

use skip::skipped;

/// The keywords of the lexer (`"word" => Tok::...` in its keyword table).
fn keywords() -> Vec<String> {
    let lexer = std::fs::read_to_string(root().join("src/syntax/lexer.rs")).unwrap();
    let words: Vec<String> = lexer
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix('"')?;
            let (word, tail) = rest.split_once('"')?;
            let is_word = !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase());
            (is_word && tail.trim_start().starts_with("=> Tok::")).then(|| word.to_string())
        })
        .collect();
    assert!(words.len() > 30, "the lexer's keyword table was not found: {words:?}");
    words
}

/// The words of every `\b(a|b|c)\b` alternation in a grammar's `match` patterns.
fn grammar_words(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(p)) = m.get("match")
                && let Some(inner) = p.strip_prefix("\\b(").and_then(|p| p.strip_suffix(")\\b"))
            {
                out.extend(inner.split('|').map(str::to_string));
            }
            m.values().for_each(|x| grammar_words(x, out));
        }
        Value::Array(xs) => xs.iter().for_each(|x| grammar_words(x, out)),
        _ => {}
    }
}

#[test]
fn the_vscode_manifest_and_grammar_are_complete() {
    let manifest = read_json(&vscode().join("package.json"));
    // The source tree has no public address: no invented `repository` URL.
    assert!(manifest.get("repository").is_none(), "an invented repository: {manifest}");
    assert_eq!(manifest["license"], "MIT OR Apache-2.0");
    assert!(manifest["engines"]["vscode"].is_string());
    assert!(vscode().join("LICENSE").exists() && vscode().join("README.md").exists());
    let language = &manifest["contributes"]["languages"][0];
    assert_eq!(language["id"], "jv");
    assert_eq!(language["extensions"][0], ".jv");
    let config = read_json(&vscode().join(language["configuration"].as_str().unwrap()));
    assert_eq!(config["comments"]["lineComment"], "//");
    assert_eq!(config["comments"]["blockComment"], serde_json::json!(["/*", "*/"]));
    assert_eq!(config["brackets"].as_array().unwrap().len(), 3);
    let contributed = &manifest["contributes"]["grammars"][0];
    assert_eq!(contributed["language"], "jv");
    let grammar = read_json(&vscode().join(contributed["path"].as_str().unwrap()));
    assert_eq!(grammar["scopeName"], contributed["scopeName"]);
    assert_eq!(grammar["scopeName"], "source.jv");
    // Every keyword, and the permission amounts and `perm`, are coloured.
    let mut words = vec![];
    grammar_words(&grammar, &mut words);
    let mut missing: Vec<String> = keywords().into_iter().filter(|k| !words.contains(k)).collect();
    missing.extend(
        ["perm", "write", "none", "final"]
            .iter()
            .map(|s| s.to_string())
            .filter(|k| !words.contains(k)),
    );
    assert!(missing.is_empty(), "not in the grammar: {missing:?}");
    // Comments and numbers.
    let text = serde_json::to_string(&grammar).unwrap();
    for scope in ["comment.line.double-slash.jv", "comment.block.jv", "constant.numeric"] {
        assert!(text.contains(scope), "{scope}");
    }
    // Locked dependencies, ignored installs and packages.
    let lock = read_json(&vscode().join("package-lock.json"));
    for deps in ["dependencies", "devDependencies"] {
        assert_eq!(lock["packages"][""][deps], manifest[deps], "{deps} not locked");
    }
    let ignore = std::fs::read_to_string(vscode().join(".gitignore")).unwrap();
    for generated in ["node_modules/", "dist/", "*.vsix"] {
        assert!(ignore.lines().any(|l| l == generated), "{generated} not ignored");
    }
}

#[test]
fn neovim_highlights_jv_files() {
    let nvim = root().join("editors/nvim");
    let syntax = std::fs::read_to_string(nvim.join("syntax/jv.vim")).unwrap();
    let missing: Vec<String> =
        keywords().into_iter().filter(|k| !syntax.split_whitespace().any(|w| w == k)).collect();
    assert!(missing.is_empty(), "not in syntax/jv.vim: {missing:?}");
    if !Command::new("nvim").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return skipped("nvim is not installed: Neovim's highlighting was not checked");
    }
    let d = std::env::temp_dir().join(format!("idf-editors-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("sample.jv");
    std::fs::write(
        &file,
        "// expect: assert.failed\nclass A { int f; /* note */\n  void m() requires acc(f); ensures acc(f) && f == old(f) + 1; { f = f + 1; }\n}\n",
    )
    .unwrap();
    let out = d.join("groups.txt");
    // (line, column) -> the syntax group there.
    let probes = [
        (1, 4, "jvAnnotation"),
        (1, 1, "jvLineComment"),
        (2, 1, "jvStructure"),
        (2, 11, "jvType"),
        (2, 20, "jvBlockComment"),
        (3, 3, "jvType"),
        (3, 12, "jvContract"),
        (3, 21, "jvSpec"),
        (3, 29, "jvContract"),
        (3, 52, "jvSpec"),
        (3, 61, "jvNumber"),
    ];
    let calls: Vec<String> =
        probes.iter().map(|(l, c, _)| format!("synIDattr(synID({l},{c},1),'name')")).collect();
    let script =
        format!("call writefile([&filetype] + [{}], '{}') | qa!", calls.join(","), out.display());
    let status = Command::new("nvim")
        .args(["--headless", "-n", "-i", "NONE", "-u", "NONE", "--cmd"])
        .arg(format!("set rtp^={}", nvim.display()))
        .args(["--cmd", "filetype on", "--cmd", "syntax on"])
        .arg(&file)
        .args(["-c", &script])
        .stdin(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let got = std::fs::read_to_string(&out).unwrap();
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(got[0], "jv", "ftdetect/jv.vim did not set the file type");
    for (i, (l, c, want)) in probes.iter().enumerate() {
        assert_eq!(got[i + 1], *want, "line {l}, column {c}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Node: load the bundle given with a stub of the `vscode` module.
const LOADER: &str = r#"
const Module = require("module");
const load = Module._load;
const stub = new Proxy(function () {}, {
  get: (t, k) => (k === "__esModule" || typeof k === "symbol" ? undefined : stub),
  apply: () => stub,
  construct: () => stub,
});
Module._load = function (request, ...rest) {
  return request === "vscode" ? stub : load.call(this, request, ...rest);
};
const ext = require(process.argv[2]);
if (typeof ext.activate !== "function" || typeof ext.deactivate !== "function") process.exit(1);
console.log("loaded");
"#;

#[test]
fn the_vsix_packages() {
    let vsce = root().join(".ci/node_modules-dir/node_modules/.bin/vsce");
    if !vsce.exists() {
        return skipped("@vscode/vsce is not installed: the .vsix was not packaged");
    }
    if !vscode().join("node_modules").is_dir() {
        return skipped("editors/vscode has no node_modules (npm ci): the .vsix was not packaged");
    }
    let d = std::env::temp_dir().join(format!("idf-vsix-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let vsix = d.join("idf-verify.vsix");
    let out = Command::new(&vsce)
        .current_dir(vscode())
        .args(["package", "--no-dependencies", "--allow-missing-repository"])
        .arg("--out")
        .arg(&vsix)
        .output()
        .unwrap();
    let log =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "vsce package failed: {log}");
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("WARNING")).collect();
    assert!(warnings.is_empty(), "{log}");
    // A zip's names are plain text in its central directory.
    let bytes = std::fs::read(&vsix).unwrap();
    let has = |name: &str| bytes.windows(name.len()).any(|w| w == name.as_bytes());
    for name in [
        "extension/package.json",
        "extension/dist/extension.js",
        "extension/syntaxes/jv.tmLanguage.json",
        "extension/language-configuration.json",
    ] {
        assert!(has(name), "{name} is not in the .vsix");
    }
    assert!(!has("extension/node_modules/"), "dependencies are bundled, not shipped");
    // The bundle loads on its own (every dependency inside; `vscode` is the editor's,
    // stubbed here) and exports the extension's entry points.
    let alone = d.join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::copy(vscode().join("dist/extension.js"), alone.join("extension.js")).unwrap();
    let loader = d.join("load.js");
    std::fs::write(&loader, LOADER).unwrap();
    let out = Command::new("node").arg(&loader).arg(alone.join("extension.js")).output().unwrap();
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "loaded",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Installing and packaging left no file git would see.
    let git = Command::new("git")
        .current_dir(root())
        .args(["status", "--porcelain", "--untracked-files=all", "--", "editors/vscode"])
        .output();
    match git {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let untracked: Vec<&str> = text.lines().filter(|l| l.starts_with("??")).collect();
            assert!(untracked.is_empty(), "untracked files: {untracked:?}");
        }
        _ => eprintln!("NOTE: not a git checkout: untracked files were not looked for"),
    }
    let _ = std::fs::remove_dir_all(&d);
}
