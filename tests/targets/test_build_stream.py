"""`spark build` streams: each deployment is staged as soon as it is rendered and its text dropped,
so a build's memory does not grow with its outputs; what it stages and does not commit is removed.

Memory is not measured here (that is benchmarks/run.py's growth row): the tests count which
rendered outputs are still alive, and look at the output folder while the build runs.
"""

from __future__ import annotations

import errno
import gc
import os
import weakref
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from spark_dsl import cli
from spark_dsl.plan.model import Plan
from spark_dsl.targets import build as build_module
from spark_dsl.targets import transaction

SPEC = """
deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
  target shell {{}}
  target compose {{}}
}}
"""
TWO_NODES = """
deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
  nodes       = 2
  parallel    = dp(2) + tp + ep
  target shell {{}}
  target compose {{}}
}}
"""
NAMES = ["streamed-a", "streamed-b", "streamed-c", "streamed-d", "streamed-e"]


def write_specs(folder: Path, names: list[str], template: str = SPEC) -> None:
    for i, name in enumerate(names):
        (folder / f"{i}-{name}.spark").write_text(template.format(name=name))


def invoke(folder: Path, *args: str) -> Any:
    """The CLI in this process (so the test can watch the renderer), run inside `folder`."""
    old = Path.cwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(cli.main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def files_below(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_build_holds_one_rendered_deployment_at_a_time(tmp_path: Path, monkeypatch) -> None:
    write_specs(tmp_path, NAMES)
    real = build_module.render_plan
    rendered: list[weakref.ref[Any]] = []
    alive_before: list[int] = []
    staged_before: list[list[str]] = []

    plans_alive: list[list[str]] = []

    def watched(*args: Any) -> Any:
        # The command freezes what the check made (check_command.checked_run): frozen objects are still
        # freed when their last reference goes, but gc.get_objects() no longer lists them.
        gc.unfreeze()
        gc.collect()
        alive_before.append(sum(ref() is not None for ref in rendered))
        plans = [o.name for o in gc.get_objects() if isinstance(o, Plan) and o.name in NAMES]
        plans_alive.append(sorted(plans))
        out = tmp_path / "out"
        found = out.iterdir() if out.is_dir() else []
        staged_before.append(sorted(p.name for p in found if p.name.startswith(transaction.NEW)))
        output, problems = real(*args)
        rendered.append(weakref.ref(output))
        return output, problems

    monkeypatch.setattr(build_module, "render_plan", watched)
    r = invoke(tmp_path, "build", ".", "-o", "out")
    assert r.exit_code == 0, r.output
    assert len(rendered) == len(NAMES)
    # When a deployment is rendered, at most the one before it is still alive (the loop that
    # rendered it has not yet let go of it); the old build kept them all: [0, 1, 2, 3, 4]...
    assert alive_before == [0] + [1] * (len(NAMES) - 1)
    # ...having written it to its staged folder first.
    # The run lets go of each plan once it is rendered (the old build held all five throughout).
    assert plans_alive == [NAMES[i:] for i in range(len(NAMES))]
    assert staged_before == [[f"{transaction.NEW}{n}" for n in sorted(NAMES[:i])] for i in range(len(NAMES))]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted([*NAMES, "manifest.json"])


def test_a_refusal_seen_after_staging_leaves_nothing_behind(tmp_path: Path) -> None:
    write_specs(tmp_path, NAMES)
    mine = tmp_path / "out" / NAMES[-1]  # the last deployment's folder is a person's: the build stops there
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("mine\n")
    r = invoke(tmp_path, "build", ".", "-o", "out")
    assert r.exit_code == 1
    assert f"cannot replace out/{NAMES[-1]}/" in r.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [NAMES[-1]]  # no staged folder, no lock
    assert files_below(tmp_path / "out") == {f"{NAMES[-1]}/notes.txt": b"mine\n"}


def test_a_disk_full_while_staging_stops_staging_and_changes_nothing(tmp_path: Path, monkeypatch) -> None:
    write_specs(tmp_path, NAMES[:2])
    assert invoke(tmp_path, "build", ".", "-o", "out").exit_code == 0
    before = files_below(tmp_path / "out")
    write_specs(tmp_path, NAMES)
    real = transaction._stage
    calls: list[object] = []

    def full_on_the_second(*args: Any) -> None:
        calls.append(args)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(*args)

    monkeypatch.setattr(transaction, "_stage", full_on_the_second)
    r = invoke(tmp_path, "build", ".", "-o", "out")
    assert r.exit_code == 1 and "error[SPK522]: cannot write out: No space left on device" in r.output
    assert len(calls) == 2  # nothing more was staged once the disk refused
    assert files_below(tmp_path / "out") == before
    assert [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".")] == []


def test_an_unusable_output_folder_still_reports_what_the_renderers_refuse(tmp_path: Path) -> None:
    write_specs(tmp_path, ["dp"], TWO_NODES)
    (tmp_path / "out").write_text("not a folder")
    r = invoke(tmp_path, "build", ".", "-o", "out")
    assert r.exit_code == 1
    assert "error[SPK501]: `target compose` cannot run `dp`" in r.output  # rendered though nothing is written
    assert "cannot write out: it exists and is not a folder" in r.output
