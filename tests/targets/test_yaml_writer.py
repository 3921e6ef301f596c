"""spark_dsl.targets.yaml_text writes, byte for byte, what PyYAML's emitter writes with the same
quoting rules: for every document the committed specs build, for the hostile values of the target
tests, and for generated documents of every shape and nasty string.

The writer exists for speed (PyYAML's pure-Python emitter was most of a build); PyYAML stays the
reference it is compared with here (`yaml_text._pyyaml`), and what the writer does not know it
leaves to PyYAML.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from target_helpers import REPO, SPECS
from test_target_every_setting import SETTINGS, spec, value_of
from test_target_hostile import hostile_values, spec_text

from spark_dsl.pipeline import collect_paths, run
from spark_dsl.targets import yaml_text
from spark_dsl.targets.build import build


def documents_built(paths: list[Path], root: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every document the YAML targets hand to the writer while building `paths`."""
    seen: list[Any] = []
    write = yaml_text._dump

    def record(document: Any) -> str:
        seen.append(document)
        return write(document)

    with monkeypatch.context() as patch:
        patch.setattr(yaml_text, "_dump", record)
        result = run(paths, root)
        outcome = build(result.plans, result.launches, result.deployment_has_errors, [], (), root)
    assert outcome.outputs and not result.has_errors
    return seen


def assert_written_as_pyyaml(documents: list[Any]) -> None:
    for document in documents:
        assert yaml_text._dump(document) == yaml_text._pyyaml(document), document


def test_every_document_of_the_committed_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = documents_built(collect_paths([str(SPECS)], REPO), REPO, monkeypatch)
    assert len(documents) >= 20
    assert_written_as_pyyaml(documents)


def test_every_document_of_the_hostile_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    canary = tmp_path / "canary"
    values = {path: value_of(setting, canary) for path, setting in SETTINGS.items()}
    (tmp_path / "every.spark").write_text(spec(values), encoding="utf-8")
    hostile = hostile_values(canary)
    (tmp_path / "one.spark").write_text(spec_text(hostile), encoding="utf-8")
    (tmp_path / "two.spark").write_text(spec_text(hostile, "hostile-dp", nodes=2), encoding="utf-8")
    paths = sorted(tmp_path.glob("*.spark"))
    documents = documents_built(paths, tmp_path, monkeypatch)
    assert len(documents) >= 10
    assert_written_as_pyyaml(documents)


# Strings at every edge of the writer's own alphabet, of PyYAML's scalar analysis and of the
# quoting rules (typed_plain, control characters), as values and as keys.
EDGES = [
    "", " ", "a", "-", "--", "--port", "-1", "- a", "a-", ".", "..", "...", "...a", "---", "---a", "--x",
    ":", "a:", ":a", "a:b", "a: b", "8000:8000", "a #b", "a#b", "#a", "@a", "a@b", "`a", "'a", 'a"b',
    "=", "<<", "~", "a~", "+", "+1", "1", "01", "08", "0x1F", "1e3", "1_000", "1.5", ".5", "1:30",
    "2001-12-14", "yes", "No", "y", "true", "null", "NULL", ".inf", ".NaN", "a b", "a  b", " a", "a ",
    "a\nb", "a\tb", "a\rb", "\x00", "\x7f", "\x85", "\u2028", "\ufeff", "\xa0", "é", "漢", "\u202e",
    "\U0001f600", "a\udcff", "{a}", "[a]", "a,b", "a?", "?a", "? a", "!a", "&a", "*a", "|", ">", "%a",
    "/path/to/x", "nvidia.com/gpu", "${HF_TOKEN:?set HF_TOKEN}", '{"k":"v"}', "$(LWS_LEADER_ADDRESS)",
    "-1:30", "+1:30.5", "-.5", "+.5", "-.inf", "+.inf", "-0", "--1", "-_1", "-a", "+a", "-=", "_a", "_1", "/a",
    "/1", "Yes1", "n1", "NULLa", "tru",
    "x" * 119, "x" * 120, "x" * 127, "x" * 128, "x" * 999, "x" * 1000, "x " * 600, "é" * 1001,
]  # fmt: skip


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_edge_strings_as_values_and_keys(text: str) -> None:
    for document in (
        {"k": text},
        {text: "v"},
        {text: {text: [text, {text: text}]}},
        [text, [text], {"k": [text]}],
    ):
        assert yaml_text._dump(document) == yaml_text._pyyaml(document)


def test_a_scalar_longer_than_a_line_is_folded_as_pyyaml_folds_it() -> None:
    document = {"args": ["word " * 20_000, "x" * 70_000]}
    assert yaml_text._dump(document) == yaml_text._pyyaml(document)


