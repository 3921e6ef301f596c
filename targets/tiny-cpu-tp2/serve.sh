#!/usr/bin/env bash
# tiny-cpu-tp2: written by `spark build` from specs/models/cpu-tiny-llama.spark; edit the spec, not
#   this file.
# Runs the `server` launch of tiny-cpu-tp2 on this node.
set -euo pipefail

export VLLM_CPU_OMP_THREADS_BIND='0|1'
export VLLM_ENGINE_READY_TIMEOUT_S=601
exec vllm serve /models/tiny-llama \
  --port 8000 \
  --tensor-parallel-size 2 \
  --kv-cache-memory-bytes 1072693248 \
  --shutdown-timeout 60
