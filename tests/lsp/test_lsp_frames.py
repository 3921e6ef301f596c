"""The frame reader on streams split at every byte, as a pipe may deliver them."""

from __future__ import annotations

import io

import pytest

from spark_dsl.lsp.transport import Dropped, FrameReader

GOOD = b"Content-Length: 2\r\n\r\n{}"
STREAM = b"".join(
    [
        GOOD,
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 4\r\n\r\n[1,2",
        # A body over the limit (50) holding header-like text, then junk before a header:
        # one run of unreadable input, refused once.
        b"Content-Length: 99\r\n\r\n" + b"Content-Length: 1" * 5 + b'junk"}}',
        GOOD,
        b"\r\n",  # a stray blank line between frames
        GOOD,
        b"no header here\r\n\r\n",
        GOOD,
    ]
)


def _frames(data: bytes, chunk: int) -> list[bytes | Dropped]:
    stream = io.BytesIO(data)
    reader = FrameReader(lambda n: stream.read(min(n, chunk)), limit=50)
    out = []
    while (frame := reader.next()) is not None:
        out.append(frame)
    return out


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 16, 64 * 1024])
def test_every_split_of_the_stream_reads_the_same_frames(chunk: int) -> None:
    assert _frames(STREAM, chunk) == [
        b"{}",
        b"[1,2",
        Dropped("message of 99 bytes is over the 50 bytes limit", oversized=True),
        b"{}",
        b"{}",
        Dropped("unreadable message header line 'no header here'"),
        b"{}",
    ]


def test_a_stream_that_ends_inside_a_frame_ends_the_reading() -> None:
    assert _frames(b"Content-Length: 10\r\n\r\n{}", 4) == []
    assert _frames(b"Content-Length: 10\r\n", 4) == []
    assert _frames(b"Content-Length: 10000\r\n\r\n{}", 4) == [
        Dropped("message of 10000 bytes is over the 50 bytes limit", oversized=True)
    ]
