"""spark_dsl.patterns: a regular expression compiled on first use answers as the compiled one."""

from __future__ import annotations

import re

import pytest

from spark_dsl import patterns
from spark_dsl.patterns import lazy_regex


def test_nothing_is_compiled_until_a_method_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    real = re.compile

    def counting(source: str, flags: int = 0) -> re.Pattern[str]:
        compiled.append(source)
        return real(source, flags)

    monkeypatch.setattr(patterns.re, "compile", counting)
    p = lazy_regex(r"[a-z]+\d")
    assert compiled == []
    assert p.fullmatch("abc1") and not p.fullmatch("abc")
    assert p.match("x9y") and p.search("--q5") and not p.match("9")
    assert compiled == [r"[a-z]+\d"]  # once, however many methods are asked for


def test_it_answers_as_re_compile_does() -> None:
    source, flags = r"^(?P<word>[A-Z]\w*)", re.M | re.I
    lazy, real = lazy_regex(source, flags), re.compile(source, flags)
    text = "alpha beta\nGamma\n9delta"
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.sub("<\\g<word>>", text) == real.sub("<\\g<word>>", text)
    assert lazy.findall(text) == real.findall(text)
    assert (lazy.pattern, lazy.flags) == (real.pattern, real.flags)
