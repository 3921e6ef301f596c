"""What `spark build --check` reports about outputs that are not what a build would write: a unified
diff of each (`--diff`), or a GitHub annotation on each (`--format github`).

The diff reads the file on disk as it is (regular files only, never following a link, at most
MAX_SHOWN bytes) and shows control characters as escapes, so an edited output cannot drive the
terminal that reads the diff; a file that is not UTF-8 text is named as binary.
"""

from __future__ import annotations

import difflib
import os
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path

from spark_dsl.files import printable
from spark_dsl.render.github import escape_data, escape_property
from spark_dsl.targets.writer import Change
from spark_dsl.text_escape import visible

MAX_SHOWN = 4 << 20
_WHAT = {
    "missing": "is missing",
    "stale": "is stale",
    "unexpected": "was not written by this build (it would be removed)",
    "removed": "belongs to a deployment this build no longer produces (it would be removed)",
}


def _read(path: Path) -> tuple[bytes | None, int | None]:
    """A regular file's bytes and mode, or (None, None) when there is none to show."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SHOWN:
            return None, None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            return f.read(MAX_SHOWN + 1), stat.S_IMODE(info.st_mode)
    except OSError:
        return None, None


def _text(data: bytes) -> list[str] | None:
    """Lines with their `\n` (the last may lack one), control characters shown as escapes."""
    try:
        parts = data.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    lines = [visible(part, keep_tabs=True) + "\n" for part in parts[:-1]]
    return [*lines, visible(parts[-1], keep_tabs=True)] if parts[-1] else lines


def _git_mode(mode: int) -> str:
    return "100755" if mode & 0o111 else "100644"


def _file_diff(path: Path, old: bytes | None, old_mode: int | None, new: bytes | None, new_mode: int | None) -> str:
    """Git's form: `diff --git`, mode lines, then the unified diff (`/dev/null` for a new or a
    removed file), `\\ No newline at end of file` where a file ends without one."""
    name = printable(path.as_posix())
    # Git's a/ and b/ prefixes on relative paths (`patch -p1` and `git apply` take them); an
    # absolute output folder is shown as it is.
    a, b = ("", "") if path.is_absolute() else ("a/", "b/")
    head = [f"diff --git {a}{name} {b}{name}\n"]
    if old is None and new_mode is not None:
        head.append(f"new file mode {_git_mode(new_mode)}\n")
    elif new is None and old_mode is not None:
        head.append(f"deleted file mode {_git_mode(old_mode)}\n")
    elif old_mode is not None and new_mode is not None and _git_mode(old_mode) != _git_mode(new_mode):
        head += [f"old mode {_git_mode(old_mode)}\n", f"new mode {_git_mode(new_mode)}\n"]
    if old == new:
        return "".join(head) if len(head) > 1 else ""
    before = _text(old) if old is not None else []
    after = _text(new) if new is not None else []
    if before is None or after is None:
        return "".join([*head, f"Binary files {a}{name} and {b}{name} differ\n"])
    lines = difflib.unified_diff(
        before,
        after,
        fromfile=f"{a}{name}" if old is not None else "/dev/null",
        tofile=f"{b}{name}" if new is not None else "/dev/null",
    )
    body = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]
    return "".join([*head, *body])


def _removed_files(folder: Path) -> Iterator[Path]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        yield folder / name


def diff(changes: list[Change]) -> str:
    """A unified diff from what is on disk to what the build would write, every change."""
    out: list[str] = []
    for change in changes:
        if change.kind == "removed":
            for path in _removed_files(change.path):
                old, old_mode = _read(path)
                if old is not None:
                    out.append(_file_diff(path, old, old_mode, None, None))
            continue
        old, old_mode = _read(change.path) if change.kind != "missing" else (None, None)
        out.append(_file_diff(change.path, old, old_mode, change.data, change.mode))
    return "".join(out)


def build_command(paths: tuple[str, ...], out_dir: Path) -> str:
    """The build that brings the outputs up to date, as a person would type it."""
    words = ["spark", "build", *map(shlex.quote, paths), "-o", shlex.quote(out_dir.as_posix())]
    return printable(" ".join(words))


def github(changes: list[Change], command: str) -> str:
    """One `::error file=...::` annotation per changed path, naming the build that fixes it."""
    out = []
    for change in changes:
        path = printable(change.path.as_posix()) + ("/" if change.kind == "removed" else "")
        title = f"spark build: output {change.kind}"
        message = f"{path} {_WHAT[change.kind]}; run `{command}` and commit the result"
        out.append(f"::error file={escape_property(path)},title={escape_property(title)}::{escape_data(message)}\n")
    return "".join(out)
