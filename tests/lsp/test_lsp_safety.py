"""What the language server may change, over stdio: only safe fixes are preferred and unsafe ones
say so, `source.fixAll.spark` writes what `spark check --fix` writes, an import that could not be
read is checked again when it can be, and edits are applied as the protocol says (docs/editors.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from raw_lsp import RawServer, assert_clean_session, assert_still_serving

from spark_dsl.format import format_text

# A guess: `flashinfr` may be `flashinfer`, but the user has to say so. (A misspelt model or
# accelerator is no example: no fix replaces those, docs/fixes.md.)
GUESS = "deployment d {\n  model       = muse-spark-open\n  accelerator = b200\n  attention   = flashinfr\n}\n"
# Two safe fixes, the second found only once the first is made (the `:` hides the quotes), and
# one unsafe guess that must stay as it is.
FIXABLE = (
    'deployment d {\n  model = muse-spark-open\n  accelerator = "b200"\n'
    "  checkpoint: nvfp4\n  attention = flashinfr\n}\n"
)
UNSAFE_WORDS = "(unsafe: may change what is deployed)"


def _code_actions(server: RawServer, uri: str, diagnostics: list[Any], only: list[str] | None = None) -> list[Any]:
    context: dict[str, Any] = {"diagnostics": diagnostics}
    if only is not None:
        context["only"] = only
    start = diagnostics[0]["range"] if diagnostics else {"start": {"line": 0, "character": 0}}
    span = {"start": start["start"], "end": start["start"]}
    reply = server.call("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": span, "context": context})
    assert "error" not in reply, reply
    actions = reply["result"]
    assert isinstance(actions, list)
    return actions


def _apply(text: str, edits: list[dict[str, Any]]) -> str:
    """LSP edits (UTF-16, lines ending at \\n) applied last first, as a client applies them."""
    lines = text.split("\n")

    def offset(position: dict[str, int]) -> int:
        line = min(position["line"], len(lines) - 1)
        return sum(len(x) + 1 for x in lines[:line]) + min(position["character"], len(lines[line]))

    def key(e: dict[str, Any]) -> tuple[int, int]:
        return e["range"]["start"]["line"], e["range"]["start"]["character"]

    for edit in sorted(edits, key=key, reverse=True):
        text = text[: offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]) :]
    return text


def _spark_check_fix(folder: Path, name: str, text: str) -> str:
    """What `spark check --fix` writes for a file holding `text` (in a project of its own)."""
    folder.mkdir()
    (folder / "spark.toml").write_text("", encoding="utf-8")
    (folder / name).write_text(text, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "spark_dsl", "check", "--fix", name], cwd=folder, capture_output=True)
    return (folder / name).read_text(encoding="utf-8")


@pytest.fixture
def project(server: RawServer) -> RawServer:
    (server.root / "spark.toml").write_text("", encoding="utf-8")
    return server


# ---- D8: safe and unsafe fixes ----------------------------------------------------------------


def test_an_unsafe_guess_is_not_preferred_and_says_it_is_unsafe(project: RawServer) -> None:
    uri = project.open("guess.spark", GUESS)
    (diagnostic,) = project.diagnostics(uri)
    assert diagnostic["code"] == "SPK103" and diagnostic["data"]["fixes"][0]["safe"] is False
    (fix,) = _code_actions(project, uri, [diagnostic], only=["quickfix"])
    assert fix["kind"] == "quickfix"
    assert fix["title"] == f"Replace with `flashinfer` {UNSAFE_WORDS}"
    assert not fix.get("isPreferred")
    assert_clean_session(project)


def test_a_safe_fix_is_preferred_and_keeps_its_title(project: RawServer) -> None:
    text = 'deployment d {\n  model       = muse-spark-open\n  accelerator = "b200"\n}\n'
    uri = project.open("quoted.spark", text)
    (diagnostic,) = project.diagnostics(uri)
    (fix,) = _code_actions(project, uri, [diagnostic])
    assert fix["title"] == "Drop the quotes" and fix["isPreferred"] is True
    assert _apply(text, fix["edit"]["changes"][uri]) == text.replace('"b200"', "b200")
    assert_clean_session(project)


def test_the_server_offers_fix_all(server: RawServer) -> None:
    assert server.initialize_reply is not None  # its answer to the initialize RawServer.initialize sends
    kinds = server.initialize_reply["result"]["capabilities"]["codeActionProvider"]["codeActionKinds"]
    assert kinds == ["quickfix", "source.fixAll.spark"]
    assert_clean_session(server)


@pytest.fixture(scope="module")
def fixed_by_spark_check(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What `spark check --fix` writes for FIXABLE: run once, for every `only` below."""
    return _spark_check_fix(tmp_path_factory.mktemp("fix") / "cli", "fixable.spark", FIXABLE)


