"""The Kubernetes target, `kubernetes.yaml`: Deployments or LeaderWorkerSets, Services, a router."""

from __future__ import annotations

from typing import Any

from spark_dsl.plan.model import Launch, Pool
from spark_dsl.schema import BlockSpec, KeySpec, Kind
from spark_dsl.targets import (
    kubernetes_budget,
    kubernetes_drain,
    kubernetes_metrics,
    kubernetes_scaling,
    kubernetes_scheduling,
    kubernetes_staging,
    model_cache,
    placeholders,
    pod_resources,
    ports,
    yaml_text,
)
from spark_dsl.targets.common import MODEL_CACHE, Job, TargetError, binary_size, is_vllm
from spark_dsl.targets.registry import Target
from spark_dsl.values import SecretRef

FILE_NAME = "kubernetes.yaml"
NAME_LABEL = "app.kubernetes.io/name"
COMPONENT_LABEL = "app.kubernetes.io/component"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
LWS_API = "leaderworkerset.x-k8s.io/v1"
# LWS_WORKER_INDEX, which the workers' start rank reads, is injected from LeaderWorkerSet v0.6.0 on
# (kubernetes-sigs/lws PR #416); an older controller leaves `$(LWS_WORKER_INDEX)` as literal text.
LWS_MINIMUM_VERSION = "v0.6.0"
LWS_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
LEADER_ADDRESS = "$(LWS_LEADER_ADDRESS)"
# A worker's rank placeholders (its pipeline node rank, its data-parallel start rank with one rank
# group per node) are its LWS index, which the kubelet expands in args.
WORKER_INDEX = "$(LWS_WORKER_INDEX)"
POD_IP = "SPARK_POD_IP"
# The pod's own network interface, which holds its pod IP: the runtime asks the CNI plugin for
# `eth0` (containerd's CRI plugin, `defaultIfName`, "the default network interface for the pods"),
# and llm-d's LeaderWorkerSet manifests give it to GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME
# (llm-d/llm-d, guides/wide-ep-lws/manifests/modelserver/base/prefill.yaml and decode.yaml).
POD_INTERFACE = "eth0"
# The router loads no weights: ten minutes to start.
STARTUP_PERIOD_SECONDS = pod_resources.PERIOD_SECONDS
_QUANTITY_UNITS = (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))


def escape(text: str) -> str:
    """Kubernetes expands `$(NAME)` in command, args and env values; `$$` keeps a literal `$`."""
    return text.replace("$", "$$")


