"""Generated docs stay current, and every code the compiler emits has an explain text."""

from __future__ import annotations

import re
from pathlib import Path

from spark_dsl.codes import reference_markdown, registry

REPO = Path(__file__).resolve().parent.parent


def test_rule_reference_is_current() -> None:
    assert (REPO / "docs/rules.md").read_text(encoding="utf-8") == reference_markdown(), (
        "docs/rules.md is stale: run `python -m spark_dsl.dev regen`"
    )


def test_every_code_in_the_source_is_registered() -> None:
    used: set[str] = set()
    for path in (REPO / "spark_dsl").rglob("*.py"):
        used |= set(re.findall(r'"(SPK\d{3})"', path.read_text(encoding="utf-8")))
    assert used - set(registry()) == set()


def test_every_registered_code_has_all_four_parts() -> None:
    for code, doc in registry().items():
        assert re.fullmatch(r"SPK\d{3}", code)
        assert doc.severity in ("error", "warning", "info"), code
        for part in (doc.title, doc.checks, doc.basis, doc.failing, doc.fixed):
            assert part.strip(), code
