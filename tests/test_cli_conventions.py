"""The conventions every subcommand shares where they apply (docs/cli.md), through the real `spark`
command, run from a project's subfolder and from outside any repository (pytest's tmp_path)."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_helpers import CLEAN, ERROR, PROFILE, WARNING, spark, write


def with_shell(spec: str) -> str:
    """The spec with a `target shell {}` before its final `}`."""
    return spec.removesuffix("}\n") + "  target shell {}\n}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with specs in a subfolder, one importing a profile one folder up."""
    return write(
        tmp_path,
        {
            ".git": "",
            "deploy/shared.spark": PROFILE,
            "deploy/specs/a.spark": 'import "../shared.spark"\n\n'
            + with_shell(CLEAN.format(name="a")).replace("a {", "a extends team {"),
            "deploy/specs/b.spark": with_shell(WARNING.format(name="b")),
        },
    )


# ---- default path `.` --------------------------------------------------------------------


def test_no_path_means_the_current_folder_for_every_command(project: Path) -> None:
    specs = project / "deploy/specs"
    r = spark("check", "--format", "json", cwd=specs)
    assert r.returncode == 0, r.stderr  # a usage error ("Missing argument") before
    assert json.loads(r.stdout)["files"] == ["a.spark", "b.spark"]
    assert spark("plan", "--format", "json", cwd=specs).returncode == 0
    r = spark("build", cwd=specs)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (specs / "build").iterdir()) == ["a", "b", "manifest.json"]
    assert spark("fmt", "--check", cwd=specs).returncode == 0


# ---- `-` and --stdin-filename -----------------------------------------------------------------


def test_standard_input_is_checked_as_the_file_it_stands_for(project: Path) -> None:
    text = (project / "deploy/specs/a.spark").read_text(encoding="utf-8").replace("b200", "b2000")
    specs = project / "deploy/specs"
    r = spark("check", "-", "--stdin-filename", "a.spark", "--format", "json", cwd=specs, stdin=text)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["files"] == ["a.spark"]
    # Its import resolved from the named file's folder, up to the project root.
    assert [(d["file"], d["code"], d["line"]) for d in doc["diagnostics"]] == [("a.spark", "SPK103", 5)]
    # Without --stdin-filename it is `<stdin>` in the current folder.
    r = spark("check", "-", cwd=project, stdin=CLEAN.format(name="x").replace("b200", "b2000"))
    assert r.returncode == 1 and " --> <stdin>:3:17" in r.stdout
    # With other paths: once each, the file it stands for replaced by the text.
    clean = CLEAN.format(name="b")
    r = spark("check", "-", ".", "--stdin-filename", "b.spark", "--format", "json", cwd=specs, stdin=clean)
    assert json.loads(r.stdout)["files"] == ["b.spark", "a.spark"] and r.returncode == 0


def test_standard_input_for_plan_build_and_fmt(project: Path, tmp_path: Path) -> None:
    specs = project / "deploy/specs"
    spec = with_shell(CLEAN.format(name="piped"))
    r = spark("plan", "-", "--stdin-filename", "piped.spark", "--format", "json", cwd=specs, stdin=spec)
    assert r.returncode == 0 and [p["name"] for p in json.loads(r.stdout)["deployments"]] == ["piped"]
    r = spark("build", "-", "--stdin-filename", "piped.spark", "-o", "out", cwd=specs, stdin=spec)
    assert r.returncode == 0, r.stderr
    assert json.loads((specs / "out/manifest.json").read_text())["deployments"][0]["source"] == "../piped.spark"
    r = spark("fmt", "-", "--stdin-filename", "x.spark", cwd=tmp_path, stdin="deployment x {\n")
    assert r.returncode == 1 and " --> x.spark:1:14" in r.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["check", "a.spark", "--stdin-filename", "a.spark"], "pass `-` as the path too"),
        (["check", "-", "-"], "can be named once"),
        (["fmt", "a.spark", "--stdin-filename", "a.spark"], "pass `-` as the path too"),
        (["check", "-", "--root", ".", "--stdin-filename", "../x.spark"], "outside the project root"),
    ],
)
def test_standard_input_misuse_is_a_usage_error(project: Path, args: list[str], fragment: str) -> None:
    r = spark(*args, cwd=project / "deploy/specs", stdin="")
    assert r.returncode == 2 and fragment in r.stderr, r.stderr


def test_standard_input_that_is_not_utf8_is_a_usage_error(project: Path) -> None:
    import subprocess

    from cli_helpers import SPARK

    r = subprocess.run([SPARK, "check", "-"], cwd=project, input=b"\xff\xfe", capture_output=True, timeout=120)
    assert r.returncode == 2 and b"standard input is not valid UTF-8 (byte 0)" in r.stderr


# ---- --quiet -------------------------------------------------------------------------------------


def test_quiet_prints_diagnostics_and_results_only(project: Path) -> None:
    specs = project / "deploy/specs"
    r = spark("check", "a.spark", "--quiet", cwd=specs)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = spark("check", "-q", cwd=specs)
    assert r.returncode == 0 and r.stdout.startswith("warning[SPK903]") and "checked 2 files" not in r.stdout
    r = spark("build", "-q", "-o", "out", cwd=specs)
    assert (r.returncode, r.stderr) == (0, "") and "checked" not in r.stdout
    (specs / "c.spark").write_text(CLEAN.format(name="c").replace("  model", "model"), encoding="utf-8")
    r = spark("fmt", "-q", "c.spark", cwd=specs)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


