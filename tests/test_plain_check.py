"""A plain `spark check PATH...` runs without click (spark_dsl.__main__.plain_check), and prints and
exits exactly as click's `spark check` does with the same arguments.

Each case runs twice in a fresh process: through the `spark` entry point (`__main__.main`, which
takes the plain way) and through click's command table (`cli.main`, which parses the same argv).
The two must give the same stdout, stderr and exit code; a case where the plain way goes wrong
(a default that differs from click's, a message click writes and the plain way does not) fails.
"""

from __future__ import annotations

import errno
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CLEAN, COLOUR_VARIABLES, ERROR, WARNING

from spark_dsl.__main__ import plain_check

REPO = Path(__file__).resolve().parent.parent
SYNTAX_ERROR = "deployment broken {\n  model = \n}\n"

# The process: set argv, apply the case's patch, then enter one way or the other. `PLAIN` is
# replaced by True (the `spark` entry point) or False (click).
PROGRAM = """
import sys
sys.argv = ["spark", *ARGS]
PATCH
if PLAIN:
    from spark_dsl.__main__ import main
else:
    from spark_dsl.cli import main
main()
"""

# Faults in the run, the same for both ways.
INTERNAL_FAILURE = (
    "import spark_dsl.loader as loader\n"
    "def explode(*args, **kwargs):\n"
    "    raise RuntimeError('boom')\n"
    "loader.Loader.deployments = explode\n"
)
INTERRUPT = (
    "import spark_dsl.pipeline as pipeline\n"
    "def stop(*args, **kwargs):\n"
    "    raise KeyboardInterrupt\n"
    "pipeline.run = stop\n"
)
CLOSED_PIPE = (
    "import errno, spark_dsl.pipeline as pipeline\n"
    "def closed(*args, **kwargs):\n"
    f"    raise BrokenPipeError({errno.EPIPE}, 'Broken pipe')\n"
    "pipeline.collect_paths = closed\n"
)


def _project(root: Path) -> Path:
    (root / "spark.toml").write_text("warnings-as-errors = true\n", encoding="utf-8")
    (root / "clean.spark").write_text(CLEAN.format(name="clean"), encoding="utf-8")
    (root / "error.spark").write_text(ERROR.format(name="error"), encoding="utf-8")
    (root / "warning.spark").write_text(WARNING.format(name="warned"), encoding="utf-8")
    (root / "syntax.spark").write_text(SYNTAX_ERROR, encoding="utf-8")
    sub = root / "sub"
    sub.mkdir()
    (sub / "one.spark").write_text(CLEAN.format(name="one"), encoding="utf-8")
    (sub / "notes.txt").write_text("not a spec\n", encoding="utf-8")
    return root


def _run(cwd: Path, args: list[str], plain: bool, patch: str = "", env: dict[str, str] | None = None) -> tuple:
    program = PROGRAM.replace("ARGS", repr(args)).replace("PATCH", patch).replace("PLAIN", repr(plain))
    base = {k: v for k, v in os.environ.items() if k not in COLOUR_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=cwd, capture_output=True, text=True, env={**base, **(env or {})}
    )
    return done.returncode, done.stdout, done.stderr


CASES = {
    "clean": (["check", "clean.spark"], "", {}),
    "errors and a warning": (["check", "error.spark", "warning.spark"], "", {}),
    "a warning the project makes an error": (["check", "warning.spark"], "", {}),
    "no path: the current folder": (["check"], "", {}),
    "a folder": (["check", "sub"], "", {}),
    "a syntax error": (["check", "syntax.spark", "clean.spark"], "", {}),
    "a path that does not exist": (["check", "clean.spark", "missing.spark"], "", {}),
    "an empty path": (["check", ""], "", {}),
    "colour forced": (["check", "error.spark"], "", {"FORCE_COLOR": "1"}),
    "no colour": (["check", "error.spark"], "", {"NO_COLOR": "1", "FORCE_COLOR": "1"}),
    "an internal failure": (["check", "clean.spark"], INTERNAL_FAILURE, {}),
    "an interrupt": (["check", "clean.spark"], INTERRUPT, {}),
    "a closed pipe": (["check", "clean.spark"], CLOSED_PIPE, {}),
}


@pytest.mark.parametrize("case", CASES)
def test_the_plain_way_prints_and_exits_as_click_does(tmp_path: Path, case: str) -> None:
    args, patch, env = CASES[case]
    root = _project(tmp_path)
    plain = _run(root, args, True, patch, env)
    clicked = _run(root, args, False, patch, env)
    assert plain == clicked
    assert "Traceback" not in plain[2], plain[2]


