"""One build at a time per output folder: an exclusive `flock` on `DIR/.spark-build.lock`.

The lock file exists only while a build holds it: the holder removes it before releasing, and a
build that was waiting on the removed file sees that the path no longer names the file it locked and
takes the lock again on the new one. A lock left by a killed build is free (the kernel drops a dead
process's locks) and is simply reused.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

LOCK_FILE = ".spark-build.lock"


@contextmanager
def locked(out_dir: Path, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Holds the output folder's lock for the block; `on_wait` is called once if another build has it."""
    path = out_dir / LOCK_FILE
    waited = False
    while True:
        fd = _open(path)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None and not waited:
                    on_wait()
                waited = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _still_names(path, fd):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the holder we waited for removed this file: lock the new one
    try:
        yield
    finally:
        with suppress(OSError):  # a lock file left behind is harmless: the next build reuses it
            os.unlink(path)
        os.close(fd)


def _open(path: Path) -> int:
    """The lock file, created if need be; never through a symbolic link (a pull request can commit one)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as err:
        if err.errno == errno.ELOOP:  # O_NOFOLLOW refused a link
            raise OSError(err.errno, f"{LOCK_FILE} is a symbolic link, which spark never follows; remove it") from None
        if err.errno == errno.EISDIR:
            raise OSError(err.errno, f"{LOCK_FILE} is a folder, not spark's lock file; remove it") from None
        raise


def _still_names(path: Path, fd: int) -> bool:
    try:
        current = os.lstat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)
