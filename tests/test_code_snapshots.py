"""Every code's wording is pinned: the text rendering of each `CODE.fail.spark` fixture (message,
label, help and notes), or of the command that reports a code no spec can show, is a snapshot, so a
changed message shows up as a reviewed snapshot diff.

Each code's snapshot is a file of its own, `__snapshots__/test_code_snapshots/SPKnnn.ambr`, so a new
code adds one file and changes no other code's. A rule's fixture renders with that rule alone, as
tests/test_check_fixtures.py runs it.

Update with `pytest --snapshot-update tests/test_code_snapshots.py` and read the diff.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.extensions.amber import AmberSnapshotExtension
from syrupy.location import PyTestLocation
from syrupy.types import SnapshotIndex

from spark_dsl.pipeline import RunResult, run
from spark_dsl.render.text import render
from spark_dsl.rules.table import only

FIXTURES = Path(__file__).parent / "fixtures"
CHECKOUT = Path(__file__).resolve().parent.parent
FAILING = sorted(FIXTURES.glob("codes/*.fail.spark")) + sorted(FIXTURES.glob("rules/*.fail.spark"))


class OneFilePerCode(AmberSnapshotExtension):
    """Stores each test's snapshot in `__snapshots__/<this module>/<its parameter, a code>.ambr`, the
    layout syrupy gives its one-file-per-test extensions, so syrupy still finds unused ones."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        return str(Path(super().dirname(test_location=test_location)) / test_location.basename)

    @classmethod
    def get_file_basename(cls, *, test_location: PyTestLocation, index: SnapshotIndex) -> str:
        found = re.search(r"\[(SPK\d{3})\]$", test_location.snapshot_name)
        assert found, f"{test_location.snapshot_name} is not parametrized by a code"
        return found.group(1)


@pytest.fixture
def snapshot(snapshot: Any) -> Any:
    return snapshot.use_extension(OneFilePerCode)


def _run_fixture(path: Path) -> RunResult:
    """A rule's fixture with that rule alone; a front-end code's with every rule, as
    tests/test_check_fixtures.py runs each."""
    if path.parent.name != "rules":
        return run([Path(path.name)], Path("."))
    with only({path.name.split(".")[0]}):
        return run([Path(path.name)], Path("."))


