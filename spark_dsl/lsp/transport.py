"""Reads the client's frames (`Content-Length` header, body) with limits, and serves them.

pygls' own reader trusts the client: a huge `Content-Length` allocates that many bytes
(MemoryError, the server dies), and a malformed header leaves the stream out of step
for good. This reader caps the header and the body, never allocates more than it has
read, and after a bad frame skips to the next `Content-Length` header, so one broken
message costs that message only.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Protocol

from lsprotocol import types
from msgspec import Struct

MEBIBYTE = 1024 * 1024
# A body larger than this is dropped unread. A spec is a few KiB; the limit leaves room
# for any document an editor could reasonably open, with JSON escaping.
MESSAGE_LIMIT = 32 * MEBIBYTE
# Real headers are two short lines; anything longer is not a header.
HEADER_LIMIT = 8 * 1024
CHUNK = 64 * 1024

_END = b"\r\n\r\n"
_LENGTH_NAME = b"Content-Length:"
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*?)[ \t]*")
# A size with more digits than this is over any limit (and int() refuses thousands of digits).
_MAX_DIGITS = 18


class Dropped(Struct, frozen=True):
    """A frame the reader refused; `oversized` when its header was fine but its size not."""

    reason: str
    oversized: bool = False


Frame = bytes | Dropped


class FrameReader:
    """Splits a byte stream into message bodies, holding at most one body and a chunk."""

    def __init__(self, read_chunk: Callable[[int], bytes], limit: int = MESSAGE_LIMIT) -> None:
        # read_chunk(n) returns at least one byte unless the stream has ended (BufferedReader.read1).
        self._read_chunk = read_chunk
        self._limit = limit
        self._buffer = bytearray()
        self._skipping = False  # after a bad frame: discard input up to the next header
        self._refused = False  # a bad frame was refused and no good one has followed yet

    def next(self) -> Frame | None:
        """The next body or refused frame; None once the stream has ended.

        A run of unreadable input is refused once: the bad frames found while skipping
        to a good one (header-like text inside a skipped body, say) are dropped quietly.
        """
        while True:
            frame = self._next_frame()
            if not isinstance(frame, Dropped):
                self._refused = False
                return frame
            if not self._refused:
                self._refused = True
                return frame

    def _next_frame(self) -> Frame | None:
        if self._skipping and not self._skip_to_header():
            return None
        while True:
            while self._buffer.startswith(b"\r\n"):  # stray blank lines between frames are harmless
                del self._buffer[:2]
            end = self._buffer.find(_END, 0, HEADER_LIMIT + len(_END))
            if end >= 0:
                break
            if len(self._buffer) >= HEADER_LIMIT + len(_END):
                self._resync(drop=1)
                return Dropped(f"message header longer than {HEADER_LIMIT} bytes")
            if not self._fill():
                return None
        header = bytes(self._buffer[:end])
        length = self._length(header)
        if isinstance(length, Dropped):
            if length.oversized:  # a sound header: its body follows, skip it
                self._resync(drop=end + len(_END))
            else:
                # Skip this frame's own Content-Length line; one written after junk on the
                # same line may be the next real frame, so the search restarts past it.
                own = _own_length_line(header)
                self._resync(drop=1 if own is None else own + 1)
            return length
        del self._buffer[: end + len(_END)]
        while len(self._buffer) < length:
            if not self._fill():
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    def _length(self, header: bytes) -> int | Dropped:
        """The Content-Length a header block declares, or why the frame is refused."""
        limit = f"the {_size(self._limit)} limit"
        length = None
        for line in header.split(b"\r\n"):
            field = _HEADER_LINE.fullmatch(line)
            if field is None:
                return Dropped(f"unreadable message header line {_shown(line)}")
            if field[1].lower() != b"content-length":
                continue  # Content-Type is the only other header, and UTF-8 the only charset
            value = field[2]
            if not value.isdigit() or not value.isascii():
                return Dropped(f"message header has a Content-Length that is not a number: {_shown(value)}")
            if len(value.lstrip(b"0")) > _MAX_DIGITS:
                return Dropped(f"message of a {len(value)}-digit size is over {limit}", oversized=True)
            length = int(value)
        if length is None:
            return Dropped("message header has no Content-Length")
        if length > self._limit:
            return Dropped(f"message of {length} bytes is over {limit}", oversized=True)
        return length

    def _resync(self, drop: int) -> None:
        del self._buffer[:drop]
        self._skipping = True

    def _skip_to_header(self) -> bool:
        """Discards input up to the next `Content-Length:`; False if the stream ends first."""
        keep = len(_LENGTH_NAME) - 1  # a name split across two chunks
        while (at := self._buffer.find(_LENGTH_NAME)) < 0:
            del self._buffer[:-keep]
            if not self._fill():
                return False
        del self._buffer[:at]
        self._skipping = False
        return True

    def _fill(self) -> bool:
        chunk = self._read_chunk(CHUNK)
        self._buffer += chunk
        return bool(chunk)


def _own_length_line(header: bytes) -> int | None:
    """Where the header's own Content-Length line starts, if one starts a line."""
    if header.startswith(_LENGTH_NAME):
        return 0
    at = header.find(b"\r\n" + _LENGTH_NAME)
    return None if at < 0 else at + 2


def _size(limit: int) -> str:
    return f"{limit // MEBIBYTE} MiB" if limit % MEBIBYTE == 0 else f"{limit} bytes"


def _shown(raw: bytes) -> str:
    """A quoted excerpt of bytes the client sent, safe to echo in a message or a log."""
    text = raw[:60].decode("ascii", "backslashreplace")
    return repr(text + ("..." if len(raw) > 60 else ""))


class Receiver(Protocol):
    def receive(self, body: bytes) -> None: ...

    def refuse(self, msg_id: int | str | None, code: int, message: str) -> None: ...


async def serve_frames(reader: FrameReader, receiver: Receiver) -> None:
    """Hands each body to the receiver until the client closes its end."""
    loop = asyncio.get_running_loop()
    while True:
        # Blocking reads happen off the event loop, one call per frame.
        frame = await loop.run_in_executor(None, reader.next)
        if frame is None:
            return
        if isinstance(frame, Dropped):
            # No id can be read from a frame that was not read: JSON-RPC answers those with null.
            code = types.ErrorCodes.InvalidRequest if frame.oversized else types.ErrorCodes.ParseError
            receiver.refuse(None, code, frame.reason)
        else:
            receiver.receive(frame)
