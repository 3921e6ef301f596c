"""What a path in the output folder holds, read without following symbolic links."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from msgspec import Struct

from spark_dsl.targets.manifest import Contents

# No file spark writes comes near this; a bigger one is not spark's and is not read.
_LARGEST_OUTPUT = 16 * 1024 * 1024


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileState(Struct, frozen=True):
    digest: str
    executable: bool


class FolderState(Struct, frozen=True):
    """`kind` is `absent`, `link`, `other` (a file, a device, ...) or `folder`.

    `files` are a folder's entries when all of them are regular files spark could have written;
    None when it holds anything else (a sub-folder, a link, a huge file) or cannot be read.
    `names` are all of a folder's entries.
    """

    kind: str
    files: dict[str, FileState] | None = None
    names: tuple[str, ...] = ()

    @property
    def contents(self) -> Contents | None:
        """The folder as the manifest would record it."""
        if self.files is None:
            return None
        return {name: f.digest for name, f in self.files.items()}


def inspect(path: str | Path) -> FolderState:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return FolderState("absent")
    if stat.S_ISLNK(info.st_mode):
        return FolderState("link")
    if not stat.S_ISDIR(info.st_mode):
        return FolderState("other")
    try:
        names = tuple(sorted(os.listdir(path)))
    except OSError:
        names = ()
    return FolderState("folder", _files(path), names)


def _files(folder: str | Path) -> dict[str, FileState] | None:
    found: dict[str, FileState] = {}
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode) or info.st_size > _LARGEST_OUTPUT:
                    return None
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
                with os.fdopen(fd, "rb") as handle:
                    data = handle.read(_LARGEST_OUTPUT + 1)
                found[entry.name] = FileState(digest(data), bool(info.st_mode & 0o111))
    except OSError:
        return None
    return dict(sorted(found.items()))


def differences(recorded: Contents, found: Contents) -> list[str]:
    """What changed in a folder since spark recorded it, file by file, for an error message."""
    notes = [f"{name} was added" for name in found if name not in recorded]
    notes += [f"{name} is gone" for name in recorded if name not in found]
    notes += [f"{name} differs" for name in recorded if name in found and found[name] != recorded[name]]
    return notes
