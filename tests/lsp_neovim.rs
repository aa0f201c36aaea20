//! `idf-verify lsp` with a real client: Neovim's built-in LSP client, headless. A small
//! Lua config attaches the server to `tests/lsp/failing.jv`, waits for the run to end
//! (the server's `window/logMessage`), and writes what Neovim holds to a file: its
//! diagnostics (code, line), the code lenses' titles and whether a hover on the failing
//! assert shows a symbolic state. Without `nvim` the test fails under `CI=true` (CI
//! installs it: `.ci/run`) and is skipped with a message elsewhere.

mod skip;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The Neovim side (works with Neovim 0.7, Debian 12's, and later).
const CONFIG: &str = r#"
local bin, file, out = os.getenv("IDF_BIN"), os.getenv("IDF_FILE"), os.getenv("IDF_OUT")
local lines = {}
local function finish()
  local f = io.open(out, "w")
  f:write(table.concat(lines, "\n") .. "\n")
  f:close()
  vim.cmd("qa!")
end
vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local done = false
local client = vim.lsp.start_client({
  name = "idf-verify",
  cmd = { bin, "lsp" },
  root_dir = vim.fn.fnamemodify(file, ":h"),
  handlers = {
    -- The server logs the end of each run.
    ["window/logMessage"] = function(_, result)
      if result.message:find(" members: ") or result.message:find(" input error") then
        done = true
      end
    end,
  },
})
if not client then
  table.insert(lines, "error: the client did not start")
  finish()
end
vim.lsp.buf_attach_client(buf, client)
if not vim.wait(120000, function() return done end, 20) then
  table.insert(lines, "error: the run did not end")
  finish()
end
-- The diagnostics were sent before that message; let Neovim's handlers catch up.
vim.wait(5000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
for _, d in ipairs(vim.diagnostic.get(buf)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  table.insert(lines, string.format("diagnostic %s %d", tostring(code), d.lnum))
end
local doc = { uri = vim.uri_from_bufnr(buf) }
local lenses = vim.lsp.buf_request_sync(buf, "textDocument/codeLens", { textDocument = doc }, 20000)
for _, r in pairs(lenses or {}) do
  for _, l in ipairs(r.result or {}) do
    table.insert(lines, string.format("lens %d %s", l.range.start.line, l.command.title))
  end
end
local hovers = vim.lsp.buf_request_sync(buf, "textDocument/hover",
  { textDocument = doc, position = { line = 15, character = 6 } }, 20000)
for _, r in pairs(hovers or {}) do
  local value = r.result and r.result.contents and r.result.contents.value or ""
  table.insert(lines, "hover " .. tostring(value:find("store: a ↦", 1, true) ~= nil))
end
finish()
"#;

#[test]
fn neovim_shows_the_diagnostics_lenses_and_hover() {
    let has_nvim = Command::new("nvim")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_nvim {
        skip::skipped(
            "nvim is not installed (apt-get install neovim; .ci/run does): the Neovim client check did not run",
        );
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("idf-lsp-nvim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("init.lua");
    std::fs::write(&config, CONFIG).unwrap();
    let out = dir.join("out.txt");
    let mut child = Command::new("nvim")
        .args(["--headless", "-n", "-i", "NONE", "-u"])
        .arg(&config)
        .env("IDF_BIN", env!("CARGO_BIN_EXE_idf-verify"))
        .env("IDF_FILE", root.join("tests/lsp/failing.jv"))
        .env("IDF_OUT", &out)
        // Nothing of the user's own Neovim set-up.
        .env("HOME", &dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nvim");
    // A guard against a hung editor, not a performance assertion.
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let stderr = child.wait_with_output().map(|o| String::from_utf8_lossy(&o.stderr).into_owned());
    let got = std::fs::read_to_string(&out)
        .unwrap_or_else(|e| panic!("nvim wrote no results ({e}); stderr: {stderr:?}"));
    let lines: Vec<&str> = got.lines().collect();
    let diagnostics: Vec<&str> =
        lines.iter().copied().filter(|l| l.starts_with("diagnostic ")).collect();
    assert_eq!(
        diagnostics,
        ["diagnostic assert.failed 15", "diagnostic call.precondition 21"],
        "{got}"
    );
    let lenses: Vec<String> = lines
        .iter()
        .filter(|l| l.starts_with("lens "))
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        lenses,
        ["lens 5 verified", "lens 7 verified", "lens 12 failed", "lens 18 failed"],
        "{got}"
    );
    assert!(lines.contains(&"hover true"), "{got}");
    let _ = std::fs::remove_dir_all(&dir);
}
