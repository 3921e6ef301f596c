"""Quantity literals read by unit family, with vLLM's human-readable integer convention."""

from __future__ import annotations

import re

import pytest

from spark_dsl.units import UnitError, format_duration, read_quantity

PART = re.compile(r"([0-9][0-9_]*(?:\.[0-9][0-9_]*)?)([A-Za-z]+)")


def read(family: str, text: str) -> int | UnitError:
    return read_quantity(family, text, tuple((m.group(1), m.group(2)) for m in PART.finditer(text)))


@pytest.mark.parametrize(
    ("family", "text", "value"),
    [
        # Counts match vLLM's human_readable_int: lowercase decimal, uppercase binary.
        ("count", "32K", 32_768),
        ("count", "32k", 32_000),
        ("count", "128K", 131_072),
        ("count", "1M", 1_048_576),
        ("count", "1m", 1_000_000),
        ("count", "25.6k", 25_600),
        ("count", "2G", 2**31),
        ("size", "64GiB", 64 * 2**30),
        ("size", "64GB", 64 * 10**9),
        ("size", "1.5GiB", 1_610_612_736),
        ("size", "512B", 512),
        ("duration", "4h", 14_400),
        ("duration", "1h30m", 5_400),
        ("duration", "2d12h", 216_000),
        ("duration", "45m", 2_700),
        ("duration", "90s", 90),
    ],
)
def test_reads(family: str, text: str, value: int) -> None:
    assert read(family, text) == value


@pytest.mark.parametrize(
    ("family", "text", "fragment"),
    [
        ("count", "1.5K", "lowercase"),
        ("count", "1.0001k", "whole number"),
        ("count", "32KiB", "not a count unit"),
        ("count", "8x", "not a count unit"),
        ("size", "64gib", "did you mean `GiB`"),
        ("size", "0.3B", "whole number of bytes"),
        ("duration", "30m1h", "largest to smallest"),
        ("duration", "1h1h", "largest to smallest"),
        ("duration", "4H", "not a duration unit"),
    ],
)
def test_rejects_with_a_reason(family: str, text: str, fragment: str) -> None:
    result = read(family, text)
    assert isinstance(result, UnitError)
    assert fragment in result.message
    assert result.help


def test_unit_errors_name_the_accepted_suffixes() -> None:
    result = read("count", "8GiB")
    assert isinstance(result, UnitError)
    assert "`k`, `K`, `m`, `M`, `g`, `G`" in result.help


@pytest.mark.parametrize(("seconds", "text"), [(14_400, "4h"), (5_400, "1h30m"), (0, "0s"), (90_061, "1d1h1m1s")])
def test_format_duration_round_trips(seconds: int, text: str) -> None:
    assert format_duration(seconds) == text
    if seconds:
        assert read("duration", text) == seconds


@pytest.mark.parametrize(
    ("family", "text", "fixed", "safe"),
    [
        ("duration", "30m1h", "1h30m", True),  # the same duration, in order
        ("duration", "1h1h", "2h", True),
        ("duration", "1.5s", "2s", False),
        ("count", "1.5K", "1.5k", False),
        ("count", "8GiB", "8G", False),  # the count suffix of the same scale
        ("count", "1.0001k", "1k", False),
        ("size", "64gib", "64GiB", False),
    ],
)
def test_a_unit_error_carries_the_literal_its_help_names(family: str, text: str, fixed: str, safe: bool) -> None:
    result = read(family, text)
    assert isinstance(result, UnitError)
    assert (result.replacement, result.safe) == (fixed, safe)
    assert not isinstance(read(family, fixed), UnitError), "the replacement must read"
    if safe:
        assert read(family, fixed) == sum(
            int(n) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"(\d+)([dhms])", text)
        )


def test_a_unit_with_no_near_spelling_has_no_replacement() -> None:
    result = read("duration", "45x")
    assert isinstance(result, UnitError) and result.replacement is None
