"""Shell words read back by bash exactly, on one line, whatever the text holds."""

from __future__ import annotations

import subprocess

import pytest

from spark_dsl.plan.template import Template
from spark_dsl.targets.shell_words import command_lines, expansion_text, joined, quote, word

AWKWARD = [
    "",
    "plain/text-1.0",
    "it's",
    'say "hi"',
    "$(touch /tmp/never) `id` ; rm -rf / & | > <",
    "line one\nline two\r\n\ttabbed",
    "back\\slash\\",
    "${HOME} $$ $1 !history",
    "bell\x07 escape\x1b del\x7f",
    "unicode é 漢字 \u2028 separator \x85 next-line",
    "-looks-like-a-flag",
    "~tilde *glob? [brackets]",
]


def bash_words(*words: str) -> list[str]:
    """What bash makes of the words: each printed NUL-terminated."""
    script = 'printf "%s\\0" ' + " ".join(words)
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    return out.decode("utf-8").split("\0")[:-1]


@pytest.mark.parametrize("text", AWKWARD, ids=range(len(AWKWARD)))
def test_quote_reads_back_exactly_on_one_line(text: str) -> None:
    quoted = quote(text)
    assert "\n" not in quoted and "\r" not in quoted
    assert bash_words(quoted) == [text]


def test_placeholders_expand_and_the_rest_stays_literal() -> None:
    words = [
        word(Template("http://${SPARK_HEAD_ADDRESS}:8000")),
        word(Template("$(id) ${SPARK_DECODE_ADDRESS}'")),
        word(Template("${OTHER}")),
        word("${SPARK_HEAD_ADDRESS}"),  # a user's text: only compiler-written Templates are filled
    ]
    assert words[0] == '"http://${SPARK_HEAD_ADDRESS}:8000"'
    script = "SPARK_HEAD_ADDRESS=h SPARK_DECODE_ADDRESS=d OTHER=o; " + 'printf "%s\\0" ' + " ".join(words)
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True, text=True).stdout
    assert out.split("\0")[:-1] == ["http://h:8000", "$(id) d'", "${OTHER}", "${SPARK_HEAD_ADDRESS}"]


def test_a_command_puts_each_option_on_its_own_line() -> None:
    lines = joined(command_lines(("vllm", "serve", "m", "--port", "8000", "--flag", "--json", '{"a":1}')))
    assert lines == ["vllm serve m \\", "  --port 8000 \\", "  --flag \\", "  --json '{\"a\":1}'"]


def test_a_multi_line_command_runs_as_one_argv() -> None:
    argv = ["printf", "%s\\0", *AWKWARD, "--opt", "value with space", "--", "-x"]
    script = "\n".join(joined(command_lines(argv)))
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    assert out.decode("utf-8").split("\0")[:-1] == argv[2:]


@pytest.mark.parametrize("message", ["set X (it's here)", 'a "quoted" } $HOME `id` \\ end', "tab\there"])
def test_an_unset_variable_prints_the_message_exactly(message: str) -> None:
    # bash reads a `'` inside a double-quoted `${X:?...}` as the start of a quoted string.
    script = f': "${{X:?{expansion_text(message)}}}"'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode != 0 and "EOF" not in result.stderr, result.stderr
    assert result.stderr == f"bash: line 1: X: {message.replace(chr(9), chr(92) + 't')}\n"


def test_remembered_words_keep_a_users_placeholder_text_apart_from_the_compilers() -> None:
    """`word` remembers plain words (a build quotes the same flags for every deployment), never a
    Template: the same characters are a user's literal value in one and a placeholder in the other,
    whichever comes first, and the table stays bounded."""
    from spark_dsl.plan.template import Template
    from spark_dsl.targets import shell_words

    text = "http://${SPARK_HEAD_ADDRESS}:8000"
    for _ in range(2):
        assert shell_words.word(text) == "'http://${SPARK_HEAD_ADDRESS}:8000'"
        assert shell_words.word(Template(text)) == '"http://${SPARK_HEAD_ADDRESS}:8000"'
    for i in range(shell_words._REMEMBERED + 10):
        shell_words.word(f"value-{i}")
    assert len(shell_words._WORDS) <= shell_words._REMEMBERED
    assert shell_words.word(text) == "'http://${SPARK_HEAD_ADDRESS}:8000'"
