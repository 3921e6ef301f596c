"""The hostile suites of tests/test_surface_inventory.py: the project every case runs in, what each
threat class throws at a surface, and the verdict every run must pass.

A case runs in `BASE/proj` (a git repository with a spark.toml, a spec importing a profile, and a
model folder) as the current folder; `BASE/outside` holds files whose only content is SECRET,
reachable through symlinks the cases plant in the project. Every run goes through the real
`spark` command (click's CliRunner, in-process, with an alarm that ends a run over 10 s) and must:
raise nothing, exit 0, 1 or 2, print no traceback or "internal error", show neither SECRET nor
ENV_SECRET (this process's environment, so a read of /proc/self/environ shows it), and leave
every regular file under BASE as it was, apart from new files where the run was told to write.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import time
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from click.testing import CliRunner

from spark_dsl.cli import main

HANG_SECONDS = 10
SECRET = "TOPSECRET-31f0c9a7"
ENV_SECRET = "TOPSECRET-ENV-5b2e8d41"
SECRET_TEXT = f"{SECRET} leaked\n"  # every parser stops on line 1, so a reader that quotes the bad line shows it
MODEL = Path(__file__).resolve().parent / "data" / "hf_configs" / "llama-3.1-8b"

SHARED = "profile team {\n  serve {\n    port = 8000\n  }\n}\n"
SPEC = (
    'import "shared.spark"\n\ndeployment muse extends team {\n'
    "  model       = muse-spark-open\n  accelerator = b200\n}\n"
)
# A valid, canonically formatted spec under a hostile name (`spark fmt` leaves it alone).
PLAIN = "deployment plain {\n  model       = muse-spark-open\n  accelerator = b200\n}\n"
HUGE = 17 * 1024 * 1024  # past the spec cap (10 MiB) and model import's JSON cap (16 MiB)
DEEP = "[" * 100_000
EXPONENTIAL = "*a" * 14 + "*b"
LONG_NAME = "a" * 60


class Hang(Exception):
    """A run took longer than HANG_SECONDS (an Exception, so CliRunner records it)."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang(f"the run took longer than {HANG_SECONDS} s")


@contextmanager
def hang_guard() -> Iterator[None]:
    """For a fixture: SIGALRM ends a run that hangs (a FIFO opened for writing blocks in open())."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---- the project -------------------------------------------------------------------------


@dataclass
class Project:
    base: Path  # holds proj and outside: everything the verdict hashes
    root: Path  # the project, the runs' current folder
    outside: Path

    def at(self, relative: str) -> bytes:
        """A path relative to the project, as the verdict's snapshot spells it."""
        return os.path.normpath(os.fsencode(self.root) + b"/" + os.fsencode(relative))


def make_project(base: Path) -> Project:
    root, outside = base / "proj", base / "outside"
    (root / ".git").mkdir(parents=True)
    (root / "spark.toml").write_text("# the project's settings\n", encoding="utf-8")
    (root / "spec.spark").write_text(SPEC, encoding="utf-8")
    (root / "shared.spark").write_text(SHARED, encoding="utf-8")
    shutil.copytree(MODEL, root / "model")
    outside.mkdir()
    for name in ("x.spark", "config.json", "spark.toml", "pyproject.toml", "manifest.json"):
        (outside / name).write_text(SECRET_TEXT, encoding="utf-8")
    (outside / "model.safetensors.index.json").write_text(SECRET_TEXT, encoding="utf-8")
    return Project(base, root, outside)


def plain_content(leaf: str) -> bytes:
    """Valid content for a file named `leaf`: a spec, or the model's own JSON."""
    if leaf.endswith(".json"):
        return (MODEL / leaf).read_bytes() if (MODEL / leaf).exists() else b"{}"
    return PLAIN.encode("utf-8")


