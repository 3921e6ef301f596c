"""Every rule over every spec: `specs/`, the docs' spark examples and every fixture, pinned.

A rule's own fixtures run with that rule alone (tests/test_check_fixtures.py), so one rule's
fixture says nothing about another's; this is where rules meet. The snapshot records, per file,
what every rule reports there beyond what the file itself claims (a fixture's `# expect:`
comments, a doc example's `expect=`): a new rule that fires on another rule's fixture, a spec or
a doc example shows up here as a reviewed snapshot diff, never as an edit to a fixture. Files
where all rules find only what they claim are left out, so a rule that meets no other adds
nothing here.

Update with `pytest --snapshot-update tests/test_rule_corpus.py` (or `python -m spark_dsl.dev regen`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_check_fixtures import expected
from test_doc_examples import SPARK, Block, _blocks

from spark_dsl.pipeline import run

REPO = Path(__file__).resolve().parent.parent
SPECS = sorted((REPO / "specs").rglob("*.spark"))
FIXTURES = sorted((REPO / "tests" / "fixtures").rglob("*.spark"))


def _found(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, code) for each diagnostic of the file, every rule run, in file order."""
    result = run([path], root)
    out = []
    for d in result.diagnostics:
        source = result.sources.get(d.location.file) if d.location is not None else None
        line = source.index.position(d.location.span.start)[0] if source and d.location else 0
        out.append((line, d.code))
    return out


def _unclaimed(found: list[tuple[int, str]], claimed: list[tuple[int, str]] | list[str]) -> list[str]:
    """`line: CODE` for each finding the file does not claim (by code and line, or by code alone)."""
    rest = list(claimed)
    out = []
    for line, code in found:
        for claim in ((line, code), code):
            if claim in rest:
                rest.remove(claim)
                break
        else:
            out.append(f"{line}: {code}")
    return out


def _doc_example(block: Block, folder: Path) -> list[tuple[int, str]]:
    """A docs example checked as tests/test_doc_examples.py checks it: in a folder of its own,
    beside the page's `file=` blocks it may import."""
    for other in _blocks(block.page):
        if other.language == "spark" and "file" in other.attributes:
            path = folder / other.attributes["file"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(other.text, encoding="utf-8")
    path = folder / (block.attributes.get("file") or f"example-{block.line}.spark")
    path.write_text(block.text, encoding="utf-8")
    return _found(path, folder)


def test_every_rule_over_the_corpus_finds_what_is_pinned(snapshot: Any, tmp_path: Path) -> None:
    # A spec imports profiles from its neighbours' folders, as `spark check specs` reads them;
    # a fixture stands alone in its folder, as tests/test_check_fixtures.py runs it.
    found = {str(p.relative_to(REPO)): _unclaimed(_found(p, REPO / "specs"), []) for p in SPECS}
    found |= {str(p.relative_to(REPO)): _unclaimed(_found(p, p.parent), _claims(p)) for p in FIXTURES}
    for i, block in enumerate(SPARK):
        folder = tmp_path / str(i)
        folder.mkdir()
        claimed = list(filter(None, block.attributes.get("expect", "").split(",")))
        found[block.where] = _unclaimed(_doc_example(block, folder), claimed)
    assert {name: codes for name, codes in found.items() if codes} == snapshot


def _claims(path: Path) -> list[tuple[int, str]]:
    return [(line, code) for code, line in expected(path)]


@pytest.mark.parametrize("path", sorted((REPO / "tests/fixtures/rules").glob("*.fail.spark")), ids=lambda p: p.name)
def test_a_rules_failing_fixture_still_reports_it_among_every_rule(path: Path) -> None:
    # Another rule may add its own finding, but none hides this one (a `suppressed_by` that
    # covered a rule's own failing case would make it untestable among the others).
    code = path.name.split(".")[0]
    assert code in {found for _, found in _found(path, path.parent)}
