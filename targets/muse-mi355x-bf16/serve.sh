#!/usr/bin/env bash
# muse-mi355x-bf16: written by `spark build` from specs/amd/mi355x-bf16.spark; edit the spec, not this
#   file.
# Runs the `server` launch of muse-mi355x-bf16 on this node.
set -euo pipefail

: "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
: "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key)}"
export VLLM_ENGINE_READY_TIMEOUT_S=10440
export VLLM_ROCM_USE_AITER=1
export VLLM_USE_V2_MODEL_RUNNER=1
exec vllm serve meta-models/Muse-Spark-Open-816B-A42B \
  --port 8000 \
  --tensor-parallel-size 8 \
  --max-model-len 32768 \
  --no-enable-prefix-caching \
  --enable-chunked-prefill \
  --attention-backend ROCM_AITER_FA \
  --language-model-only \
  --shutdown-timeout 60
