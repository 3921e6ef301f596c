"""`spark lsp` survives its client: hostile frames, unknown documents and bad params, over stdio.

Every test drives the real server process with raw bytes (see raw_lsp.py), checks the
answer the hostile input gets, then that the server still checks a document correctly,
answered every request exactly once and wrote no traceback to its log.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import (
    TYPO,
    RawServer,
    assert_clean_session,
    assert_still_serving,
    frame,
    open_typo,
    position_params,
    raw_frame,
    start_server,
)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
# The documented frame limit (docs/editors.md): 32 MiB.
MESSAGE_LIMIT = 32 * 1024 * 1024

UNFORMATTED = "deployment muse {\nmodel = muse-spark-open\n    accelerator=b200\n}\n"


# ---- frames ----------------------------------------------------------------------------


def test_a_huge_content_length_allocates_nothing_and_the_server_keeps_serving(server: RawServer) -> None:
    server.send(b"Content-Length: 1000000000000\r\n\r\n")
    error = server.error(None)
    assert error["code"] == INVALID_REQUEST
    assert "1000000000000 bytes" in error["message"]
    assert "32 MiB" in error["message"]
    assert_still_serving(server)
    assert_clean_session(server)


def test_a_huge_content_length_before_initialize_is_answered_and_initialize_still_works(tmp_path: Path) -> None:
    started = start_server(tmp_path)
    try:
        started.send(b"Content-Length: 99999999999999999999999999999999\r\n\r\n")
        assert started.error(None)["code"] == INVALID_REQUEST
        assert "capabilities" in started.initialize()["result"]
        assert_still_serving(started)
        assert_clean_session(started)
    finally:
        started.close()


def test_a_message_over_the_limit_is_skipped_and_the_next_one_answered(server: RawServer) -> None:
    # A real body one byte over the limit, carrying header-like text that must not resync early.
    padding = "Content-Length: 12\r\n\r\n" + "x" * MESSAGE_LIMIT
    body = json.dumps({"jsonrpc": "2.0", "method": "$/spark-padding", "params": {"pad": padding}})
    server.send(raw_frame(body.encode("utf-8")[: MESSAGE_LIMIT + 1]))
    error = server.error(None)
    assert error["code"] == INVALID_REQUEST
    assert f"{MESSAGE_LIMIT + 1} bytes" in error["message"]
    assert_still_serving(server)
    assert_clean_session(server)


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"Content-Length: abc\r\n\r\n{}", id="non-numeric-length"),
        pytest.param(b"Content-Length: -5\r\n\r\n{}", id="negative-length"),
        pytest.param(b"Content-Length: 1e3\r\n\r\n{}", id="float-length"),
        pytest.param(b"Content-Length: \xd9\xa3\r\n\r\n{}", id="non-ascii-digit"),
        pytest.param(b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}", id="no-length"),
        pytest.param(b"Content-Lenght: 2\r\n\r\n{}", id="misspelt-length"),
        pytest.param(b"Content-Length: 2\r\nthis is no header\r\n\r\n{}", id="junk-header-line"),
        pytest.param(b"no colon here\r\n\r\n", id="junk-line"),
        pytest.param(b'garbage"}}', id="junk-before-the-next-header"),
        pytest.param(b"x" * 100_000, id="endless-header"),
    ],
)
def test_a_malformed_header_is_a_parse_error_and_the_stream_recovers(server: RawServer, garbage: bytes) -> None:
    server.send(garbage)
    uri = open_typo(server)  # junk is known to be junk only once the next header arrives
    error = server.error(None)
    assert error["code"] == PARSE_ERROR
    assert "header" in error["message"]
    assert_still_serving(server, uri)
    assert_clean_session(server)


def test_a_length_of_thousands_of_digits_is_over_the_limit(server: RawServer) -> None:
    server.send(b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n")
    assert server.error(None)["code"] == INVALID_REQUEST
    assert_still_serving(server)
    assert_clean_session(server)


# ---- bodies ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"jsonrpc": "2.0", "id": 3, "method": ', id="truncated"),
        pytest.param(b"", id="empty"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 3, "method": "\xff\xfe"}', id="invalid-utf8"),
        pytest.param(b"[" * 200_000 + b"]" * 200_000, id="nested-too-deep"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1' + b"1" * 5000 + b', "method": "shutdown"}', id="huge-id"),
    ],
)
def test_a_body_that_is_not_json_is_a_parse_error(server: RawServer, body: bytes) -> None:
    server.send(raw_frame(body))
    assert server.error(None)["code"] == PARSE_ERROR
    assert_still_serving(server)
    assert_clean_session(server)


@pytest.mark.parametrize(
    ("message", "reply_to"),
    [
        pytest.param([], None, id="empty-batch"),
        pytest.param([{"jsonrpc": "2.0", "id": 40, "method": "shutdown"}], None, id="batch"),
        pytest.param(42, None, id="number"),
        pytest.param("shutdown", None, id="string"),
        pytest.param(None, None, id="null"),
        pytest.param({}, None, id="empty-object"),
        pytest.param({"jsonrpc": "2.0"}, None, id="neither-request-nor-response"),
        pytest.param({"jsonrpc": "1.0", "id": 41, "method": "shutdown"}, 41, id="wrong-version"),
        pytest.param({"id": 42, "method": "shutdown"}, 42, id="no-version"),
        pytest.param({"jsonrpc": "2.0", "id": 43, "method": 5}, 43, id="method-not-a-string"),
        pytest.param({"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"}, None, id="object-id"),
        pytest.param({"jsonrpc": "2.0", "id": True, "method": "shutdown"}, None, id="boolean-id"),
        pytest.param({"jsonrpc": "2.0", "id": None, "method": "shutdown"}, None, id="null-id"),
        pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "shutdown"}, None, id="fractional-id"),
        pytest.param(
            {"jsonrpc": "2.0", "id": "open-44", "method": "textDocument/didOpen", "params": {}},
            "open-44",
            id="notification-sent-as-request",
        ),
    ],
)
def test_json_that_is_not_a_request_is_an_invalid_request(
    server: RawServer, message: Any, reply_to: int | str | None
) -> None:
    server.send(frame(message))
    assert server.error(reply_to)["code"] == INVALID_REQUEST
    # None of these shut the server down.
    assert_still_serving(server)
    assert_clean_session(server, raw_ids=() if reply_to is None else (reply_to,))


# ---- params ----------------------------------------------------------------------------

DOC = "file:///nowhere/doc.spark"
WRONG_PARAMS = [
    pytest.param("textDocument/hover", {"textDocument": {"uri": DOC}}, id="hover-without-position"),
    pytest.param("textDocument/hover", position_params(DOC, line=-1), id="hover-negative-line"),
    pytest.param("textDocument/hover", position_params(DOC, character=-3), id="hover-negative-character"),
    pytest.param("textDocument/hover", position_params(DOC, line=2**40), id="hover-line-past-uinteger"),
    pytest.param("textDocument/hover", "abc", id="hover-params-a-string"),
    pytest.param("textDocument/hover", None, id="hover-without-params"),
    pytest.param(
        "textDocument/completion",
        {"textDocument": {"uri": DOC}, "position": {"line": "zero", "character": 0}},
        id="completion-line-a-string",
    ),
    pytest.param("textDocument/completion", {"position": {"line": 0, "character": 0}}, id="completion-no-document"),
    pytest.param("textDocument/definition", [1, 2], id="definition-params-a-list"),
    pytest.param("textDocument/formatting", {"textDocument": {"uri": DOC}}, id="formatting-without-options"),
    pytest.param("textDocument/documentSymbol", {"textDocument": 7}, id="symbols-document-a-number"),
    pytest.param(
        "textDocument/codeAction",
        {"textDocument": {"uri": DOC}, "range": {"start": {"line": -1, "character": 0}}, "context": {}},
        id="code-action-bad-range",
    ),
]


@pytest.mark.parametrize(("method", "params"), WRONG_PARAMS)
def test_wrong_params_are_answered_with_invalid_params(server: RawServer, method: str, params: Any) -> None:
    error = server.error(server.request(method, params))
    assert error["code"] == INVALID_PARAMS
    assert method in error["message"]
    assert_still_serving(server)
    assert_clean_session(server)


def test_wrong_params_name_the_field_at_fault(server: RawServer) -> None:
    error = server.error(server.request("textDocument/hover", {"textDocument": {"uri": DOC}}))
    assert "$.params.position" in error["message"]
    assert_clean_session(server)


def test_positions_past_the_end_of_a_document_get_an_answer(server: RawServer) -> None:
    uri = server.open("typo.spark", TYPO)
    assert len(server.diagnostics(uri)) == 1
    far = [(0, 10_000), (3, 10_000), (10_000, 0), (2**31 - 1, 2**31 - 1)]
    for line, character in far:
        at = position_params(uri, line, character)
        assert server.call("textDocument/hover", at)["result"] is None
        assert server.call("textDocument/definition", at)["result"] is None
        assert server.call("textDocument/completion", at)["result"]["isIncomplete"] is False
        span = {"start": at["position"], "end": at["position"]}
        action = {"textDocument": {"uri": uri}, "range": span, "context": {"diagnostics": []}}
        assert "result" in server.call("textDocument/codeAction", action)
    assert_still_serving(server)
    assert_clean_session(server)


def test_an_edit_past_the_end_of_a_document_is_survived(server: RawServer) -> None:
    uri = server.open("typo.spark", TYPO)
    assert len(server.diagnostics(uri)) == 1
    far = {"start": {"line": 10_000, "character": 5}, "end": {"line": 20_000, "character": 0}}
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": far, "text": "\n"}]},
    )
    assert_still_serving(server)
    assert_clean_session(server)


# ---- unknown documents -------------------------------------------------------------------

FORMATTING_OPTIONS = {"tabSize": 2, "insertSpaces": True}


def _ask_everything(server: RawServer, uri: str) -> list[Any]:
    """Every document request the server offers, for a document it was never sent."""
    at = position_params(uri)
    span = {"start": at["position"], "end": at["position"]}
    requests = [
        ("textDocument/completion", at),
        ("textDocument/formatting", {"textDocument": {"uri": uri}, "options": FORMATTING_OPTIONS}),
        ("textDocument/hover", at),
        ("textDocument/definition", at),
        ("textDocument/documentSymbol", {"textDocument": {"uri": uri}}),
        ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": span, "context": {"diagnostics": []}}),
    ]
    answers = []
    for method, params in requests:
        reply = server.call(method, params)
        assert "error" not in reply, f"{method}: {reply}"
        answers.append(reply["result"])
    return answers


def _empty(answer: Any) -> bool:
    return answer in (None, []) or answer == {"isIncomplete": False, "items": []}


def test_requests_on_an_unopened_fifo_never_block(server: RawServer, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.spark"
    os.mkfifo(fifo)
    assert all(_empty(answer) for answer in _ask_everything(server, fifo.as_uri()))
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": fifo.as_uri(), "version": 2}, "contentChanges": [{"text": "x"}]},
    )
    assert_still_serving(server)
    assert_clean_session(server)


def _peak_memory_mib(server: RawServer) -> float:
    status = Path(f"/proc/{server.proc.pid}/status").read_text(encoding="utf-8")
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) / 1024


@pytest.mark.parametrize(
    "uri",
    [
        pytest.param("file:///dev/zero", id="dev-zero"),
        pytest.param("file:///dev/urandom", id="dev-urandom"),
        pytest.param("file:///dev/stdin", id="own-stdin"),
        pytest.param("file:///proc/self/fd/0", id="own-stdin-by-fd"),
    ],
)
def test_requests_on_special_files_read_nothing(server: RawServer, uri: str) -> None:
    assert all(_empty(answer) for answer in _ask_everything(server, uri))
    # Reading any of these would have grown the server by hundreds of MiB (or eaten its own input).
    assert _peak_memory_mib(server) < 256
    assert_still_serving(server)
    assert_clean_session(server)


def test_an_unopened_file_over_the_size_limit_is_not_read(server: RawServer, tmp_path: Path) -> None:
    sparse = tmp_path / "huge.spark"
    with sparse.open("wb") as out:
        out.truncate(4 * 1024**3)  # 4 GiB that take no disk space
    assert all(_empty(answer) for answer in _ask_everything(server, sparse.as_uri()))
    assert _peak_memory_mib(server) < 256
    assert_clean_session(server)


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("missing.spark", id="missing"),
        pytest.param(".", id="a-folder"),
        pytest.param("nul%00byte.spark", id="nul-byte"),
        pytest.param("x" * 5000 + ".spark", id="name-too-long"),
    ],
)
def test_requests_on_paths_that_hold_no_document_get_empty_answers(
    server: RawServer, tmp_path: Path, where: str
) -> None:
    uri = tmp_path.as_uri() + "/" + where
    assert all(_empty(answer) for answer in _ask_everything(server, uri))
    assert_still_serving(server)
    assert_clean_session(server)


def test_an_unopened_regular_file_is_still_formatted_from_disk(server: RawServer, tmp_path: Path) -> None:
    (tmp_path / "loose.spark").write_text(UNFORMATTED, encoding="utf-8")
    reply = server.call(
        "textDocument/formatting",
        {"textDocument": {"uri": (tmp_path / "loose.spark").as_uri()}, "options": FORMATTING_OPTIONS},
    )
    (edit,) = reply["result"]
    assert edit["newText"] == "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n}\n"
    assert_clean_session(server)


def test_requests_before_initialize_are_refused_and_initialize_still_works(tmp_path: Path) -> None:
    started = start_server(tmp_path)
    try:
        early = open_typo(started)  # a notification before initialize: dropped
        hover = started.request("textDocument/hover", position_params(early, 3, 4))
        assert started.error(hover)["code"] == SERVER_NOT_INITIALIZED
        assert "capabilities" in started.initialize()["result"]
        assert_still_serving(started)
        assert not [m for m in started.received() if m.get("params", {}).get("uri") == early]
        assert_clean_session(started)
    finally:
        started.close()


def test_documents_whose_uri_is_percent_encoded_are_rechecked_with_their_imports(
    server: RawServer, tmp_path: Path
) -> None:
    # Editors encode a space as %20; pygls keys its open documents by the decoded URI.
    folder = tmp_path / "my project"
    folder.mkdir()
    common_uri = server.open("my project/common.spark", "profile common {\n  nodes = 1\n}\n")
    spec = (
        'import "common.spark"\n\ndeployment d extends common {\n  model = muse-spark-open\n  accelerator = b200\n}\n'
    )
    spec_uri = server.open("my project/spec.spark", spec)
    assert "%20" in spec_uri
    assert server.diagnostics(common_uri) == []
    assert server.diagnostics(spec_uri) == []
    server.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": common_uri, "version": 2},
            "contentChanges": [{"text": "profile shared {\n  nodes = 1\n}\n"}],
        },
    )
    assert [d["code"] for d in server.diagnostics(spec_uri)] == ["SPK115"]
    assert_clean_session(server)
