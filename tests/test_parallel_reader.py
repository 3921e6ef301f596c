"""One reading of `parallel` (issue 34, item 7): the checker reads a spec's terms and the plan reads
the catalog's spellings (`tp+ep`) through the same `Parallel.of_terms`, so a spelling means the
same in the catalog as in a spec. The catalog's reader once kept only `tp` and `ep`: `dp(2)+tp`
read as plain `tp` there."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_dsl.pipeline import run
from spark_dsl.values import Parallel, parse_parallel

SPELLINGS = (
    "auto",
    "tp",
    "tp+ep",
    "tp + ep",
    "tp(8)",
    "ep",
    "pp(2) + tp",
    "dp(2)+tp",
    "dp(4) + tp(2) + pp(2) + ep",
)


def _checked(tmp_path: Path, spelling: str) -> Parallel:
    """What the checker reads from `parallel = SPELLING` in a spec."""
    (tmp_path / "d.spark").write_text(
        f"deployment d {{\n  model = muse-spark-open\n  accelerator = b200\n  parallel = {spelling}\n}}\n",
        encoding="utf-8",
    )
    (dep,) = run([tmp_path / "d.spark"], tmp_path).deployments
    value: Parallel = dep.body.value("parallel")
    return value


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_spelling_reads_as_the_checker_reads_it_in_a_spec(tmp_path: Path, spelling: str) -> None:
    assert parse_parallel(spelling) == _checked(tmp_path, spelling)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_what_a_parallel_value_spells_reads_back_as_the_value(spelling: str) -> None:
    value = parse_parallel(spelling)
    assert parse_parallel(value.spelled()) == value


def test_counts_are_kept() -> None:
    assert parse_parallel("dp(2)+tp") == Parallel(has_tp=True, dp=2)
    assert parse_parallel("tp(4) + pp(2)") == Parallel(tp=4, has_tp=True, pp=2)


def test_a_term_the_catalog_cannot_mean_is_named() -> None:
    with pytest.raises(ValueError, match="`xp` in `tp\\+xp` is not a parallelism term"):
        parse_parallel("tp+xp")