@pytest.mark.parametrize("only", [["source.fixAll"], ["source.fixAll.spark"], ["source"]])
def test_fix_all_writes_what_spark_check_fix_writes(
    project: RawServer, fixed_by_spark_check: str, only: list[str]
) -> None:
    uri = project.open("fixable.spark", FIXABLE)
    project.diagnostics(uri)
    (action,) = _code_actions(project, uri, [], only=only)
    assert action["kind"] == "source.fixAll.spark"
    fixed = _apply(FIXABLE, action["edit"]["changes"][uri])
    expected = fixed_by_spark_check
    assert fixed == expected
    # Both safe fixes, over two rounds; the unsafe guess stays as the user wrote it.
    assert "checkpoint  = nvfp4" in fixed and "accelerator = b200" in fixed and "flashinfr" in fixed
    assert_clean_session(project)


def test_fix_all_is_not_a_quick_fix_and_is_absent_when_nothing_is_safe(project: RawServer) -> None:
    fixable = project.open("fixable.spark", FIXABLE)
    (syntax,) = project.diagnostics(fixable)
    actions = _code_actions(project, fixable, [syntax], only=["quickfix"])
    assert [a["kind"] for a in actions] == ["quickfix"]
    guess = project.open("guess.spark", GUESS)
    project.diagnostics(guess)
    assert _code_actions(project, guess, [], only=["source.fixAll"]) == []
    assert_clean_session(project)


def test_a_fix_from_an_earlier_version_is_not_offered_on_a_newer_buffer(project: RawServer) -> None:
    uri = project.open("guess.spark", GUESS)
    (stale,) = project.diagnostics(uri)
    # The user adds a line above before the client has the new diagnostics: the stale fix's
    # range now points one line too high, at `deployment d {`.
    _change(project, uri, 2, (0, 0), (0, 0), "# a comment\n")
    (fresh,) = project.diagnostics(uri)
    assert fresh["range"]["start"]["line"] == stale["range"]["start"]["line"] + 1
    assert _code_actions(project, uri, [stale], only=["quickfix"]) == []
    (fix,) = _code_actions(project, uri, [fresh], only=["quickfix"])
    fixed = _apply("# a comment\n" + GUESS, fix["edit"]["changes"][uri])
    assert fixed == "# a comment\n" + GUESS.replace("flashinfr", "flashinfer")
    assert_clean_session(project)


# ---- D9: an import that could not be read ------------------------------------------------------

SPEC = 'import "common.spark"\n\ndeployment d extends common {\n  model = muse-spark-open\n  accelerator = b200\n}\n'
COMMON = "profile common {\n  nodes = 1\n}\n"


def _changed(server: RawServer, path: Path, kind: int) -> None:
    server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": path.as_uri(), "type": kind}]})


def test_an_import_over_the_size_limit_is_checked_again_once_it_is_cut_down(project: RawServer) -> None:
    common = project.root / "common.spark"
    with common.open("wb") as out:
        out.truncate(64 * 1024**2)  # 64 MiB that take no disk space: over the 10 MiB limit
    uri = project.open("main.spark", SPEC)
    codes = [d["code"] for d in project.diagnostics(uri)]
    assert "SPK120" in codes
    common.write_text(COMMON, encoding="utf-8")
    _changed(project, common, 2)  # Changed: the file was there all along
    assert project.diagnostics(uri) == []
    assert_clean_session(project)


