// idf-verify in VS Code: starts `idf-verify lsp` for .jv files through
// vscode-languageclient. The extension runs dist/extension.js, this file bundled with
// its dependencies (`npm ci && npm run bundle`); `.ci/run` packages it as a .vsix (into
// target/vsix/). To try it from the sources: bundle, open this folder in VS Code, F5.
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("idfVerify");
  const command = config.get("path", "idf-verify");
  const serverOptions = {
    command,
    args: ["lsp"],
    transport: TransportKind.stdio,
  };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "jv" }],
    initializationOptions: {
      timeout: config.get("timeout", 10),
      jobs: config.get("jobs", 0),
      debounceMs: config.get("debounceMs", 300),
    },
  };
  client = new LanguageClient("idf-verify", "idf-verify", serverOptions, clientOptions);
  client.start();
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
