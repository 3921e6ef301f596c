"""`spark check --format github`: workflow-command annotations, escaped as the runner requires."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from spark_dsl.render.github import escape_data, escape_property

# How the runner splits a command: `::name key=value,key=value::message`.
COMMAND = re.compile(r"^::(?P<name>[a-z]+) (?P<props>[^:]*)::(?P<message>.*)$")


def _unescape(text: str) -> str:
    for escaped, raw in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, raw)
    return text


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    match = COMMAND.match(line)
    assert match, line
    props = dict(p.split("=", 1) for p in match["props"].split(","))
    return match["name"], {k: _unescape(v) for k, v in props.items()}, _unescape(match["message"])


def test_data_escapes_percent_cr_and_lf_only() -> None:
    assert escape_data("100% a\r\nb: c, d") == "100%25 a%0D%0Ab: c, d"


def test_properties_also_escape_colon_and_comma() -> None:
    assert escape_property("a%b\r\n:,c") == "a%25b%0D%0A%3A%2Cc"


def test_percent_is_escaped_first_so_escapes_are_not_doubled() -> None:
    assert escape_data("%0A") == "%250A"
    assert _unescape(escape_property("%3A,:")) == "%3A,:"


def test_annotations_carry_the_position_title_and_full_message(spark: Any, project: Any) -> None:
    root = project({"specs/a,b:c.spark": 'profile p {\n  prefix_caching = "50%"\n  checkpont = nvfp4\n}\n'})
    (root / ".git").mkdir()
    result = spark("check", "--format", "github", "a,b:c.spark", cwd=root / "specs")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    name, props, message = _parse(lines[0])
    assert name == "error"
    assert props == {
        "file": "specs/a,b:c.spark",
        "line": "2",
        "col": "20",
        "endLine": "2",
        "endColumn": "25",
        "title": "SPK102: wrong type",
    }
    assert message.startswith('`prefix_caching` takes a boolean, found string "50%"\nhelp: ')
    assert "file=specs/a%2Cb%3Ac.spark," in lines[0]
    assert '"50%25"' in lines[0] and "%0Ahelp: " in lines[0]
    assert "SPK101%3A unknown key or block" in lines[1]


def test_a_carriage_return_in_a_message_cannot_break_the_command(spark: Any, project: Any) -> None:
    root = project({"r.spark": 'profile p {\n  prefix_caching = "a\rb"\n}\n'})
    result = spark("check", "--format", "github", "r.spark", cwd=root)
    raw = result.stdout
    assert raw.count("\n") == 1 and "\r" not in raw
    assert "a\\u{d}b" in raw  # shown as the language writes it, never acted on


def test_notes_are_part_of_the_message_with_their_position(spark: Any, project: Any) -> None:
    root = project({"d.spark": "profile p {\n  nodes = 1\n  nodes = 2\n}\n"})
    _, _, message = _parse(spark("check", "--format", "github", "d.spark", cwd=root).stdout.strip())
    assert "\nnote: first set here (d.spark:2:3)" in message


def test_no_problems_means_no_output(spark: Any, project: Any) -> None:
    root = project({"ok.spark": "profile p {\n  nodes = 1\n}\n"})
    result = spark("check", "--format", "github", "ok.spark", cwd=root)
    assert result.returncode == 0 and result.stdout == ""


def test_relative_to_the_current_folder_outside_a_repository(spark: Any, project: Any) -> None:
    root: Path = project({"x/y.spark": "profile p {\n  bogus = 1\n}\n"})
    _, props, _ = _parse(spark("check", "--format", "github", "x", cwd=root).stdout.strip())
    assert props["file"] == "x/y.spark"
