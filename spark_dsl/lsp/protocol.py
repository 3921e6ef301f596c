"""The JSON-RPC side of `spark lsp`: every message is checked before pygls dispatches it.

pygls decodes a body and structures its params in one step, and on any failure logs
and moves on: a request with bad params, or JSON that is not a request, never gets an
answer and the editor waits forever. Here each failure is answered as JSON-RPC and
LSP say: -32700 for a body that is not JSON, -32600 for JSON that is not a message
(with the request's id when it has a usable one, else null) or a request after
shutdown, -32602 for a request whose params do not fit its method, -32002 for one
before initialize. Notifications are never answered, only logged. docs/editors.md
has the whole table.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Generator
from typing import Any
from urllib.parse import unquote

import attrs
from cattrs import transform_error
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage
from pygls.protocol.language_server import lsp_method

from spark_dsl.lsp.client_text import apply_changes
from spark_dsl.lsp.positions import UTF32, negotiate
from spark_dsl.lsp.uris import file_uri, folder_refusal, parses, shown

log = logging.getLogger("spark.lsp")
Errors = types.ErrorCodes


class SparkProtocol(LanguageServerProtocol):
    """Checks each message before dispatch; negotiates positions (UTF-32 if offered, else UTF-16)."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        general = params.capabilities.general
        if general is not None:
            # pygls would take the client's first choice, UTF-8 included; narrow the offer first.
            general.position_encodings = [negotiate(general.position_encodings)]
        _keep_usable_roots(params)
        return (yield from super().lsp_initialize(params))

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Generator[Any, Any, Any]:
        # pygls fails on a URI urllib cannot split, and says only "Invalid IPv6 URL".
        if not parses(params.text_document.uri):
            log.warning("spark: ignored the document '%s': not a URI", shown(params.text_document.uri))
            return
        yield from super().lsp_text_document__did_open(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, Any]:
        # pygls fails with a KeyError (and a traceback in the log) on a document never opened.
        document = self.workspace.text_documents.get(unquote(params.text_document.uri))
        if document is None:
            log.warning("spark: ignored a change to '%s', which is not open", shown(params.text_document.uri))
            return
        # Applied here, not by pygls, whose line model differs from the protocol's (client_text).
        utf16 = self.workspace.position_encoding != UTF32
        text = apply_changes(document.source, params.content_changes, utf16)
        if text is None:
            log.warning(
                "spark: ignored a change to '%s': a range ends before it starts; the buffer keeps version %s",
                shown(params.text_document.uri),
                document.version,
            )
            return
        whole = types.TextDocumentContentChangeWholeDocument(text=text)
        yield from super().lsp_text_document__did_change(
            types.DidChangeTextDocumentParams(text_document=params.text_document, content_changes=[whole])
        )

    # ---- receiving ---------------------------------------------------------------------

    def receive(self, body: bytes) -> None:
        """Checks one frame's body and dispatches it, or answers why it cannot be."""
        try:
            data = json.loads(body.decode("utf-8"))
        except RecursionError:
            self.refuse(None, Errors.ParseError, "message nested too deeply to read")
            return
        except ValueError as err:  # invalid JSON, invalid UTF-8, an integer of thousands of digits
            self.refuse(None, Errors.ParseError, f"message is not JSON: {err}")
            return
        if not isinstance(data, dict):
            self.refuse(None, Errors.InvalidRequest, f"a message is a JSON object, not {_json_kind(data)}")
            return
        msg_id = data.get("id")
        usable_id = msg_id if isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool) else None
        if data.get("jsonrpc") != "2.0":
            self.refuse(usable_id, Errors.InvalidRequest, 'a message needs "jsonrpc": "2.0"')
        elif "method" in data:
            self._receive_call(data, usable_id)
        elif usable_id is not None and ("result" in data or "error" in data):
            self._receive_response(data)
        else:
            self.refuse(None, Errors.InvalidRequest, "a message needs a method, or an id and a result or error")

    def _receive_call(self, data: dict[str, Any], usable_id: int | str | None) -> None:
        """A request (it has an id) or a notification."""
        method = data["method"]
        if not isinstance(method, str):
            self.refuse(usable_id, Errors.InvalidRequest, "a message's method is a string")
            return
        if "id" not in data:
            self._receive_notification(data, method)
            return
        # Quoted escaped and cut short (uris.shown): a method is any string the client sends.
        name = shown(method)
        if usable_id is None:
            self.refuse(None, Errors.InvalidRequest, f"request '{name}' has an id that is not a number or string")
            return
        if self._shutdown and method != types.EXIT:
            self.refuse(usable_id, Errors.InvalidRequest, f"the server is shutting down: '{name}' refused")
            return
        if self._workspace is None and method != types.INITIALIZE:
            self.refuse(usable_id, Errors.ServerNotInitialized, f"'{name}' before initialize")
            return
        known = self.get_message_type(method)
        if known is None and not self._serves(method):
            # pygls would answer -32601 too, but quote the whole name into its answer and the log.
            self.refuse(usable_id, Errors.MethodNotFound, f"unknown method '{name}'")
            return
        if known is None:  # a method of the server's own: pygls dispatches it
            message: Any = JsonRPCRequestMessage(id=usable_id, method=method, jsonrpc="2.0", params=data.get("params"))
        elif "id" not in attrs.fields_dict(known):
            self.refuse(usable_id, Errors.InvalidRequest, f"'{name}' is a notification: send it without an id")
            return
        else:
            try:
                message = self._converter.structure(data, known)
            except Exception as err:  # cattrs raises several kinds for params that do not fit
                problem = f"invalid params for '{name}': {_validation_errors(err)}"
                self.refuse(usable_id, Errors.InvalidParams, problem)
                return
            if (unknown := self._unknown_command(message)) is not None:
                self.refuse(usable_id, Errors.InvalidParams, unknown)
                return
        self.handle_message(message)

    def _serves(self, method: str) -> bool:
        return method in self.fm.features or method in self.fm.builtin_features

    def _unknown_command(self, message: Any) -> str | None:
        """Why an executeCommand request names no command of the server's, or None.

        pygls raises for it, which logs a traceback and quotes the whole name, control
        characters and all, into the log and the answer.
        """
        if not isinstance(message, types.ExecuteCommandRequest):
            return None
        command = message.params.command
        if command in self.fm.commands:
            return None
        return f"unknown command '{shown(command)}': spark lsp has no commands"

    def _receive_notification(self, data: dict[str, Any], method: str) -> None:
        """Dispatched if its params fit; never answered, whatever is wrong with it."""
        if method != types.EXIT and (self._shutdown or self._workspace is None):
            return  # LSP: only `exit` counts before initialize or after shutdown
        known = self.get_message_type(method)
        if known is None and not self._serves(method):
            # pygls would log it too, but the whole name as it came.
            log.warning("spark: ignored the notification '%s': the server does not know the method", shown(method))
            return
        if known is None:  # a notification of the server's own: pygls dispatches it
            message: Any = JsonRPCNotification(method=method, jsonrpc="2.0", params=data.get("params"))
        else:
            try:
                message = self._converter.structure(data, known)
            except Exception as err:  # cattrs raises several kinds for params that do not fit
                problem = _validation_errors(err)
                log.warning("spark: ignored a notification: invalid params for '%s': %s", shown(method), problem)
                return
        self.handle_message(message)

    def _receive_response(self, data: dict[str, Any]) -> None:
        """The client's answer to a request of the server's (a registration, say)."""
        try:
            message = self.structure_message(data)
        except Exception:  # nothing to answer: a response is never replied to
            log.warning("spark: ignored an unreadable response to request '%s'", shown(str(data["id"])))
            return
        self.handle_message(message)

    def refuse(self, msg_id: int | str | None, code: int, message: str) -> None:
        """Answers a message with a JSON-RPC error (id null when the message had no usable id)."""
        log.warning("spark: refused a message: %s", message)
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": int(code), "message": message}})


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array (batches are not part of LSP)"
    if value is None:
        return "null"
    return {bool: "a boolean", str: "a string"}.get(type(value), "a number")


