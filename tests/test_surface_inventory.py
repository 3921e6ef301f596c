"""The surface inventory (issue 31, item 6): every surface has a threat class, and every surface
gets its class's hostile suite.

The surfaces are enumerated from their sources, not from a list kept beside them: click's
command table (every option and argument of every subcommand, nested groups included),
spark_dsl.config.KEYS, and the methods the language server's feature registry answers. Each
must be in spark_dsl.surface.INVENTORY, and every entry there must still exist, so a surface
added without a class fails here (tested below with a throwaway option, key and method).

Each class's suite (tests/hostile_suites.py) then runs against every surface the inventory gives
that class, through the real `spark` command, with the verdict every run must pass: no
traceback, no hang over 10 s, nothing read from outside the project shown, no input changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from hostile_suites import (
    ENV_SECRET,
    EXPONENTIAL,
    FILE_CASES,
    INPUT_CASES,
    LONG_NAME,
    PLAIN,
    SECRET,
    Project,
    hang_guard,
    input_value,
    invoke,
    make_project,
    place,
    plain_content,
    problems,
    run_and_judge,
    snapshot,
)

from spark_dsl import config, project, surface
from spark_dsl.cli import main
from spark_dsl.targets import manifest

REPO = Path(__file__).resolve().parent.parent
SECRET_ENV = "SPARK_SURFACE_SECRET"


# ---- enumerating the surfaces ----------------------------------------------------------------


def _walk(
    command: click.Command, path: list[str], parent: click.Context | None
) -> Iterator[tuple[str, click.Parameter]]:
    settings = command.context_settings if parent is None else {}
    ctx = click.Context(command, info_name=path[-1], parent=parent, **settings)
    help_option = command.get_help_option(ctx)
    for param in command.get_params(ctx):  # the help option included: click adds it per context
        name = "/".join(param.opts) if isinstance(param, click.Option) else (param.name or "").upper()
        if param is help_option:  # click keeps the first context's help option: named by the group's names
            name = "/".join(ctx.help_option_names)
        yield " ".join([*path, name]), param
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            subcommand = command.get_command(ctx, sub)
            assert subcommand is not None
            yield from _walk(subcommand, [*path, sub], ctx)


def cli_surfaces(group: click.Group = main) -> dict[str, click.Parameter]:
    """Every option and argument of `spark` and of every subcommand, by inventory key."""
    return dict(_walk(group, ["spark"], None))


def lsp_surfaces(server: Any = None) -> set[str]:
    """Every method the language server answers: its own features and pygls's built-in ones."""
    from spark_dsl.lsp.server import build_server

    registry = (server or build_server()).protocol.fm
    commands = {f"lsp:workspace/executeCommand {name}" for name in registry.commands}
    return {f"lsp:{m}" for m in (*registry.features, *registry.builtin_features)} | commands


def file_surfaces() -> set[str]:
    """The files spark finds by name (the model import's two are literals in spark_dsl.model_import)."""
    named = (project.SPARK_TOML, project.PYPROJECT, manifest.MANIFEST, "config.json", "model.safetensors.index.json")
    return {f"file:{name}" for name in named} | {"spec:import"}


def all_surfaces() -> set[str]:
    return set(cli_surfaces()) | {f"config:{key}" for key in config.KEYS} | lsp_surfaces() | file_surfaces()


def assert_inventory_matches(found: set[str]) -> None:
    unclassified = sorted(found - surface.INVENTORY.keys())
    stale = sorted(surface.INVENTORY.keys() - found)
    assert not unclassified, f"give these surfaces a threat class in spark_dsl/surface.py: {unclassified}"
    assert not stale, f"spark_dsl/surface.py lists surfaces that no longer exist: {stale}"


def test_every_surface_has_a_threat_class_and_no_entry_is_stale() -> None:
    assert_inventory_matches(all_surfaces())


def test_every_class_is_known_and_has_a_suite() -> None:
    assert {entry.threat for entry in surface.INVENTORY.values()} <= surface.CLASSES.keys()
    assert set(SUITES) == surface.CLASSES.keys()


