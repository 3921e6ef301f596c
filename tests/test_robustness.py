"""No input makes spark crash or hang: a fixed-seed corpus of 10,000+ hostile inputs through the CLI.

Every input runs one of `check` (four formats), `plan` (two), `build` (write and
`--check`) or `fmt` (write, `--check`, `--diff`). The corpus mutates and splices the
real specs and adds the shapes that used to crash or hang: nesting thousands of levels
deep, numbers of hundreds of digits, bytes that are not UTF-8, `extends` graphs with
diamonds and cycles, imports of FIFOs, directories, symlink loops, names too long and
NUL bytes, and specs under names that are not UTF-8, hold control characters or are
not regular files at all.

The bulk runs in-process through click's CliRunner, the same command functions and
exit codes as the installed `spark`, with an alarm that fails any run over 10 s; a
stratified sample of every shape runs again through real subprocesses. For every run:
exit 0, 1 or 2 (2 only where the command line itself is wrong), no traceback or
internal error, output that is valid UTF-8, JSON that parses, and every file `fmt`
accepts formatted idempotently to the same meaning.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from click.testing import CliRunner

from spark_dsl.cli import main
from spark_dsl.format import format_text, shape
from spark_dsl.pipeline import run
from spark_dsl.syntax.parser import parse

REPO = Path(__file__).resolve().parent.parent
# Every spec and fixture but the two 30 KB SPK124 chains, whose prefixes and mutations would
# cost more than the rest of the corpus together (tests/test_limits.py covers long chains).
SEEDS = [
    path
    for path in (
        sorted((REPO / "examples").rglob("*.spark"))
        + sorted((REPO / "specs").rglob("*.spark"))
        + sorted((REPO / "tests/fixtures").rglob("*.spark"))
    )
    if path.stat().st_size < 8_000
]
INPUTS = 10_000
SUBPROCESS_RUNS = 207
HANG_SECONDS = 10
NOISE = ['"', "{", "}", "=", "+", "(", ")", "[", "]", ",", "\\", "#", "\n", "K", "1.", "_", "é", "\x00", "tp"]
NOISE += ["\\u{0}", "\u202e", "\x1b[2J", "extends", "import ", "profile p ", "9" * 30, "\r", "\ufeff"]
MAIN = "specs/x/fuzz.spark"  # `../profiles/team.spark` (specs/) and `profiles/common.spark` (examples/) resolve


def check_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.spark"
    result = run([path], tmp_path, overlays={path: text})
    for d in result.diagnostics:
        assert d.code.startswith("SPK") and d.help, d


def test_every_prefix_of_every_seed(tmp_path: Path) -> None:
    for seed in SEEDS:
        text = seed.read_text(encoding="utf-8")
        for cut in range(0, len(text), 7):
            check_text(tmp_path, text[:cut])


def test_binary_and_empty_files(tmp_path: Path) -> None:
    (tmp_path / "bin.spark").write_bytes(b"\xff\xfe\x00deployment")
    (tmp_path / "empty.spark").write_bytes(b"")
    result = run([tmp_path / "bin.spark", tmp_path / "empty.spark"], tmp_path)
    assert [d.code for d in result.diagnostics] == ["SPK007"]


# ---- the corpus ----------------------------------------------------------------


@dataclass
class Case:
    """One input: the spec's bytes, where it is written, extra files, and the command to run."""

    shape: str
    data: bytes
    name: str = MAIN
    special: str | None = None  # the spec path is made something other than a regular file
    extra: dict[str, bytes] = field(default_factory=dict)
    command: list[str] = field(default_factory=list)

    @property
    def usage_error_allowed(self) -> bool:
        return self.special is not None


COMMANDS = (
    ["check", "--format", "json"],
    ["check"],
    ["check", "--format", "sarif"],
    ["check", "--format", "github"],
    ["plan", "--format", "json"],
    ["plan"],
    ["build", "-o", "out", "--format", "json"],
    ["build", "-o", "out", "--check"],
    ["fmt"],
    ["fmt", "--check"],
    ["fmt", "--diff"],
)
JSON_COMMANDS = {("check", "json"), ("check", "sarif"), ("plan", "json"), ("build", "json")}


def mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(chars) + 1)
        op = rng.random()
        if op < 0.4 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(pos, rng.choice(NOISE))
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(NOISE)
    return "".join(chars)


def splice(rng: random.Random, a: str, b: str) -> str:
    la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    return "".join(la[: rng.randint(0, len(la))] + lb[rng.randint(0, len(lb)) :])


HEAD = "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n"


def nested(rng: random.Random) -> str:
    depth = rng.choice([rng.randint(1, 40), rng.randint(28, 36), 10_000])
    opener, closer = rng.choice([("x { ", "}"), ("x = [", "]"), ("parallel = tp(", ")"), ("a { b = [f(", ")]}")])
    inner = opener * depth + closer * depth
    return HEAD + "  serve { " + inner + " }\n}\n"


def huge_number(rng: random.Random, text: str) -> str:
    digits = "".join(rng.choice("0123456789_") for _ in range(rng.choice([1, 16, 17, 40, 64, 65, 500])))
    number = "9" + digits.strip("_").replace("__", "_") + rng.choice(["", "", ".5", "K", "GiB", "h", "m"])
    spots = [i for i in range(1, len(text)) if text[i].isdigit() and not text[i - 1].isalnum()]
    if not spots:
        return HEAD + f"  gpus = {number}\n}}\n"
    at = rng.choice(spots)
    end = at
    while end < len(text) and (text[end].isalnum() or text[end] in "._"):
        end += 1
    return text[:at] + number + text[end:]


def not_utf8(rng: random.Random, text: str) -> bytes:
    data = bytearray(text.encode("utf-8"))
    for _ in range(rng.randint(1, 3)):
        data.insert(rng.randrange(len(data) + 1), rng.randint(0x80, 0xFF))
    return bytes(data)


def extends_graph(rng: random.Random) -> str:
    count = rng.randint(1, 12)
    lines = []
    for i in range(count):
        parents = rng.sample(range(count + 1), rng.randint(0, min(3, count)))  # `p{count}` is unknown
        ext = f" extends {', '.join(f'p{j}' for j in parents)}" if parents else ""
        lines.append(f"profile p{i}{ext} {{ gpus = {rng.randint(1, 9)} }}")
    lines.append(f"deployment d extends p{rng.randrange(count)} {{ model = muse-spark-open accelerator = b200 }}")
    return "\n".join(lines) + "\n"


# Import targets, each made (by `prepare`) into the thing its name says.
IMPORTS = [
    "../profiles/team.spark",
    "profiles/common.spark",
    "missing.spark",
    "a" * 300 + ".spark",
    "ok\\u{0}.spark",
    "loop.spark",
    "fifo.spark",
    "folder.spark",
    "../../../outside.spark",
    "/dev/zero",
    "fuzz.spark",
    "chain0.spark",
    "escape.spark",
    "big.spark",
]


def imports(rng: random.Random, text: str) -> str:
    chosen = rng.sample(IMPORTS, rng.randint(1, 3))
    return "".join(f'import "{target}"\n' for target in chosen) + text


# Spec names other than MAIN: odd but regular files, and paths that are no regular file at all.
ODD_NAMES = [
    os.fsdecode(b"specs/x/bad\xff\xfe.spark"),
    "specs/x/new\nline\x1b[31m.spark",
    "specs/x/" + "n" * 240 + ".spark",
    "specs/x/space and é.spark",
    "specs/x/-dash.spark",
]
SPECIAL = ["fifo", "folder", "loop", "dev", "too-long", "escape", "missing", "empty-folder"]


