"""`manifest.json`: which deployment folders of an output folder spark wrote, from which spec, holding what.

Version 2 records, per deployment, the spec it came from (relative to the output folder, so it names
the same file whatever `--root` or working folder a later build uses) and each file's SHA-256, so a
build can tell its own untouched folders from folders a person made or edited. While a build swaps
folders, an entry also carries `previous`: the contents the folder held before, so the manifest
matches the disk whichever of the two states a killed build left.

The manifest is committed in repositories and edited by pull requests: it is input, validated whole
before anything is touched, and a malformed one is an error, never a reason to delete.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring as _encode_string
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from spark_dsl.loader import DEPLOYMENT_NAME, MAX_DEPLOYMENT_NAME
from spark_dsl.structured import TooDeep, load_json

MANIFEST = "manifest.json"
VERSION = 2
_MAX_BYTES = 16 * 1024 * 1024
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")

# A folder's contents as the manifest records them: file name -> SHA-256 (hex), in target order.
Contents = dict[str, str]


class ManifestError(Exception):
    """The manifest cannot be trusted: unreadable, not JSON, the wrong shape, or a symbolic link."""


def is_deployment_name(name: object) -> bool:
    """A plain folder name by the deployment-name rule: no separators, no dots, not empty."""
    return isinstance(name, str) and len(name) <= MAX_DEPLOYMENT_NAME and DEPLOYMENT_NAME.fullmatch(name) is not None


class Entry(Struct, frozen=True):
    """One deployment folder spark wrote.

    `source` is the spec relative to the output folder (None: unknown, read from a version-1 manifest,
    whose paths were relative to a root it did not record). `files` is None for a version-1 entry whose
    folder no longer holds the files it listed: spark cannot vouch for its contents.
    """

    name: str
    source: str | None
    files: Contents | None
    previous: Contents | None = None

    def states(self) -> list[Contents]:
        """Every content the folder may hold and still be spark's own."""
        return [s for s in (self.files, self.previous) if s is not None]


class Manifest(Struct):
    """What an output folder's manifest says; `text` is its exact content (None: there is none)."""

    entries: dict[str, Entry] = field(default_factory=dict)
    text: str | None = None


class Pieces:
    """The manifest's text of `entries`, made entry by entry each time it is read and never held
    whole: the writer (spark_dsl.targets.transaction) writes it a megabyte at a time, so a build
    of 10,000 folders does not hold their manifest (about 5 MB, in some 10,000 strings) at its end,
    when its memory peaks."""

    __slots__ = ("entries",)

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = sorted(entries, key=lambda e: e.name)

    def __iter__(self) -> Iterator[str]:
        head = f'{{\n  "generator": "spark build",\n  "version": {VERSION},\n  "deployments": '
        if not self.entries:
            yield _escape_surrogates(head + "[]\n}\n")
            return
        yield head + "[\n"
        for i, entry in enumerate(self.entries):
            yield (",\n" if i else "") + _escape_surrogates(_entry_text(entry))
        yield "\n  ]\n}\n"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pieces) and self.entries == other.entries

    __hash__ = None  # type: ignore[assignment]  # compared by value, never a key

    def __str__(self) -> str:
        return "".join(self)


# The manifest's text as the writer hands it on: the whole text (as read back), or its pieces.
Text = str | Pieces


def render(entries: list[Entry]) -> str:
    """The manifest's text: entries sorted by name, stable bytes for equal inputs.

    The text is `json.dumps(document, indent=2, ensure_ascii=False)` of the version-2 document
    (tests/targets/test_manifest_text.py holds that reference), written here entry by entry:
    `json.dumps` with an indent runs the pure-Python encoder, whose pieces for 10,000 entries
    (about 7 million small strings) were most of a build's peak memory and a good part of its
    writing time.
    """
    return str(Pieces(entries))


_SURROGATE = re.compile("[\udc80-\udcff]")


def _escape_surrogates(text: str) -> str:
    # A spec name that is not UTF-8 carries its bytes as lone surrogates (U+DC80..U+DCFF): written
    # as JSON escapes, the manifest stays UTF-8 and reads back to the same path. (Searched first:
    # a copy of the whole text only when there is one.)
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _string(value: str | None) -> str:
    return "null" if value is None else _encode_string(value)


def _contents_text(contents: Contents | None) -> str:
    """A `files` or `previous` object as the encoder indents it at its depth (8 spaces)."""
    if contents is None:
        return "null"
    if not contents:
        return "{}"
    items = ",\n".join(f"        {_encode_string(f)}: {_encode_string(d)}" for f, d in contents.items())
    return f"{{\n{items}\n      }}"


def _entry_text(entry: Entry) -> str:
    lines = [
        f'      "name": {_encode_string(entry.name)}',
        f'      "source": {_string(entry.source)}',
        f'      "files": {_contents_text(entry.files)}',
    ]
    if entry.previous is not None:
        lines.append(f'      "previous": {_contents_text(entry.previous)}')
    return "    {\n" + ",\n".join(lines) + "\n    }"


