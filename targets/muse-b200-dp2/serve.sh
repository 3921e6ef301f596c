#!/usr/bin/env bash
# muse-b200-dp2: written by `spark build` from specs/nvidia/b200-data-parallel-2-nodes.spark; edit the spec, not this file.
# Runs the launches of one node of muse-b200-dp2: 2 nodes, ranks 0-1.
# Usage: serve.sh NODE_RANK [HEAD_ADDRESS]   (or set SPARK_NODE_RANK, SPARK_HEAD_ADDRESS in the environment)
set -euo pipefail

SPARK_NODE_RANK="${1:-${SPARK_NODE_RANK:-}}"
if [ "$#" -ge 2 ]; then SPARK_HEAD_ADDRESS="$2"; fi

case "$SPARK_NODE_RANK" in
  0)
    : "${SPARK_HEAD_ADDRESS:?set SPARK_HEAD_ADDRESS or pass it as an argument}"
    : "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
    : "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key)}"
    export VLLM_USE_RUST_FRONTEND=1
    exec vllm serve meta-models/Muse-Spark-Open-816B-A42B-NVFP4 \
      --port 8000 \
      --tensor-parallel-size 8 \
      --enable-expert-parallel \
      --data-parallel-size 2 \
      --data-parallel-size-local 1 \
      --data-parallel-address "${SPARK_HEAD_ADDRESS}" \
      --data-parallel-rpc-port 13345 \
      --max-model-len 131072 \
      --enable-prefix-caching \
      --enable-chunked-prefill \
      --speculative-config '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark","num_speculative_tokens":7}'
    ;;
  1)
    : "${SPARK_HEAD_ADDRESS:?set SPARK_HEAD_ADDRESS or pass it as an argument}"
    : "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
    exec vllm serve meta-models/Muse-Spark-Open-816B-A42B-NVFP4 \
      --tensor-parallel-size 8 \
      --enable-expert-parallel \
      --data-parallel-size 2 \
      --data-parallel-size-local 1 \
      --data-parallel-address "${SPARK_HEAD_ADDRESS}" \
      --data-parallel-rpc-port 13345 \
      --headless \
      --data-parallel-start-rank 1 \
      --max-model-len 131072 \
      --enable-prefix-caching \
      --enable-chunked-prefill \
      --speculative-config '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark","num_speculative_tokens":7}'
    ;;
  *)
    echo "serve.sh: the node rank must be one of 0 1, got '${SPARK_NODE_RANK}'" >&2
    exit 2
    ;;
esac
