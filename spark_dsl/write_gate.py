"""The one check before spark writes a file a user named: it is never an input of the same run.

`spark check a.spark --output-file a.spark` used to open (and truncate) the output before the
inputs were read: the spec was replaced by its own report, and the run exited 0. A symbolic
link or a hard link to the spec did the same, and `spark build -o out --output-file
out/manifest.json` emptied the manifest the next build trusts. Now every command records the
files it reads (files.read_spec's log, by device and inode), runs with its standard output
held in memory, and only then asks here whether the output may be written. `spark model import
-o` asks the same after reading config.json, and `spark build -o` before swapping any folder in.

A refusal is a reason in words; the command line turns it into a usage error (exit 2), having
written nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from spark_dsl import files

# Files the kernel makes: writing one changes the process or the machine, not a report.
_KERNEL_FOLDERS = ("/proc/", "/sys/")


def refusal(path: Path, build_folder: Path | None = None) -> str | None:
    """Why `path` must not be written as this run's output, or None.

    Refused: a file this run read (by device and inode, so any name of it: a symbolic link, a
    hard link, a path through `..`), anything inside `build_folder` (the build's own output
    folder, which the build manages: its manifest and deployment folders), a folder, and a
    kernel file under /proc or /sys. A FIFO or a device (`/dev/stdout`, `/dev/null`) is allowed:
    it is where output goes, not a file that holds anything."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        status = None
    except (OSError, ValueError) as err:
        return files.os_problem(err).reason
    if status is not None:
        seen = files.read_log_entry(status)
        if seen is not None:
            return _named(seen, path)
        if stat.S_ISDIR(status.st_mode):
            return "it is a directory"
    real = os.path.realpath(path)
    if status is not None and stat.S_ISREG(status.st_mode) and real.startswith(_KERNEL_FOLDERS):
        return "it is a file of the kernel (/proc or /sys), not a file for output"
    if build_folder is not None and _inside(real, os.path.realpath(build_folder)):
        return f"it is inside the build's output folder {files.display(build_folder)}, which spark manages"
    return None


def inputs_inside(folder: Path, names: Iterable[str]) -> list[str]:
    """The inputs of this run that lie inside `folder`'s subfolders `names` (the deployment folders
    a build replaces or removes), shown as the user would name them."""
    real = os.path.realpath(folder)
    places = [os.path.join(real, name) for name in names]
    return sorted(
        files.display(read)
        for read in files.read_paths()
        if any(_inside(os.path.realpath(read), place) for place in places)
    )


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _named(seen: str, path: Path) -> str:
    shown = files.display(seen)
    return "it is an input of this run" if shown == files.display(path) else f"it is {shown}, an input of this run"


def write_output(path: Path, data: bytes) -> None:
    """Writes `data` to `path` (created or replaced), never waiting on a FIFO without a reader.
    Raises OSError, as `open` would."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        os.set_blocking(fd, True)  # opened without waiting; written like any file
        files.write_all(fd, data)
    finally:
        os.close(fd)


def make_folders(path: Path, root: Path) -> str | None:
    """Creates the folders `path` needs that do not exist yet, all inside `root` (the project), or
    says why not, having created none: `-o models/x.spark` in a fresh repository makes `models/`,
    while a path through `..` or a symbolic link out of the project makes nothing there.

    The existing part of the path is resolved (links followed) and must lie inside the resolved
    root; the missing part is plain names, each made as a folder in turn (mode 0777 less umask)."""
    absolute = Path(os.path.abspath(path))
    missing: list[str] = []
    existing = absolute.parent
    while not os.path.lexists(existing) and existing != existing.parent:
        missing.append(existing.name)
        existing = existing.parent
    if not missing:
        return None
    if any(part in ("", ".", "..") for part in Path(path).parts):
        return f"its folder {files.display(absolute.parent)} does not exist and the path climbs with `..`"
    real = os.path.realpath(existing)
    if not _inside(real, os.path.realpath(root)):
        return (
            f"its folder {files.display(absolute.parent)} does not exist, and spark creates folders only "
            f"inside the project ({files.display(root)})"
        )
    if not os.path.isdir(real):
        return f"{files.display(existing)} is not a folder"
    made = Path(real)
    for name in reversed(missing):
        made = made / name
        try:
            os.mkdir(made)
        except FileExistsError:  # made meanwhile by another run: a folder is what was wanted
            if not made.is_dir():
                return f"{files.display(made)} is not a folder"
        except (OSError, ValueError) as err:
            return f"cannot create {files.display(made)}: {files.os_problem(err).reason}"
    return None
