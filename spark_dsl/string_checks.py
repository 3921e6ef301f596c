"""What a string value may hold, whatever key it sets: the checks every target relies on.

Each check is one a target cannot make up for when it writes the value: no argument or
environment variable holds NUL (SPK905); a pasted access token would be written into every
output (SPK901); an empty value would be silently dropped (SPK906); a value that starts like an
option would be read by vLLM's parser as one (SPK907).
"""

from __future__ import annotations

import re

from msgspec import Struct

from spark_dsl.patterns import lazy_regex

# Hugging Face user access tokens (`hf_`) and the older organisation tokens (`api_org_`): 34
# letters after the prefix (the pattern of gitleaks' Hugging Face rules, after
# huggingface.co/docs/hub/security-tokens); digits are allowed too, to be safe.
_TOKEN = lazy_regex(r"(?<![A-Za-z0-9])(?:hf|api_org)_[A-Za-z0-9]{34}(?![A-Za-z0-9])")
# A placeholder such as `hf_xxxx...` repeats a character: not a token.
_MIN_DISTINCT = 6

_NEGATIVE_INTEGER = lazy_regex(r"-[0-9]+")
# Keys whose value vLLM receives as an argument of its own (`--host VALUE`, the model positional).
OPTION_VALUE_KEYS = frozenset(("host", "served_model_name", "model_path"))


class Problem(Struct, frozen=True):
    """What is wrong with a string, and the fix its help names: a new text for the string
    (`replacement`), or removing the setting (`remove`)."""

    code: str
    message: str
    help: str
    replacement: str | None = None
    remove: bool = False


def _kept(found: str) -> int | None:
    """How many characters of a token-shaped match stay visible (the prefix and two more), or
    None when the match is a placeholder such as `hf_xxxx...` rather than a token."""
    prefix = found.rindex("_") + 1
    if len(set(found[prefix:])) < _MIN_DISTINCT:
        return None
    return prefix + 2


def token(text: str) -> str | None:
    """The start of an access token in `text`, shown redacted (`hf_Qw...`), or None."""
    for m in _TOKEN.finditer(text):
        kept = _kept(m.group(0))
        if kept is not None:
            return m.group(0)[:kept] + "..."
    return None


def mask_tokens(text: str) -> str:
    """`text` with every access token masked after its first characters, length kept (so a
    printed source line still lines up with its carets)."""

    def mask(m: re.Match[str]) -> str:
        found = m.group(0)
        kept = _kept(found)
        return found if kept is None else found[:kept] + "*" * (len(found) - kept)

    return _TOKEN.sub(mask, text) if "_" in text else text


def reads_as_option(text: str) -> bool:
    """Whether `vllm serve` would take `text` for an option rather than a value (checked against
    vLLM's own parser, tests/vllm_parser/test_option_values.py): argparse reads `-x` and `--x`
    as options but `-1`, `-` and `-x y` (with a space) as values; vLLM's own pre-pass reads any
    `-` word with a `.` as a dotted option (`-O.level`) and fails on `-0.5` or `-x.y z`."""
    if not text.startswith("-") or text == "-":
        return False
    if "." in text:
        return True
    return _NEGATIVE_INTEGER.fullmatch(text) is None and " " not in text


def content(what: str, text: str) -> Problem | None:
    """Checks any string that reaches an output: NUL, and pasted tokens."""
    if "\0" in text:
        return Problem(
            "SPK905",
            f"{what} holds a NUL character (`\\u{{0}}`)",
            "remove it: no program argument or environment variable can hold NUL",
            replacement=text.replace("\0", ""),
        )
    shown = token(text)
    if shown is not None:
        return Problem(
            "SPK901",
            f"{what} holds what looks like an access token (`{shown}`); it would be written into every output",
            'store it outside the spec and refer to it: `runtime { hf_token = secret("hf-token") }` '
            'or `env("HF_TOKEN")`, and revoke the pasted token',
        )
    return None


def setting(key: str, text: str, default: str = "") -> Problem | None:
    """Checks the value of a string key: content, then emptiness and option look-alikes."""
    problem = content(f"`{key}`", text)
    if problem is not None:
        return problem
    if text == "":
        # A default without a space is the value itself (`default`, `logs/%x-%j.out`): quoted as the
        # string it is; one with spaces describes where the value comes from ("the cluster's").
        if not default:
            fallback = ""
        elif " " in default:
            fallback = f" ({default})"
        else:
            fallback = f' value "{default}"'
        return Problem(
            "SPK906",
            f"`{key}` is empty",
            f"remove `{key}` to use the default{fallback}, or give it a value",
            remove=True,
        )
    if key in OPTION_VALUE_KEYS and reads_as_option(text):
        stripped = text.lstrip("-")
        return Problem(
            "SPK907",
            f'`{key}` "{text}" starts with `-`: vLLM would read it as an option, not as the value',
            f"`{key}` cannot start with `-` (unless it is a negative whole number, or holds a space and no `.`)"
            + (f": write it without, `{stripped}`" if stripped else ""),
            replacement=stripped or None,
        )
    return None
