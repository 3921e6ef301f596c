"""The stub OpenAI-compatible server (tests/stubs/openai_server.py) over real loopback sockets.

The smoke and benchmark jobs of issue 16 will be run against it, so these
tests pin what it must do: vLLM 0.33.0's paths, status codes and JSON shapes,
the API-key check, and records that show what a client sent and how many of
its requests were in flight at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

try:
    from .stubs.openai_server import OpenAIStubServer
except ImportError:
    from stubs.openai_server import OpenAIStubServer

STUB = Path(__file__).resolve().parent / "stubs" / "openai_server.py"
IMAGE = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def call(
    url: str,
    body: Any = None,
    key: str | None = None,
    method: str | None = None,
    content_type: str = "application/json",
) -> tuple[int, bytes, dict[str, str]]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", content_type)
    if key is not None:
        req.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def chat(content: Any, model: str | None = "llama", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": content}], "max_tokens": 4, **extra}
    if model is not None:
        body["model"] = model
    return body


@pytest.fixture
def server():
    with OpenAIStubServer("llama", root="/models/llama-3") as s:
        yield s


def test_models_lists_the_served_name_as_vllm_does(server: OpenAIStubServer) -> None:
    status, data, headers = call(server.url + "/v1/models")
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    body = json.loads(data)
    assert body["object"] == "list"
    [card] = body["data"]
    assert (card["id"], card["object"], card["owned_by"], card["root"]) == ("llama", "model", "vllm", "/models/llama-3")
    assert card["max_model_len"] == 8192
    assert card["permission"][0]["object"] == "model_permission"
    [record] = server.records
    assert (record.method, record.path, record.status, record.auth_present, record.auth_ok) == (
        "GET",
        "/v1/models",
        200,
        False,
        None,
    )


def test_chat_completion_with_text_answers_and_records(server: OpenAIStubServer) -> None:
    payload = json.dumps(chat("Say hello.")).encode()
    status, data, _ = call(server.url + "/v1/chat/completions", payload)
    assert status == 200
    body = json.loads(data)
    assert body["object"] == "chat.completion"
    assert body["model"] == "llama"
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert body["choices"][0]["message"]["content"] == "tok tok tok tok"
    assert body["usage"] == {
        "prompt_tokens": 2,
        "total_tokens": 6,
        "completion_tokens": 4,
        "prompt_tokens_details": None,
    }
    [record] = server.records
    assert record.path == "/v1/chat/completions"
    assert (record.model, record.body_bytes, record.content_types, record.max_tokens) == (
        "llama",
        len(payload),
        ["text"],
        4,
    )
    assert record.stream is False
    assert record.finished is not None and record.finished >= record.arrived


def test_chat_completion_with_an_image_part(server: OpenAIStubServer) -> None:
    parts = [{"type": "text", "text": "What is in this image?"}, {"type": "image_url", "image_url": {"url": IMAGE}}]
    status, data, _ = call(server.url + "/v1/chat/completions", chat(parts))
    assert status == 200, data
    assert server.records[0].content_types == ["text", "image_url"]


def test_an_image_is_refused_by_a_text_only_model() -> None:
    parts = [{"type": "image_url", "image_url": {"url": IMAGE}}]
    with OpenAIStubServer("llama", modalities=("text",)) as s:
        status, data, _ = call(s.url + "/v1/chat/completions", chat(parts))
    assert status == 400
    assert json.loads(data)["error"]["code"] == 400


def test_the_model_may_be_left_out_but_not_misnamed(server: OpenAIStubServer) -> None:
    assert call(server.url + "/v1/chat/completions", chat("hi", model=None))[0] == 200
    status, data, _ = call(server.url + "/v1/chat/completions", chat("hi", model="llamaa"))
    assert status == 404
    assert json.loads(data) == {
        "error": {
            "message": "The model `llamaa` does not exist. Valid aliases: llama.",
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }
    }
    assert [r.model for r in server.records] == [None, "llamaa"]


@pytest.mark.parametrize(
    ("body", "content_type", "param"),
    [
        (b"{not json", "application/json", "body"),
        ({"model": "llama"}, "application/json", "messages"),
        ({"model": "llama", "messages": [{"content": "no role"}]}, "application/json", "messages.0"),
        (chat("hi", max_tokens="four"), "application/json", "max_tokens"),
        (chat("hi"), "text/plain", None),
    ],
    ids=["bad-json", "no-messages", "no-role", "max-tokens-type", "not-json-media-type"],
)
def test_a_malformed_request_is_400_in_vllms_error_shape(
    server: OpenAIStubServer, body: Any, content_type: str, param: str | None
) -> None:
    status, data, _ = call(server.url + "/v1/chat/completions", body, content_type=content_type)
    assert status == 400
    error = json.loads(data)["error"]
    assert (error["type"], error["code"], error["param"]) == ("Bad Request", 400, param)
    assert server.records[0].status == 400


def test_completions_endpoint_takes_a_prompt(server: OpenAIStubServer) -> None:
    status, data, _ = call(server.url + "/v1/completions", {"model": "llama", "prompt": "a b c", "max_tokens": 2})
    assert status == 200
    body = json.loads(data)
    assert (body["object"], body["choices"][0]["text"], body["usage"]["prompt_tokens"]) == (
        "text_completion",
        "tok tok",
        3,
    )
    assert call(server.url + "/v1/completions", {"model": "llama"})[0] == 400


def test_streaming_sends_chunks_usage_and_done_as_vllm_bench_reads_them(server: OpenAIStubServer) -> None:
    body = chat("hi", stream=True, stream_options={"include_usage": True}, max_tokens=3)
    status, data, headers = call(server.url + "/v1/chat/completions", body)
    assert status == 200
    assert headers["Content-Type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in data.decode().split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert [c["object"] for c in chunks] == ["chat.completion.chunk"] * 4
    assert "".join(c["choices"][0]["delta"]["content"] for c in chunks[:3]) == "tok tok tok "
    assert chunks[2]["choices"][0]["finish_reason"] == "length"
    assert chunks[3]["choices"] == [] and chunks[3]["usage"]["completion_tokens"] == 3
    assert server.records[0].stream is True


def test_health_version_and_unknown_paths(server: OpenAIStubServer) -> None:
    assert call(server.url + "/health")[:2] == (200, b"")
    assert json.loads(call(server.url + "/version")[1]) == {"version": "0.33.0"}
    assert call(server.url + "/v1/nothing")[:2] == (404, b'{"detail": "Not Found"}')
    status, data, _ = call(server.url + "/v1/models", {"x": 1})
    assert (status, json.loads(data)) == (405, {"detail": "Method Not Allowed"})


def test_metrics_are_prometheus_text_with_vllms_names(server: OpenAIStubServer) -> None:
    assert call(server.url + "/v1/chat/completions", chat("one two three", max_tokens=5))[0] == 200
    status, data, headers = call(server.url + "/metrics")
    assert status == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = data.decode()
    types = dict(line.split()[2:4] for line in text.splitlines() if line.startswith("# TYPE"))
    assert types == {
        "vllm:num_requests_running": "gauge",
        "vllm:num_requests_waiting": "gauge",
        "vllm:kv_cache_usage_perc": "gauge",
        "vllm:prompt_tokens_total": "counter",
        "vllm:generation_tokens_total": "counter",
        "vllm:time_to_first_token_seconds": "histogram",
        "vllm:e2e_request_latency_seconds": "histogram",
    }
    samples = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    labels = '{engine="0",model_name="llama"}'
    assert samples[f"vllm:prompt_tokens_total{labels}"] == "3.0"
    assert samples[f"vllm:generation_tokens_total{labels}"] == "5.0"
    assert samples[f"vllm:e2e_request_latency_seconds_count{labels}"] == "1.0"
    # the /metrics request itself is the one in flight
    assert samples[f"vllm:num_requests_running{labels}"] == "1.0"


def test_the_api_key_guards_v1_and_not_health_or_metrics() -> None:
    with OpenAIStubServer("llama", api_key="s3cret") as s:
        assert call(s.url + "/v1/models")[:2] == (401, b'{"error": "Unauthorized"}')
        assert call(s.url + "/v1/chat/completions", chat("hi"), key="wrong")[0] == 401
        assert call(s.url + "/v1/chat/completions", chat("hi"), key="s3cret")[0] == 200
        assert call(s.url + "/v1/models", key="s3cret")[0] == 200
        assert call(s.url + "/health")[0] == 200
        assert call(s.url + "/metrics")[0] == 200
        seen = [(r.path, r.auth_present, r.auth_ok, r.status) for r in s.records]
    assert seen == [
        ("/v1/models", False, False, 401),
        ("/v1/chat/completions", True, False, 401),
        ("/v1/chat/completions", True, True, 200),
        ("/v1/models", True, True, 200),
        ("/health", False, False, 200),
        ("/metrics", False, False, 200),
    ]


def test_the_bearer_scheme_is_case_insensitive_as_in_vllm() -> None:
    with OpenAIStubServer("llama", api_key="k") as s:
        req = urllib.request.Request(s.url + "/v1/models", headers={"Authorization": "bearer k"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.status == 200


def _concurrent(url: str, workers: int, requests: int) -> list[int]:
    def one(_: int) -> int:
        return call(url + "/v1/chat/completions", chat("hi"))[0]

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, range(requests)))


def test_concurrent_requests_show_as_the_in_flight_maximum() -> None:
    # Each completion is held until 4 are in flight: 4 concurrent clients must reach exactly 4.
    with OpenAIStubServer("llama", hold_until_in_flight=4) as s:
        assert _concurrent(s.url, workers=4, requests=4) == [200] * 4
        assert s.max_in_flight == 4
        assert sorted(r.in_flight for r in s.records) == [1, 2, 3, 4]


def test_a_capped_client_reaches_its_cap_and_no_more() -> None:
    # Like `vllm bench serve --max-concurrency 2 --num-prompts 6`: held until 2 are in flight,
    # every pair meets, and a third never joins them.
    with OpenAIStubServer("llama", hold_until_in_flight=2, hold_seconds=5) as s:
        assert _concurrent(s.url, workers=2, requests=6) == [200] * 6
        assert s.max_in_flight == 2
        assert len(s.requests_to("/v1/chat/completions")) == 6


def test_sequential_requests_never_overlap(server: OpenAIStubServer) -> None:
    for _ in range(3):
        assert call(server.url + "/v1/chat/completions", chat("hi"))[0] == 200
    assert server.max_in_flight == 1


def test_as_a_process_it_writes_its_port_and_one_json_line_per_request(tmp_path: Path) -> None:
    port_file, records = tmp_path / "port", tmp_path / "records.jsonl"
    argv = [sys.executable, str(STUB), "--model", "llama", "--api-key", "k", "--port-file", str(port_file)]
    proc = subprocess.Popen([*argv, "--record-file", str(records), "--seconds", "60"])
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists():
            assert proc.poll() is None, "the stub server exited"
            assert time.monotonic() < deadline, "no port file"
            time.sleep(0.05)
        url = f"http://127.0.0.1:{int(port_file.read_text())}"
        assert call(url + "/v1/chat/completions", chat("hi"), key="k")[0] == 200
        assert call(url + "/v1/models")[0] == 401
    finally:
        proc.terminate()
        assert proc.wait(30) == 0
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    assert [(r["path"], r["model"], r["auth_ok"], r["status"]) for r in lines] == [
        ("/v1/chat/completions", "llama", True, 200),
        ("/v1/models", None, False, 401),
    ]


def test_the_fixture_starts_servers_that_answer(openai_stub) -> None:
    server = openai_stub("llama", api_key="k")
    assert call(server.url + "/v1/models", key="k")[0] == 200
    assert server.records[0].auth_ok is True
