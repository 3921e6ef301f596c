"""Every file under targets/ passes the real validator for its format (VALIDATORS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import validators as v
from target_helpers import TARGETS, committed, copy_script, scheduling_of

from spark_dsl import catalog, vllm_flags
from spark_dsl.plan.weights import staging
from spark_dsl.targets import registry as target_table

# Every committed script by the shell it is written for: bash (serve.sh, bench.sh and the three batch
# scripts) and POSIX sh (smoke.sh, which the smoke Job runs under BusyBox sh; dash checks it here).
BASH_SCRIPTS = sorted(
    committed("*/serve.sh")
    + committed("*/bench.sh")
    + committed("*/job.sbatch")
    + committed("*/smoke.sbatch")
    + committed("*/bench.sbatch")
)
SH_SCRIPTS = committed("*/smoke.sh")
SCRIPTS = sorted(BASH_SCRIPTS + SH_SCRIPTS)
SBATCH = sorted(committed("*/job.sbatch") + committed("*/smoke.sbatch") + committed("*/bench.sbatch"))
YAML = committed("*/*.yaml")
# Every Kubernetes manifest: the deployment's and the client Jobs' (smoke-job.yaml, bench-job.yaml).
KUBERNETES = sorted(committed("*/kubernetes.yaml") + committed("*/*-job.yaml"))
SECRETS = {"HF_TOKEN": "hf_test", "VLLM_API_KEY": "key_test"}


def ids(path: Path) -> str:
    return path.relative_to(TARGETS).as_posix()


def test_targets_hold_every_kind_of_output() -> None:
    names = {p.name for p in TARGETS.glob("*/*")}
    assert names == {
        *("serve.sh", "compose.yaml", "job.sbatch", "kubernetes.yaml", "vllm-config.yaml"),
        *("smoke.sh", "smoke-job.yaml", "bench.sh", "bench.sbatch", "bench-job.yaml", "smoke.sbatch"),
    }
    assert (TARGETS / "manifest.json").is_file()


def test_every_committed_script_and_manifest_is_validated() -> None:
    """The lists above hold every file of those kinds under targets/, so none escapes a validator
    because a glob missed it (and an empty list would pass every test below vacuously)."""
    shell_like = {p for p in TARGETS.glob("*/*") if p.suffix in (".sh", ".sbatch")}
    assert set(SCRIPTS) == shell_like and SH_SCRIPTS and BASH_SCRIPTS
    assert {p.name for p in KUBERNETES} >= {"kubernetes.yaml", "smoke-job.yaml", "bench-job.yaml"}
    assert set(KUBERNETES) == {p for p in YAML if p.name == "kubernetes.yaml" or p.name.endswith("-job.yaml")}


@pytest.mark.parametrize("path", BASH_SCRIPTS, ids=ids)
def test_script_is_shellcheck_clean_and_parses(path: Path) -> None:
    assert path.read_text().startswith("#!/usr/bin/env bash\n")
    v.check_all([v.shellcheck(path), v.bash_syntax(path)])


@pytest.mark.parametrize("path", SH_SCRIPTS, ids=ids)
def test_sh_script_is_shellcheck_clean_as_sh_and_parses_in_dash(path: Path) -> None:
    assert path.read_text().startswith("#!/bin/sh\n")
    dash = v.find_tool("dash")
    v.check_all([v.shellcheck(path, shell="sh"), v._run("dash -n", [dash, "-n", str(path)], path)])


@pytest.mark.parametrize("path", SCRIPTS, ids=ids)
def test_script_is_executable_as_its_target_declares(path: Path) -> None:
    """Mode 0755 exactly for the files whose target says `executable` (serve.sh, job.sbatch,
    smoke.sh, bench.sh); the client batch scripts are read by sbatch and written 0644."""
    declared = {t.file_name: t.executable for t in target_table.all_targets()}
    assert bool(path.stat().st_mode & 0o111) is declared[path.name], path
    if declared[path.name]:
        assert path.stat().st_mode & 0o111 == 0o111


@pytest.mark.parametrize("path", YAML, ids=ids)
def test_yaml_passes_yamllint(path: Path) -> None:
    v.yamllint(path).check()


@pytest.mark.parametrize("path", committed("*/compose.yaml"), ids=ids)
def test_compose_file_passes_compose_config(path: Path) -> None:
    v.compose_config(path, env=SECRETS).check()


@pytest.mark.parametrize("path", [p for p in committed("*/compose.yaml") if ":?set " in p.read_text()], ids=ids)
def test_compose_refuses_to_start_without_the_secrets(path: Path) -> None:
    bare = {name: "" for name in SECRETS}
    result = v.compose_config(path, env=bare)
    assert not result.ok and "is missing a value: set" in result.output, result


@pytest.mark.parametrize("path", KUBERNETES, ids=ids)
def test_kubernetes_file_passes_strict_validation(path: Path) -> None:
    v.kubernetes_validate(path).check()


@pytest.mark.parametrize("path", committed("*/kubernetes.yaml"), ids=ids)
def test_leaderworkerset_fields(path: Path, plans) -> None:
    """The project's own check of what a LeaderWorkerSet must say (no CRD validates it here)."""
    plan = plans[path.parent.name].plan
    for doc in v.load_yaml_documents(path):
        if doc["kind"] != "LeaderWorkerSet":
            continue
        pool = next(p for p in plan.pools if doc["metadata"]["name"].endswith(p.role) or p.role == "server")
        template = doc["spec"]["leaderWorkerTemplate"]
        assert doc["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
        assert template["size"] == pool.nodes > 1
        assert template["restartPolicy"] == "RecreateGroupOnPodRestart"
        leader = template["leaderTemplate"]["spec"]["containers"][0]
        worker = template["workerTemplate"]["spec"]["containers"][0]
        # The leader binds the data-parallel socket on its own pod IP; workers reach it by the
        # leader's address (LWS_LEADER_ADDRESS, a name of the group's headless Service).
        assert "$(SPARK_POD_IP)" in leader["args"] and "$(LWS_LEADER_ADDRESS)" in worker["args"]
        pod_ip = {"name": "SPARK_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        assert pod_ip in leader["env"]
        assert "$(LWS_WORKER_INDEX)" in worker["args"]
        assert "--headless" in worker["args"] and "--headless" not in leader["args"]
        assert "ports" not in worker and "readinessProbe" not in worker  # headless: no HTTP


# What a fabric adds to a vLLM pod's limits (docs/targets.md, "Fabric"): its RDMA devices, one per
# GPU (None), and on EFA AWS's 5120Mi of 2 MiB huge pages.
FABRIC_LIMITS: dict[str, dict[str, int | str | None]] = {
    "infiniband": {"rdma/rdma_shared_device_a": None},
    "roce": {"rdma/rdma_shared_device_a": None},
    "efa": {"vpc.amazonaws.com/efa": None, "hugepages-2Mi": "5120Mi"},
}


@pytest.mark.parametrize("path", committed("*/kubernetes.yaml"), ids=ids)
def test_every_pod_has_gpus_shm_probes_and_secret_references(path: Path, plans) -> None:
    plan = plans[path.parent.name].plan
    # The vendor's GPU resource (the catalog's); vLLM's CPU backend requests none.
    resource = plan.vendor.runtime.kubernetes_gpu_resource
    for doc in v.load_yaml_documents(path):
        if doc["kind"] not in ("Deployment", "LeaderWorkerSet"):
            continue  # Services, and the production pack's monitors and autoscalers: no pods
        spec = doc["spec"]
        templates = (
            [spec["template"]]
            if doc["kind"] == "Deployment"
            else [spec["leaderWorkerTemplate"]["leaderTemplate"], spec["leaderWorkerTemplate"]["workerTemplate"]]
        )
        for template in templates:
            pod = template["spec"]
            (container,) = pod["containers"]
            assert pod.get("nodeSelector", {}) == {}  # no spec sets one
            if container.get("command") == ["vllm-router"]:
                assert container["resources"] == {"requests": {"cpu": 1, "memory": "2Gi"}}
                continue
            if resource is None:
                assert "limits" not in container["resources"]
            else:
                devices = FABRIC_LIMITS.get(plan.runtime.value("fabric") or "", {})
                gpus = plan.value("gpus")
                expected = {resource: gpus, **{name: count or gpus for name, count in devices.items()}}
                assert container["resources"]["limits"] == expected
            requests = container["resources"]["requests"]
            assert requests["cpu"] == 4 * plan.value("gpus")
            # No spec declares a cache volume: one pod's emptyDir holds the whole download, so the pod
            # asks for that much disk and cannot land on a node without it; pods that share the
            # weights share one claim, and their own disk holds logs and caches.
            cache = next(vol for vol in pod["volumes"] if vol["name"] == "model-cache")
            if "emptyDir" in cache:
                assert quantity_bytes(requests["ephemeral-storage"]) >= staging(plan).size_bytes
            else:
                assert cache["persistentVolumeClaim"]["claimName"] == f"{plan.name}-model-cache"
                assert quantity_bytes(requests["ephemeral-storage"]) == 50 * 2**30
            assert quantity_bytes(requests["memory"]) >= 16 * 2**30 * plan.value("gpus")
            if "VLLM_NIXL_SIDE_CHANNEL_HOST" in {e["name"] for e in container["env"]}:
                # Every P/D rank binds and advertises its own pod IP, leader or worker.
                env = {e["name"]: e for e in container["env"]}
                assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"]["value"] == "$(SPARK_POD_IP)"
                assert env["SPARK_POD_IP"]["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
            shm = next(vol for vol in pod["volumes"] if vol["name"] == "shm")
            assert shm["emptyDir"]["medium"] == "Memory"
            assert {"name": "shm", "mountPath": "/dev/shm"} in container["volumeMounts"]
            secrets = {
                e["name"]: e["valueFrom"]["secretKeyRef"]
                for e in container["env"]
                if "secretKeyRef" in e.get("valueFrom", {})
            }
            # The specs' token is the team profile's secret; the CPU specs serve a local copy, no token.
            if plan.runtime.value("hf_token") is not None:
                assert secrets["HF_TOKEN"] == {"name": "hf-token", "key": "value"}
            assert not any(e.get("value", "").startswith("hf_") for e in container["env"])
            if "--headless" not in container["args"]:
                startup = container["startupProbe"]
                assert startup["httpGet"]["path"] == "/health"
                # The budget grows with the checkpoint: loading it, and downloading it where vLLM
                # does; where the pod waits for the staging Job first, the download is done.
                staged = [c["name"] for c in pod.get("initContainers", [])] == ["wait-for-weights"]
                budget = staging(plan).startup_seconds(staged=staged)
                assert startup["periodSeconds"] * startup["failureThreshold"] >= budget
                assert budget >= 600 + staging(plan).size_gb * (2 if staged else 6)


@pytest.mark.parametrize("path", committed("*/vllm-config.yaml"), ids=ids)
def test_vllm_config_passes_the_flag_table(path: Path) -> None:
    (mapping,) = v.load_yaml_documents(path)
    assert vllm_flags.check_config(mapping) == []
    assert not any(value is False for value in mapping.values())


@pytest.mark.slurm
@pytest.mark.parametrize("path", SBATCH, ids=ids)
def test_sbatch_test_only_accepts_every_job(path: Path, spec_cluster, job_dir: Path) -> None:
    with scheduling_of(spec_cluster, path):
        result = spec_cluster.test_only(copy_script(path, job_dir))
    assert result.ok, result


@pytest.mark.slurm
def test_sbatch_reads_the_committed_scheduling_directives(spec_cluster, job_dir: Path) -> None:
    """targets/muse-b200-sched/job.sbatch asks for the `b200` feature, the `inference` reservation
    and not node2: with them in place sbatch places it on node1; without the reservation or the
    feature it refuses, so each directive reached it as written."""
    path = TARGETS / "muse-b200-sched" / "job.sbatch"
    script = copy_script(path, job_dir)
    with scheduling_of(spec_cluster, path):
        placed = spec_cluster.test_only(script)
    assert placed.ok and "node1" in placed.output and "node2" not in placed.output, placed
    refused = spec_cluster.test_only(script)
    assert not refused.ok and "reservation" in refused.output.lower(), refused


@pytest.mark.parametrize("path", SBATCH, ids=ids)
def test_every_sbatch_directive_comes_before_the_first_command(path: Path) -> None:
    lines = path.read_text().splitlines()
    first_command = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    assert not any(line.startswith("#SBATCH") for line in lines[first_command:])
    # job.sbatch: name, nodes, tasks, GPUs (none on the CPU), exclusive, time, output at least; a
    # client job has no GPUs and is not exclusive.
    gpus = any(line.startswith("#SBATCH --gpus-per-node=") for line in lines)
    assert sum(line.startswith("#SBATCH") for line in lines) >= (6 + gpus if path.name == "job.sbatch" else 5)


def test_committed_targets_use_the_pinned_catalog_images(plans) -> None:
    for path in committed("*/compose.yaml") + committed("*/kubernetes.yaml"):
        pinned = catalog.load().image(plans[path.parent.name].plan.accelerator.vendor)
        assert f":v{catalog.load().vllm_version}" in pinned  # the tag, with the CPU image's `-x86_64`
        images = {
            line.split("image:", 1)[1].strip()
            for line in path.read_text().splitlines()
            if line.strip().startswith("image:")
        }
        router = plans[path.parent.name].plan.runtime.value("router_image")  # the P/D router's own
        assert images == {pinned, *([router] if router else [])}, path


def quantity_bytes(text: str) -> int:
    """A Kubernetes binary quantity (`557Gi`) in bytes."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    return int(text[:-2]) * units[text[-2:]] if text[-2:] in units else int(text)


LWS_MINIMUM_SCHEMA = Path(__file__).parents[1] / "data" / "lws" / "leaderworkerset-v0.6.0.schema.json"


@pytest.mark.parametrize("path", committed("*/kubernetes.yaml"), ids=ids)
def test_leaderworkerset_fits_the_minimum_version_named_in_the_header(path: Path) -> None:
    """Every LeaderWorkerSet is valid for LWS v0.6.0, the version the header asks for (README.md in
    tests/data/lws/ says why v0.6.0 and how the schema was checked against its CRD)."""
    import json

    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(LWS_MINIMUM_SCHEMA.read_text()))
    documents = [d for d in v.load_yaml_documents(path) if d["kind"] == "LeaderWorkerSet"]
    for doc in documents:
        assert [e.message for e in validator.iter_errors(doc)] == []
    if documents:
        assert "Needs the LeaderWorkerSet controller v0.6.0 or newer" in path.read_text()
