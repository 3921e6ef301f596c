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
from typing import Any

from spark_dsl.targets import endpoint
from spark_dsl.targets.common import Job
from spark_dsl.targets.registry import Target
from spark_dsl.targets.shell_words import quote

FILE_NAME = "smoke.sh"
MAX_TOKENS = 16
# A 1x1 PNG: the smallest image every vision model's processor accepts as a data URL.
PIXEL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

# The helpers every check uses: `call STEP curl-args...` leaves the answer in "$answer".
_HELPERS = [
    "fail() {",
    '  echo "smoke.sh: $*" >&2',
    "  exit 1",
    "}",
    "",
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


def _chat_body(model: str, content: Any) -> str:
    body = {"model": model, "messages": [{"role": "user", "content": content}], "max_tokens": MAX_TOKENS}
    return json.dumps(body, ensure_ascii=False)


def _chat_lines(step: str, body: str) -> list[str]:
    return [
        f"call {quote(step)} -X POST -H 'Content-Type: application/json' \\",
        f'  --data-binary {quote(body)} "${{base_url}}/v1/chat/completions"',
        f"compact | grep -qF '\"choices\":[{{' || fail {quote(step + ': the answer has no choices')}",
        f'echo "smoke.sh: {step}: ok"',
    ]


def render(job: Job) -> str:
    plan = job.plan
    name = endpoint.served_name(plan)
    key = endpoint.api_key(plan)
    # The answer's JSON compacted (no whitespace) holds `"id":"NAME"`, NAME compacted too.
    listed = "".join(('"id":' + json.dumps(name, ensure_ascii=False)).split())
    header = job.header(
        f"Smoke check of {job.name}: lists the models, sends a chat completion"
        + (" and one with an image." if endpoint.takes_images(plan) else "."),
        f"Usage: smoke.sh ADDRESS   (or set {endpoint.ADDRESS}); the port is {endpoint.PORT}, else the spec's.",
        image=False,
    )
    lines = [
        "#!/bin/sh",
        *(f"# {line}" for line in header),
        "set -eu",
        "",
        *endpoint.address_lines(plan, FILE_NAME),
        *([endpoint.key_check(key)] if key else []),
        "",
        "umask 077",
        'answer="$(mktemp)"',
        'headers="$(mktemp)"',
        'trap \'rm -f "$answer" "$headers"\' EXIT',
        *([f'printf \'Authorization: Bearer %s\\n\' "${{{key.env_name}}}" >"$headers"'] if key else []),
        "",
        *_HELPERS,
        "",
        'call "list models" "${base_url}/v1/models"',
        f"compact | grep -qF {quote(listed)} \\",
        f'  || fail {quote(f"list models: {name} is not served at")}" ${{base_url}}: $(head -c 500 "$answer")"',
        'echo "smoke.sh: list models: ok"',
        *_chat_lines("chat completion", _chat_body(name, "Reply with one word: ready?")),
    ]
    if endpoint.takes_images(plan):
        parts = [
            {"type": "text", "text": "What colour is this image?"},
            {"type": "image_url", "image_url": {"url": PIXEL}},
        ]
        lines += _chat_lines("chat completion with an image", _chat_body(name, parts))
    return "\n".join(lines) + "\n"


TARGET = Target(
    "smoke",
    FILE_NAME,
    "a POSIX shell script, `smoke.sh`, that checks the running deployment: models, a chat, an image",
    render,
    executable=True,
    client=True,
)
