// Parses Mermaid text from stdin with Mermaid itself and prints what it understood, as JSON:
//   {"ok": true, "type": "flowchart-v2", "direction": "LR",
//    "vertices": [{"id", "text", "shape"}], "edges": [{"start", "end", "text"}],
//    "subgraphs": [{"id", "title", "nodes"}]}
// or {"ok": false, "error": "..."} with exit status 1. Texts are the HTML Mermaid hands the browser
// (its entity codes `#60;` as `&#60;`), so a test can tell markup from text.
//
// Mermaid's parse() sanitizes labels with DOMPurify, which needs a window: jsdom provides one, so
// no browser is involved (mermaid 11.17.2 under Node 20 fails with "DOMPurify.addHook is not a
// function" without it). Mermaid 12 needs Node 22, newer than the Node Debian and NodeSource give
// the test machines, hence 11.x (versions pinned in package.json and package-lock.json).
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");

// Mermaid parks entity codes as ﬂ°°60¶ß (numeric) and ﬂ°amp¶ß (named) while it parses and turns
// them into HTML entities when it draws (mermaid's own decodeEntities): the same here.
const html = (label) => (label ?? "").replaceAll("ﬂ°°", "&#").replaceAll("ﬂ°", "&").replaceAll("¶ß", ";");

let text = "";
for await (const chunk of process.stdin) text += chunk;

try {
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  const parsed = await mermaid.parse(text);
  const out = { ok: true, type: parsed.diagramType };
  if (parsed.diagramType.startsWith("flowchart")) {
    const { db } = await mermaid.mermaidAPI.getDiagramFromText(text);
    out.direction = db.getDirection();
    out.vertices = [...db.getVertices().values()].map((v) => ({ id: v.id, text: html(v.text), shape: v.type }));
    out.edges = db.getEdges().map((e) => ({ start: e.start, end: e.end, text: html(e.text) }));
    out.subgraphs = db.getSubGraphs().map((s) => ({ id: s.id, title: html(s.title), nodes: s.nodes }));
  }
  process.stdout.write(JSON.stringify(out) + "\n");
} catch (err) {
  process.stdout.write(JSON.stringify({ ok: false, error: String(err.message ?? err) }) + "\n");
  process.exitCode = 1;
}
