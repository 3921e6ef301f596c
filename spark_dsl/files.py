"""Reads spec files without ever blocking, reading without bound, or raising, and names them printably.

A spec path can name anything: a FIFO (opening it for reading waits for a writer
forever), a device (`/dev/zero` never ends), a directory, a symlink loop, a name too
long for the file system, a NUL byte (from a `\\u{0}` in an import), a file the user
may not read, or a file of gigabytes. Every one of these becomes an `Unreadable`
with a reason in words; the loader turns it into a located SPK120 diagnostic and the
command line into a usage error. The file is inspected with `stat` before it is
opened, so a device is never opened at all, and opened with O_NONBLOCK, so a FIFO
swapped in between the two never blocks.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from msgspec import Struct

MAX_SPEC_BYTES = 10 * 1024 * 1024
MAX_SPEC_SIZE = "10 MiB"
_CHUNK = 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class Unreadable(Struct, frozen=True):
    """Why a path cannot be read as a spec, worded to follow "cannot read NAME: ", and the way out."""

    reason: str
    help: str = "name a regular `.spark` file that the user running spark may read"


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_regular(mode: int) -> Unreadable | None:
    """None for a regular file, else what the path is instead."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "a special file")
    return Unreadable(
        f"it is {kind}, not a regular file", "name a regular `.spark` file; specs are never read from pipes or devices"
    )


def os_problem(err: OSError | ValueError | RuntimeError) -> Unreadable:
    """An operating-system failure in words; ValueError is Python's refusal of a NUL in a path,
    or (UnicodeEncodeError) of a lone surrogate, which an editor's URI can carry."""
    if isinstance(err, UnicodeEncodeError):
        return Unreadable(
            "its path holds a lone surrogate, which no file name can hold", "name the file by a path in valid UTF-8"
        )
    if isinstance(err, ValueError):
        return Unreadable("its path contains a NUL character", "remove the `\\u{0}` from the path")
    number = errno.ELOOP if isinstance(err, RuntimeError) else err.errno  # resolve() on a loop, Python < 3.13
    known = _REASONS.get(number or 0)
    if known is not None:
        return Unreadable(*known)
    assert isinstance(err, OSError)
    return Unreadable((err.strerror or str(err)).lower())


_REASONS = {
    errno.ENAMETOOLONG: ("its name is too long for the file system", "shorten the file's name or path"),
    errno.ELOOP: (
        "too many levels of symbolic links (a symlink loop)",
        "point the symbolic link at the file it stands for",
    ),
    errno.EACCES: ("permission denied", "let the user running spark read the file (e.g. `chmod a+r FILE`)"),
    errno.EPERM: ("permission denied", "let the user running spark read the file (e.g. `chmod a+r FILE`)"),
    errno.EISDIR: ("it is a directory, not a regular file", "name a `.spark` file, not a folder"),
    errno.ENOENT: ("it does not exist", "check the path; it is relative to the file or folder it appears in"),
    errno.ENOTDIR: ("a folder on its path is a file", "check the path; a folder on it is a file"),
}


def missing(path: Path) -> bool:
    """Whether nothing at all is at `path` (a dangling symlink counts as nothing)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False  # something is there, unreadable: reading it says why
    return False


def inspect(path: Path) -> os.stat_result | Unreadable:
    """The path's status, following symlinks, without opening it."""
    try:
        return os.stat(path)
    except (OSError, ValueError) as err:
        return os_problem(err)


def resolve(path: Path) -> Path | Unreadable:
    """`path.resolve()`, with loops, NULs and over-long names as reasons instead of exceptions."""
    try:
        return path.resolve()
    except (OSError, ValueError, RuntimeError) as err:
        return os_problem(err)


def resolve_in(real_folder: Path, name: str) -> Path | None:
    """`(folder / name).resolve()` given the folder already resolved: one `lstat` of the name
    where a full resolve walks every folder above it with one each (a run resolves every spec).
    None where the full resolve must decide: the name is a symlink, or cannot be looked at."""
    if not name or name == "..":
        return None
    candidate = real_folder / name
    try:
        mode = os.lstat(candidate).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISLNK(mode) else candidate


# Every file a command reads through `read_spec`, by device and inode, while a command runs: the
# write gate (spark_dsl.write_gate) refuses an output that is one of them, however it is named
# (a symbolic link, a hard link, `./a/../a.spark`). None outside a command (the language server).
_read_log: dict[tuple[int, int], str] | None = None


