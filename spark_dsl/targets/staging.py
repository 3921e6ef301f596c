"""The bash download step (`weights { download = true }`): each repository once, within a budget.

`hf download REPO` is the Hugging Face CLI of huggingface_hub, which vLLM 0.33.0 depends on
(`huggingface_hub>=1.31.0` in its wheel's metadata), so every vLLM image has it. It downloads
into `HF_HOME` (default `~/.cache/huggingface`), where vLLM looks for the weights, and skips
files already there, so a second run only checks the cache.
"""

from __future__ import annotations

from spark_dsl.plan.weights import Staging
from spark_dsl.targets.shell_words import quote

DOWNLOADER = "hf"


def download_lines(staging: Staging, runner: str = "", indent: str = "") -> list[str]:
    """Download every repository in turn; stop the script when one fails or the budget is spent.

    `runner` goes before the download command (the Slurm target's `srun ...`); `timeout`, run on
    this host, ends the download (and its job step) when the budget is spent.
    """
    budget = staging.timeout
    repositories = " ".join(quote(r) for r in staging.repositories)
    run = f"{runner} " if runner else ""
    lines = [
        f"# Stage the weights once, before any launch: up to {budget}s (weights.download_timeout).",
        f"stage_deadline=$((SECONDS + {budget}))",
        f"for repository in {repositories}; do",
        "  left=$((stage_deadline - SECONDS))",
        f'  if ((left <= 0)) || ! timeout "$left" {run}{DOWNLOADER} download "$repository"; then',
        f'    echo "spark: downloading $repository failed or did not finish within {budget}s'
        ' (weights.download_timeout)" >&2',
        "    exit 1",
        "  fi",
        "done",
    ]
    return [indent + line if line else line for line in lines]
