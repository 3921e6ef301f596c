"""pytest plugin: fixtures for the real validators and the test Slurm cluster.

Load it from tests/conftest.py with ``pytest_plugins = ["conftest_validators"]``
(tests/ has no __init__.py, so pytest puts tests/ on sys.path).

Fixtures:
  slurm_cluster  session: a running 2-node Slurm cluster (tests/slurm_cluster.py),
                 stopped at the end of the session; teardown fails if a process
                 of it survives. A missing Slurm/munge is a failure, not a skip
                 (deselect with ``-m "not slurm"`` for a quick local run).
  vllm_stub      function: record dir + environment that puts tests/stubs
                 (vllm, vllm-router) first on PATH; ``.records()`` reads them.
  openai_stub    function: a factory, ``openai_stub(model=..., api_key=...,
                 hold_until_in_flight=...)`` -> a started stub OpenAI-compatible
                 server on loopback (tests/stubs/openai_server.py: ``.url``,
                 ``.records``, ``.max_in_flight``), stopped at teardown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

try:
    from .slurm_cluster import SlurmCluster
    from .stubs.openai_server import OpenAIStubServer
    from .validators import load_stub_records, stub_env
except ImportError:
    from slurm_cluster import SlurmCluster
    from stubs.openai_server import OpenAIStubServer
    from validators import load_stub_records, stub_env


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"), nodes=2)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop(check=True)


@dataclass
class VllmStub:
    dir: Path
    env: dict[str, str] = field(repr=False)

    def records(self, prog: str | None = "vllm") -> list[dict]:
        """Recorded invocations, ordered by (SLURM_NODEID, SLURM_PROCID, start)."""
        return load_stub_records(self.dir, prog)

    def with_env(self, **extra: str) -> dict[str, str]:
        return dict(self.env, **extra)


@pytest.fixture
def vllm_stub(tmp_path) -> VllmStub:
    rec = tmp_path / "stub-records"
    rec.mkdir()
    return VllmStub(rec, stub_env(rec, base=dict(os.environ)))


@pytest.fixture
def openai_stub():
    """Start stub OpenAI-compatible servers (keyword arguments of OpenAIStubServer);
    every one started is stopped at teardown."""
    started: list[OpenAIStubServer] = []

    def start(model: str = "stub-model", **options) -> OpenAIStubServer:
        server = OpenAIStubServer(model, **options).start()
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()
