"""Diagnostics over stdio: code, range, rule doc, notes; cleared once fixed; across files."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_editor import Editor, at
from lsprotocol import types
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

# The tests share one server (conftest.py), whose client runs in the session's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="session")

TYPO = """\
deployment muse {
  model       = muse-spark-open
  accelerator = b200
  checkpont   = nvfp4
}
"""
FIXED = TYPO.replace("checkpont  ", "checkpoint ")


async def test_a_diagnostic_carries_code_range_and_rule_doc(editor: Editor) -> None:
    diagnostics = await editor.open("typo.spark", TYPO)
    assert len(diagnostics) == 1
    d = diagnostics[0]
    assert d.code == "SPK101"
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.source == "spark"
    assert d.range == types.Range(start=at(3, 2), end=at(3, 11))
    assert d.message.startswith("unknown key `checkpont` in a deployment; did you mean `checkpoint`?")
    assert d.code_description is not None
    doc = Path(to_fs_path(d.code_description.href) or "")
    assert doc.read_text(encoding="utf-8").startswith("## SPK101: unknown key or block")


async def test_diagnostics_clear_once_the_problem_is_fixed(editor: Editor) -> None:
    assert await editor.open("typo.spark", TYPO)
    assert await editor.replace("typo.spark", FIXED) == []


async def test_typing_range_edits_rechecks_the_new_text(editor: Editor) -> None:
    assert await editor.open("typo.spark", FIXED) == []
    value = types.Range(start=at(3, 16), end=at(3, 21))
    diagnostics = await editor.edit("typo.spark", [types.TextEdit(range=value, new_text="nvfp5")])
    assert [(d.code, d.range) for d in diagnostics] == [("SPK103", value)]


async def test_a_syntax_error_is_reported_at_its_place_and_clears(editor: Editor) -> None:
    broken = FIXED.replace("accelerator = b200", "accelerator b200")
    diagnostics = await editor.open("typo.spark", broken)
    assert [(d.code, d.range.start) for d in diagnostics] == [("SPK001", at(2, 14))]
    assert await editor.replace("typo.spark", FIXED) == []


async def test_notes_become_related_information(editor: Editor) -> None:
    text = FIXED.replace("  checkpoint", "  nodes = 1\n  nodes = 2\n  checkpoint")
    diagnostics = await editor.open("dup.spark", text)
    (d,) = diagnostics
    assert d.code == "SPK106"
    assert d.range.start == at(4, 2)
    assert d.related_information is not None
    (note,) = d.related_information
    assert note.message == "first set here"
    assert note.location.uri == editor.uri("dup.spark")
    assert note.location.range.start == at(3, 2)


async def test_an_edit_to_an_open_profile_rechecks_the_specs_that_import_it(
    editor: Editor,
) -> None:
    muse = editor.uri("muse.spark")
    assert await editor.open("muse.spark") == []
    common = (editor.root / "profiles/common.spark").read_text(encoding="utf-8")
    editor.client.diagnostics.pop(muse)
    assert await editor.open("profiles/common.spark") == []
    assert await editor._diagnostics(muse) == []  # rechecked as a dependent, still clean
    editor.client.diagnostics.pop(muse)
    # Unsaved: only the buffer has the new name; the spec must see it.
    await editor.replace("profiles/common.spark", common.replace("profile common", "profile shared"))
    diagnostics = await editor._diagnostics(muse)
    assert [(d.code, d.range) for d in diagnostics] == [("SPK115", types.Range(start=at(2, 29), end=at(2, 35)))]


async def test_imports_resolve_to_unsaved_buffers(editor: Editor) -> None:
    assert await editor.open("profiles/new.spark", "profile fresh {\n  nodes = 1\n}\n") == []
    spec = (
        'import "profiles/new.spark"\n\n'
        "deployment d extends fresh {\n  model = muse-spark-open\n  accelerator = b200\n}\n"
    )
    assert await editor.open("uses-new.spark", spec) == []


async def test_columns_are_utf16_units_by_default(editor: Editor) -> None:
    text = 'profile p {\n  serve { env { A = "🙂" } } bogus = 1\n}\n'
    (d,) = await editor.open("emoji.spark", text)
    # `bogus` is at code point 28 of its line; the emoji takes two UTF-16 units.
    assert d.range == types.Range(start=at(1, 29), end=at(1, 34))


async def test_closing_a_document_clears_its_diagnostics(editor: Editor, client: LanguageClient) -> None:
    assert await editor.open("typo.spark", TYPO)
    uri = editor.uri("typo.spark")
    client.diagnostics.pop(uri)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert await editor._diagnostics(uri) == []


async def test_the_server_watches_spark_files_on_disk(editor: Editor, client: LanguageClient) -> None:
    await editor.open("muse.spark")  # a round trip: the registration has arrived by now
    registrations = client.registrations  # type: ignore[attr-defined]
    (watch,) = [r for r in registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert watch.register_options["watchers"][0]["globPattern"] == "**/*.spark"


async def test_a_file_changed_on_disk_rechecks_open_specs(editor: Editor, client: LanguageClient) -> None:
    assert await editor.open("muse.spark") == []
    common = editor.root / "profiles/common.spark"
    renamed = common.read_text(encoding="utf-8").replace("profile common", "profile shared")
    common.write_text(renamed, encoding="utf-8")
    uri = editor.uri("muse.spark")
    client.diagnostics.pop(uri)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=common.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert [d.code for d in await editor._diagnostics(uri)] == ["SPK115"]