ALPHABET = [
    *"ab:#-? '\"\\{}[],&*!|>%@`\t\n\r~.0123456789eE+_xXoO=/yYnN$()",
    *("\x00", "\x7f", "\x85", "\u2028", "\u2029", "\ufeff", "é", "Ω", "\U0001f600", "\udcff", "\x1b", "\xa0"),
    *("---", "...", "- ", ": ", " #", "true", "null", "<<", "0x", "1e"),
]


def generated(count: int, seed: int) -> Iterator[Any]:
    """Nested mappings and lists of strings, integers, booleans, None and floats, empty ones too."""
    rng = random.Random(seed)

    def text() -> str:
        length = rng.choice((0, 1, 1, 2, 3, 5, 8, 13)) if rng.random() < 0.97 else rng.choice((119, 120, 128, 1000))
        return "".join(rng.choice(ALPHABET) for _ in range(length))

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth < 4 and roll < 0.2:
            return {text(): value(depth + 1) for _ in range(rng.randint(0, 4))}
        if depth < 4 and roll < 0.35:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return rng.choice((text, text, text, lambda: rng.randint(-5, 10**6), lambda: rng.random() < 0.5,
                           lambda: None, lambda: 1.5))()  # fmt: skip

    for _ in range(count):
        if rng.random() < 0.5:
            yield {text(): value(0) for _ in range(rng.randint(0, 5))}
        else:
            yield [value(0) for _ in range(rng.randint(0, 5))]


@pytest.mark.parametrize("seed", range(4))
def test_generated_documents(seed: int) -> None:
    for document in generated(1500, seed):
        assert yaml_text._dump(document) == yaml_text._pyyaml(document), document


class Text(str):
    """A str subclass, as spark_dsl.plan.template.Template is."""


def test_a_subclass_is_refused_as_pyyaml_refuses_it() -> None:
    import yaml

    for document in ({"k": Text("v")}, [Text("v")], {Text("k"): "v"}, {"k": {"n": True, "x": Text("v")}}):
        with pytest.raises(yaml.representer.RepresenterError):
            yaml_text._pyyaml(document)
        with pytest.raises(yaml.representer.RepresenterError):
            yaml_text._dump(document)


# ---- literal blocks (`yaml_text.BlockText`): scripts and a dashboard's JSON ---------------------

BLOCK_EDGES = [
    "a\nb\n", "a\nb", " a\nb\n", "\na\n", "a\n\nb\n", "a\n\n", "\n", "#!/bin/sh\nset -eu\n", "- a\n: b\n",
    "---\n...\n", "{\n  \"k\": 1\n}\n", "é\n漢\n\U0001f600\n", "x" * 300 + "\ny\n",
    # What a block cannot hold exactly: quoted instead, and read back the same.
    "a \nb\n", "a\nb ", "a\tb\nc\n", "a\rb\nc\n", "a\x85b\nc\n", "a\u2028b\n", "\ufeffa\nb\n", "a\x1bb\n", "ab", "",
]  # fmt: skip


@pytest.mark.parametrize("text", BLOCK_EDGES, ids=range(len(BLOCK_EDGES)))
def test_a_block_is_written_as_pyyaml_writes_it_and_reads_back_exactly(text: str) -> None:
    import yaml

    block = yaml_text.BlockText(text)
    for document in ({"k": block}, [block], {"a": {"b": [block, {"c": block}]}}, [[block]], {"k": [block]}):
        written = yaml_text._dump(document)
        assert written == yaml_text._pyyaml(document)
        assert yaml.safe_load(written) == yaml.safe_load(yaml_text._pyyaml(_plain(document)))
    literal = yaml_text._dump({"k": block}).startswith("k: |")
    assert literal == yaml_text.block_fits(text)
    # A text of several printable lines, none ending in a space, is a literal block: one line per line.
    assert literal == ("\n" in text and text.replace("\n", "").isprintable() and " \n" not in text + "\n")


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, str) else value


@pytest.mark.parametrize("seed", range(2))
def test_generated_blocks_read_back_exactly(seed: int) -> None:
    import yaml

    rng = random.Random(seed)
    for _ in range(2000):
        lines = [
            "".join(rng.choice(ALPHABET) for _ in range(rng.choice((0, 1, 3, 8)))) for _ in range(rng.randint(1, 4))
        ]
        text = "\n".join(lines) + rng.choice(("", "\n", "\n\n"))
        document = {"k": [yaml_text.BlockText(text), {"s": yaml_text.BlockText(text)}]}
        written = yaml_text._dump(document)
        assert written == yaml_text._pyyaml(document), text
        assert yaml.safe_load(written) == {"k": [text, {"s": text}]}, text
