#!/usr/bin/env bash
# tiny-cpu: written by `spark build` from specs/models/cpu-tiny-llama.spark; edit the spec, not this
#   file.
# Benchmark of tiny-cpu: vllm bench serve, 1 concurrent requests of 1024 prompt and 128 output tokens,
#   10 in all.
# Usage: bench.sh ADDRESS   (or set SPARK_API_ADDRESS); the port is SPARK_API_PORT, else the spec's.
# SPARK_BENCH_TOKENIZER: a local tokenizer folder (default: the model's); SPARK_BENCH_RESULTS: where
#   results go.
set -euo pipefail

SPARK_API_ADDRESS="${1:-${SPARK_API_ADDRESS:-}}"
if [ -z "${SPARK_API_ADDRESS}" ]; then
  echo 'bench.sh: pass the address of the API server (its router or head) as the first argument or set SPARK_API_ADDRESS' >&2
  exit 2
fi
SPARK_API_PORT="${SPARK_API_PORT:-8000}"
base_url="http://${SPARK_API_ADDRESS}:${SPARK_API_PORT}"
tokenizer="${SPARK_BENCH_TOKENIZER:-}"
if [ -z "$tokenizer" ]; then tokenizer=/models/tiny-llama; fi
results="${SPARK_BENCH_RESULTS:-bench-results}"

exec vllm bench serve \
  --backend openai-chat \
  --endpoint /v1/chat/completions \
  --base-url "${base_url}" \
  --model /models/tiny-llama \
  --tokenizer "${tokenizer}" \
  --dataset-name random \
  --random-input-len 1024 \
  --random-output-len 128 \
  --ignore-eos \
  --max-concurrency 1 \
  --num-prompts 10 \
  --save-result \
  --result-dir "${results}" \
  --ready-check-timeout-sec 601
