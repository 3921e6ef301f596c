"""What the compiler writes itself and a spec's escape hatches may not set: the managed vLLM flags
and environment variables, and the environment of each `runtime.fabric`.

A leaf of the plan, below both the launches that write these and the rules that guard them
(SPK902, SPK903), so no rule imports the later launches stage for them.
"""

from __future__ import annotations

from spark_dsl import catalog

# `runtime.fabric`: the environment NCCL (and NIXL's transports) need for it, from their own docs
# (docs/targets.md, "Fabric"). InfiniBand and RoCE need none: NCCL and UCX find the RDMA devices.
FABRIC_ENV = {
    # NCCL env.html: NCCL_IB_DISABLE=1 turns the IB/RoCE transport off, NCCL falls back to IP sockets.
    "tcp": {"NCCL_IB_DISABLE": "1"},
    # aws-ofi-nccl wiki: FI_PROVIDER picks the libfabric provider; AWS sets FI_EFA_USE_DEVICE_RDMA=1
    # on EFA instances with RDMA (sagemaker-training-toolkit, commit 9a5ed9f).
    "efa": {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"},
}

# `runtime.fabric` -> NIXL's transport backends for the KV transfer (NixlConnector's
# `kv_connector_extra_config.backends`; vLLM 0.33.0 reads it at `nixl/base_worker.py`:624-626 and
# `nixl/connector.py`:374, default ["UCX"]). UCX has no EFA transport: vLLM's NixlConnector guide
# (docs/features/nixl_connector_usage.md, "Selecting a NIXL transport backend") selects LIBFABRIC,
# and NIXL's libfabric backend is the one for AWS EFA (NIXL user guide, "Libfabric").
NIXL_BACKENDS = {"efa": ("LIBFABRIC",)}

# Flags the compiler manages; `serve.extra_args` may not set them under any alias (SPK902
# matches them by vLLM's destination, so `-tp`, `-sc` or `--device-memory-utilization` count too).
MANAGED_FLAGS = (
    "--model", "--served-model-name", "--host", "--port", "--api-key", "--hf-token", "--config",
    "--tensor-parallel-size", "--enable-expert-parallel", "--data-parallel-size",
    "--data-parallel-size-local", "--data-parallel-address", "--data-parallel-rpc-port",
    "--data-parallel-start-rank", "--data-parallel-rank", "--headless", "--api-server-count",
    "--pipeline-parallel-size",
    "--quantization", "--max-model-len", "--max-num-seqs", "--kv-cache-dtype",
    "--gpu-memory-utilization", "--enable-prefix-caching", "--enable-chunked-prefill",
    "--attention-backend", "--attention-config", "--language-model-only", "--limit-mm-per-prompt",
    "--speculative-config", "--kv-transfer-config", "--shutdown-timeout",
)  # fmt: skip
# vLLM's multi-node rendezvous, which the compiler writes only for a pipeline over nodes (`pp(N)`):
# managed there, and the user's own on any other launch.
RENDEZVOUS_FLAGS = ("--distributed-executor-backend", "--nnodes", "--node-rank", "--master-addr", "--master-port")
# With it, the address each node's vLLM advertises to the others (its message queue): the node's own,
# as spark finds it, not the default route's (vLLM's get_ip(), `vllm/utils/network_utils.py`).
RENDEZVOUS_ENV = ("VLLM_HOST_IP",)
# vLLM's clock for its engines to load before the API server gives up (`vllm/envs.py`, 600 s by
# default), which the compiler sets from the ready budget. Not managed: `serve.env` may raise it, and
# SPK544 reports a value below the budget.
ENGINE_READY_ENV = "VLLM_ENGINE_READY_TIMEOUT_S"
# The pinned packages' own clocks when nothing sets them: vLLM 0.33.0's `vllm/envs.py` and
# vllm-router's `router_args.py` (`worker_startup_timeout_secs`). tests/real_engine/
# test_budget_chain.py reads both from the installed packages, so a new upstream default fails it.
ENGINE_READY_DEFAULT_SECONDS = 600
ROUTER_STARTUP_DEFAULT_SECONDS = 600
# vLLM's CPU backend: each rank's KV cache, which the compiler sizes from `runtime.host_memory`
# (`--kv-cache-memory-bytes`), and the variable that would override that flag (`vllm/platforms/cpu.py`
# turns VLLM_CPU_KVCACHE_SPACE GiB into the same setting). Managed where the accelerator is the host.
HOST_FLAGS = ("--kv-cache-memory-bytes",)
HOST_ENV = ("VLLM_CPU_KVCACHE_SPACE",)
# Variables the compiler manages; `serve.env` may not set them.
MANAGED_ENV = (
    "VLLM_USE_RUST_FRONTEND",
    "VLLM_USE_V2_MODEL_RUNNER",
    *catalog.load().vendor_env_names(),
    "VLLM_NIXL_SIDE_CHANNEL_HOST",
    "VLLM_NIXL_SIDE_CHANNEL_PORT",
    "VLLM_API_KEY",
    "HF_TOKEN",
    "VLLM_ATTENTION_BACKEND",
    *sorted({name for env in FABRIC_ENV.values() for name in env}),
)
