"""One way to read a plan's setting (issue 34, item 7): `plan.setting(key)` and `plan.value(key)`
are total. A key the plan leaves to vLLM reads as None (its value as the schema's fallback, where
the schema has one), never a KeyError: reading `max_model_len` straight from `plan.settings`
raised one for every model outside the recipe and crashed 232 tests. The keys every plan resolves
are promised where the plan is built, and no module reads `plan.settings` by key."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from msgspec.structs import replace

from spark_dsl.pipeline import run
from spark_dsl.plan.model import ALWAYS_RESOLVED, Plan
from spark_dsl.schema import deployment_schema

REPO = Path(__file__).resolve().parent.parent
# A catalog model outside the recipe: no recipe default sets its context length.
GENERIC = "deployment d {\n  model = llama-3-1-8b\n  accelerator = h100\n}\n"


def _plan(tmp_path: Path, text: str) -> Plan:
    (tmp_path / "d.spark").write_text(text, encoding="utf-8")
    (plan,) = run([tmp_path / "d.spark"], tmp_path).plans
    return plan


def test_a_key_left_to_vllm_reads_as_none_not_a_key_error(tmp_path: Path) -> None:
    plan = _plan(tmp_path, GENERIC)
    assert "max_model_len" not in plan.settings  # the case that crashed the rules
    assert plan.setting("max_model_len") is None
    assert plan.value("max_model_len") is None
    assert not plan.long_context


def test_an_unset_key_s_value_is_the_schema_s_fallback(tmp_path: Path) -> None:
    plan = _plan(tmp_path, GENERIC)
    assert plan.setting("allow_unvalidated") is None  # nothing written, nothing resolved
    assert plan.value("allow_unvalidated") is False  # the schema's one definition of the default
    assert deployment_schema().keys["allow_unvalidated"].fallback is False


def _plans() -> list[Plan]:
    specs = sorted((REPO / "specs").rglob("*.spark"))
    fixtures = sorted((REPO / "tests/fixtures/rules").glob("*.spark"))
    return [plan for path in (*specs, *fixtures) for plan in run([path], path.parent).plans]


def test_every_plan_has_the_keys_it_promises_and_reads_every_other_totally() -> None:
    plans = _plans()
    assert len(plans) > 100
    keys = set(deployment_schema().keys) | {"concurrency", "goal", "fabric", "router_image", "no-such-key"}
    for plan in plans:
        for key in ALWAYS_RESOLVED:
            assert plan.setting(key) is not None, (plan.name, key)
        for key in keys:
            resolved, value = plan.setting(key), plan.value(key)
            assert resolved is None or resolved.value == value, (plan.name, key)


def test_a_plan_built_without_a_promised_key_fails_where_it_is_built(tmp_path: Path) -> None:
    plan = _plan(tmp_path, GENERIC)
    without = {key: r for key, r in plan.settings.items() if key != "gpus"}
    with pytest.raises(ValueError, match="built without gpus"):
        replace(plan, settings=without)


def _reads(tree: ast.AST) -> list[tuple[int, str]]:
    """`plan.settings[...]`, `plan.settings.get(...)` and `KEY in plan.settings`, with their lines."""
    found = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Subscript):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target = node.func.value
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            target = node.comparators[0]
        if (
            isinstance(target, ast.Attribute)
            and target.attr == "settings"
            and isinstance(target.value, ast.Name)
            and target.value.id == "plan"
        ):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_reads_a_plan_setting_by_key_but_through_the_accessor() -> None:
    found = {
        f"{path.relative_to(REPO)}:{line}": text
        for path in sorted((REPO / "spark_dsl").rglob("*.py"))
        for line, text in _reads(ast.parse(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "read settings with plan.setting(key) or plan.value(key), which have no KeyError path"


def test_the_scan_sees_each_way_of_reading_by_key() -> None:
    tree = ast.parse('a = plan.settings["x"]\nb = plan.settings.get("y")\nc = "z" in plan.settings\n')
    assert [line for line, _ in _reads(tree)] == [1, 2, 3]


def test_every_key_read_by_name_is_one_a_plan_can_hold() -> None:
    """A misspelt key would read as None quietly: each literal key is a deployment key, or one the
    plan adds (the workload's, the fabric and the router's image)."""
    known = set(deployment_schema().keys) | {"concurrency", "goal", "fabric", "router_image"}
    read = {
        f"{path.relative_to(REPO)}:{node.lineno}": node.args[0].value
        for path in sorted((REPO / "spark_dsl").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("setting", "value")
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "plan"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    assert len(read) > 50
    assert {where: key for where, key in read.items() if key not in known} == {}
