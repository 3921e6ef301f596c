"""Weights staged once per Kubernetes deployment (issue 33, item 1), built by the real `spark build`.

Several pods reading the same weights share one claim by default; with `weights.download` one Job
downloads into it and every serving pod waits for the Job's completion marker. The Job's and the
waiter's scripts are run byte for byte by `sh`, after the kubelet's `$(NAME)` expansion, with a stub
`hf` that records its calls. Every object is strictly valid (Kubernetes 1.32, LeaderWorkerSet v0.6.0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import validators as v
from target_helpers import kubernetes_expand

REPO = Path(__file__).resolve().parents[2]
SPEC = """\
deployment muse-stage {
  model       = muse-spark-open
  accelerator = b200
BODY
}
"""
TWO_NODES = "  nodes    = 2\n  parallel = dp(2) + tp + ep\n"
DISAGGREGATED = (
    "  disaggregation {\n    prefill {\n      nodes = 1\n    }\n"
    "    decode {\n      nodes    = 2\n      parallel = dp(2) + tp + ep\n    }\n  }\n"
)
DOWNLOAD = "  weights {\n    download = true\n    download_timeout = 1h\n  }\n"
# The router's image: vLLM's has no vllm-router (SPK547).
TOKEN = (
    '  runtime {\n    hf_token = secret("hf-token")\n'
    '    router_image = "registry.example.com/vllm-router:0.1.17"\n  }\n'
)


def build(tmp_path: Path, body: str, target: str = "") -> list[dict]:
    path = tmp_path / "stage.spark"
    path.write_text(SPEC.replace("BODY", body + f"  target kubernetes {{\n{target}\n  }}"))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(path), "-o", str(out), "--root", str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = out / "muse-stage" / "kubernetes.yaml"
    v.check_all([v.kubernetes_validate(manifest), v.yamllint(manifest)])
    return v.load_yaml_documents(manifest)


def pod_templates(docs: list[dict]) -> list[tuple[str, dict]]:
    """Every pod template: (owner and role, pod spec)."""
    return [(owner, template["spec"]) for owner, template in v.pod_templates(docs)]


def downloaders(docs: list[dict]) -> list[str]:
    """The pod templates whose containers (init or not) run `hf download`."""
    found = []
    for owner, spec in pod_templates(docs):
        containers = [*spec.get("initContainers", []), *spec["containers"]]
        if any("hf download" in " ".join([*c.get("command", []), *c.get("args", [])]) for c in containers) or any(
            c.get("command") == ["hf"] for c in containers
        ):
            found.append(owner)
    return found


def serving(docs: list[dict]) -> list[tuple[str, dict]]:
    return [(o, s) for o, s in pod_templates(docs) if any(c["name"] == "vllm" for c in s["containers"])]


def run_container(container: dict, env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    """The container's command and args after the kubelet's expansion, run by this machine's `sh`."""
    argv = [kubernetes_expand(a, {}) for a in [*container["command"], *container.get("args", [])]]
    assert argv[0] == "sh"
    return subprocess.run(["sh", *argv[1:]], env=env, capture_output=True, text=True, **kw)


def stub_hf(tmp_path: Path, body: str) -> dict[str, str]:
    """A PATH whose `hf` runs `body` (a line of sh): the downloader the Job's script calls."""
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "hf").write_text(f"#!/bin/sh\n{body}\n")
    (stub / "hf").chmod(0o755)
    return {"PATH": f"{stub}:{os.environ['PATH']}"}


def download_container(docs: list[dict], marker: Path) -> dict:
    """The staging Job's container, its marker argument pointed at `marker` (the claim, here)."""
    (job,) = [d for d in docs if d["kind"] == "Job"]
    download = job["spec"]["template"]["spec"]["containers"][0]
    return {**download, "command": [*download["command"][:-1], str(marker)]}


def test_two_pods_share_one_claim_by_default(tmp_path: Path) -> None:
    docs = build(tmp_path, TWO_NODES)
    (claim,) = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert claim["metadata"]["name"] == "muse-stage-model-cache"
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    # The NVFP4 checkpoint and its draft, 543.6 GB, plus a tenth: 557 GiB (as the emptyDir was).
    assert claim["spec"]["resources"]["requests"]["storage"] == "557Gi"
    for owner, spec in serving(docs):
        (cache,) = [vol for vol in spec["volumes"] if vol["name"] == "model-cache"]
        assert cache["persistentVolumeClaim"] == {"claimName": "muse-stage-model-cache"}, owner
        (vllm,) = spec["containers"]
        # The pod's own disk no longer holds the checkpoint.
        assert vllm["resources"]["requests"]["ephemeral-storage"] == "50Gi", owner


def test_one_pod_keeps_its_emptydir(tmp_path: Path) -> None:
    docs = build(tmp_path, DOWNLOAD)
    assert [d["kind"] for d in docs] == ["Deployment", "Service"]
    ((owner, spec),) = serving(docs)
    assert {"name": "model-cache", "emptyDir": {}} in spec["volumes"]
    assert downloaders(docs) == [owner]  # its own init container: the one pod is the deployment


