"""Which codes a run reports: the command line's `--select`, `--extend-select` and `--ignore`.

They act as ruff's do: the project's `select`/`ignore` (spark.toml) decide first, then the command
line, as one more layer. `--select` replaces the project's `select` and `ignore` (ruff: "Running
`ruff check --select F401` would result in Ruff enforcing F401, and no other rules"),
`--extend-select` turns codes back on after the project's layer, and `--ignore` turns codes off
last. `per-path-ignores` still apply, and errors are always reported: a spec with an error cannot
be deployed, so no option hides one (config.Settings.keeps says the same of spark.toml).

Each value is a code or a prefix (`SPK3`), comma-separated or repeated, checked against the code
registry as spark.toml's are (`problem`): an unknown one is a usage error with a did-you-mean.
"""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.patterns import lazy_regex

# A code or a prefix of one: `SPK`, `SPK3`, `SPK30`, `SPK302`.
CODE_PATTERN = lazy_regex(r"SPK\d{0,3}")
# Longest value quoted back in a message: a 1 MB argument is cut, not echoed.
_SHOWN = 40


class Selection(Struct, frozen=True):
    """The command line's layer; `select` None when `--select` was not given."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def decides(self, code: str, kept_by_project: bool) -> bool:
        """Whether `code` is reported, given what the project's own select/ignore decided."""
        kept = kept_by_project if self.select is None else _matches(code, self.select)
        if _matches(code, self.extend_select):
            kept = True
        return kept and not _matches(code, self.ignore)

    @property
    def empty(self) -> bool:
        return self.select is None and not self.extend_select and not self.ignore


def _matches(code: str, prefixes: tuple[str, ...]) -> bool:
    return any(code.startswith(prefix) for prefix in prefixes)


def problem(item: str, ignoring: bool) -> tuple[str, str, str | None] | None:
    """Why `item` cannot be a code or prefix to select (or, `ignoring`, to ignore): the message,
    the help and the closest code; None when it names at least one known code."""
    from spark_dsl.codes import close_codes, registry
    from spark_dsl.files import printable

    known = registry()
    shown = printable(item if len(item) <= _SHOWN else item[:_SHOWN] + "...")
    matching = [doc for code, doc in known.items() if code.startswith(item)] if item else []
    if not CODE_PATTERN.fullmatch(item) or not matching:
        upper = item.strip().upper()
        close = [upper] if upper != item and upper in known else close_codes(item[:_SHOWN])
        guess = close[0] if close else None
        return (
            f'"{shown}" is not a diagnostic code' + (f"; did you mean `{guess}`?" if guess else ""),
            "name a code such as `SPK302`, or a prefix such as `SPK3` for a whole range "
            "(`spark explain --list` lists them)",
            guess,
        )
    if ignoring and all(doc.severity == "error" for doc in matching):
        return (
            f'"{shown}" names only errors, and errors cannot be ignored',
            "fix the error instead: a spec with an error cannot be deployed; `ignore` takes warnings and infos",
            None,
        )
    return None


def parse(values: tuple[str, ...], ignoring: bool) -> tuple[tuple[str, ...], str | None]:
    """The codes of repeated, comma-separated values, and the first problem's text (message, then
    help) if any value is not one."""
    items = tuple(part.strip() for value in values for part in value.split(","))
    for item in items:
        found = problem(item, ignoring)
        if found is not None:
            return (), f"{found[0]} ({found[1]})"
    return items, None
