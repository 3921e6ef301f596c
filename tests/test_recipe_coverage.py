"""docs/recipe-coverage.md maps recipe sentences to real rules and real tests."""

from __future__ import annotations

import re
from pathlib import Path

from spark_dsl.codes import registry

REPO = Path(__file__).resolve().parent.parent
RECIPE = (REPO / "docs/sources/muse-spark-open-recipe.txt").read_text(encoding="utf-8")
COVERAGE = (REPO / "docs/recipe-coverage.md").read_text(encoding="utf-8")


def rows() -> list[tuple[str, str, str]]:
    out = []
    for line in COVERAGE.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("recipe sentence", "---"):
            out.append((cells[0], cells[1], cells[2]))
    return out


def test_every_quoted_sentence_is_verbatim_in_the_recipe() -> None:
    flat = " ".join(RECIPE.split())
    assert len(rows()) >= 18
    for sentence, _, _ in rows():
        assert sentence in flat, sentence


def test_every_code_and_test_named_exists() -> None:
    codes = registry()
    for _, rules, tests in rows():
        for code in re.findall(r"SPK\d{3}", rules):
            assert code in codes, code
        for ref in (t.strip() for t in tests.split(",")):
            path, _, func = ref.partition("::")
            assert (REPO / path).exists(), ref
            if func:
                assert re.search(rf"^def {re.escape(func)}\(", (REPO / path).read_text(), re.M), ref


def test_every_recipe_rule_is_covered() -> None:
    named = set(re.findall(r"SPK\d{3}", COVERAGE))
    recipe_rules = {c for c in registry() if c[3] in "24"}
    assert recipe_rules - named == set()
