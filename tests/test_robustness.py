"""No input makes spark crash or hang: a fixed-seed corpus of 10,000+ hostile inputs through the CLI.

Every input runs one of `check` (four formats), `plan` (two), `build` (write and
`--check`) or `fmt` (write, `--check`, `--diff`). The corpus mutates and splices the
real specs and adds the shapes that used to crash or hang: nesting thousands of levels
deep, numbers of hundreds of digits, bytes that are not UTF-8, `extends` graphs with
diamonds and cycles, imports of FIFOs, directories, symlink loops, names too long and
NUL bytes, and specs under names that are not UTF-8, hold control characters or are
not regular files at all. Around the spec (tests/robustness_shapes.py): hostile
configuration files (spark.toml and pyproject.toml, also the ones root discovery only
parses), `spark model import` of mutated real config.json files, and `--output-file`
naming one of the run's own inputs.

The bulk runs in-process through click's CliRunner, the same command functions and
exit codes as the installed `spark`, with an alarm that fails any run over 10 s; a
stratified sample of every shape runs again through real subprocesses. For every run:
exit 0, 1 or 2 (2 only where the command line itself is wrong), no traceback or
internal error, output that is valid UTF-8, JSON that parses, every file `fmt`
accepts formatted idempotently to the same meaning, no text of a file outside the project
(SENTINEL) in the output, and no input changed: every file of the project and around it
has the same bytes after the run, except what the run may write (the `out/` folder,
`fmt`'s own file, an output that is no input).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import stat
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
from robustness_shapes import (
    A_FOLDER,
    CLEAN,
    SENTINEL,
    Entry,
    Extra,
    Fifo,
    Folder,
    HardLink,
    Link,
    alias_case,
    config_case,
    model_case,
    sentinels,
)

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
    extra: dict[str, Entry] = field(default_factory=dict)  # more files, written after the spec
    command: list[str] = field(default_factory=list)
    args: list[str] | None = None  # the whole command line (`{root}` is the project), when it is not
    argument: str | None = None  # `COMMAND SPEC OPTIONS`; a path given instead of the spec
    before: tuple[tuple[str, ...], ...] = ()  # commands that must succeed first
    codes: tuple[int, ...] | None = None  # the exit codes allowed, when not the default
    writes: tuple[str, ...] = ()  # files besides out/ and fmt's own the run may write
    keep: tuple[str, ...] = ()  # files under out/ that must not change all the same

    @property
    def usage_error_allowed(self) -> bool:
        return self.special is not None


def shaped(shape: str, extra: Extra, data: bytes = b"") -> Case:
    return Case(
        shape,
        extra.spec if extra.spec is not None else data,
        extra=extra.files,
        args=extra.args,
        argument=extra.argument,
        before=extra.before,
        codes=extra.codes,
        writes=extra.writes,
        keep=extra.keep,
        special="no-spec" if extra.spec is None and not data else None,
    )


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


SHOW_SETTINGS = (["check", "--show-settings"], ["check", "--show-settings", "--format", "json"])


def corpus(rng: random.Random, texts: list[str]) -> Iterator[Case]:
    makers: list[tuple[str, float, Callable[[], Case]]] = [
        ("mutation", 0.33, lambda: Case("mutation", mutate(rng, rng.choice(texts)).encode())),
        ("splice", 0.06, lambda: Case("splice", splice(rng, rng.choice(texts), rng.choice(texts)).encode())),
        ("nesting", 0.05, lambda: Case("nesting", nested(rng).encode())),
        ("huge-number", 0.07, lambda: Case("huge-number", huge_number(rng, rng.choice(texts)).encode())),
        ("not-utf8", 0.04, lambda: Case("not-utf8", not_utf8(rng, rng.choice(texts)))),
        ("extends", 0.06, lambda: Case("extends", extends_graph(rng).encode())),
        ("imports", 0.07, lambda: Case("imports", imports(rng, rng.choice(texts)).encode())),
        ("odd-name", 0.04, lambda: Case("odd-name", rng.choice(texts).encode(), name=rng.choice(ODD_NAMES))),
        ("not-a-file", 0.04, lambda: Case("not-a-file", b"", special=rng.choice(SPECIAL))),
        ("config", 0.12, lambda: shaped("config", config_case(rng, texts))),
        ("model-import", 0.06, lambda: shaped("model-import", model_case(rng))),
        ("output-alias", 0.06, lambda: shaped("output-alias", alias_case(rng, texts))),
    ]
    weights = [w for _, w, _ in makers]
    for i in range(INPUTS):
        _, _, make = rng.choices(makers, weights)[0]
        case = make()
        case.command = list(COMMANDS[i % len(COMMANDS)] if case.args is None else case.args)
        if case.shape == "config" and rng.random() < 0.08:
            case.command = list(rng.choice(SHOW_SETTINGS))
        if case.argument is not None and case.command == ["fmt"]:
            case.command = ["fmt", "--check"]  # a folder's fmt rewrites every spec in it
        yield case


def argv(case: Case, project: Path) -> list[str]:
    if case.args is not None:
        return [arg.replace("{root}", str(project)) for arg in case.args]
    return [case.command[0], spec_argument(case), *case.command[1:]]


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
    (project.parent / "outside.spark").write_text(f'profile outside {{ gpus = "{SENTINEL}" }}\n')
    sentinels(project.parent)
    (project / A_FOLDER).mkdir(parents=True)
    (project / A_FOLDER / "d.spark").write_text(CLEAN)
    (project / "models" / "m").mkdir(parents=True)
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
    if case.argument is not None:
        return case.argument
    return special[case.special] if case.special else case.name


def write_case(project: Path, case: Case) -> None:
    if case.special is None:
        path = project / case.name
        path.unlink(missing_ok=True)
        path.write_bytes(case.data)
    for rel, entry in case.extra.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(entry, bytes):
            path.write_bytes(entry)
        elif isinstance(entry, Link):
            outside = str(project.parent) + "/"
            path.symlink_to(entry.target.replace("@/", outside, 1) if entry.target.startswith("@/") else entry.target)
        elif isinstance(entry, HardLink):
            os.link(project / entry.target, path)
        elif isinstance(entry, Fifo):
            os.mkfifo(path)
        else:
            assert isinstance(entry, Folder)
            path.mkdir()


def remove_case(project: Path, case: Case) -> None:
    if case.special is None:
        (project / case.name).unlink(missing_ok=True)
    for rel in [*case.extra, *case.writes]:
        path = project / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif os.path.lexists(path):
            path.unlink()
    shutil.rmtree(project / "out", ignore_errors=True)


# ---- what the run may not change -------------------------------------------------------

# A file's bytes by its (inode, size, mtime, ctime): a write changes its ctime, which no user
# can set, so the fixed files of the project are read once for the whole corpus.
Stamp = tuple[str, int, int, int, int]
DIGESTS: dict[Stamp, bytes | None] = {}
BIG = 1024 * 1024  # the sparse 10 MiB big.spark and alike: compared by size and mtime only


def snapshot(world: Path) -> dict[str, Stamp]:
    """Every file under `world` (the project and the sentinels beside it), links by target."""
    found: dict[str, Stamp] = {}
    folders = [str(world)]
    while folders:
        folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
                else:
                    found[entry.path] = stamp_of(entry.path, entry.stat(follow_symlinks=False))
    return found


def stamp_of(path: str, status: os.stat_result) -> Stamp:
    if stat.S_ISLNK(status.st_mode):
        return ("link:" + os.readlink(path), 0, 0, 0, 0)
    if not stat.S_ISREG(status.st_mode):
        return (f"kind:{stat.S_IFMT(status.st_mode)}", 0, 0, 0, 0)
    stamp = ("file", status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    if stamp not in DIGESTS:
        DIGESTS[stamp] = None if status.st_size > BIG else _digest(path)
    return stamp


class World:
    """The files around the in-process runs, walked once a run: what one run leaves is the
    next one's starting point, but for the files a case writes and removes itself."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.state = snapshot(project.parent)

    def before(self, case: Case) -> dict[str, Stamp]:
        for path in self._own(case):
            try:
                status = os.lstat(path)
            except FileNotFoundError:
                self.state.pop(path, None)
                continue
            if stat.S_ISDIR(status.st_mode):  # a walk lists what is in a folder, not the folder
                self.state.pop(path, None)
            else:
                self.state[path] = stamp_of(path, status)
        return dict(self.state)

    def after(self) -> dict[str, Stamp]:
        self.state = snapshot(self.project.parent)
        return self.state

    def forget(self, case: Case) -> None:
        """After remove_case: the case's own files and the output folder are gone."""
        out_dir = str(self.project / "out") + os.sep
        for path in [*self._own(case), *(p for p in self.state if p.startswith(out_dir))]:
            self.state.pop(path, None)

    def _own(self, case: Case) -> list[str]:
        own = [*case.extra, *case.writes] + ([case.name] if case.special is None else [])
        return [str(self.project / rel) for rel in own]


