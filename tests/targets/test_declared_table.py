"""The shipped target declarations (spark_dsl/targets/declared.json) are what the modules declare.

A check reads the built-in targets from that file so it imports no renderer (issue 14); the
modules' `TARGET = Target(...)` stay the one place a target is declared. These tests fail when
a module's declaration changes and the file is not written again, and when a built-in's
stand-in renderer does not render what the module's own renderer does.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import msgspec
import pytest

from spark_dsl.pipeline import run
from spark_dsl.schema import KeySpec, Kind
from spark_dsl.targets import declared
from spark_dsl.targets import registry as target_table
from spark_dsl.targets.build import render_plan
from spark_dsl.targets.common import Job
from spark_dsl.values import Volume

SPEC = """deployment one {
  model       = muse-spark-open
  accelerator = b200
}
"""
REGENERATE = "run `python -m spark_dsl.dev regen`"


def _declaration(target: target_table.Target) -> target_table.Target:
    """The module's own declaration of a built-in target read from the file."""
    assert isinstance(target.render, declared.ModuleRenderer)
    module_target: target_table.Target = importlib.import_module(target.render.module).TARGET
    return module_target


def test_the_shipped_file_is_what_the_modules_declare() -> None:
    assert declared.DECLARED_FILE.read_text(encoding="utf-8") == declared.render(declared.generate()), REGENERATE


@pytest.mark.parametrize("target", declared.load(), ids=lambda t: t.kind)
def test_each_built_in_decodes_to_its_modules_declaration(target: target_table.Target) -> None:
    """Field by field, typed values included (a Volume default stays a Volume, not a dict)."""
    own = _declaration(target)
    assert msgspec.structs.replace(target, render=own.render) == own


@pytest.mark.parametrize(
    "fallback", [Volume("emptydir"), Volume("pvc", "weights"), ("a", "b")], ids=["volume", "named", "list"]
)
def test_typed_defaults_survive_the_round_trip(fallback: object) -> None:
    """A typed default (a volume, a list) reads back as the same type from the shipped file's JSON.
    (No built-in key has a volume default since spark picks the Kubernetes cache per deployment.)"""
    key = KeySpec("k", Kind.VOLUME if isinstance(fallback, Volume) else Kind.STRING_LIST, "doc", fallback=fallback)
    decoded = declared._key(msgspec.json.decode(msgspec.json.encode(key)))
    assert decoded == key
    assert type(decoded.fallback) is type(fallback)


def test_a_build_renders_through_the_stand_ins_what_the_modules_render(tmp_path: Path) -> None:
    """Every built-in, rendered by the build (through the stand-in) and by the module's renderer."""
    (tmp_path / "d.spark").write_text(SPEC, encoding="utf-8")
    result = run([tmp_path / "d.spark"], tmp_path)
    assert not result.has_errors, [d.message for d in result.diagnostics]
    (plan,) = result.plans
    kinds = list(target_table.kinds())
    output, problems = render_plan(plan, result.launches[plan], kinds, "d.spark")
    assert not problems
    for kind in kinds:
        target = target_table.find(kind)
        assert target is not None
        own = _declaration(target).render(Job(plan, result.launches[plan], kind, "d.spark"))
        assert output.files[target.file_name] == own, kind
    assert "exec vllm serve" in output.files["serve.sh"]
