"""What every reader gets: the file being checked, the sink, and the ways to report a bad value.

A report raises `Invalid` once its diagnostic is in the sink, so a reader stops at its first
problem and the body walk marks the setting invalid.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from spark_dsl.diagnostics import DiagnosticSink, Fix, replacement
from spark_dsl.schema import KeySpec
from spark_dsl.span import Span
from spark_dsl.string_checks import Problem
from spark_dsl.syntax import ast


class Invalid(Exception):
    """Raised inside value readers once their diagnostic is reported."""


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str | None:
    # A word that differs only in case is that word (`B200` is `b200`, never the nearer-looking `h200`).
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return lowered[word.lower()]
    # difflib is imported only when a name is wrong: clean files never pay for it.
    from difflib import get_close_matches

    close = get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def describe(value: ast.Value) -> str:
    """How a value reads in a message: its kind and its text."""
    match value:
        case ast.Number():
            return f"number `{value.text}`"
        case ast.Quantity():
            return f"quantity `{value.text}`"
        case ast.String():
            return f'string "{value.value}"'
        case ast.Bool():
            return f"boolean `{str(value.value).lower()}`"
        case ast.Symbol():
            return f"`{value.name}`"
        case ast.ListValue():
            return "a list"
        case ast.Call():
            return f"`{value.name.name}(...)`"
        case ast.Combination():
            return "a combination with `+`"
    return "a value"  # pragma: no cover


class Context(Struct):
    """One body's checking context (of a deployment or a profile) in one file."""

    file: str
    sink: DiagnosticSink
    profile: str | None = None
    deployment: str | None = None
    # The file's text, for fixes that remove a whole line.
    text: str = ""
    # The setting being read, for a fix that removes it.
    entry: Span | None = None
    # The models declared in the file's import closure (`model NAME { }`), which `model = NAME` may name.
    models: tuple[str, ...] = ()
    # Their checkpoints' repositories -> the model's name: `model = "org/name"` (model_ids).
    repositories: dict[str, str] = field(default_factory=dict)

    def error(self, code: str, message: str, span: Span, **extra: Any) -> None:
        self.sink.error(code, message, self.file, span, deployment=self.deployment, **extra)
        raise Invalid

    def report(self, problem: Problem | None, span: Span) -> None:
        """A string's problem at `span`, with its fix: the string rewritten, or the setting removed."""
        if problem is None:
            return
        fixes: tuple[Fix, ...] = ()
        if problem.replacement is not None:
            from spark_dsl.format.values import quote

            fixes = (replacement(f"write {quote(problem.replacement)}", self.file, span, quote(problem.replacement)),)
        elif problem.remove and self.entry is not None:
            fixes = (self.removal("remove the setting", self.entry),)
        self.error(problem.code, problem.message, span, help=problem.help, fixes=fixes)

    def suggest(
        self,
        code: str,
        message: str,
        span: Span,
        word: str,
        choices: tuple[str, ...] | list[str],
        help_text: str,
        quote: str = "",
        otherwise: Fix | None = None,
        close_help: str = "",
        guess_fix: bool = True,
    ) -> None:
        """An unknown word: a did-you-mean with its replacement (safe when only the case differs),
        else the `otherwise` fix when the caller has one. `close_help`, with `{close}` for the near
        spelling, replaces `help_text` when there is one (a long list would bury it). Without
        `guess_fix` a near spelling in other letters is named but not a fix (a model or an
        accelerator: docs/fixes.md, no fix replaces them); one in other capitals still is."""
        close = did_you_mean(word, choices)
        fixes: tuple[Fix, ...] = (otherwise,) if otherwise is not None else ()
        if close is not None:
            message += f"; did you mean `{close}`?"
            if close_help:
                help_text = close_help.replace("{close}", close)
            same = close.lower() == word.lower()
            fixes = (
                (replacement(f"replace with `{close}`", self.file, span, f"{quote}{close}{quote}", safe=same),)
                if same or guess_fix
                else ()
            )
        self.error(code, message, span, help=help_text, fixes=fixes)

    def removal(self, message: str, span: Span) -> Fix:
        """The unsafe fix that removes a whole setting or block."""
        from spark_dsl.edits import removal_span

        return replacement(message, self.file, removal_span(self.text, span), "")

    def rewrite(self, message: str, value: ast.Value, text: str, safe: bool = False) -> Fix:
        """The fix that writes `text` in place of `value`."""
        return replacement(message, self.file, value.span, text, safe=safe)

    def wrong_type(self, key: KeySpec, value: ast.Value, example: str, safe: bool = False) -> None:
        """A value of the wrong type; the fix writes the help's example (`safe` when the example
        is the same value in the right type, as `false` for "false"). A model or an accelerator
        gets no such fix: the example would pick what is deployed (IDENTITY_KEYS)."""
        from spark_dsl.schema import IDENTITY_KEYS

        fixes: tuple[Fix, ...] = ()
        if safe or key.name not in IDENTITY_KEYS:
            fixes = (self.rewrite(f"write `{key.name} = {example}`", value, example, safe=safe),)
        self.error(
            "SPK102",
            f"`{key.name}` takes a {key.type_name}, found {describe(value)}",
            value.span,
            help=f"write e.g. `{key.name} = {example}`",
            fixes=fixes,
        )
