"""`spark explain`'s failing and fixed examples show what the checker is tested on.

A rule's examples are read from its fixtures (spark_dsl.rules.examples), so they are excerpts by
construction; here each, checked alone with its rule, reports the rule (failing) or not (fixed).
The other codes' examples are written in their tables: every line of the failing example appears,
in order, in `CODE.fail.spark`, and every line of the fixed example in `CODE.pass.spark`. The
fixtures are checked (tests/test_check_fixtures.py) and their rendering is pinned
(tests/test_code_snapshots.py), so an excerpt of them shows what the checker really does.

Lines are compared without their indentation, runs of spaces and comments.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spark_dsl.codes import registry
from spark_dsl.pipeline import run
from spark_dsl.rules import examples
from spark_dsl.rules.table import all_rules, only

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT = re.compile(r"\s*#\s*expect:.*$")
# Examples written before this test, not yet excerpts of their fixture. The list may only shrink:
# a new code's examples must be excerpts, and an example that becomes one leaves the list.
NOT_YET: set[str] = set()


def _without_comment(line: str) -> str:
    line = EXPECT.sub("", line)  # also after a string left open, as in SPK002's fixture
    for i, ch in enumerate(line):
        if ch == "#" and line[:i].count('"') % 2 == 0:
            return line[:i]
    return line


def _lines(text: str) -> list[str]:
    return [n for n in (" ".join(_without_comment(line).split()) for line in text.splitlines()) if n]


def _in_order(excerpt: list[str], whole: list[str]) -> bool:
    rest = iter(whole)
    return all(any(line == other for other in rest) for line in excerpt)


def _fixture(code: str, suffix: str) -> Path | None:
    found = [FIXTURES / kind / f"{code}.{suffix}.spark" for kind in ("codes", "rules")]
    return next((p for p in found if p.exists()), None)


RULES = sorted(r.code for r in all_rules())
EXAMPLES = [
    (f"{code}.{kind}", getattr(doc, kind), fixture)
    for code, doc in registry().items()
    if code not in RULES
    for kind, suffix in (("failing", "fail"), ("fixed", "pass"))
    if (fixture := _fixture(code, suffix)) is not None
]


@pytest.mark.parametrize(("name", "example", "fixture"), EXAMPLES, ids=[name for name, _, _ in EXAMPLES])
def test_the_explain_example_is_an_excerpt_of_the_fixture(name: str, example: str, fixture: Path) -> None:
    is_excerpt = _in_order(_lines(example), _lines(fixture.read_text(encoding="utf-8")))
    if name in NOT_YET:
        assert not is_excerpt, f"{name} is now an excerpt of {fixture.name}: take it off NOT_YET"
    else:
        assert is_excerpt, f"every line of {name}'s example must appear, in order, in {fixture.name}"


@pytest.mark.parametrize("code", RULES)
def test_a_rules_examples_are_its_fixtures_and_show_it(code: str, tmp_path: Path) -> None:
    doc = registry()[code]
    failing, fixed = (FIXTURES / "rules" / f"{code}.{kind}.spark" for kind in ("fail", "pass"))
    assert (doc.failing, doc.fixed) == (examples.excerpt(failing.read_text()), examples.excerpt(fixed.read_text()))
    for kind, example, shows in (("fail", doc.failing, True), ("pass", doc.fixed, False)):
        spec = tmp_path / f"{code}.{kind}.spark"
        spec.write_text(example, encoding="utf-8")
        with only({code}):
            found = {d.code for d in run([spec], tmp_path).diagnostics}
        assert (code in found) is shows, f"{code}'s {kind} example, checked alone, reports {sorted(found)}"


def test_the_example_is_the_marked_lines_else_up_to_the_first_deployment() -> None:
    spec = "# why\nmodel m {\n  layers = 2\n}\n\ndeployment a {\n  gpus = 6   # expect: SPK219\n}\n\ndeployment b {}\n"
    assert examples.excerpt(spec) == "# why\nmodel m {\n  layers = 2\n}\n\ndeployment a {\n  gpus = 6\n}\n"
    marked = "deployment a {\n  # example: begin\n  gpus = 6\n  # example: end\n  nodes = 1\n}\n"
    assert examples.excerpt(marked) == "gpus = 6\n"
    with pytest.raises(ValueError, match="marked by one"):
        examples.excerpt("# example: end\ndeployment a {\n}\n")


def test_the_list_of_exceptions_names_only_examples() -> None:
    assert not NOT_YET - {name for name, _, _ in EXAMPLES}


def _commands_table() -> list[tuple[str, str, str]]:
    """(name, example, spark.toml it runs on) for the codes pinned from a command whose examples
    are a configuration file (`# spark.toml` and its lines): the failing example against the
    failing input, the fixed one against the passing input (tests/test_code_snapshots.py)."""
    from test_code_snapshots import ELSEWHERE, ELSEWHERE_PASS

    out = []
    for code, doc in registry().items():
        for kind, table in (("failing", ELSEWHERE), ("fixed", ELSEWHERE_PASS)):
            example: str = getattr(doc, kind)
            if code in table and example.startswith("# spark.toml\n"):
                toml = table[code][0].get("spark.toml")
                assert isinstance(toml, str), f"{code}'s {kind} example is a spark.toml the input lacks"
                out.append((f"{code}.{kind}", example.removeprefix("# spark.toml\n"), toml))
    return out


COMMAND_EXAMPLES = _commands_table()


@pytest.mark.parametrize(("name", "example", "toml"), COMMAND_EXAMPLES, ids=[n for n, _, _ in COMMAND_EXAMPLES])
def test_the_configuration_example_is_the_commands_input(name: str, example: str, toml: str) -> None:
    assert _in_order(_lines(example), _lines(toml)), f"{name}'s example must be the spark.toml the test runs on"


def test_the_configuration_codes_have_their_examples_checked() -> None:
    assert {name.split(".")[0] for name, _, _ in COMMAND_EXAMPLES} == {"SPK601", "SPK602", "SPK603"}