def _digest(path: str) -> bytes:
    with open(path, "rb") as file:
        return hashlib.blake2b(file.read(), digest_size=16).digest()


def may_write(case: Case, project: Path) -> set[str]:
    """The files the run may write: fmt's own spec, and outputs that are no input."""
    allowed = {str(project / rel) for rel in case.writes}
    if case.command == ["fmt"] and case.special is None and case.args is None:
        allowed.add(str(project / case.name))
    return allowed


def changed_inputs(before: dict[str, Stamp], after: dict[str, Stamp], case: Case, project: Path) -> list[str]:
    allowed = may_write(case, project)
    out_dir, kept = str(project / "out") + os.sep, {str(project / rel) for rel in case.keep}
    changed = []
    for path, stamp in before.items():
        if path in allowed or (path.startswith(out_dir) and path not in kept):
            continue
        now = after.get(path)
        if now == stamp:
            continue
        if now is None or now[0] != stamp[0]:
            changed.append(f"{path}: {stamp[0]} became {now[0] if now else 'nothing'}")
        elif DIGESTS[stamp] is None:
            if (now[2], now[3]) != (stamp[2], stamp[3]):
                changed.append(f"{path}: size or mtime changed")
        elif _digest(path) != DIGESTS[stamp]:
            changed.append(f"{path}: bytes changed, now {Path(path).read_bytes()[:200]!r}")
    return changed


