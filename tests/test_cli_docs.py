"""docs/cli.md's reference is the command line's own, and docs/configuration.md's examples and
key table are what spark_dsl.config reads."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from cli_helpers import WARNING, spark, write

from spark_dsl import config
from spark_dsl.cli import main
from spark_dsl.cli_reference import BEGIN, END, reference, render_page

REPO = Path(__file__).resolve().parent.parent
CLI_MD = REPO / "docs/cli.md"
CONFIGURATION_MD = REPO / "docs/configuration.md"
FENCE = re.compile(r"^```(\S+)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def test_the_cli_reference_is_current() -> None:
    page = CLI_MD.read_text(encoding="utf-8")
    assert page.count(BEGIN) == page.count(END) == 1
    assert render_page(page, main) == page, "docs/cli.md is stale: run `python -m spark_dsl.dev regen`"


def test_the_reference_names_every_subcommand_and_option() -> None:
    text = reference(main)
    ctx = click.Context(main, info_name="spark")
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None
        assert f"## `spark {name}`" in text
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert all(opt in text for opt in param.opts), (name, param.opts)


def test_a_stale_reference_is_caught() -> None:
    page = CLI_MD.read_text(encoding="utf-8")
    stale = page.replace("| `--show-settings` |", "| `--show-setting` |")
    assert stale != page and render_page(stale, main) != stale


def _toml_blocks() -> list[tuple[str, str]]:
    text = CONFIGURATION_MD.read_text(encoding="utf-8")
    out = []
    for language, attributes, body in FENCE.findall(text):
        if language == "toml":
            name = re.search(r"file=(\S+)", attributes)
            assert name, "a toml example says which file it is: file=spark.toml or file=pyproject.toml"
            out.append((name.group(1), body))
    return out


@pytest.mark.parametrize(("name", "body"), _toml_blocks(), ids=lambda v: v if v.endswith(".toml") else "")
def test_configuration_examples_are_valid(tmp_path: Path, name: str, body: str) -> None:
    (tmp_path / name).write_text(body, encoding="utf-8")
    settings = config.load(tmp_path / name, tmp_path)
    assert settings.diagnostics == ()
    assert settings.warnings_as_errors.value is True  # every example sets something, read


def test_the_key_table_is_the_code_s() -> None:
    rows = re.findall(r"^\| `([a-z-]+)` \| [^|]+ \| ([^|]+) \|", CONFIGURATION_MD.read_text(encoding="utf-8"), re.M)
    assert tuple(key for key, _ in rows) == config.KEYS
    defaults = dict(rows)
    assert defaults["exclude"].strip() == "`[" + ", ".join(f'"{d}"' for d in config.DEFAULT_EXCLUDE) + "]`"
    assert defaults["include"].strip() == "`[" + ", ".join(f'"{d}"' for d in config.DEFAULT_INCLUDE) + "]`"


def test_the_unknown_key_example_is_real_output(tmp_path: Path) -> None:
    text = CONFIGURATION_MD.read_text(encoding="utf-8")
    shown = next(body for language, _, body in FENCE.findall(text) if body.startswith("error[SPK601]"))
    write(tmp_path, {"spark.toml": '# team\n\nignores = ["SPK401"]\n', "a.spark": WARNING.format(name="a")})
    r = spark("check", "a.spark", cwd=tmp_path)
    assert r.stdout.startswith(shown), r.stdout
