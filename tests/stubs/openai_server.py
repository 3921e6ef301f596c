"""A stub of vLLM's OpenAI-compatible server, for the smoke and benchmark tests (issue 16).

It binds a loopback port, answers like ``vllm serve`` where a client can tell
(paths, status codes, JSON shapes), and records every request, so a test can
assert what a smoke check or a ``vllm bench serve`` run sent: paths, model
name, API key header, body sizes and the concurrency it reached.

In a test (threads in this process)::

    with OpenAIStubServer(model="llama", api_key="k") as server:
        urlopen(server.url + "/v1/models")
        server.records            # [RequestRecord, ...], in arrival order
        server.max_in_flight      # most requests that were in flight at once

As a process (a script under test, a Slurm job)::

    python tests/stubs/openai_server.py --model llama --api-key k --port 0 \
        --port-file PORTFILE --record-file records.jsonl [--seconds 60]

It prints nothing; the chosen port goes to --port-file once it listens, and
each request is appended to --record-file as one JSON line (the record's
fields, below). It stops after --seconds or on SIGTERM.

Routes and shapes, as vLLM 0.33.0 serves them (read from the vLLM 0.33.0
wheel, the same files as tag v0.33.0 of github.com/vllm-project/vllm):

* ``GET /v1/models``: ``{"object": "list", "data": [ModelCard]}`` with
  ``id`` (the served model name), ``object: "model"``, ``created``,
  ``owned_by: "vllm"``, ``root`` (the model path), ``parent``,
  ``max_model_len``, ``permission`` (vllm/entrypoints/openai/models/
  api_router.py and serving.py, protocol in vllm/entrypoints/serve/engine/
  protocol.py). ``vllm bench serve`` without ``--model`` takes
  ``data[0].id`` and ``data[0].root`` (vllm/benchmarks/serve.py).
* ``POST /v1/chat/completions`` and ``POST /v1/completions``: a JSON body
  (``Content-Type: application/json``, else 400: vllm/entrypoints/serve/
  utils/api_utils.py ``validate_json_request``); ``model`` optional, a name
  that is not served gives 404 ``NotFoundError`` "The model `X` does not
  exist." (vllm/entrypoints/serve/engine/serving.py); a malformed body gives
  400 ``{"error": {"message", "type": "Bad Request", "param", "code": 400}}``
  (serve/exception_handling/handlers/validation.py). The answer is a
  ``chat.completion`` / ``text_completion`` object with ``choices`` and
  ``usage``; with ``"stream": true`` server-sent events of
  ``chat.completion.chunk`` objects, a usage chunk when
  ``stream_options.include_usage`` is set, then ``data: [DONE]``, which is
  what ``vllm bench serve`` sends and parses (vllm/benchmarks/lib/
  endpoint_request_func.py).
* ``GET /health``: 200 with an empty body (serve/instrumentator/health.py).
* ``GET /metrics``: Prometheus text format (``text/plain; version=0.0.4``)
  with a few of vLLM's metric names and types (vllm/v1/metrics/loggers.py;
  counters carry prometheus_client's ``_total`` suffix), labelled
  ``model_name`` and ``engine`` as vLLM labels them; the values come from
  the requests this stub has served. docs/observability-research.md lists
  the names.
* ``GET /version``: ``{"version": "0.33.0"}``.
* API key: with ``api_key`` set, every path that starts with ``/v1``,
  ``/v2``, ``/inference`` or ``/cohere`` needs ``Authorization: Bearer KEY``
  (scheme case-insensitive), else 401 ``{"error": "Unauthorized"}``;
  ``/health``, ``/metrics`` and ``/version`` stay open
  (serve/middleware/authenticate.py, ``GUARDED_PREFIX``).
* An unknown path is 404 ``{"detail": "Not Found"}``, a wrong method 405
  ``{"detail": "Method Not Allowed"}`` (FastAPI's defaults).

* ``POST /tokenize`` is not served (404): ``vllm bench serve`` probes it (and
  ``/detokenize``) to align its prompts with the server's tokenizer and, on a
  404, prints a warning and skips the alignment (vllm/benchmarks/serve.py,
  ``_align_prompts_to_server_tokenizer``). It also reads ``/metrics`` before
  and after a run (for spec-decode counters).

Checked against the real client: vLLM 0.33.0's ``vllm.benchmarks.serve.main``
(``--backend openai-chat --max-concurrency 2 --num-prompts 6``, an API key
in OPENAI_API_KEY, a local tokenizer) ran against this stub with 6 of 6
requests successful; the records showed the key accepted on every request,
``stream: true``, ``max_tokens`` as given and at most 2 in flight.

Stub-only behaviour: with ``modalities`` lacking ``"image"`` an
``image_url`` content part is refused with 400 (vLLM refuses images for a
text-only model; its message differs). ``hold_until_in_flight=N`` holds
completions in batches of N (each waits until N are waiting together, at most
``hold_seconds``), so a test can prove a client's concurrency without timing:
a client capped at N that sends a multiple of N requests reaches exactly N in
flight, and one that exceeds its cap shows more.
``token_delay`` spaces the streamed tokens.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VLLM_VERSION = "0.33.0"
GUARDED_PREFIX = ("/v1", "/v2", "/inference", "/cohere")
UNGUARDED_GET = ("/health", "/metrics", "/version")
COMPLETION_PATHS = ("/v1/chat/completions", "/v1/completions")
DEFAULT_COMPLETION_TOKENS = 8
MAX_COMPLETION_TOKENS = 4096
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# vLLM's own histogram buckets for these two (vllm/v1/metrics/loggers.py), shortened.
LATENCY_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class RequestRecord:
    """One request as the stub saw it."""

    method: str
    path: str
    arrived: float  # time.time() when the headers were read
    in_flight: int  # requests in flight at its arrival, itself included
    body_bytes: int
    auth_present: bool  # an Authorization header was sent
    auth_ok: bool | None  # None: no API key configured
    model: str | None = None  # the body's "model", for POSTs
    stream: bool | None = None
    content_types: list[str] = field(default_factory=list)  # chat content part types, in order
    max_tokens: int | None = None
    status: int | None = None
    finished: float | None = None
    request_id: str | None = None  # the x-request-id header (vllm bench serve sends one)


class RequestRejected(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body)
        self.status = status
        self.body = body


def error_body(message: str, err_type: str, code: int, param: str | None = None) -> dict[str, Any]:
    """vLLM's ErrorResponse (vllm/entrypoints/serve/engine/protocol.py)."""
    return {"error": {"message": message, "type": err_type, "param": param, "code": code}}


