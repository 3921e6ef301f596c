"""The plan is the complete, immutable hand-off (issue 13, item 2).

Everything after the plan (rules, launches, targets, `spark plan`) reads the plan's parts, never
the spec's typed body; each default is defined once, in the schema, so leaving a key out and
writing its default give the same plan, launches and outputs.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.pipeline import run
from spark_dsl.plan.in_effect import settings_in_effect
from spark_dsl.schema import BlockSpec, KeySpec, Kind, deployment_schema
from spark_dsl.targets import registry as target_table
from spark_dsl.targets.build import render_plan
from spark_dsl.units import format_duration
from spark_dsl.values import spelled

PACKAGE = Path(__file__).resolve().parent.parent / "spark_dsl"
# The modules that may read a deployment's typed body: the plan builder, the pipeline's gate
# before it (a body with rejected values gets no plan), and the language server's table of
# values, which speaks for deployments that have no plan (unknown model, rejected values).
READS_THE_BODY = {"plan/resolve.py", "pipeline.py", "lsp/resolved.py"}
# Every target that runs a launch, from the target table.
TARGETS = tuple(t.kind for t in target_table.all_targets() if not t.client)


def _body_reads(path: Path) -> list[int]:
    """Lines that read `<something>.body` of a deployment (`dep.body`, `deployment.body`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "body"
        and isinstance(node.value, (ast.Name, ast.Attribute))
        and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) in ("dep", "deployment")
    ]


def test_only_the_plan_builder_reads_the_typed_body() -> None:
    found = {
        str(path.relative_to(PACKAGE)): lines for path in sorted(PACKAGE.rglob("*.py")) if (lines := _body_reads(path))
    }
    assert set(found) <= READS_THE_BODY, found


def test_the_scan_sees_a_body_read(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f(plan):\n    return plan.deployment.body.block('serve')\n", encoding="utf-8")
    assert _body_reads(sample) == [2]


SPEC = """deployment d {{
  model       = muse-spark-open
  accelerator = b200
{extra}
{targets}
}}
"""


def _spec(block: str | None, written: str) -> str:
    """The base spec, declaring every target, with one key written in its block (None: none written)."""
    targets = dict.fromkeys(TARGETS, "")
    extra = ""
    if block is None:
        pass
    elif block.startswith("target."):
        targets[block.removeprefix("target.")] = f"\n    {written}\n  "
    elif block == "":
        extra = f"  {written}"
    else:
        extra = f"  {block} {{\n    {written}\n  }}"
    declared = "\n".join(f"  target {kind} {{{body}}}" for kind, body in targets.items())
    return SPEC.format(extra=extra, targets=declared)


def _defaulted_keys() -> list[tuple[str, KeySpec]]:
    """(block, key) for every key with a fallback a single-node spec can write: the top level,
    the `serve`, `runtime` and `weights` blocks, and every target."""
    schema = deployment_schema()
    blocks: dict[str, BlockSpec] = {"": schema}
    blocks |= {name: schema.blocks[name] for name in ("serve", "runtime", "weights")}
    blocks |= {f"target.{kind}": spec for kind, spec in (schema.blocks["target"].labels or {}).items()}
    return [(block, key) for block, spec in blocks.items() for key in spec.keys.values() if key.fallback is not None]


def _written(key: KeySpec) -> str:
    """The key's default as a spec writes it."""
    if key.kind is Kind.DURATION:
        return format_duration(key.fallback)
    if key.kind is Kind.STRING:
        return json.dumps(key.fallback)
    if key.kind is Kind.SIZE:
        return f"{key.fallback}B"  # bytes, as a size needs a unit
    return spelled(key.fallback)


def _built(folder: Path, text: str) -> dict[str, Any]:
    folder.mkdir()
    (folder / "d.spark").write_text(text, encoding="utf-8")
    result = run([folder / "d.spark"], folder)
    assert not result.has_errors, [d.message for d in result.diagnostics]
    (plan,) = result.plans
    output, problems = render_plan(plan, result.launches[plan], list(TARGETS), "d.spark")
    assert not problems
    shown = [(s.key, s.value) for s in settings_in_effect(plan)]
    return {"launches": result.launches[plan], "files": output.files, "settings": shown}


def test_every_key_with_a_default_has_one() -> None:
    # The scan below must cover the defaults the targets read (a target's fallbacks and the blocks').
    names = {f"{block}.{key.name}".lstrip(".") for block, key in _defaulted_keys()}
    assert {"serve.port", "weights.download_timeout", "target.slurm.time", "target.kubernetes.namespace"} <= names
    # The waits that follow the ready budget (Slurm's ready_timeout, Compose's start_period) are
    # computed from the checkpoint, not fixed: they have no fallback of their own.
    assert len(names) >= 15


@pytest.mark.parametrize(
    ("block", "key"), _defaulted_keys(), ids=[f"{b}.{k.name}".lstrip(".") for b, k in _defaulted_keys()]
)
def test_writing_the_default_changes_nothing(tmp_path: Path, block: str, key: KeySpec) -> None:
    left_out = _built(tmp_path / "left-out", _spec(None, ""))
    written = _built(tmp_path / "written", _spec(block, f"{key.name} = {_written(key)}"))
    assert written["launches"] == left_out["launches"]
    assert written["files"] == left_out["files"]
    # `spark plan` shows the same values (only the origins say who chose them); a written key it
    # would leave out as not in effect (the RDMA resource without an RDMA fabric) is listed.
    dotted = f"{block}.{key.name}".lstrip(".")
    shown, before = dict(written["settings"]), dict(left_out["settings"])
    assert shown.pop(dotted) == key.fallback
    before.pop(dotted, None)
    assert shown == before


def test_the_plan_and_its_parts_cannot_change(tmp_path: Path) -> None:
    (tmp_path / "d.spark").write_text(_spec(None, ""), encoding="utf-8")
    result = run([tmp_path / "d.spark"], tmp_path)
    (plan,) = result.plans
    with pytest.raises(AttributeError, match="immutable"):
        plan.pools = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.settings["gpus"] = plan.settings["nodes"]  # type: ignore[index]
    with pytest.raises(AttributeError, match="immutable"):
        plan.serve.body = None  # type: ignore[misc]
    assert isinstance(result.launches[plan], tuple)
