"""Hover, completion, quick fixes, go-to-definition, symbols and formatting over stdio."""

from __future__ import annotations

import pytest
from lsp_editor import Editor, apply_edits, at
from lsprotocol import types
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


def _doc(editor: Editor, relative: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=editor.uri(relative))


async def _hover(editor: Editor, relative: str, line: int, character: int) -> str:
    result = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=_doc(editor, relative), position=at(line, character))
    )
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def _complete(editor: Editor, relative: str, line: int, character: int) -> list[str]:
    result = await editor.client.text_document_completion_async(
        types.CompletionParams(text_document=_doc(editor, relative), position=at(line, character))
    )
    assert isinstance(result, types.CompletionList)
    return [item.label for item in result.items]


# ---- hover --------------------------------------------------------------------------


async def test_hover_on_a_key_shows_its_doc_type_and_resolved_value(root_editor: Editor) -> None:
    # File names read relative to the folder the server was opened on.
    editor = root_editor
    await editor.open("muse.spark")
    text = await _hover(editor, "muse.spark", 5, 4)  # on `checkpoint`
    assert text.startswith("**checkpoint**: which weights")
    assert "type: `bf16 | mxfp4 | nvfp4 | bf16-to-mxfp4 | fp8`" in text
    assert "resolved: `nvfp4` from user (muse.spark:6)" in text


async def test_hover_on_an_accelerator_value_shows_the_catalog_entry(editor: Editor) -> None:
    await editor.open("muse.spark")
    text = await _hover(editor, "muse.spark", 4, 17)  # on `b200`
    assert "`b200`: NVIDIA B200, 8 GPUs per node" in text


async def test_hover_on_a_deployment_lists_values_with_their_origin(root_editor: Editor) -> None:
    # File names read relative to the folder the server was opened on.
    editor = root_editor
    await editor.open("muse.spark")
    text = await _hover(editor, "muse.spark", 2, 13)  # on `muse-b200`
    assert "profiles: `common`" in text
    assert "| `serve.port` | `8000` | profile common (profiles/common.spark:4) |" in text
    assert "| `kv_cache_dtype` | `auto` | default |" in text
    assert "| `prefix_caching` | `true` | recipe default |" in text


async def test_hover_on_a_code_in_an_ignore_comment_explains_it(editor: Editor) -> None:
    await editor.open("c.spark", "# spark: ignore[SPK101]\nprofile p {}\n")
    text = await _hover(editor, "c.spark", 0, 19)
    assert text.startswith("## SPK101: unknown key or block")
    assert "### Failing example" in text


async def test_hover_on_a_diagnostic_adds_the_explain_text(editor: Editor) -> None:
    await editor.open("typo.spark", TYPO)
    text = await _hover(editor, "typo.spark", 3, 4)
    assert "## SPK101: unknown key or block" in text


# ---- completion ------------------------------------------------------------------------


async def test_completion_offers_the_keys_not_yet_set(editor: Editor) -> None:
    text = "deployment d {\n  model = muse-spark-open\n  \n  checkpoint = nvfp4\n}\n"
    await editor.open("c.spark", text)
    labels = await _complete(editor, "c.spark", 2, 2)
    assert {"accelerator", "max_model_len", "serve", "target"} <= set(labels)
    assert "model" not in labels and "checkpoint" not in labels


async def test_completion_inside_a_block_offers_that_blocks_keys(editor: Editor) -> None:
    await editor.open("c.spark", "deployment d {\n  serve {\n    \n  }\n}\n")
    assert set(await _complete(editor, "c.spark", 2, 4)) == {
        "port",
        "host",
        "served_model_name",
        "api_key",
        "ready_timeout",
        "drain",
        "extra_args",
        "env",
    }


async def test_completion_after_checkpoint_offers_its_symbols(editor: Editor) -> None:
    # The text does not parse while the value is missing; completion must not need it to.
    await editor.open("c.spark", "deployment d {\n  checkpoint = \n}\n")
    labels = await _complete(editor, "c.spark", 1, 15)
    assert labels == ["bf16", "mxfp4", "nvfp4", "bf16-to-mxfp4", "fp8"]


async def test_completion_of_a_partial_symbol_replaces_the_word(editor: Editor) -> None:
    await editor.open("c.spark", "deployment d {\n  checkpoint = bf16-to\n}\n")
    result = await editor.client.text_document_completion_async(
        types.CompletionParams(text_document=_doc(editor, "c.spark"), position=at(1, 22))
    )
    assert isinstance(result, types.CompletionList)
    item = next(i for i in result.items if i.label == "bf16-to-mxfp4")
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.range == types.Range(start=at(1, 15), end=at(1, 22))


