"""`manifest.render` writes the manifest entry by entry (json.dumps with an indent was most of a
build's peak memory); its text must stay exactly `json.dumps(..., indent=2, ensure_ascii=False)`,
which is what every committed manifest.json holds."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from spark_dsl.targets.manifest import VERSION, Entry, read, render

HASH = "0123456789abcdef" * 4
# Every kind of character a recorded source can hold: quotes, backslashes, control characters,
# non-ASCII, a byte that was not UTF-8 (a lone surrogate), and characters JSON escapes differently.
AWKWARD = ['"', "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "€", "\u2028", "\udcff", "/", " ", "😀"]

CASES = {
    "no entries": [],
    "an unknown source and no files": [Entry("a", None, None)],
    "an empty folder": [Entry("a", "specs/a.spark", {})],
    "in flight": [
        Entry("b", "../specs/b.spark", {"serve.sh": HASH, "compose.yaml": HASH[::-1]}, {"serve.sh": HASH}),
        Entry("a", "a.spark", {"job.sbatch": HASH}, {}),
    ],
    "awkward sources": [Entry(f"d{i}", f"x{c}y.spark", {"serve.sh": HASH}) for i, c in enumerate(AWKWARD)],
}


def render_reference(entries: list[Entry]) -> str:
    """`render` through `json.dumps`: the definition `render` must match byte for byte."""

    def document(entry: Entry) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": entry.name, "source": entry.source, "files": entry.files}
        if entry.previous is not None:
            doc["previous"] = entry.previous
        return doc

    deployments = [document(e) for e in sorted(entries, key=lambda e: e.name)]
    text = json.dumps(
        {"generator": "spark build", "version": VERSION, "deployments": deployments}, indent=2, ensure_ascii=False
    )
    # A spec name that is not UTF-8 carries its bytes as lone surrogates: written as JSON escapes.
    return re.sub("[\udc80-\udcff]", lambda m: f"\\u{ord(m.group()):04x}", text + "\n")


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_manifest_text_is_what_json_dumps_writes(case: str) -> None:
    assert render(CASES[case]) == render_reference(CASES[case])


def test_many_random_entries_render_as_json_dumps_does() -> None:
    rng = random.Random(20261201)
    names = ["serve.sh", "compose.yaml", "job.sbatch", "kubernetes.yaml", "vllm-config.yaml"]
    entries = []
    for i in range(300):
        files = {n: "".join(rng.choice("0123456789abcdef") for _ in range(64)) for n in rng.sample(names, 3)}
        previous = rng.choice([None, {}, dict(list(files.items())[:1])])
        source = rng.choice([None, "".join(rng.choice([*AWKWARD, "a", "b", "/"]) for _ in range(8))])
        entries.append(Entry(f"dep-{rng.randrange(10**6)}-{i}", source, files, previous))
    assert render(entries) == render_reference(entries)


def test_a_rendered_manifest_reads_back_to_its_entries(tmp_path) -> None:
    # A path holds no NUL, and the manifest refuses a source with one.
    entries = CASES["in flight"] + [e for e in CASES["awkward sources"] if "\x00" not in (e.source or "")]
    (tmp_path / "manifest.json").write_text(render(entries), encoding="utf-8")
    back = read(tmp_path, lambda name: None)
    assert back.entries == {e.name: e for e in entries}
    assert json.loads(render(entries))["version"] == 2


def test_the_writer_gets_the_manifest_a_chunk_at_a_time_never_whole() -> None:
    """A build hands the manifest over as `Pieces` (made entry by entry each time it is read), and
    the transaction encodes a chunk at a time: a build of 10,000 folders held their manifest
    (about 5 MB) whole at its end, where its memory peaks."""
    from spark_dsl.targets.manifest import Pieces
    from spark_dsl.targets.transaction import _utf8_pieces

    entries = [
        Entry(f"dep-{i:04}", f"specs/é{i}.spark", {"serve.sh": HASH, "kubernetes.yaml": HASH}) for i in range(400)
    ]
    text = Pieces(entries)
    assert not hasattr(text, "__dict__") and type(text).__slots__ == ("entries",)  # no text kept
    assert str(text) == render(entries) == render_reference(entries)
    chunks = list(_utf8_pieces(text, size=4096))
    assert b"".join(chunks) == render(entries).encode("utf-8")
    longest_entry = max(len(piece.encode("utf-8")) for piece in text)
    assert len(chunks) > 10 and max(len(c) for c in chunks) < 4096 * 2 + longest_entry
    assert Pieces(list(reversed(entries))) == text  # the same manifest, whatever the order given
    assert Pieces(entries[1:]) != text