def place(project: Project, path: Path, case: str, leaf_content: bytes) -> None:
    """Makes `path` the hostile file of a case: a link out of the project, a FIFO, a link to
    /proc/self/environ, a sparse file past every cap, 100,000 brackets, bytes that are not UTF-8."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    if case == "symlink-out":
        target = project.outside / path.name
        path.symlink_to(target if target.exists() else project.outside / "x.spark")
    elif case == "fifo":
        os.mkfifo(path)
    elif case == "proc":
        path.symlink_to("/proc/self/environ")
    elif case == "huge":
        with path.open("wb") as handle:
            handle.truncate(HUGE)
    elif case == "deep":
        prefix = b"a = " if path.suffix == ".toml" else b""
        path.write_bytes(prefix + DEEP.encode())
    elif case == "not-utf8":
        path.write_bytes(b"\xff\xfe" + leaf_content + b"\xc0")
    else:
        raise AssertionError(f"no such file case {case}")


FILE_CASES = ("symlink-out", "fifo", "proc", "huge", "deep", "not-utf8")
# Named paths also get names no file should have.
INPUT_CASES = ("symlink-out", "symlink-folder-out", "fifo", "proc", "huge", "deep", "nul", "not-utf8-name", "newline")


def input_value(project: Project, case: str, leaf: str) -> str:
    """The path, relative to the project, a named input surface gets for a case (its file made)."""
    cases = project.root / "cases"
    if case == "symlink-folder-out":
        cases.mkdir(exist_ok=True)
        (cases / "linkdir").symlink_to(project.outside)
        return "cases/linkdir"
    if case == "nul":
        return f"cases/nul\x00/{leaf}"
    if case in ("not-utf8-name", "newline"):
        folder = os.fsdecode(b"\xff") if case == "not-utf8-name" else "new\nline"
        path = cases / folder / leaf
        path.parent.mkdir(parents=True)
        path.write_bytes(plain_content(leaf))
        return f"cases/{folder}/{leaf}"
    place(project, cases / case / leaf, case, plain_content(leaf))
    return f"cases/{case}/{leaf}"


# ---- running and judging -----------------------------------------------------------------


@dataclass
class Outcome:
    args: list[str]
    exit_code: int
    stdout: bytes
    stderr: bytes
    error: str | None  # a traceback, when the run raised


def invoke(args: list[str], stdin: str | None = None) -> Outcome:
    """Runs `spark ARGS` in-process; SIGALRM ends it after HANG_SECONDS."""
    signal.alarm(HANG_SECONDS)
    try:
        result = CliRunner().invoke(main, args, input=stdin)
    finally:
        signal.alarm(0)
    error = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        error = "".join(traceback.format_exception(*result.exc_info))
    return Outcome(args, result.exit_code, result.stdout_bytes, result.stderr_bytes, error)


def snapshot(base: Path) -> dict[bytes, str]:
    """Every regular file under base (symlinks not followed), by path: its hash, or its size and
    modification time when over 1 MiB (the sparse huge files)."""
    found: dict[bytes, str] = {}
    for folder, _dirs, names in os.walk(os.fsencode(base)):
        for name in names:
            path = os.path.join(folder, name)
            status = os.lstat(path)
            if not stat.S_ISREG(status.st_mode):  # regular files only (no FIFO, no link)
                continue
            if status.st_size > 1024 * 1024:
                found[path] = f"{status.st_size}:{status.st_mtime_ns}"
            else:
                with open(path, "rb") as handle:
                    found[path] = hashlib.sha256(handle.read()).hexdigest()
    return found


def _leaks(project: Project, before: dict[bytes, str], after: dict[bytes, str]) -> list[str]:
    """Files the run wrote (new or changed) that hold a secret."""
    out = []
    for path, digest in after.items():
        if before.get(path) != digest and os.path.getsize(path) < 64 * 1024 * 1024:
            with open(path, "rb") as handle:
                data = handle.read()
            if SECRET.encode() in data or ENV_SECRET.encode() in data:
                out.append(f"{os.fsdecode(path)} holds a secret read from outside the project")
    return out


def changes(project: Project, before: dict[bytes, str], allowed: Iterable[str] = ()) -> list[str]:
    """Files changed or removed, and files created outside the `allowed` outputs (relative paths)."""
    after = snapshot(project.base)
    prefixes = [project.at(a) for a in allowed]
    out = [f"{os.fsdecode(p)} was changed or removed" for p, d in before.items() if after.get(p) != d]
    for path in after.keys() - before.keys():
        if not any(path == p or path.startswith(p + b"/") for p in prefixes):
            out.append(f"{os.fsdecode(path)} was created")
    return out + _leaks(project, before, after)


def problems(outcome: Outcome) -> list[str]:
    """What is wrong with one run's outcome, apart from the files it touched."""
    found = []
    if outcome.error is not None:
        found.append(f"raised:\n{outcome.error[-3000:]}")
    if outcome.exit_code not in (0, 1, 2):
        found.append(f"exit code {outcome.exit_code}")
    text = (outcome.stdout + outcome.stderr).decode("utf-8", "replace")
    if "Traceback" in text:
        found.append("a traceback in the output")
    if "internal error" in text.lower():
        found.append("an internal error in the output")
    for secret in (SECRET, ENV_SECRET):
        if secret in text:
            found.append(f"the output shows {secret}, read from outside the project")
    return found


def judge(project: Project, outcome: Outcome, before: dict[bytes, str], allowed: Iterable[str] = ()) -> None:
    found = problems(outcome) + changes(project, before, allowed)
    shown = (outcome.stdout + outcome.stderr)[-1500:].decode("utf-8", "replace")
    assert not found, f"spark {outcome.args!r}:\n- " + "\n- ".join(found) + f"\noutput (end):\n{shown}"


def run_and_judge(project: Project, args: list[str], stdin: str | None = None, allowed: Iterable[str] = ()) -> Outcome:
    before = snapshot(project.base)
    started = time.monotonic()
    outcome = invoke(args, stdin)
    assert time.monotonic() - started < HANG_SECONDS + 1
    judge(project, outcome, before, allowed)
    return outcome
