"""Which project a spec belongs to: its root (the folder imports may not leave) and its settings.

From a file's folder upwards, the nearest folder holding one of these decides, whichever
comes first:

- `spark.toml`;
- `pyproject.toml` with a `[tool.spark]` table;
- `.git` (a folder, or the file a worktree or submodule has): the repository root.

`spark check`, `spark plan`, `spark build` and `spark lsp` all ask here, so the command
line and the editor give one file the same root. A file with none of them above it is
its own project: its folder is the root. `--root DIR` (the command line only) makes DIR
the root of every file instead, with DIR's own configuration if it has one.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from msgspec import Struct, field

from spark_dsl import config, files
from spark_dsl.code_selection import Selection
from spark_dsl.patterns import lazy_regex
from spark_dsl.structured import load_toml

SPARK_TOML = "spark.toml"
PYPROJECT = "pyproject.toml"
# `[tool.spark]` or `[tool.spark.x]`, for a pyproject.toml that tomllib cannot parse: it is
# still this project's configuration, and loading it reports the syntax error.
_TOOL_SPARK = lazy_regex(r"^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*(spark|\"spark\"|'spark')(?![\w-])", re.M)

# How a root was found, as `--show-settings` and `docs/configuration.md` word it.
BY_SPARK_TOML = "spark.toml"
BY_PYPROJECT = "pyproject.toml [tool.spark]"
BY_GIT = "repository root (.git)"
BY_OPTION = "--root"
BY_OWN_FOLDER = "the file's own folder (no spark.toml, [tool.spark] or .git above it)"


class Project(Struct, frozen=True):
    """A root, how it was found, and the settings that apply to the files below it."""

    root: Path
    found_by: str
    settings: config.Settings
    # Where the search stopped: the folder holding the marker (the root unless `root = ".."`).
    home: Path


def has_tool_spark(pyproject: Path) -> bool:
    """Whether a pyproject.toml configures spark (a `[tool.spark]` table, even a broken one)."""
    data = files.read_spec(pyproject)
    if isinstance(data, files.Unreadable):
        return False
    text = data.decode("utf-8", "replace")
    document = load_toml(text)
    if not isinstance(document, dict):  # not TOML, or nested too deep to parse
        return bool(_TOOL_SPARK.search(text))
    tool = document.get("tool")
    return isinstance(tool, dict) and "spark" in tool


def marker(folder: Path) -> tuple[str, Path | None] | None:
    """What in `folder` makes it a project's home, and the configuration file if any."""
    toml = folder / SPARK_TOML
    if _is(toml, stat.S_ISREG):
        return BY_SPARK_TOML, toml
    pyproject = folder / PYPROJECT
    # A pyproject.toml linked from outside the repository is not read (nor quoted): it is no marker.
    if _is(pyproject, stat.S_ISREG) and not config.leaves_repository(pyproject, folder) and has_tool_spark(pyproject):
        return BY_PYPROJECT, pyproject
    if _is(folder / ".git", lambda mode: True):
        return BY_GIT, None
    return None