def start_read_log() -> dict[tuple[int, int], str]:
    """Starts recording the files read from here on (each command does, before it reads anything)."""
    global _read_log
    _read_log = {}
    return _read_log


def stop_read_log() -> None:
    global _read_log
    _read_log = None


def record_read(path: Path, status: os.stat_result) -> None:
    """Notes that `path` (found as `status`) is an input of the running command."""
    if _read_log is not None:
        _read_log.setdefault((status.st_dev, status.st_ino), os.fspath(path))


def read_log_entry(status: os.stat_result) -> str | None:
    """The path under which this command read the file `status` describes, if it did."""
    return None if _read_log is None else _read_log.get((status.st_dev, status.st_ino))


def read_paths() -> list[str]:
    """Every file this command has read so far, by the path it was read under."""
    return [] if _read_log is None else list(_read_log.values())


def read_spec(path: Path, limit: int = MAX_SPEC_BYTES, limit_text: str = MAX_SPEC_SIZE) -> bytes | Unreadable:
    """The bytes of a regular file of at most `limit` bytes; never blocks, never raises.

    This is the one reader of every user-named file: specs, imports, configuration files and
    model-import files. Each file it looks at is recorded as an input of the command (`record_read`)."""
    status = inspect(path)
    if isinstance(status, Unreadable):
        return status
    if stat.S_ISREG(status.st_mode):
        record_read(path, status)
    refused = not_regular(status.st_mode) or _too_large(status.st_size, limit, limit_text)
    if refused is not None:
        return refused
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (OSError, ValueError) as err:
        return os_problem(err)
    try:
        # Checked again on the open file: the path may have been swapped since the stat.
        status = os.fstat(fd)
        refused = not_regular(status.st_mode) or _too_large(status.st_size, limit, limit_text)
        if refused is not None:
            return refused
        record_read(path, status)
        chunks: list[bytes] = []
        total = 0
        # First what the file holds and a byte more, then a megabyte at a time: `os.read` makes
        # its whole buffer before reading, and a megabyte for a spec of 500 bytes was 16 of the
        # 20 microseconds its read took (16 ms of a check of 1,000 specs).
        want = min(_CHUNK, status.st_size + 1) if status.st_size > 0 else _CHUNK
        while total <= limit:  # a file that grows while read stops at the limit too
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            # The end, as the open file's size says: no read more to be told so. A file whose
            # size says nothing (0: /proc's) is read until a read comes back empty.
            if len(chunk) < want and total >= status.st_size > 0:
                break
            want = _CHUNK
        return _too_large(total, limit, limit_text) or b"".join(chunks)
    except OSError as err:
        return os_problem(err)
    finally:
        os.close(fd)


def read_stream(read: object) -> bytes | Unreadable:
    """Up to MAX_SPEC_BYTES from a binary stream's `read` (stdin for `spark fmt -`)."""
    assert callable(read)
    data = read(MAX_SPEC_BYTES + 1)
    assert isinstance(data, bytes)
    return _too_large(len(data)) or data


def _too_large(size: int, limit: int = MAX_SPEC_BYTES, limit_text: str = MAX_SPEC_SIZE) -> Unreadable | None:
    if size <= limit:
        return None
    return Unreadable(
        f"it is larger than {limit_text} ({size:,} bytes or more)",
        f"split it into files of at most {limit_text} that import each other"
        if limit == MAX_SPEC_BYTES
        else f"name a file of at most {limit_text}",
    )


class Skipped(Struct, frozen=True):
    """A `.spark` entry a folder scan left out, and why."""

    path: Path
    reason: str


