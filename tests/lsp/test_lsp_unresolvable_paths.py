"""Paths that cannot be resolved, in open documents and their imports, spoil no check.

The editor holds the text, but the path is a symlink loop or carries a NUL: the
pipeline resolves every path it is given, so the server checks such a document from
its path and the loader says why it cannot be read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_lsp import TYPO, RawServer, assert_clean_session, assert_still_serving, position_params


def test_a_document_behind_a_symlink_loop_is_reported_and_spoils_no_other(
    own_server: RawServer, tmp_path: Path
) -> None:
    # Its own server, opened on `tmp_path`: the message names the file relative to that folder.
    server = own_server
    (tmp_path / "loop.spark").symlink_to("loop.spark")
    uri = server.open("loop.spark", TYPO)
    # The path cannot be resolved, so the check reads the path and says why it cannot.
    (diagnostic,) = server.diagnostics(uri)
    assert diagnostic["code"].startswith("SPK1") and diagnostic["severity"] == 1
    assert "cannot read loop.spark" in diagnostic["message"]
    assert "result" in server.call("textDocument/hover", position_params(uri, 3, 4))
    assert_still_serving(server)  # every check reads all open documents' paths
    assert_clean_session(server)


@pytest.mark.parametrize(
    "name",
    [pytest.param("nul%00byte.spark", id="nul-byte"), pytest.param("x" * 5000 + ".spark", id="name-too-long")],
)
def test_a_document_at_an_impossible_path_gets_diagnostics_and_spoils_no_other(
    server: RawServer, tmp_path: Path, name: str
) -> None:
    uri = tmp_path.as_uri() + "/" + name
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "spark", "version": 1, "text": TYPO}},
    )
    assert server.diagnostics(uri)  # the typo, or why the path cannot be read: never silence
    assert_still_serving(server)
    assert_clean_session(server)


def test_completion_survives_imports_that_name_no_file(server: RawServer, tmp_path: Path) -> None:
    (tmp_path / "loop.spark").symlink_to("loop.spark")
    text = f'import "loop.spark"\nimport "{"x" * 5000}.spark"\n\nprofile mine {{\n}}\n\ndeployment d extends \n'
    uri = server.open("imports.spark", text)
    server.diagnostics(uri)
    reply = server.call("textDocument/completion", position_params(uri, 6, 21))
    assert [item["label"] for item in reply["result"]["items"]] == ["mine"]
    assert_still_serving(server)
    assert_clean_session(server)
