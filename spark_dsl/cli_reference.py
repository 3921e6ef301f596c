"""docs/cli.md's reference of every subcommand and option, generated from the click commands.

`python -m spark_dsl.cli_reference docs/cli.md` rewrites the part of the page between the
markers below; the prose around it is written by hand. tests/test_cli_reference.py fails
when the page is stale.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

from spark_dsl import catalog

BEGIN = "<!-- BEGIN GENERATED: python -m spark_dsl.cli_reference docs/cli.md -->"
END = "<!-- END GENERATED -->"

# Click arguments carry no help text of their own.
ARGUMENTS = {
    "paths": "Spec files and folders (every `*.spark` below a folder that the project's `include` and "
    "`exclude` keep); `-` is standard input. Default: `.`, the current folder.",
    "topic": "A diagnostic code such as `SPK212`, or the name of a key (`max_model_len`, `serve.port`), a "
    "block (`target slurm`), an accelerator (`{accelerator}`), a model or a checkpoint. None: every code.",
    "path": "The model's folder (the one holding `config.json`), a `config.json` file, or a repository id "
    "(`org/name`) in the local Hugging Face cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else "
    "`~/.cache/huggingface/hub`). Never downloaded.",
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _help_row(ctx: click.Context) -> tuple[str, str]:
    """The help option as the installed command spells it (click caches a command's help option
    with the names of the first context that asked, so it is not read back from the command)."""
    return f"`{', '.join(ctx.help_option_names)}`", "Show this message and exit."


def _command(name: str, command: click.Command, parent: click.Context) -> list[str]:
    ctx = click.Context(command, info_name=name, parent=parent)
    usage = " ".join(["spark", name, *command.collect_usage_pieces(ctx)])
    out = [f"## `spark {name}`", "", f"Usage: `{usage}`", ""]
    if command.help:
        out += [inspect.cleandoc(command.help), ""]
    rows = []
    for param in command.params:
        if isinstance(param, click.Argument):
            shown = param.make_metavar(ctx)
            accelerator = catalog.load().examples()[0]
            rows.append((f"`{shown}`", ARGUMENTS.get(param.name or "", "").replace("{accelerator}", accelerator)))
            continue
        record = param.get_help_record(ctx)
        if record is None:  # hidden
            continue
        opts, text = record
        rows.append((f"`{_cell(opts)}`", text))
    rows.append(_help_row(ctx))
    out += ["| argument or option | what it does |", "|---|---|"]
    out += [f"| {left} | {_cell(text)} |" for left, text in rows]
    out.append("")
    return out


def _commands(name: str, command: click.Command, parent: click.Context) -> list[str]:
    """A command's section; a group (`spark model`) has one per subcommand (`spark model import`)."""
    if not isinstance(command, click.Group):
        return _command(name, command, parent)
    ctx = click.Context(command, info_name=name, parent=parent)
    subcommands = [(sub, command.get_command(ctx, sub)) for sub in command.list_commands(ctx)]
    shown = [(sub, c) for sub, c in subcommands if c is not None and not c.hidden]
    out = [f"## `spark {name}`", ""]
    if command.help:
        out += [inspect.cleandoc(command.help), ""]
    out += ["Subcommands: " + ", ".join(f"`spark {name} {sub}`" for sub, _ in shown) + ".", ""]
    for sub, subcommand in shown:
        assert subcommand is not None
        out += _command(f"{name} {sub}", subcommand, parent)
    return out


def reference(main: click.Group) -> str:
    """The generated part of docs/cli.md: the group's options, then each subcommand in turn."""
    ctx = click.Context(main, info_name="spark", **main.context_settings)
    out = [BEGIN, "", "## `spark`", "", f"Usage: `spark {' '.join(main.collect_usage_pieces(ctx))}`", ""]
    if main.help:
        out += [inspect.cleandoc(main.help), ""]
    out += ["| option | what it does |", "|---|---|"]
    for param in main.params:
        record = param.get_help_record(ctx)
        if record is not None:
            out.append(f"| `{_cell(record[0])}` | {_cell(record[1])} |")
    out.append("| {} | {} |".format(*_help_row(ctx)))
    out.append("")
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        if command is not None and not command.hidden:
            out += _commands(name, command, ctx)
    out.append(END)
    return "\n".join(out) + "\n"


def render_page(page: str, main: click.Group) -> str:
    """The page with its generated part replaced (the markers must be there, once each)."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + reference(main).rstrip("\n") + page[end:]


if __name__ == "__main__":
    from spark_dsl.cli import main as spark_main

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/cli.md")
    target.write_text(render_page(target.read_text(encoding="utf-8"), spark_main), encoding="utf-8")
