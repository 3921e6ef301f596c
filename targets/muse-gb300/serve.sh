#!/usr/bin/env bash
# muse-gb300: written by `spark build` from specs/nvidia/gb300-nvfp4.spark; edit the spec, not this
#   file.
# Runs the `server` launch of muse-gb300 on this node.
set -euo pipefail

: "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
: "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key)}"
export VLLM_ENGINE_READY_TIMEOUT_S=3862
export VLLM_USE_RUST_FRONTEND=1
exec vllm serve meta-models/Muse-Spark-Open-816B-A42B-NVFP4 \
  --port 8000 \
  --tensor-parallel-size 4 \
  --enable-expert-parallel \
  --enable-prefix-caching \
  --enable-chunked-prefill \
  --speculative-config '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark","num_speculative_tokens":7}' \
  --shutdown-timeout 60
