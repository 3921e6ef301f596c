"""The smoke check as a Kubernetes Job, `smoke-job.yaml`: the same smoke.sh, run by `sh -c`.

The image is curlimages/curl (BusyBox sh and curl, no bash), pinned to a tag: smoke.sh is POSIX sh
for that reason. The script is the Job's `sh -c` argument, written as a YAML literal block (one line
of the script per line of YAML), `$` doubled so the kubelet's `$(NAME)` expansion leaves it as
written; the address is the deployment's Service (client_job.py).
"""

from __future__ import annotations

from spark_dsl.plan.launches import api_port
from spark_dsl.targets import client_job, endpoint, smoke, yaml_text
from spark_dsl.targets.common import Job
from spark_dsl.targets.kubernetes import escape
from spark_dsl.targets.registry import Target
from spark_dsl.targets.yaml_text import BlockText

FILE_NAME = "smoke-job.yaml"
# curl's official image (github.com/curl/curl-container publishes it as curlimages/curl), a tag
# Renovate bumped projects to in November 2025 (docs/production.md cites it).
CURL_IMAGE = "curlimages/curl:8.17.0"


def render(job: Job) -> str:
    plan = job.plan
    key = endpoint.api_key(plan)
    env = [
        {"name": endpoint.ADDRESS, "value": client_job.service_address(plan)},
        {"name": endpoint.PORT, "value": str(api_port(plan))},
        *(client_job.key_env(plan, key.env_name) if key else []),
    ]
    container = {
        "name": "smoke",
        "image": CURL_IMAGE,
        # `sh -c SCRIPT smoke.sh`: the very script (its `$0` the file's name), a block of its lines
        # that reads back exactly, with no shell quoting in between.
        "command": ["sh", "-c", BlockText(escape(smoke.render(job))), smoke.FILE_NAME],
        "env": env,
    }
    header = job.header(
        "Apply after kubernetes.yaml: `kubectl apply -f smoke-job.yaml`; "
        f"`kubectl logs job/{plan.name}-smoke` shows each check.",
        *client_job.secrets_note(plan),
        image=False,
    )
    return yaml_text.document(client_job.job_object(job, "smoke", container), header)


TARGET = Target(
    "smoke-job",
    FILE_NAME,
    "a Kubernetes Job, `smoke-job.yaml`, that runs smoke.sh against the deployment's Service",
    render,
    client=True,
    pod_secrets=("serve.api_key",),  # the Job calls the deployment with its key
    reads=(*smoke.READS, *client_job.READS),
)