class Manifest:
    """The objects of one deployment, built in a fixed order."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.plan = job.plan
        self.namespace = job.setting("namespace")
        self.user_labels = job.map_setting("labels")

    # ---- names and labels ---------------------------------------------------

    def workload_name(self, pool: Pool) -> str:
        return self.job.name if pool.role == "server" else f"{self.job.name}-{pool.role}"

    def selector(self, role: str) -> dict[str, str]:
        return {NAME_LABEL: self.job.name, COMPONENT_LABEL: role}

    def labels(self, role: str) -> dict[str, str]:
        # The selector labels win over a user label of the same key, so Services keep finding pods.
        return {**self.user_labels, **self.selector(role), MANAGED_BY_LABEL: "spark-dsl"}

    def metadata(self, name: str, role: str) -> dict[str, Any]:
        return {"name": name, "namespace": self.namespace, "labels": self.labels(role)}

    # ---- objects ------------------------------------------------------------

    def objects(self) -> list[dict[str, Any]]:
        # An env(...) secret never gets here: SPK505 (rules/targets.py) stops the deployment.
        out: list[dict[str, Any]] = []
        claim = pod_resources.claim(
            self.job, f"{self.job.name}-model-cache", self.namespace, self.labels("model-cache")
        )
        if claim is not None:
            out.append(claim)
        if model_cache.staged_by_job(self.plan):
            out.append(self.staging_job())
        for pool in self.plan.pools:
            out += self.pool_objects(pool)
        router = [launch for launch in self.job.launches if launch.role == "router"]
        if router:
            name = f"{self.job.name}-router"
            pod = self.pod_template("router", [self.container(router[0], self.router_fill)])
            out.append(self.deployment(name, "router", pod, gpus=False))
            out.append(self.service(self.job.name, "router", router[0], self.job.setting("service_type")))
        roles = [pool.role for pool in self.plan.pools]
        board = kubernetes_metrics.dashboard(
            self.job, roles, self.metadata(self.job.name, "dashboard"), kubernetes_scaling.signal(self.job)
        )
        if board is not None:
            out.append(board)
        return out

    def staging_job(self) -> dict[str, Any]:
        """The one Job that downloads the weights into the shared claim (kubernetes_staging.py)."""
        role = kubernetes_staging.ROLE
        volumes = [v for v in self.volumes() if v["name"] == "model-cache"]
        pod = {"metadata": {"labels": self.labels(role)}, "spec": {**self.scheduling(role), "volumes": volumes}}
        name = kubernetes_staging.job_name(self.job)
        return kubernetes_staging.staging_job(self.job, self.metadata(name, role), pod, self.token_env())

    def token_env(self) -> list[dict[str, Any]]:
        """HF_TOKEN from its Secret, as the vLLM pods read it (`runtime.hf_token`)."""
        vllm = [launch for launch in self.job.launches if is_vllm(launch)]
        secrets = vllm[0].secrets if vllm else ()
        return [secret_env(name, ref) for name, ref in secrets if name == "HF_TOKEN"]

    def pool_objects(self, pool: Pool) -> list[dict[str, Any]]:
        launches = [launch for launch in self.job.launches if launch.role == pool.role]
        name = self.workload_name(pool)
        # Under disaggregation the router is the public entry; pool Services stay in the cluster.
        service_type = "ClusterIP" if self.plan.disaggregated else self.job.setting("service_type")
        head = launches[0]
        if pool.nodes == 1:
            pod = self.pod_template(pool.role, [self.container(head, self.pod_fill(pool))])
            workload = self.deployment(name, pool.role, pod)
            selector = self.selector(pool.role)
        else:
            workload = self.leader_worker_set(name, pool, launches)
            selector = {**self.selector(pool.role), LWS_INDEX_LABEL: "0"}
        out = [workload]
        if head.port is not None:
            out.append(self.service(name, pool.role, head, service_type, selector))
            # Headless workers serve no /metrics: the monitor selects what the Service selects,
            # unless every pod of the pool runs an API server.
            serving = self.selector(pool.role) if all(w.port is not None for w in launches) else selector
            scrape = kubernetes_metrics.monitor_object(
                self.job, name, self.metadata(name, pool.role), serving, self.selector(pool.role)
            )
            if scrape is not None:
                out.append(scrape)
        target = {"apiVersion": workload["apiVersion"], "kind": workload["kind"], "name": name}
        scaler = kubernetes_scaling.autoscaler(self.job, target, self.metadata(name, pool.role), pool.role)
        if scaler is not None:
            out.append(scaler)
        return out

    def replicas(self, gpus: bool = True) -> dict[str, Any]:
        # An autoscaled workload leaves its count to the autoscaler: `kubectl apply` would reset it.
        if gpus and kubernetes_budget.autoscaled(self.plan):
            return {}
        return {"replicas": self.job.setting("replicas")}

    def deployment(self, name: str, role: str, pod: dict[str, Any], gpus: bool = True) -> dict[str, Any]:
        strategy = kubernetes_scaling.deployment_strategy(self.job) if gpus else {"type": "Recreate"}
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": self.metadata(name, role),
            "spec": {
                **self.replicas(gpus),
                "selector": {"matchLabels": self.selector(role)},
                "strategy": strategy,
                # An update's step outlasts an old pod's drain and a new pod's ready budget.
                **({"progressDeadlineSeconds": kubernetes_drain.progress_deadline(self.job)} if gpus else {}),
                "template": pod,
            },
        }

    def leader_worker_set(self, name: str, pool: Pool, launches: list[Launch]) -> dict[str, Any]:
        leader = self.pod_template(pool.role, [self.container(launches[0], self.pod_fill(pool))])
        worker = self.pod_template(pool.role, [self.worker_container(pool, launches[1:])])
        spec: dict[str, Any] = {
            **self.replicas(),
            "leaderWorkerTemplate": {
                "size": pool.nodes,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": leader,
                "workerTemplate": worker,
            },
        }
        strategy = kubernetes_scaling.lws_strategy(self.job)
        if strategy is not None:
            spec["rolloutStrategy"] = strategy
        return {
            "apiVersion": LWS_API,
            "kind": "LeaderWorkerSet",
            "metadata": self.metadata(name, pool.role),
            "spec": spec,
        }

    def service(
        self,
        name: str,
        role: str,
        launch: Launch,
        service_type: str | None,
        selector: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.metadata(name, role),
            "spec": {
                "type": service_type or "ClusterIP",
                "selector": selector or self.selector(role),
                "ports": [{"name": "http", "port": launch.port, "targetPort": "http"}],
            },
        }

    # ---- pods ---------------------------------------------------------------

    def pod_template(self, role: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
        metadata: dict[str, Any] = {"labels": self.labels(role)}
        annotations = self.job.map_setting("annotations")
        if annotations:
            metadata["annotations"] = annotations
        spec: dict[str, Any] = {}
        if role != "router":
            init = pod_resources.download_containers(self.job, self.job.image, self.token_env())
            if model_cache.staged_by_job(self.plan):
                init = [kubernetes_staging.wait_container(self.job)]
            if init:
                spec["initContainers"] = init
        spec["containers"] = containers
        if role != "router":
            spec["terminationGracePeriodSeconds"] = kubernetes_drain.grace_seconds(self.job)
        if any("volumeMounts" in c for c in containers):
            spec["volumes"] = self.volumes()
        spec.update(self.scheduling(role))
        return {"metadata": metadata, "spec": spec}

    def scheduling(self, role: str) -> dict[str, Any]:
        """Where the pods of `role` may run: the node selector, then the scheduling settings."""
        selector = self.job.map_setting("node_selector")
        fields: dict[str, Any] = {"nodeSelector": selector} if selector else {}
        return {**fields, **kubernetes_scheduling.pod_fields(self.job, self.selector(role))}

    def volumes(self) -> list[dict[str, Any]]:
        shm: dict[str, Any] = {"medium": "Memory"}
        size = self.job.runtime_value("shm_size")
        if size:
            shm["sizeLimit"] = binary_size(int(size), _QUANTITY_UNITS) or str(size)
        cache = pod_resources.cache_volume(self.job)
        if cache.kind == "pvc":
            source: dict[str, Any] = {"persistentVolumeClaim": {"claimName": cache.name}}
        elif cache.kind == "hostpath":
            source = {"hostPath": {"path": cache.name, "type": "DirectoryOrCreate"}}
        else:
            source = {"emptyDir": {}}
        return [{"name": "shm", "emptyDir": shm}, {"name": "model-cache", **source}]

    def container(self, launch: Launch, fill: Any) -> dict[str, Any]:
        args = [placeholders.fill(arg, fill, escape) for arg in launch.argv[1:]]
        return self._container(launch, args, fill)

    def worker_container(self, pool: Pool, workers: list[Launch]) -> dict[str, Any]:
        """One pod template for every headless worker: the pool's argv template, its rank
        placeholders filled from the LWS index, so only a worker whose ranks are its index fits."""
        fill = self.pod_fill(pool, leader=False)
        first = workers[0]
        for launch in workers:
            index = str(launch.node_rank - pool.first_rank)
            same = (launch.template, launch.env, launch.secrets) == (first.template, first.env, first.secrets)
            if not same or any(value != index for _, value in launch.ranks):
                raise TargetError(f"the {pool.role} workers differ in more than their LeaderWorkerSet index")
        args = [placeholders.fill(arg, fill, escape) for arg in first.template[1:]]
        return self._container(first, args, fill)

    def _container(self, launch: Launch, args: list[str], fill: Any) -> dict[str, Any]:
        vllm = is_vllm(launch)
        container: dict[str, Any] = {
            "name": "vllm" if vllm else launch.role,
            "image": self.job.image if vllm else self.job.router_image,
            **_program(launch, args, vllm and pod_resources.keeps_entrypoint(self.job)),
        }
        if launch.port is not None:
            container["ports"] = [{"name": "http", "containerPort": launch.port}]
        env = self.env(launch, fill)
        if env:
            container["env"] = env
        if vllm:
            container["resources"] = pod_resources.vllm_resources(
                self.job, self.job.runtime_facts.kubernetes_gpu_resource
            )
            security = pod_resources.security_context(self.job)
            if security is not None:
                container["securityContext"] = security
            container["volumeMounts"] = [
                {"name": "shm", "mountPath": "/dev/shm"},
                {"name": "model-cache", "mountPath": MODEL_CACHE},
            ]
            container["lifecycle"] = kubernetes_drain.lifecycle(self.job)
        else:
            container["resources"] = {"requests": dict(pod_resources.ROUTER_REQUESTS)}
        if launch.port is not None:
            # The router waits for its workers as long as they may load (the ready budget), so it
            # gets the same start-up allowance.
            container.update(probes(pod_resources.startup_failures(self.job)))
        return container

    def env(self, launch: Launch, fill: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        values = [placeholders.fill(value, fill, escape) for _, value in launch.env]
        # Asked of the placeholders only: a user's `$(SPARK_POD_IP)` is escaped text, not a reference.
        # The kubelet expands `$(NAME)` in args only for a NAME the container's env defines.
        texts = [*launch.argv, *(value for _, value in launch.env)]
        filled = {fill(name) for name in placeholders.used(texts)}
        if f"$({POD_IP})" in filled:
            out.append({"name": POD_IP, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}})
        out += [{"name": name, "value": value} for (name, _), value in zip(launch.env, values, strict=True)]
        out += [secret_env(name, ref) for name, ref in launch.secrets]
        return out

    # ---- placeholders -------------------------------------------------------

    def pod_fill(self, pool: Pool, leader: bool = True) -> Any:
        """How a pod of `pool` fills placeholders: its own pod IP for what it binds and advertises
        (the node address, and the pool head's address in the leader itself), the group leader's
        address (`LWS_LEADER_ADDRESS`) for the head in a worker, and a worker's LWS index for its
        ranks (the leader runs its launch's argv, its ranks already in place)."""
        head = placeholders.POOL_ADDRESS[pool.role]

        def value(name: str) -> str:
            if name == placeholders.NODE_ADDRESS or (name == head and leader):
                return f"$({POD_IP})"
            if name == placeholders.NODE_INTERFACE:
                return POD_INTERFACE
            if name == head:
                return LEADER_ADDRESS
            if name in placeholders.RANKS and not leader:
                return WORKER_INDEX
            raise TargetError(f"a {pool.role} pod has no value for ${{{name}}}")

        return value

    def router_fill(self, name: str) -> str:
        for pool in self.plan.pools:
            if placeholders.POOL_ADDRESS[pool.role] == name:
                return self.workload_name(pool)
        raise TargetError(f"the router has no value for ${{{name}}}")


def _program(launch: Launch, args: list[str], entrypoint: bool) -> dict[str, Any]:
    """`command` and `args`, or with `entrypoint` only the arguments after the words the image's
    ENTRYPOINT supplies (`vllm serve`), so that entrypoint runs (docs/targets.md, "Fabric")."""
    if entrypoint:
        words = len(pod_resources.IMAGE_ENTRYPOINT)
        if launch.argv[:words] != pod_resources.IMAGE_ENTRYPOINT:
            raise TargetError(f"the {launch.role} launch does not start with the image's entrypoint")
        return {"args": args[words - 1 :]}  # `args` is the argv after its first word
    return {"command": [escape(launch.argv[0])], "args": args}


def secret_env(name: str, ref: SecretRef) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key or "value"}}}


