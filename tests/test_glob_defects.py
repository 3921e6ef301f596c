"""Issue 31, D4 and D5, through the real `spark` command and the language server over stdio.

D4: an invalid glob (`[z-a]`) in include, exclude, extend-exclude or per-path-ignores raised
`re.error`: a traceback and exit 1 on check and build, exit 3 on fmt, and nothing published by the
language server. It is now SPK602 at the glob, with a help line and a fix, and the run goes on
with the other patterns.

D5: `*a*a*…*b` against a name of 60 `a`s backtracked for minutes. Each run here gets 10 s, a hang
guard rather than a speed requirement (it takes well under a second).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import COLOUR_VARIABLES, SPARK, WARNING, write

sys.path.insert(0, str(Path(__file__).parent / "lsp"))  # the raw stdio client of tests/lsp
import raw_lsp

HANG_GUARD = 10  # seconds
EXPONENTIAL = "*a" * 14 + "*b"
# One error (SPK103): a file that must stay out of the scan.
ERROR = "deployment {name} {{\n  model       = muse-spark-open\n  accelerator = b2000\n}}\n"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real `spark` command; a run over the hang guard fails the test (and is killed)."""
    env = {k: v for k, v in os.environ.items() if k not in COLOUR_VARIABLES}
    return subprocess.run(
        [SPARK, *args], cwd=cwd, capture_output=True, text=True, timeout=HANG_GUARD, env={**env, "NO_COLOR": "1"}
    )


def diagnostics(r: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    found = json.loads(r.stdout)["diagnostics"]
    assert isinstance(found, list)
    return found


# ---- D4: an invalid glob is SPK602, and the run goes on ------------------------------------------------

# For each key: a configuration whose one valid pattern keeps `legacy/` out of the run (or its
# warnings quiet), beside the invalid `[z-a]`.
INVALID = {
    "include": 'include = ["a.spark", "[z-a]"]\n',
    "exclude": 'exclude = ["legacy", "[z-a]"]\n',
    "extend-exclude": 'extend-exclude = ["legacy", "[z-a]"]\n',
    "per-path-ignores": (
        'extend-exclude = ["legacy"]\n\n[per-path-ignores]\n"[z-a]" = ["SPK903"]\n"specs/*" = ["SPK903"]\n'
    ),
}


def project(root: Path, toml: str) -> Path:
    write(
        root, {"spark.toml": toml, "specs/a.spark": WARNING.format(name="a"), "legacy/b.spark": ERROR.format(name="b")}
    )
    return root


def where(toml: str, text: str) -> tuple[int, int]:
    """The 1-based line and column of `text` in `toml`."""
    before = toml[: toml.index(text)]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


@pytest.mark.parametrize("key", list(INVALID))
def test_an_invalid_glob_is_spk602_at_the_glob_and_check_goes_on(tmp_path: Path, key: str) -> None:
    toml = INVALID[key]
    r = run("check", "--format", "json", cwd=project(tmp_path, toml))
    found = diagnostics(r)
    assert r.returncode == 1
    assert json.loads(r.stdout)["files"] == ["specs/a.spark"]  # the valid pattern still applies
    bad = found[0]
    assert (bad["code"], bad["file"], (bad["line"], bad["column"])) == ("SPK602", "spark.toml", where(toml, '"[z-a]"'))
    assert '"[z-a]"' in bad["message"] and "runs backwards" in bad["message"]
    assert bad["help"] == "write the range low to high: `[a-z]`"
    assert bad["fixes"][0]["edits"][0]["text"] == "[a-z]"
    expected = ["SPK602"] if key == "per-path-ignores" else ["SPK602", "SPK903"]
    assert [d["code"] for d in found] == expected


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("[!]", "names no character"),
        ("specs/[a/b]", "holds a `/`"),
        ("a\\u0000b", "NUL"),
        ("x[9-0]y", "runs backwards"),
    ],
)
def test_every_kind_of_invalid_glob_is_a_located_spk602(tmp_path: Path, pattern: str, fragment: str) -> None:
    toml = f'extend-exclude = ["legacy", "{pattern}"]\n'
    r = run("check", "--format", "json", cwd=project(tmp_path, toml))
    (bad, warning) = diagnostics(r)
    assert r.returncode == 1
    assert (bad["code"], bad["line"]) == ("SPK602", 1) and fragment in bad["message"] and bad["help"]
    assert warning["code"] == "SPK903"