def test_the_inventory_keys_name_click_s_own_params() -> None:
    """Options are keyed by all their names, arguments by their click name: `spark build -o/--output`."""
    surfaces = cli_surfaces()
    assert isinstance(surfaces["spark build -o/--output"], click.Option)
    assert isinstance(surfaces["spark model import PATH"], click.Argument)


def test_an_option_added_without_a_class_fails_the_inventory(monkeypatch: pytest.MonkeyPatch) -> None:
    check = main.commands["check"]
    monkeypatch.setattr(check, "params", [*check.params, click.Option(["--throwaway"])])
    with pytest.raises(AssertionError, match=r"spark check --throwaway"):
        assert_inventory_matches(all_surfaces())


def test_a_subcommand_added_without_classes_fails_the_inventory(monkeypatch: pytest.MonkeyPatch) -> None:
    group = main.commands["model"]
    assert isinstance(group, click.Group)
    extra = click.Command("throwaway", params=[click.Argument(["thing"])])
    monkeypatch.setitem(group.commands, "throwaway", extra)
    with pytest.raises(AssertionError, match=r"spark model throwaway THING"):
        assert_inventory_matches(all_surfaces())


def test_a_configuration_key_added_without_a_class_fails_the_inventory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "KEYS", (*config.KEYS, "throwaway"))
    with pytest.raises(AssertionError, match=r"config:throwaway"):
        assert_inventory_matches(all_surfaces())


def test_a_server_method_added_without_a_class_fails_the_inventory() -> None:
    from lsprotocol import types

    from spark_dsl.lsp.server import build_server

    server = build_server()
    server.feature(types.TEXT_DOCUMENT_REFERENCES)(lambda ls, params: None)
    found = set(cli_surfaces()) | {f"config:{k}" for k in config.KEYS} | lsp_surfaces(server) | file_surfaces()
    with pytest.raises(AssertionError, match=r"lsp:textDocument/references"):
        assert_inventory_matches(found)


def test_a_removed_option_leaves_a_stale_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = main.commands["plan"]
    monkeypatch.setattr(plan, "params", [p for p in plan.params if p.name != "node"])
    with pytest.raises(AssertionError, match=r"spark plan --node"):
        assert_inventory_matches(all_surfaces())


def test_every_entry_whose_class_is_not_obvious_says_why() -> None:
    obvious = {"flag", "choice", "pattern", "number"}
    missing = [
        key
        for key, entry in surface.INVENTORY.items()
        if not entry.why
        and entry.threat not in obvious
        and not key.endswith(("PATHS", "--output-file"))
        and not key.endswith(("-o/--output", "config:output"))
    ]
    assert not missing, f"say why these surfaces have their class: {missing}"


# ---- the runs ------------------------------------------------------------------------------


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """A project as the current folder, this process's environment holding ENV_SECRET."""
    made = make_project(tmp_path)
    monkeypatch.chdir(made.root)
    monkeypatch.setenv(SECRET_ENV, ENV_SECRET)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with hang_guard():
        yield made


def of_class(threat: str, prefix: str) -> list[str]:
    return sorted(k for k, s in surface.INVENTORY.items() if s.threat == threat and k.startswith(prefix))


# The arguments a subcommand needs besides the surface under test; the surface replaces its own.
BASE = {
    "check": ["spec.spark"],
    "plan": ["spec.spark"],
    "build": ["spec.spark", "-o", "out"],
    "fmt": ["spec.spark"],
    "explain": ["my-model"],
    "model import": ["model"],
}
# Options that only act beside another.
ALONGSIDE = {"spark plan --vllm-python": ["--verify-vllm"]}


def cli_run(key: str, value: str) -> tuple[list[str], str | None, list[str]]:
    """The command line that hands `value` to the surface `key`, its standard input, and the
    outputs it is told to write (build's `-o out`)."""
    *words, name = key.split()[1:]
    command = " ".join(words)
    base = list(BASE.get(command, []))
    stdin = None
    if name.isupper():  # an argument: in place of the base's own
        args = [value, *base[1:]]
    else:
        opts = name.split("/")
        if "-o" in opts and "-o" in base:
            base = base[: base.index("-o")]
        if "--stdin-filename" in opts:
            base[0], stdin = "-", PLAIN
        args = [*base, *ALONGSIDE.get(key, []), max(opts, key=len), value]
    allowed = ["out"] if "-o" in base else []
    return [*words, *args], stdin, allowed