def probes(startup_failures: int) -> dict[str, Any]:
    check = {"path": "/health", "port": "http"}
    return {
        "startupProbe": {
            "httpGet": check,
            "periodSeconds": STARTUP_PERIOD_SECONDS,
            "failureThreshold": startup_failures,
        },
        "readinessProbe": {
            "httpGet": check,
            "periodSeconds": 10,
            "timeoutSeconds": 5,
            "failureThreshold": 3,
        },
        "livenessProbe": {
            "httpGet": check,
            "periodSeconds": 30,
            "timeoutSeconds": 10,
            "failureThreshold": 3,
        },
    }


def render(job: Job) -> str:
    manifest = Manifest(job)
    objects = manifest.objects()
    secrets = sorted({(ref.name, ref.key or "value") for launch in job.launches for _, ref in launch.secrets})
    needs = ", ".join(f"{name} (key {key})" for name, key in secrets)
    # What LWS_WORKER_INDEX feeds: a pipeline's node rank, data parallelism's start rank.
    reads = " and ".join(
        sorted({"node rank" if pool.pp > 1 else "start rank" for pool in job.plan.pools if pool.nodes > 1})
    )
    header = job.header(
        "Apply with `kubectl apply -f kubernetes.yaml`" + (f"; create the Secrets first: {needs}." if needs else "."),
        *(
            [
                f"Needs the LeaderWorkerSet controller {LWS_MINIMUM_VERSION} or newer ({LWS_API}):"
                f" older ones do not set LWS_WORKER_INDEX, which the workers' {reads} reads."
            ]
            if any(o["kind"] == "LeaderWorkerSet" for o in objects)
            else []
        ),
        *(
            [
                f"The router runs `vllm-router` (PyPI) from {job.router_image}"
                + (" (runtime.router_image)." if job.runtime_value("router_image") else "; use an image that has it.")
            ]
            if job.plan.disaggregated
            else []
        ),
        *kubernetes_staging.header_lines(job),
        *pod_resources.entrypoint_lines(job),
        *ports.header_lines(job.plan, job.launches, "pods"),
        *kubernetes_scaling.header_lines(objects),
    )
    return yaml_text.documents(objects, header)


