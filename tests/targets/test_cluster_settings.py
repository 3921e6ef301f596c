"""Staged weights, the fabric, resources and the router image, built by the real `spark` command and
read back from every target that expresses them; the Kubernetes files stay strictly valid."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import validators as v

SPEC = """\
deployment muse-cluster {
  model       = muse-spark-open
  accelerator = b200

  runtime {
    hf_token     = secret("hf-token")
    model_cache  = "/shared/hf"
    fabric       = FABRIC
    router_image = "registry.example.com/vllm-router:0.1.9"
  }
  weights {
    download         = true
    download_timeout = 90m
  }
  disaggregation {
    prefill {
      nodes = 1
    }
    decode {
      nodes    = 2
      parallel = dp(2) + tp + ep
    }
  }

  target shell {}
  target slurm {}
  target kubernetes {
    model_cache   = pvc("muse-weights")
    cache_size    = 1TiB
    storage_class = "shared-nfs"
    cpu           = 48
    memory        = 256GiB
  }
}
"""


def build(tmp_path: Path, fabric: str) -> Path:
    return build_text(tmp_path, SPEC.replace("FABRIC", fabric))


def build_text(tmp_path: Path, text: str) -> Path:
    """The output folder of the spec `text`, built by the real command."""
    spec = tmp_path / "cluster.spark"
    spec.write_text(text)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "muse-cluster"


def pods(docs: list[dict]) -> list[dict]:
    return [template["spec"] for _, template in v.pod_templates(docs)]


@pytest.mark.parametrize(
    ("fabric", "devices", "env"),
    [
        ("infiniband", {"rdma/rdma_shared_device_a": 8}, {}),
        ("roce", {"rdma/rdma_shared_device_a": 8}, {}),
        # EFA also asks for AWS's 5120Mi of 2 MiB huge pages (the `hugepages` setting's default).
        (
            "efa",
            {"vpc.amazonaws.com/efa": 8, "hugepages-2Mi": "5120Mi"},
            {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1"},
        ),
        ("tcp", {}, {"NCCL_IB_DISABLE": "1"}),
    ],
)
def test_kubernetes_stages_weights_and_asks_for_devices_and_resources(
    tmp_path: Path, fabric: str, devices: dict[str, int], env: dict[str, str]
) -> None:
    folder = build(tmp_path, fabric)
    path = folder / "kubernetes.yaml"
    v.kubernetes_validate(path).check()
    docs = v.load_yaml_documents(path)
    claim = docs[0]
    assert claim["kind"] == "PersistentVolumeClaim" and claim["metadata"]["name"] == "muse-weights"
    # Three pods on three nodes share the cache: only ReadWriteMany lets them.
    assert claim["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "1Ti"}},
        "storageClassName": "shared-nfs",
    }
    servers = [p for p in pods(docs) if p["containers"][0]["name"] == "vllm"]
    assert len(servers) == 3  # prefill, decode leader, decode worker
    for pod in servers:
        (container,) = pod["containers"]
        assert container["resources"]["limits"] == {"nvidia.com/gpu": 8, **devices}
        # Kubernetes takes huge pages only with a request equal to the limit.
        pages = {name: count for name, count in devices.items() if name.startswith("hugepages-")}
        assert container["resources"]["requests"] == {
            "cpu": 48,
            "memory": "256Gi",
            "ephemeral-storage": "50Gi",
            **pages,
        }
        if devices:
            assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
        else:
            assert "securityContext" not in container
        plain = {e["name"]: e.get("value") for e in container["env"]}
        for name, value in env.items():
            assert plain[name] == value
        assert plain["VLLM_NIXL_SIDE_CHANNEL_HOST"] == "$(SPARK_POD_IP)"
        # The shared claim is staged once, by the Job below; every pod waits for its marker.
        assert [c["name"] for c in pod["initContainers"]] == ["wait-for-weights"]
        assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": "muse-weights"}} in pod["volumes"]
    (job,) = [d for d in docs if d["kind"] == "Job"]
    (download,) = job["spec"]["template"]["spec"]["containers"]
    assert download["args"] == ["meta-models/Muse-Spark-Open-816B-A42B-NVFP4", "Inferact/Muse-Spark-Open-DSpark"]
    assert download["volumeMounts"] == [{"name": "model-cache", "mountPath": "/root/.cache/huggingface"}]
    assert download["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "hf-token"
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": "muse-weights"}} in job["spec"]["template"][
        "spec"
    ]["volumes"]
    (router,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-router")]
    (container,) = router["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example.com/vllm-router:0.1.9"
    # The header's lines unwrapped (common.Job.header wraps them at 100 characters).
    header = " ".join(line.lstrip("# ") for line in path.read_text().split("\n---\n", 1)[0].splitlines())
    assert "vllm-router` (PyPI) from registry.example.com/vllm-router:0.1.9 (runtime.router_image)" in header
    assert "13345 (the decode data-parallel RPC, on its head)" in header
    assert "5601-5602 (the decode NIXL side channel, one per data-parallel rank)" in header


def test_kubernetes_asks_for_as_many_rdma_devices_as_the_node_has(tmp_path: Path) -> None:
    """A p5.48xlarge has 8 GPUs and 32 EFA interfaces (AWS's EKS example asks for all 32): the
    count is `rdma_devices`, not the GPU count, when the spec says so."""
    text = SPEC.replace("FABRIC", "efa").replace("memory        = 256GiB", "memory = 256GiB\n    rdma_devices = 32")
    path = build_text(tmp_path, text) / "kubernetes.yaml"
    v.kubernetes_validate(path).check()
    servers = [p for p in pods(v.load_yaml_documents(path)) if p["containers"][0]["name"] == "vllm"]
    assert len(servers) == 3
    for pod in servers:
        limits = pod["containers"][0]["resources"]["limits"]
        assert limits == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32, "hugepages-2Mi": "5120Mi"}


def test_slurm_and_shell_carry_the_fabric_environment_and_the_shared_cache(tmp_path: Path) -> None:
    folder = build(tmp_path, "tcp")
    job = (folder / "job.sbatch").read_text()
    v.shellcheck(folder / "job.sbatch").check()
    v.shellcheck(folder / "serve.sh").check()
    assert job.count("NCCL_IB_DISABLE=1") == 3  # every vLLM rank, not the router
    assert job.count("HF_HOME=/shared/hf") == 4  # the download step and the three ranks
    assert "stage_deadline=$((SECONDS + 5400))" in job
    assert "--relative=0 hf download" in job.replace(" env HF_HOME=/shared/hf", "")
    serve = (folder / "serve.sh").read_text()
    assert serve.count("export NCCL_IB_DISABLE=1") == 3
    assert "  download)\n" in serve and "serve.sh download" in serve


def test_plan_shows_the_router_image_and_the_fabric(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.spark"
    spec.write_text(SPEC.replace("FABRIC", "efa"))
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "plan", str(spec)], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    # Settings rows: name, value, source (the columns' widths are the renderer's business).
    assert re.search(r"^ +router_image +registry\.example\.com/vllm-router:0\.1\.9 ", proc.stdout, re.M)
    assert re.search(r"^ +fabric +efa ", proc.stdout, re.M)
    assert "FI_PROVIDER=efa" in proc.stdout
