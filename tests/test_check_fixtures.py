"""Every fixture produces exactly the diagnostics its `# expect:` comments name.

`check/` holds the type checker's fixtures, several codes per file; `codes/` (front
end) and `rules/` (recipe, targets, safety) hold a pair per code: `CODE.fail.spark`
must report the code, `CODE.pass.spark` must not.

As ruff's, a rule's pair runs with that rule alone: it holds only what its own rule needs, and a
new rule never edits another rule's fixture. `check/` and `codes/` run every rule (a front-end
code such as SPK125, an unused ignore, needs a rule to fire), and tests/test_rule_corpus.py pins
what every rule finds in every fixture, spec and doc example.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spark_dsl.pipeline import run
from spark_dsl.rules.table import only

FIXTURES = Path(__file__).parent / "fixtures"
PAIRS = sorted(FIXTURES.glob("codes/*.spark")) + sorted(FIXTURES.glob("rules/*.spark"))
ALL = sorted(FIXTURES.glob("check/*.spark")) + PAIRS
# Codes whose failing input cannot be a text fixture, and the test that covers them instead.
COVERED_ELSEWHERE = {
    "SPK007": ("test_robustness.py", "test_binary_and_empty_files"),
    "SPK009": ("test_limits.py", "test_a_file_of_more_than_100_000_tokens_is_one_error"),
    "SPK513": ("targets/test_build_cli.py", "test_nothing_to_build_is_an_info_and_writes_nothing"),
    "SPK520": ("targets/test_build_fs.py", "test_a_hand_edited_folder_is_not_replaced"),
    "SPK521": ("targets/test_build_fs.py", "test_a_hostile_manifest_is_an_error_and_deletes_nothing"),
    "SPK522": ("targets/test_build_fs.py", "test_a_read_only_output_folder_is_a_clear_error"),
    # Configuration files (spark.toml, [tool.spark]), not specs.
    "SPK601": ("test_cli_project.py", "test_an_unknown_key_is_located_with_a_did_you_mean_and_a_fix"),
    "SPK602": ("test_cli_project.py", "test_a_value_spark_cannot_use_is_spk602_at_the_value"),
    "SPK603": ("test_cli_project.py", "test_a_configuration_that_is_not_toml_is_spk603"),
}
EXPECT = re.compile(r"#\s*expect:\s*((?:SPK\d{3}[\s,]*)+)")


def expected(path: Path) -> list[tuple[str, int]]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = EXPECT.search(line)
        if m:
            out += [(code, number) for code in re.findall(r"SPK\d{3}", m.group(1))]
    return sorted(out)


def actual(path: Path) -> list[tuple[str, int]]:
    if path.parent.name == "rules":
        with only({path.name.split(".")[0]}):
            result = run([path], path.parent)
    else:
        result = run([path], path.parent)
    source = result.sources[result.files[0].name]
    pairs = []
    for d in result.diagnostics:
        assert d.location is not None, d
        assert d.location.file == source.name, d
        pairs.append((d.code, source.index.position(d.location.span.start)[0]))
    return sorted(pairs)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_fixture_reports_exactly_its_expectations(path: Path) -> None:
    want = expected(path)
    if path.name.endswith(".ok.spark") or (path.name.endswith(".pass.spark") and not want):
        assert want == []
    else:
        assert want, "a failing fixture must name at least one expected diagnostic"
    assert actual(path) == want


def test_every_diagnostic_has_code_location_message_and_help() -> None:
    for path in ALL:
        for d in run([path], path.parent).diagnostics:
            assert re.fullmatch(r"SPK\d{3}", d.code)
            assert d.location is not None
            assert d.message and not d.message[0].isupper(), d.message
            assert not d.message.endswith("."), d.message
            assert d.help, f"{d.code} at {path.name} has no help"


def test_every_code_has_a_failing_and_a_passing_fixture() -> None:
    from spark_dsl.codes import registry

    codes = set(registry())
    by_name: dict[str, Path] = {}
    for path in PAIRS:
        assert path.name not in by_name, f"{path.name} is defined twice"
        by_name[path.name] = path
    for code in sorted(codes):
        if code in COVERED_ELSEWHERE:
            module, test = COVERED_ELSEWHERE[code]
            assert f"def {test}(" in (Path(__file__).parent / module).read_text()
            continue
        fail, ok = by_name.get(f"{code}.fail.spark"), by_name.get(f"{code}.pass.spark")
        assert fail is not None and ok is not None, f"{code} needs {code}.fail.spark and {code}.pass.spark"
        assert code in {c for c, _ in expected(fail)}, f"{fail.name} must expect {code}"
        assert code not in {c for c, _ in expected(ok)}, f"{ok.name} must not expect {code}"
    stray = {name.split(".")[0] for name in by_name} - codes
    assert not stray, f"fixtures for unknown codes: {stray}"


def test_a_code_cannot_be_registered_twice() -> None:
    from spark_dsl.rules.registry import rule
    from spark_dsl.rules.table import all_rules

    taken = all_rules()[0].code
    with pytest.raises(ValueError, match=f"rule code {taken} is registered twice"):
        rule(taken, "error", "t", checks="c", basis="b")(lambda plan: iter(()))


def test_rules_md_codes_are_all_registered() -> None:
    from spark_dsl.rules.table import all_rules

    required = {f"SPK{n}" for n in [*range(201, 223), *range(301, 305), *range(401, 407)]}
    assert required <= {r.code for r in all_rules()}