def test_an_unreadable_import_opened_in_the_editor_rechecks_its_importer(project: RawServer) -> None:
    common = project.root / "common.spark"
    os.mkfifo(common)  # a FIFO is refused for root too, where chmod 000 would not be
    uri = project.open("main.spark", SPEC)
    assert "SPK120" in [d["code"] for d in project.diagnostics(uri)]
    common.unlink()
    common.write_text(COMMON, encoding="utf-8")
    common_uri = project.open("common.spark", COMMON)
    assert project.diagnostics(common_uri) == []
    assert project.diagnostics(uri) == []
    assert_clean_session(project)


# ---- edits outside the document ----------------------------------------------------------------

# No final newline: formatting always answers with the whole buffer, which shows what it holds.
BASE = "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n}"


def _buffer(server: RawServer, uri: str) -> str:
    """The server's buffer, as formatted (comments and all): the one request that returns it."""
    reply = server.call(
        "textDocument/formatting", {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}}
    )
    (edit,) = reply["result"]
    text = edit["newText"]
    assert isinstance(text, str)
    return text


def _change(server: RawServer, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
    def at(p: tuple[int, int]) -> dict[str, int]:
        return {"line": p[0], "character": p[1]}

    server.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": at(start), "end": at(end)}, "text": text}],
        },
    )


def _formatted(text: str) -> str:
    result = format_text(text, "x.spark").text
    assert result is not None
    return result


@pytest.mark.parametrize(
    ("text", "start", "end", "inserted", "expected"),
    [
        # Past the end of a line: the end of the line.
        (BASE, (0, 10_000), (0, 10_000), " # one", BASE.replace("{", "{ # one", 1)),
        # Just past a line's text (where its newline is): still the end of the line.
        (BASE, (0, 15), (0, 15), " # one", BASE.replace("{", "{ # one", 1)),
        # Past the end of the last line, which has no newline: after its last character.
        (BASE, (3, 50), (3, 50), "\n# tail", BASE + "\n# tail"),
        # Past the last line: the end of the document.
        (BASE, (10_000, 5), (20_000, 0), "\n# far", BASE + "\n# far"),
        # A replacement whose end is past the document: up to the end.
        (BASE, (3, 0), (99, 99), "}\n# end", BASE + "\n# end"),
        # Windows line ends: the end of a line is before its \r\n.
        (BASE.replace("\n", "\r\n"), (0, 15), (0, 15), " # one", BASE.replace("{", "{ # one", 1).replace("\n", "\r\n")),
        # A form feed in a comment is not a line break for the protocol.
        (
            "# a\x0cb\n" + BASE,
            (2, 10_000),
            (2, 10_000),
            " # two",
            "# a\x0cb\n" + BASE.replace("muse-spark-open", "muse-spark-open # two"),
        ),
    ],
    ids=["past-line", "at-newline", "past-last-line", "past-document", "end-past-document", "crlf", "form-feed"],
)
def test_edits_past_the_end_are_clamped_as_the_protocol_says(
    server: RawServer,
    text: str,
    start: tuple[int, int],
    end: tuple[int, int],
    inserted: str,
    expected: str,
) -> None:
    uri = server.open("edited.spark", text)
    server.diagnostics(uri)
    _change(server, uri, 2, start, end, inserted)
    server.diagnostics(uri)
    assert _buffer(server, uri) == _formatted(expected)
    assert_still_serving(server)
    assert_clean_session(server)


def test_a_range_that_ends_before_it_starts_is_refused_and_the_buffer_kept(server: RawServer) -> None:
    uri = server.open("edited.spark", BASE)
    server.diagnostics(uri)
    _change(server, uri, 2, (2, 0), (1, 0), "# garbled\n")
    _change(server, uri, 3, (0, 14), (0, 14), " # kept")
    server.diagnostics(uri)
    assert _buffer(server, uri) == _formatted(BASE.replace("{", "{ # kept", 1))
    assert "ends before it starts" in server.stderr()
    assert_still_serving(server)
    assert_clean_session(server)
