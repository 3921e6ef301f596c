"""No input makes the pipeline raise: truncations and mutations of real specs all end in diagnostics."""

from __future__ import annotations

import random
from pathlib import Path

from spark_dsl.pipeline import run

REPO = Path(__file__).resolve().parent.parent
SEEDS = sorted((REPO / "examples").rglob("*.spark")) + sorted((REPO / "tests/fixtures").rglob("*.spark"))
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


def test_random_mutations(tmp_path: Path) -> None:
    rng = random.Random(20261130)  # fixed: a failure reproduces
    texts = [s.read_text(encoding="utf-8") for s in SEEDS]
    for _ in range(1500):
        text = list(rng.choice(texts))
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(text) + 1)
            op = rng.random()
            if op < 0.4 and text:
                del text[min(pos, len(text) - 1)]
            elif op < 0.8:
                text.insert(pos, rng.choice(NOISE))
            elif text:
                text[min(pos, len(text) - 1)] = rng.choice(NOISE)
        check_text(tmp_path, "".join(text))


def test_binary_and_empty_files(tmp_path: Path) -> None:
    (tmp_path / "bin.spark").write_bytes(b"\xff\xfe\x00deployment")
    (tmp_path / "empty.spark").write_bytes(b"")
    result = run([tmp_path / "bin.spark", tmp_path / "empty.spark"], tmp_path)
    assert [d.code for d in result.diagnostics] == ["SPK007"]
