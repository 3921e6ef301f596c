#!/usr/bin/env bash
# tiny-cpu: written by `spark build` from specs/models/cpu-tiny-llama.spark; edit the spec, not this
#   file.
# Runs the `server` launch of tiny-cpu on this node.
set -euo pipefail

export VLLM_ENGINE_READY_TIMEOUT_S=601
exec vllm serve /models/tiny-llama \
  --port 8000 \
  --tensor-parallel-size 1 \
  --kv-cache-memory-bytes 1071644672 \
  --shutdown-timeout 60
