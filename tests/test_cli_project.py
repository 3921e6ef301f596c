"""Project roots and configuration through the real `spark` command, from folders other than the
root and outside any repository (pytest's tmp_path is in none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import CLEAN, ERROR, WARNING, amd_repository, spark, write

from spark_dsl.project import BY_GIT, BY_OWN_FOLDER, BY_PYPROJECT, BY_SPARK_TOML, Projects

# ---- root discovery ------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker",
    [
        {".git": ""},
        {"spark.toml": ""},
        {"deploy/spark.toml": "# settings of the deploy folder\n"},
        {"pyproject.toml": '[project]\nname = "x"\n\n[tool.spark]\nwarnings-as-errors = false\n'},
    ],
    ids=["git", "spark.toml", "nested-spark.toml", "pyproject-tool-spark"],
)
def test_a_spec_checks_from_its_own_folder_with_imports_up_to_the_project_root(
    tmp_path: Path, marker: dict[str, str]
) -> None:
    amd = amd_repository(tmp_path, marker)
    r = spark("check", "mi355x.spark", cwd=amd)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "checked 1 file: no problems\n"
    # The same from the repository's top and from a sibling folder.
    assert spark("check", "deploy/specs/amd/mi355x.spark", cwd=tmp_path).returncode == 0
    (tmp_path / "deploy/other").mkdir()
    assert spark("check", "../specs/amd/mi355x.spark", cwd=tmp_path / "deploy/other").returncode == 0


def test_without_a_marker_the_file_s_folder_is_the_root(tmp_path: Path) -> None:
    # A pyproject.toml without [tool.spark] is no marker, so nothing above the file is one.
    amd = amd_repository(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n'})
    r = spark("check", "mi355x.spark", "--format", "json", cwd=amd)
    assert r.returncode == 1
    (d,) = [d for d in json.loads(r.stdout)["diagnostics"] if d["code"] == "SPK112"]
    assert (d["file"], d["line"]) == ("mi355x.spark", 1)
    assert "--root" in d["help"]


def test_the_nearest_marker_wins(tmp_path: Path) -> None:
    # A spark.toml in the amd folder makes it a project of its own, under the repository.
    amd = amd_repository(tmp_path, {".git": "", "deploy/specs/amd/spark.toml": ""})
    r = spark("check", "mi355x.spark", "--format", "json", cwd=amd)
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == ["SPK112", "SPK115"]
    # --root still overrides discovery.
    assert spark("check", "mi355x.spark", "--root", "../..", cwd=amd).returncode == 0


def test_a_file_outside_the_current_folder_is_checked_in_its_own_project(tmp_path: Path) -> None:
    write(tmp_path, {"other/dir/x.spark": CLEAN.format(name="x"), "work/notes.txt": ""})
    r = spark("check", "../other/dir/x.spark", cwd=tmp_path / "work")
    assert r.returncode == 0, r.stdout + r.stderr  # exit 2, "outside the project root", before
    assert r.stdout == "checked 1 file: no problems\n"


def test_root_outside_which_a_named_file_lies_is_still_a_usage_error(tmp_path: Path) -> None:
    write(tmp_path, {"a/x.spark": CLEAN.format(name="x"), "b/y.spark": CLEAN.format(name="y")})
    r = spark("check", "../b/y.spark", "--root", ".", cwd=tmp_path / "a")
    assert r.returncode == 2
    assert "outside the project root" in r.stderr


def test_specs_of_two_projects_each_keep_their_own_root(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "one/spark.toml": "",
            "one/shared.spark": "profile team {\n  gpus = 8\n}\n",
            "one/specs/a.spark": 'import "../shared.spark"\n'
            + CLEAN.format(name="a").replace("a {", "a extends team {"),
            "two/spark.toml": "",
            "two/specs/b.spark": 'import "../../one/shared.spark"\n'
            + CLEAN.format(name="b").replace("b {", "b extends team {"),
        },
    )
    r = spark("check", "one", "two", "--format", "json", cwd=tmp_path)
    codes = [(d["file"], d["code"]) for d in json.loads(r.stdout)["diagnostics"]]
    assert codes == [("two/specs/b.spark", "SPK112"), ("two/specs/b.spark", "SPK115")]


def test_discovery_names_what_it_found(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "g/.git": "",
            "g/x.spark": "",
            "t/spark.toml": "",
            "t/x.spark": "",
            "p/pyproject.toml": "[tool.spark]\n",
            "p/x.spark": "",
            "n/x.spark": "",
            "broken/pyproject.toml": "[tool.spark\n",  # still spark's: loading it reports the TOML error
            "broken/x.spark": "",
        },
    )
    projects = Projects()
    found = {name: projects.of(tmp_path / name / "x.spark") for name in ("g", "t", "p", "n", "broken")}
    assert {name: p.found_by for name, p in found.items()} == {
        "g": BY_GIT,
        "t": BY_SPARK_TOML,
        "p": BY_PYPROJECT,
        "n": BY_OWN_FOLDER,
        "broken": BY_PYPROJECT,
    }
    assert {name: p.root for name, p in found.items()} == {name: tmp_path / name for name in found}
    assert [d.code for d in found["broken"].settings.diagnostics] == ["SPK603"]


# ---- configuration ---------------------------------------------------------------------


def _json(r: object) -> dict[str, object]:
    doc = json.loads(r.stdout)  # type: ignore[attr-defined]
    assert isinstance(doc, dict)
    return doc


def test_an_unknown_key_is_located_with_a_did_you_mean_and_a_fix(tmp_path: Path) -> None:
    amd = amd_repository(tmp_path, {"spark.toml": '# team settings\nwarnings-as-errors = true\nignores = ["SPK903"]\n'})
    r = spark("check", "mi355x.spark", "--format", "json", cwd=amd)
    assert r.returncode == 1
    (d,) = _json(r)["diagnostics"]  # type: ignore[misc]
    assert {k: d[k] for k in ("code", "severity", "file", "line", "column", "end_column")} == {
        "code": "SPK601",
        "severity": "error",
        "file": "../../../spark.toml",
        "line": 3,
        "column": 1,
        "end_column": 8,
    }
    assert d["message"] == "unknown configuration key `ignores`; did you mean `ignore`?"
    assert d["fixes"][0]["edits"][0]["text"] == "ignore"
    # The text format quotes the line of the configuration file.
    text = spark("check", "mi355x.spark", cwd=amd).stdout
    assert '3 | ignores = ["SPK903"]\n  | ^^^^^^^ not a spark setting' in text


def test_an_unknown_key_in_tool_spark_points_into_pyproject(tmp_path: Path) -> None:
    amd = amd_repository(
        tmp_path,
        {"pyproject.toml": '[project]\nname = "x"\n\n[tool.spark]\n  selcet = ["SPK4"]\n\n[tool.other]\nx = 1\n'},
    )
    (d,) = _json(spark("check", "--format", "json", cwd=amd))["diagnostics"]  # type: ignore[misc]
    assert (d["code"], d["file"], d["line"], d["column"]) == ("SPK601", "../../../pyproject.toml", 5, 3)
    assert "did you mean `select`?" in d["message"]


@pytest.mark.parametrize(
    ("toml", "line", "column", "fragment"),
    [
        ('warnings-as-errors = "yes"\n', 1, 22, 'takes `true` or `false`, not the string "yes"'),
        ('ignore = ["SPK903", "SPK9O3"]\n', 1, 21, '"SPK9O3" is not a diagnostic code'),
        ('select = ["spk903"]\n', 1, 11, "did you mean `SPK903`?"),
        ('ignore = ["SPK103"]\n', 1, 11, "names only errors, and errors cannot be ignored"),
        ('[per-path-ignores]\n"legacy/**" = "SPK903"\n', 2, 15, "takes a list of codes"),
        ('root = "specs"\n', 1, 8, "does not hold the folder of"),
        ('extend-exclude = ["ok", ""]\n', 1, 25, "holds an empty pattern"),
        ("output = 3\n", 1, 10, "takes a string"),
    ],
)
def test_a_value_spark_cannot_use_is_spk602_at_the_value(
    tmp_path: Path, toml: str, line: int, column: int, fragment: str
) -> None:
    write(tmp_path, {"spark.toml": toml, "specs/a.spark": CLEAN.format(name="a")})
    r = spark("check", "--format", "json", cwd=tmp_path / "specs")
    assert r.returncode == 1
    (d,) = _json(r)["diagnostics"]  # type: ignore[misc]
    assert (d["code"], d["file"], d["line"], d["column"]) == ("SPK602", "../spark.toml", line, column), d
    assert fragment in d["message"] and d["help"]


@pytest.mark.parametrize(
    ("toml", "line", "column"),
    [('ignore = ["SPK903"\n', 2, 1), ("a = 1\na = 2\n", 2, 6), ("\xff", 1, 1)],
    ids=["unclosed", "twice", "not-utf8"],
)
def test_a_configuration_that_is_not_toml_is_spk603(tmp_path: Path, toml: str, line: int, column: int) -> None:
    write(tmp_path, {"specs/a.spark": CLEAN.format(name="a")})
    (tmp_path / "spark.toml").write_bytes(toml.encode("latin-1"))
    r = spark("check", "a.spark", "--format", "json", cwd=tmp_path / "specs")
    assert r.returncode == 1
    (d,) = _json(r)["diagnostics"]  # type: ignore[misc]
    assert (d["code"], d["line"], d["column"]) == ("SPK603", line, column)


def test_select_ignore_and_per_path_ignores_hide_warnings_never_errors(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".git": "",
            "specs/new/a.spark": WARNING.format(name="a"),
            "specs/legacy/b.spark": WARNING.format(name="b"),
            "specs/legacy/c.spark": ERROR.format(name="c"),
        },
    )

    def reported(toml: str) -> list[tuple[str, str]]:
        (tmp_path / "spark.toml").write_text(toml, encoding="utf-8")
        r = spark("check", "--format", "json", cwd=tmp_path / "specs")
        return [(d["file"], d["code"]) for d in _json(r)["diagnostics"]]  # type: ignore[attr-defined]

    everything = [("legacy/b.spark", "SPK903"), ("legacy/c.spark", "SPK103"), ("new/a.spark", "SPK903")]
    assert reported("") == everything
    assert reported('ignore = ["SPK9"]\n') == [("legacy/c.spark", "SPK103")]
    assert reported('select = ["SPK4"]\n') == [("legacy/c.spark", "SPK103")]
    assert reported('select = ["SPK903"]\n') == everything
    assert reported('[per-path-ignores]\n"specs/legacy/**" = ["SPK903", "SPK4"]\n') == everything[1:]
    assert reported('[per-path-ignores]\n"b.spark" = ["SPK903"]\n') == everything[1:]


def test_warnings_as_errors_fails_the_run(tmp_path: Path) -> None:
    write(tmp_path, {"specs/a.spark": WARNING.format(name="a"), "spark.toml": ""})
    assert spark("check", cwd=tmp_path / "specs").returncode == 0
    (tmp_path / "spark.toml").write_text("warnings-as-errors = true\n", encoding="utf-8")
    r = spark("check", cwd=tmp_path / "specs")
    assert r.returncode == 1 and "warning[SPK903]" in r.stdout


def test_include_and_exclude_decide_what_a_folder_scan_reads(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "spark.toml": 'extend-exclude = ["legacy", "drafts/*.spark"]\n',
            "specs/a.spark": CLEAN.format(name="a"),
            "specs/legacy/b.spark": ERROR.format(name="b"),
            "drafts/c.spark": ERROR.format(name="c"),
            "drafts/deeper/d.spark": CLEAN.format(name="d"),
            "node_modules/e.spark": ERROR.format(name="e"),
        },
    )
    r = spark("check", "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert _json(r)["files"] == ["drafts/deeper/d.spark", "specs/a.spark"]
    # A file named on the command line is checked whatever the patterns say.
    assert spark("check", "specs/legacy/b.spark", cwd=tmp_path).returncode == 1
    # `include` replaces the default `*.spark`; fmt scans the same way.
    (tmp_path / "spark.toml").write_text('include = ["specs/*.spark"]\n', encoding="utf-8")
    assert _json(spark("check", "--format", "json", cwd=tmp_path))["files"] == ["specs/a.spark"]
    (tmp_path / "specs/a.spark").write_text(CLEAN.format(name="a").replace("  model", "model"), encoding="utf-8")
    r = spark("fmt", "--check", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (1, "would reformat specs/a.spark\n")


def test_root_setting_lets_imports_reach_above_the_configuration(tmp_path: Path) -> None:
    # Up to the repository root (`.git`), never past it (tests/test_input_gate.py).
    amd = amd_repository(tmp_path, {"deploy/specs/amd/spark.toml": 'root = ".."\n', ".git/HEAD": ""})
    assert spark("check", "mi355x.spark", cwd=amd).returncode == 0
    (amd / "spark.toml").write_text('root = "."\n', encoding="utf-8")
    assert spark("check", "mi355x.spark", cwd=amd).returncode == 1


def test_output_setting_is_where_build_writes_from_any_folder(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "spark.toml": 'output = "deploy/out"\n',
            "specs/amd/a.spark": CLEAN.format(name="a").replace("}\n", "  target shell {}\n}\n"),
        },
    )
    r = spark("build", "a.spark", cwd=tmp_path / "specs/amd")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "deploy/out/a/serve.sh").is_file()
    assert not (tmp_path / "specs/amd/build").exists()
    # -o still wins, relative to the current folder.
    assert spark("build", "a.spark", "-o", "here", cwd=tmp_path / "specs/amd").returncode == 0
    assert (tmp_path / "specs/amd/here/a/serve.sh").is_file()


def test_show_settings_says_what_applies_and_where_it_came_from(tmp_path: Path) -> None:
    amd = amd_repository(tmp_path, {".git": "", "spark.toml": '# team\n\nignore = ["SPK4"]\noutput = "out"\n'})
    r = spark("check", "--show-settings", cwd=amd)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == [f"project root: {tmp_path}", "  found by: spark.toml", "  configuration: ../../../spark.toml"]
    assert '  ignore             = ["SPK4"]  # ../../../spark.toml:3:1' in lines
    assert '  output             = "out"  # ../../../spark.toml:4:1' in lines
    assert "  warnings-as-errors = false  # default" in lines
    assert lines[-2:] == ["  files (1):", "    mi355x.spark"]
    doc = json.loads(spark("check", "--show-settings", "--format", "json", "--deny", "warnings", cwd=amd).stdout)
    (project,) = doc["projects"]
    assert project["root"] == str(tmp_path) and project["files"] == ["mi355x.spark"]
    assert project["settings"]["ignore"] == {
        "value": ["SPK4"],
        "origin": {"kind": "file", "file": "../../../spark.toml", "line": 3, "column": 1},
    }
    assert project["settings"]["warnings-as-errors"] == {
        "value": True,
        "origin": {"kind": "command line", "option": "--deny warnings"},
    }
    assert project["settings"]["select"] == {"value": None, "origin": {"kind": "default"}}


def test_show_settings_reports_a_broken_configuration(tmp_path: Path) -> None:
    write(tmp_path, {"spark.toml": "ignroe = []\n", "a.spark": CLEAN.format(name="a")})
    r = spark("check", "--show-settings", cwd=tmp_path)
    assert r.returncode == 1
    assert "  ignore             = []  # default" in r.stdout
    assert "error[SPK601]: unknown configuration key `ignroe`; did you mean `ignore`?" in r.stdout


# Texts a spark.toml may hold: blank ones and comments (read without tomllib), and what must still
# go to tomllib: settings, a bare carriage return, a comment holding a control or a tab.
TOML_TEXTS = [
    "",
    "\n\n",
    "   \n\t\n",
    "\r\n\r\n",
    "# the project's root\n",
    "  # indented comment\r\n\n# another: ünïcode ok\n",
    "#",
    "# no newline at the end",
    "\r",
    "  \r",
    "\r\r\n",
    "# ok\r\n# cr\r",
    "# a\rb\n",
    "# a\x00b\n",
    "# a\x7fb\n",
    "# a\tb\n",
    "#\u200b zero-width\n",
    "x = 1\n",
    "# comment\nwarnings-as-errors = true\n",
    "[tool]\n",
    "= 1\n",
]


@pytest.mark.parametrize("text", TOML_TEXTS)
def test_a_blank_configuration_reads_as_tomllib_reads_it(text: str) -> None:
    import tomllib

    from spark_dsl.config import _toml

    try:
        expected: object = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        expected = str(err)
    found = _toml(text)
    assert (str(found) if isinstance(found, ValueError) else found) == expected


def test_an_empty_spark_toml_is_read_without_tomllib(tmp_path: Path) -> None:
    """An empty `spark.toml` marks the root: it costs no tomllib import (3% of a cold check)."""
    import subprocess
    import sys

    probe = (
        "import sys\nsys.argv = ['spark', 'check', 'a.spark']\n"
        "import atexit\natexit.register(lambda: print('tomllib' in sys.modules))\n"
        "from spark_dsl.__main__ import main\nmain()\n"
    )
    write(tmp_path, {"a.spark": CLEAN.format(name="a"), "spark.toml": "# root\n"})
    for toml, imported in (("# root\n", "False"), ("warnings-as-errors = true\n", "True")):
        (tmp_path / "spark.toml").write_text(toml, encoding="utf-8")
        r = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.splitlines()[-1] == imported, r.stdout + r.stderr
