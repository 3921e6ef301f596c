"""docs/tutorial.md, executed: every `sh run` block in a fresh repository, in the page's order,
its output compared with the `text output` block that follows it (issue 32, item 8).

The convention (docs/writing-docs.md): a fence `sh run` is run by bash (`set -euo pipefail`)
in the tutorial's repository, with the `spark` installed beside this interpreter first on PATH,
standard error merged into standard output as a terminal shows them; a `text output` block right
after it holds what it prints, where a line `...` stands for any number of lines. A plain `sh`
block is shown, not run (kubectl, sbatch, curl need a cluster). The model-import track's local
folder is Llama 3.1 8B's published files, copied from tests/data/hf_configs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_doc_examples import REPO, Block, _blocks

PAGE = REPO / "docs" / "tutorial.md"
LOCAL_MODEL = REPO / "tests" / "data" / "hf_configs" / "llama-3.1-8b"


def steps() -> list[tuple[Block, Block | None]]:
    """Each `sh run` block with the `text output` block right after it, if any."""
    blocks = _blocks(PAGE)
    found = []
    for i, block in enumerate(blocks):
        if block.language == "sh" and "run" in block.attributes:
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            shown = after is not None and after.language == "text" and "output" in after.attributes
            found.append((block, after if shown else None))
    return found


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` is `expected`, each `...` line standing for any number of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0] == expected[0] and matches(expected[1:], actual[1:])


def test_the_tutorial_has_run_blocks_each_checked_but_the_first() -> None:
    found = steps()
    assert len(found) >= 6
    assert all(output is not None for _, output in found[1:]), "every step after `spark init` shows its output"


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    repo = tmp_path / "tutorial"
    repo.mkdir()
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")},
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "NO_COLOR": "1",
        "PYTHONUNBUFFERED": "1",  # stdout and stderr interleaved in the order they were written
        "HF_HUB_CACHE": str(tmp_path / "no-cache"),
    }
    for block, output in steps():
        if "spark model import" in block.text:  # what the page's `hf download` would have fetched
            shutil.copytree(LOCAL_MODEL, repo / "hf" / "support-llama")
        done = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + block.text],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{block.where} exited {done.returncode}:\n{done.stdout}"
        if output is not None:
            wanted = output.text.splitlines()
            assert matches(wanted, done.stdout.splitlines()), (
                f"{block.where} printed:\n{done.stdout}\n{output.where} shows:\n{output.text}"
            )


def test_ellipsis_matching() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "...", "d"], ["a", "b"])
    assert not matches(["a"], ["a", "b"])
