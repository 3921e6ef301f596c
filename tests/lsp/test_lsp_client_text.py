"""The client's view of a buffer (spark_dsl.lsp.client_text): the one edit `source.fixAll.spark`
sends reads back, under the protocol's line model, as the fixed text."""

from __future__ import annotations

import random

import pytest

from spark_dsl.lsp.client_text import ClientLines, minimal_edit


@pytest.mark.parametrize("utf16", [True, False])
def test_the_fix_all_edit_turns_the_buffer_into_the_fixed_text(utf16: bool) -> None:
    # Whatever the two texts (line breaks of all kinds, characters outside the BMP), the one edit
    # read back as the client reads positions gives the fixed text.
    rng = random.Random(31)
    alphabet = ["a", "b", " ", "\n", "\r", "\r\n", "\x0c", "\U0001f600", "é"]
    for _ in range(2000):
        old = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        new = "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        if rng.random() < 0.5:
            new = old[: rng.randrange(len(old) + 1)] + new + old[rng.randrange(len(old) + 1) :]
        edit = minimal_edit(old, new, utf16)
        if edit is None:
            assert old == new
            continue
        lines = ClientLines(old, utf16)
        start, end = lines.offset(edit.range.start), lines.offset(edit.range.end)
        assert old[:start] + edit.new_text + old[end:] == new, (old, new, edit)
