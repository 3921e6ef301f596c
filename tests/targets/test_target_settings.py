"""Each target's settings block reaches its output, and the outputs stay valid with them."""

from __future__ import annotations

from pathlib import Path

import pytest
import validators as v

SETTINGS = """
deployment tuned {
  model       = muse-spark-open
  accelerator = {accelerator}
  nodes       = {nodes}
  parallel    = {parallel}

  runtime {
    hf_token    = secret("hf-creds", key = "token")
    model_cache = "/shared/hf"
    shm_size    = 48GiB
    image       = "registry.example.com/vllm/vllm-openai:v0.33.0-patched"
  }

  target slurm {
    partition     = "gpu"
    account       = "ml_platform"
    qos           = "high"
    time          = 1d2h
    container     = {container}
    output        = "/shared/logs/%x-%j.out"
    ready_timeout = 1h
  }
  target kubernetes {
    namespace    = "serving"
    replicas     = 2
    service_type = LoadBalancer
    model_cache  = pvc("hf-cache")
    node_selector {
      "nvidia.com/gpu.product" = "NVIDIA-B200"
    }
    labels {
      "team" = "inference"
    }
    annotations {
      "example.com/owner" = "platform team"
    }
  }
{one_host}
}
"""
COMPOSE = """  target compose {
    project      = "tuned-stack"
    restart      = on-failure
    model_cache  = "./hf"
    start_period = 1h30m
  }"""


@pytest.fixture(params=["pyxis", "apptainer", "none"])
def built(request, project, spark) -> tuple[Path, str]:
    container = request.param
    text = SETTINGS.replace("{container}", container)
    one = text.replace("{accelerator}", "b200").replace("{nodes}", "1").replace("{parallel}", "tp + ep")
    two = text.replace("{accelerator}", "b200").replace("{nodes}", "2").replace("{parallel}", "dp(2) + tp + ep")
    folder = project(
        {
            "one.spark": one.replace("{one_host}", COMPOSE),
            "two.spark": two.replace("{one_host}", "").replace("deployment tuned", "deployment tuned-dp"),
            "amd.spark": text.replace("{accelerator}", "mi355x")
            .replace("{nodes}", "1")
            .replace("{parallel}", "tp")
            .replace("{one_host}", COMPOSE)
            .replace("deployment tuned", "deployment tuned-amd")
            .replace('\n    node_selector {\n      "nvidia.com/gpu.product" = "NVIDIA-B200"\n    }', ""),
        }
    )
    r = spark("build", ".", "-o", "out", cwd=folder)
    assert r.returncode == 0, r.stdout + r.stderr
    return folder / "out", container


def test_outputs_with_every_setting_stay_valid(built, spec_cluster, job_dir: Path) -> None:
    out, _ = built
    checks = []
    for script in sorted(out.glob("*/*.s*")):
        checks += [v.shellcheck(script), v.bash_syntax(script)]
    for path in sorted(out.glob("*/*.yaml")):
        checks.append(v.yamllint(path))
    for path in sorted(out.glob("*/compose.yaml")):
        checks.append(v.compose_config(path, env={"HF_CREDS": "t"}))
    checks += [v.kubernetes_validate(p) for p in sorted(out.glob("*/kubernetes.yaml"))]
    for script in sorted(out.glob("*/job.sbatch")):
        copy = job_dir / f"{script.parent.name}.sbatch"
        copy.write_text(script.read_text())
        checks.append(spec_cluster.test_only(copy))
    v.check_all(checks)


def test_slurm_settings_and_container(built) -> None:
    out, container = built
    text = (out / "tuned-dp/job.sbatch").read_text()
    for directive in (
        "--partition=gpu",
        "--account=ml_platform",
        "--qos=high",
        "--time=1-02:00:00",
        "--output=/shared/logs/%x-%j.out",
        "--nodes=2",
        "--gpus-per-node=8",
    ):
        assert f"#SBATCH {directive}\n" in text
    assert "deadline=$((SECONDS + 3600))" in text
    image = "registry.example.com/vllm/vllm-openai:v0.33.0-patched"
    if container == "pyxis":
        # Each on a line of its own when the step's line runs long (slurm.STEP_WIDTH).
        assert f"  --container-image={image} \\\n" in text
        assert "  --container-mounts=/shared/hf:/root/.cache/huggingface \\\n" in text
    elif container == "apptainer":
        assert f"apptainer exec --nv --bind=/shared/hf:/root/.cache/huggingface docker://{image}" in text
        amd = (out / "tuned-amd/job.sbatch").read_text()
        assert "apptainer exec --rocm" in amd
    else:
        assert "container" not in text and "apptainer" not in text


def test_kubernetes_settings(built) -> None:
    out, _ = built
    docs = v.load_yaml_documents(out / "tuned/kubernetes.yaml")
    deployment, service = docs
    assert {d["metadata"]["namespace"] for d in docs} == {"serving"}
    assert deployment["metadata"]["labels"]["team"] == "inference"
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["annotations"] == {"example.com/owner": "platform team"}
    assert pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-B200"}
    volumes = {vol["name"]: vol for vol in pod["spec"]["volumes"]}
    assert volumes["model-cache"]["persistentVolumeClaim"] == {"claimName": "hf-cache"}
    assert volumes["shm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "48Gi"}
    (container,) = pod["spec"]["containers"]
    assert container["image"] == "registry.example.com/vllm/vllm-openai:v0.33.0-patched"
    token = next(e for e in container["env"] if e["name"] == "HF_TOKEN")
    assert token["valueFrom"]["secretKeyRef"] == {"name": "hf-creds", "key": "token"}
    assert service["spec"]["type"] == "LoadBalancer"
    lws = v.load_yaml_documents(out / "tuned-dp/kubernetes.yaml")[0]
    assert lws["kind"] == "LeaderWorkerSet" and lws["spec"]["replicas"] == 2
    amd = v.load_yaml_documents(out / "tuned-amd/kubernetes.yaml")[0]
    (amd_container,) = amd["spec"]["template"]["spec"]["containers"]
    assert amd_container["resources"]["limits"] == {"amd.com/gpu": 8}


def test_compose_settings(built) -> None:
    out, _ = built
    model = v.compose_model(out / "tuned/compose.yaml", env={"HF_CREDS": "t"})
    assert v.load_yaml_documents(out / "tuned/compose.yaml")[0]["name"] == "tuned-stack"  # -p overrides it below
    service = model["services"]["server"]
    assert service["restart"] == "on-failure"
    assert service["healthcheck"]["start_period"] == "1h30m0s"
    assert service["shm_size"] in ("51539607552", 51539607552)
    cache = service["volumes"][0]
    assert cache["type"] == "bind" and cache["source"].endswith("/hf") and cache["target"] == "/root/.cache/huggingface"
    assert service["environment"]["HF_TOKEN"] == "t"  # secret("hf-creds") is HF_CREDS on a host
    assert "volumes" not in model or "model-cache" not in model.get("volumes", {})
    amd = v.compose_model(out / "tuned-amd/compose.yaml", env={"HF_CREDS": "t"})["services"]["server"]
    assert amd["devices"][0]["source"] == "/dev/kfd" and amd["group_add"] == ["video", "render"]
    assert amd["security_opt"] == ["seccomp=unconfined"] and amd["ipc"] == "host"
