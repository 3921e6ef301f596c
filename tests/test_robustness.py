"""No input makes spark raise: 2,000+ mutations of real specs all end in exit 0 or 1 and valid JSON."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from spark_dsl.cli import main
from spark_dsl.pipeline import run

REPO = Path(__file__).resolve().parent.parent
SEEDS = (
    sorted((REPO / "examples").rglob("*.spark"))
    + sorted((REPO / "specs").rglob("*.spark"))
    + sorted((REPO / "tests/fixtures").rglob("*.spark"))
)
MUTATIONS = 2400
NOISE = ['"', "{", "}", "=", "+", "(", ")", "[", "]", ",", "\\", "#", "\n", "K", "1.", "_", "é", "\x00", "tp"]


def check_text(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.spark"
    result = run([path], tmp_path, overlays={path: text})
    for d in result.diagnostics:
        assert d.code.startswith("SPK") and d.help, d


def test_every_prefix_of_every_seed(tmp_path: Path) -> None:
    for seed in SEEDS:
        text = seed.read_text(encoding="utf-8")
        for cut in range(0, len(text), 7):
            check_text(tmp_path, text[:cut])


def mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(chars) + 1)
        op = rng.random()
        if op < 0.4 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(pos, rng.choice(NOISE))
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(NOISE)
    return "".join(chars)


def test_mutation_corpus_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(20261130)  # fixed: a failure reproduces
    texts = [s.read_text(encoding="utf-8") for s in SEEDS]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "base.spark").write_text("profile base { gpus = 8 }\n")
    runner = CliRunner()
    codes = {0: 0, 1: 0}
    for i in range(MUTATIONS):
        text = mutate(rng, rng.choice(texts))
        (tmp_path / "fuzz.spark").write_text(text, encoding="utf-8")
        result = runner.invoke(main, ["check", "fuzz.spark", "--format", "json"])
        assert result.exit_code in (0, 1), (i, text, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), (i, text)
        doc = json.loads(result.stdout)
        assert (doc["summary"]["errors"] > 0) == (result.exit_code == 1), (i, text)
        codes[result.exit_code] += 1
    assert codes[1] > 1000 and codes[0] > 50, codes  # the corpus exercises both outcomes


def test_binary_and_empty_files(tmp_path: Path) -> None:
    (tmp_path / "bin.spark").write_bytes(b"\xff\xfe\x00deployment")
    (tmp_path / "empty.spark").write_bytes(b"")
    result = run([tmp_path / "bin.spark", tmp_path / "empty.spark"], tmp_path)
    assert [d.code for d in result.diagnostics] == ["SPK007"]
