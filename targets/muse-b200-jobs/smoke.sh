#!/bin/sh
# muse-b200-jobs: written by `spark build` from specs/nvidia/b200-smoke-bench.spark; edit the spec,
#   not this file.
# Smoke check of muse-b200-jobs: lists the models, sends a chat completion and one with an image.
# Usage: smoke.sh ADDRESS   (or set SPARK_API_ADDRESS); the port is SPARK_API_PORT, else the spec's.
set -eu

SPARK_API_ADDRESS="${1:-${SPARK_API_ADDRESS:-}}"
if [ -z "${SPARK_API_ADDRESS}" ]; then
  echo 'smoke.sh: pass the address of the API server (its router or head) as the first argument or set SPARK_API_ADDRESS' >&2
  exit 2
fi
SPARK_API_PORT="${SPARK_API_PORT:-8000}"
base_url="http://${SPARK_API_ADDRESS}:${SPARK_API_PORT}"
: "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key), the API key}"

umask 077
answer="$(mktemp)"
headers="$(mktemp)"
trap 'rm -f "$answer" "$headers"' EXIT
printf 'Authorization: Bearer %s\n' "${VLLM_API_KEY}" >"$headers"

fail() {
  echo "smoke.sh: $*" >&2
  exit 1
}

call() {
  step="$1"
  shift
  status="$(curl -sS --max-time 300 -o "$answer" -w '%{http_code}' -H @"$headers" "$@")" \
    || fail "${step}: cannot reach ${base_url}"
  if [ "$status" != 200 ]; then
    fail "${step}: HTTP ${status}: $(head -c 500 "$answer")"
  fi
}

compact() {
  tr -d ' \t\r\n' <"$answer"
}

# Wait up to the deployment's ready budget (3862s) for /health, polling every 2s.
deadline=$(($(date +%s) + 3862))
until curl -fsS -o /dev/null --max-time 5 "${base_url}/health"; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    fail "health: ${base_url}/health did not answer within 3862s"
  fi
  sleep 2
done
echo "smoke.sh: health: ok"

call "list models" "${base_url}/v1/models"
compact | grep -qF '"id":"muse-spark"' \
  || fail 'list models: muse-spark is not served at'" ${base_url}: $(head -c 500 "$answer")"
echo "smoke.sh: list models: ok"
body='{
  "model": "muse-spark",
  "messages": [
    {
      "role": "user",
      "content": "Reply with one word: ready?"
    }
  ],
  "max_tokens": 16
}'
call 'chat completion' -X POST -H 'Content-Type: application/json' \
  --data-binary "$body" "${base_url}/v1/chat/completions"
compact | grep -qF '"choices":[{' || fail 'chat completion: the answer has no choices'
echo "smoke.sh: chat completion: ok"
body='{
  "model": "muse-spark",
  "messages": [
    {
      "role": "user",
      "content": [
        {
          "type": "text",
          "text": "What colour is this image?"
        },
        {
          "type": "image_url",
          "image_url": {
            "url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
          }
        }
      ]
    }
  ],
  "max_tokens": 16
}'
call 'chat completion with an image' -X POST -H 'Content-Type: application/json' \
  --data-binary "$body" "${base_url}/v1/chat/completions"
compact | grep -qF '"choices":[{' || fail 'chat completion with an image: the answer has no choices'
echo "smoke.sh: chat completion with an image: ok"