# ---- input-path: named paths ------------------------------------------------------------------


@pytest.mark.parametrize("case", INPUT_CASES)
@pytest.mark.parametrize("key", of_class("input-path", "spark "))
def test_input_path_suite_on_the_command_line(proj: Project, key: str, case: str) -> None:
    leaf = "config.json" if key.startswith("spark model import") else "x.spark"
    args, stdin, allowed = cli_run(key, input_value(proj, case, leaf))
    run_and_judge(proj, args, stdin, allowed)


# ---- input-path: files spark finds by name ----------------------------------------------------

IMPORTER = 'import "cases/imported.spark"\n\n' + PLAIN
# Where each found file lives, and the command that reads it.
FOUND = {
    "file:spark.toml": ("spark.toml", ["check", "spec.spark"]),
    "file:pyproject.toml": ("pyproject.toml", ["check", "spec.spark"]),
    "file:manifest.json": ("out/manifest.json", ["build", "spec.spark", "-o", "out"]),
    "file:config.json": ("model/config.json", ["model", "import", "model"]),
    "file:model.safetensors.index.json": ("model/model.safetensors.index.json", ["model", "import", "model"]),
    "spec:import": ("cases/imported.spark", ["check", "importer.spark"]),
}


@pytest.mark.parametrize("case", FILE_CASES)
@pytest.mark.parametrize("key", sorted(file_surfaces()))
def test_input_path_suite_on_found_files(proj: Project, key: str, case: str) -> None:
    relative, args = FOUND[key]
    if key == "file:pyproject.toml":
        (proj.root / "spark.toml").unlink()  # else spark.toml is the project's and pyproject.toml is never read
    if key == "spec:import":
        (proj.root / "importer.spark").write_text(IMPORTER, encoding="utf-8")
    content = plain_content(Path(relative).name)
    if key == "file:manifest.json":  # a real build's, so only the case makes it hostile
        assert invoke(args).exit_code == 0
        content = (proj.root / relative).read_bytes()
    place(proj, proj.root / relative, case, content)
    run_and_judge(proj, args, allowed=["out/"] if args[0] == "build" else [])


def test_every_found_file_has_a_place() -> None:
    assert {k for k, s in surface.INVENTORY.items() if k.startswith(("file:", "spec:"))} == FOUND.keys()


# ---- output-path ------------------------------------------------------------------------------

OWN_INPUTS = {
    "spec": "spec.spark",
    "import": "shared.spark",
    "config": "spark.toml",
    "symlink-to-spec": "link.spark",
    "manifest": "out/manifest.json",
    "config-json": "model/config.json",
    "index-json": "model/model.safetensors.index.json",
    "symlink-to-config": "link.json",
}


def output_cases(key: str) -> list[str]:
    if key.startswith("spark model import"):
        own = ["config-json", "index-json", "symlink-to-config"]
    else:
        own = ["spec", "import", "config", "symlink-to-spec"]
        if key == "spark build --output-file":
            own.append("manifest")
    return [*own, "fifo", "folder", "missing-folder"]


OUTPUT_RUNS = [(key, case) for key in of_class("output-path", "") for case in output_cases(key)]


def output_value(proj: Project, key: str, case: str) -> tuple[str, list[str]]:
    """The path an output surface gets for a case, and what the run may create because of it."""
    folder_out = (key.endswith("-o/--output") and "model import" not in key) or key == "config:output"
    (proj.root / "link.spark").symlink_to("spec.spark")
    (proj.root / "link.json").symlink_to("model/config.json")
    os.mkfifo(proj.root / "pipe")
    if case == "manifest":
        assert invoke(["build", "spec.spark", "-o", "out"]).exit_code == 0
    if case in OWN_INPUTS:
        return OWN_INPUTS[case], []
    value = {"fifo": "pipe", "folder": "model", "missing-folder": "nowhere/out" if folder_out else "nowhere/out.txt"}
    return value[case], ([value[case]] if case != "fifo" else [])


