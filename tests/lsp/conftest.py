"""`spark lsp` processes driven over stdio: by pytest-lsp's client, as an editor drives them, and
with raw bytes (raw_lsp.py), for input no real client sends.

A server takes a second or two to start (it imports its modules, then checks a spec to warm
up), so one process of each kind serves every test that does not need a server of its own:

- each test works in a folder of its own (`tmp_path` for raw bytes; for the editor,
  `workspace`, inside the folder its server was opened on), and the documents it opened are
  closed when it ends, so a test sees only its own documents, answers and log lines;
- a test that fails, or leaves the server dead, hands it back: the next test gets a new one.

Tests of `initialize` itself and of what a server does before it start servers of their own,
as do tests of file names as the server shows them (relative to the folder it was opened on)
when that folder must be the test's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
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

FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed:
        item.stash[FAILED] = True
    return report


def _failed(request: pytest.FixtureRequest) -> bool:
    return request.node.stash.get(FAILED, False)


def _project(folder: Path) -> Path:
    """The project the editor has open: a spec importing a profile file."""
    (folder / "profiles").mkdir(parents=True)
    (folder / "profiles" / "common.spark").write_text(COMMON, encoding="utf-8")
    (folder / "muse.spark").write_text(SPEC, encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def _rule_doc_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A server writes rule docs under XDG_CACHE_HOME: a server a test starts keeps them inside
    # the test's folder (the shared ones keep theirs in a folder of their own).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


# ---- the editor's server: pytest-lsp's client ---------------------------------------------------


class EditorServer:
    """The shared server pytest-lsp's client drives, opened on `root` (a project as `workspace`)."""

    def __init__(self, folder: Path) -> None:
        self.root = _project(folder / "project")
        self.cache = folder / "cache"
        self.client: LanguageClient | None = None

    async def start(self) -> LanguageClient:
        if self.client is not None:
            return self.client
        env = dict(os.environ, XDG_CACHE_HOME=str(self.cache))
        config = ClientServerConfig(server_command=[sys.executable, "-m", "spark_dsl", "lsp"], server_env=env)
        client = await config.start()
        assert isinstance(client, LanguageClient)
        registrations: list[types.Registration] = []

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            registrations.extend(params.registrations)

        client.registrations = registrations  # type: ignore[attr-defined]
        params = types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=self.root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name="project")],
        )
        await client.initialize_session(params)
        self.client = client
        return client

    async def stop(self, clean: bool) -> None:
        """Ends the server: with shutdown and exit once every test is done, else by a kill."""
        client, self.client = self.client, None
        if client is None:
            return
        process = client._server  # pygls's handle on the process it started
        if clean:
            await client.shutdown_session()
        elif process is not None and process.returncode is None:
            process.kill()  # it may be wedged, or waiting for an `exit` it will never read
        await client.stop()  # waits for the process to end


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def _editor_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EditorServer]:
    shared = EditorServer(tmp_path_factory.mktemp("editor-server"))
    yield shared
    await shared.stop(clean=True)


@pytest.fixture
def workspace(_editor_server: EditorServer, tmp_path: Path) -> Path:
    """The test's own project, a spec importing a profile file, in a folder of its own inside the
    folder the shared server was opened on (as a project is inside the folder an editor opened)."""
    return _project(_editor_server.root / "tests" / tmp_path.name)


@pytest_asyncio.fixture(loop_scope="session")
async def client(_editor_server: EditorServer, request: pytest.FixtureRequest) -> AsyncIterator[LanguageClient]:
    """The client of the shared server, initialized as Visual Studio Code initializes it."""
    yield await _editor_server.start()
    if _failed(request):
        await _editor_server.stop(clean=False)


@pytest_asyncio.fixture(loop_scope="session")
async def editor(client: LanguageClient, workspace: Path, request: pytest.FixtureRequest) -> AsyncIterator[Editor]:
    """An editor on the test's own project, served by the shared server."""
    opened = Editor(client, workspace)
    yield opened
    if not _failed(request):
        await opened.close_all()


@pytest_asyncio.fixture(loop_scope="session")
async def root_editor(
    client: LanguageClient, _editor_server: EditorServer, request: pytest.FixtureRequest
) -> AsyncIterator[Editor]:
    """An editor on the project the shared server was opened on, for tests of file names as the
    server shows them (relative to that folder). Its files are only read: tests edit buffers."""
    opened = Editor(client, _editor_server.root)
    yield opened
    if not _failed(request):
        await opened.close_all()


# ---- raw bytes -------------------------------------------------------------------------------


class RawServers:
    """The shared raw server, started when first wanted and again after a test that failed."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.started: RawServer | None = None

    def get(self) -> RawServer:
        if self.started is not None and not self.started.serving():
            self.drop()
        if self.started is None:
            self.started = start_server(self.factory.mktemp("raw-server"), shared=True)
            self.started.initialize()
        return self.started

    def drop(self) -> None:
        started, self.started = self.started, None
        if started is not None:
            started.close()


@pytest.fixture(scope="session")
def _raw_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServers]:
    servers = RawServers(tmp_path_factory)
    yield servers
    servers.drop()


@pytest.fixture
def server(_raw_servers: RawServers, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[RawServer]:
    """An initialized `spark lsp` process driven with raw bytes, for input no real client sends,
    shared with other tests: the test's documents are in `tmp_path`, and its view of the
    server starts with the test (raw_lsp.RawServer.begin)."""
    shared = _raw_servers.get()
    try:
        shared.begin(tmp_path)
    except BaseException:
        _raw_servers.drop()  # wedged or gone since the last test: the next test starts another
        raise
    yield shared
    if _failed(request) or not shared.serving():
        _raw_servers.drop()
    else:
        shared.end()


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[RawServer]:
    """An initialized `spark lsp` process of the test's own, opened on `tmp_path`."""
    started = start_server(tmp_path)
    try:
        started.initialize()
        yield started
    finally:
        started.close()
