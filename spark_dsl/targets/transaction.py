"""Changes the deployment folders of an output folder all together, or not at all.

The order, and why each step leaves the folder consistent if the process dies right after it:

1. **Stage.** Every new folder is written in full beside its place, as `DIR/.spark-build-new-NAME`,
   as soon as it is rendered (`stage`, so a build holds one deployment's text at a time), then all
   of them are synced at once (see `_sync_staged`). Nothing the manifest describes has changed yet;
   a build that stops here removes them (`discard`).
2. **In-flight manifest.** The manifest is replaced (write a temporary file, sync, rename) by one
   that lists the new contents of every folder about to change *and*, under `previous`, the contents
   it holds now; folders about to be added or removed are listed too. From here on the manifest
   accepts every folder whether it holds its old or its new contents, or is absent.
3. **Swap.** Each changed folder is exchanged with its staged copy in one `renameat2(RENAME_EXCHANGE)`
   (Linux), so a folder is always wholly old or wholly new; new folders are renamed into place; a
   retired folder is renamed to `DIR/.spark-build-old-NAME`. Where the system cannot exchange, a
   folder is renamed to `.spark-build-old-NAME` and the staged one into place.
4. **Final manifest.** The manifest without `previous`, and without the retired folders. This
   rename is the commit point. (When every changed folder is new, the in-flight manifest already
   is the final one, and the synced swaps are the commit.)
5. **Clean up** the `.spark-build-*` entries (the old contents).

Any error before the commit point (a full disk, a permission, an interrupt) undoes the swaps done
so far in reverse, removes the staged folders and puts the previous manifest back, so a failed build
changes nothing. A build that was killed leaves `.spark-build-*` entries; the next build (holding the
lock, so they cannot be another build's) first puts back any `.spark-build-old-NAME` whose `NAME` is
missing while the manifest still lists it (a swap cut between its two renames, or a removal not yet
committed), then deletes the rest. The `.spark-build.lock` file is not one of them.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from collections.abc import Iterable, Iterator
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from spark_dsl.targets.manifest import MANIFEST, Text, is_deployment_name

PREFIX = ".spark-build-"
NEW = PREFIX + "new-"
OLD = PREFIX + "old-"
TEMP_MANIFEST = PREFIX + "manifest"

_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class Write(Struct, frozen=True):
    """A staged deployment folder to add (`replace` False) or to replace, and its file names.

    The files' contents are on disk in `DIR/.spark-build-new-NAME` already (`stage`), not here.
    """

    name: str
    files: tuple[str, ...]
    replace: bool


class Change(Struct):
    """Everything one build changes; `old_manifest` is None when there was no manifest."""

    writes: list[Write] = field(default_factory=list)
    removals: list[str] = field(default_factory=list)
    in_flight_manifest: Text = ""
    final_manifest: Text = ""
    old_manifest: str | None = None


@cache
def _libc_call(name: str) -> Any:
    """A function of the C library (looked up once: a build renames once per folder), or None."""
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None


def _renameat2(source: str | Path, target: str | Path, flags: int) -> bool | None:
    """Linux renameat2: True done, False refused (errno set), None where the system has no such call."""
    call = _libc_call("renameat2")
    if call is None:
        return None
    result = call(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), flags)
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (38, 22):  # ENOSYS, EINVAL: no such call, or a file system without the flag
        return None
    raise OSError(err, os.strerror(err), str(target))


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _syncfs(folder: Path) -> bool:
    """Linux syncfs: everything written to `folder`'s file system is on disk; False where there is no such call."""
    call = _libc_call("syncfs")
    if call is None:
        return False
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if call(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(folder))
    finally:
        os.close(fd)
    return True


def write_file(path: Path, data: bytes | Iterable[bytes], mode: int, sync: bool = True) -> None:
    """A new file with exactly `mode` (the umask does not apply to spark's outputs); synced unless
    the caller syncs it with others (`sync` False). `data` may come in pieces."""
    _write_at(None, os.fspath(path), data, mode, sync)


def _write_at(folder: int | None, name: str, data: bytes | Iterable[bytes], mode: int, sync: bool) -> None:
    """`write_file` of `name` in the open folder `folder` (None: `name` is a path)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o600, dir_fd=folder)
    try:
        for piece in (data,) if isinstance(data, bytes) else data:
            view = memoryview(piece)
            while view:
                view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def write_manifest(out_dir: Path, text: Text) -> None:
    temp = out_dir / TEMP_MANIFEST
    with suppress(FileNotFoundError):
        temp.unlink()
    try:
        write_file(temp, _utf8_pieces(text), 0o644)
        os.replace(temp, out_dir / MANIFEST)
    except BaseException:
        with suppress(OSError):
            temp.unlink()
        raise
    _sync(out_dir)


def _utf8_pieces(text: Text, size: int = 1 << 20) -> Iterator[bytes]:
    """The text as UTF-8 a megabyte at a time: a manifest of 10,000 folders (about 5 MB) is not
    held twice, nor (handed over in pieces) whole at all."""
    if isinstance(text, str):
        for start in range(0, len(text), size):
            yield text[start : start + size].encode("utf-8")
        return
    chunk: list[str] = []
    held = 0
    for piece in text:
        chunk.append(piece)
        held += len(piece)
        if held >= size:
            yield "".join(chunk).encode("utf-8")
            chunk, held = [], 0
    if chunk:
        yield "".join(chunk).encode("utf-8")


def _remove(path: Path) -> None:
    """Removes a `.spark-build-*` entry: a real folder with everything in it, anything else unlinked."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def leftovers(out_dir: Path) -> list[Path]:
    return sorted(out_dir / n for n in os.listdir(out_dir) if n.startswith(PREFIX))


