"""`spark explain` is self-contained: an installed spark-dsl has no docs/ folder to point at."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from spark_dsl.codes import registry


def test_list_names_every_code_with_its_severity_and_title(spark: Callable[..., Any]) -> None:
    r = spark("explain", "--list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    entries = [line.split(maxsplit=2) for line in lines if re.match(r"SPK\d{3} ", line)]
    assert [code for code, _, _ in entries] == list(registry())
    for code, severity, title in entries:
        doc = registry()[code]
        assert (severity, title) == (doc.severity, doc.title)
    # Grouped by range, under the same headings as the rule reference.
    assert "SPK2xx: The recipe's hard constraints" in lines


def test_an_unknown_code_points_at_the_list_not_at_a_file(spark: Callable[..., Any]) -> None:
    r = spark("explain", "SPK299")
    assert r.returncode == 2
    assert "close codes: SPK222, SPK221, SPK220" in r.stderr
    assert "`spark explain --list`" in r.stderr
    assert "docs/" not in r.stderr


def test_neither_a_code_nor_list_is_a_usage_error(spark: Callable[..., Any]) -> None:
    r = spark("explain")
    assert r.returncode == 2
    assert "give a code" in r.stderr and "--list" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_code_and_list_together_is_a_usage_error(spark: Callable[..., Any]) -> None:
    r = spark("explain", "SPK212", "--list")
    assert r.returncode == 2
    assert "not both" in r.stderr
