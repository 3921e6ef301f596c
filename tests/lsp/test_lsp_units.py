"""The language server's pure parts: typing context, positions, ignore comments, resolved values."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from spark_dsl.loader import SourceFile
from spark_dsl.lsp.code_actions import ignore_edit
from spark_dsl.lsp.context import Want, typing_context
from spark_dsl.lsp.positions import TextPositions, negotiate
from spark_dsl.lsp.resolved import resolved_values
from spark_dsl.pipeline import ignored_codes, run
from spark_dsl.syntax.parser import parse


def _context(text_with_cursor: str):  # type: ignore[no-untyped-def]
    offset = text_with_cursor.index("|")
    return typing_context(text_with_cursor.replace("|", ""), offset)


@pytest.mark.parametrize(
    ("text", "want", "path", "key"),
    [
        ("|", Want.STATEMENT, None, None),
        ("deployment d {\n  |\n}", Want.KEY, (), None),
        ("deployment d {\n  serve {\n    po|\n  }\n}", Want.KEY, ("serve",), None),
        (
            "deployment d {\n  target kubernetes {\n    |\n  }\n}",
            Want.KEY,
            ("target", "kubernetes"),
            None,
        ),
        ("deployment d {\n  checkpoint = |\n}", Want.VALUE, (), "checkpoint"),
        ("profile p {\n  modalities = [text, |]\n}", Want.VALUE, (), "modalities"),
        ("deployment d {\n  target |\n}", Want.LABEL, (), "target"),
        ("deployment d extends a, |", Want.PROFILE, None, None),
        ('import "prof|', Want.IMPORT, None, None),
    ],
)
def test_typing_context(text: str, want: Want, path: tuple[str, ...] | None, key: str | None) -> None:
    ctx = _context(text)
    assert ctx is not None
    assert (ctx.want, ctx.path, ctx.key) == (want, path, key)


@pytest.mark.parametrize(
    "text",
    [
        "deployment d {\n  # checkpoint = |\n}",  # in a comment
        'deployment d {\n  model = "muse|\n}',  # in a string
        "deployment d {\n  nonsense {\n    |\n  }\n}",  # in a block the schema does not know
    ],
)
def test_no_context_where_nothing_fits(text: str) -> None:
    assert _context(text) is None


def test_keys_set_before_and_after_the_cursor_are_present() -> None:
    ctx = _context("deployment d {\n  model = x\n  |\n  serve {}\n  checkpoint = nvfp4\n}")
    assert ctx is not None
    assert {"model", "serve", "checkpoint"} <= ctx.present
    assert "accelerator" not in ctx.present


def test_a_partial_word_is_replaced_from_its_start() -> None:
    ctx = _context("deployment d {\n  checkpoint = bf16-to|\n}")
    assert ctx is not None and ctx.start == len("deployment d {\n  checkpoint = ")


def test_utf32_is_chosen_only_when_offered() -> None:
    assert negotiate(["utf-8", "utf-32"]) == "utf-32"
    assert negotiate(["utf-8", "utf-16"]) == "utf-16"
    assert negotiate(["utf-8"]) == "utf-16"
    assert negotiate(None) == "utf-16"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_positions_round_trip_past_the_basic_plane(encoding: str) -> None:
    text = 'a = "🙂x🙂"\nb = 1\n'
    positions = TextPositions(text, encoding)
    for offset in range(len(text) + 1):
        assert positions.offset(positions.position(offset)) == offset
    x = text.index("x")
    assert positions.position(x).character == (7 if encoding == "utf-16" else 6)


def test_a_position_past_the_line_end_clamps_to_it() -> None:
    positions = TextPositions("ab\ncd\n", "utf-16")
    assert positions.offset(types.Position(line=0, character=99)) == 2
    assert positions.offset(types.Position(line=9, character=0)) == 6


def test_the_ignore_edit_adds_a_comment_the_pipeline_honours() -> None:
    text = "profile p {\n    nodes = 1\n}\n"
    edit = ignore_edit(text, 1, "SPK402", TextPositions(text, "utf-16"))
    assert edit.new_text == "    # spark: ignore[SPK402]\n"
    edited = text[:12] + edit.new_text + text[12:]
    module = parse(edited, "i.spark").module
    source = SourceFile(Path("i.spark"), "i.spark", edited, module)
    assert ignored_codes(source) == {2: {"SPK402"}}


def test_the_ignore_edit_joins_an_existing_comment_above() -> None:
    text = "profile p {\n  # spark: ignore[SPK401]\n  nodes = 1\n}\n"
    edit = ignore_edit(text, 2, "SPK402", TextPositions(text, "utf-16"))
    assert edit.range == types.Range(
        start=types.Position(line=1, character=0), end=types.Position(line=1, character=25)
    )
    assert edit.new_text == "  # spark: ignore[SPK401, SPK402]"


def test_resolved_values_say_where_each_value_came_from(tmp_path: Path) -> None:
    (tmp_path / "p.spark").write_text("profile base {\n  serve {\n    port = 9000\n  }\n}\n")
    spec = tmp_path / "d.spark"
    spec.write_text(
        'import "p.spark"\ndeployment d extends base {\n  model = muse-spark-open\n'
        "  accelerator = b200\n  max_model_len = 32K\n}\n"
    )
    result = run([spec], tmp_path)
    (dep,) = result.deployments
    values = resolved_values(dep, result.sources)
    assert values["max_model_len"].value == "32K"
    assert values["max_model_len"].origin == "user"
    assert values["serve.port"].origin == "profile base"
    assert values["serve.port"].where is not None and values["serve.port"].where.endswith("p.spark:3")
    assert (values["nodes"].value, values["nodes"].origin) == ("1", "default")
    assert "model" in values and "gpus" in values
    assert values["checkpoint"].value == "by recipe path"  # without the plan: the schema's word


def test_the_plan_supplies_recipe_defaults_and_policy_origins(tmp_path: Path) -> None:
    spec = tmp_path / "amd.spark"
    spec.write_text(
        "deployment amd {\n  model = muse-spark-open\n  accelerator = mi355x\n"
        "  workload {\n    concurrency = 4\n  }\n}\n"
    )
    result = run([spec], tmp_path)
    (dep,) = result.deployments
    (plan,) = result.plans
    values = resolved_values(dep, result.sources, plan)
    assert (values["checkpoint"].value, values["checkpoint"].origin) == ("mxfp4", "recipe default")
    assert values["parallel"].origin.startswith("workload policy: concurrency 4")
    assert (values["workload.concurrency"].value, values["workload.concurrency"].origin) == (
        "4",
        "user",
    )
