"""A target declared in one place is checked, built and listed everywhere (issue 13, item 5).

This module registers a throwaway target, `toy` (file `toy.txt`, one string setting, one host),
and nothing else: the schema, the type checker, SPK501, the build, `spark build -t`, `spark
explain`, the key reference and the language server's completion all pick it up from its
declaration. The CLI runs in this process (click's runner) so the registration is visible.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from spark_dsl import cli
from spark_dsl.keys_reference import reference_markdown
from spark_dsl.lsp.completion import completions
from spark_dsl.lsp.positions import UTF16, TextPositions
from spark_dsl.schema import KeySpec, Kind, deployment_schema
from spark_dsl.targets import registry as target_table
from spark_dsl.targets.common import Job
from spark_dsl.targets.registry import Target

# The built-in targets, in TARGET_MODULES' order.
BUILT_IN = (
    "shell",
    "compose",
    "slurm",
    "kubernetes",
    "vllm-config",
    "smoke",
    "bench",
    "smoke-job",
    "bench-job",
    "bench-slurm",
    "smoke-slurm",
)


def _render(job: Job) -> str:
    return f"{job.setting('greeting')} from {job.name}, {len(job.launches)} launch(es)\n"


TOY = Target(
    "toy",
    "toy.txt",
    "a greeting, `toy.txt`",
    _render,
    keys=(KeySpec("greeting", Kind.STRING, "what the toy says", fallback="hello"),),
    single_host="a toy greets from one host",
)

ONE_NODE = """deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
{body}
}}
"""
TWO_NODES = """deployment wide {
  model       = muse-spark-open
  accelerator = b200
  nodes       = 2
  parallel    = dp(2) + tp + ep
  target toy {}
}
"""


@pytest.fixture
def toy() -> Iterator[Target]:
    """`toy` in the target table for one test; the table and what derives from it restored after."""
    before = deployment_schema()
    target_table.register(TOY)
    try:
        yield TOY
    finally:
        target_table.unregister("toy")
    assert target_table.kinds() == BUILT_IN
    assert deployment_schema() == before


def invoke(folder: Path, *args: str) -> Any:
    old = Path.cwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(cli.main, list(args), env={"NO_COLOR": "1"})
    finally:
        os.chdir(old)


def _spec(folder: Path, body: str, name: str = "greeter") -> Path:
    path = folder / f"{name}.spark"
    path.write_text(ONE_NODE.format(name=name, body=body), encoding="utf-8")
    return path


def test_a_registered_target_is_checked(toy: Target, tmp_path: Path) -> None:
    _spec(tmp_path, '  target toy { greeting = "hi" }')
    result = invoke(tmp_path, "check", "greeter.spark")
    assert result.exit_code == 0, result.output


def test_an_unknown_key_of_a_registered_target_is_an_error_with_help(toy: Target, tmp_path: Path) -> None:
    _spec(tmp_path, '  target toy { greting = "hi" }')
    result = invoke(tmp_path, "check", "greeter.spark")
    assert result.exit_code == 1, result.output
    assert "error[SPK101]" in result.output, result.output
    assert "`greting`" in result.output
    assert "greeting" in result.output.split("greting", 2)[-1], "the help names the key it meant"


def test_the_single_host_rule_reads_the_declaration(toy: Target, tmp_path: Path) -> None:
    (tmp_path / "wide.spark").write_text(TWO_NODES, encoding="utf-8")
    result = invoke(tmp_path, "check", "wide.spark")
    assert result.exit_code == 1, result.output
    assert (
        "error[SPK501]: `target toy` cannot run `wide`: it needs 2 nodes and a toy greets from one host"
        in result.output
    ), result.output
    assert "use `target shell`, `target slurm` or `target kubernetes` for more than one node" in result.output


def test_a_registered_target_is_built(toy: Target, tmp_path: Path) -> None:
    _spec(tmp_path, '  target toy { greeting = "hi" }')
    _spec(tmp_path, "  target shell {}", name="plain")
    result = invoke(tmp_path, "build", ".", "-o", "out")
    assert result.exit_code == 0, result.output
    written = tmp_path / "out" / "greeter" / "toy.txt"
    assert written.read_text(encoding="utf-8") == "hi from greeter, 1 launch(es)\n"
    assert written.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in (tmp_path / "out" / "plain").iterdir()) == ["serve.sh"]

    forced = invoke(tmp_path, "build", "plain.spark", "-t", "toy", "-t", "shell", "-o", "forced")
    assert forced.exit_code == 0, forced.output
    plain = tmp_path / "forced" / "plain"
    # Built-ins first, in the table's order; the default setting comes from the declaration.
    assert sorted(p.name for p in plain.iterdir()) == ["serve.sh", "toy.txt"]
    assert (plain / "toy.txt").read_text(encoding="utf-8") == "hello from plain, 1 launch(es)\n"


def test_a_target_registered_after_a_build_writes_its_file_executable_as_declared(tmp_path: Path) -> None:
    """The writer keeps the executable names between files; a change to the table renews them."""
    from msgspec.structs import replace

    _spec(tmp_path, "  target shell {}", name="plain")
    assert invoke(tmp_path, "build", ".", "-o", "before").exit_code == 0  # the names are read once
    target_table.register(replace(TOY, executable=True))
    try:
        _spec(tmp_path, '  target toy { greeting = "hi" }')
        result = invoke(tmp_path, "build", ".", "-o", "out")
    finally:
        target_table.unregister("toy")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "greeter" / "toy.txt").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "out" / "plain" / "serve.sh").stat().st_mode & 0o777 == 0o755


def test_a_registered_single_host_target_refuses_several_nodes_at_build(toy: Target, tmp_path: Path) -> None:
    (tmp_path / "wide.spark").write_text(TWO_NODES.replace("  target toy {}\n", ""), encoding="utf-8")
    result = invoke(tmp_path, "build", "wide.spark", "-t", "toy", "-o", "out")
    assert result.exit_code == 1, result.output
    assert "a toy greets from one host; wide needs 2 nodes" in result.output
    assert "build `wide` with a multi-node target: shell, slurm or kubernetes" in result.output
    assert not (tmp_path / "out" / "wide").exists()


def test_a_registered_target_is_listed(toy: Target, tmp_path: Path) -> None:
    _spec(tmp_path, "")
    unknown = invoke(tmp_path, "build", "greeter.spark", "-t", "toys")
    assert unknown.exit_code == 2
    assert f"targets are {', '.join(BUILT_IN)}, toy" in unknown.output

    _spec(tmp_path, "  target toys {}", name="typo")
    typo = invoke(tmp_path, "check", "typo.spark")
    kinds = ", ".join(f"`{kind}`" for kind in BUILT_IN)
    assert f"target kinds are {kinds}, `toy`" in typo.output

    explained = invoke(tmp_path, "explain", "target.toy.greeting")
    assert explained.exit_code == 0, explained.output
    assert "what the toy says" in explained.output and "hello" in explained.output

    reference = reference_markdown()
    assert "## `target toy { }`" in reference
    assert "| `greeting` | string |" in reference

    text = ONE_NODE.format(name="d", body="  target ")
    offset = text.index("target ") + len("target ")
    items = completions(text, offset, TextPositions(text, UTF16), tmp_path / "d.spark", (tmp_path, {}), False)
    assert "toy" in [item.label for item in items]


def test_a_target_is_unknown_once_unregistered(tmp_path: Path) -> None:
    _spec(tmp_path, "  target toy {}")
    result = invoke(tmp_path, "check", "greeter.spark")
    assert result.exit_code == 1, result.output
    assert "error[SPK110]: unknown target `toy`" in result.output
    kinds = ", ".join(f"`{kind}`" for kind in BUILT_IN)
    assert f"target kinds are {kinds}\n" in result.output


def test_a_second_target_of_the_same_kind_or_file_is_refused() -> None:
    with pytest.raises(ValueError, match="clashes with `shell`"):
        target_table.register(Target("shell", "other.sh", "another shell", _render))
    with pytest.raises(ValueError, match="clashes with `compose`"):
        target_table.register(Target("compose2", "compose.yaml", "another compose file", _render))
    assert target_table.kinds() == BUILT_IN
