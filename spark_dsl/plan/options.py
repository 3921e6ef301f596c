"""A launch's command line as data: the options the compiler decides, each rendered to its words.

The launches record what they decide as options, not as words: the vLLM config target writes
them as its keys and the plan's pictures read their values, so no one parses the argv back.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec import Struct


class Option(Struct, frozen=True):
    """One option of a launch: its flag as vLLM (or the router) spells it and its value.

    A switch's value is True (`--headless`) or False, its negative spelling (`--no-enable-x`, which
    vLLM's boolean options take). Any other value is the one word after the flag, as the process
    receives it: a Template when it holds a run-time placeholder.
    """

    flag: str
    value: str | bool = True

    def words(self) -> tuple[str, ...]:
        if self.value is True:
            return (self.flag,)
        if self.value is False:
            return (negative(self.flag),)
        return (self.flag, self.value)


def negative(flag: str) -> str:
    """vLLM's spelling of a boolean option turned off (argparse's BooleanOptionalAction)."""
    return "--no-" + flag.removeprefix("--")


def rendered(options: Iterable[Option]) -> tuple[str, ...]:
    """The words of the options, in order."""
    return tuple(word for option in options for word in option.words())
