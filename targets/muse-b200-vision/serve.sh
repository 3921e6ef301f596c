#!/usr/bin/env bash
# muse-b200-vision: written by `spark build` from specs/nvidia/b200-multimodal.spark; edit the spec,
#   not this file.
# Runs the `server` launch of muse-b200-vision on this node.
set -euo pipefail

: "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
: "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key)}"
export VLLM_ENGINE_READY_TIMEOUT_S=3862
export VLLM_USE_RUST_FRONTEND=1
exec vllm serve meta-models/Muse-Spark-Open-816B-A42B-NVFP4 \
  --served-model-name muse-spark-vision \
  --port 8000 \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --enable-prefix-caching \
  --enable-chunked-prefill \
  --limit-mm-per-prompt '{"audio":0,"video":0}' \
  --speculative-config '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark","num_speculative_tokens":7}' \
  --shutdown-timeout 60
