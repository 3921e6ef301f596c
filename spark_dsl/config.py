"""Project settings: `spark.toml`, or the `[tool.spark]` table of `pyproject.toml`, read with tomllib.

docs/configuration.md documents every key. A key spark does not know, a value it
cannot use, or a file that is not TOML is a located diagnostic in the configuration
file (SPK601, SPK602, SPK603), with a did-you-mean where one is close; the run goes
on with the keys that are valid. Every setting keeps where it came from, for
`spark check --show-settings`.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from msgspec import Struct, field
from msgspec.structs import replace

from spark_dsl import files, globs
from spark_dsl.config_codes import BAD_VALUE, NOT_TOML, UNKNOWN_KEY
from spark_dsl.diagnostics import Diagnostic, Fix, Severity, replacement
from spark_dsl.loader import SourceFile
from spark_dsl.patterns import lazy_regex
from spark_dsl.span import Location, Span
from spark_dsl.structured import TooDeep, load_toml

if TYPE_CHECKING:
    from spark_dsl.code_selection import Selection

T = TypeVar("T")

# Folders a folder scan never enters unless `exclude` says otherwise: tool and VCS folders
# hold no specs of the project, and walking a virtual environment costs seconds.
DEFAULT_EXCLUDE = (".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__")
DEFAULT_INCLUDE = ("*.spark",)
DEFAULT_OUTPUT = "build"

# The keys, in the order `--show-settings` lists them.
KEYS = (
    "root",
    "include",
    "exclude",
    "extend-exclude",
    "select",
    "ignore",
    "per-path-ignores",
    "warnings-as-errors",
    "output",
)


class Origin(Struct, frozen=True):
    """Where a setting's value comes from: its default, the command line, or a file position."""

    file: str | None = None
    line: int = 0
    column: int = 0
    option: str | None = None

    def __str__(self) -> str:
        if self.option is not None:
            return f"command line ({self.option})"
        if self.file is None:
            return "default"
        return f"{self.file}:{self.line}:{self.column}"

    def as_json(self) -> dict[str, Any]:
        if self.option is not None:
            return {"kind": "command line", "option": self.option}
        if self.file is None:
            return {"kind": "default"}
        return {"kind": "file", "file": self.file, "line": self.line, "column": self.column}


DEFAULT = Origin()


class Setting(Struct, Generic[T], frozen=True):
    value: T
    origin: Origin = DEFAULT


class Settings(Struct, frozen=True):
    """What applies to the files of one project, each value with its origin."""

    home: Path
    file: Path | None = None
    source: SourceFile | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    root: Setting[Path] = field(default_factory=lambda: Setting(Path(".")))
    include: Setting[tuple[str, ...]] = Setting(DEFAULT_INCLUDE)
    exclude: Setting[tuple[str, ...]] = Setting(DEFAULT_EXCLUDE)
    extend_exclude: Setting[tuple[str, ...]] = Setting(())
    select: Setting[tuple[str, ...] | None] = Setting(None)
    ignore: Setting[tuple[str, ...]] = Setting(())
    per_path_ignores: Setting[tuple[tuple[str, tuple[str, ...]], ...]] = Setting(())
    warnings_as_errors: Setting[bool] = Setting(False)
    output: Setting[Path] = Setting(Path(DEFAULT_OUTPUT))

    def setting(self, key: str) -> Setting[Any]:
        value: Setting[Any] = getattr(self, key.replace("-", "_"))
        return value

    # ---- folder scans -----------------------------------------------------

    def excludes(self, path: Path) -> bool:
        """Whether a folder scan leaves out `path` (a file or folder, its folder resolved)."""
        return _matches(self.exclude.value + self.extend_exclude.value, path, self.home)

    def includes(self, path: Path) -> bool:
        """Whether a folder scan picks up the file at `path`."""
        return _matches(self.include.value, path, self.home)

    # ---- diagnostics --------------------------------------------------------

    def keeps(self, diagnostic: Diagnostic, path: Path, command_line: Selection | None = None) -> bool:
        """Whether `select`, `ignore` and `per-path-ignores` keep a diagnostic found in `path`,
        with the command line's `--select`, `--extend-select` and `--ignore` as a last layer
        (spark_dsl.code_selection).

        Errors are always kept: a spec with an error cannot be deployed, so no setting hides one.
        """
        if diagnostic.severity is Severity.ERROR:
            return True
        code = diagnostic.code
        selected = self.select.value
        kept = selected is None or any(code.startswith(prefix) for prefix in selected)
        kept = kept and not any(code.startswith(prefix) for prefix in self.ignore.value)
        if command_line is not None:
            kept = command_line.decides(code, kept)
        if not kept:
            return False
        for pattern, codes in self.per_path_ignores.value:
            if any(code.startswith(prefix) for prefix in codes) and _matches((pattern,), path, self.home):
                return False
        return True


