"""`spark plan --format mermaid` is read by Mermaid itself: the npm `mermaid` package's parser under
Node (tests/tools/mermaid/parse.mjs, a jsdom window, no browser), pinned by its lock file and
installed by scripts/test.sh. What Mermaid understood (boxes, groups, arrows) is compared with the
plan; a missing Node or package fails the test."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.render.mermaid import label

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tests" / "tools" / "mermaid"
SPEC_FILES = sorted(p for p in (REPO / "specs").rglob("*.spark") if "profiles" not in p.parts)


def mermaid_parse(text: str) -> dict[str, Any]:
    node = shutil.which("node")
    assert node, "Node.js is missing: run scripts/test.sh (it installs Debian's nodejs)"
    assert (TOOL / "node_modules" / "mermaid" / "package.json").is_file(), (
        "the mermaid package is missing: run scripts/test.sh (npm ci in tests/tools/mermaid)"
    )
    proc = subprocess.run(
        [node, str(TOOL / "parse.mjs")], input=text, capture_output=True, text=True, timeout=120, cwd=TOOL
    )
    assert proc.stdout, proc.stderr
    parsed: dict[str, Any] = json.loads(proc.stdout)
    assert (proc.returncode == 0) == parsed["ok"], proc.stderr
    return parsed


def lines(label_html: str) -> list[str]:
    """A label's lines as a browser shows them (its only markup is `<br>`)."""
    assert "<" not in label_html.replace("<br>", ""), label_html
    return [html.unescape(part) for part in label_html.split("<br>")]


def plan_json(spark: Callable[..., Any], *paths: str, cwd: Path = REPO) -> list[dict[str, Any]]:
    r = spark("plan", *paths, "--format", "json", cwd=cwd)
    assert r.returncode == 0, r.stderr
    deployments: list[dict[str, Any]] = json.loads(r.stdout)["deployments"]
    return deployments


def test_the_parser_rejects_what_mermaid_rejects() -> None:
    """The tool is not a formality: a broken flowchart fails it."""
    assert mermaid_parse("flowchart LR\n  a -->\n")["ok"] is False
    assert mermaid_parse('flowchart LR\n  a["x"] --> b\n')["ok"] is True


def test_every_spec_draws_as_mermaid_reads_it(spark: Callable[..., Any]) -> None:
    """All specs in one drawing: a group per deployment and per node (with its GPUs), a box per
    launch with its role and port, the client and router arrows, NIXL and data-parallel links."""
    paths = [str(p.relative_to(REPO)) for p in SPEC_FILES]
    r = spark("plan", *paths, "--format", "mermaid", cwd=REPO)
    assert r.returncode == 0, r.stderr
    parsed = mermaid_parse(r.stdout)
    assert parsed["ok"], parsed.get("error")
    assert parsed["type"] == "flowchart-v2" and parsed["direction"] == "LR"
    vertices = {v["id"]: lines(v["text"]) for v in parsed["vertices"]}
    groups = {g["id"]: g for g in parsed["subgraphs"]}
    edges = {(e["start"], e["end"]): lines(e["text"]) for e in parsed["edges"]}
    deployments = plan_json(spark, *paths)
    assert len(deployments) >= 13
    for n, dep in enumerate(deployments):
        d = f"d{n}"
        assert lines(groups[d]["title"])[0] == dep["name"]
        gpus = f"{dep['settings']['gpus']['value']} x "
        for i, launch in enumerate(dep["launches"]):
            box = vertices[f"{d}_l{i}"]
            assert box[0] == launch["role"]
            node_group = groups[f"{d}_n{launch['node_rank']}"]
            assert f"{d}_l{i}" in node_group["nodes"]
            assert lines(node_group["title"])[0].startswith(f"node {launch['node_rank']}: {gpus}")
            port = launch["argv"][launch["argv"].index("--port") + 1] if "--port" in launch["argv"] else None
            if port is not None:
                assert f"API :{port}" in box
        roles = [launch["role"] for launch in dep["launches"]]
        if "router" in roles:
            router = roles.index("router")
            assert edges[(f"{d}_clients", f"{d}_l{router}")] == ["HTTP :8000"]
            for role in ("prefill", "decode"):
                assert (f"{d}_l{router}", f"{d}_l{roles.index(role)}") in edges
            assert edges[(f"{d}_l{roles.index('decode')}", f"{d}_l{roles.index('prefill')}")] == [
                "KV cache, NIXL :5600"
            ]
        else:
            assert (f"{d}_clients", f"{d}_l0") in edges
        for i, launch in enumerate(dep["launches"]):
            if "--headless" in launch["argv"]:
                pipeline = "--pipeline-parallel-size" in launch["argv"]
                link = "pipeline store :29501" if pipeline else "data-parallel RPC :13345"
                assert edges[(f"{d}_l{i}", f"{d}_l0")] == [link]