def corpus(rng: random.Random, texts: list[str]) -> Iterator[Case]:
    makers: list[tuple[str, float, Callable[[], Case]]] = [
        ("mutation", 0.45, lambda: Case("mutation", mutate(rng, rng.choice(texts)).encode())),
        ("splice", 0.08, lambda: Case("splice", splice(rng, rng.choice(texts), rng.choice(texts)).encode())),
        ("nesting", 0.07, lambda: Case("nesting", nested(rng).encode())),
        ("huge-number", 0.1, lambda: Case("huge-number", huge_number(rng, rng.choice(texts)).encode())),
        ("not-utf8", 0.05, lambda: Case("not-utf8", not_utf8(rng, rng.choice(texts)))),
        ("extends", 0.08, lambda: Case("extends", extends_graph(rng).encode())),
        ("imports", 0.09, lambda: Case("imports", imports(rng, rng.choice(texts)).encode())),
        ("odd-name", 0.04, lambda: Case("odd-name", rng.choice(texts).encode(), name=rng.choice(ODD_NAMES))),
        ("not-a-file", 0.04, lambda: Case("not-a-file", b"", special=rng.choice(SPECIAL))),
    ]
    weights = [w for _, w, _ in makers]
    for i in range(INPUTS):
        _, _, make = rng.choices(makers, weights)[0]
        case = make()
        case.command = list(COMMANDS[i % len(COMMANDS)])
        yield case


# ---- the project the corpus runs in -----------------------------------------------


def prepare(project: Path) -> None:
    """A project whose imports and special paths are what IMPORTS and SPECIAL name."""
    x = project / "specs" / "x"
    (x / "profiles").mkdir(parents=True)
    (project / "specs" / "profiles").mkdir()
    shutil.copy(REPO / "specs/profiles/team.spark", project / "specs/profiles/team.spark")
    shutil.copy(REPO / "examples/profiles/common.spark", x / "profiles/common.spark")
    (x / "loop.spark").symlink_to("loop2.spark")
    (x / "loop2.spark").symlink_to("loop.spark")
    os.mkfifo(x / "fifo.spark")
    (x / "folder.spark").mkdir()
    (project.parent / "outside.spark").write_text('profile outside { gpus = "TOPSECRET" }\n')
    (x / "escape.spark").symlink_to(project.parent / "outside.spark")
    with (x / "big.spark").open("wb") as big:  # sparse: past the size limit, refused unread
        big.truncate(10 * 1024 * 1024 + 1)
    for i in range(70):  # an import chain past the nesting limit
        link = f'import "chain{i + 1}.spark"\n' if i < 69 else ""
        (x / f"chain{i}.spark").write_text(link + f"profile chain{i} {{ }}\n")
    (x / "empty").mkdir()


def spec_argument(case: Case) -> str:
    special = {
        "fifo": "specs/x/fifo.spark",
        "folder": "specs/x/folder.spark",
        "loop": "specs/x/loop.spark",
        "dev": "/dev/null",
        "too-long": "specs/x/" + "l" * 300 + ".spark",
        "escape": "specs/x/escape.spark",
        "missing": "specs/x/missing.spark",
        "empty-folder": "specs/x/empty",
    }
    return special[case.special] if case.special else case.name


def write_case(project: Path, case: Case) -> None:
    if case.special is None:
        path = project / case.name
        path.unlink(missing_ok=True)
        path.write_bytes(case.data)


def remove_case(project: Path, case: Case) -> None:
    if case.special is None:
        (project / case.name).unlink(missing_ok=True)
    shutil.rmtree(project / "out", ignore_errors=True)


# ---- the verdict on one run ------------------------------------------------------


def meaning(text: str) -> Any:
    module = parse(text, "x").module
    assert module is not None
    return shape(module.statements), sorted(c.text.rstrip() for c in module.comments)


