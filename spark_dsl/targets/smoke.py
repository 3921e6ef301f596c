"""The smoke target, `smoke.sh`: checks a running deployment answers as the spec says.

It lists the models (`GET /v1/models`, the served name must be there), sends one chat completion,
and one with an image when the spec's modalities include images; any failure exits non-zero with
the step, the HTTP status and the start of the answer. The API key is read from the same variable
the deployment's launches read it from (`serve.api_key`), written to a private temporary file and
passed with `curl -H @file`, so it never appears in a process's argv.

The script is POSIX sh (no bash features), so the Kubernetes Job (smoke_job.py) runs the same text in
a small curl image whose shell is BusyBox's.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from spark_dsl.plan import weights
from spark_dsl.targets import endpoint
from spark_dsl.targets.common import Job
from spark_dsl.targets.registry import Target
from spark_dsl.targets.shell_words import quote

FILE_NAME = "smoke.sh"
# What the smoke check reads (`Target.reads`): a client's settings, and `modalities`, which
# decide whether it sends an image.
READS = (*endpoint.READS, "modalities")
HEALTH_POLL_SECONDS = 2
MAX_TOKENS = 16
# A 1x1 PNG: the smallest image every vision model's processor accepts as a data URL.
PIXEL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _helpers(script: str) -> list[str]:
    """The helpers every check uses: `call STEP curl-args...` leaves the answer in "$answer"."""
    return [
        "fail() {",
        f'  echo "{script}: $*" >&2',
        "  exit 1",
        "}",
        "",
        *_CALL,
    ]


_CALL = [
    "call() {",
    '  step="$1"',
    "  shift",
    '  status="$(curl -sS --max-time 300 -o "$answer" -w \'%{http_code}\' -H @"$headers" "$@")" \\',
    '    || fail "${step}: cannot reach ${base_url}"',
    '  if [ "$status" != 200 ]; then',
    '    fail "${step}: HTTP ${status}: $(head -c 500 "$answer")"',
    "  fi",
    "}",
    "",
    "compact() {",
    "  tr -d ' \\t\\r\\n' <\"$answer\"",
    "}",
]


def _wait_healthy(budget: int, script: str) -> list[str]:
    """Wait for /health (no key needed) up to the ready budget: applied beside the servers, the
    script starts while they still load, and a first request would fail."""
    return [
        f"# Wait up to the deployment's ready budget ({budget}s) for /health, polling every {HEALTH_POLL_SECONDS}s.",
        f"deadline=$(($(date +%s) + {budget}))",
        'until curl -fsS -o /dev/null --max-time 5 "${base_url}/health"; do',
        '  if [ "$(date +%s)" -ge "$deadline" ]; then',
        f'    fail "health: ${{base_url}}/health did not answer within {budget}s"',
        "  fi",
        f"  sleep {HEALTH_POLL_SECONDS}",
        "done",
        f'echo "{script}: health: ok"',
    ]


def _chat_body(model: str, content: Any) -> str:
    """The request as indented JSON, one key or item per line (a reviewer reads it; no line runs on).
    ASCII only: JSON's escapes carry any other character, so the text is printable but for its line
    breaks and one POSIX single-quoted word holds it (shell_words.quote would write bash's `$'...'`)."""
    body = {"model": model, "messages": [{"role": "user", "content": content}], "max_tokens": MAX_TOKENS}
    return shlex.quote(json.dumps(body, indent=2, ensure_ascii=True))


def _chat_lines(step: str, body: str, script: str) -> list[str]:
    return [
        f"body={body}",
        f"call {quote(step)} -X POST -H 'Content-Type: application/json' \\",
        '  --data-binary "$body" "${base_url}/v1/chat/completions"',
        f"compact | grep -qF '\"choices\":[{{' || fail {quote(step + ': the answer has no choices')}",
        f'echo "{script}: {step}: ok"',
    ]


def summary(job: Job) -> str:
    return f"Smoke check of {job.name}: lists the models, sends a chat completion" + (
        " and one with an image." if endpoint.takes_images(job.plan) else "."
    )


def body_lines(job: Job, script: str) -> list[str]:
    """The checks, in POSIX sh, after the script's header: what smoke.sh and smoke.sbatch run."""
    plan = job.plan
    name = endpoint.served_name(plan)
    key = endpoint.api_key(plan)
    # The answer's JSON compacted (no whitespace) holds `"id":"NAME"`, NAME compacted too.
    listed = "".join(('"id":' + json.dumps(name, ensure_ascii=False)).split())
    lines = [
        "set -eu",
        "",
        *endpoint.address_lines(plan, script),
        *([endpoint.key_check(key)] if key else []),
        "",
        "umask 077",
        'answer="$(mktemp)"',
        'headers="$(mktemp)"',
        'trap \'rm -f "$answer" "$headers"\' EXIT',
        *([f'printf \'Authorization: Bearer %s\\n\' "${{{key.env_name}}}" >"$headers"'] if key else []),
        "",
        *_helpers(script),
        "",
        *_wait_healthy(weights.ready_budget(plan).seconds, script),
        "",
        'call "list models" "${base_url}/v1/models"',
        f"compact | grep -qF {quote(listed)} \\",
        f'  || fail {quote(f"list models: {name} is not served at")}" ${{base_url}}: $(head -c 500 "$answer")"',
        f'echo "{script}: list models: ok"',
        *_chat_lines("chat completion", _chat_body(name, "Reply with one word: ready?"), script),
    ]
    if endpoint.takes_images(plan):
        parts = [
            {"type": "text", "text": "What colour is this image?"},
            {"type": "image_url", "image_url": {"url": PIXEL}},
        ]
        lines += _chat_lines("chat completion with an image", _chat_body(name, parts), script)
    return lines


def render(job: Job) -> str:
    header = job.header(
        summary(job),
        f"Usage: smoke.sh ADDRESS   (or set {endpoint.ADDRESS}); the port is {endpoint.PORT}, else the spec's.",
        image=False,
    )
    return "\n".join(["#!/bin/sh", *(f"# {line}" for line in header), *body_lines(job, FILE_NAME)]) + "\n"


TARGET = Target(
    "smoke",
    FILE_NAME,
    "a POSIX shell script, `smoke.sh`, that checks the running deployment: models, a chat, an image",
    render,
    executable=True,
    client=True,
    reads=READS,
)