TARGET = Target(
    "kubernetes",
    FILE_NAME,
    "Kubernetes objects, `kubernetes.yaml`",
    render,
    keys=(
        KeySpec("namespace", Kind.STRING, "namespace of every object", fallback="default"),
        KeySpec("replicas", Kind.INTEGER, "replicas of the deployment", fallback=1, minimum=0),
        KeySpec(
            "service_type",
            Kind.SYMBOL,
            "Service type",
            symbols=("ClusterIP", "NodePort", "LoadBalancer"),
            fallback="ClusterIP",
        ),
        KeySpec(
            "model_cache",
            Kind.VOLUME,
            'model cache volume: `pvc("name")`, `hostpath("/path")` or `emptydir`',
            default="a claim spark creates (NAME-model-cache) when several pods read the weights, else emptydir",
        ),
        KeySpec(
            "cache_size",
            Kind.SIZE,
            "size of the claim spark creates for `model_cache = pvc(...)` (ReadWriteMany over several pods)",
            default="the download plus a tenth for spark's own claim; for a named claim none: it must exist",
        ),
        KeySpec("storage_class", Kind.STRING, "storage class of the claim spark creates", default="the cluster's"),
        KeySpec(
            "ephemeral_storage",
            Kind.SIZE,
            "ephemeral-storage request of each vLLM pod",
            default="the download's size with `emptydir`, else 50GiB",
        ),
        KeySpec("cpu", Kind.INTEGER, "CPU cores requested by each vLLM pod", default="4 per GPU", minimum=1),
        KeySpec(
            "memory",
            Kind.SIZE,
            "memory requested by each vLLM pod",
            default="16GiB per GPU + shm_size (+ host_memory on vLLM's CPU backend)",
        ),
        KeySpec(
            "rdma_resource",
            Kind.STRING,
            "device-plugin resource of the RDMA NICs (`fabric = infiniband` or `roce`)",
            fallback="rdma/rdma_shared_device_a",
        ),
        KeySpec(
            "rdma_devices",
            Kind.INTEGER,
            "RDMA device-plugin resources each vLLM pod requests (`fabric = infiniband`, `roce` or `efa`)",
            default="one per GPU",
            minimum=1,
        ),
        KeySpec(
            "hugepages",
            Kind.SIZE,
            "2 MiB huge pages (`hugepages-2Mi`) each vLLM pod requests with `fabric = efa`; 0 asks for none",
            default="5120MiB, as AWS's EKS EFA example (see docs/targets.md, Fabric)",
            fallback=pod_resources.HUGEPAGES_DEFAULT,
            minimum=0,
        ),
        kubernetes_budget.BUDGET,
        *kubernetes_scheduling.KEYS,
    ),
    blocks=(
        BlockSpec("node_selector", "node labels pods must match", map_of=Kind.STRING),
        BlockSpec("labels", "labels added to every object", map_of=Kind.STRING),
        BlockSpec("annotations", "annotations added to every pod", map_of=Kind.STRING),
        kubernetes_metrics.METRICS,
        kubernetes_budget.AUTOSCALE,
        kubernetes_budget.ROLLOUT,
        *kubernetes_scheduling.BLOCKS,
    ),
    pod_secrets=("runtime.hf_token", "serve.api_key"),  # the vLLM pods download and serve
    elsewhere="a pod sees its image and its volumes, not the folders of the machine that built it",
    reads=("runtime.image", "runtime.router_image", "runtime.shm_size", "weights.download", "weights.download_timeout"),
)
