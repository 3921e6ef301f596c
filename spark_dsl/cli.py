"""The `spark` command line: parses options, runs the pipeline, renders, and picks the exit code."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class _Current:
    """The file being processed, so an internal failure can name it."""

    path: str = "(no file)"


def _internal_failure(err: BaseException) -> NoReturn:
    click.echo(
        f"spark: internal error while processing {_Current.path}: "
        f"{type(err).__name__}: {err} (this is a bug in spark-dsl; please report it)",
        err=True,
    )
    sys.exit(EXIT_INTERNAL)


def _usage(message: str) -> NoReturn:
    click.echo(f"spark: error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _use_colour(no_color: bool) -> bool:
    if no_color or "NO_COLOR" in os.environ:
        return False
    return sys.stdout.isatty()


def _common(fn: Any) -> Any:
    fn = click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("."),
        show_default=True,
        help="Project root that imports may not leave.",
    )(fn)
    fn = click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json", "sarif", "github"]),
        default="text",
        show_default=True,
        help="Diagnostics format.",
    )(fn)
    fn = click.option(
        "--deny", type=click.Choice(["warnings"]), multiple=True, help="Make warnings fail the run."
    )(fn)
    fn = click.option("--no-color", is_flag=True, help="No colour (NO_COLOR is honoured too).")(fn)
    return fn


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="spark-dsl", prog_name="spark")
def main() -> None:
    """Compile `.spark` deployment specs into checked vLLM deployments."""


def checked_run(paths: tuple[str, ...], root: Path) -> Any:
    """Runs the pipeline over the paths; usage errors exit 2, internal failures exit 3."""
    import stat

    from spark_dsl.files import Unreadable, inspect, printable
    from spark_dsl.pipeline import UsageError, collect_paths, run

    status = inspect(root)
    if isinstance(status, Unreadable):
        _usage(f"cannot use --root {printable(str(root))}: {status.reason}")
    if not stat.S_ISDIR(status.st_mode):
        _usage(f"--root {printable(str(root))} is not a directory")
    skipped: list[str] = []
    try:
        files = collect_paths(list(paths), root, skipped)
    except UsageError as err:
        _usage(str(err))
    for line in skipped:
        click.echo(f"spark: {line}", err=True)

    def note(path: Path) -> None:
        _Current.path = printable(str(path))

    try:
        return run(files, root, on_file=note)
    except Exception as err:
        _internal_failure(err)


def emit_diagnostics(result: Any, fmt: str, no_color: bool) -> None:
    files = [s.name for s in result.files]
    if fmt == "json":
        from spark_dsl.render.json_format import render

        sys.stdout.write(render(files, result.diagnostics, result.sources))
    elif fmt == "sarif":
        from spark_dsl.render.sarif import render as render_sarif

        sys.stdout.write(render_sarif(result.diagnostics, result.sources))
    elif fmt == "github":
        from spark_dsl.render.github import render as render_github

        sys.stdout.write(render_github(result.diagnostics, result.sources))
    else:
        from spark_dsl.render.text import render as render_text

        sys.stdout.write(
            render_text(result.diagnostics, result.sources, len(files), _use_colour(no_color))
        )


def exit_code(result: Any, deny: tuple[str, ...]) -> int:
    from spark_dsl.diagnostics import Severity

    if result.has_errors:
        return EXIT_ERRORS
    if "warnings" in deny and any(d.severity is Severity.WARNING for d in result.diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


@main.command()
@click.argument("paths", nargs=-1, required=True)
@_common
def check(paths: tuple[str, ...], root: Path, fmt: str, deny: tuple[str, ...], no_color: bool) -> None:
    """Parse, resolve and check files (a directory means every *.spark below it)."""
    result = checked_run(paths, root)
    try:
        emit_diagnostics(result, fmt, no_color)
    except Exception as err:
        _internal_failure(err)
    sys.exit(exit_code(result, deny))


@main.command()
@click.argument("code", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
@click.option("--list", "list_codes", is_flag=True, help="List every code with its severity and title.")
def explain(code: str | None, fmt: str, list_codes: bool) -> None:
    """What a diagnostic code means, the recipe statement behind it, a failing and a fixed example."""
    from spark_dsl.codes import close_codes, listing, lookup

    if list_codes or code is None:
        if code is not None:
            _usage("give a code or --list, not both")
        if not list_codes:
            _usage("give a code (`spark explain SPK212`), or --list for every code")
        sys.stdout.write(listing())
        return
    doc = lookup(code)
    if doc is None:
        close = close_codes(code)
        hint = f"; close codes: {', '.join(close)}" if close else ""
        # Self-contained: an installed spark-dsl has no docs/ folder to point at.
        _usage(f"unknown diagnostic code {code!r}{hint} (`spark explain --list` lists every code)")
    sys.stdout.write(doc.markdown() if fmt == "markdown" else doc.text())


@main.command(name="fmt")
@click.argument("paths", nargs=-1, required=True)
@click.option("--check", is_flag=True, help="Write nothing; list files that would change.")
@click.option("--diff", "show_diff", is_flag=True, help="Write nothing; print the changes.")
def fmt_command(paths: tuple[str, ...], check: bool, show_diff: bool) -> None:
    """Canonical formatting, comments kept, idempotent (`-` formats stdin to stdout)."""
    from spark_dsl.format.command import FormatUsageError, format_paths

    try:
        code = format_paths(list(paths), check, show_diff, sys.stdout, sys.stderr)
    except FormatUsageError as err:
        _usage(str(err))
    except BrokenPipeError:  # `spark fmt --diff | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_ERRORS)
    except Exception as err:  # a formatter bug becomes exit 3, never a traceback
        _internal_failure(err)
    sys.exit(code)


@main.command()
@click.option("--stdio", is_flag=True, help="Talk over stdin and stdout (the only transport).")
def lsp(stdio: bool) -> None:
    """Language server over stdio."""
    from importlib.util import find_spec

    missing = [name for name in ("pygls", "lsprotocol") if find_spec(name) is None]
    if missing:
        # Regular dependencies: only an install made with --no-deps lacks them. Name them with
        # the ranges spark-dsl's own metadata gives, so the fix installs what it was built for.
        from importlib.metadata import PackageNotFoundError, requires

        try:
            declared = requires("spark-dsl") or []
        except PackageNotFoundError:
            declared = []
        plain = [r.replace(" ", "") for r in declared if ";" not in r]  # not the extras' entries
        wanted = [next((r for r in plain if r.startswith(name)), name) for name in missing]
        _usage(
            f"`spark lsp` needs {' and '.join(missing)}, which spark-dsl depends on but this "
            f"environment lacks: pip install {' '.join(repr(w) for w in wanted)}"
        )
    from spark_dsl.lsp.server import serve

    serve()


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("-d", "--deployment", "names", multiple=True, help="Only these deployments.")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--no-color", is_flag=True, help="No colour (NO_COLOR is honoured too).")
@click.option(
    "--verify-vllm",
    is_flag=True,
    help="Also parse every launch with the vLLM installed here (its own serve parser).",
)
@click.option(
    "--vllm-python",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Interpreter with vLLM installed (default: $SPARK_VLLM_PYTHON, else the one `vllm` on PATH runs).",
)
def plan(
    paths: tuple[str, ...],
    names: tuple[str, ...],
    root: Path,
    fmt: str,
    no_color: bool,
    verify_vllm: bool,
    vllm_python: Path | None,
) -> None:
    """The resolved deployment: values with origins, capacity arithmetic, and the exact vLLM launches."""
    result = checked_run(paths, root)
    try:
        plans = result.plans
        if names:
            unknown = sorted(set(names) - {p.name for p in plans} - {d.name for d in result.deployments})
            if unknown:
                _usage(f"no deployment named {', '.join(unknown)} in {', '.join(paths)}")
            plans = [p for p in plans if p.name in names]
        if fmt == "json":
            from spark_dsl.render.json_format import diagnostics_document
            from spark_dsl.render.plan import render_json

            doc = diagnostics_document([s.name for s in result.files], result.diagnostics, result.sources)
            sys.stdout.write(render_json(plans, doc))
        else:
            from spark_dsl.render.plan import render_text

            sys.stdout.write(render_text(plans))
            if result.diagnostics:
                emit_diagnostics(result, "text", no_color)
        rejected = _verify_with_local_vllm(plans, vllm_python) if verify_vllm else 0
    except Exception as err:
        _internal_failure(err)
    sys.exit(EXIT_ERRORS if rejected else exit_code(result, ()))


def _vllm_interpreter(explicit: Path | None) -> Path:
    """The Python that runs the user's `vllm`: explicit, $SPARK_VLLM_PYTHON, or `vllm`'s shebang."""
    import shutil

    if explicit is not None:
        return explicit
    if os.environ.get("SPARK_VLLM_PYTHON"):
        return Path(os.environ["SPARK_VLLM_PYTHON"])
    exe = shutil.which("vllm")
    if exe:
        first = Path(exe).read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace")
        if first.startswith("#!") and "python" in first:
            return Path(first[2:].strip().split()[0])
    _usage("--verify-vllm needs vLLM: pass --vllm-python, set SPARK_VLLM_PYTHON, or put `vllm` on PATH")


def _verify_with_local_vllm(plans: list[Any], vllm_python: Path | None) -> int:
    """Parses every launch with the user's vLLM; reports rejections on stderr, returns their count."""
    from spark_dsl.vllm_verify import VllmVerifyError, verify_with_vllm

    launches = [(p, launch) for p in plans for launch in p.launches if launch.argv[:2] == ("vllm", "serve")]
    python = _vllm_interpreter(vllm_python)
    try:
        verdicts = verify_with_vllm([launch.argv for _, launch in launches], python=python, expect_version=None)
    except VllmVerifyError as err:
        _usage(str(err))
    rejected = 0
    for (plan_, launch), verdict in zip(launches, verdicts, strict=True):
        if not verdict.ok:
            rejected += 1
            click.echo(
                f"error: the vLLM at {python} rejects the {launch.role} launch (node {launch.node_rank}) "
                f"of {plan_.name}: {verdict.error}",
                err=True,
            )
    click.echo(f"vLLM at {python}: {len(launches) - rejected} of {len(launches)} launches accepted", err=True)
    return rejected