def bad_request(message: str, param: str | None = None) -> RequestRejected:
    return RequestRejected(400, error_body(message, "Bad Request", 400, param))


class OpenAIStubServer:
    """The stub on 127.0.0.1 (``port=0``: a free port), served by threads."""

    def __init__(
        self,
        model: str = "stub-model",
        *,
        root: str | None = None,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        max_model_len: int = 8192,
        modalities: Iterable[str] = ("text", "image"),
        hold_until_in_flight: int = 0,
        hold_seconds: float = 10.0,
        token_delay: float = 0.0,
        record_file: str | os.PathLike[str] | None = None,
    ) -> None:
        self.model = model
        self.root = root if root is not None else model
        self.api_key = api_key
        self.max_model_len = max_model_len
        self.modalities = frozenset(modalities)
        self.hold_until_in_flight = hold_until_in_flight
        self.hold_seconds = hold_seconds
        self.token_delay = token_delay
        self.record_file = record_file
        self.records: list[RequestRecord] = []
        self._in_flight = 0
        self._hold_epoch = 0
        self._held = 0
        self._cond = threading.Condition()
        self._prompt_tokens = 0
        self._generation_tokens = 0
        self._latencies: list[float] = []
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> OpenAIStubServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name="openai-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> OpenAIStubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what was seen -----------------------------------------------------
    @property
    def max_in_flight(self) -> int:
        with self._cond:
            return max((r.in_flight for r in self.records), default=0)

    def requests_to(self, path: str) -> list[RequestRecord]:
        with self._cond:
            return [r for r in self.records if r.path == path]

    # -- bookkeeping used by the handler ----------------------------------
    def _arrive(self, method: str, path: str, headers: Any) -> RequestRecord:
        auth = headers.get("Authorization")
        with self._cond:
            self._in_flight += 1
            record = RequestRecord(
                method=method,
                path=path,
                arrived=time.time(),
                in_flight=self._in_flight,
                body_bytes=int(headers.get("Content-Length") or 0),
                auth_present=auth is not None,
                auth_ok=None if self.api_key is None else self._auth_ok(auth),
                request_id=headers.get("x-request-id"),
            )
            self.records.append(record)
            self._cond.notify_all()
        return record

    def _auth_ok(self, value: str | None) -> bool:
        scheme, _, token = (value or "").partition(" ")
        return scheme.lower() == "bearer" and token == self.api_key

    def _hold(self) -> None:
        """Hold completions in batches: each waits until hold_until_in_flight of them are
        waiting together (or hold_seconds pass), then the whole batch goes on. Counting the
        waiting ones, not the in-flight ones, keeps batches exact: a request that was let go
        but has not answered yet cannot let a lone newcomer through."""
        if self.hold_until_in_flight <= 0:
            return
        with self._cond:
            epoch = self._hold_epoch
            self._held += 1
            if self._held >= self.hold_until_in_flight:
                self._held = 0
                self._hold_epoch += 1
                self._cond.notify_all()
                return
            if not self._cond.wait_for(lambda: self._hold_epoch != epoch, self.hold_seconds):
                self._held -= 1  # gave up waiting: no longer part of the batch

    def _leave(self, record: RequestRecord, status: int) -> None:
        with self._cond:
            self._in_flight -= 1
            record.status = status
            record.finished = time.time()
            if status == 200 and record.path in COMPLETION_PATHS:
                self._latencies.append(record.finished - record.arrived)
            self._cond.notify_all()
            line = json.dumps(asdict(record)) + "\n" if self.record_file else None
        if line is not None and self.record_file is not None:
            with open(self.record_file, "a", encoding="utf-8") as f:
                f.write(line)

    def _count_tokens(self, prompt: int, generated: int) -> None:
        with self._cond:
            self._prompt_tokens += prompt
            self._generation_tokens += generated

    # -- responses -----------------------------------------------------------
    def models_body(self) -> dict[str, Any]:
        created = int(time.time())
        permission = {
            "id": f"modelperm-{uuid.uuid4().hex}",
            "object": "model_permission",
            "created": created,
            "allow_create_engine": False,
            "allow_sampling": True,
            "allow_logprobs": True,
            "allow_search_indices": False,
            "allow_view": True,
            "allow_fine_tuning": False,
            "organization": "*",
            "group": None,
            "is_blocking": False,
        }
        card = {
            "id": self.model,
            "object": "model",
            "created": created,
            "owned_by": "vllm",
            "root": self.root,
            "parent": None,
            "max_model_len": self.max_model_len,
            "permission": [permission],
        }
        return {"object": "list", "data": [card]}

    def metrics_text(self) -> str:
        with self._cond:
            running, prompt, generated = self._in_flight, self._prompt_tokens, self._generation_tokens
            latencies = list(self._latencies)
        labels = f'engine="0",model_name="{_escape_label(self.model)}"'
        lines = [
            "# HELP vllm:num_requests_running Number of requests in model execution batches.",
            "# TYPE vllm:num_requests_running gauge",
            f"vllm:num_requests_running{{{labels}}} {float(running)}",
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
            "# TYPE vllm:num_requests_waiting gauge",
            f"vllm:num_requests_waiting{{{labels}}} 0.0",
            "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
            "# TYPE vllm:kv_cache_usage_perc gauge",
            f"vllm:kv_cache_usage_perc{{{labels}}} 0.0",
            "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.",
            "# TYPE vllm:prompt_tokens_total counter",
            f"vllm:prompt_tokens_total{{{labels}}} {float(prompt)}",
            "# HELP vllm:generation_tokens_total Number of generation tokens processed.",
            "# TYPE vllm:generation_tokens_total counter",
            f"vllm:generation_tokens_total{{{labels}}} {float(generated)}",
        ]
        for name, doc in (
            ("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds."),
            ("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds."),
        ):
            lines += [f"# HELP {name} {doc}", f"# TYPE {name} histogram"]
            for bound in (*LATENCY_BUCKETS, float("inf")):
                le = "+Inf" if bound == float("inf") else repr(bound)
                count = sum(1 for x in latencies if x <= bound)
                lines.append(f'{name}_bucket{{{labels},le="{le}"}} {float(count)}')
            lines.append(f"{name}_count{{{labels}}} {float(len(latencies))}")
            lines.append(f"{name}_sum{{{labels}}} {sum(latencies)}")
        return "\n".join(lines) + "\n"

    def check_completion(self, path: str, body: Any, record: RequestRecord) -> tuple[int, int]:
        """Validate a completion request like vLLM; returns (prompt tokens, completion tokens)."""
        if not isinstance(body, dict):
            raise bad_request("1 validation error:\n  body: Input should be a valid dictionary", "body")
        model = body.get("model")
        record.model = model if isinstance(model, str) else None
        record.stream = bool(body.get("stream", False))
        max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
        if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool)):
            raise bad_request("1 validation error:\n  max_tokens: Input should be a valid integer", "max_tokens")
        if isinstance(max_tokens, int) and max_tokens < 1:
            raise bad_request(f"max_tokens must be at least 1, got {max_tokens}.", "max_tokens")
        record.max_tokens = max_tokens
        if path == "/v1/chat/completions":
            prompt_tokens = self._check_messages(body.get("messages"), record)
        else:
            prompt_tokens = _check_prompt(body.get("prompt"))
        if model is not None and model != self.model:
            raise RequestRejected(
                404,
                error_body(
                    f"The model `{model}` does not exist. Valid aliases: {self.model}.", "NotFoundError", 404, "model"
                ),
            )
        completion = min(max_tokens or DEFAULT_COMPLETION_TOKENS, MAX_COMPLETION_TOKENS)
        return prompt_tokens, completion

    def _check_messages(self, messages: Any, record: RequestRecord) -> int:
        if not isinstance(messages, list) or not messages:
            raise bad_request("1 validation error:\n  messages: Field required", "messages")
        words = 0
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise bad_request(f"1 validation error:\n  messages.{i}: role is required", f"messages.{i}")
            content = message.get("content")
            if isinstance(content, str):
                record.content_types.append("text")
                words += len(content.split())
                continue
            if not isinstance(content, list):
                raise bad_request(f"1 validation error:\n  messages.{i}.content: invalid content", "content")
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text" and isinstance(part.get("text"), str):
                    words += len(part["text"].split())
                elif kind == "image_url" and isinstance((part.get("image_url") or {}).get("url"), str):
                    if "image" not in self.modalities:
                        raise bad_request(f"{self.model} does not accept image input (stub: modalities)", "content")
                    words += 16
                else:
                    raise bad_request(f"1 validation error:\n  messages.{i}.content: unknown part {kind!r}", "content")
                record.content_types.append(kind)
        return max(words, 1)

    def completion_body(self, path: str, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
        usage = {
            "prompt_tokens": prompt_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "completion_tokens": completion_tokens,
            "prompt_tokens_details": None,
        }
        text = _text(completion_tokens)
        if path == "/v1/chat/completions":
            return {
                "id": f"chatcmpl-{uuid.uuid4().hex}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text, "refusal": None, "reasoning": None},
                        "logprobs": None,
                        "finish_reason": "length",
                        "stop_reason": None,
                    }
                ],
                "usage": usage,
            }
        return {
            "id": f"cmpl-{uuid.uuid4().hex}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": "length", "stop_reason": None}],
            "usage": usage,
        }

    def stream_events(
        self, path: str, prompt_tokens: int, completion_tokens: int, include_usage: bool
    ) -> Iterator[dict[str, Any]]:
        chat = path == "/v1/chat/completions"
        base = {
            "id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}",
            "object": "chat.completion.chunk" if chat else "text_completion",
            "created": int(time.time()),
            "model": self.model,
        }
        for i in range(completion_tokens):
            if self.token_delay:
                time.sleep(self.token_delay)
            last = i == completion_tokens - 1
            if chat:
                delta: dict[str, Any] = {"content": "tok "}
                if i == 0:
                    delta["role"] = "assistant"
                choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None}
            else:
                choice = {"index": 0, "text": "tok ", "logprobs": None}
            choice["finish_reason"] = "length" if last else None
            yield {**base, "choices": [choice]}
        if include_usage:
            usage = {
                "prompt_tokens": prompt_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "completion_tokens": completion_tokens,
            }
            yield {**base, "choices": [], "usage": usage}


