"""`spark fmt`: idempotent and meaning-preserving on every spec; layout; the command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from spark_dsl.format import format_text
from spark_dsl.syntax.parser import parse

REPO = Path(__file__).resolve().parent.parent


def _without_spans(node: Any) -> Any:
    """The tree as plain data, spans dropped (written here, not borrowed from the formatter)."""
    if isinstance(node, msgspec.Struct):
        return {
            "node": type(node).__name__,
            **{f.name: _without_spans(getattr(node, f.name)) for f in msgspec.structs.fields(node) if f.name != "span"},
        }
    if isinstance(node, tuple):
        return [_without_spans(item) for item in node]
    return node


def _spark_files() -> list[Path]:
    """Every `.spark` file of the repository that parses (deliberately broken fixtures do not)."""
    files = []
    for folder in ("examples", "specs", "tests"):
        for path in sorted((REPO / folder).rglob("*.spark")):
            if parse(path.read_text(encoding="utf-8"), path.name).module is not None:
                files.append(path)
    return files


SPARK_FILES = _spark_files()


def _fmt(text: str) -> str:
    result = format_text(text, "t.spark")
    assert result.text is not None, result.diagnostic
    return result.text


def test_the_repository_has_specs_to_format() -> None:
    assert len(SPARK_FILES) >= 2


@pytest.mark.parametrize("path", SPARK_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_formatting_is_idempotent_and_keeps_meaning(path: Path) -> None:
    original = path.read_text(encoding="utf-8")
    once = _fmt(original)
    twice = _fmt(once)
    assert twice == once
    before = parse(original, path.name).module
    after = parse(once, path.name).module
    assert before is not None and after is not None
    assert _without_spans(after.statements) == _without_spans(before.statements)
    assert sorted(c.text.rstrip() for c in after.comments) == sorted(c.text.rstrip() for c in before.comments)


@pytest.mark.parametrize("path", SPARK_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_comments_on_every_line_survive_twice(path: Path) -> None:
    """A comment at the end of every line and between every two lines: all kept, stable."""
    lines = path.read_text(encoding="utf-8").splitlines()
    noisy = "".join(f"{line} # end {i}\n# own {i}\n" for i, line in enumerate(lines))
    once = _fmt(noisy)
    assert _fmt(once) == once
    before, after = parse(noisy, "n").module, parse(once, "n").module
    assert before is not None and after is not None
    assert _without_spans(after.statements) == _without_spans(before.statements)
    assert sorted(c.text.rstrip() for c in after.comments) == sorted(c.text.rstrip() for c in before.comments)


# ---- layout -------------------------------------------------------------------


def test_canonical_layout_indents_aligns_and_spaces() -> None:
    source = (
        'import "a.spark"\nimport "b.spark"\nprofile p extends a,b {x=1\nlonger_key=[a,b]}\n'
        "deployment d {\n\n\n  serve{port=8000}\n}"
    )
    assert _fmt(source) == (
        'import "a.spark"\n'
        'import "b.spark"\n'
        "\n"
        "profile p extends a, b {\n"
        "  x          = 1\n"
        "  longer_key = [a, b]\n"
        "}\n"
        "\n"
        "deployment d {\n"
        "  serve {\n"
        "    port = 8000\n"
        "  }\n"
        "}\n"
    )


def test_a_blank_line_or_a_block_ends_an_alignment_run() -> None:
    source = "profile p {\n  a = 1\n  bbbb = 2\n\n  cc = 3\n  serve {}\n  dddddd = 4\n}\n"
    assert _fmt(source) == ("profile p {\n  a    = 1\n  bbbb = 2\n\n  cc = 3\n  serve {}\n  dddddd = 4\n}\n")


def test_comments_stay_where_they_were_written() -> None:
    source = (
        "# file header\n"
        "\n"
        "profile p {  # after the brace\n"
        "  # before a key\n"
        "  a = 1 # after a value\n"
        "  serve { # after a block brace\n"
        "  } # after a closing brace\n"
        "  # at the end of a body\n"
        "}\n"
        "# at the end of the file\n"
    )
    assert _fmt(source) == (
        "# file header\n"
        "\n"
        "profile p {  # after the brace\n"
        "  # before a key\n"
        "  a = 1  # after a value\n"
        "  serve {  # after a block brace\n"
        "  }  # after a closing brace\n"
        "  # at the end of a body\n"
        "}\n"
        "# at the end of the file\n"
    )


def test_a_list_with_comments_breaks_one_item_per_line() -> None:
    source = "profile p {\n  modalities = [text, # the default\n image]\n}\n"
    assert _fmt(source) == ("profile p {\n  modalities = [\n    text,  # the default\n    image,\n  ]\n}\n")


def test_a_list_too_long_for_one_line_breaks() -> None:
    flags = ", ".join(f'"--flag-number-{i}"' for i in range(8))
    formatted = _fmt(f"profile p {{\n  serve {{\n    extra_args = [{flags}]\n  }}\n}}\n")
    assert '    extra_args = [\n      "--flag-number-0",\n' in formatted
    assert '      "--flag-number-7",\n    ]\n' in formatted
    assert all(len(line) <= 100 for line in formatted.splitlines())


def test_a_comment_inside_a_value_moves_above_its_attribute() -> None:
    source = "profile p {\n  parallel = tp + # experts too\n    ep\n}\n"
    assert _fmt(source) == "profile p {\n  # experts too\n  parallel = tp + ep\n}\n"


def test_labels_and_keys_are_quoted_only_where_the_grammar_needs_it() -> None:
    source = 'profile p {\n  target "shell" {}\n  target "true" {}\n  serve { env { "A" = "x\\ty" } }\n}\n'
    assert _fmt(source) == (
        'profile p {\n  target shell {}\n  target "true" {}\n  serve {\n    env {\n      "A" = "x\\ty"\n    }\n  }\n}\n'
    )


def test_strings_are_re_escaped_canonically() -> None:
    source = 'profile p {\n  a = "\\u{41}\\"q\\\\ \\n"\n}\n'
    assert _fmt(source) == 'profile p {\n  a = "A\\"q\\\\ \\n"\n}\n'


def test_numbers_keep_their_spelling() -> None:
    source = "profile p {\n  a = 32_768\n  b = 0.90\n  c = 1h30m\n}\n"
    assert _fmt(source) == source


def test_windows_line_endings_and_a_byte_order_mark_are_normalised() -> None:
    assert _fmt("\ufeffprofile p {\r\n  a = 1  # c\r\n}\r\n") == "profile p {\n  a = 1  # c\n}\n"


def test_empty_and_comment_only_files() -> None:
    assert _fmt("") == ""
    assert _fmt("\n\n# only\n\n\n# comments\n") == "# only\n\n# comments\n"


def test_a_syntax_error_yields_the_diagnostic_and_no_text() -> None:
    result = format_text("deployment d {\n  model =\n}\n", "bad.spark")
    assert result.text is None
    assert result.diagnostic is not None and result.diagnostic.code == "SPK001"


# ---- the command ------------------------------------------------------------------

UGLY = "deployment d {\nmodel=muse-spark-open # the model\n}\n"
PRETTY = "deployment d {\n  model = muse-spark-open  # the model\n}\n"


def test_fmt_rewrites_files_in_place(spark: Any, project: Any) -> None:
    root = project({"specs/a.spark": UGLY, "specs/b.spark": PRETTY})
    result = spark("fmt", "specs", cwd=root)
    assert result.returncode == 0, result.stderr
    assert (root / "specs/a.spark").read_text() == PRETTY
    assert "reformatted specs/a.spark" in result.stderr
    assert "1 file already formatted" in result.stderr


def test_fmt_check_lists_changes_and_writes_nothing(spark: Any, project: Any) -> None:
    root = project({"a.spark": UGLY, "b.spark": PRETTY})
    result = spark("fmt", "--check", "a.spark", "b.spark", cwd=root)
    assert result.returncode == 1
    assert result.stdout == "would reformat a.spark\n"
    assert (root / "a.spark").read_text() == UGLY
    assert spark("fmt", "--check", "b.spark", cwd=root).returncode == 0


def test_fmt_diff_prints_a_unified_diff_and_writes_nothing(spark: Any, project: Any) -> None:
    root = project({"a.spark": UGLY})
    result = spark("fmt", "--diff", "a.spark", cwd=root)
    assert result.returncode == 1
    assert "-model=muse-spark-open # the model\n" in result.stdout
    assert "+  model = muse-spark-open  # the model\n" in result.stdout
    assert (root / "a.spark").read_text() == UGLY


def test_fmt_leaves_a_file_with_a_syntax_error_untouched(spark: Any, project: Any) -> None:
    broken = "deployment d {\n  model =\n}\n"
    root = project({"bad.spark": broken, "good.spark": UGLY})
    result = spark("fmt", "bad.spark", "good.spark", cwd=root)
    assert result.returncode == 1
    assert "error[SPK001]" in result.stderr and "bad.spark:3:1" in result.stderr
    assert "Traceback" not in result.stderr
    assert (root / "bad.spark").read_text() == broken
    assert (root / "good.spark").read_text() == PRETTY


def test_fmt_reads_stdin_and_writes_stdout(tmp_path: Path) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "fmt", "-"],
        input=UGLY,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 0
    assert result.stdout == PRETTY


def test_fmt_of_a_missing_path_is_a_usage_error(spark: Any) -> None:
    result = spark("fmt", "nowhere.spark")
    assert result.returncode == 2
    assert "no such file or directory: nowhere.spark" in result.stderr


# ---- pre-commit ---------------------------------------------------------------------


def _hooks() -> dict[str, dict[str, Any]]:
    import yaml

    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    return {hook["id"]: hook for hook in hooks}


def test_pre_commit_hooks_run_spark_on_spark_files_only() -> None:
    import re

    hooks = _hooks()
    assert set(hooks) == {"spark-check", "spark-fmt"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert re.search(hook["files"], "specs/nvidia/muse.spark")
        assert not re.search(hook["files"], "README.md")


def test_the_pre_commit_hook_entries_do_what_they_say(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "a.spark").write_text(UGLY, encoding="utf-8")

    def hook(hook_id: str) -> subprocess.CompletedProcess[str]:
        program, *args = _hooks()[hook_id]["entry"].split()
        assert program == "spark"
        return subprocess.run(
            [sys.executable, "-m", "spark_dsl", *args, "a.spark"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert hook("spark-fmt").returncode == 0
    assert (tmp_path / "a.spark").read_text() == PRETTY
    result = hook("spark-check")
    assert result.returncode == 1 and "SPK107" in result.stdout  # no accelerator
