"""A `spark lsp` process per test, driven over stdio by pytest-lsp, in a project of its own."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_editor import Editor
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from raw_lsp import RawServer, start_server

COMMON = """\
# Settings shared by every deployment of the team
profile common {
  serve {
    port    = 8000
    api_key = secret("vllm-api-key")
  }
}
"""

SPEC = """\
import "profiles/common.spark"

deployment muse-b200 extends common {
  model       = muse-spark-open
  accelerator = b200
  checkpoint  = nvfp4
}
"""


def _config() -> ClientServerConfig:
    # The server inherits this process's environment when each test starts it.
    return ClientServerConfig(server_command=[sys.executable, "-m", "spark_dsl", "lsp"])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The project the editor has open: a spec importing a profile file."""
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "common.spark").write_text(COMMON, encoding="utf-8")
    (tmp_path / "muse.spark").write_text(SPEC, encoding="utf-8")
    return tmp_path


@pytest.fixture(autouse=True)
def _rule_doc_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The server writes rule docs under XDG_CACHE_HOME: keep them inside the test's folder.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest_lsp.fixture(config=_config())
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[None]:
    registrations: list[types.Registration] = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    lsp_client.registrations = registrations  # type: ignore[attr-defined]
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="project")],
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def editor(client: LanguageClient, workspace: Path) -> Editor:
    return Editor(client, workspace)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    """An initialized `spark lsp` process driven with raw bytes, for input no real client sends."""
    started = start_server(tmp_path)
    try:
        started.initialize()
        yield started
    finally:
        started.close()
