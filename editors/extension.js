// Starts `spark lsp` for .spark files. Highlighting comes from the grammar alone, so the
// extension stays useful (with a hint) when vscode-languageclient is not installed yet.
"use strict";
const vscode = require("vscode");

let client;

function activate(context) {
  let lsp;
  try {
    lsp = require("vscode-languageclient/node");
  } catch (err) {
    vscode.window.showWarningMessage(
      "Spark: run `npm install` in the extension folder to enable the language server."
    );
    return;
  }
  const [command, ...args] = vscode.workspace
    .getConfiguration("spark")
    .get("server.command", ["spark", "lsp"]);
  client = new lsp.LanguageClient(
    "spark",
    "Spark language server",
    { command, args, transport: lsp.TransportKind.stdio },
    { documentSelector: [{ language: "spark" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