def _text(tokens: int) -> str:
    return ("tok " * tokens).strip()


def _check_prompt(prompt: Any) -> int:
    if isinstance(prompt, str):
        return max(len(prompt.split()), 1)
    if isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        return max(sum(len(p.split()) for p in prompt), 1)
    if isinstance(prompt, list) and prompt and all(isinstance(p, int) for p in prompt):
        return len(prompt)
    raise bad_request("1 validation error:\n  prompt: Field required", "prompt")


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _handler_for(server: OpenAIStubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "uvicorn"  # what vLLM's server says in its Server header
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read the records
            pass

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            path = self.path.split("?", 1)[0]
            self._record = server._arrive(method, path, self.headers)
            self._left = False
            try:
                self._route(method, path, self._record)
            finally:
                self._leave(500)

        def _leave(self, status: int) -> None:
            """The request is answered: called just before its last bytes are written, so a
            client that waits for the answer before its next request is never seen overlapping
            itself, and its record is complete when it reads the answer."""
            if not self._left:
                self._left = True
                server._leave(self._record, status)

        def _route(self, method: str, path: str, record: RequestRecord) -> int:
            raw = self.rfile.read(record.body_bytes) if record.body_bytes else b""
            if path.startswith(GUARDED_PREFIX) and server.api_key is not None and not record.auth_ok:
                return self._json(401, {"error": "Unauthorized"})
            routes = {"/v1/models": "GET", "/health": "GET", "/metrics": "GET", "/version": "GET"}
            routes.update(dict.fromkeys(COMPLETION_PATHS, "POST"))
            if path not in routes:
                return self._json(404, {"detail": "Not Found"})
            if routes[path] != method:
                return self._json(405, {"detail": "Method Not Allowed"})
            if path == "/health":
                return self._send(200, b"", None)
            if path == "/metrics":
                return self._send(200, server.metrics_text().encode(), PROMETHEUS_CONTENT_TYPE)
            if path == "/version":
                return self._json(200, {"version": VLLM_VERSION})
            if path == "/v1/models":
                return self._json(200, server.models_body())
            return self._complete(path, raw, record)

        def _complete(self, path: str, raw: bytes, record: RequestRecord) -> int:
            try:
                media = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
                if media != "application/json":
                    raise bad_request(
                        "1 validation error:\n  Unsupported Media Type: Only 'application/json' is allowed"
                    )
                try:
                    body = json.loads(raw)
                except ValueError as e:
                    raise bad_request(f"1 validation error:\n  body: JSON decode error ({e.msg})", "body") from e
                prompt_tokens, completion_tokens = server.check_completion(path, body, record)
            except RequestRejected as e:
                return self._json(e.status, e.body)
            server._hold()
            server._count_tokens(prompt_tokens, completion_tokens)
            if not record.stream:
                return self._json(200, server.completion_body(path, prompt_tokens, completion_tokens))
            options = body.get("stream_options") or {}
            include_usage = bool(options.get("include_usage")) if isinstance(options, dict) else False
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for event in server.stream_events(path, prompt_tokens, completion_tokens, include_usage):
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self._leave(200)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            return 200

        def _json(self, status: int, body: dict[str, Any]) -> int:
            return self._send(status, json.dumps(body).encode(), "application/json")

        def _send(self, status: int, data: bytes, content_type: str | None) -> int:
            self.send_response(status)
            if content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self._leave(status)
            self.end_headers()
            self.wfile.write(data)
            return status

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="stub-model", help="the served model name")
    parser.add_argument("--root", default=None, help="the model path /v1/models reports (default: the name)")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", default=None, help="written with the bound port once listening")
    parser.add_argument("--record-file", default=None, help="one JSON line per request")
    parser.add_argument("--modalities", default="text,image")
    parser.add_argument("--hold-until-in-flight", type=int, default=0)
    parser.add_argument("--token-delay", type=float, default=0.0)
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long")
    args = parser.parse_args(argv)
    server = OpenAIStubServer(
        args.model,
        root=args.root,
        api_key=args.api_key,
        host=args.host,
        port=args.port,
        modalities=args.modalities.split(","),
        hold_until_in_flight=args.hold_until_in_flight,
        token_delay=args.token_delay,
        record_file=args.record_file,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server.start()
    if args.port_file:
        tmp = f"{args.port_file}.tmp"
        with open(tmp, "w") as f:
            f.write(f"{server.port}\n")
        os.replace(tmp, args.port_file)  # a reader never sees a half-written port
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait(args.seconds)
    server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
