#!/usr/bin/env bash
# tiny-cpu-dp2: written by `spark build` from specs/models/cpu-tiny-llama.spark; edit the spec, not
#   this file.
# Runs the launches of one node of tiny-cpu-dp2: 2 nodes, ranks 0-1.
# Usage: serve.sh NODE_RANK [HEAD_ADDRESS]   (or set SPARK_NODE_RANK, SPARK_HEAD_ADDRESS in the
#   environment)
# Each node binds and advertises its own IPv4 address (set SPARK_NODE_ADDRESS, or
#   SPARK_ADDRESS_INTERFACE to pick the interface); a pool's head defaults to its own address.
# Gloo and NCCL use the interface that holds that address (set SPARK_NODE_INTERFACE for another, or
#   GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME in serve.env).
# Open between the nodes: TCP 8000 (the server API), 13345 (the server data-parallel RPC, on its
#   head); vLLM and NCCL also use ports they pick at run time, so allow TCP between them.
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
# The interface that holds an address of this node (Gloo's and NCCL's).
spark_node_interface() {
  local interface
  interface="$(ip -4 -o addr show |
    awk -v address="$1" '{ split($4, a, "/"); if (a[1] == address) { print $2; exit } }')"
  if [ -z "$interface" ]; then
    echo "spark: no interface of $(hostname) holds $1; set SPARK_NODE_INTERFACE" >&2
    return 1
  fi
  printf '%s\n' "$interface"
}

SPARK_NODE_RANK="${1:-${SPARK_NODE_RANK:-}}"
if [ "$#" -ge 2 ]; then SPARK_HEAD_ADDRESS="$2"; fi

case "$SPARK_NODE_RANK" in
  0)
    SPARK_NODE_ADDRESS="${SPARK_NODE_ADDRESS:-$(spark_node_address)}"
    SPARK_NODE_INTERFACE="${SPARK_NODE_INTERFACE:-$(spark_node_interface "${SPARK_NODE_ADDRESS}")}"
    SPARK_HEAD_ADDRESS="${SPARK_HEAD_ADDRESS:-${SPARK_NODE_ADDRESS}}"
    export GLOO_SOCKET_IFNAME="${SPARK_NODE_INTERFACE}"
    export NCCL_SOCKET_IFNAME="=${SPARK_NODE_INTERFACE}"
    export VLLM_ENGINE_READY_TIMEOUT_S=601
    export VLLM_HOST_IP="${SPARK_NODE_ADDRESS}"
    exec vllm serve /models/tiny-llama \
      --port 8000 \
      --tensor-parallel-size 1 \
      --data-parallel-size 2 \
      --data-parallel-size-local 1 \
      --data-parallel-address "${SPARK_HEAD_ADDRESS}" \
      --data-parallel-rpc-port 13345 \
      --kv-cache-memory-bytes 1071644672 \
      --shutdown-timeout 60
    ;;
  1)
    SPARK_NODE_ADDRESS="${SPARK_NODE_ADDRESS:-$(spark_node_address)}"
    SPARK_NODE_INTERFACE="${SPARK_NODE_INTERFACE:-$(spark_node_interface "${SPARK_NODE_ADDRESS}")}"
    : "${SPARK_HEAD_ADDRESS:?set SPARK_HEAD_ADDRESS or pass it as an argument}"
    export GLOO_SOCKET_IFNAME="${SPARK_NODE_INTERFACE}"
    export NCCL_SOCKET_IFNAME="=${SPARK_NODE_INTERFACE}"
    export VLLM_ENGINE_READY_TIMEOUT_S=601
    export VLLM_HOST_IP="${SPARK_NODE_ADDRESS}"
    exec vllm serve /models/tiny-llama \
      --tensor-parallel-size 1 \
      --data-parallel-size 2 \
      --data-parallel-size-local 1 \
      --data-parallel-address "${SPARK_HEAD_ADDRESS}" \
      --data-parallel-rpc-port 13345 \
      --headless \
      --data-parallel-start-rank 1 \
      --kv-cache-memory-bytes 1071644672 \
      --shutdown-timeout 60
    ;;
  *)
    echo "serve.sh: the node rank must be one of 0 1, got '${SPARK_NODE_RANK}'" >&2
    exit 2
    ;;
esac