def judge(case: Case, code: int, stdout: bytes, stderr: bytes, project: Path) -> None:
    where = f"{case.shape} {case.command} {case.data[:300]!r} name={case.name!r} special={case.special}"
    both = (stdout + stderr).decode("utf-8", "replace")
    assert "Traceback" not in both and "internal error" not in both, (where, both[-2000:])
    allowed = (0, 1, 2) if case.usage_error_allowed else (0, 1)
    assert code in allowed, (where, code, both[-2000:])
    # The project is writable: a spec or an output that cannot be written is a bug (a long name, say).
    assert "cannot write" not in both and "error[SPK522]" not in both, (where, both[-2000:])
    out = stdout.decode("utf-8")  # strict: raises on output that is not UTF-8
    command, fmt = (
        case.command[0],
        case.command[case.command.index("--format") + 1] if "--format" in case.command else "",
    )
    if (command, fmt) in JSON_COMMANDS and code != 2:
        doc = json.loads(out)
        if command == "check":
            summary = doc["summary"]["errors"] if fmt == "json" else None
            assert summary is None or (summary > 0) == (code == 1), (where, out[-1000:])
    if command == "fmt" and code == 0 and case.special is None and len(case.command) == 1:
        formatted = (project / case.name).read_bytes().decode("utf-8")
        again = format_text(formatted, "x")
        assert again.text == formatted.removeprefix("\ufeff"), (where, "fmt is not idempotent")
        assert meaning(formatted) == meaning(case.data.decode("utf-8").removeprefix("\ufeff")), where


# ---- running it -------------------------------------------------------------------


class Hang(Exception):
    """A run took longer than HANG_SECONDS."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang(f"a run took longer than {HANG_SECONDS} s")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "project"
    root.mkdir()
    prepare(root)
    monkeypatch.chdir(root)
    previous = signal.signal(signal.SIGALRM, _alarm)
    yield root
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_ten_thousand_hostile_inputs_through_the_cli(project: Path) -> None:
    rng = random.Random(20261130)  # fixed: a failure reproduces
    texts = [s.read_text(encoding="utf-8") for s in SEEDS]
    runner = CliRunner()
    cases = list(corpus(rng, texts))
    outcomes: Counter[tuple[str, int]] = Counter()
    for case in cases:
        write_case(project, case)
        args = [case.command[0], spec_argument(case), *case.command[1:]]
        signal.alarm(HANG_SECONDS)
        result = runner.invoke(main, args)
        signal.alarm(0)
        assert result.exception is None or isinstance(result.exception, SystemExit), (case, result.exception)
        judge(case, result.exit_code, result.stdout_bytes, result.stderr_bytes, project)
        outcomes[(case.shape, result.exit_code)] += 1
        remove_case(project, case)
    assert len(cases) >= 10_000
    by_shape = Counter(case.shape for case in cases)
    assert min(by_shape.values()) >= 300, by_shape  # every shape is exercised
    assert outcomes[("mutation", 0)] > 200 and outcomes[("mutation", 1)] > 2000, outcomes  # both outcomes
    assert outcomes[("not-a-file", 2)] > 100, outcomes


def test_a_sample_of_every_shape_through_real_processes(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    texts = [s.read_text(encoding="utf-8") for s in SEEDS]
    cases = list(corpus(rng, texts))
    per_shape = SUBPROCESS_RUNS // 9
    sample: list[Case] = []
    for shape_name in sorted({c.shape for c in cases}):
        sample += [c for c in cases if c.shape == shape_name][:per_shape]
    # Every case runs in a project of its own, so the sample can run two at a time.
    projects = []
    for i, case in enumerate(sample):
        project = tmp_path / f"p{i}" / "project"
        project.mkdir(parents=True)
        prepare(project)
        write_case(project, case)
        projects.append(project)

    def spark(i: int) -> tuple[int, bytes, bytes]:
        case = sample[i]
        args = [case.command[0], spec_argument(case), *case.command[1:]]
        done = subprocess.run(
            [sys.executable, "-m", "spark_dsl", *args],
            cwd=projects[i],
            capture_output=True,
            env={**os.environ, "NO_COLOR": "1"},
            timeout=HANG_SECONDS,
        )
        return done.returncode, done.stdout, done.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(spark, range(len(sample))))
    for case, project, (code, stdout, stderr) in zip(sample, projects, results, strict=True):
        judge(case, code, stdout, stderr, project)
    assert len(sample) >= 200