@pytest.mark.parametrize("path", FAILING, ids=lambda p: p.name.split(".")[0])
def test_the_failing_fixture_renders_as_pinned(path: Path, snapshot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(path.parent)  # file names as a user in the fixture's folder sees them
    result = _run_fixture(path)
    code = path.name.split(".")[0]
    assert code in {d.code for d in result.diagnostics}
    text = render(result.diagnostics, result.sources, len(result.files))
    # SPK112 names the absolute path an import resolves to: the checkout's place is not pinned.
    assert text.replace(str(CHECKOUT), "<checkout>") == snapshot


# Codes whose failing input is not a spec fixture (bytes that are not text, a file too long to
# keep, a configuration file, an output folder): each is pinned from the command's own output.
SPEC = "deployment alpha {{\n  model       = muse-spark-open\n  accelerator = b200\n{body}}}\n"
WITH_TARGET = SPEC.format(body="  target shell {}\n")
ELSEWHERE: dict[str, tuple[dict[str, str | bytes], list[str]]] = {
    "SPK007": ({"bin.spark": b"\xff\xfe\x00deployment"}, ["check", "bin.spark"]),
    "SPK009": ({"long.spark": SPEC.format(body="a=1\n" * 33_334)}, ["check", "long.spark"]),
    "SPK513": ({"a.spark": SPEC.format(body="")}, ["build", "a.spark", "-o", "out"]),
    "SPK520": ({"a.spark": WITH_TARGET, "out/alpha/notes.txt": "mine\n"}, ["build", "a.spark", "-o", "out"]),
    "SPK521": ({"a.spark": WITH_TARGET, "out/manifest.json": '{"garbage": 1\n'}, ["build", "a.spark", "-o", "out"]),
    "SPK522": ({"a.spark": WITH_TARGET, "out": "a file\n"}, ["build", "a.spark", "-o", "out"]),
    # The configuration files are `spark explain`'s failing examples (test_explain_examples.py).
    "SPK601": ({"a.spark": WITH_TARGET, "spark.toml": 'ignores = ["SPK302"]\n'}, ["check", "a.spark"]),
    "SPK602": (
        {"a.spark": WITH_TARGET, "spark.toml": 'warnings-as-errors = "yes"\nignore = ["SPK103"]\n'},
        ["check", "a.spark"],
    ),
    "SPK603": ({"a.spark": WITH_TARGET, "spark.toml": 'ignore = ["SPK302"\n'}, ["check", "a.spark"]),
}
SPLIT = "deployment alpha extends p {\n  model       = muse-spark-open\n  accelerator = b200\n  target shell {}\n}\n"
PART = "profile p {\n  max_num_seqs = 64\n}\n"
# The passing case of each: the input fixed as `spark explain CODE` says (the same command, or
# the fixed command it shows), which runs cleanly and reports no such code.
ELSEWHERE_PASS: dict[str, tuple[dict[str, str | bytes], list[str]]] = {
    "SPK007": ({"bin.spark": WITH_TARGET.encode("utf-8")}, ["check", "bin.spark"]),
    # Split into files below the limit: the deployment imports its part.
    "SPK009": ({"long.spark": 'import "part-1.spark"\n' + SPLIT, "part-1.spark": PART}, ["check", "long.spark"]),
    "SPK513": ({"a.spark": WITH_TARGET}, ["build", "a.spark", "-o", "out"]),
    "SPK520": (
        {"a.spark": WITH_TARGET, "out/alpha/notes.txt": "mine\n"},
        ["build", "a.spark", "-o", "out", "--take-over"],
    ),
    "SPK521": ({"a.spark": WITH_TARGET}, ["build", "a.spark", "-o", "out"]),
    "SPK522": ({"a.spark": WITH_TARGET}, ["build", "a.spark", "-o", "out"]),
    "SPK601": ({"a.spark": WITH_TARGET, "spark.toml": 'ignore = ["SPK302"]\n'}, ["check", "a.spark"]),
    "SPK602": (
        {"a.spark": WITH_TARGET, "spark.toml": 'warnings-as-errors = true\nignore = ["SPK302"]\n'},
        ["check", "a.spark"],
    ),
    "SPK603": ({"a.spark": WITH_TARGET, "spark.toml": 'ignore = ["SPK302"]\n'}, ["check", "a.spark"]),
}


def _spark(files: dict[str, str | bytes], command: list[str], folder: Path) -> subprocess.CompletedProcess[str]:
    """The command run in `folder` after writing the files there."""
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (folder / name).write_bytes(data)
    return subprocess.run(
        [sys.executable, "-m", "spark_dsl", *command], cwd=folder, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("code", sorted(ELSEWHERE))
def test_a_code_without_a_spec_fixture_renders_as_pinned(code: str, snapshot: Any, tmp_path: Path) -> None:
    done = _spark(*ELSEWHERE[code], tmp_path)
    assert f"[{code}]" in done.stdout + done.stderr, done.stdout + done.stderr
    assert {"stdout": done.stdout, "stderr": done.stderr} == snapshot


@pytest.mark.parametrize("code", sorted(ELSEWHERE_PASS))
def test_a_code_without_a_spec_fixture_passes_once_fixed(code: str, tmp_path: Path) -> None:
    done = _spark(*ELSEWHERE_PASS[code], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"[{code}]" not in done.stdout + done.stderr, done.stdout + done.stderr


def test_every_code_pinned_from_a_command_has_a_passing_case() -> None:
    assert sorted(ELSEWHERE_PASS) == sorted(ELSEWHERE)


def test_every_code_has_a_pinned_rendering() -> None:
    from spark_dsl.codes import registry

    pinned = {p.name.split(".")[0] for p in FAILING} | set(ELSEWHERE)
    assert sorted(set(registry()) - pinned) == []
    assert sorted(pinned - set(registry())) == []
