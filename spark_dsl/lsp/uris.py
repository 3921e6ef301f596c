"""URIs and names from the client, turned into paths and messages without ever raising.

A client may send any JSON string as a URI or a command name: a lone surrogate
(`\\udcff`, which UTF-8 cannot encode), a netloc urllib refuses (`file://[x/`),
control characters, 100 KB of text. pygls' own helpers raise on the first two, and
its messages quote the rest whole into the log.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from pygls.uris import to_fs_path, uri_scheme

from spark_dsl.files import printable

# How much of a client's string a message quotes: enough to recognise it, never a flood.
SHOWN_CHARS = 80


def shown(value: str) -> str:
    """A client's string as a message quotes it: escaped (spark_dsl.files.printable), cut short."""
    if len(value) <= SHOWN_CHARS:
        return printable(value)
    return f"{printable(value[:SHOWN_CHARS])}... ({len(value)} characters)"


def parses(uri: str) -> bool:
    """Whether urllib can split the URI at all (`file://[x/a.spark` is an invalid IPv6 host)."""
    try:
        uri_scheme(uri)
    except ValueError:
        return False
    return True


def uri_path(uri: str) -> str | None:
    """The file system path of a `file:` URI; None for another scheme or a URI that does not parse."""
    try:
        return to_fs_path(uri) if uri.startswith("file:") else None
    except ValueError:
        return None


def file_uri(path: Path | str) -> str:
    """The `file:` URI of a path, as pygls' from_fs_path writes it, for any name the file
    system holds: a name that is not UTF-8 (read as surrogate escapes) is percent-encoded
    byte for byte, where from_fs_path raises UnicodeEncodeError."""
    try:
        raw = os.fsencode(path)
    except UnicodeEncodeError:  # a lone surrogate no file name decodes to: keep it encodable
        raw = str(path).encode("utf-8", "surrogatepass")
    return "file://" + quote(raw)


def folder_refusal(uri: str) -> str | None:
    """Why a workspace folder the client names cannot be one, or None if it can.

    Only a `file:` URI is looked at on disk: the server works from the first folder, so a
    file or a missing path there would fail at os.chdir. Another scheme is left to pygls.
    """
    if not parses(uri):
        return "not a URI"
    if not uri.startswith("file:"):
        return None
    fs_path = uri_path(uri)
    if not fs_path or not os.path.isdir(fs_path):  # isdir: False for a NUL or a lone surrogate too
        return "not a folder"
    return None