@pytest.mark.parametrize(("key", "case"), OUTPUT_RUNS)
def test_output_path_suite(proj: Project, key: str, case: str) -> None:
    value, allowed = output_value(proj, key, case)
    if key.startswith("config:"):
        config_key = key.removeprefix("config:")
        (proj.root / "spark.toml").write_text(f"{config_key} = {json.dumps(value)}\n", encoding="utf-8")
        run_and_judge(proj, ["build", "spec.spark"], allowed=allowed)
        return
    args, stdin, base_allowed = cli_run(key, value)
    run_and_judge(proj, args, stdin, [*allowed, *base_allowed])


# ---- strings, numbers, flags and choices on the command line -------------------------------------

FREE_STRINGS = {
    "nul": "a\x00b",
    "not-utf8": "a" + os.fsdecode(b"\xff") + "b",
    "newline": "a\nerror: forged\n",
    "control": "\x1b[2J\r\u202e\x07",
    "megabyte": "x" * 1_000_000,
}
NUMBERS = {"huge": "9" * 400, "negative": "-1", "not-a-number": "eight", "nul": "1\x00", "float": "1e309"}
NOT_A_CHOICE = {"empty": "", "nul": "text\x00", "not-utf8": os.fsdecode(b"\xff"), "newline": "text\n"}


@pytest.mark.parametrize("case", FREE_STRINGS)
@pytest.mark.parametrize("key", of_class("free-string", "spark "))
def test_free_string_suite_on_the_command_line(proj: Project, key: str, case: str) -> None:
    args, stdin, allowed = cli_run(key, FREE_STRINGS[case])
    run_and_judge(proj, args, stdin, allowed)


@pytest.mark.parametrize("case", NUMBERS)
@pytest.mark.parametrize("key", of_class("number", "spark "))
def test_number_suite_on_the_command_line(proj: Project, key: str, case: str) -> None:
    args, stdin, allowed = cli_run(key, NUMBERS[case])
    run_and_judge(proj, args, stdin, allowed)


@pytest.mark.parametrize("key", of_class("choice", "spark "))
def test_choice_suite_on_the_command_line(proj: Project, key: str) -> None:
    for value in NOT_A_CHOICE.values():
        args, stdin, allowed = cli_run(key, value)
        assert run_and_judge(proj, args, stdin, allowed).exit_code == 2


@pytest.mark.parametrize("key", of_class("flag", "spark "))
def test_flag_suite_on_the_command_line(proj: Project, key: str) -> None:
    """A value given to a flag is a usage error, whatever the value."""
    *words, name = key.split()[1:]
    for value in ("x", "\x00", os.fsdecode(b"\xff"), "a\nb"):
        args, stdin, allowed = cli_run(key, value)
        args = [*words, *args[len(words) : -2], f"{max(name.split('/'), key=len)}={value}"]
        assert run_and_judge(proj, args, stdin, allowed).exit_code == 2


# ---- configuration keys ------------------------------------------------------------------------

PATTERNS = {
    "reversed-range": b'"[z-a]"',
    "exponential": f'"{EXPONENTIAL}"'.encode(),
    "nul": b'"a\\u0000b"',
    "not-utf8": b'"\xff*"',
    "newline": b'"a\\nb"',
}
# One warning (SPK903), canonically formatted.
WARNED = (
    "deployment warned {\n  model       = muse-spark-open\n  accelerator = b200\n"
    '  serve {\n    extra_args = ["--enable-log-request"]\n  }\n}\n'
)
CONFIG_STRINGS = {
    "nul": b'["SPK\\u0000"]',
    "not-utf8": b'["\xff"]',
    "newline": b'["SPK1\\n01"]',
    "control": b'["\\u001b[2J\\r\\u202e"]',
    "megabyte": b'["' + b"S" * 1_000_000 + b'"]',
    "not-a-list": b'"SPK101"',
}
CONFIG_FLAGS = {"string": b'"yes"', "number": b"1", "nul": b'"\\u0000"', "list": b"[true]", "table": b"{ a = 1 }"}
CONFIG_NUMBERS = {"huge": b"9" * 400, "negative": b"-1", "not-a-number": b'"eight"', "float": b"1e309"}
CONFIG_VALUES = {"free-string": CONFIG_STRINGS, "flag": CONFIG_FLAGS, "number": CONFIG_NUMBERS}


