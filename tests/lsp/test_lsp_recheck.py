"""What an edit re-checks in the language server: the edited document parsed anew, its imports
taken from the parses kept since the last edit, and after a change on disk only the open
documents that read the changed file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from spark_dsl.lsp.documents import Analysis, affected_by, analyse
from spark_dsl.syntax import parser

COMMON = 'profile common {\n  serve {\n    api_key = secret("vllm-api-key")\n  }\n}\n'
MUSE = (
    'import "common.spark"\n\ndeployment muse extends common {{\n  model = muse-spark-open\n  accelerator = {acc}\n}}\n'
)
ALONE = "deployment alone {\n  model = muse-spark-open\n  accelerator = b200\n}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "spark.toml").write_text("", encoding="utf-8")
    (tmp_path / "common.spark").write_text(COMMON, encoding="utf-8")
    (tmp_path / "muse.spark").write_text(MUSE.format(acc="b200"), encoding="utf-8")
    (tmp_path / "alone.spark").write_text(ALONE, encoding="utf-8")
    return tmp_path


def open_document(folder: Path, name: str, text: str) -> Analysis:
    path = folder / name
    return analyse(path.as_uri(), text, 1, {path: text})


def test_an_edit_parses_the_document_again_but_not_its_imports(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: Counter[str] = Counter()
    uncached = parser._parse

    def counting(text: str, file: str) -> parser.ParseResult:
        parsed[Path(file).name] += 1
        return uncached(text, file)

    monkeypatch.setattr(parser, "_parse", counting)
    monkeypatch.setattr(parser, "_kept", None)
    parser.keep_parses(16)  # as `spark lsp` does when it starts
    first = open_document(project, "muse.spark", MUSE.format(acc="b200"))
    second = open_document(project, "muse.spark", MUSE.format(acc="b300"))
    third = open_document(project, "muse.spark", MUSE.format(acc="b300"))
    assert parsed == {"muse.spark": 2, "common.spark": 1}
    assert first.diagnostics == second.diagnostics == third.diagnostics == []
    assert second.result.deployments[0].body.get("accelerator") is not None


def test_a_kept_parse_is_let_go_when_the_text_changes(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parser, "_kept", None)
    parser.keep_parses(2)
    one = parser.parse(COMMON, "a.spark")
    assert parser.parse(COMMON, "a.spark") is one
    assert parser.parse(COMMON + "\n", "a.spark") is not one
    parser.parse(ALONE, "b.spark")
    parser.parse(ALONE, "c.spark")  # three files: the oldest is let go
    assert parser._kept is not None and list(parser._kept.latest) == ["b.spark", "c.spark"]


def test_a_change_on_disk_rechecks_only_the_documents_that_read_the_file(project: Path) -> None:
    muse = open_document(project, "muse.spark", MUSE.format(acc="b200"))
    alone = open_document(project, "alone.spark", ALONE)
    analyses = {muse.uri: muse, alone.uri: alone}
    common = (project / "common.spark").resolve()
    assert affected_by(analyses, [(common, False)]) == [muse.uri]
    assert affected_by(analyses, [(project / "unrelated.spark", False)]) == []
    # A new file may be the import a document was missing: everything is checked again.
    assert affected_by(analyses, [(project / "new.spark", True)]) == [muse.uri, alone.uri]
