"""How a server stops: the drain budget `serve.drain`, and the clocks every target sets from it.

One number, as the ready budget is one number (plan/weights.py): vLLM's `--shutdown-timeout`
(every launch), and around it Kubernetes' preStop pause and `terminationGracePeriodSeconds`, the
Deployment's `progressDeadlineSeconds`, Compose's `stop_grace_period` and the Slurm job's
`--signal` before its time limit (docs/targets.md, "Graceful drain", sources there).
"""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.plan.model import Plan

# vLLM 0.33.0 stops at once by default: `shutdown_timeout` is 0 (vllm/config/vllm.py:454), which
# aborts every in-flight request on SIGTERM (vllm/v1/engine/core.py:1718-1727, "mode=abort"). Our
# default drains for a minute: the Gateway API Inference Extension's vLLM manifest works out about
# 55 s for the longest request started just before SIGTERM to finish, at full batch (its comment on
# terminationGracePeriodSeconds; vllm-project/production-stack carries it as
# src/gateway_inference_extension/configs/vllm/gpu-deployment.yaml), rounded up to a minute.
DEFAULT_SECONDS = 60
# The preStop pause before SIGTERM, while the pod still serves and its endpoint is being removed
# from Services and load balancers: the same manifest's `preStop: sleep: seconds: 30`, "the highest
# value we observe on a supported load balancer".
ENDPOINT_PAUSE_SECONDS = 30
# After the drain, the engine processes release the GPUs: vLLM waits 5 s for its workers
# (VLLM_WORKER_SHUTDOWN_TIMEOUT_SECONDS, vllm/envs.py:253) and 15 s on ROCm
# (ROCM_ENGINE_PROCESS_SHUTDOWN_TIMEOUT_S, vllm/v1/engine/utils.py:44); twice the longer one.
TEARDOWN_SECONDS = 30


class DrainBudget(Struct, frozen=True):
    """The seconds a stop takes, part by part: pause (Kubernetes only), drain, teardown."""

    drain: int  # vLLM's --shutdown-timeout: in-flight requests may finish for this long
    pause: int = ENDPOINT_PAUSE_SECONDS
    teardown: int = TEARDOWN_SECONDS

    @property
    def stop(self) -> int:
        """From SIGTERM to the kill: the drain, then the teardown (Compose, Slurm)."""
        return self.drain + self.teardown

    @property
    def grace(self) -> int:
        """A pod's terminationGracePeriodSeconds, which counts the preStop pause too."""
        return self.pause + self.stop


def drain_budget(plan: Plan) -> DrainBudget:
    value = plan.serve.value("drain")
    return DrainBudget(DEFAULT_SECONDS if value is None else int(value))