# ---- the verdict on one run ------------------------------------------------------


def meaning(text: str) -> Any:
    module = parse(text, "x").module
    assert module is not None
    return shape(module.statements), sorted(c.text.rstrip() for c in module.comments)


class Verdict(AssertionError):
    """A run broke a rule: `kind` names the rule, for the summary grouped by shape."""

    def __init__(self, kind: str, where: str, detail: object = "") -> None:
        super().__init__(f"{kind}: {where}\n{detail}")
        self.kind = kind


def require(ok: bool, kind: str, where: str, detail: object = "") -> None:
    if not ok:
        raise Verdict(kind, where, detail)


def describe(case: Case, project: Path) -> str:
    extra = {rel: entry if not isinstance(entry, bytes) else entry[:200] for rel, entry in case.extra.items()}
    return f"{case.shape} {argv(case, project)!r} spec={case.data[:300]!r} special={case.special} extra={extra}"


def judge(case: Case, code: int, stdout: bytes, stderr: bytes, project: Path) -> None:
    where = describe(case, project)
    both = (stdout + stderr).decode("utf-8", "replace")
    require("Traceback" not in both and "internal error" not in both, "traceback", where, both[-2000:])
    allowed = case.codes or ((0, 1, 2) if case.usage_error_allowed else (0, 1))
    # A configuration whose include and exclude keep no file of the folder given: the only usage error.
    empty_scan = case.argument is not None and code == 2 and "holds no .spark file" in both
    require(code in allowed or empty_scan, f"exit {code}", where, both[-2000:])
    # The project is writable: a spec or an output that cannot be written is a bug (a long name, say).
    require("cannot write" not in both and "error[SPK522]" not in both, "cannot write", where, both[-2000:])
    # A spec named on the command line that links out of the project is the user's to read.
    leaked = SENTINEL in both + "".join(_written(case, project))
    require(not leaked or case.special == "escape", "sentinel in output", where, both[-2000:])
    try:
        out = stdout.decode("utf-8")
    except UnicodeDecodeError as err:
        raise Verdict("output not UTF-8", where, err) from None
    command = case.command[0]
    fmt = case.command[case.command.index("--format") + 1] if "--format" in case.command else ""
    if (command, fmt) in JSON_COMMANDS and code != 2 and "--output-file" not in case.command:
        try:
            doc = json.loads(out)
        except ValueError as err:
            raise Verdict("output not JSON", where, (err, out[-1000:])) from None
        if command == "check" and "--show-settings" not in case.command:
            summary = doc["summary"]["errors"] if fmt == "json" else None
            require(summary is None or (summary > 0) == (code == 1), "summary", where, out[-1000:])
    if command == "fmt" and code == 0 and case.special is None and len(case.command) == 1:
        formatted = (project / case.name).read_bytes().decode("utf-8")
        again = format_text(formatted, "x")
        require(again.text == formatted.removeprefix("\ufeff"), "fmt not idempotent", where)
        require(meaning(formatted) == meaning(case.data.decode("utf-8").removeprefix("\ufeff")), "fmt meaning", where)


def _written(case: Case, project: Path) -> list[str]:
    """The text of the outputs the run may write, which may not quote a file outside either."""
    found = []
    for rel in case.writes:
        path = project / rel
        if path.is_file() and not path.is_symlink():
            found.append(path.read_bytes().decode("utf-8", "replace"))
    return found


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


Invoke = Callable[[list[str]], tuple[int, bytes, bytes]]