def _is(path: Path, kind: Callable[[int], bool]) -> bool:
    """Whether something of this kind is at `path`; a folder spark may not look into holds nothing."""
    try:
        return kind(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


class Projects(Struct):
    """Finds and remembers projects for one run, so a folder is searched and a file loaded once.

    `forced` is `--root`: every file's project is that folder's. `selection` is the command
    line's `--select`/`--extend-select`/`--ignore`, applied after each project's own.
    """

    forced: Path | None = None
    selection: Selection | None = None
    _by_folder: dict[Path, Project] = field(default_factory=dict)
    # Where each path asked about starts its search: a run asks of every file two or three times
    # (its folder's scan, the loader, the settings), and each answer walked every folder above it.
    _starts: dict[Path, Path] = field(default_factory=dict)
    # Each path resolved once per run, for the search and for the loader alike: resolving walks
    # every folder above the path with lstat, and a run asked it twice of every spec (and resolved
    # a forced root again for every file).
    _resolved: dict[Path, Path | files.Unreadable] = field(default_factory=dict)
    _folders: dict[str, Path | files.Unreadable] = field(default_factory=dict)  # by the folder's text
    _forced_real: Path | None = None  # `forced`, resolved once
    _named_roots: dict[Path, Path] = field(default_factory=dict)  # by the folder a path is named in

    def forget_paths(self) -> None:
        """Lets go of the paths remembered for the run once it is done: a few hundred bytes a spec
        that a build's commit can use instead (each is found again if asked for)."""
        self._resolved.clear()
        self._folders.clear()
        self._starts.clear()

    def resolved(self, path: Path) -> Path | files.Unreadable:
        """`files.resolve(path)`, remembered for the run."""
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = self._resolve(path)
        return found

    def _resolve(self, path: Path) -> Path | files.Unreadable:
        """Through the folder's own answer, remembered for its other files: specs share folders.

        The folder is found by its text (`_folders`): a Path's parent is a new Path whose hash is
        computed anew, and those steps cost more than the rest of resolving a spec."""
        folder_text, name = os.path.split(path)
        if name not in ("", ".", ".."):  # `/` and `.` are their own parents; `..` is resolved in full
            real_folder = self._folders.get(folder_text)
            if real_folder is None:
                real_folder = self._folders[folder_text] = self.resolved(path.parent)
            if isinstance(real_folder, Path):
                quick = files.resolve_in(real_folder, name)
                if quick is not None:
                    return quick
        return files.resolve(path)

    def of(self, path: Path) -> Project:
        """The project of a file (searched from its folder) or of a folder (from itself).

        A path that does not resolve (a symlink loop, a NUL, a name too long) is looked up
        from the folder it names, so the loader can say why the file cannot be read.
        """
        start = self._starts.get(path)
        if start is None:
            start = self._starts[path] = self._start(path)
        cached = self._by_folder.get(start)
        if cached is None:
            cached = self._find(start)
            self._by_folder[start] = cached
        return cached

    def _start(self, path: Path) -> Path:
        if self.forced is not None:
            if self._forced_real is None:
                self._forced_real = self.forced.resolve()
            return self._forced_real
        real = self.resolved(path)
        if isinstance(real, files.Unreadable):
            return Path(os.path.abspath(path)).parent
        return real if _is(real, stat.S_ISDIR) else real.parent

    def scan(self, folder: Path, real: Path, boundary: Path | None = None) -> tuple[list[Path], list[files.Skipped]]:
        """The `.spark` files a scan of `folder` (resolved: `real`) keeps, and what it left out unread.

        Each folder and file below is judged by the settings of the project it is listed in:
        an excluded folder is not entered, an excluded or not included file is left out. A
        symlinked file is read only when it resolves inside `boundary` (default: the project root).
        """

        def real_of(path: Path) -> Path:
            return real / path.relative_to(folder)

        def pruned(path: Path) -> bool:
            below = real_of(path)
            return self.of(below.parent).settings.excludes(below)

        def kept(path: Path) -> bool:
            settings = self.of(path.parent).settings
            return settings.includes(path) and not settings.excludes(path)

        found, skipped = files.scan(folder, boundary or self.of(real).root, pruned)
        return [path for path in found if kept(real_of(path))], skipped

    def escape(self, raw: str, real: Path, folder: bool) -> Path | None:
        """The project root that a path named on the command line (resolved: `real`) leaves
        through a symbolic link, or None when it stays inside.

        The project is the one the path is *named* in: found from the path as written, before
        any link in it is followed (`cases/link` -> `../outside` is named in the project of
        `cases`, and so is `cases/link/x.spark`). A link that stays inside is followed as ever."""
        lexical = Path(os.path.abspath(raw))
        start = lexical if folder else lexical.parent
        root = self._named_roots.get(start)
        if root is None:  # a pre-commit hook names hundreds of files in a few folders
            # Only folders reached without a link: a marker seen through `cases/link` is the target's.
            unlinked = [f for f in (start, *start.parents) if os.path.realpath(f) == os.fspath(f)]
            home = next((f for f in unlinked if marker(f) is not None), unlinked[0] if unlinked else start)
            root = self._named_roots[start] = self.of(home).root
        return None if real.is_relative_to(root) else root

    def all(self) -> list[Project]:
        """Every project found so far, once each, in the order found."""
        seen: dict[Path, Project] = {}
        for project in self._by_folder.values():
            seen.setdefault(project.home, project)
        return list(seen.values())

    def _find(self, start: Path) -> Project:
        if self.forced is not None:
            found = marker(start)
            settings = config.load(found[1] if found else None, start)
            return Project(start, BY_OPTION, settings, start)
        for folder in (start, *start.parents):
            found = marker(folder)
            if found is None:
                continue
            for known in self._by_folder.values():
                if known.home == folder:  # the same project reached from another folder below it
                    return known
            by, file = found
            settings = config.load(file, folder)
            return Project(settings.root.value, by, settings, folder)
        return Project(start, BY_OWN_FOLDER, config.load(None, start), start)


def project_root(path: Path) -> Path:
    """The root of the project a file belongs to, as every command and the language server find it."""
    return Projects().of(path).root