def scan(folder: Path, root: Path, prune: Callable[[Path], bool] | None = None) -> tuple[list[Path], list[Skipped]]:
    """Every regular `*.spark` file below `folder`, sorted, and the entries left out.

    Symlinked folders are not entered (no loops, no escapes); a symlinked `.spark`
    file is kept only when it resolves to a regular file inside `root`, which must be
    resolved already. FIFOs, sockets and devices named `*.spark` are left out unread.
    Folders for which `prune` is true (a project's `exclude`) are not entered.
    """
    found: list[Path] = []
    skipped: list[Skipped] = []
    for entry in _walk(folder, prune, skipped):
        path = Path(entry.path)
        if not entry.name.endswith(".spark"):
            continue
        if entry.is_symlink():
            target = resolve(path)
            if isinstance(target, Unreadable):
                skipped.append(Skipped(path, target.reason))
                continue
            if not target.is_relative_to(root):
                skipped.append(Skipped(path, "it resolves outside the project root"))
                continue
        status = inspect(path)
        problem = status if isinstance(status, Unreadable) else not_regular(status.st_mode)
        if problem is None:
            found.append(path)
        elif not (isinstance(status, os.stat_result) and stat.S_ISDIR(status.st_mode)):
            skipped.append(Skipped(path, problem.reason))  # a folder named `x.spark` is just a folder
    return sorted(found), sorted(skipped, key=lambda s: s.path)


def _walk(folder: Path, prune: Callable[[Path], bool] | None, skipped: list[Skipped]) -> Iterator[os.DirEntry[str]]:
    """Entries below `folder`, depth first, entering only real (not symlinked) folders that
    `prune` does not refuse. A folder that cannot be listed is in `skipped`: specs in it would
    otherwise go unchecked without a word."""
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                listed = list(entries)
        except OSError as err:
            skipped.append(Skipped(current, f"the folder cannot be read: {os_problem(err).reason}"))
            continue
        for entry in listed:
            yield entry
            try:
                if entry.is_dir(follow_symlinks=False) and not (prune and prune(Path(entry.path))):
                    pending.append(Path(entry.path))
            except OSError:
                continue


# Characters that would let a file name forge output: controls (a newline starts a new
# diagnostic line), format characters (bidirectional overrides reorder what is shown),
# line and paragraph separators, and lone surrogates (bytes that are not UTF-8, which
# Python carries as U+DC80..U+DCFF and which no UTF-8 writer accepts).
_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


class NamedPathError(Exception):
    """A path named on the command line that cannot be used; each command reports it as a usage error."""


def named(raw: str) -> os.stat_result:
    """The status of a path named on the command line (links followed), or NamedPathError saying why not."""
    path = Path(raw)
    status = inspect(path)
    if isinstance(status, Unreadable):
        if missing(path):
            raise NamedPathError(f"no such file or directory: {printable(raw)}")
        raise NamedPathError(f"cannot read {printable(raw)}: {status.reason}")
    return status


def named_real(raw: str) -> Path:
    """The resolved path of a path named on the command line, or NamedPathError saying why not."""
    resolved = resolve(Path(raw))
    if isinstance(resolved, Unreadable):
        raise NamedPathError(f"cannot read {printable(raw)}: {resolved.reason}")
    return resolved


def require_regular(raw: str, status: os.stat_result) -> None:
    """NamedPathError unless a path named on the command line (not a folder) is a regular file."""
    problem = not_regular(status.st_mode)
    if problem is not None:
        raise NamedPathError(f"{printable(raw)} {problem.reason.removeprefix('it ')}")


def scanned_or_error(raw: str, kept: list[Path], left_out: list[Skipped], skipped: list[str] | None) -> list[Path]:
    """The files a scan of the folder named `raw` kept; what it left out goes to `skipped`.

    A scan that kept nothing is a NamedPathError that says why, so "holds no .spark file" is
    never said of a folder whose specs were only skipped.
    """
    if skipped is not None:
        skipped.extend(f"skipped {display(s.path)}: {s.reason}" for s in left_out)
    if not kept and left_out:
        why = "; ".join(f"{display(s.path)}: {s.reason}" for s in left_out[:3])
        more = f"; and {len(left_out) - 3} more" if len(left_out) > 3 else ""
        raise NamedPathError(f"{printable(raw)} holds no .spark file spark may read (skipped {why}{more})")
    if not kept:
        raise NamedPathError(f"{printable(raw)} holds no .spark file (that its project's include and exclude keep)")
    return kept


