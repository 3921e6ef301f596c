"""Every type-checker fixture produces exactly the diagnostics its `# expect:` comments name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spark_dsl.pipeline import run

FIXTURES = Path(__file__).parent / "fixtures" / "check"
EXPECT = re.compile(r"#\s*expect:\s*((?:SPK\d{3}[\s,]*)+)")


def expected(path: Path) -> list[tuple[str, int]]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            out += [(code, number) for code in re.findall(r"SPK\d{3}", m.group(1))]
    return sorted(out)


def actual(path: Path) -> list[tuple[str, int]]:
    result = run([path], FIXTURES)
    source = result.sources[result.files[0].name]
    pairs = []
    for d in result.diagnostics:
        assert d.location is not None, d
        assert d.location.file == source.name, d
        pairs.append((d.code, source.index.position(d.location.span.start)[0]))
    return sorted(pairs)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.spark")), ids=lambda p: p.name)
def test_fixture_reports_exactly_its_expectations(path: Path) -> None:
    want = expected(path)
    if path.name.endswith(".ok.spark"):
        assert want == []
    else:
        assert want, "a failing fixture must name at least one expected diagnostic"
    assert actual(path) == want


def test_every_diagnostic_has_code_location_message_and_help() -> None:
    for path in sorted(FIXTURES.glob("*.spark")):
        for d in run([path], FIXTURES).diagnostics:
            assert re.fullmatch(r"SPK\d{3}", d.code)
            assert d.location is not None
            assert d.message and d.message[0].islower() or d.message[0] in "`\"", d.message
            assert not d.message.endswith("."), d.message
            assert d.help, f"{d.code} at {path.name} has no help"
