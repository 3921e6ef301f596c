"""RunResult answers the questions asked once per deployment (errors? which plan?) from an index:
one pass over the diagnostics for a whole build, not one per deployment (issue 14: 670,000
generator steps for 1,000 specs), and still right after the list changes."""

from __future__ import annotations

from pathlib import Path

from spark_dsl.diagnostics import Diagnostic, Severity
from spark_dsl.pipeline import RunResult, run

SPEC = """deployment muse-{i} {{
  model       = muse-spark-open
  accelerator = b200
  parallel    = tp + ep
  frontend    = {frontend}
}}
"""


class Counting(list[Diagnostic]):
    """A list that counts the passes over it."""

    passes = 0

    def __iter__(self):  # type: ignore[no-untyped-def]
        Counting.passes += 1
        return super().__iter__()


def result_of(tmp_path: Path, count: int, frontend: str = "nope") -> RunResult:
    """`count` specs, each with an error (an unknown frontend) unless `frontend` is a real one."""
    paths = []
    for i in range(count):
        path = tmp_path / f"spec-{i}.spark"
        path.write_text(SPEC.format(i=i, frontend=frontend), encoding="utf-8")
        paths.append(path)
    return run(paths, tmp_path)


def test_asking_every_deployment_passes_over_the_diagnostics_once(tmp_path: Path) -> None:
    result = result_of(tmp_path, 30)
    assert len(result.diagnostics) >= 30 and len(result.deployments) == 30
    result.diagnostics = Counting(result.diagnostics)
    Counting.passes = 0
    answers = [result.deployment_has_errors(d.name) for d in result.deployments]
    assert all(answers)
    assert Counting.passes == 1  # one pass per deployment before the index: 30


def test_the_answers_follow_the_list(tmp_path: Path) -> None:
    result = result_of(tmp_path, 2)
    result.diagnostics = [d for d in result.diagnostics if d.deployment != "muse-1"]
    assert result.deployment_has_errors("muse-0") and not result.deployment_has_errors("muse-1")
    result.diagnostics.append(Diagnostic("SPK500", Severity.ERROR, "a target fails", None, deployment="muse-1"))
    assert result.deployment_has_errors("muse-1")
    result.diagnostics.append(Diagnostic("SPK999", Severity.WARNING, "only a warning", None, deployment="muse-2"))
    assert not result.deployment_has_errors("muse-2")


def test_plans_by_name(tmp_path: Path) -> None:
    result = result_of(tmp_path, 3, frontend="rust")
    assert not result.has_errors and len(result.plans) == 3
    assert [result.plan(p.name) for p in result.plans] == result.plans
    assert result.plan("nowhere") is None


def test_a_run_without_ignore_comments_indexes_no_lines(tmp_path: Path) -> None:
    """Lines are counted only where something needs a line number: a clean run of specs without
    `# spark: ignore[...]` builds no line index (10,000 specs held one each)."""
    result = result_of(tmp_path, 3, frontend="rust")
    assert not result.diagnostics
    assert [s._index for s in result.sources.values()] == [None, None, None]


def test_launches_are_decided_when_first_asked_for_and_only_for_plans_that_passed(tmp_path: Path, monkeypatch) -> None:
    """A check asks for no launches, so the run decides none (a twentieth of its time per spec);
    a build asks for each plan's once. A plan with errors has none, and asking twice gives the
    same launches."""
    import spark_dsl.plan.launches as launches_module

    (tmp_path / "a.spark").write_text(SPEC.format(i=0, frontend="python"), encoding="utf-8")
    (tmp_path / "b.spark").write_text(SPEC.format(i=1, frontend="python").replace("b200", "b200\n  gpus = 3"))
    decided: list[str] = []
    real = launches_module.build_launches

    def counting(plan):  # type: ignore[no-untyped-def]
        decided.append(plan.name)
        return real(plan)

    monkeypatch.setattr(launches_module, "build_launches", counting)
    result = run([tmp_path / "a.spark", tmp_path / "b.spark"], tmp_path)
    assert decided == []
    good, bad = (result.plan("muse-0"), result.plan("muse-1"))
    assert good in result.launches and bad not in result.launches and len(result.launches) == 1
    first = result.launches[good]
    assert result.launches[good] is first and first[0].argv[:2] == ("vllm", "serve")
    assert decided == ["muse-0"]
    assert [len(p.launches) for p in result.planned()] == [1, 0]


def test_a_failure_deciding_launches_is_not_read_as_no_launches(tmp_path: Path, monkeypatch) -> None:
    """`planned()` asks with `get`: a KeyError raised while deciding a plan's launches must surface
    (a bug, exit 3 in the CLI), not pass for a plan with errors, as Mapping.get would have it."""
    import pytest

    import spark_dsl.plan.launches as launches_module

    (tmp_path / "a.spark").write_text(SPEC.format(i=0, frontend="python"), encoding="utf-8")

    def broken(plan):  # type: ignore[no-untyped-def]
        raise KeyError("a table the launches read")

    monkeypatch.setattr(launches_module, "build_launches", broken)
    result = run([tmp_path / "a.spark"], tmp_path)
    with pytest.raises(KeyError, match="a table the launches read"):
        result.planned()
    assert result.launches.get(object()) is None  # a plan the run does not have: the default
