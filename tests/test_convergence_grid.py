"""The convergence grid (issue 32): every shipped model x every accelerator x 1, 2 and 4 nodes, with
each layout a user would try, checked in-process; every fix and every help line that names a
concrete `key = value` is followed until the spec is clean. No path may come back to a spec it
has been (a cycle), and no suggestion may bring an error another rule then raises (a help line
that suggests what another rule refuses).

The models and accelerators come from the catalog, so models added to it are in the grid at once.
Specs are checked through `spark_dsl.pipeline.run` with an overlay (no file written per spec), and
each distinct text once: the layouts of a model meet in a few fixed points.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from spark_dsl import catalog
from spark_dsl.diagnostics import Diagnostic, Severity
from spark_dsl.fixes import apply_edits
from spark_dsl.pipeline import run
from spark_dsl.schema import deployment_schema

NODES = (1, 2, 4)
# Longest path of suggestions followed from one start; a longer one is reported as not converging.
DEPTH = 12
# A help line's concrete suggestion: `key = value` for a key the deployment itself takes.
SUGGESTED = re.compile(r"`([a-z_]+) = ([^`\n]+)`")
TOP_KEYS = frozenset(deployment_schema().keys)


def layouts(gpus: int, nodes: int, moe: bool) -> Iterator[tuple[int | None, str]]:
    """(`gpus`, `parallel`) a user would write: TP alone, with EP, DP x TP over the nodes, DP x TP
    inside the node too (TP of half a node), a pipeline over the nodes; each with `gpus` left to
    the accelerator and written as its GPUs per node."""
    half = max(gpus // 2, 1)
    shapes = ["tp", f"dp({nodes}) + tp", f"dp({nodes * gpus // half}) + tp({half})"]
    if nodes > 1:
        shapes.append(f"tp + pp({nodes})")
    if moe:
        shapes += [f"{s} + ep" for s in shapes if "pp" not in s]
    for shape in dict.fromkeys(shapes):
        for written in (None, gpus):
            yield written, shape


def spec(model: str, accelerator: str, nodes: int, gpus: int | None, parallel: str) -> str:
    lines = [f"  model       = {model}", f"  accelerator = {accelerator}"]
    if nodes > 1:
        lines.append(f"  nodes       = {nodes}")
    if gpus is not None:
        lines.append(f"  gpus        = {gpus}")
    lines.append(f"  parallel    = {parallel}")
    return "deployment grid {\n" + "\n".join(lines) + "\n}\n"


def canonical(text: str) -> str:
    """One spelling of a spec: `key = value` without alignment, so a fix and the help line it
    carries lead to the same state."""
    return re.sub(r"^(\s*)([a-z_]+)\s*=\s*", r"\1\2 = ", text, flags=re.MULTILINE)


def alternatives(help_text: str) -> Iterator[list[tuple[str, str]]]:
    """The concrete suggestions of a help line: each alternative (split at `, or` / ` or `) with
    the `key = value` pairs it sets together (`nodes = 2` and `parallel = tp + pp(2)`)."""
    for part in re.split(r",? or (?![^`]*`(?:[^`]*`[^`]*`)*[^`]*$)", help_text):
        found = [(k, v.strip()) for k, v in SUGGESTED.findall(part) if k in TOP_KEYS]
        if found:
            yield found


def changed_keys(before: str, after: str) -> set[str]:
    lines = set(before.splitlines())
    return {m.group(1) for line in after.splitlines() if line not in lines and (m := re.match(r"\s*(\w+) =", line))}


def set_key(text: str, key: str, value: str) -> str:
    """The spec with the top-level `key = value`: the written line replaced, else one added."""
    line = re.compile(rf"^  {key}\s*=.*$", re.MULTILINE)
    if line.search(text):
        return line.sub(lambda _: f"  {key} = {value}", text, count=1)
    return text.replace("\n}\n", f"\n  {key} = {value}\n}}\n", 1)


@dataclass
class Grid:
    folder: Path
    seen: dict[str, tuple[Diagnostic, ...]] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)  # specs whose every path has been followed
    cycles: list[list[str]] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    starts: int = 0
    steps: int = 0

    def refused(self, before: str, after: str, errors: set[str], code: str) -> list[str]:
        """New errors (other than the followed code) at a line the suggestion wrote: the value it
        suggested is what they refuse."""
        keys = changed_keys(before, after)
        out = []
        for e in self.check(after):
            if e.severity is not Severity.ERROR or e.code in errors or e.code == code or e.location is None:
                continue
            line = after[: e.location.span.start].rsplit("\n", 1)[-1] + after[e.location.span.start :].split("\n", 1)[0]
            if any(re.match(rf"\s*{k} =", line) for k in keys):
                out.append(e.code)
        return out

    def check(self, text: str) -> tuple[Diagnostic, ...]:
        if text not in self.seen:
            path = self.folder / "grid.spark"
            self.seen[text] = tuple(run([path], self.folder, overlays={path: text}).diagnostics)
        return self.seen[text]

    def suggestions(self, text: str, d: Diagnostic) -> Iterator[tuple[str, str]]:
        """(what, the spec after it) for each fix of `d` and each `key = value` its help names."""
        applied: set[str] = set()
        for fix in d.fixes:
            edits = [e for e in fix.edits if e.location.file == "grid.spark"]
            if edits:
                after = canonical(apply_edits(text, edits))
                applied.add(after)
                yield f"{d.code} fix {fix.message!r}", after
        for group in alternatives(d.help or ""):
            after = text
            for key, value in group:
                after = set_key(after, key, value)
            if after not in applied:
                yield f"{d.code} help {group}", after

    def follow(self, text: str, path: list[str]) -> None:
        found = self.check(text)
        errors = {d.code for d in found if d.severity is Severity.ERROR}
        for d in found:
            for what, after in self.suggestions(text, d):
                self.steps += 1
                new = self.refused(text, after, errors, d.code)
                if new:
                    self.contradictions.append(f"{what} brings {sorted(new)} to:\n{text}")
                if after in path:
                    self.cycles.append([what, *path[path.index(after) :], after])
                elif len(path) >= DEPTH:
                    self.unfinished.append(text)
                elif after not in self.done:
                    self.follow(after, [*path, after])
        self.done.add(text)


def pairs() -> list[tuple[str, str]]:
    cat = catalog.load()
    return [(m, a) for m in cat.models for a in cat.accelerators]


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Grid:
    folder = tmp_path_factory.mktemp("grid")
    (folder / "grid.spark").write_text("", encoding="utf-8")
    walk = Grid(folder)
    cat = catalog.load()
    for model_id, acc_id in pairs():
        model, acc = cat.models[model_id], cat.accelerators[acc_id]
        moe = model.architecture.routed_experts > 0
        for nodes in NODES:
            for gpus, parallel in layouts(acc.gpus_per_node, nodes, moe):
                text = canonical(spec(model_id, acc_id, nodes, gpus, parallel))
                walk.starts += 1
                if text not in walk.done:
                    walk.follow(text, [text])
    print(
        f"\nconvergence grid: {len(cat.models)} models x {len(cat.accelerators)} accelerators x "
        f"{len(NODES)} node counts, {walk.starts} starting specs, {len(walk.seen)} distinct specs "
        f"checked, {walk.steps} suggestions followed"
    )
    return walk


def test_the_grid_covers_every_shipped_model_and_accelerator(grid: Grid) -> None:
    cat = catalog.load()
    named = {(m, a) for m, a in pairs()}
    assert len(named) == len(cat.models) * len(cat.accelerators)
    for model_id, acc_id in named:
        assert any(f"model = {model_id}\n  accelerator = {acc_id}\n" in t for t in grid.seen), (model_id, acc_id)
    assert grid.starts >= len(named) * len(NODES) * 6


def test_following_every_fix_and_help_line_never_cycles(grid: Grid) -> None:
    assert grid.cycles == [], "\n---\n".join("\n=>\n".join(c) for c in grid.cycles[:3])
    assert grid.unfinished == [], grid.unfinished[:3]


def test_no_help_line_suggests_what_another_rule_refuses(grid: Grid) -> None:
    assert grid.contradictions == [], "\n---\n".join(grid.contradictions[:5])