def test_build_with_an_invalid_glob_reports_it_and_writes_nothing_broken(tmp_path: Path) -> None:
    r = run("build", "-o", "out", cwd=project(tmp_path, INVALID["extend-exclude"]))
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert r.returncode == 1
    assert 'error[SPK602]: "[z-a]" in `extend-exclude` is not a valid glob' in r.stdout
    assert "= help: write the range low to high: `[a-z]`" in r.stdout


def test_fmt_with_an_invalid_glob_formats_what_the_valid_patterns_keep(tmp_path: Path) -> None:
    root = project(tmp_path, INVALID["extend-exclude"])
    (root / "legacy/b.spark").write_text("deployment b {\nmodel = muse-spark-open\n}\n", encoding="utf-8")
    (root / "specs/a.spark").write_text("deployment a {\nmodel = muse-spark-open\n}\n", encoding="utf-8")
    r = run("fmt", "--check", cwd=root)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    # Exit 1 for "would reformat" (not 3, a crash), and only the file `legacy` does not hide.
    assert (r.returncode, r.stdout) == (1, "would reformat specs/a.spark\n")


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[raw_lsp.RawServer]:
    """A real `spark lsp` over stdio; a wait over the hang guard fails the test (the process is
    killed at the end either way)."""
    monkeypatch.setattr(raw_lsp, "WEDGED", HANG_GUARD)
    started = raw_lsp.start_server(tmp_path)
    try:
        started.initialize()
        yield started
    finally:
        started.close()


def test_the_language_server_publishes_for_a_file_of_a_project_with_an_invalid_glob(
    server: raw_lsp.RawServer, tmp_path: Path
) -> None:
    write(tmp_path, {"spark.toml": '[per-path-ignores]\n"[z-a]" = ["SPK903"]\n'})
    uri = server.open("a.spark", WARNING.format(name="a"))
    # The invalid pattern is dropped, so the warning it would have hidden is published.
    assert [d["code"] for d in server.diagnostics(uri)] == ["SPK903"]
    raw_lsp.assert_clean_session(server)


# ---- D5: no pattern backtracks -----------------------------------------------------------------------


@pytest.mark.parametrize("command", [("check", "--format", "json"), ("fmt", "--check"), ("build", "-o", "out")])
def test_an_exponential_glob_against_a_long_folder_name_finishes(tmp_path: Path, command: tuple[str, ...]) -> None:
    folder = "a" * 60
    write(
        tmp_path, {"spark.toml": f'extend-exclude = ["{EXPONENTIAL}"]\n', f"{folder}/x.spark": WARNING.format(name="x")}
    )
    r = run(*command, cwd=tmp_path)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    if command[0] == "check":
        # The pattern needs a `b`: the folder is not excluded, and its spec is checked.
        assert json.loads(r.stdout)["files"] == [f"{folder}/x.spark"]


def test_the_language_server_answers_with_an_exponential_per_path_glob(
    server: raw_lsp.RawServer, tmp_path: Path
) -> None:
    write(tmp_path, {"spark.toml": f'[per-path-ignores]\n"{EXPONENTIAL}" = ["SPK903"]\n'})
    uri = server.open("a" * 60 + ".spark", WARNING.format(name="a"))
    assert [d["code"] for d in server.diagnostics(uri)] == ["SPK903"]
    raw_lsp.assert_clean_session(server)