def test_user_text_stays_text(spark: Callable[..., Any], tmp_path: Path) -> None:
    """A model path that tries to close the label, end the group, add a node and inject HTML is
    drawn as the characters it is."""
    hostile = 'x"] end\nA-->B %% <img src=x onerror=alert(1)> #35; &amp; `md` é \u202e'
    escaped = hostile.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\u202e", "\\u{202e}")
    (tmp_path / "h.spark").write_text(
        "deployment h {\n  model = muse-spark-open\n  accelerator = b200\n"
        f'  runtime {{\n    model_path = "{escaped}"\n  }}\n  allow_unvalidated = true\n}}\n',
        encoding="utf-8",
    )
    r = spark("plan", "h.spark", "--format", "mermaid", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    parsed = mermaid_parse(r.stdout)
    assert parsed["ok"], parsed.get("error")
    assert lines(parsed["subgraphs"][-1]["title"])[2] == hostile
    assert {v["id"] for v in parsed["vertices"]} == {"d0_l0", "d0_clients"}


def test_labels_write_every_special_character_as_an_entity_code() -> None:
    assert label("tp + ep, :8000 (a/b)") == "tp + ep, :8000 (a/b)"
    assert label('"<#;>\n') == "#34;#60;#35;#59;#62;#10;"


@pytest.mark.parametrize(
    "spec", ["nvidia/b200-prefill-decode", "nvidia/b200-data-parallel-2-nodes", "amd/mi355x-1m-context"]
)
def test_mermaid_snapshot(spark: Callable[..., Any], spec: str, snapshot: Any) -> None:
    r = spark("plan", f"specs/{spec}.spark", "--format", "mermaid", cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout == snapshot


def test_the_tool_is_pinned() -> None:
    """Exact versions in package.json, and the lock file scripts/test.sh installs from."""
    manifest = json.loads((TOOL / "package.json").read_text())
    assert all(v[0].isdigit() for v in manifest["dependencies"].values()), manifest["dependencies"]
    lock = json.loads((TOOL / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/mermaid"]["version"] == manifest["dependencies"]["mermaid"]
    assert "tests/tools/mermaid" in (REPO / "scripts" / "test.sh").read_text()
    assert os.access(TOOL / "parse.mjs", os.R_OK)


def docs_blocks(language: str) -> list[tuple[str, str]]:
    """(page, text) of every fenced block of that language in docs/ and README.md."""
    fence = re.compile(r"^```" + language + r"\n(.*?)^```[ \t]*$", re.M | re.S)
    pages = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
    return [(page.name, m.group(1)) for page in pages for m in fence.finditer(page.read_text(encoding="utf-8"))]


def test_every_mermaid_block_of_the_docs_parses() -> None:
    blocks = docs_blocks("mermaid")
    assert blocks
    for page, text in blocks:
        parsed = mermaid_parse(text)
        assert parsed["ok"], f"{page}: {parsed.get('error')}"


def test_the_drawing_in_plan_md_is_the_current_output(spark: Callable[..., Any]) -> None:
    (text,) = [text for page, text in docs_blocks("mermaid") if page == "plan.md"]
    r = spark("plan", "specs/nvidia/b200-prefill-decode.spark", "--format", "mermaid", cwd=REPO)
    assert r.stdout == text
