"""URIs, workspace roots and command names no file can have: a clear log line, never a traceback.

A client may send any JSON string: a root that is a file, a URI urllib cannot split
(`file://[x/`), a lone surrogate (`\\udcff`, which UTF-8 cannot encode), a 100 KB
command name with control characters and a forged `error:` line. The server keeps
serving, and quotes such a string escaped and cut short.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import raw_lsp
from raw_lsp import TYPO, RawServer, assert_clean_session, assert_still_serving, position_params, start_server

# Control characters, a forged log line, a right-to-left override, a lone surrogate, and bulk.
HOSTILE = "a\x00b\nerror: forged\x1b[2J\u202e\udcff" + "x" * 100_000
SPAN = {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}


@pytest.fixture(autouse=True)
def _wedged_within_ten_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    # A server that dropped initialize ignores everything after: fail in seconds, not 30.
    monkeypatch.setattr(raw_lsp, "WEDGED", 10.0)


def _initialize(server: RawServer, **roots: Any) -> None:
    reply = server.call("initialize", {"processId": None, "capabilities": {}, **roots})
    assert "result" in reply, reply
    server.notify("initialized", {})


def _assert_log_is_plain(server: RawServer) -> None:
    log = server.stderr()
    assert "Traceback" not in log
    assert not any(line.startswith("error: forged") for line in log.splitlines()), log[-2000:]
    assert "\x1b" not in log and "x" * 200 not in log, "the client's string went into the log whole"


@pytest.mark.parametrize(
    "roots",
    [
        pytest.param("file", id="root-is-a-file"),
        pytest.param("not-a-uri", id="root-urllib-cannot-split"),
        pytest.param("surrogate-root-path", id="root-path-with-a-lone-surrogate"),
    ],
)
def test_a_root_that_cannot_be_the_workspace_folder_is_ignored(tmp_path: Path, roots: str) -> None:
    spec = tmp_path / "spec.spark"
    spec.write_text(TYPO, encoding="utf-8")
    given: dict[str, Any] = {
        "file": {"rootUri": spec.as_uri(), "workspaceFolders": [{"uri": spec.as_uri(), "name": "spec"}]},
        "not-a-uri": {"rootUri": "file://[x/", "workspaceFolders": [{"uri": "file://[x/", "name": "x"}]},
        "surrogate-root-path": {"rootPath": str(tmp_path / "\ud800"), "rootUri": None},
    }[roots]
    server = start_server(tmp_path)
    try:
        _initialize(server, **given)
        assert_still_serving(server)
        ignored = [line for line in server.stderr().splitlines() if "ignored the workspace folder" in line]
        assert ignored and all(line.endswith(("not a folder", "not a URI")) for line in ignored), ignored
        assert_clean_session(server)
    finally:
        server.close()


def test_a_root_that_is_a_folder_is_still_where_the_server_works(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    server = start_server(tmp_path)
    try:
        folder = (tmp_path / "sub").as_uri()
        _initialize(server, rootUri=folder, workspaceFolders=[{"uri": folder, "name": "sub"}])
        assert_still_serving(server)
        assert "ignored the workspace folder" not in server.stderr()
        assert_clean_session(server)
    finally:
        server.close()


def _every_document_method(server: RawServer, uri: str) -> None:
    """Each method that takes the URI, the document opened first and closed last."""
    document = {"uri": uri, "languageId": "spark", "version": 1, "text": TYPO}
    server.notify("textDocument/didOpen", {"textDocument": document})
    change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": TYPO}]}
    server.notify("textDocument/didChange", change)
    for method in ("hover", "definition", "completion", "documentSymbol"):
        assert "result" in server.call(f"textDocument/{method}", position_params(uri))
    formatting = {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}}
    assert "result" in server.call("textDocument/formatting", formatting)
    actions = {"textDocument": {"uri": uri}, "range": SPAN, "context": {"diagnostics": []}}
    assert "result" in server.call("textDocument/codeAction", actions)
    server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": t} for t in (1, 2, 3)]})
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_an_untitled_document_whose_uri_holds_a_lone_surrogate_is_checked(server: RawServer) -> None:
    uri = "untitled:\x00" + HOSTILE[:50]
    server.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "spark", "version": 1, "text": TYPO}}
    )
    (diagnostic,) = server.diagnostics(uri)  # a buffer with no file, checked as any other
    assert diagnostic["code"] == "SPK101"
    _every_document_method(server, uri)
    assert_still_serving(server)
    assert_clean_session(server)
    _assert_log_is_plain(server)


def test_a_file_uri_no_file_name_can_have_says_why_it_cannot_be_read(server: RawServer, tmp_path: Path) -> None:
    uri = tmp_path.as_uri() + "/lone\ud800.spark"  # a surrogate a file name never decodes to
    server.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "spark", "version": 1, "text": TYPO}}
    )
    (diagnostic,) = server.diagnostics(uri)
    assert diagnostic["code"].startswith("SPK1") and "lone surrogate" in diagnostic["message"]
    _every_document_method(server, uri)
    assert_still_serving(server)
    assert_clean_session(server)


def test_a_uri_urllib_cannot_split_is_ignored_with_a_line_in_the_log(server: RawServer) -> None:
    _every_document_method(server, "file://[x/a.spark")
    assert_still_serving(server)
    assert "ignored the document 'file://[x/a.spark': not a URI" in server.stderr()
    assert_clean_session(server)


def test_an_unknown_command_is_an_error_quoting_its_name_escaped_and_cut_short(server: RawServer) -> None:
    error = server.error(server.request("workspace/executeCommand", {"command": HOSTILE, "arguments": [HOSTILE]}))
    assert error["code"] == -32602
    assert error["message"].startswith("unknown command 'a\\x00b\\x0aerror: forged\\x1b[2J\\u{202e}\\xffxxx")
    assert "(100023 characters)" in error["message"] and len(error["message"]) < 250
    assert_still_serving(server)
    assert_clean_session(server)
    _assert_log_is_plain(server)


def test_an_unknown_method_is_named_escaped_and_cut_short(server: RawServer) -> None:
    error = server.error(server.request(HOSTILE, {}))
    assert error["code"] == -32601
    assert error["message"].startswith("unknown method 'a\\x00b\\x0a") and len(error["message"]) < 250
    server.notify(HOSTILE, {})  # a notification: never answered, one short line in the log
    assert_still_serving(server)
    assert_clean_session(server)
    _assert_log_is_plain(server)
