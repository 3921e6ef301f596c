"""Drives a real `spark lsp` process with raw bytes, for frames no well-behaved client would send.

pytest-lsp only speaks well-formed JSON-RPC; the hostile-input tests need to write
arbitrary bytes to the server's stdin and read whatever comes back on its stdout.

One process serves many tests in turn (conftest.py): `begin` starts a test's view of it
(its own folder, requests, messages and slice of the log) and `end` closes the documents
the test opened, so no test sees another's documents, answers or log lines.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import resource
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

# A regression that reads /dev/zero or allocates a huge body must fail the test, not
# take the machine's memory with it.
ADDRESS_SPACE = 1024**3
# How long a test waits for an answer before calling the server wedged (a hang guard, not
# a speed requirement: answers normally take milliseconds).
WEDGED = float(__import__("os").environ.get("RAW_WEDGED", "30"))


def frame(message: Any) -> bytes:
    """One message framed as the base protocol says."""
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def raw_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


class RawServer:
    """A `spark lsp` process, its replies collected by a thread as they arrive.

    A shared process (`shared=True`) serves one test after another: its requests are
    numbered from a million up, so they never take an id a test writes by hand, and the
    end of a test's session is marked by a request that leaves the server serving."""

    def __init__(self, root: Path, env: dict[str, str], shared: bool = False) -> None:
        self.root = root
        self.shared = shared
        self.stderr_path = root / "server-stderr.log"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "spark_dsl", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=root,
            env=env,
            preexec_fn=_limit_memory,
        )
        self._ids = itertools.count(1_000_000 if shared else 1)
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self._unclaimed: list[dict[str, Any]] = []
        self.sent_ids: list[int] = []
        self.opened: list[str] = []
        self._log_start = 0
        self.initialize_reply: dict[str, Any] | None = None
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    # ---- the wire --------------------------------------------------------------------

    def _read(self, stdout: BinaryIO) -> None:
        """Parses the server's frames (it is trusted to frame correctly) until it closes."""
        while True:
            length = None
            while True:
                line = stdout.readline()
                if not line:
                    self._inbox.put(None)
                    return
                if line == b"\r\n":
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            assert length is not None
            self._inbox.put(json.loads(stdout.read(length)))

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def _next(self) -> dict[str, Any]:
        try:
            message = self._inbox.get(timeout=WEDGED)
        except queue.Empty:
            raise AssertionError(f"no message from the server in {WEDGED:.0f} s: it is wedged") from None
        if message is None:
            raise AssertionError(f"the server closed its output (exit code {self.proc.poll()})")
        self.seen.append(message)
        return message

    def take(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first message, in order of arrival, that is wanted and not yet taken."""
        for message in self._unclaimed:
            if wanted(message):
                self._unclaimed.remove(message)
                return message
        while not wanted(message := self._next()):
            self._unclaimed.append(message)
        return message

    # ---- requests ----------------------------------------------------------------------

    def request(self, method: str, params: Any = None) -> int:
        msg_id = next(self._ids)
        self.sent_ids.append(msg_id)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(frame(message))
        return msg_id

    def notify(self, method: str, params: Any) -> None:
        self._track(method, params)
        self.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    def _track(self, method: str, params: Any) -> None:
        """Notes the documents left open, for `end` to close."""
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if not isinstance(uri, str):
            return
        if method == "textDocument/didOpen" and uri not in self.opened:
            self.opened.append(uri)
        elif method == "textDocument/didClose" and uri in self.opened:
            self.opened.remove(uri)

    def response(self, msg_id: int | str | None) -> dict[str, Any]:
        """The next response with this id (null: an error about a message without one)."""
        return self.take(lambda m: "method" not in m and m.get("id") == msg_id)

    def call(self, method: str, params: Any = None) -> dict[str, Any]:
        return self.response(self.request(method, params))

    def error(self, msg_id: int | str | None) -> dict[str, Any]:
        reply = self.response(msg_id)
        assert "error" in reply, f"expected an error reply, got {reply}"
        error = reply["error"]
        assert isinstance(error, dict)
        return error

    def initialize(self) -> dict[str, Any]:
        reply = self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": self.root.as_uri(),
                "capabilities": {},
                "workspaceFolders": [{"uri": self.root.as_uri(), "name": "project"}],
            },
        )
        self.notify("initialized", {})
        self.initialize_reply = reply
        return reply

    def open(self, name: str, text: str) -> str:
        uri = (self.root / name).as_uri()
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "spark", "version": 1, "text": text}},
        )
        return uri

    def diagnostics(self, uri: str) -> list[dict[str, Any]]:
        message = self.take(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        found = message["params"]["diagnostics"]
        assert isinstance(found, list)
        return found

    def received(self) -> list[dict[str, Any]]:
        """Every message the server has sent so far, waiting for none."""
        while True:
            try:
                message = self._inbox.get_nowait()
            except queue.Empty:
                return self.seen
            if message is not None:
                self.seen.append(message)

    # ---- the end -----------------------------------------------------------------------

    def settle(self) -> None:
        """Returns once every earlier message has been answered: the server reads in order and
        answers each request before it reads the next. An own server is shut down; a shared
        one is asked about a document no test opens (answered null, changing nothing)."""
        if self.shared:
            reply = self.call("textDocument/hover", position_params("untitled:settle"))
            assert reply.get("result", "no result") is None, f"the shared server stopped serving: {reply}"
        else:
            self.call("shutdown")

    def stderr(self) -> str:
        """The server's log since the test began."""
        with self.stderr_path.open("rb") as log:
            log.seek(self._log_start)
            return log.read().decode("utf-8", errors="replace")

    # ---- one test after another on a shared process ------------------------------------

    def begin(self, root: Path) -> RawServer:
        """Starts a test's session: its folder, and no message, request or log line before it.

        The peak memory the kernel reports is reset too, to this test's own peak."""
        self.settle()
        self.root = root
        self.seen, self._unclaimed, self.sent_ids, self.opened = [], [], [], []
        self._log_start = self.stderr_path.stat().st_size
        Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5", encoding="ascii")
        return self

    def end(self) -> None:
        """Closes the documents the test left open, so later tests check theirs alone."""
        for uri in list(self.opened):
            self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        self.settle()

    def serving(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._stderr.close()


# ---- what every hostile-input test checks -------------------------------------------

TYPO = """\
deployment muse {
  model       = muse-spark-open
  accelerator = b200
  checkpont   = nvfp4
}
"""


def start_server(root: Path, shared: bool = False) -> RawServer:
    """A server in `root`, its rule docs cached inside it, not yet initialized."""
    return RawServer(root, dict(os.environ, XDG_CACHE_HOME=str(root / "cache")), shared)


_checks = itertools.count()


def open_typo(server: RawServer) -> str:
    return server.open(f"after-{next(_checks)}.spark", TYPO)


def assert_still_serving(server: RawServer, uri: str | None = None) -> None:
    """A normal document (`uri`, already sent, or a new one) gets its diagnostics, located where they belong."""
    (diagnostic,) = server.diagnostics(uri or open_typo(server))
    assert diagnostic["code"] == "SPK101"
    assert diagnostic["range"]["start"] == {"line": 3, "character": 2}


def assert_clean_session(server: RawServer, raw_ids: tuple[int | str, ...] = ()) -> None:
    """Every request got exactly one answer, and the log holds no traceback."""
    server.settle()  # answered in order: every earlier answer has been sent
    answers = Counter(m["id"] for m in server.received() if "method" not in m and m.get("id") is not None)
    for msg_id in (*server.sent_ids, *raw_ids):
        assert answers[msg_id] == 1, f"request {msg_id!r} got {answers[msg_id]} answers"
    assert "Traceback" not in server.stderr()


def position_params(uri: str, line: int = 0, character: int = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