def printable(name: str) -> str:
    """A file name safe to print anywhere: unprintable characters as escapes, `\\` doubled.

    A byte that is not UTF-8 shows as `\\xff`, a control character as `\\x0a`, other
    unprintable characters as `\\u{202e}`. Doubling `\\` keeps two different names from
    ever printing alike.
    """
    if name.isprintable() and "\\" not in name:
        return name  # the common case: nothing to escape
    import unicodedata  # only for a name that needs escapes (a shared library of its own)

    out = []
    for ch in name:
        point = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= point <= 0xDCFF:  # a byte of a name that is not UTF-8 (surrogateescape)
            out.append(f"\\x{point - 0xDC00:02x}")
        elif unicodedata.category(ch) in _UNPRINTABLE:
            out.append(f"\\x{point:02x}" if point < 0x100 else f"\\u{{{point:x}}}")
        else:
            out.append(ch)
    return "".join(out)


def display(path: Path | str, cwd: str | None = None) -> str:
    """A path as the user sees it: relative to the current folder when below it, `/`, printable.

    `cwd` is the current folder where the caller asked for it once (a run names every spec)."""
    text = os.fspath(path)
    below = _below(text, cwd) if cwd is not None and os.sep == "/" else None
    if below is not None:
        return printable(below)
    try:
        rel = os.path.relpath(text, cwd) if cwd is not None else os.path.relpath(text)
    except (OSError, ValueError):  # the current folder is gone; another drive on Windows
        rel = text
    return printable(rel if os.sep == "/" else Path(rel).as_posix())


def _below(text: str, cwd: str) -> str | None:
    """`os.path.relpath(text, cwd)` by cutting the prefix, for a path inside `cwd` with both in
    normal form (`_normal`); None for any other, which relpath then normalizes. A run names
    each spec once, and relpath normalized both paths each time (a fortieth of a clean check)."""
    if not (_normal(text) and _normal(cwd)):
        return None
    if text == cwd:
        return "."
    prefix = cwd.rstrip("/") + "/"
    return text[len(prefix) :] if text.startswith(prefix) else None


def _normal(text: str) -> bool:
    """Absolute, with no `.` or `..` part and no doubled or trailing `/`: what a resolved path
    and the current folder are. (A name starting with `.` is refused too: relpath decides it.)"""
    return text.startswith("/") and "//" not in text and "/." not in text and (text == "/" or not text.endswith("/"))


def replace_text(path: Path, text: str) -> None:
    """Writes a spec's new text in one step, so an interrupted run never leaves half a spec.

    `spark fmt` and `spark check --fix` both write through here. A symbolic link is written
    through: the temporary file goes beside the file the link finally names and replaces that
    file, so the link stays a link and the real spec gets the text. The file keeps its mode (and
    its owner where the system allows). Raises OSError, having changed nothing, when the file
    cannot be written.
    """
    import tempfile
    from contextlib import suppress

    target = Path(os.path.realpath(path))
    info = target.stat()
    if info.st_nlink > 1:
        _rewrite_in_place(target, text)
        return
    # A short name of its own, not derived from the spec's: a spec named up to the file-system
    # limit (255 bytes) must still be writable, and `.spark-fmt-` marks whose leftover it is.
    fd, tmp = tempfile.mkstemp(prefix=".spark-fmt-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode))
        with suppress(OSError):
            os.chown(tmp, info.st_uid, info.st_gid)
        os.replace(tmp, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def _rewrite_in_place(target: Path, text: str) -> None:
    """Rewrites a file with several hard links in place, so every name of it gets the new text
    (a rename would leave the other names holding the old). A rename is the only write a kill
    cannot cut in half, so the old text is first saved beside it as `.spark-fmt-*.tmp`, fsynced,
    and removed once the new text is on disk: a kill in between leaves that copy to restore from."""
    import tempfile

    old = target.read_bytes()
    fd, backup = tempfile.mkstemp(prefix=".spark-fmt-", suffix=".tmp", dir=target.parent)
    with os.fdopen(fd, "wb") as handle:
        handle.write(old)
        handle.flush()
        os.fsync(handle.fileno())
    try:
        _overwrite(target, text.encode("utf-8"))
    except OSError:
        _overwrite(target, old)  # a full disk half-way: the old text back (it fitted before)
        os.unlink(backup)
        raise
    os.unlink(backup)


def write_all(fd: int, data: bytes) -> None:
    """Writes all of `data` to `fd` (`os.write` may write less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _overwrite(target: Path, data: bytes) -> None:
    out = os.open(target, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        write_all(out, data)
        os.ftruncate(out, len(data))
        os.fsync(out)
    finally:
        os.close(out)