def recover(out_dir: Path, listed: Iterable[str]) -> None:
    """Puts back what a killed build had moved aside, then removes its temporary entries."""
    listed = set(listed)
    for path in leftovers(out_dir):
        name = path.name.removeprefix(OLD)
        if (
            path.name.startswith(OLD)
            and is_deployment_name(name)
            and name in listed
            and path.is_dir()
            and not path.is_symlink()
            and not os.path.lexists(out_dir / name)
        ):
            path.rename(out_dir / name)
    for path in leftovers(out_dir):
        _remove(path)


def stage(out_dir: Path, name: str, files: dict[str, tuple[bytes, int]]) -> None:
    """Writes deployment `name`'s new folder, not yet synced (`apply` syncs all of them at once), so
    the caller can drop the text. Call it holding the output folder's lock, after `recover`."""
    _stage(out_dir, name, files)


def _stage(out_dir: Path, name: str, files: dict[str, tuple[bytes, int]]) -> None:
    # Each file is created in the open staged folder: a build stages thousands, and a Path made
    # and resolved for each was most of staging's time in Python (the kernel's file creation is
    # the rest, and the larger part).
    folder = os.path.join(out_dir, f"{NEW}{name}")
    os.mkdir(folder, 0o700)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for file_name, (data, mode) in files.items():
            _write_at(fd, file_name, data, mode, sync=False)
        os.fchmod(fd, 0o755)
    finally:
        os.close(fd)


def discard(out_dir: Path) -> None:
    """Removes every staged folder: the build stopped before `apply` (a refusal, a renderer that
    failed, Ctrl-C). Best effort: what is left is swept by the next build's `recover`."""
    with suppress(OSError):
        for path in leftovers(out_dir):
            if path.name.startswith(NEW):
                _remove(path)


def _sync_staged(out_dir: Path, writes: list[Write]) -> None:
    """Every staged file and folder on disk before the in-flight manifest names them.

    One `syncfs` of the output folder's file system does it in one journal commit; a sync per
    file and folder cost a commit each (about 3 ms on ext4), most of a build of many specs.
    Where the system has no `syncfs`, each file and folder is synced on its own.
    """
    if _syncfs(out_dir):
        return
    for write in writes:
        folder = out_dir / f"{NEW}{write.name}"
        for file_name in write.files:
            fd = os.open(folder / file_name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _sync(folder)
    _sync(out_dir)


def _swap_in(out_dir: Path, write: Write) -> None:
    # Paths as text: a build swaps in thousands of folders, and two Paths made for each were most
    # of this step's time in Python.
    final, staged = os.path.join(out_dir, write.name), os.path.join(out_dir, f"{NEW}{write.name}")
    if not write.replace:
        if _renameat2(staged, final, _RENAME_NOREPLACE) is None:
            if os.path.lexists(final):
                raise FileExistsError(17, "appeared during the build", final)
            os.rename(staged, final)
        return
    if _renameat2(staged, final, _RENAME_EXCHANGE) is None:
        os.rename(final, os.path.join(out_dir, f"{OLD}{write.name}"))
        os.rename(staged, final)


def _swap_out(out_dir: Path, write: Write) -> None:
    """Undoes `_swap_in`."""
    final, staged, old = out_dir / write.name, out_dir / f"{NEW}{write.name}", out_dir / f"{OLD}{write.name}"
    if not write.replace:
        final.rename(staged)
    elif old.exists():
        final.rename(staged)
        old.rename(final)
    elif _renameat2(staged, final, _RENAME_EXCHANGE) is None:  # pragma: no cover - it exchanged before
        raise OSError("cannot exchange the folders back")


def _retire(out_dir: Path, name: str) -> None:
    """Moves a retired folder aside; it is deleted once the final manifest no longer lists it."""
    (out_dir / name).rename(out_dir / f"{OLD}{name}")


def apply(out_dir: Path, change: Change) -> None:
    """Syncs the staged folders of `change`, swaps them in and commits; on any error undoes it
    (the staged folders removed) and re-raises."""
    swapped: list[Write] = []
    removed: list[str] = []
    in_flight = False
    try:
        _sync_staged(out_dir, change.writes)
        write_manifest(out_dir, change.in_flight_manifest)
        in_flight = True
        for write in change.writes:
            _swap_in(out_dir, write)
            swapped.append(write)
        for name in change.removals:
            _retire(out_dir, name)
            removed.append(name)
        _sync(out_dir)
        if change.final_manifest != change.in_flight_manifest:  # equal when every folder is new
            write_manifest(out_dir, change.final_manifest)
    except BaseException:
        _undo(out_dir, change, swapped, removed, in_flight)
        raise
    with suppress(OSError):  # the change is committed; what is left is swept by the next build
        for path in leftovers(out_dir):
            if path.name != TEMP_MANIFEST:
                _remove(path)


def _undo(out_dir: Path, change: Change, swapped: list[Write], removed: list[str], in_flight: bool) -> None:
    """Best effort: every folder back as it was, then the previous manifest.

    If a folder cannot be put back, the in-flight manifest stays: it still describes both states.
    """
    whole = True
    for name in reversed(removed):
        try:
            (out_dir / f"{OLD}{name}").rename(out_dir / name)
        except OSError:
            whole = False
    for write in reversed(swapped):
        try:
            _swap_out(out_dir, write)
        except OSError:
            whole = False
    for path in leftovers(out_dir):
        if path.name.startswith(NEW) or path.name == TEMP_MANIFEST:
            with suppress(OSError):
                _remove(path)
    if not (whole and in_flight):
        return
    with suppress(OSError):
        if change.old_manifest is None:
            (out_dir / MANIFEST).unlink()
        else:
            write_manifest(out_dir, change.old_manifest)