@pytest.mark.parametrize("layout", [TWO_NODES, DISAGGREGATED], ids=["lws", "pd"])
def test_one_job_downloads_and_every_serving_pod_waits_for_its_marker(tmp_path: Path, layout: str) -> None:
    docs = build(tmp_path, layout + DOWNLOAD + TOKEN)
    assert downloaders(docs) == ["Job muse-stage-stage-weights"]
    (job,) = [d for d in docs if d["kind"] == "Job"]
    (download,) = job["spec"]["template"]["spec"]["containers"]
    marker = download["command"][-1]
    assert marker.startswith("/root/.cache/huggingface/.spark-staged/")
    assert job["spec"]["activeDeadlineSeconds"] == 3600  # weights.download_timeout
    assert download["env"] == [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "value"}}}
    ]
    pods = serving(docs)
    assert len(pods) == (2 if layout == TWO_NODES else 3)  # leader + worker; prefill, decode leader + worker
    for owner, spec in pods:
        (wait,) = spec["initContainers"]
        assert wait["name"] == "wait-for-weights", owner
        assert wait["command"][-2:] == [marker, "muse-stage-stage-weights"], owner
        budget = int(wait["env"][0]["value"])
        assert budget >= job["spec"]["activeDeadlineSeconds"], owner


def test_the_staging_job_script_downloads_each_repository_once_then_marks(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    env = stub_hf(tmp_path, f'printf "%s\\n" "$*" >> {calls}')
    marker = tmp_path / "cache" / ".spark-staged" / "abc"
    proc = run_container(download_container(build(tmp_path, TWO_NODES + DOWNLOAD), marker), env)
    assert proc.returncode == 0, proc.stderr
    assert calls.read_text().splitlines() == [
        "download meta-models/Muse-Spark-Open-816B-A42B-NVFP4",
        "download Inferact/Muse-Spark-Open-DSpark",
    ]
    assert marker.exists()


def test_a_failed_download_leaves_no_marker(tmp_path: Path) -> None:
    env = stub_hf(tmp_path, "exit 3")
    marker = tmp_path / "cache" / ".spark-staged" / "abc"
    proc = run_container(download_container(build(tmp_path, TWO_NODES + DOWNLOAD), marker), env)
    assert proc.returncode != 0
    assert not marker.exists()  # so no pod starts on half the weights; the Job retries


def test_the_wait_holds_until_the_marker_and_gives_up_at_its_budget(tmp_path: Path) -> None:
    docs = build(tmp_path, TWO_NODES + DOWNLOAD)
    (_, leader) = serving(docs)[0]
    wait = leader["initContainers"][0]
    marker = tmp_path / "marker"
    wait = {**wait, "command": [*wait["command"][:-2], str(marker), wait["command"][-1]]}
    env = {"PATH": os.environ["PATH"], "SPARK_WEIGHTS_WAIT_SECONDS": "1"}
    late = run_container(wait, env, timeout=60)
    assert late.returncode == 1
    assert "not staged within 1s; see kubectl logs job/muse-stage-stage-weights" in late.stderr
    marker.touch()
    assert run_container(wait, env, timeout=60).returncode == 0


def test_hostile_repository_names_reach_hf_as_one_argument(tmp_path: Path) -> None:
    """A model block's repository is data: the kubelet and sh pass it to `hf` unchanged."""
    hostile = "org/x$(HOME)`id`;$HOME\"'*"
    model = (
        "model hostile {\n  layers = 32\n  hidden_size = 4096\n  query_heads = 32\n  kv_heads = 8\n"
        f"  head_dim = 128\n  max_context = 128K\n  checkpoint bf16 {{\n    repository = {json.dumps(hostile)}\n"
        "    size = 16GB\n  }\n}\n"
    )
    path = tmp_path / "h.spark"
    path.write_text(
        model
        + "deployment h {\n  model = hostile\n  accelerator = h100\n  nodes = 2\n  parallel = dp(2) + tp\n"
        + DOWNLOAD
        + "  target kubernetes {}\n}\n"
    )
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(path), "-o", str(out), "--root", str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    download = download_container(v.load_yaml_documents(out / "h" / "kubernetes.yaml"), tmp_path / "m")
    calls = tmp_path / "calls"
    env = stub_hf(tmp_path, f'printf "%s|" "$@" >> {calls}')
    done = run_container(download, {**env, "HOME": "/nowhere"})
    assert done.returncode == 0, done.stderr
    assert calls.read_text() == f"download|{hostile}|"


def test_committed_outputs_download_at_most_once_per_deployment() -> None:
    """Over targets/: no deployment has two templates that download; a Job's marker is awaited by all."""
    staged = 0
    for manifest in sorted((REPO / "targets").glob("*/kubernetes.yaml")):
        docs = v.load_yaml_documents(manifest)
        assert len(downloaders(docs)) <= 1, manifest
        jobs = [d for d in docs if d["kind"] == "Job"]
        for job in jobs:
            staged += 1
            marker = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
            for owner, spec in serving(docs):
                assert spec["initContainers"][0]["command"][-2] == marker, (manifest, owner)
    assert staged >= 1  # the committed P/D deployment stages its weights


def test_emptydir_under_a_leaderworkerset_warns_with_the_restart_arithmetic(tmp_path: Path) -> None:
    path = tmp_path / "e.spark"
    path.write_text(SPEC.replace("BODY", TWO_NODES + "  target kubernetes {\n    model_cache = emptydir\n  }"))
    argv = [sys.executable, "-m", "spark_dsl", "check", str(path), "--root", str(tmp_path), "--format", "json"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    (found,) = [d for d in json.loads(proc.stdout)["diagnostics"] if d["code"] == "SPK519"]
    assert found["severity"] == "warning"
    assert "each of the 2 vLLM pods downloads the 543.6 GB" in found["message"]
    assert "recreates its group of 2 pods when one restarts" in found["message"]
    assert "2 x 543.6 GB = 1,087.2 GB again" in found["message"]
