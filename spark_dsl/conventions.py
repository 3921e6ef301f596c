"""What the options the subcommands share asked for in one invocation, without click.

The options themselves (spark_dsl.cli_options) store their values in the invocation's
`Conventions`, kept in click's context; the commands' helpers read them back here. A command
click did not parse (`spark check PATH...`, which spark_dsl.__main__ runs without importing
click: spark_dsl.check_command) has the defaults, as a unit test outside a command does.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from spark_dsl.code_selection import Selection

STDIN = "-"
STDIN_NAME = "<stdin>"
KEY = "spark.conventions"


class Conventions(Struct):
    """What the shared options asked for in this invocation."""

    color: str = "auto"
    quiet: bool = False
    stdin_filename: str | None = None
    deployments: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    show_settings: bool = False
    output_path: Path | None = None
    stdin_text: str | None = None
    # The folder a build writes: `--output-file` may not point into it (spark_dsl.write_gate).
    build_folder: Path | None = None
    # Names of deployments `-d` left out: a build keeps their folders as they are.
    left_out: set[str] = field(default_factory=set)
    # `--select`, `--extend-select` and `--ignore` (spark_dsl.code_selection); `spark check`'s
    # `--statistics` and `--exit-zero`.
    selection: Selection | None = None
    statistics: bool = False
    exit_zero: bool = False


def current() -> Conventions:
    """This invocation's conventions (the defaults outside a command, as in unit tests)."""
    # Without click loaded there is no click context to hold them: the command was not parsed by
    # click (spark_dsl.__main__'s plain `spark check`), so every option has its default.
    click = sys.modules.get("click")
    ctx = click.get_current_context(silent=True) if click is not None else None
    if ctx is None:
        return Conventions()
    conventions = ctx.meta.get(KEY)
    if conventions is None:
        conventions = ctx.meta[KEY] = Conventions()
    assert isinstance(conventions, Conventions)
    return conventions


def colour_wanted(no_color: bool = False) -> bool:
    """Whether diagnostics on stdout get ANSI colour.

    `--color always|never` decides; `auto` (the default) follows the environment as Python 3.13
    itself does: a non-empty NO_COLOR turns colour off, else a non-empty FORCE_COLOR turns it on,
    else TERM=dumb turns it off, else colour goes only to a terminal. `--no-color` is
    `--color never`.
    """
    choice = "never" if no_color else current().color
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


# ---- standard input ---------------------------------------------------------------


class StdinError(Exception):
    """Standard input cannot be used as a spec: exit 2 with this message."""


def stdin_path(paths: tuple[str, ...]) -> Path | None:
    """The path standing for standard input when `-` is among the paths; None without `-`."""
    conventions = current()
    count = paths.count(STDIN)
    if count > 1:
        raise StdinError("`-` (standard input) can be named once")
    if count == 0:
        if conventions.stdin_filename is not None:
            raise StdinError("--stdin-filename names the file standard input stands for: pass `-` as the path too")
        return None
    if conventions.stdin_filename is not None:
        return Path(conventions.stdin_filename)
    return Path(STDIN_NAME)


def read_stdin() -> str:
    """Standard input as text, at most MAX_SPEC_BYTES of UTF-8, or a StdinError saying why not."""
    from spark_dsl import files

    data = files.read_stream(sys.stdin.buffer.read)
    if isinstance(data, files.Unreadable):
        raise StdinError(f"cannot read standard input: {data.reason}")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise StdinError(f"standard input is not valid UTF-8 (byte {err.start})") from None


def stdin_text() -> str:
    """Standard input, read once per invocation (a `--fix` run checks it several times)."""
    conventions = current()
    if conventions.stdin_text is None:
        conventions.stdin_text = read_stdin()
    return conventions.stdin_text


# ---- what the options do to a run ------------------------------------------------------


def only_deployments(result: Any, names: tuple[str, ...], paths: tuple[str, ...]) -> str | None:
    """Narrows a run to the deployments `-d` names; the usage error when one is not there."""
    from spark_dsl.files import printable

    known = {d.name for d in result.deployments}
    unknown = sorted(set(names) - known)
    if unknown:
        shown = ", ".join(printable(n) for n in unknown)
        return f"no deployment named {shown} in {', '.join(printable(p) for p in paths)}"
    wanted = set(names)
    current().left_out = known - wanted
    result.deployments = [d for d in result.deployments if d.name in wanted]
    result.plans = [p for p in result.plans if p.name in wanted]
    result.diagnostics = [d for d in result.diagnostics if d.deployment is None or d.deployment in wanted]
    return None


def configured_output(result: Any, paths: tuple[str, ...]) -> Path | str:
    """`spark build`'s folder when `-o` is not given: the `output` setting of the named paths'
    project, relative to the current folder; a message when their projects disagree."""
    from spark_dsl.files import display

    stdin = stdin_path(paths)
    chosen = {
        result.projects.of(stdin if raw == STDIN and stdin is not None else Path(raw)).settings.output.value
        for raw in paths
    }
    if len(chosen) > 1:
        shown = ", ".join(sorted(display(p) for p in chosen))
        return f"the paths belong to projects with different `output` folders ({shown}): pass -o"
    (folder,) = chosen
    return Path(display(folder)) if folder.is_absolute() else folder


def show_settings(projects: Any, files: list[Path], fmt: str, deny: tuple[str, ...]) -> int:
    """Prints the settings `--show-settings` asks for; the exit code (1 when a configuration
    file has errors, which are printed too)."""
    from spark_dsl.diagnostics import Severity
    from spark_dsl.render import settings as render_settings

    by_home: dict[Path, list[Path]] = {}
    for path in files:
        by_home.setdefault(projects.of(path).home, []).append(path)
    found = projects.all()
    diagnostics = [d for project in found for d in project.settings.diagnostics]
    sources = {p.settings.source.name: p.settings.source for p in found if p.settings.source is not None}
    deny_warnings = "warnings" in deny
    if fmt == "json":
        from spark_dsl.render.json_format import diagnostics_document

        document = diagnostics_document([], diagnostics, sources)
        sys.stdout.write(render_settings.render_json(found, by_home, deny_warnings, document))
    else:
        sys.stdout.write(render_settings.render_text(found, by_home, deny_warnings))
        if diagnostics:
            from spark_dsl.render.text import render_one

            sys.stdout.write("\n".join(render_one(d, sources, colour_wanted()) for d in diagnostics))
    return 1 if any(d.severity is Severity.ERROR for d in diagnostics) else 0


def quiet_text(diagnostics: list[Any], sources: dict[str, Any], colour: bool) -> str:
    """The text format without its summary line, for `--quiet`."""
    from spark_dsl.render.text import render_one

    return "\n".join(render_one(d, sources, colour) for d in diagnostics)
