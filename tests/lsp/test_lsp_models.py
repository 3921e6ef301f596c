"""The language server and declared models (issue 15): completion of model names, declared and
shipped, and of a model body's keys; hover in a model body reads the model's schema."""

from __future__ import annotations

import pytest
from lsp_editor import Editor, at
from lsprotocol import types

# The tests share one server (conftest.py), whose client runs in the session's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="session")

MODELS = """model my-llama {
  layers      = 32
  hidden_size = 4096
  query_heads = 32
  kv_heads    = 8
  head_dim    = 128
  max_context = 128K
  checkpoint bf16 {
    repository = "meta-llama/Llama-3.1-8B-Instruct"
    size       = 16GB
  }
}
"""


async def _complete(editor: Editor, relative: str, line: int, character: int) -> list[str]:
    result = await editor.client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=editor.uri(relative)), position=at(line, character)
        )
    )
    assert isinstance(result, types.CompletionList)
    return [item.label for item in result.items]


async def test_completion_of_model_offers_declared_and_shipped_models(editor: Editor) -> None:
    await editor.open("models/llama.spark", MODELS)
    text = 'import "models/llama.spark"\nmodel local {\n}\ndeployment d {\n  model = \n}\n'
    await editor.open("c.spark", text)
    labels = await _complete(editor, "c.spark", 4, 10)
    assert "muse-spark-open" in labels
    assert labels[-2:] == ["local", "my-llama"]


async def test_completion_in_a_model_body_offers_the_model_keys(editor: Editor) -> None:
    await editor.open("m.spark", "model m {\n  layers = 32\n  \n}\n")
    labels = await _complete(editor, "m.spark", 2, 2)
    assert {"hidden_size", "query_heads", "kv_heads", "head_dim", "max_context", "checkpoint", "draft"} <= set(labels)
    assert "layers" not in labels and "accelerator" not in labels


async def test_completion_in_a_checkpoint_block_and_its_label(editor: Editor) -> None:
    await editor.open("m.spark", "model m {\n  checkpoint bf16 {\n    \n  }\n  checkpoint \n}\n")
    assert set(await _complete(editor, "m.spark", 2, 4)) == {"dtype", "repository", "size"}
    assert {"bf16", "fp8", "nvfp4", "mxfp4"} <= set(await _complete(editor, "m.spark", 4, 13))


async def test_a_statement_may_be_a_model(editor: Editor) -> None:
    await editor.open("s.spark", "\n")
    assert "model" in await _complete(editor, "s.spark", 0, 0)


async def test_hover_on_a_model_key_shows_its_doc(editor: Editor) -> None:
    await editor.open("m.spark", MODELS)
    result = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=editor.uri("m.spark")), position=at(4, 4))
    )
    assert result is not None and isinstance(result.contents, types.MarkupContent)
    assert result.contents.value.startswith("**kv_heads**: key/value heads")


async def test_a_declared_model_name_goes_to_its_declaration_and_hovers_its_facts(root_editor: Editor) -> None:
    # File names read relative to the folder the server was opened on.
    editor = root_editor
    await editor.open("models/llama.spark", MODELS)
    text = 'import "models/llama.spark"\ndeployment d {\n  model       = my-llama\n  accelerator = h100\n}\n'
    await editor.open("c.spark", text)
    doc = types.TextDocumentIdentifier(uri=editor.uri("c.spark"))
    found = await editor.client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=at(2, 18))
    )
    assert isinstance(found, list) and len(found) == 1
    assert found[0].uri == editor.uri("models/llama.spark")
    assert found[0].range == types.Range(start=at(0, 6), end=at(0, 14))
    hover = await editor.client.text_document_hover_async(types.HoverParams(text_document=doc, position=at(2, 18)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "`my-llama`: model declared in models/llama.spark:1: `layers = 32`" in hover.contents.value
    assert "; checkpoints bf16" in hover.contents.value