async def test_completion_offers_accelerators_models_targets_and_profiles(editor: Editor) -> None:
    text = 'import "profiles/common.spark"\ndeployment d extends  {\n  accelerator = \n  model = \n  target \n}\n'
    await editor.open("c.spark", text)
    assert {"b200", "mi355x"} <= set(await _complete(editor, "c.spark", 2, 16))
    assert "muse-spark-open" in await _complete(editor, "c.spark", 3, 10)
    assert await _complete(editor, "c.spark", 4, 9) == [
        "shell",
        "compose",
        "slurm",
        "kubernetes",
        "vllm-config",
        "smoke",
        "bench",
        "smoke-job",
        "bench-job",
        "bench-slurm",
        "smoke-slurm",
    ]
    assert await _complete(editor, "c.spark", 1, 21) == ["common"]


# ---- quick fixes ------------------------------------------------------------------------


async def test_a_did_you_mean_quick_fix_applies_and_clears_the_diagnostic(editor: Editor) -> None:
    (diagnostic,) = await editor.open("typo.spark", TYPO)
    # The fix says whether `spark check --fix` would apply it: a did-you-mean is a guess, so not safe.
    assert isinstance(diagnostic.data, dict) and diagnostic.data["fixes"][0]["safe"] is False
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=_doc(editor, "typo.spark"),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    assert actions is not None
    (fix,) = [a for a in actions if isinstance(a, types.CodeAction)]
    # An unsafe fix is never the preferred one, and its title says why it is not.
    assert fix.title == "Replace with `checkpoint` (unsafe: may change what is deployed)"
    assert not fix.is_preferred
    assert fix.edit is not None and fix.edit.changes is not None
    fixed = apply_edits(TYPO, list(fix.edit.changes[editor.uri("typo.spark")]))
    assert "  checkpoint   = nvfp4\n" in fixed
    assert await editor.replace("typo.spark", fixed) == []


async def test_errors_cannot_be_ignored_but_warnings_can(editor: Editor) -> None:
    text = "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n}\n"
    await editor.open("w.spark", text)
    warning = types.Diagnostic(
        range=types.Range(start=at(2, 16), end=at(2, 20)),
        message="a recipe warning",
        severity=types.DiagnosticSeverity.Warning,
        code="SPK402",
        source="spark",
        data={"fixes": [], "ignorable": True},
    )
    error = types.Diagnostic(
        range=warning.range,
        message="an error",
        severity=types.DiagnosticSeverity.Error,
        code="SPK212",
        source="spark",
        data={"fixes": [], "ignorable": False},
    )
    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=_doc(editor, "w.spark"),
            range=warning.range,
            context=types.CodeActionContext(diagnostics=[warning, error]),
        )
    )
    assert actions is not None
    (ignore,) = actions
    assert isinstance(ignore, types.CodeAction) and ignore.title == "Ignore SPK402 here"
    assert ignore.edit is not None and ignore.edit.changes is not None
    edited = apply_edits(text, list(ignore.edit.changes[editor.uri("w.spark")]))
    assert edited.splitlines()[2:4] == ["  # spark: ignore[SPK402]", "  accelerator = b200"]


# ---- navigation, symbols, formatting -----------------------------------------------------------


async def test_go_to_definition_of_an_import_opens_the_file(editor: Editor) -> None:
    await editor.open("muse.spark")
    result = await editor.client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(editor, "muse.spark"), position=at(0, 12))
    )
    assert isinstance(result, list)
    assert [loc.uri for loc in result] == [editor.uri("profiles/common.spark")]


async def test_go_to_definition_of_a_profile_lands_in_the_imported_file(editor: Editor) -> None:
    await editor.open("muse.spark")
    result = await editor.client.text_document_definition_async(
        types.DefinitionParams(text_document=_doc(editor, "muse.spark"), position=at(2, 31))
    )
    assert isinstance(result, list)
    (location,) = result
    assert location.uri == editor.uri("profiles/common.spark")
    assert location.range == types.Range(start=at(1, 8), end=at(1, 14))


async def test_document_symbols_outline_the_file(editor: Editor) -> None:
    await editor.open("muse.spark")
    result = await editor.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=_doc(editor, "muse.spark"))
    )
    assert result is not None
    names = [(s.name, s.detail) for s in result if isinstance(s, types.DocumentSymbol)]
    assert names == [
        ("profiles/common.spark", "import"),
        ("muse-b200", "deployment extends common"),
    ]
    deployment = result[1]
    assert isinstance(deployment, types.DocumentSymbol) and deployment.children is not None
    assert [c.name for c in deployment.children] == ["model", "accelerator", "checkpoint"]


async def test_formatting_returns_the_fmt_layout(editor: Editor, client: LanguageClient) -> None:
    ugly = "deployment d {\nmodel=muse-spark-open # m\n  accelerator   =   b200\n}"
    await editor.open("f.spark", ugly)
    edits = await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=_doc(editor, "f.spark"),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )
    assert edits is not None
    assert apply_edits(ugly, list(edits)) == (
        "deployment d {\n  model       = muse-spark-open  # m\n  accelerator = b200\n}\n"
    )
