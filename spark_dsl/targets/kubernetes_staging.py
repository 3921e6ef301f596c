"""Weights staged once per Kubernetes deployment: one Job fills the shared claim, the pods wait.

With `weights.download` and a claim every vLLM pod mounts (model_cache.py), the download is one
Job, `NAME-stage-weights`, and not an init container in each pod: `hf download` runs once per
deployment, not once per pod, and a LeaderWorkerSet that recreates its group finds the weights
already in the claim. The Job's last step writes a completion marker into the claim. Every
serving pod's first init container waits for that marker within its own budget
(`weights.download_timeout` plus a margin: model_cache.py), so vLLM starts only on complete
weights, and the startup probe's budget (the ready budget) counts no download.

The scripts take the marker and the repositories as arguments (`"$@"`), never as text spliced
into the script, and `$` is doubled so the kubelet's `$(NAME)` expansion leaves them as written.
"""

from __future__ import annotations

from typing import Any

from spark_dsl.plan.weights import staging
from spark_dsl.targets import model_cache, pod_resources
from spark_dsl.targets.common import MODEL_CACHE, Job
from spark_dsl.targets.yaml_text import BlockText  # the scripts as literal blocks, a line a statement

ROLE = "stage-weights"
WAIT_ENV = "SPARK_WEIGHTS_WAIT_SECONDS"
# A failed download is retried (it resumes: hf skips finished files) until the deadline.
BACKOFF_LIMIT = 6

DOWNLOAD_SCRIPT = """\
set -eu
marker="$1"
shift
for repository in "$@"; do
  echo "spark: downloading $repository"
  hf download "$repository" >/dev/null
done
mkdir -p "${marker%/*}"
touch "$marker"
echo "spark: staged; every vLLM pod starts now"
"""

WAIT_SCRIPT = """\
set -eu
marker="$1"
job="$2"
start=$(date +%s)
until [ -e "$marker" ]; do
  if [ $(($(date +%s) - start)) -ge "$SPARK_WEIGHTS_WAIT_SECONDS" ]; then
    echo "spark: the weights were not staged within ${SPARK_WEIGHTS_WAIT_SECONDS}s; see kubectl logs job/$job" >&2
    exit 1
  fi
  sleep 10
done
"""


def dollar(text: str) -> str:
    """The kubelet expands `$(NAME)` in command, args and env values; `$$` keeps a literal `$`."""
    return text.replace("$", "$$")


def job_name(job: Job) -> str:
    return f"{job.name}-{ROLE}"


def marker_path(job: Job) -> str:
    return f"{MODEL_CACHE}/{model_cache.marker(job.plan)}"


def cache_mount() -> list[dict[str, str]]:
    return [{"name": "model-cache", "mountPath": MODEL_CACHE}]


def staging_job(job: Job, metadata: dict[str, Any], pod: dict[str, Any], token: list[dict[str, Any]]) -> dict[str, Any]:
    """The Job that downloads every repository into the claim, then writes the marker.

    `pod` carries the pod template's metadata and scheduling (node selector, tolerations, pull
    secrets): the Job lands where the vLLM pods may run, so the image it pulls is one they use.
    """
    staged = staging(job.plan)
    container: dict[str, Any] = {
        "name": "download",
        "image": job.image,
        "command": ["sh", "-c", BlockText(dollar(DOWNLOAD_SCRIPT)), ROLE, dollar(marker_path(job))],
        "args": [dollar(repository) for repository in staged.repositories],
        **({"env": token} if token else {}),
        "resources": {"requests": dict(pod_resources.DOWNLOADER_REQUESTS)},
        "volumeMounts": cache_mount(),
    }
    spec = {"restartPolicy": "OnFailure", "containers": [container], **pod["spec"]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            # The Job's own clock: `weights.download_timeout`, as the shell and Slurm steps have.
            "activeDeadlineSeconds": staged.timeout,
            "template": {"metadata": pod["metadata"], "spec": spec},
        },
    }


def header_lines(job: Job) -> list[str]:
    """What the reader of kubernetes.yaml needs to know about the shared claim and the staging Job."""
    out = []
    size = model_cache.claim_size(job.plan)
    volume = model_cache.volume(job.plan)
    if model_cache.written(job.plan) is None and volume.kind == "pvc" and size is not None:
        out.append(
            f"Every vLLM pod mounts one claim, {volume.name} (ReadWriteMany): its storage class"
            " (storage_class, else the cluster's default) must offer ReadWriteMany."
        )
    if model_cache.staged_by_job(job.plan):
        out.append(
            f"The Job {job_name(job)} downloads the weights once; every vLLM pod waits for it"
            f" (`kubectl logs job/{job_name(job)}`)."
        )
    return out


def wait_container(job: Job) -> dict[str, Any]:
    """The init container that holds a vLLM pod until the staging Job's marker is in the claim."""
    return {
        "name": "wait-for-weights",
        "image": job.image,
        "command": [
            "sh",
            "-c",
            BlockText(dollar(WAIT_SCRIPT)),
            "wait-for-weights",
            dollar(marker_path(job)),
            job_name(job),
        ],
        "env": [{"name": WAIT_ENV, "value": str(model_cache.wait_seconds(job.plan))}],
        "volumeMounts": cache_mount(),
    }