def _add_build_diagnostics(result: Any, found: list[Any]) -> None:
    """The build's own diagnostics join the run's, in file order; `ignore[...]` silences infos."""
    from spark_dsl.diagnostics import Severity
    from spark_dsl.pipeline import ignored_codes

    for diagnostic in found:
        loc = diagnostic.location
        source = result.sources.get(loc.file) if loc is not None else None
        if diagnostic.severity is Severity.INFO and source is not None:
            line, _ = source.index.position(loc.span.start)
            silenced = ignored_codes(source)
            if diagnostic.code in silenced.get(line, set()) | silenced.get(line - 1, set()):
                continue
        result.diagnostics.append(diagnostic)
    order = {name: i for i, name in enumerate(result.sources)}
    result.diagnostics.sort(
        key=lambda d: (order.get(d.location.file, -1) if d.location else -1, d.sort_key)
    )


def _build_scope(result: Any, paths: tuple[str, ...], root: Path) -> Any:
    """The specs this build speaks for: named, read, and read with errors (whose folders it keeps)."""
    from spark_dsl.diagnostics import Severity
    from spark_dsl.targets import writer

    failed = {d.location.file for d in result.diagnostics if d.severity is Severity.ERROR and d.location}
    return writer.Scope(
        root.resolve(),
        tuple(Path(p).resolve() for p in paths),
        read=frozenset(s.path.resolve() for s in result.sources.values()),
        unsure=frozenset(s.path.resolve() for name, s in result.sources.items() if name in failed),
    )