def write_config(proj: Project, key: str, value: bytes, table: bool = False) -> None:
    line = b'[%s]\n%s = ["SPK903"]\n' % (key.encode(), value) if table else b"%s = %s\n" % (key.encode(), value)
    (proj.root / "spark.toml").write_bytes(line)


@pytest.mark.parametrize("case", PATTERNS)
@pytest.mark.parametrize("key", of_class("pattern", "config:"))
def test_pattern_suite_on_configuration_keys(proj: Project, key: str, case: str) -> None:
    name = key.removeprefix("config:")
    table = name == "per-path-ignores"
    write_config(proj, name, PATTERNS[case] if table else b"[%s]" % PATTERNS[case], table)
    # A warning in a file under the long name: per-path-ignores matches its globs only against
    # the files of warnings, and the exponential glob needs the long name to backtrack on.
    (proj.root / LONG_NAME).mkdir()
    (proj.root / LONG_NAME / "warned.spark").write_text(WARNED, encoding="utf-8")
    for args in (["check", "."], ["fmt", "--check", "."]):
        run_and_judge(proj, args)


@pytest.mark.parametrize(
    ("key", "case"),
    [(key, case) for threat, values in CONFIG_VALUES.items() for key in of_class(threat, "config:") for case in values],
)
def test_value_suites_on_configuration_keys(proj: Project, key: str, case: str) -> None:
    values = CONFIG_VALUES[surface.INVENTORY[key].threat]
    write_config(proj, key.removeprefix("config:"), values[case])
    run_and_judge(proj, ["check", "."])


ROOTS = {
    "climb": b'"../../.."',
    "slash": b'"/"',
    "symlink-out": b'"cases/linkdir"',
    "proc": b'"/proc/self"',
    "fifo": b'"pipe"',
    "nul": b'"a\\u0000b"',
    "newline": b'"a\\nb"',
    "not-utf8": b'"\xff"',
}
# Reads a file outside the project and the process's environment, if the root lets it.
CLIMBER = 'import "../outside/x.spark"\nimport "/proc/self/environ"\n\n' + PLAIN


@pytest.mark.parametrize("case", ROOTS)
@pytest.mark.parametrize("key", of_class("input-path", "config:"))
def test_input_path_suite_on_configuration_keys(proj: Project, key: str, case: str) -> None:
    (proj.root / "cases").mkdir()
    (proj.root / "cases" / "linkdir").symlink_to(proj.outside)
    os.mkfifo(proj.root / "pipe")
    (proj.root / "climber.spark").write_text(CLIMBER, encoding="utf-8")
    write_config(proj, key.removeprefix("config:"), ROOTS[case])
    run_and_judge(proj, ["check", "climber.spark"])


# ---- the real command, in a subprocess ----------------------------------------------------------

SPARK = str(Path(sys.executable).with_name("spark"))


