"""How a vLLM pod of `target kubernetes` stops, from the drain budget (plan/drain.py).

Kubernetes deletes a pod in two steps at once: it removes the pod from its Services' endpoints and
runs the container's preStop hook, and only then sends SIGTERM; the kubelet kills the container when
`terminationGracePeriodSeconds` (30 s by default) has passed since the deletion, preStop included
(kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination). So a vLLM pod:

- pauses in preStop (`sleep`, a handler of the kubelet itself, beta and on by default from
  Kubernetes 1.30, KEP-3960) while load balancers stop sending to it, still serving;
- then drains on SIGTERM for `--shutdown-timeout` (the launch's flag, plan/launches.py);
- and is given pause + drain + teardown before the kill.

Every pod of a LeaderWorkerSet group gets the same: the headless workers hold the leader's engine
ranks, so they pause and drain as long as it does. The router has no engine and keeps the defaults.
"""

from __future__ import annotations

from typing import Any

from spark_dsl.plan.drain import drain_budget
from spark_dsl.plan.weights import staging
from spark_dsl.targets import pod_resources
from spark_dsl.targets.common import Job


def lifecycle(job: Job) -> dict[str, Any]:
    """The vLLM container's preStop pause."""
    return {"preStop": {"sleep": {"seconds": drain_budget(job.plan).pause}}}


def grace_seconds(job: Job) -> int:
    """terminationGracePeriodSeconds of a vLLM pod: the pause, the drain and the teardown."""
    return drain_budget(job.plan).grace


def progress_deadline(job: Job) -> int:
    """A Deployment's progressDeadlineSeconds (600 s by default): one step of an update, which is
    an old pod's whole stop (Recreate, or a surge-less rolling update), then a new pod's download
    (when the pods stage the weights) and its ready budget. A shorter deadline marks an update
    that is on its way as failed (`ProgressDeadlineExceeded`)."""
    staged = staging(job.plan)
    download = staged.timeout if staged.download else 0
    # The startup probe's allowance: the ready budget, rounded up to whole probe periods.
    ready = pod_resources.startup_failures(job) * pod_resources.PERIOD_SECONDS
    return grace_seconds(job) + download + ready