def _report_output_problems(problems: list[Any]) -> None:
    for problem in problems:
        click.echo(f"spark: error[{problem.code}]: {problem.message}\n  = help: {problem.help}", err=True)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "-t",
    "--target",
    "targets",
    multiple=True,
    metavar="TARGET",
    help="Build exactly this target for every deployment (repeatable).",
)
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("build"),
    show_default=True,
    help="Folder that receives one folder per deployment.",
)
@click.option("--check", is_flag=True, help="Write nothing; list every file a build would change.")
@click.option(
    "--take-over",
    is_flag=True,
    help="Replace or remove deployment folders spark did not write or that were edited by hand.",
)
@_common
def build(
    paths: tuple[str, ...],
    targets: tuple[str, ...],
    out_dir: Path,
    check: bool,
    take_over: bool,
    root: Path,
    fmt: str,
    deny: tuple[str, ...],
    no_color: bool,
) -> None:
    """Check, then write each deployment's targets to OUTPUT/<deployment>/."""
    from spark_dsl.schema import TARGET_KINDS

    unknown = [t for t in targets if t not in TARGET_KINDS]
    if unknown:
        _usage(f"unknown target {unknown[0]!r}; targets are {', '.join(TARGET_KINDS)}")
    result = checked_run(paths, root)
    try:
        from spark_dsl.targets import writer
        from spark_dsl.targets.build import build as render_outputs

        failing = sorted(
            {d.name for d in result.deployments if result.deployment_has_errors(d.name)}
        )
        forced = tuple(dict.fromkeys(targets))
        outcome = render_outputs(result.plans, result.deployment_has_errors, failing, forced, root)
        _add_build_diagnostics(result, outcome.diagnostics)
        scope = _build_scope(result, paths, root)
        if check:
            try:
                changes, problems = writer.check(out_dir, outcome.outputs, outcome.held, scope, take_over)
            except writer.OutputError as err:
                changes, problems = [], err.problems
            emit_diagnostics(result, fmt, no_color)
            # Text output keeps stdout for people; the machine formats keep it for their document.
            stream = sys.stdout if fmt == "text" else sys.stderr
            stream.writelines(f"would change {change}\n" for change in changes)
            _report_output_problems(problems)
            sys.exit(EXIT_ERRORS if changes or problems else exit_code(result, deny))
        try:
            report = writer.write(
                out_dir,
                outcome.outputs,
                outcome.held,
                scope,
                take_over,
                on_wait=lambda: click.echo(f"spark: waiting for another build of {out_dir} to finish", err=True),
            )
        except writer.OutputError as err:
            emit_diagnostics(result, fmt, no_color)
            _report_output_problems(err.problems)
            sys.exit(EXIT_ERRORS)
        emit_diagnostics(result, fmt, no_color)
        for line in report:
            click.echo(f"spark: {line}", err=True)
    except Exception as err:  # a bug becomes exit 3 with the file's name, never a traceback
        _internal_failure(err)
    sys.exit(exit_code(result, deny))
