"""Diagnostics show the control characters of a spec (in values and file names) and never act on
them: no ESC sequence, bell, carriage return or raw line break reaches a terminal or a CI log, so
a spec cannot print a fake "no problems" line. JSON and SARIF keep them as JSON escapes.
Through the real `spark` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def muse(body: str) -> str:
    return f"""deployment muse {{
  model       = muse-spark-open
  accelerator = b200
  parallel    = tp + ep
{body}
  target shell {{}}
}}
"""


FAKE = "\x1b[2K\rchecked 1 file: no problems\x07"


def check_bytes(folder: Path, name: str, fmt: str) -> bytes:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "spark_dsl", "check", name, "--format", fmt], cwd=folder, env=env, capture_output=True
    ).stdout


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_diagnostics_escape_control_characters(tmp_path: Path, fmt: str) -> None:
    value = "a\\u{1b}[2K\\u{d}checked 1 file: no problems\\nb\\u{7}\\u{202e}\\u{85}"
    text = muse(f'  runtime {{ hf_token = secret("{value}") }}')
    (tmp_path / "muse.spark").write_text(text, encoding="utf-8")
    name = f"x{FAKE}\n.spark"
    (tmp_path / name).write_text(text, encoding="utf-8")
    for spec in ("muse.spark", name):
        out = check_bytes(tmp_path, spec, fmt)
        for raw in (b"\x1b", b"\x07", b"\r", "\u202e".encode(), "\x85".encode()):
            assert raw not in out, (spec, raw, out)
        lines = out.decode("utf-8").splitlines()
        assert not any(line.startswith("checked 1 file: no problems") for line in lines), out
        if fmt == "github":
            assert all(line.startswith("::") for line in lines), out


def test_json_keeps_control_characters_as_escapes(tmp_path: Path) -> None:
    value = "a\\u{1b}[2K\\u{202e}b"
    (tmp_path / "muse.spark").write_text(muse(f'  runtime {{ hf_token = secret("{value}") }}'), "utf-8")
    for fmt in ("json", "sarif"):
        out = check_bytes(tmp_path, "muse.spark", fmt)
        assert b"\x1b" not in out and "\u202e".encode() not in out
        assert any("a\x1b[2K\u202eb" in text for text in strings(json.loads(out))), fmt


def strings(node: object) -> list[str]:
    """Every string in a JSON document."""
    if isinstance(node, str):
        return [node]
    items = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [text for item in items for text in strings(item)]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_spark_plan_shows_control_characters_of_values(tmp_path: Path, fmt: str) -> None:
    """`spark plan` prints values (the launch's argv and environment): escaped there too."""
    value = "a\\u{1b}[2K\\u{d}b\\u{7}\\u{202e}\\u{85}"
    body = f'  serve {{\n    served_model_name = "{value}"\n    env {{ MY_VAR = "{value}" }}\n  }}'
    (tmp_path / "muse.spark").write_text(muse(body), encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "plan", "muse.spark", "--format", fmt],
        cwd=tmp_path,
        env=env,
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr
    for raw in (b"\x1b", b"\x07", b"\r", "\u202e".encode(), "\x85".encode()):
        assert raw not in proc.stdout, (raw, proc.stdout)
    if fmt == "json":
        (deployment,) = json.loads(proc.stdout)["deployments"]
        (launch,) = deployment["launches"]
        shown = "a\x1b[2K\rb\x07\u202e\x85"
        assert launch["argv"][launch["argv"].index("--served-model-name") + 1] == shown
        assert launch["env"]["MY_VAR"] == shown
