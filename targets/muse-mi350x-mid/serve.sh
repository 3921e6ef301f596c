#!/usr/bin/env bash
# muse-mi350x-mid: written by `spark build` from specs/amd/mi350x-mxfp4-dspark-mid.spark; edit the
#   spec, not this file.
# Runs the `server` launch of muse-mi350x-mid on this node.
set -euo pipefail

: "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
: "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key)}"
export VLLM_ENGINE_READY_TIMEOUT_S=3718
export VLLM_ROCM_USE_AITER=1
export VLLM_USE_V2_MODEL_RUNNER=1
exec vllm serve amd/Muse-Spark-Open-816B-A42B-MXFP4 \
  --port 8000 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --max-model-len 32768 \
  --no-enable-prefix-caching \
  --enable-chunked-prefill \
  --attention-backend ROCM_AITER_FA \
  --language-model-only \
  --speculative-config '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark","num_speculative_tokens":7}' \
  --shutdown-timeout 60
