"""Ignore comments are checked (SPK125, as ruff's RUF100), and the fix that removes one is exact."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from spark_dsl.diagnostics import Diagnostic
from spark_dsl.fixes import apply_edits
from spark_dsl.pipeline import RunResult, run

Project = Callable[[dict[str, str]], Path]

HEAD = "deployment d {\n  model       = muse-spark-open\n  accelerator = mi355x\n"


def check(project: Project, text: str, extra: dict[str, str] | None = None) -> RunResult:
    folder = project({"a.spark": text, **(extra or {})})
    return run([folder / "a.spark"], folder)


def unused(result: RunResult) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.code == "SPK125"]


def fixed(result: RunResult, d: Diagnostic) -> str:
    (fix,) = d.fixes
    assert fix.safe, "removing an ignore that does nothing changes nothing the spec deploys"
    assert d.location is not None
    return apply_edits(result.sources[d.location.file].text, fix.edits)


def test_an_ignore_that_silences_a_warning_is_not_reported(project: Project) -> None:
    result = check(project, HEAD + "  # spark: ignore[SPK406]\n  frontend = rust\n}\n")
    assert result.diagnostics == []


@pytest.mark.parametrize(
    ("comment", "words"),
    [
        ("# spark: ignore[SPK999]", "is not a diagnostic code"),
        ("# spark: ignore[SPK216]", "is an error"),
        ("# spark: ignore[SPK001]", "is an error"),
        ("# spark: ignore[SPK402]", "does not fire on this line or the next"),
    ],
)
def test_an_ignore_that_cannot_silence_anything_is_a_warning_whose_fix_removes_the_line(
    project: Project, comment: str, words: str
) -> None:
    text = HEAD + f"  {comment}\n  frontend = python\n}}\n"
    result = check(project, text)
    (d,) = unused(result)
    assert words in d.message and d.severity.value == "warning"
    assert fixed(result, d) == HEAD + "  frontend = python\n}\n"


def test_an_ignore_on_an_error_that_fires_is_reported_and_the_error_stays(project: Project) -> None:
    result = check(project, HEAD + "  nodes = 2 # spark: ignore[SPK216]\n}\n")
    assert [d.code for d in result.diagnostics] == ["SPK216", "SPK125"]
    d = unused(result)[0]
    assert "is an error here" in d.message
    assert fixed(result, d) == HEAD + "  nodes = 2\n}\n"


def test_one_code_of_several_goes_with_its_comma(project: Project) -> None:
    first = check(project, HEAD + "  # spark: ignore[SPK999, SPK406]\n  frontend = rust\n}\n")
    (d,) = unused(first)
    assert fixed(first, d) == HEAD + "  # spark: ignore[SPK406]\n  frontend = rust\n}\n"
    last = check(project, HEAD + "  # spark: ignore[SPK406,SPK999]\n  frontend = rust\n}\n")
    (d,) = unused(last)
    assert fixed(last, d) == HEAD + "  # spark: ignore[SPK406]\n  frontend = rust\n}\n"


@pytest.mark.parametrize(
    ("line", "after"),
    [
        ("  frontend = python  # spark: ignore[SPK999]", "  frontend = python"),
        ("  frontend = python  # spark: ignore[SPK999] the team asked", "  frontend = python  # the team asked"),
        ("  frontend = python  # spark: ignore[SPK999]  # see ADR 7", "  frontend = python  # see ADR 7"),
        ("  frontend = python  # see ADR 7  # spark: ignore[SPK999]", "  frontend = python  # see ADR 7"),
    ],
)
def test_a_trailing_ignore_goes_and_other_words_stay_a_comment(project: Project, line: str, after: str) -> None:
    result = check(project, HEAD + line + "\n}\n")
    (d,) = unused(result)
    assert fixed(result, d) == HEAD + after + "\n}\n"


def test_a_code_in_small_letters_is_written_in_capitals(project: Project) -> None:
    result = check(project, HEAD + "  # spark: ignore[spk406]\n  frontend = rust\n}\n")
    assert {d.code for d in result.diagnostics} == {"SPK406", "SPK125"}
    d = unused(result)[0]
    assert "capitals" in d.message
    assert fixed(result, d) == HEAD + "  # spark: ignore[SPK406]\n  frontend = rust\n}\n"


def test_unused_is_not_judged_where_the_run_cannot_know(project: Project) -> None:
    # A profile: a deployment outside this run may use the value.
    profile = "profile p {\n  # spark: ignore[SPK402]\n  gpus = 8\n}\n"
    assert unused(check(project, profile + HEAD + "}\n")) == []
    # A deployment with an error: its checks stop early, and fixing the error may bring the warning.
    broken = HEAD + "  # spark: ignore[SPK406]\n  frontend = rust\n  gpus = 8.5\n}\n"
    assert [d.code for d in check(project, broken).diagnostics] == ["SPK105"]
    # A code only `spark build` reports.
    assert unused(check(project, "# spark: ignore[SPK513]\n" + HEAD + "}\n")) == []
    # A file the run only imports: its own deployments were not checked.
    imported = HEAD.replace("deployment d", "deployment e") + "  # spark: ignore[SPK402]\n  gpus = 8\n}\n"
    result = check(project, 'import "b.spark"\n' + HEAD + "}\n", {"b.spark": imported})
    assert unused(result) == []


def test_an_unknown_code_is_reported_in_a_profile_too(project: Project) -> None:
    result = check(project, "profile p {\n  # spark: ignore[SPK40]\n  gpus = 8\n}\n" + HEAD + "}\n")
    (d,) = unused(result)
    assert "`SPK40`" in d.message


def test_an_ignore_of_spk125_silences_it(project: Project) -> None:
    result = check(project, HEAD + "  # spark: ignore[SPK125]\n  frontend = python  # spark: ignore[SPK402]\n}\n")
    assert result.diagnostics == []


def test_the_cli_reports_it_and_fix_removes_it(spark: Callable[..., object], project: Project) -> None:
    folder = project({"a.spark": HEAD + "  frontend = python  # spark: ignore[SPK402]\n}\n"})
    r = spark("check", "a.spark")
    assert r.returncode == 0 and "warning[SPK125]" in r.stdout  # type: ignore[attr-defined]
    r = spark("check", "--fix", "a.spark")
    assert r.returncode == 0, r.stderr  # type: ignore[attr-defined]
    assert (folder / "a.spark").read_text() == HEAD + "  frontend    = python\n}\n"  # fixed files are formatted