def test_the_cases_reach_what_they_are_named_for(tmp_path: Path) -> None:
    """The comparison above is only as good as its cases: each reaches its path."""
    root = _project(tmp_path)
    expected = {
        "clean": (0, "no problems"),
        "errors and a warning": (1, "error[SPK103]"),
        "a warning the project makes an error": (1, "warning[SPK903]"),
        "no path: the current folder": (1, "checked 5 files"),
        "a syntax error": (1, "syntax.spark"),
        "a path that does not exist": (2, "missing.spark"),
        "colour forced": (1, "\x1b["),
        "an internal failure": (3, "RuntimeError: boom"),
        "an interrupt": (1, "Aborted!"),
        "a closed pipe": (1, ""),
    }
    for case, (code, text) in expected.items():
        args, patch, env = CASES[case]
        returncode, stdout, stderr = _run(root, args, True, patch, env)
        assert returncode == code and text in stdout + stderr, (case, returncode, stdout, stderr)


@pytest.mark.parametrize(
    ("argv", "environ", "paths"),
    [
        (["check"], {}, (".",)),
        (["check", "a.spark", "specs/"], {}, ("a.spark", "specs/")),
        (["check", ""], {}, None),  # an empty path is click's usage error (issue 31, D11)
        (["check", "-q", "a.spark"], {}, None),
        (["check", "a.spark", "--format", "json"], {}, None),
        (["check", "--", "a.spark"], {}, None),
        (["check", "-"], {}, None),
        (["check", "--fix"], {}, None),
        (["check", "-h"], {}, None),
        (["plan", "a.spark"], {}, None),
        (["--version"], {}, None),
        ([], {}, None),
        (["check", "a.spark"], {"_SPARK_COMPLETE": "zsh_source"}, None),
        (["check", "a.spark"], {"PATH": "/bin", "SPARK_VLLM_PYTHON": "x"}, ("a.spark",)),
    ],
)
def test_only_a_check_with_nothing_but_paths_is_plain(
    argv: list[str], environ: dict[str, str], paths: tuple[str, ...] | None
) -> None:
    assert plain_check(argv, environ) == paths


def test_the_plain_way_passes_what_click_parses_from_the_same_paths() -> None:
    """`check_command.check`'s defaults are the values click parses for every option left out, and
    the options stored in the conventions keep theirs: a new option with another default, or a
    changed one, fails here until the two agree."""
    from spark_dsl import check_command
    from spark_dsl.cli import check as click_check
    from spark_dsl.conventions import KEY, Conventions

    defaults = {
        name: p.default
        for name, p in inspect.signature(check_command.check).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    for argv in ([], ["a.spark", "b.spark"]):
        ctx = click_check.make_context("check", list(argv))
        assert ctx.params == {"paths": plain_check(["check", *argv], {}), **defaults}
        assert ctx.meta.get(KEY, Conventions()) == Conventions()


def test_a_plain_check_imports_no_click(tmp_path: Path) -> None:
    """Nor what only click's commands, or a text to escape, need (the rest of the cold path's
    guard is tests/test_cli_check.py's, through click)."""
    root = _project(tmp_path)
    probe = "import atexit, sys\natexit.register(lambda: print(' '.join(sorted(sys.modules))))\n"
    _, stdout, _ = _run(root, ["check", "clean.spark"], True, probe)
    loaded = set(stdout.splitlines()[-1].split())
    assert "spark_dsl.check_command" in loaded and "spark_dsl.pipeline" in loaded
    for heavy in ("click", "spark_dsl.cli", "spark_dsl.cli_options", "threading", "unicodedata"):
        assert heavy not in loaded, f"a plain `spark check` imports {heavy}"
    _, stdout, _ = _run(root, ["check", "-q", "clean.spark"], True, probe)
    assert "click" in stdout.splitlines()[-1].split(), "an option goes to click"


def test_an_internal_failure_prints_its_text_escaped(tmp_path: Path) -> None:
    """An exception's text may quote a spec's value: an escape sequence in it is shown, not run."""
    root = _project(tmp_path)
    patch = INTERNAL_FAILURE.replace("'boom'", "'boom \\x1b[2J'")
    for plain in (True, False):
        returncode, _, stderr = _run(root, ["check", "clean.spark"], plain, patch)
        assert returncode == 3 and "boom \\u{1b}[2J" in stderr and "\x1b" not in stderr, stderr
