// Starts `spark lsp` for .spark files. esbuild bundles this file with vscode-languageclient into
// dist/extension.js (`npm run build`, run by `vsce package`), so the .vsix carries no node_modules.
"use strict";
const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace
    .getConfiguration("spark")
    .get("server.command", ["spark", "lsp"]);
  client = new LanguageClient(
    "spark",
    "Spark language server",
    { command, args, transport: TransportKind.stdio },
    { documentSelector: [{ language: "spark" }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