@pytest.mark.parametrize(
    "args",
    [
        ["check", "spec.spark", "--output-file", "spec.spark"],
        ["check", "climber.spark"],
        ["fmt", "--check", "."],
    ],
)
def test_a_sample_through_the_installed_command(proj: Project, args: list[str]) -> None:
    """The same verdict when `spark` runs as a process, with the worst settings of the suites."""
    (proj.root / "spark.toml").write_text(f'root = "../../.."\nextend-exclude = ["[z-a]", "{EXPONENTIAL}"]\n')
    (proj.root / LONG_NAME).mkdir()
    (proj.root / "climber.spark").write_text(CLIMBER, encoding="utf-8")
    before = snapshot(proj.base)
    started = time.monotonic()
    try:
        done = subprocess.run([SPARK, *args], cwd=proj.root, capture_output=True, timeout=10, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.fail(f"spark {args} ran over 10 s")
    assert time.monotonic() - started < 10
    from hostile_suites import Outcome, judge

    judge(proj, Outcome(args, done.returncode, done.stdout, done.stderr, None), before)


# ---- the language server --------------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parent / "lsp"))
import raw_lsp  # noqa: E402  (tests/lsp is not a package)

# A document that imports a link out of the project, /proc and a file above the project.
IMPORTING = 'import "cases/link.spark"\nimport "/proc/self/environ"\nimport "../outside/x.spark"\n\n' + PLAIN
HOSTILE = "a\x00b\nerror: forged\x1b[2J\u202e" + os.fsdecode(b"\xff") + "x" * 100_000


def hostile_uris(proj: Project) -> dict[str, str]:
    cases = proj.root / "cases"
    cases.mkdir(exist_ok=True)
    for name, case in (("link.spark", "symlink-out"), ("pipe.spark", "fifo"), ("proc.spark", "proc")):
        place(proj, cases / name, case, b"")
    place(proj, cases / "huge.spark", "huge", b"")
    place(proj, cases / "deep.spark", "deep", b"")
    if not (cases / "linkdir").is_symlink():
        (cases / "linkdir").symlink_to(proj.outside)
    root = proj.root.as_uri()
    return {
        "symlink-out": f"{root}/cases/link.spark",
        "folder-out": f"{root}/cases/linkdir/x.spark",
        "outside": (proj.outside / "x.spark").as_uri(),
        "fifo": f"{root}/cases/pipe.spark",
        "proc": "file:///proc/self/environ",
        "proc-link": f"{root}/cases/proc.spark",
        "huge": f"{root}/cases/huge.spark",
        "deep": f"{root}/cases/deep.spark",
        "nul": f"{root}/nul%00.spark",
        "not-utf8": f"{root}/bad%FF.spark",
        "newline": f"{root}/new%0Aline.spark",
        "not-a-file-uri": "untitled:\x00" + HOSTILE[:50],
    }


def lsp_params(method: str, uri: str) -> dict[str, Any]:
    """Parameters for a method naming the hostile URI wherever the method takes one."""
    document = {"uri": uri, "languageId": "spark", "version": 1, "text": IMPORTING}
    position = {"line": 0, "character": 0}
    span = {"start": position, "end": {"line": 2, "character": 0}}
    by_method: dict[str, dict[str, Any]] = {
        "textDocument/didOpen": {"textDocument": document},
        "textDocument/didChange": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": IMPORTING}]},
        "textDocument/codeAction": {"textDocument": {"uri": uri}, "range": span, "context": {"diagnostics": []}},
        "textDocument/formatting": {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}},
        "workspace/didChangeWatchedFiles": {"changes": [{"uri": uri, "type": t} for t in (1, 2, 3)]},
        "initialize": {
            "processId": None,
            "rootUri": uri,
            "capabilities": {},
            "workspaceFolders": [{"uri": uri, "name": HOSTILE[:40]}],
        },
    }
    if method in by_method:
        return by_method[method]
    if method.startswith("textDocument/"):
        return {"textDocument": {"uri": uri}, "position": position}
    return {"value": HOSTILE, "command": HOSTILE, "arguments": [HOSTILE], "token": HOSTILE, "uri": uri}


def is_request(method: str) -> bool:
    import attrs
    from lsprotocol import types

    found = types.METHOD_TO_TYPES.get(method)
    return found is None or "id" in attrs.fields_dict(found[0])


class Session:
    """A `spark lsp` process in a project, a normal document open in it, watched for leaks."""

    def __init__(self, proj: Project) -> None:
        env = dict(os.environ, XDG_CACHE_HOME=str(proj.base / "cache"), NO_COLOR="1")
        env[SECRET_ENV] = ENV_SECRET
        self.server = raw_lsp.RawServer(proj.root, env)
        self.proj = proj
        self.uris = hostile_uris(proj)

    def start(self) -> Session:
        self.server.initialize()
        self.normal = self.server.open("normal.spark", PLAIN)
        return self

    def send(self, method: str, params: dict[str, Any]) -> None:
        if is_request(method):
            self.server.request(method, params)
        else:
            self.server.notify(method, params)

    def assert_answers(self, after: str = "") -> None:
        """The next request is answered within 10 s, and nothing so far leaked or crashed."""
        started = time.monotonic()
        try:
            self.server.call("textDocument/hover", raw_lsp.position_params(self.normal, 1, 4))
        except AssertionError as err:
            raise AssertionError(f"after {after}: {err}") from None
        assert time.monotonic() - started < 10, f"after {after}: the server took over 10 s to answer"
        self.assert_clean(after)

    def assert_clean(self, after: str = "") -> None:
        seen = json.dumps(self.server.received())
        log = self.server.stderr()
        for secret in (SECRET, ENV_SECRET):
            assert secret not in seen, f"after {after}: the server sent {secret}, read from outside the project"
            assert secret not in log, f"after {after}: the server logged {secret}"
        shown = "\n".join(line[:160] for line in log.splitlines()[-30:])
        assert "Traceback" not in log, f"after {after}: a traceback in the server's log:\n{shown}"


