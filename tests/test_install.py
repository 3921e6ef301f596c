"""A plain `pip install .` into a clean venv gives a working `spark`, language server included."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

REPO = Path(__file__).resolve().parent.parent
# A guard against a wedged server, not a speed requirement (it answers in about a second).
WEDGED = 120


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _messages(stream: IO[bytes], out: queue.Queue[dict[str, Any] | None]) -> None:
    """Reads base-protocol frames until the stream closes (then puts None)."""
    while True:
        length = None
        while (line := stream.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if not line or length is None:
            out.put(None)
            return
        out.put(json.loads(stream.read(length)))


def _answer(replies: queue.Queue[dict[str, Any] | None], request_id: int) -> dict[str, Any]:
    while True:
        message = replies.get(timeout=WEDGED)
        assert message is not None, "the server closed its output before answering"
        if message.get("id") == request_id and "method" not in message:
            return message


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bin` folder of a fresh venv holding spark-dsl installed the README's way (not editable)."""
    venv = tmp_path_factory.mktemp("clean") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(REPO)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return venv / "bin"


def test_the_language_server_answers_initialize_after_a_plain_install(installed: Path, tmp_path: Path) -> None:
    server = subprocess.Popen(
        [str(installed / "spark"), "lsp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert server.stdin is not None and server.stdout is not None
    replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
    threading.Thread(target=_messages, args=(server.stdout, replies), daemon=True).start()
    try:
        initialize = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
        server.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}))
        server.stdin.flush()
        reply = _answer(replies, 1)
        assert "error" not in reply, reply
        capabilities = reply["result"]["capabilities"]
        assert capabilities["hoverProvider"] and capabilities["documentFormattingProvider"]
        assert "completionProvider" in capabilities
        server.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        server.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        server.stdin.flush()
        assert _answer(replies, 2)["result"] is None
        server.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.flush()
        assert server.wait(timeout=WEDGED) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_the_installed_command_checks_explains_and_lists_codes(installed: Path) -> None:
    checked = subprocess.run([str(installed / "spark"), "check", "examples"], cwd=REPO, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    explained = subprocess.run([str(installed / "spark"), "explain", "SPK212"], capture_output=True, text=True)
    assert explained.returncode == 0 and "Failing example:" in explained.stdout
    listed = subprocess.run([str(installed / "spark"), "explain", "--list"], capture_output=True, text=True)
    assert listed.returncode == 0 and "SPK212" in listed.stdout


def test_a_server_without_its_packages_says_how_to_install_them(tmp_path: Path) -> None:
    # An install made with --no-deps lacks pygls: the message names the packages and their pins
    # as spark-dsl's own metadata gives them, and no extra (there is none).
    hide = (
        "import sys\n"
        "sys.modules['pygls'] = sys.modules['lsprotocol'] = None  # what an install without them looks like\n"
        "from spark_dsl.cli import main\n"
        "main(['lsp'])\n"
    )
    result = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    assert re.search(r"pip install 'pygls(<3,>=2|>=2,<3)' 'lsprotocol>=2025\.0\.0'", result.stderr), result.stderr
    assert "[lsp]" not in result.stderr
    assert "Traceback" not in result.stderr
