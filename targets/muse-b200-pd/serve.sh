#!/usr/bin/env bash
# muse-b200-pd: written by `spark build` from specs/nvidia/b200-prefill-decode.spark; edit the spec,
#   not this file.
# Runs the launches of one node of muse-b200-pd: 2 nodes, ranks 0-1.
# Usage: serve.sh NODE_RANK [PREFILL_ADDRESS] [DECODE_ADDRESS]   (or set SPARK_NODE_RANK,
#   SPARK_PREFILL_ADDRESS, SPARK_DECODE_ADDRESS in the environment)
# Stage the weights first, once, on one node: serve.sh download
# Each node binds and advertises its own IPv4 address (set SPARK_NODE_ADDRESS, or
#   SPARK_ADDRESS_INTERFACE to pick the interface); a pool's head defaults to its own address.
# Open between the nodes: TCP 8000 (the router's API), 8100 (the prefill API), 8200 (the decode API),
#   5600 (the prefill NIXL side channel), 5601 (the decode NIXL side channel); vLLM and NCCL also use
#   ports they pick at run time, so allow TCP between them.
set -euo pipefail

# This node's own IPv4 address (never a host name, which may resolve to 127.0.1.1); SPARK_ADDRESS_INTERFACE picks the interface.
spark_node_address() {
  local dev="${SPARK_ADDRESS_INTERFACE:-}" scope="" address
  if [ -z "$dev" ]; then
    dev="$(ip -4 route show default | awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit } }')"
    scope="global"
  fi
  address="$(ip -4 -o addr show ${dev:+dev "$dev"} ${scope:+scope "$scope"} |
    awk '{ split($4, a, "/"); print a[1]; exit }')"
  if [ -z "$address" ]; then
    echo "spark: no IPv4 address found on $(hostname)${dev:+ ($dev)}; set SPARK_ADDRESS_INTERFACE" >&2
    return 1
  fi
  printf '%s\n' "$address"
}

SPARK_NODE_RANK="${1:-${SPARK_NODE_RANK:-}}"
if [ "$#" -ge 2 ]; then SPARK_PREFILL_ADDRESS="$2"; fi
if [ "$#" -ge 3 ]; then SPARK_DECODE_ADDRESS="$3"; fi

case "$SPARK_NODE_RANK" in
  download)
    # Stage the weights once, before any launch: up to 7200s (weights.download_timeout).
    stage_deadline=$((SECONDS + 7200))
    for repository in meta-models/Muse-Spark-Open-816B-A42B-NVFP4 Inferact/Muse-Spark-Open-DSpark; do
      left=$((stage_deadline - SECONDS))
      if ((left <= 0)) || ! timeout "$left" hf download "$repository"; then
        echo "spark: downloading $repository failed or did not finish within 7200s (weights.download_timeout)" >&2
        exit 1
      fi
    done
    ;;
  0)
    SPARK_NODE_ADDRESS="${SPARK_NODE_ADDRESS:-$(spark_node_address)}"
    SPARK_PREFILL_ADDRESS="${SPARK_PREFILL_ADDRESS:-${SPARK_NODE_ADDRESS}}"
    : "${SPARK_DECODE_ADDRESS:?set SPARK_DECODE_ADDRESS or pass it as an argument}"
    : "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key)}"
    : "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
    command -v vllm-router >/dev/null || { echo 'spark: vllm-router is not on PATH; install it with: pip install vllm-router==0.1.17' >&2; exit 127; }
    # The router runs beside this node's server and stops with this script.
    (
      export OPENAI_API_KEY="${VLLM_API_KEY}"
      exec vllm-router \
      --vllm-pd-disaggregation \
      --prefill "http://${SPARK_PREFILL_ADDRESS}:8100" \
      --decode "http://${SPARK_DECODE_ADDRESS}:8200" \
      --host 0.0.0.0 \
      --port 8000 \
      --worker-startup-timeout-secs 1688
    ) &
    router_pid=$!
    trap 'kill "$router_pid" 2>/dev/null || true' EXIT
    export FI_EFA_USE_DEVICE_RDMA=1
    export FI_PROVIDER=efa
    export VLLM_ENGINE_READY_TIMEOUT_S=1688
    export VLLM_NIXL_SIDE_CHANNEL_HOST="${SPARK_NODE_ADDRESS}"
    export VLLM_NIXL_SIDE_CHANNEL_PORT=5600
    export VLLM_USE_RUST_FRONTEND=1
    vllm serve meta-models/Muse-Spark-Open-816B-A42B-NVFP4 \
      --port 8100 \
      --tensor-parallel-size 8 \
      --enable-expert-parallel \
      --enable-prefix-caching \
      --enable-chunked-prefill \
      --speculative-config '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark","num_speculative_tokens":7}' \
      --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_producer","kv_connector_extra_config":{"backends":["LIBFABRIC"]}}' \
      --shutdown-timeout 60 &
    server_pid=$!
    # shellcheck disable=SC2329  # called by the EXIT trap below
    spark_stop() {  # SIGTERM, then up to 90s (serve.drain + teardown) before SIGKILL
      kill "$@" 2>/dev/null || true
      local waited=0 running
      while [ -n "$(jobs -rp)" ] && ((waited < 90)); do sleep 1; waited=$((waited + 1)); done
      running="$(jobs -rp)"
      # shellcheck disable=SC2086  # one process id per word
      [ -z "$running" ] || kill -KILL $running 2>/dev/null || true
      wait "$@" 2>/dev/null || true
    }
    trap 'spark_stop "$router_pid" "$server_pid"' EXIT
    trap 'exit 143' TERM INT
    code=0
    wait -n -p ended "$router_pid" "$server_pid" || code=$?
    if [ "$ended" = "$router_pid" ]; then echo "serve.sh: the router exited ($code); stopping this node" >&2; fi
    if [ "$ended" = "$server_pid" ]; then echo "serve.sh: the server exited ($code); stopping this node" >&2; fi
    exit "$code"
    ;;
  1)
    SPARK_NODE_ADDRESS="${SPARK_NODE_ADDRESS:-$(spark_node_address)}"
    : "${HF_TOKEN:?set HF_TOKEN (secret hf-token)}"
    : "${VLLM_API_KEY:?set VLLM_API_KEY (secret vllm-api-key)}"
    export FI_EFA_USE_DEVICE_RDMA=1
    export FI_PROVIDER=efa
    export VLLM_ENGINE_READY_TIMEOUT_S=1688
    export VLLM_NIXL_SIDE_CHANNEL_HOST="${SPARK_NODE_ADDRESS}"
    export VLLM_NIXL_SIDE_CHANNEL_PORT=5601
    export VLLM_USE_RUST_FRONTEND=1
    exec vllm serve meta-models/Muse-Spark-Open-816B-A42B-NVFP4 \
      --port 8200 \
      --tensor-parallel-size 8 \
      --enable-expert-parallel \
      --enable-prefix-caching \
      --enable-chunked-prefill \
      --speculative-config '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark","num_speculative_tokens":7}' \
      --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_consumer","kv_connector_extra_config":{"backends":["LIBFABRIC"]}}' \
      --shutdown-timeout 60
    ;;
  *)
    echo "serve.sh: the node rank must be one of 0 1, got '${SPARK_NODE_RANK}'" >&2
    exit 2
    ;;
esac
