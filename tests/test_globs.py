"""spark_dsl.globs: the glob language of the configuration, what is invalid in it, and matching
that agrees with the regular expressions it replaced without ever backtracking."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from spark_dsl import globs
from spark_dsl.config import Setting, Settings


def glob(pattern: str) -> globs.Glob:
    parsed = globs.parse(pattern)
    assert isinstance(parsed, globs.Glob), parsed
    return parsed


def matches(pattern: str, path: str) -> bool:
    """Whether `pattern` matches the file or folder at `path`, relative to the configuration."""
    return glob(pattern).matches(path, path.rsplit("/", 1)[-1])


# ---- the syntax ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # Without a `/`: a name at any depth.
        ("legacy", "legacy", True),
        ("legacy", "specs/legacy", True),
        ("legacy", "specs/legacy.spark", False),
        ("*.spark", "a/b/c.spark", True),
        ("*.spark", "a.spark/b", False),
        ("?.spark", "a.spark", True),
        ("?.spark", "ab.spark", False),
        # A trailing `/` is dropped: still a name.
        ("legacy/", "deep/legacy", True),
        # With a `/`: anchored at the configuration file's folder; a leading `/` changes nothing.
        ("specs/legacy", "specs/legacy", True),
        ("specs/legacy", "x/specs/legacy", False),
        ("/legacy", "legacy", True),
        ("/legacy", "x/legacy", False),
        # `*` and `?` stay within a folder, `**` crosses folders, `**/` is whole folders or none.
        ("drafts/*.spark", "drafts/a.spark", True),
        ("drafts/*.spark", "drafts/deeper/a.spark", False),
        ("drafts/?", "drafts/a", True),
        ("a?b/c", "a/b/c", False),
        ("specs/**", "specs/a/b.spark", True),
        ("specs/**", "specs", False),
        ("specs/**/*.spark", "specs/a.spark", True),
        ("specs/**/*.spark", "specs/x/y/a.spark", True),
        ("**/b.spark", "b.spark", True),
        ("**/b.spark", "x/y/b.spark", True),
        ("**/b.spark", "xb.spark", False),
        ("a**b/c", "a/x/b/c", True),
        ("a**b/c", "ab/c", True),
        # Classes: one character of a name, never `/`.
        ("[abc].spark", "b.spark", True),
        ("[a-c].spark", "d.spark", False),
        ("[!a-c].spark", "d.spark", True),
        ("[^a-c].spark", "d.spark", True),  # `^` negates too, as the regular expressions did
        ("x[!a]y/z", "x/y/z", False),
        ("[]a].spark", "].spark", True),  # `]` first is a member
        ("[a-].spark", "-.spark", True),  # `-` last is a member
        ("[!!].spark", "!.spark", False),
        ("[a-c-e].spark", "-.spark", True),  # a range, then `-` and `e`
        # A `[` with no `]` after it stands for itself, and so do `[]` and `\`.
        ("[abc", "[abc", True),
        ("a[]", "a[]", True),
        ("a\\b", "a\\b", True),
    ],
)
def test_the_syntax(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_a_path_outside_the_configuration_folder_matches_no_anchored_pattern() -> None:
    assert not glob("specs/*.spark").matches(None, "a.spark")
    assert glob("*.spark").matches(None, "a.spark")


@pytest.mark.parametrize(
    ("pattern", "message", "help_text", "fixed"),
    [
        ("[z-a]", "the range `z-a` in `[z-a]` runs backwards", "write the range low to high: `[a-z]`", "[a-z]"),
        (
            "specs/x[!0-9z-a]*",
            "runs backwards",
            "write the range low to high: `specs/x[!0-9a-z]*`",
            "specs/x[!0-9a-z]*",
        ),
        ("[!]", "the class `[!]` names no character", "as in `[!.]`", None),
        ("[^]x]", "the class `[^]` names no character", "`[[]` matches a `[` itself", None),
        ("a[b/c]", "holds a `/`", "write the `/` outside the class", None),
        ("a\x00b", "NUL", "remove the NUL", None),
        ("//", "slashes alone", "such as `legacy/`", None),
        ("", "empty", "such as `legacy/`", None),
        ("a" * (globs.MAX_LENGTH + 1), "more than any path", "shorten it", None),
    ],
)
def test_an_invalid_pattern_says_why_and_how_to_write_it(
    pattern: str, message: str, help_text: str, fixed: str | None
) -> None:
    parsed = globs.parse(pattern)
    assert isinstance(parsed, globs.Invalid)
    assert message in parsed.message and help_text in parsed.help
    assert parsed.fixed == fixed
    if fixed is not None:
        assert isinstance(globs.parse(fixed), globs.Glob)


def test_an_invalid_pattern_quotes_its_characters_as_shown() -> None:
    parsed = globs.parse("[\x1b-\x01]", lambda s: s.encode("unicode_escape").decode())
    assert isinstance(parsed, globs.Invalid)
    assert "\x1b" not in parsed.message + parsed.help and "\\x1b" in parsed.message
    assert parsed.fixed == "[\x01-\x1b]"


def test_settings_made_in_code_with_an_invalid_pattern_match_nothing_and_raise_nothing(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, extend_exclude=Setting(("[z-a]", "legacy")))
    assert settings.excludes(tmp_path / "legacy")
    assert not settings.excludes(tmp_path / "z")


# ---- agreement with the regular expressions it replaced -----------------------------------------


def old_regex(pattern: str) -> tuple[bool, re.Pattern[str]]:
    """spark_dsl/config.py's `_compiled` at 1a493a8, with one deliberate change: a negated class
    does not match `/` (there it did, so `x[!a]y/z` matched `x/y/z`)."""
    body = pattern.rstrip("/")
    anchored = "/" in body
    body = body.lstrip("/")
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "[" and (close := body.find("]", i + 2)) != -1:
            inner = body[i + 1 : close]
            negate = inner.startswith("!")
            inner = inner[1:] if negate else inner
            negated = negate or inner.startswith("^")
            out.append(("(?!/)" if negated else "") + f"[{'^' if negate else ''}{inner.replace(chr(92), chr(92) * 2)}]")
            i = close + 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    return anchored, re.compile("".join(out))


PATTERN_PARTS = ["a", "b", ".", "-", "/", "*", "**", "**/", "?", "[", "]", "!", "^", "[a-b]", "[!a]", "\\"]
NAME_PARTS = ["a", "b", ".", "-", "[", "]", "!", "^", "\\", "ab", "ba"]


def random_pattern(rng: random.Random) -> str:
    return "".join(rng.choice(PATTERN_PARTS) for _ in range(rng.randint(1, 7)))


def random_path(rng: random.Random) -> str:
    names = ["".join(rng.choice(NAME_PARTS) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 4))]
    return "/".join(names)


def test_matching_agrees_with_the_old_regular_expressions_on_random_patterns() -> None:
    rng = random.Random(31)
    compared = matched = invalid = 0
    for _ in range(4000):
        pattern = random_pattern(rng)
        parsed = globs.parse(pattern)
        with warnings.catch_warnings():
            # The old translation made `re` warn of nested sets to come (`[[`, `--`); no matter.
            warnings.simplefilter("ignore", FutureWarning)
            try:
                anchored, regex = old_regex(pattern)
            except re.error:
                # Every pattern the old code crashed on is invalid now.
                assert isinstance(parsed, globs.Invalid), pattern
                invalid += 1
                continue
        if isinstance(parsed, globs.Invalid):
            # The ones it did not crash on: a `/` in a class, or nothing but slashes.
            assert "holds a `/`" in parsed.message or "slashes alone" in parsed.message, (pattern, parsed)
            invalid += 1
            continue
        states_only = globs.parse(pattern)
        assert isinstance(states_only, globs.Glob)
        states_only._shape = None  # the states, even for a shape string methods answer
        for _ in range(25):
            path = random_path(rng) if rng.random() < 0.5 else near(pattern, rng)
            name = path.rsplit("/", 1)[-1]
            old = regex.fullmatch(path if anchored else name) is not None
            assert parsed.matches(path, name) is old, (pattern, path)
            assert states_only.matches(path, name) is old, (pattern, path)
            compared += 1
            matched += old
    assert compared > 50_000 and matched > 5_000 and invalid > 50, (compared, matched, invalid)


def near(pattern: str, rng: random.Random) -> str:
    """A path written from the pattern itself, its wildcards filled in, so that many match."""
    out = []
    for ch in pattern.strip("/"):
        if ch in "*?":
            out.append("".join(rng.choice(NAME_PARTS + ["/"] * (ch == "*")) for _ in range(rng.randint(0, 2))))
        elif ch == "[":
            out.append(rng.choice(["a", "b", "["]))
        else:
            out.append(ch)
    path = "/".join(part for part in "".join(out).split("/") if part)
    return path or "a"


# ---- no pattern backtracks ---------------------------------------------------------------------

HANG_GUARD = 10  # seconds: a guard against a hang, not a speed requirement


def test_an_exponential_pattern_finishes_against_long_names() -> None:
    # In a process of its own, so a regression is killed at the guard instead of hanging the run.
    script = textwrap.dedent(
        """
        from pathlib import Path
        from spark_dsl import globs
        from spark_dsl.config import Settings, Setting

        for pattern in ("*a" * 14 + "*b", "*a" * 14 + "*b*", "**a" * 14 + "**b*", "[a]*" * 14 + "b?"):
            g = globs.parse(pattern)
            for name in ("a" * 60, "a" * 10_000, "a/" * 5_000):
                assert not g.matches(name, name)
            assert g.matches("a" * 60 + "bb", "a" * 60 + "bb")
        home = Path("/project")
        settings = Settings(home=home, extend_exclude=Setting(("*a" * 14 + "*b",)))
        assert not settings.excludes(home / ("a" * 60))
        assert not settings.excludes(home / ("a" * 10_000))
        big = globs.parse("?*" * 2_000)
        assert big.matches("x" * 4_096, "x" * 4_096)
        print("done")
        """
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_GUARD)
    assert (r.returncode, r.stdout) == (0, "done\n"), r.stderr
