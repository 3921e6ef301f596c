"""`spark check` end to end, in a fresh process: exit codes, formats, colour, failures."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spark_dsl.cli import main

REPO = Path(__file__).resolve().parent.parent
GOOD = "deployment muse {\n  model = muse-spark-open\n  accelerator = b200\n}\n"
BAD = "deployment muse {\n  model = muse-spark-open\n  accelerator = b2000\n}\n"


def test_clean_examples_exit_0(spark: Callable[..., Any]) -> None:
    r = spark("check", "examples", cwd=REPO)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no problems" in r.stdout and r.stderr == ""


def test_errors_exit_1_with_rustc_style_text(spark: Callable[..., Any], project: Callable[..., Path]) -> None:
    project({"a.spark": BAD})
    r = spark("check", "a.spark")
    assert r.returncode == 1
    assert r.stdout.splitlines()[:6] == [
        "error[SPK103]: `b2000` is not a valid `accelerator`; did you mean `b200`?",
        " --> a.spark:3:17",
        "  |",
        "3 |   accelerator = b2000",
        "  |                 ^^^^^",
        "  |",
    ]
    assert "= help: `accelerator` takes one of" in r.stdout
    assert "\x1b[" not in r.stdout


def test_json_format_is_the_cli_contract(spark: Callable[..., Any], project: Callable[..., Path]) -> None:
    project({"a.spark": BAD, "b.spark": GOOD.replace("muse {", "other {")})
    r = spark("check", "a.spark", "b.spark", "--format", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["version"] == 1 and doc["files"] == ["a.spark", "b.spark"]
    (d,) = doc["diagnostics"]
    assert {
        k: d[k] for k in ("code", "severity", "file", "line", "column", "end_line", "end_column", "deployment")
    } == {
        "code": "SPK103",
        "severity": "error",
        "file": "a.spark",
        "line": 3,
        "column": 17,
        "end_line": 3,
        "end_column": 22,
        "deployment": "muse",
    }
    assert d["message"].startswith("`b2000` is not a valid `accelerator`")
    assert d["help"] and d["notes"] == []
    # Another accelerator is a suggestion in the message, never a fix (docs/fixes.md).
    assert d.get("fixes", []) == []
    assert doc["summary"] == {"errors": 1, "warnings": 0, "infos": 0}


def test_columns_count_code_points(spark: Callable[..., Any], project: Callable[..., Path]) -> None:
    line = '  model = muse-spark-open accelerator = b200 runtime { image = "é" } x = 1 }'
    project({"a.spark": "deployment muse { # ünïcödé 🚀\n" + line + "\n"})
    d = json.loads(spark("check", "a.spark", "--format", "json").stdout)["diagnostics"][0]
    assert (d["line"], d["column"]) == (2, line.index("x = 1") + 1)


def test_directories_are_searched_and_files_checked_in_one_process(
    spark: Callable[..., Any], project: Callable[..., Path]
) -> None:
    project({"specs/a.spark": GOOD, "specs/deep/b.spark": GOOD.replace("muse {", "b {"), "specs/notes.txt": "x"})
    r = spark("check", "specs", "--format", "json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["files"] == ["specs/a.spark", "specs/deep/b.spark"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["check", "nope.spark"], "no such file or directory: nope.spark"),
        (["check", "empty"], "holds no .spark file"),
        (["check", "../", "--root", "."], "outside the project root"),
        (["check", "a.spark", "--format", "xml"], "Invalid value for '--format'"),
        (["explain", "SPK999"], "unknown diagnostic code"),
    ],
)
def test_misuse_exits_2(
    spark: Callable[..., Any], project: Callable[..., Path], args: list[str], fragment: str
) -> None:
    root = project({"a.spark": GOOD, "empty/readme.txt": ""})
    r = spark(*args, cwd=root)
    assert r.returncode == 2, r.stdout + r.stderr
    assert fragment in r.stderr
    assert "Traceback" not in r.stderr


def test_root_widens_what_imports_may_reach(spark: Callable[..., Any], project: Callable[..., Path]) -> None:
    root = project(
        {
            "team/common.spark": "profile common { gpus = 8 }\n",
            "proj/a.spark": 'import "../team/common.spark"\n' + GOOD.replace("muse {", "muse extends common {"),
        }
    )
    assert spark("check", "a.spark", cwd=root / "proj").returncode == 1
    assert spark("check", "a.spark", "--root", "..", cwd=root / "proj").returncode == 0


def test_internal_failure_is_one_line_naming_the_file_and_exit_3(
    project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project({"a.spark": GOOD})
    monkeypatch.chdir(root)

    def explode(*_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("spark_dsl.loader.Loader.deployments", explode)
    r = CliRunner().invoke(main, ["check", "a.spark"])
    assert r.exit_code == 3
    lines = r.output.strip().splitlines()
    assert len(lines) == 1
    assert "internal error while processing a.spark" in lines[0] and "RuntimeError: boom" in lines[0]


def test_colour_only_when_asked_for_a_terminal(project: Callable[..., Path]) -> None:
    from spark_dsl.pipeline import run
    from spark_dsl.render.text import render

    root = project({"a.spark": BAD})
    result = run([root / "a.spark"], root)
    assert "\x1b[1;31merror[SPK103]" in render(result.diagnostics, result.sources, 1, colour=True)
    assert "\x1b[" not in render(result.diagnostics, result.sources, 1, colour=False)


def test_no_color_is_honoured_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_dsl.conventions import colour_wanted

    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    for name in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)
    assert colour_wanted(no_color=False) is True
    assert colour_wanted(no_color=True) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert colour_wanted(no_color=False) is False
    # no-color.org: an empty NO_COLOR is as good as none.
    monkeypatch.setenv("NO_COLOR", "")
    assert colour_wanted(no_color=False) is True


def test_python_dash_m_and_console_script_agree(spark: Callable[..., Any]) -> None:
    exe = shutil.which("spark")
    assert exe, "the console script `spark` is installed with the package"
    import subprocess

    a = subprocess.run([exe, "check", "examples", "--format", "json"], cwd=REPO, capture_output=True, text=True)
    b = spark("check", "examples", "--format", "json", cwd=REPO)
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout


def test_the_cold_check_path_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from spark_dsl.cli import main\n"
        "try:\n"
        "    main(['check', 'examples'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
        # A dataclass compiles its generated methods when its module loads (about 0.4 ms a class):
        # the records on this path are msgspec Structs (docs/architecture.md, "Records").
        "made = [f'{m.__name__}.{c.__name__}' for m in list(sys.modules.values())\n"
        "        if getattr(m, '__name__', '').startswith('spark_dsl')\n"
        "        for c in vars(m).values() if isinstance(c, type) and c.__module__ == m.__name__\n"
        "        and '__dataclass_fields__' in vars(c)]\n"
        "print(' '.join(made) or '-')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    modules, dataclasses_made = out.stdout.splitlines()[-2:]
    assert dataclasses_made == "-", f"`spark check` creates dataclasses: {dataclasses_made}"
    loaded = set(modules.split())
    assert {"spark_dsl.pipeline", "spark_dsl.syntax.descent"} <= loaded
    # A file of usual length is parsed by the recursive descent: the LALR driver's table is read
    # only for one too long for it.
    assert "spark_dsl.syntax.table" not in loaded and "spark_dsl.syntax.lalr" not in loaded
    for heavy in ("yaml", "jsonschema", "pydantic", "pygls", "lsprotocol", "difflib"):
        assert heavy not in loaded, f"`spark check` imports {heavy}"
    # The check reads each target's declaration (its settings are the schema's `target KIND` body)
    # from the shipped file (spark_dsl.targets.declared): no target module loads, nor what builds
    # and writes the files, nor what renderers need only when they run (PyYAML, vLLM's flag
    # table, shell quoting, YAML text).
    from spark_dsl.targets.registry import TARGET_MODULES

    assert "spark_dsl.targets.declared" in loaded
    renderers = ("spark_dsl.targets.shell_words", "spark_dsl.targets.yaml_text", "spark_dsl.targets.staging")
    for heavy in (*TARGET_MODULES, *renderers, "spark_dsl.targets.build", "spark_dsl.targets.writer"):
        assert heavy not in loaded, f"`spark check` imports {heavy}"
    for heavy in ("spark_dsl.vllm_flags", "shutil", "shlex"):
        assert heavy not in loaded, f"`spark check` imports {heavy}"
    # The shipped files (catalog snapshot, parse table, target declarations) are read with
    # msgspec's decoder; json is imported only to quote a finding or write a JSON-valued flag.
    assert "json" not in loaded, "a clean `spark check` of the examples imports json"
    # A clean parse reads the shipped table: Lark (and its cache: pickle, tempfile) is imported
    # only to describe a syntax error, and so are the modules that wrap it.
    for heavy in ("lark", "pickle", "tempfile", "spark_dsl.syntax.lexer", "spark_dsl.syntax.errors"):
        assert heavy not in loaded, f"a clean `spark check` imports {heavy}"


def test_a_process_that_checks_again_does_not_keep_every_runs_frozen_objects() -> None:
    """A run's objects are frozen for the rest of the command (check_command.run_frozen). Frozen objects in
    a reference cycle are never collected, so a process that runs again (`check --fix` rounds, a
    CliRunner) gives the last run's back to the collector first: what stays frozen is one run's,
    not one per run (checking specs/ froze about 4,000 more objects with every invocation)."""
    import gc

    specs = str(Path(__file__).resolve().parent.parent / "specs")
    frozen = []
    for _ in range(4):
        r = CliRunner().invoke(main, ["check", specs])
        assert r.exit_code == 0, r.output
        frozen.append(gc.get_freeze_count())
    assert frozen[-1] - frozen[1] < 1000, frozen


def _entry_probe(*args: str, before: str = "") -> tuple[bool, int, str]:
    """Runs the `spark` entry point in a fresh process, `before` run first: (collector on at exit,
    objects frozen at exit, what the process printed before)."""
    import subprocess
    import sys

    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('probe', gc.isenabled(), gc.get_freeze_count()))\n"
        f"sys.argv = ['spark', *{list(args)!r}]\n"
        f"{before}"
        "from spark_dsl.__main__ import main\n"
        "main()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    printed, _, probe = out.stdout.rpartition("probe ")
    enabled, frozen = probe.split()
    return enabled == "True", int(frozen), printed


# Prints how many objects are frozen when a plain check starts: its imports' (spark_dsl.__main__
# freezes them before calling check_plain, which it imports by name after this patch).
_AT_PLAIN_CHECK = (
    "import spark_dsl.check_command as command\n"
    "plain = command.check_plain\n"
    "def counted(paths):\n"
    "    print('imports', gc.get_freeze_count())\n"
    "    plain(paths)\n"
    "command.check_plain = counted\n"
)


def test_the_command_freezes_its_imports_then_its_first_run_and_collects_after() -> None:
    """`spark` imports with the cyclic collector resting and freezes what the imports made (the
    passes over them were about 8 ms of a cold check); the first run's objects are still frozen
    after it, and every command ends with the collector on (`spark lsp` runs for hours). So both
    ways in: click's (`--version`, `check -q`) and a plain check's, which imports less."""
    on_after_version, imported, _ = _entry_probe("--version")
    on_after_check, checked, _ = _entry_probe("check", "-q", "examples")
    on_after_plain, plain_checked, printed = _entry_probe("check", "examples", before=_AT_PLAIN_CHECK)
    assert on_after_version and on_after_check and on_after_plain
    assert imported > 10_000, f"the imports' objects are not frozen ({imported})"
    assert checked > imported + 1_000, f"the run's objects were not frozen too ({checked} vs {imported})"
    plain_imported = int(printed.split("imports ")[1].split()[0])
    assert plain_imported > 5_000, f"a plain check's imports are not frozen ({plain_imported})"
    assert plain_checked > plain_imported + 1_000, f"a plain check's run was not frozen ({plain_checked})"
