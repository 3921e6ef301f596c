#!/usr/bin/env bash
# muse-b200-jobs: written by `spark build` from specs/nvidia/b200-smoke-bench.spark; edit the spec,
#   not this file.
# Benchmark of muse-b200-jobs: vllm bench serve, 64 concurrent requests of 2048 prompt and 512 output
#   tokens, 640 in all.
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
: "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key), the API key}"
# vllm bench serve reads the key from OPENAI_API_KEY (it has no key argument).
export OPENAI_API_KEY="${VLLM_API_KEY}"
tokenizer="${SPARK_BENCH_TOKENIZER:-}"
if [ -z "$tokenizer" ]; then tokenizer=meta-models/Muse-Spark-Open-816B-A42B-NVFP4; fi
results="${SPARK_BENCH_RESULTS:-bench-results}"

exec vllm bench serve \
  --backend openai-chat \
  --endpoint /v1/chat/completions \
  --base-url "${base_url}" \
  --model muse-spark \
  --tokenizer "${tokenizer}" \
  --dataset-name random \
  --random-input-len 2048 \
  --random-output-len 512 \
  --ignore-eos \
  --max-concurrency 64 \
  --num-prompts 640 \
  --save-result \
  --result-dir "${results}" \
  --ready-check-timeout-sec 3862
