"""Diagnostics latency of `spark lsp` on a 300-line file of about 40 deployments, over many edits.

Two clocks are reported for every edit:

- in-server: from the start of the didChange handler's check to the
  publishDiagnostics notification handed to the transport (the server reports
  it when SPARK_LSP_TIMING is set), i.e. the pipeline run plus conversion;
- end to end: from the client sending didChange to it receiving
  publishDiagnostics over stdio, which adds JSON-RPC encoding and pipe hops.

Usage: python benchmarks/lsp_latency.py [--edits 300] [--budget-ms 10] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ACCELERATORS = ("b200", "b300", "gb200", "mi355x")
CHECKPOINTS = {"b200": "nvfp4", "b300": "nvfp4", "gb200": "nvfp4", "mi355x": "mxfp4"}
_TIMING = re.compile(r"checked (?P<uri>\S+) in (?P<ms>[0-9.]+) ms")


def editor_file(lines: int = 300) -> str:
    """A realistic spec: a profile, then deployments of 7-8 lines each, with comments."""
    out = [
        "# benchmark: many deployments in one file",
        "profile base {",
        "  gpu_memory_utilization = 0.9",
        "  serve {",
        '    api_key = secret("vllm-api-key")',
        "  }",
        "}",
        "",
    ]
    i = 0
    while len(out) < lines - 8:
        acc = ACCELERATORS[i % len(ACCELERATORS)]
        out += [
            f"deployment dep-{i:02d} extends base {{",
            "  model       = muse-spark-open",
            f"  accelerator = {acc}  # one node",
            f"  checkpoint  = {CHECKPOINTS[acc]}",
            "  serve {",
            f"    port = {8000 + i}",
            "  }",
            "}",
        ]
        i += 1
    out += [""] * (lines - len(out))
    return "\n".join(out) + "\n"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class Probe:
    """Collects publishDiagnostics arrivals and the server's own timings."""

    def __init__(self, client: LanguageClient) -> None:
        self.published: asyncio.Queue[tuple[float, types.PublishDiagnosticsParams]]
        self.published = asyncio.Queue()
        self.server_ms: list[float] = []

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            self.published.put_nowait((time.perf_counter(), params))

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            match = _TIMING.search(params.message)
            if match:
                self.server_ms.append(float(match["ms"]))

    async def next_for(self, version: int) -> tuple[float, list[types.Diagnostic]]:
        while True:
            arrived, params = await asyncio.wait_for(self.published.get(), timeout=30)
            if params.version == version:
                return arrived, list(params.diagnostics)


def _edit(lines: list[str], step: int, count: int) -> tuple[types.Range, str, str | None]:
    """Cycles of three edits to one of `count` deployments: a port, a broken checkpoint, its fix."""
    deployment = (step // 3 * 7) % count
    phase = step % 3
    line = 8 + deployment * 8 + (5 if phase == 0 else 3)
    start = lines[line].index("=") + 2
    old = lines[line][start:].split(" ")[0]
    if phase == 0:
        new, expect = str(9000 + step % 500), None
    elif phase == 1:
        new, expect = old[:-1] + "5", "SPK103"  # nvfp4 -> nvfp5: not a checkpoint
    else:
        new, expect = old[:-1] + "4", None
    rng = types.Range(
        start=types.Position(line=line, character=start),
        end=types.Position(line=line, character=start + len(old)),
    )
    lines[line] = lines[line][:start] + new + lines[line][start + len(old) :]
    return rng, new, expect


async def measure(edits: int, warmup: int, lines: int = 300) -> tuple[list[float], list[float], int]:
    folder = Path(tempfile.mkdtemp(prefix="spark-lsp-bench-"))
    spec = folder / "bench.spark"
    text = editor_file(lines)
    spec.write_text(text, encoding="utf-8")
    client = LanguageClient("spark-lsp-benchmark", "1")
    probe = Probe(client)
    env = {**os.environ, "SPARK_LSP_TIMING": "1"}
    await client.start_io(sys.executable, "-m", "spark_dsl", "lsp", env=env)
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=folder.as_uri())
    )
    client.initialized(types.InitializedParams())
    uri = spec.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="spark", version=1, text=text)
        )
    )
    await probe.next_for(1)
    lines = text.split("\n")
    end_to_end: list[float] = []
    errors_seen = 0
    for step in range(1, warmup + edits + 1):
        rng, new, expect = _edit(lines, step, text.count("\ndeployment "))
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=step + 1),
                content_changes=[types.TextDocumentContentChangePartial(range=rng, text=new)],
            )
        )
        arrived, diagnostics = await probe.next_for(step + 1)
        codes = [d.code for d in diagnostics]
        if expect is not None:
            assert expect in codes, f"edit {step}: expected {expect}, got {codes}"
            errors_seen += 1
        else:
            assert not codes, f"edit {step}: expected no diagnostics, got {codes}"
        if step > warmup:
            end_to_end.append((arrived - sent) * 1000)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    shutil.rmtree(folder, ignore_errors=True)
    # The open and the warm-up checks are dropped: they fill caches.
    return probe.server_ms[1 + warmup :], end_to_end, errors_seen


def profile(runs: int) -> None:
    """Where a check's time goes, measured in-process on the same file."""
    import cProfile
    import pstats

    from spark_dsl.pipeline import run

    folder = Path(tempfile.mkdtemp(prefix="spark-lsp-profile-"))
    spec = folder / "bench.spark"
    text = editor_file()
    spec.write_text(text, encoding="utf-8")
    run([spec], folder, {spec: text})
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        run([spec], folder, {spec: text})
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--budget-ms", type=float, default=10.0, help="fail above this median")
    parser.add_argument("--profile", action="store_true", help="profile the pipeline in-process")
    args = parser.parse_args()
    if args.profile:
        profile(50)
        return 0
    server, wire, errors = asyncio.run(measure(args.edits, args.warmup))
    text = editor_file()
    print(
        f"file: {text.count(chr(10))} lines, {text.count('deployment ')} deployments; "
        f"{len(server)} edits measured ({errors} of them introduced an error)"
    )
    for label, values in (("in-server check", server), ("didChange -> publishDiagnostics", wire)):
        print(
            f"{label:32s} median {statistics.median(values):6.2f} ms   "
            f"p90 {percentile(values, 0.9):6.2f} ms   max {max(values):6.2f} ms"
        )
    return 0 if statistics.median(server) <= args.budget_ms else 1


if __name__ == "__main__":
    sys.exit(main())