@pytest.fixture
def lsp_proj(tmp_path: Path) -> Project:
    return make_project(tmp_path)


@pytest.fixture(autouse=True)
def _answer_within_ten_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(raw_lsp, "WEDGED", 10.0)


@pytest.mark.parametrize("key", of_class("input-path", "lsp:") + of_class("free-string", "lsp:"))
def test_language_server_suite(lsp_proj: Project, key: str) -> None:
    method = key.removeprefix("lsp:")
    session = Session(lsp_proj)
    try:
        if method == "initialize":
            session.send(method, lsp_params(method, session.uris["folder-out"]))
            session.server.notify("initialized", {})
            session.normal = session.server.open("normal.spark", PLAIN)
            session.assert_answers(f"initialize with the workspace {session.uris['folder-out']}")
            return
        session.start()
        if method == "exit":
            session.send(method, lsp_params(method, session.uris["symlink-out"]))
            session.server.proc.wait(timeout=10)
            session.assert_clean("exit")
            return
        for case, uri in session.uris.items():
            session.send(method, lsp_params(method, uri))
            if method == "textDocument/didOpen":  # and a change: both check the document
                session.send("textDocument/didChange", lsp_params("textDocument/didChange", uri))
            session.assert_answers(f"{method} of the {case} URI {uri[:80]!r}")
        assert session.server.proc.poll() is None, "the server exited"
    finally:
        session.server.close()


# ---- the classes' suites, and the documentation ---------------------------------------------------

SUITES = {
    "input-path": (test_input_path_suite_on_the_command_line, test_input_path_suite_on_found_files),
    "output-path": (test_output_path_suite,),
    "pattern": (test_pattern_suite_on_configuration_keys,),
    "free-string": (test_free_string_suite_on_the_command_line, test_value_suites_on_configuration_keys),
    "number": (test_number_suite_on_the_command_line,),
    "flag": (test_flag_suite_on_the_command_line,),
    "choice": (test_choice_suite_on_the_command_line,),
}


def test_every_surface_of_a_class_reaches_a_suite() -> None:
    """Every inventory entry is run by its class's suite: the command line's, configuration's,
    found files' or the language server's (the parametrized lists above are taken from the inventory)."""
    reached = set(of_class("input-path", "spark ")) | set(of_class("input-path", "config:"))
    reached |= {k for k, _ in OUTPUT_RUNS} | set(FOUND)
    for threat in ("free-string", "number", "choice", "flag"):
        reached |= set(of_class(threat, "spark "))
    for threat in ("pattern", *CONFIG_VALUES):
        reached |= set(of_class(threat, "config:"))
    reached |= set(of_class("input-path", "lsp:") + of_class("free-string", "lsp:"))
    assert set(surface.INVENTORY) - reached == set()


def test_the_documentation_shows_the_inventory() -> None:
    from spark_dsl.surface_doc import render_page

    page = (REPO / "docs" / "files-and-limits.md").read_text(encoding="utf-8")
    assert render_page(page) == page, "docs/files-and-limits.md is stale: run `python -m spark_dsl.dev regen`"


def test_a_hang_guard_run_reports_problems() -> None:
    """The verdict itself: a raising run, exit 3 and a leaked secret are each caught."""
    from hostile_suites import Outcome

    bad = Outcome(["x"], 3, f"{SECRET}".encode(), b"internal error\nTraceback", "boom")
    assert len(problems(bad)) == 5
