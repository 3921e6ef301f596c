"""What a deployment downloads before it serves: the repositories, their size, and the budgets.

The sizes are the catalog's (`spark_dsl/catalog/models.yaml`): a checkpoint converted while
loading (`bf16-to-mxfp4`) downloads its source's weights, and DSpark adds the draft model.
"""

from __future__ import annotations

import math

from msgspec import Struct

from spark_dsl.plan.model import Plan

# Startup budgets, our own assumptions (docs/targets.md): engine start-up (compilation, CUDA graphs)
# and reading the weights from disk at 0.5 GB/s; downloading them, when vLLM does it, at 0.25 GB/s.
STARTUP_BASE_SECONDS = 600
LOAD_GB_PER_SECOND = 0.5
DOWNLOAD_GB_PER_SECOND = 0.25


def model_id(plan: Plan) -> str:
    """What `vllm serve` is given: `runtime.model_path`, else the checkpoint's repository."""
    path = plan.runtime.value("model_path")
    if path:
        return str(path)
    assert plan.checkpoint is not None
    return plan.checkpoint.repository


class Staging(Struct, frozen=True):
    """The weights of a plan: what to download, how big it is, and whether spark stages it."""

    repositories: tuple[str, ...]
    size_gb: float
    download: bool
    timeout: int

    @property
    def size_bytes(self) -> int:
        return math.ceil(self.size_gb * 1e9)

    def startup_seconds(self, staged: bool) -> int:
        """How long a server may take to answer /health: load, plus the download unless staged."""
        seconds = STARTUP_BASE_SECONDS + self.size_gb / LOAD_GB_PER_SECOND
        if not staged:
            seconds += self.size_gb / DOWNLOAD_GB_PER_SECOND
        return math.ceil(seconds)


def staging(plan: Plan) -> Staging:
    download = bool(plan.weights.value("download"))
    timeout = int(plan.weights.value("download_timeout"))
    checkpoint = plan.checkpoint
    size = 0.0
    repositories: list[str] = []
    if checkpoint is not None:
        source = plan.model.checkpoints.get(checkpoint.converts_from or "") or checkpoint
        size += source.weights_gb
        served = model_id(plan)
        if not served.startswith("/"):  # an absolute path is on the nodes already
            repositories.append(served)
    draft = plan.model.draft
    if draft is not None and plan.value("speculative") is not None and plan.value("speculative").mode == "dspark":
        size += draft.weights_gb
        repositories.append(draft.repository)
    return Staging(tuple(repositories), round(size, 3), download, timeout)


class ReadyBudget(Struct, frozen=True):
    """How long a deployment may take from its launches' start to answering /health.

    One number, and every waiter is set from it (docs/targets.md, "The ready budget"): vLLM's own
    engine-ready clock (`VLLM_ENGINE_READY_TIMEOUT_S`), the P/D router's wait for its workers
    (`--worker-startup-timeout-secs`), Kubernetes' startup probes, the Slurm job's /health wait,
    the smoke script's /health wait and the benchmark's `--ready-check-timeout-sec`.
    """

    seconds: int  # what every waiter waits: the user's `serve.ready_timeout`, else `estimate`
    estimate: int  # start-up plus loading (and downloading, unless staged) the checkpoint
    chosen: bool  # whether `seconds` is the user's own `serve.ready_timeout`


# The targets with no download step (docs/targets.md, "Weights"): where one is built, vLLM downloads
# the weights itself even with `weights.download`, so the one budget of the plan counts the download.
UNSTAGED_TARGETS = ("compose", "vllm-config")


def ready_budget(plan: Plan) -> ReadyBudget:
    staged = staging(plan)
    # Staged weights are downloaded before any launch starts, so no clock of vLLM's counts them.
    before = staged.download and not any(plan.builds(kind) for kind in UNSTAGED_TARGETS)
    estimate = staged.startup_seconds(staged=before)
    chosen = plan.serve.value("ready_timeout")
    if chosen is None:
        return ReadyBudget(estimate, estimate, False)
    return ReadyBudget(int(chosen), estimate, True)