def run_case(case: Case, project: Path, invoke: Invoke, world: World | None = None) -> None:
    """Runs one case in `project` (its files already written) and judges it."""
    for before in case.before:
        code, stdout, stderr = invoke([arg.replace("{root}", str(project)) for arg in before])
        require(code == 0, "setup failed", describe(case, project), (stdout + stderr)[-1000:])
    files_before = world.before(case) if world is not None else snapshot(project.parent)
    code, stdout, stderr = invoke(argv(case, project))
    judge(case, code, stdout, stderr, project)
    files_after = world.after() if world is not None else snapshot(project.parent)
    changed = changed_inputs(files_before, files_after, case, project)
    output = (stdout + stderr).decode("utf-8", "replace")[-1000:]
    require(not changed, "changed input", describe(case, project), (changed, f"exit {code}", output))


def summary(failures: list[tuple[Case, BaseException]], project: Path) -> str:
    """The failures grouped by shape and rule, each group with its count and first case."""
    groups: dict[tuple[str, str], list[BaseException]] = {}
    for case, err in failures:
        kind = err.kind if isinstance(err, Verdict) else type(err).__name__
        groups.setdefault((case.shape, kind), []).append(err)
    lines = [f"{len(failures)} failing runs"]
    for (shape_name, kind), errors in sorted(groups.items()):
        lines.append(f"--- {shape_name} / {kind}: {len(errors)}\n{str(errors[0])[:1500]}")
    return "\n".join(lines)


def test_ten_thousand_hostile_inputs_through_the_cli(project: Path) -> None:
    rng = random.Random(20261130)  # fixed: a failure reproduces
    texts = [s.read_text(encoding="utf-8") for s in SEEDS]
    runner = CliRunner()
    cases = list(corpus(rng, texts))
    outcomes: Counter[tuple[str, int]] = Counter()

    def invoke(args: list[str]) -> tuple[int, bytes, bytes]:
        signal.alarm(HANG_SECONDS)
        try:
            result = runner.invoke(main, args)
        finally:
            signal.alarm(0)
        if isinstance(result.exception, Hang):
            raise Verdict("hang", describe(current, project))
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise Verdict("exception", describe(current, project), repr(result.exception))
        outcomes[(current.shape, result.exit_code)] += 1
        return result.exit_code, result.stdout_bytes, result.stderr_bytes

    failures: list[tuple[Case, BaseException]] = []
    world = World(project)
    for current in cases:
        try:
            write_case(project, current)
            run_case(current, project, invoke, world)
        except (AssertionError, OSError, ValueError, KeyError) as err:
            world.after()  # a run that failed before its files were walked
            failures.append((current, err))
        finally:
            remove_case(project, current)
            world.forget(current)
    print(summary(failures, project))
    assert not failures, summary(failures, project)
    assert len(cases) >= 10_000
    by_shape = Counter(case.shape for case in cases)
    assert min(by_shape.values()) >= 300, by_shape  # every shape is exercised
    assert outcomes[("mutation", 0)] > 150 and outcomes[("mutation", 1)] > 2000, (
        outcomes
    )  # both outcomes (190 and 3,076 at 7620828)
    assert outcomes[("not-a-file", 2)] > 100, outcomes
    assert outcomes[("model-import", 0)] > 30 and outcomes[("model-import", 2)] > 100, outcomes


def test_a_sample_of_every_shape_through_real_processes(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    texts = [s.read_text(encoding="utf-8") for s in SEEDS]
    cases = list(corpus(rng, texts))
    shapes = sorted({c.shape for c in cases})
    per_shape = SUBPROCESS_RUNS // len(shapes)
    sample: list[Case] = []
    for shape_name in shapes:
        sample += [c for c in cases if c.shape == shape_name][:per_shape]
    # Every case runs in a project of its own, so the sample can run two at a time.
    projects = []
    for i, case in enumerate(sample):
        project = tmp_path / f"p{i}" / "project"
        project.mkdir(parents=True)
        prepare(project)
        write_case(project, case)
        projects.append(project)

    def spark(i: int) -> BaseException | None:
        project = projects[i]

        def invoke(args: list[str]) -> tuple[int, bytes, bytes]:
            try:
                done = subprocess.run(
                    [sys.executable, "-m", "spark_dsl", *args],
                    cwd=project,
                    capture_output=True,
                    # The sentinel in the environment: an import of /proc/self/environ would show it.
                    env={**os.environ, "NO_COLOR": "1", "SPARK_FUZZ_SECRET": SENTINEL},
                    timeout=HANG_SECONDS,
                )
            except subprocess.TimeoutExpired:
                raise Verdict("hang", repr(args)) from None
            return done.returncode, done.stdout, done.stderr

        try:
            run_case(sample[i], project, invoke)
        except (AssertionError, OSError, ValueError, KeyError) as err:
            return err
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(spark, range(len(sample))))
    failures = [(case, err) for case, err in zip(sample, results, strict=True) if err is not None]
    print(summary(failures, tmp_path))
    assert not failures, summary(failures, tmp_path)
    assert len(sample) >= 200
