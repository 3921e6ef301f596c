"""`spark lsp`: the language server over stdio, wiring editor requests to the one pipeline."""

from __future__ import annotations

import asyncio
import functools
import gc
import io
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from spark_dsl import __version__
from spark_dsl.files import printable
from spark_dsl.lsp.code_actions import code_actions
from spark_dsl.lsp.completion import completions
from spark_dsl.lsp.definition import definition
from spark_dsl.lsp.diagnostics import lsp_diagnostics
from spark_dsl.lsp.documents import (
    Analysis,
    affected_by,
    analyse,
    document_path,
    project_root,
    read_unopened,
    resolvable,
    workspace_folders,
)
from spark_dsl.lsp.fix_all import KIND as FIX_ALL
from spark_dsl.lsp.fix_all import fix_all_action
from spark_dsl.lsp.formatting import format_document
from spark_dsl.lsp.hover import hover
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.lsp.protocol import SparkProtocol
from spark_dsl.lsp.symbols import document_symbols
from spark_dsl.lsp.transport import FrameReader, serve_frames

log = logging.getLogger("spark.lsp")
Handler = TypeVar("Handler", bound=Callable[..., Any])
# Set to report each check's time in the server as a log message (the latency benchmark reads it).
TIMING_ENV = "SPARK_LSP_TIMING"


class SparkServer(LanguageServer):
    """Holds the latest analysis of every open document."""

    def __init__(self) -> None:
        super().__init__("spark-lsp", __version__, protocol_cls=SparkProtocol)
        self.analyses: dict[str, Analysis] = {}
        self.timing = bool(os.environ.get(TIMING_ENV))

    # ---- state --------------------------------------------------------------

    @property
    def encoding(self) -> str:
        chosen = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return chosen.value if isinstance(chosen, types.PositionEncodingKind) else chosen

    def folders(self) -> list[Path]:
        uris = [f.uri for f in self.workspace.folders.values()]
        if self.workspace.root_uri:
            uris.append(self.workspace.root_uri)
        return workspace_folders(uris)

    def open_texts(self) -> dict[Path, str]:
        documents = self.workspace.text_documents.items()
        return {document_path(uri): doc.source for uri, doc in documents if resolvable(uri)}

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents  # pygls keys documents unquoted

    def text(self, uri: str) -> str | None:
        """A document's text: the editor's buffer if open, else a regular file's, else None.

        pygls would read any path it is handed, a FIFO (blocks forever) or /dev/zero
        (reads until memory runs out) included.
        """
        doc = self.workspace.text_documents.get(unquote(uri))
        return doc.source if doc is not None else read_unopened(uri)

    def document_version(self, uri: str) -> int | None:
        """An open document's version; None for one read from disk."""
        doc = self.workspace.text_documents.get(unquote(uri))
        return doc.version if doc is not None else None

    def positions(self, analysis: Analysis) -> TextPositions:
        index = analysis.source.index if analysis.source is not None else None
        return TextPositions(analysis.text, self.encoding, index)

    # ---- transport --------------------------------------------------------------

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serves stdio as pygls does, through spark's size-capped reader and checked dispatch."""
        source = stdin or sys.stdin.buffer
        read_chunk = source.read1 if isinstance(source, io.BufferedIOBase) else source.read
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        assert isinstance(self.protocol, SparkProtocol)
        try:
            asyncio.run(serve_frames(FrameReader(read_chunk), self.protocol))
        except BrokenPipeError:
            log.error("spark: the client closed the connection")
        except (KeyboardInterrupt, SystemExit):  # `exit` from the client
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated

    # ---- checking ---------------------------------------------------------------

    def check(self, uri: str) -> Analysis:
        """Checks one open document and publishes its diagnostics."""
        started = time.perf_counter()
        doc = self.workspace.text_documents[unquote(uri)]  # never a file pygls would read from disk
        # The cyclic collector would pass over the tens of thousands of nodes a check just
        # built before the diagnostics leave; let it run after they are on their way instead.
        collecting = gc.isenabled()
        gc.disable()
        try:
            analysis = analyse(uri, doc.source, doc.version, self.open_texts())
            self.analyses[uri] = analysis
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uri, version=doc.version, diagnostics=lsp_diagnostics(analysis, self.encoding)
                )
            )
        finally:
            if collecting:
                gc.enable()
        if self.timing:
            elapsed = (time.perf_counter() - started) * 1000
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Log, message=f"spark: checked {uri} in {elapsed:.3f} ms")
            )
        return analysis

    def check_with_dependents(self, uri: str) -> None:
        """Checks a document, then every other open document that imports it."""
        changed = document_path(uri)
        self.check(uri)
        for other, analysis in list(self.analyses.items()):
            if other != uri and self.is_open(other) and analysis.depends_on(changed):
                self.check(other)

    def forget(self, uri: str) -> None:
        self.analyses.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        for other, analysis in list(self.analyses.items()):
            if analysis.depends_on(document_path(uri)):
                self.check(other)

    def analysis(self, uri: str) -> Analysis | None:
        if uri not in self.analyses and self.is_open(uri):
            return self.check(uri)
        return self.analyses.get(uri)


