"""`spark check --format sarif`: valid SARIF 2.1.0, one rule per code with the explain help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from spark_dsl.codes import lookup
from spark_dsl.diagnostics import Diagnostic, Severity
from spark_dsl.loader import SourceFile
from spark_dsl.render.sarif import sarif_log
from spark_dsl.span import Location, Span

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

BROKEN = """\
profile base {
  prefix_caching = ture
}
deployment muse extends base {
  model = muse-spark-open
  accelerator = b200
  checkpont = nvfp4
  serve {
    port = 8000
    port = 8001
  }
}
"""


def _validate(log: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


@pytest.fixture
def repo(project: Any) -> Path:
    """A repository with the broken spec one folder down."""
    root: Path = project({"specs/muse.spark": BROKEN})
    (root / ".git").mkdir()
    return root


def test_the_log_validates_against_the_sarif_schema(spark: Any, repo: Path) -> None:
    result = spark("check", "--format", "sarif", "muse.spark", cwd=repo / "specs")
    assert result.returncode == 1
    log = json.loads(result.stdout)
    _validate(log)
    assert log["version"] == "2.1.0"
    codes = [r["ruleId"] for r in log["runs"][0]["results"]]
    assert sorted(codes) == ["SPK101", "SPK102", "SPK106"]


def test_one_rule_per_code_with_help_from_the_explain_text(spark: Any, repo: Path) -> None:
    log = json.loads(spark("check", "--format", "sarif", "specs", cwd=repo).stdout)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids)) == len({r["ruleId"] for r in run["results"]})
    for rule in rules:
        doc = lookup(rule["id"])
        assert doc is not None
        assert rule["help"] == {"text": doc.text(), "markdown": doc.markdown()}
        assert rule["shortDescription"]["text"] == doc.title
        assert "helpUri" not in rule
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    assert "helpUri" not in json.dumps(log)


def test_locations_are_repository_relative_with_code_point_columns(spark: Any, repo: Path) -> None:
    log = json.loads(spark("check", "--format", "sarif", "muse.spark", cwd=repo / "specs").stdout)
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    by_code = {r["ruleId"]: r for r in run["results"]}
    location = by_code["SPK101"]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "specs/muse.spark", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 7, "startColumn": 3, "endLine": 7, "endColumn": 12}


def test_columns_count_code_points_not_utf16_units(spark: Any, project: Any) -> None:
    # The emoji is one code point but two UTF-16 units: `bogus` starts at column 29, not 30.
    root = project({"e.spark": 'profile p {\n  serve { env { A = "🙂" } } bogus = 1\n}\n'})
    log = json.loads(spark("check", "--format", "sarif", "e.spark", cwd=root).stdout)
    _validate(log)
    region = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startColumn"], region["endColumn"]) == (29, 34)


def test_notes_become_related_locations_and_fixes_become_replacements(spark: Any, repo: Path) -> None:
    log = json.loads(spark("check", "--format", "sarif", "specs", cwd=repo).stdout)
    by_code = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    related = by_code["SPK106"]["relatedLocations"][0]
    assert related["message"]["text"] == "first set here"
    assert related["physicalLocation"]["region"]["startLine"] == 9
    change = by_code["SPK101"]["fixes"][0]["artifactChanges"][0]
    assert change["replacements"][0]["insertedContent"]["text"] == "checkpoint"
    assert change["replacements"][0]["deletedRegion"]["startColumn"] == 3
    # A did-you-mean is a guess: `spark check --fix` leaves it to `--unsafe-fixes`.
    assert by_code["SPK101"]["fixes"][0]["properties"] == {"safe": False}


def test_warnings_and_infos_map_to_sarif_levels() -> None:
    source = SourceFile(Path("w.spark"), "w.spark", "profile p {}\n", None)
    at = Location("w.spark", Span(8, 9))
    diagnostics = [
        Diagnostic("SPK101", Severity.WARNING, "a warning", at),
        Diagnostic("SPK102", Severity.INFO, "an info", at),
        Diagnostic("SPK999", Severity.ERROR, "a code the registry does not know", None),
    ]
    log = sarif_log(diagnostics, {"w.spark": source})
    _validate(log)
    assert [r["level"] for r in log["runs"][0]["results"]] == ["warning", "note", "error"]
    assert "locations" not in log["runs"][0]["results"][2]


def test_a_clean_run_is_a_valid_empty_log(spark: Any, project: Any) -> None:
    root = project({"ok.spark": "profile p {\n  prefix_caching = true\n}\n"})
    result = spark("check", "--format", "sarif", "ok.spark", cwd=root)
    assert result.returncode == 0
    log = json.loads(result.stdout)
    _validate(log)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_machine_formats_keep_the_cold_check_path_light(project: Any, fmt: str) -> None:
    root = project({"specs/muse.spark": BROKEN})
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "spark_dsl", "check", "--format", fmt, "specs"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    heavy = {"jsonschema", "yaml", "pydantic", "pygls", "lsprotocol"}
    assert not heavy & {name.split(".")[0] for name in imported}


# A file name that is not a valid URI as written: space, comma, `#` (a fragment), `%` (an escape)
# and non-ASCII letters. Code scanning rejects such a `uri` (SARIF1002), so it must be percent-encoded.
ODD_NAME = "odd dir,v2/spec #1 100% grüße Ωmega.spark"


def test_odd_paths_are_percent_encoded_uri_references(spark: Any, project: Any) -> None:
    from urllib.parse import unquote, urlsplit

    root = project({ODD_NAME: BROKEN})
    (root / ".git").mkdir()
    log = json.loads(spark("check", "--format", "sarif", ".", cwd=root).stdout)
    checker = jsonschema.FormatChecker()
    # Without a validator package, jsonschema silently accepts any `uri-reference`.
    assert "uri-reference" in checker.checkers, "install the test extras (rfc3986-validator)"
    jsonschema.Draft4Validator(SCHEMA, format_checker=checker).validate(log)
    run = log["runs"][0]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
    uris += [
        change["artifactLocation"]["uri"]
        for r in run["results"]
        for fix in r.get("fixes", [])
        for change in fix["artifactChanges"]
    ]
    assert uris
    for uri in uris:
        assert checker.conforms(uri, "uri-reference"), uri
        assert uri.isascii() and " " not in uri and "," not in uri
        parts = urlsplit(uri)
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", "")
        assert unquote(parts.path) == ODD_NAME
    assert uris[0] == "odd%20dir%2Cv2/spec%20%231%20100%25%20gr%C3%BC%C3%9Fe%20%CE%A9mega.spark"


def test_the_driver_names_where_the_tool_is_documented(spark: Any, repo: Path) -> None:
    log = json.loads(spark("check", "--format", "sarif", "specs", cwd=repo).stdout)
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://github.com/spark-dsl/spark-dsl"
    checker = jsonschema.FormatChecker()
    jsonschema.Draft4Validator(SCHEMA, format_checker=checker).validate(log)