def _validation_errors(err: Exception) -> str:
    """cattrs' account of what did not fit, with the protocol's field names (`$.params.textDocument`)."""
    try:
        found = transform_error(err)
    except Exception:  # not a cattrs validation error: say what Python said
        return str(err) or type(err).__name__
    return "; ".join(re.sub(r"_([a-z])", lambda m: m[1].upper(), line) for line in found)


def _keep_usable_roots(params: types.InitializeParams) -> None:
    """Drops the root and workspace folders that cannot be the server's folder, one log line each.

    pygls fails initialize on a URI urllib cannot split (and every later message is then
    refused as before initialize), and the server works from the first folder, which a
    file's URI cannot be. The deprecated rootPath becomes a rootUri, checked the same way.
    """
    if params.root_uri is None and params.root_path:
        params.root_uri = file_uri(os.path.abspath(params.root_path))
    params.root_path = None
    if params.root_uri is not None and not _usable_root(params.root_uri):
        params.root_uri = None
    if params.workspace_folders:
        params.workspace_folders = [f for f in params.workspace_folders if _usable_root(f.uri)]


def _usable_root(uri: str) -> bool:
    refusal = folder_refusal(uri)
    if refusal is not None:
        log.warning("spark: ignored the workspace folder '%s': %s", shown(uri), refusal)
    return refusal is None