def _matches(patterns: tuple[str, ...], path: Path, home: Path) -> bool:
    """Whether a path matches a pattern: anchored at `home` when the pattern has a `/`, else by name."""
    try:
        rel = path.relative_to(home).as_posix()
    except ValueError:
        rel = None
    for pattern in patterns:
        glob = _compiled(pattern)
        if glob is not None and glob.matches(rel, path.name):
            return True
    return False


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> globs.Glob | None:
    """A glob ready to match (spark_dsl/globs.py has the syntax): `*` and `?` stay within a
    folder, `**` crosses folders. A pattern with a `/` (other than a trailing one) is anchored at
    the configuration file's folder; one without matches a file or folder name at any depth, as in
    ruff and .gitignore.

    The reader dropped every invalid pattern (SPK602); one that reaches here all the same (a
    `Settings` made in code) matches nothing rather than raising in the middle of a scan.
    """
    parsed = globs.parse(pattern)
    return parsed if isinstance(parsed, globs.Glob) else None


# ---- the boundary a project may not leave -----------------------------------------


def highest_root(home: Path) -> Path:
    """The highest folder a project found at `home` may take as its root, and the folder its
    configuration must lie in: the enclosing repository (the nearest folder at or above `home`
    holding `.git`), else `home` itself. A `root = "../../.."` that climbed past it let imports
    name any file of the machine (`/proc/self/environ`), and SPK001 quoted its first line."""
    for folder in (home, *home.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return home


def leaves_repository(file: Path, home: Path) -> bool:
    """Whether a configuration file found in `home` is a symbolic link out of its repository
    (such a file is never read: its diagnostics would quote whatever it names)."""
    real = files.resolve(file)
    return isinstance(real, Path) and not real.is_relative_to(highest_root(home).resolve())


# ---- loading ----------------------------------------------------------------


def load(file: Path | None, home: Path) -> Settings:
    """The settings of the project at `home`: the defaults, and `file`'s keys when there is one."""
    base = Settings(home=home, root=Setting(home))
    if file is None:
        return base
    return _Reader(file, home, base).read()


class _Reader(Struct):
    file: Path
    home: Path
    settings: Settings
    name: str = ""
    text: str = ""
    found: list[Diagnostic] = field(default_factory=list)
    keys: _KeyIndex | None = None

    def read(self) -> Settings:
        self.name = files.display(self.file)
        if leaves_repository(self.file, self.home):
            return self._fail(
                f"{self.name} is a symbolic link to a file outside the project's repository; spark "
                "reads no configuration from there",
                Span(0, 0),
                "replace the link with the file itself, or point it at a file inside the repository",
            )
        data = files.read_spec(self.file)
        if isinstance(data, files.Unreadable):
            return self._fail(f"cannot read {self.name}: {data.reason}", Span(0, 0), data.help)
        try:
            self.text = data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as err:
            return self._fail(f"{self.name} is not valid UTF-8 (byte {err.start})", Span(0, 0), "save it as UTF-8")
        document = _toml(self.text)
        if isinstance(document, TooDeep):
            at = document.offset if document.offset is not None else 0
            return self._fail(f"{self.name} cannot be read: {document.reason()}", Span(at, at + 1), document.help)
        if isinstance(document, ValueError):
            return self._fail(
                f"{self.name} is not valid TOML: {_without_position(str(document))}",
                self._error_span(str(document)),
                "fix the TOML syntax (https://toml.io); every key and value of it is described in "
                "docs/configuration.md",
            )
        self.keys = _KeyIndex(self.text)
        prefix: tuple[str, ...] = ()
        table: object = document
        if self.file.name != "spark.toml":
            prefix = ("tool", "spark")
            tool = document.get("tool")
            table = tool.get("spark", {}) if isinstance(tool, dict) else {}
            if not isinstance(table, dict):
                self._bad(
                    prefix,
                    "`tool.spark` must be a table of settings",
                    "write the settings under a `[tool.spark]` header, one `key = value` a line",
                )
                return self._done()
        assert isinstance(table, dict)
        for key, value in table.items():
            self._key(prefix, key, value)
        return self._done()

    # ---- one key ------------------------------------------------------------

    def _key(self, prefix: tuple[str, ...], key: str, value: object) -> None:
        path = (*prefix, key)
        if key not in KEYS:
            self._unknown(path, key)
            return
        origin = self._origin(path)
        handler = getattr(self, "_" + key.replace("-", "_"))
        parsed = handler(path, value)
        if parsed is not None:
            changes: dict[str, Any] = {key.replace("-", "_"): Setting(parsed, origin)}
            self.settings = replace(self.settings, **changes)

    def _root(self, path: tuple[str, ...], value: object) -> Path | None:
        if not self._is(path, value, str, 'a string: a folder, relative to this file, such as `".."`'):
            return None
        assert isinstance(value, str)
        root = files.resolve(self.home / value) if value else files.Unreadable("it is empty")
        if isinstance(root, files.Unreadable) or not root.is_dir():
            self._bad(path, f'`root = "{files.printable(value)}"` is not a folder', "name an existing folder")
            return None
        if not self.home.is_relative_to(root):
            self._bad(
                path,
                f'`root = "{files.printable(value)}"` does not hold the folder of {self.name}',
                'the root is this file\'s folder (`"."`) or a folder above it (`".."`): imports may go up to it',
            )
            return None
        highest = highest_root(self.home)
        if not root.is_relative_to(highest.resolve()) or root == Path(root.anchor):
            self._bad(
                path,
                f'`root = "{files.printable(value)}"` {_above(highest, self.home)}',
                _highest_help(highest, self.home),
            )
            return None
        return root

    def _include(self, path: tuple[str, ...], value: object) -> tuple[str, ...] | None:
        return self._globs(path, value)

    def _exclude(self, path: tuple[str, ...], value: object) -> tuple[str, ...] | None:
        return self._globs(path, value)

    def _extend_exclude(self, path: tuple[str, ...], value: object) -> tuple[str, ...] | None:
        return self._globs(path, value)

    def _select(self, path: tuple[str, ...], value: object) -> tuple[str, ...] | None:
        return self._codes(path, value, ignoring=False)

    def _ignore(self, path: tuple[str, ...], value: object) -> tuple[str, ...] | None:
        return self._codes(path, value, ignoring=True)

    def _per_path_ignores(self, path: tuple[str, ...], value: object) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
        if not self._is(path, value, dict, 'a table of glob = [codes], such as `"legacy/**" = ["SPK302"]`'):
            return None
        assert isinstance(value, dict)
        out = []
        for pattern, codes in value.items():
            where = (*path, pattern)
            if not pattern:
                self._bad(where, "an empty pattern matches no file", "name files with a glob such as `legacy/*.spark`")
                continue
            if not self._valid_glob(path, pattern):  # located at the key: `path` is the table's
                continue
            parsed = self._codes(where, codes, ignoring=True)
            if parsed is not None:
                out.append((pattern, parsed))
        return tuple(out)

    def _warnings_as_errors(self, path: tuple[str, ...], value: object) -> bool | None:
        if not self._is(path, value, bool, "`true` or `false`"):
            return None
        assert isinstance(value, bool)
        return value

    def _output(self, path: tuple[str, ...], value: object) -> Path | None:
        if not self._is(path, value, str, 'a string: a folder, relative to this file, such as `"build"`'):
            return None
        assert isinstance(value, str)
        if not value or "\x00" in value:
            self._bad(path, "`output` must name a folder", 'name a folder such as `"build"`')
            return None
        return self.home / value

    # ---- value checks ---------------------------------------------------------

    def _is(self, path: tuple[str, ...], value: object, kind: type, wanted: str) -> bool:
        if isinstance(value, kind):
            return True
        self._bad(path, f"`{path[-1]}` takes {wanted}, not {_kind(value)}", f"set `{path[-1]}` to {wanted}")
        return False

    def _globs(self, path: tuple[str, ...], value: object) -> tuple[str, ...] | None:
        if not self._strings(path, value, 'a list of globs, such as `["tests/**"]`'):
            return None
        assert isinstance(value, list)
        for item in value:
            if not item:
                self._bad(path, f"`{path[-1]}` holds an empty pattern", "remove the empty string", item="")
                return None
        return tuple(item for item in value if self._valid_glob(path, item))

    def _valid_glob(self, path: tuple[str, ...], pattern: str) -> bool:
        """Whether `pattern` is a glob; if not, SPK602 at it, and the run goes on without it
        (so matching never meets an invalid pattern)."""
        parsed = globs.parse(pattern, files.printable)
        if isinstance(parsed, globs.Glob):
            return True
        fixes: tuple[Fix, ...] = ()
        if parsed.fixed is not None and self._item_span(path, pattern) is not None:
            fixes = (self._item_fix(path, pattern, parsed.fixed),)
        self._bad(
            path,
            f'"{files.printable(pattern)}" in `{path[-1]}` is not a valid glob: {parsed.message}',
            parsed.help,
            item=pattern,
            fixes=fixes,
        )
        return False

    def _strings(self, path: tuple[str, ...], value: object, wanted: str) -> bool:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return True
        self._bad(path, f"`{path[-1]}` takes {wanted}, not {_kind(value)}", f"set `{path[-1]}` to {wanted}")
        return False

    def _codes(self, path: tuple[str, ...], value: object, *, ignoring: bool) -> tuple[str, ...] | None:
        """A list of codes or code prefixes (`SPK3`), every one naming at least one known code."""
        if not self._strings(path, value, 'a list of codes or prefixes, such as `["SPK302", "SPK4"]`'):
            return None
        assert isinstance(value, list)
        from spark_dsl.code_selection import problem

        kept = []
        for item in value:
            found = problem(item, ignoring)
            if found is not None:  # the command line's --select and --ignore say the same
                message, help_text, guess = found
                self._bad(
                    path,
                    message,
                    help_text,
                    item=item,
                    fixes=(self._item_fix(path, item, guess),) if guess else (),
                )
                continue
            kept.append(item)
        return tuple(kept)

    # ---- diagnostics ----------------------------------------------------------

    def _unknown(self, path: tuple[str, ...], key: str) -> None:
        from spark_dsl.typecheck import did_you_mean

        guess = did_you_mean(key.replace("_", "-"), KEYS) or did_you_mean(key, KEYS)
        span = self._key_span(path)
        fixes: tuple[Fix, ...] = ()
        if guess is not None and span is not None:
            fixes = (replacement(f"replace with `{guess}`", self.name, span, guess),)
        self.found.append(
            Diagnostic(
                UNKNOWN_KEY,
                Severity.ERROR,
                f"unknown configuration key `{files.printable(key)}`" + (f"; did you mean `{guess}`?" if guess else ""),
                Location(self.name, span or self._fallback_span(path)),
                label="not a spark setting",
                help=(f"rename it to `{guess}`" if guess else "remove it")
                + f"; the keys are {', '.join(KEYS)} (docs/configuration.md)",
                fixes=fixes,
            )
        )

    def _bad(
        self,
        path: tuple[str, ...],
        message: str,
        help_text: str,
        *,
        item: str | None = None,
        fixes: tuple[Fix, ...] = (),
    ) -> None:
        span = self._item_span(path, item) if item is not None else None
        self.found.append(
            Diagnostic(
                BAD_VALUE,
                Severity.ERROR,
                message,
                Location(self.name, span or self._value_span(path)),
                help=help_text,
                fixes=fixes,
            )
        )

    def _item_fix(self, path: tuple[str, ...], item: str, new: str) -> Fix:
        span = self._item_span(path, item)
        inner = Span(span.start + 1, span.end - 1) if span is not None else self._value_span(path)
        return replacement(f"replace with `{new}`", self.name, inner, new)

    def _fail(self, message: str, span: Span, help_text: str) -> Settings:
        self.found.append(Diagnostic(NOT_TOML, Severity.ERROR, message, Location(self.name, span), help=help_text))
        return self._done()

    def _done(self) -> Settings:
        source = SourceFile(self.file, self.name, self.text, None)
        return replace(self.settings, file=self.file, source=source, diagnostics=tuple(self.found))

    # ---- positions --------------------------------------------------------------

    def _origin(self, path: tuple[str, ...]) -> Origin:
        span = self._key_span(path) or self._fallback_span(path)
        index = SourceFile(self.file, self.name, self.text, None).index
        line, column = index.position(span.start)
        return Origin(self.name, line, column)

    def _key_span(self, path: tuple[str, ...]) -> Span | None:
        return self.keys.key(path) if self.keys is not None else None

    def _value_span(self, path: tuple[str, ...]) -> Span:
        if self.keys is not None:
            found = self.keys.value(path)
            if found is not None:
                return found
        return self._fallback_span(path)

    def _item_span(self, path: tuple[str, ...], item: str) -> Span | None:
        """The quoted `item` inside the value of `path`, when it is written plainly."""
        start = self._value_span(path).start
        for quote in ('"', "'"):
            at = self.text.find(f"{quote}{item}{quote}", start)
            if at != -1:
                return Span(at, at + len(item) + 2)
        return None

    def _fallback_span(self, path: tuple[str, ...]) -> Span:
        """The nearest enclosing key or table that is written out, else the file's start."""
        if self.keys is not None:
            for cut in range(len(path) - 1, 0, -1):
                found = self.keys.key(path[:cut])
                if found is not None:
                    return found
        return Span(0, 0)

    def _error_span(self, message: str) -> Span:
        match = re.search(r"at line (\d+), column (\d+)", message)
        index = SourceFile(self.file, self.name, self.text, None).index
        if match is None:  # "at end of document"
            return Span(len(self.text), len(self.text))
        start = index.offset(int(match.group(1)), int(match.group(2)))
        return Span(start, min(start + 1, len(self.text)))


def _above(highest: Path, home: Path) -> str:
    if highest == home and not os.path.lexists(home / ".git"):
        return f"climbs above {files.display(home)}, and no repository (`.git`) above it lets a root go higher"
    return f"climbs above the repository root {files.display(highest)}"


def _highest_help(highest: Path, home: Path) -> str:
    up = Path(os.path.relpath(highest, home)).as_posix()
    if up == ".":
        return 'remove `root` (the root is this file\'s folder, `"."`); imports stay inside it'
    return f'set `root = "{up}"` (the repository root) or a folder below it; imports never leave the repository'


def _without_position(message: str) -> str:
    return re.sub(r"\s*\((at line \d+, column \d+|at end of document)\)", "", message).lower()


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return f"the boolean `{str(value).lower()}`"
    if isinstance(value, str):
        return f'the string "{files.printable(value)}"'
    if isinstance(value, int | float):
        return f"the number `{value}`"
    if isinstance(value, list):
        return "a list of other values" if value else "an empty list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


# ---- where keys are written ------------------------------------------------------

_BARE = r"[A-Za-z0-9_-]+"
_PART = rf"(?:{_BARE}|\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*')"
_DOTTED = rf"{_PART}(?:[ \t]*\.[ \t]*{_PART})*"
_HEADER = lazy_regex(rf"[ \t]*\[[ \t]*({_DOTTED})[ \t]*\]")
_ARRAY_HEADER = lazy_regex(r"[ \t]*\[\[")
_KEY_VALUE = lazy_regex(rf"[ \t]*({_DOTTED})[ \t]*=[ \t]*")
_ONE_PART = lazy_regex(_PART)


def _toml(text: str) -> dict[str, Any] | ValueError | TooDeep:
    """The TOML document `text`, or tomllib's error (a TOMLDecodeError) when it is not TOML.

    A `spark.toml` that only marks a project's root is often empty, or blank lines and comments:
    that is the empty table, read here without importing tomllib (its import compiles its
    patterns: about 3% of a cold `spark check` of one spec). Anything else is tomllib's to read,
    and so is a comment with any character that is not printable (a tab, or a control, which TOML
    refuses there)."""
    for line in text.replace("\r\n", "\n").split("\n"):  # a carriage return alone is not a line break
        rest = line.lstrip(" \t")
        if rest and not (rest.startswith("#") and rest.isprintable()):
            return load_toml(text)
    return {}


class _KeyIndex:
    """Where each key of a valid TOML document is written: the key's span and its value's start.

    tomllib gives values without positions; diagnostics need them. A line scan finds table
    headers and `key = value` lines (keys inside inline tables are found through their
    parent's key). Lines inside multi-line strings are skipped.
    """

    def __init__(self, text: str) -> None:
        self._keys: dict[tuple[str, ...], tuple[Span, Span]] = {}
        table: tuple[str, ...] = ()
        offset = 0
        in_string: str | None = None
        for line in text.splitlines(keepends=True):
            start = offset
            offset += len(line)
            if in_string is not None:
                if line.count(in_string) % 2 == 1:
                    in_string = None
                continue
            header = _HEADER.match(line)
            if _ARRAY_HEADER.match(line):
                table = ("[[]]",)  # arrays of tables hold no spark settings
            elif header is not None:
                table = _parts(header.group(1))
                span = Span(start + header.start(1), start + header.end(1))
                self._keys.setdefault(table, (span, span))
            elif (pair := _KEY_VALUE.match(line)) is not None:
                path = (*table, *_parts(pair.group(1)))
                dotted = pair.group(1)
                last = list(_ONE_PART.finditer(dotted))[-1]
                key = Span(start + pair.start(1) + last.start(), start + pair.start(1) + last.end())
                rest = line[pair.end() :].rstrip("\r\n")
                value = Span(start + pair.end(), start + pair.end() + len(rest.rstrip()))
                self._keys.setdefault(path, (key, value))
                for quote in ('"""', "'''"):
                    if rest.count(quote) % 2 == 1:
                        in_string = quote

    def key(self, path: tuple[str, ...]) -> Span | None:
        found = self._keys.get(path)
        return found[0] if found else None

    def value(self, path: tuple[str, ...]) -> Span | None:
        found = self._keys.get(path)
        return found[1] if found else None


def _parts(dotted: str) -> tuple[str, ...]:
    import tomllib

    out = []
    for match in _ONE_PART.finditer(dotted):
        part = match.group(0)
        out.append(tomllib.loads(f"k = {part}")["k"] if part[0] in "\"'" else part)
    return tuple(out)