def guarded(default: Any) -> Callable[[Handler], Handler]:
    """A handler that fails answers `default` and logs, instead of failing the editor's request."""

    def wrap(handler: Handler) -> Handler:
        @functools.wraps(handler)
        def run(ls: SparkServer, params: Any) -> Any:
            try:
                return handler(ls, params)
            except Exception:  # one bad request must not take the server down
                log.exception("spark: %s failed", handler.__name__)
                return default

        return run  # type: ignore[return-value]

    return wrap


# Long: the server's method table, one short handler per LSP method registered where it is
# written (pygls registers features with decorators on a server instance).
def build_server() -> SparkServer:
    server = SparkServer()

    @server.feature(types.INITIALIZE)
    @guarded(None)
    def initialize(ls: SparkServer, params: types.InitializeParams) -> None:
        folders = ls.folders()  # a root that is no folder was dropped, and logged, by the protocol
        if folders:
            # File names in messages and hovers read relative to the project, as from `spark check`.
            try:
                os.chdir(folders[0])
            except OSError as err:  # unreadable, or gone since: names read from where the server started
                log.warning("spark: cannot work from %s: %s", printable(str(folders[0])), err.strerror)

    @server.feature(types.INITIALIZED)
    @guarded(None)
    def initialized(ls: SparkServer, params: types.InitializedParams) -> None:
        watched = ls.client_capabilities.workspace
        dynamic = watched and watched.did_change_watched_files
        if dynamic and dynamic.dynamic_registration:
            watcher = types.FileSystemWatcher(glob_pattern="**/*.spark")
            ls.client_register_capability(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id="spark-files",
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=[watcher]),
                        )
                    ]
                )
            )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded(None)
    def did_open(ls: SparkServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.check_with_dependents(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded(None)
    def did_change(ls: SparkServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.check_with_dependents(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded(None)
    def did_close(ls: SparkServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded(None)
    def files_changed(ls: SparkServer, params: types.DidChangeWatchedFilesParams) -> None:
        # Only the open documents that read a changed or deleted file; all of them when a file
        # was created (an import that was missing may be there now).
        changes = [(document_path(c.uri), c.type == types.FileChangeType.Created) for c in params.changes]
        for uri in affected_by(ls.analyses, changes):
            if ls.is_open(uri):
                ls.check(uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded(None)
    def on_hover(ls: SparkServer, params: types.HoverParams) -> types.Hover | None:
        analysis = ls.analysis(params.text_document.uri)
        if analysis is None:
            return None
        positions = ls.positions(analysis)
        return hover(analysis, positions.offset(params.position), positions)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=["=", " ", "[", ",", '"']),
    )
    @guarded(None)
    def on_completion(ls: SparkServer, params: types.CompletionParams) -> types.CompletionList:
        uri = params.text_document.uri
        text = ls.text(uri)
        if text is None:
            return types.CompletionList(is_incomplete=False, items=[])
        positions = TextPositions(text, ls.encoding)
        item_support = ls.client_capabilities.text_document
        completion = item_support.completion if item_support else None
        snippets = bool(completion and completion.completion_item and completion.completion_item.snippet_support)
        path = document_path(uri)
        project = (project_root(path), ls.open_texts())
        offset = positions.offset(params.position)
        items = completions(text, offset, positions, path, project, snippets)
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
    )
    @guarded([])
    def on_code_action(ls: SparkServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        text = ls.text(uri)
        if text is None:
            return []
        utf16 = ls.encoding != types.PositionEncodingKind.Utf32
        return code_actions(
            params,
            text,
            ls.document_version(uri),
            TextPositions(text, ls.encoding),
            lambda: fix_all_action(uri, text, ls.open_texts(), utf16),
        )

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded(None)
    def on_definition(ls: SparkServer, params: types.DefinitionParams) -> list[types.Location] | None:
        analysis = ls.analysis(params.text_document.uri)
        if analysis is None:
            return None
        return definition(analysis, ls.positions(analysis).offset(params.position), ls.encoding)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded([])
    def on_symbols(ls: SparkServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        analysis = ls.analysis(params.text_document.uri)
        if analysis is None or analysis.module is None:
            return []
        return document_symbols(analysis.module, ls.positions(analysis))

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    @guarded(None)
    def on_formatting(ls: SparkServer, params: types.DocumentFormattingParams) -> list[types.TextEdit] | None:
        text = ls.text(params.text_document.uri)
        if text is None:
            return None
        name = document_path(params.text_document.uri).name
        return format_document(text, name, TextPositions(text, ls.encoding))

    return server


def serve() -> None:
    """Runs the server on stdin and stdout until the client says exit."""
    from spark_dsl.syntax.parser import keep_parses

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    # Each edit re-reads the document's imports: each version of a file is parsed once.
    keep_parses(512)
    server = build_server()
    _warm_up()
    # The startup heap (grammar tables, catalog, schema) never becomes garbage: keep it out
    # of every later collection.
    gc.freeze()
    server.start_io()


def _warm_up() -> None:
    """Builds the parser and loads the catalog and rules before the first keystroke needs them."""
    import tempfile

    from spark_dsl.pipeline import run

    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "warm.spark"
        text = "deployment warm {\n  model = muse-spark-open\n  accelerator = b200\n}\n"
        run([spec], Path(folder), {spec: text})
