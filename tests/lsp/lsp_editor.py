"""Opens and edits documents as an editor does over pytest-lsp; applies edits as a client does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient


class Editor:
    """Opens and edits documents the way an editor does, and waits for their diagnostics."""

    def __init__(self, client: LanguageClient, root: Path) -> None:
        self.client = client
        self.root = root
        self.versions: dict[str, int] = {}

    def uri(self, relative: str) -> str:
        return (self.root / relative).as_uri()

    async def _diagnostics(self, uri: str) -> list[types.Diagnostic]:
        async with asyncio.timeout(30):
            while uri not in self.client.diagnostics:
                await self.client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return list(self.client.diagnostics[uri])

    async def open(self, relative: str, text: str | None = None) -> list[types.Diagnostic]:
        uri = self.uri(relative)
        if text is None:
            text = (self.root / relative).read_text(encoding="utf-8")
        self.versions[uri] = 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="spark", version=1, text=text)
            )
        )
        return await self._diagnostics(uri)

    async def replace(self, relative: str, text: str) -> list[types.Diagnostic]:
        """Sends the whole new text as one change, as editors do for a paste or a fix."""
        uri = self.uri(relative)
        self.versions[uri] += 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self._diagnostics(uri)

    async def edit(self, relative: str, edits: list[types.TextEdit]) -> list[types.Diagnostic]:
        """Sends range edits, as editors do while typing."""
        uri = self.uri(relative)
        self.versions[uri] += 1
        self.client.diagnostics.pop(uri, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits],
            )
        )
        return await self._diagnostics(uri)

    async def close_all(self) -> None:
        """Closes every document opened here, and returns once the server has read the closes
        (it answers in order: a request sent after them is answered after they are done)."""
        for uri in self.versions:
            self.client.text_document_did_close(
                types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
        settle = types.TextDocumentIdentifier(uri="untitled:settle")  # no test opens it: answered null
        async with asyncio.timeout(30):
            await self.client.text_document_hover_async(types.HoverParams(text_document=settle, position=at(0, 0)))


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Applies LSP edits (UTF-16 positions) to a text, last first, as a client would."""

    def offset(position: types.Position) -> int:
        lines = text.split("\n")
        before = sum(len(line) + 1 for line in lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units = 0
        for count, ch in enumerate(line):
            if units >= position.character:
                return before + count
            units += 2 if ord(ch) > 0xFFFF else 1
        return before + len(line)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)