def read(out_dir: Path, legacy_contents: Callable[[str], Contents | None]) -> Manifest:
    """The manifest of `out_dir`, validated whole; raises ManifestError.

    `legacy_contents(name)` gives a folder's current contents (or None) for upgrading a version-1
    entry, which listed file names but no hashes.
    """
    path = out_dir / MANIFEST
    text = _read_text(path)
    if text is None:
        return Manifest()
    doc = load_json(text)  # with a nesting limit: a manifest of 100,000 `[` raised RecursionError
    if isinstance(doc, TooDeep):
        raise ManifestError(f"cannot be read: {doc.reason()}")
    if isinstance(doc, ValueError):
        raise ManifestError(f"is not valid JSON ({doc})")
    if not isinstance(doc, dict):
        raise ManifestError("is not a JSON object")
    version = doc.get("version")
    if version not in (1, VERSION) or isinstance(version, bool):
        raise ManifestError(f"has version {json.dumps(version)}; this spark reads versions 1 and {VERSION}")
    deployments = doc.get("deployments")
    if not isinstance(deployments, list):
        raise ManifestError('has no "deployments" list')
    entries: dict[str, Entry] = {}
    for number, raw in enumerate(deployments, start=1):
        entry = _entry(raw, number) if version == VERSION else _legacy_entry(raw, number, legacy_contents)
        if entry.name in entries:
            raise ManifestError(f"lists deployment {entry.name!r} twice")
        entries[entry.name] = entry
    return Manifest(entries, text)


def _read_text(path: Path) -> str | None:
    """The file's text, never through a symbolic link, never anything but a regular file."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ManifestError(f"cannot be read ({err.strerror or err})") from None
    if stat.S_ISLNK(info.st_mode):
        raise ManifestError(f"is a symbolic link (to {os.readlink(path)!r}); spark reads only a regular file")
    if not stat.S_ISREG(info.st_mode):
        raise ManifestError("is not a regular file")
    if info.st_size > _MAX_BYTES:
        raise ManifestError(f"is {info.st_size} bytes, more than any manifest spark writes")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except OSError as err:
        raise ManifestError(f"cannot be read ({err.strerror or err})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ManifestError(f"is not valid UTF-8 (byte {err.start})") from None


def _where(number: int, name: object) -> str:
    return f"entry {number}" + (f" ({name!r})" if isinstance(name, str) else "")


def _name(raw: dict[str, Any], number: int) -> str:
    name = raw.get("name")
    if not is_deployment_name(name):
        raise ManifestError(
            f"entry {number} has name {json.dumps(name, ensure_ascii=True)}, which is not a deployment name "
            f"(lowercase letters, digits and inner '-', at most {MAX_DEPLOYMENT_NAME} characters)"
        )
    assert isinstance(name, str)
    return name


def _source(raw: dict[str, Any], number: int, name: str) -> str | None:
    source = raw.get("source")
    if source is None:
        return None
    if not isinstance(source, str) or not source or "\0" in source or source.startswith("/"):
        raise ManifestError(f"{_where(number, name)} has source {json.dumps(source)}, not a relative path")
    return source


def _file_name(file: object, number: int, name: str) -> str:
    if not isinstance(file, str) or not _FILE_NAME.fullmatch(file):
        raise ManifestError(f"{_where(number, name)} lists file {json.dumps(file, ensure_ascii=True)}, not a file name")
    return file


def _contents(value: object, number: int, name: str, key: str) -> Contents:
    if not isinstance(value, dict):
        raise ManifestError(f'{_where(number, name)} has "{key}" that is not an object of file hashes')
    contents: Contents = {}
    for file, digest in value.items():
        file = _file_name(file, number, name)
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise ManifestError(f"{_where(number, name)} has hash {json.dumps(digest)} for {file!r}, not a SHA-256")
        contents[file] = digest
    return contents


def _entry(raw: object, number: int) -> Entry:
    if not isinstance(raw, dict):
        raise ManifestError(f"entry {number} is not an object")
    name = _name(raw, number)
    previous = raw.get("previous")
    return Entry(
        name,
        _source(raw, number, name),
        _contents(raw.get("files"), number, name, "files"),
        None if previous is None else _contents(previous, number, name, "previous"),
    )


def _legacy_entry(raw: object, number: int, legacy_contents: Callable[[str], Contents | None]) -> Entry:
    """A version-1 entry: file names only, and a source relative to a root it did not record."""
    if not isinstance(raw, dict):
        raise ManifestError(f"entry {number} is not an object")
    name = _name(raw, number)
    _source(raw, number, name)  # validated, then dropped: it cannot be resolved reliably
    files = raw.get("files")
    if not isinstance(files, list):
        raise ManifestError(f'{_where(number, name)} has "files" that is not a list of file names')
    listed = [_file_name(f, number, name) for f in files]
    found = legacy_contents(name)
    if found is not None and sorted(found) == sorted(listed) and len(set(listed)) == len(listed):
        return Entry(name, None, {f: found[f] for f in listed})
    return Entry(name, None, None)
