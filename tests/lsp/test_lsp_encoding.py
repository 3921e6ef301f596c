"""Position encoding: UTF-32 when the client offers it, else UTF-16, whatever else it prefers."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_editor import Editor, at
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.asyncio

EMOJI = 'profile p {\n  serve { env { A = "🙂" } } bogus = 1\n}\n'


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "spark_dsl", "lsp"]),
    params=[["utf-8", "utf-32", "utf-16"], ["utf-8", "utf-16"], None],
)
async def negotiated(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[None]:
    capabilities = types.ClientCapabilities(general=types.GeneralClientCapabilities(position_encodings=request.param))
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=capabilities, root_uri=tmp_path.as_uri())
    )
    lsp_client.offered = request.param  # type: ignore[attr-defined]
    lsp_client.chosen = result.capabilities.position_encoding  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_the_server_picks_utf32_only_when_offered_and_uses_it(negotiated: LanguageClient, tmp_path: Path) -> None:
    offered = negotiated.offered  # type: ignore[attr-defined]
    chosen = negotiated.chosen  # type: ignore[attr-defined]
    utf32 = offered is not None and "utf-32" in offered
    assert chosen == ("utf-32" if utf32 else "utf-16")
    (d,) = await Editor(negotiated, tmp_path).open("e.spark", EMOJI)
    # `bogus` starts at code point 28; in UTF-16 the emoji before it counts twice.
    start = 28 if utf32 else 29
    assert d.range == types.Range(start=at(1, start), end=at(1, start + 5))