# ---- colour -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env", "coloured"),
    [
        ([], {}, False),  # stdout is a pipe
        ([], {"FORCE_COLOR": "1"}, True),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),
        ([], {"NO_COLOR": ""}, False),  # empty: ignored, and stdout is still a pipe
        (["--color", "always"], {"NO_COLOR": "1"}, True),
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),
        (["--no-color"], {"FORCE_COLOR": "1"}, False),
        (["--color", "auto"], {"FORCE_COLOR": "yes"}, True),
    ],
)
def test_colour_follows_the_option_then_the_environment(
    tmp_path: Path, args: list[str], env: dict[str, str], coloured: bool
) -> None:
    write(tmp_path, {"a.spark": ERROR.format(name="a")})
    environment = {"NO_COLOR": "", **env}
    for command in (["check"], ["plan"], ["build", "-o", "out"]):
        r = spark(*command, "a.spark", *args, cwd=tmp_path, env=environment)
        assert r.returncode == 1
        assert ("\x1b[" in r.stdout) is coloured, (command, r.stdout)


# ---- --version ------------------------------------------------------------------------------------------


def test_version_names_the_installed_release(tmp_path: Path) -> None:
    r = spark("--version", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, f"spark, version {version('spark-dsl')}\n")


# ---- -d/--deployment -----------------------------------------------------------------------------------


def test_deployment_option_narrows_check_plan_and_build(tmp_path: Path) -> None:
    both = with_shell(CLEAN.format(name="good")) + "\n" + with_shell(WARNING.format(name="noisy"))
    write(tmp_path, {"two.spark": both})
    assert spark("check", "-d", "noisy", "--deny", "warnings", cwd=tmp_path).returncode == 1
    r = spark("check", "-d", "good", "--deny", "warnings", cwd=tmp_path)
    assert r.returncode == 0, r.stdout  # `good` has no warning
    r = spark("plan", "-d", "good", "--format", "json", cwd=tmp_path)
    assert [p["name"] for p in json.loads(r.stdout)["deployments"]] == ["good"]
    assert spark("build", "-o", "out", cwd=tmp_path).returncode == 0
    (tmp_path / "out/noisy/serve.sh").write_text("edited\n")  # would be refused, were it rewritten
    r = spark("build", "-d", "good", "-o", "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out/noisy/serve.sh").read_text() == "edited\n"  # left as it was, not retired
    for command in ("check", "plan", "build"):
        r = spark(command, "-d", "nope", cwd=tmp_path)
        assert r.returncode == 2 and "no deployment named nope" in r.stderr


# ---- plan: --format and --deny as on check --------------------------------------------------------


def test_plan_takes_check_s_formats_and_deny(tmp_path: Path) -> None:
    write(tmp_path, {"b.spark": WARNING.format(name="b")})
    assert spark("plan", cwd=tmp_path).returncode == 0
    assert spark("plan", "--deny", "warnings", cwd=tmp_path).returncode == 1
    sarif = json.loads(spark("plan", "--format", "sarif", cwd=tmp_path).stdout)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["SPK903"]
    github = spark("plan", "--format", "github", cwd=tmp_path).stdout
    assert github.startswith("::warning file=b.spark,line=5,")


# ---- --output-file ---------------------------------------------------------------------------------------


def test_output_file_takes_what_stdout_would_get(project: Path) -> None:
    specs = project / "deploy/specs"
    # A folder that does not exist is a usage error, before anything runs.
    r = spark("check", "--format", "json", "--output-file", "report/check.json", cwd=specs)
    assert r.returncode == 2 and "cannot write report/check.json" in r.stderr
    (specs / "report").mkdir()
    r = spark("check", "--format", "sarif", "--output-file", "report/check.sarif", cwd=specs)
    assert (r.returncode, r.stdout) == (0, "")
    assert json.loads((specs / "report/check.sarif").read_text())["version"] == "2.1.0"
    r = spark("plan", "a.spark", "--output-file", "report/plan.txt", cwd=specs)
    assert r.returncode == 0 and r.stdout == "" and "deployment a" in (specs / "report/plan.txt").read_text()
    r = spark("build", "--format", "json", "-o", "out", "--output-file", "report/build.json", cwd=specs)
    assert r.returncode == 0
    assert json.loads((specs / "report/build.json").read_text())["files"] == ["a.spark", "b.spark"]
    r = spark("check", "--output-file", "report", cwd=specs)
    assert r.returncode == 2 and "is a directory" in r.stderr


def test_reading_the_command_line_creates_no_output_file(tmp_path: Path) -> None:
    # Completion, `--help` and the docs' command checks parse options without running the command.
    import click

    from spark_dsl.cli import main

    target = tmp_path / "report.json"
    with click.Context(main) as group:
        command = main.get_command(group, "check")
        assert command is not None
        command.make_context("check", ["--output-file", str(target), "specs"], parent=group).close()
    assert not target.exists()
    r = spark("check", "--output-file", str(target), "--help", cwd=tmp_path)
    assert r.returncode == 0 and "--output-file" in r.stdout and not target.exists()


# ---- shell completion ----------------------------------------------------------------------------------------


def test_shell_completion_is_click_s(tmp_path: Path) -> None:
    r = spark(cwd=tmp_path, env={"_SPARK_COMPLETE": "bash_source"})
    assert r.returncode == 0 and "_spark_completion()" in r.stdout and "complete -o nosort -F" in r.stdout
    r = spark(cwd=tmp_path, env={"_SPARK_COMPLETE": "bash_complete", "COMP_WORDS": "spark ch", "COMP_CWORD": "1"})
    assert r.stdout.split() == ["plain,check"]
    r = spark(
        cwd=tmp_path, env={"_SPARK_COMPLETE": "bash_complete", "COMP_WORDS": "spark check --col", "COMP_CWORD": "2"}
    )
    assert r.stdout.split() == ["plain,--color"]
    r = spark(cwd=tmp_path, env={"_SPARK_COMPLETE": "zsh_source"})
    assert re.search(r"#compdef spark", r.stdout)
