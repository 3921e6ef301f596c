"""`target smoke {}`: the smoke.sh the real `spark build` writes passes ShellCheck and, run against the
stub OpenAI-compatible server on loopback, sends what the spec says (paths, model, API key), and
fails with a clear message when the deployment does not answer as the spec says."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import validators as v
import yaml
from target_helpers import kubernetes_expand

SPEC = """\
deployment muse-smoke {
  model       = muse-spark-open
  accelerator = b200
  modalities  = MODALITIES

  serve {
    served_model_name = "muse-spark-vision"
    api_key           = secret("vllm-api-key")
  }

  target smoke {}
}
"""
KEY = "k3y with 'quotes' and $dollar"


def build(tmp_path: Path, text: str) -> Path:
    spec = tmp_path / "smoke.spark"
    spec.write_text(text)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), "--root", str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "muse-smoke" / "smoke.sh"


def run(script: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: val for k, val in os.environ.items() if k not in ("VLLM_API_KEY", "SPARK_API_ADDRESS")}
    return subprocess.run(["sh", str(script), *args], capture_output=True, text=True, env={**base, **env})


def checks(server) -> list:
    """The requests after the /health wait, which comes first and carries no key."""
    health, *rest = server.records
    assert (health.method, health.path, health.status, health.auth_present) == ("GET", "/health", 200, False)
    return rest


@pytest.fixture
def vision(tmp_path: Path) -> Path:
    return build(tmp_path, SPEC.replace("MODALITIES", "[text, image]"))


def test_smoke_sh_passes_shellcheck(vision: Path) -> None:
    v.shellcheck(vision, shell="sh").check()


def test_lists_models_chats_and_sends_an_image_with_the_key(vision: Path, openai_stub) -> None:
    server = openai_stub("muse-spark-vision", api_key=KEY)
    proc = run(vision, "127.0.0.1", VLLM_API_KEY=KEY, SPARK_API_PORT=str(server.port))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "smoke.sh: health: ok",
        "smoke.sh: list models: ok",
        "smoke.sh: chat completion: ok",
        "smoke.sh: chat completion with an image: ok",
    ]
    records = checks(server)
    assert [(r.method, r.path, r.status) for r in records] == [
        ("GET", "/v1/models", 200),
        ("POST", "/v1/chat/completions", 200),
        ("POST", "/v1/chat/completions", 200),
    ]
    assert all(r.auth_ok for r in records)
    assert [r.model for r in records[1:]] == ["muse-spark-vision", "muse-spark-vision"]
    assert records[2].content_types == ["text", "image_url"]


def test_the_address_comes_from_the_environment_too(vision: Path, openai_stub) -> None:
    server = openai_stub("muse-spark-vision", api_key=KEY)
    proc = run(vision, VLLM_API_KEY=KEY, SPARK_API_ADDRESS="127.0.0.1", SPARK_API_PORT=str(server.port))
    assert proc.returncode == 0, proc.stderr
    assert len(checks(server)) == 3


def test_a_text_only_deployment_sends_no_image(tmp_path: Path, openai_stub) -> None:
    script = build(tmp_path, SPEC.replace("MODALITIES", "[text]"))
    server = openai_stub("muse-spark-vision", api_key=KEY, modalities=("text",))
    proc = run(script, "127.0.0.1", VLLM_API_KEY=KEY, SPARK_API_PORT=str(server.port))
    assert proc.returncode == 0, proc.stderr
    assert [r.path for r in checks(server)] == ["/v1/models", "/v1/chat/completions"]
    assert checks(server)[1].content_types == ["text"]


def test_without_an_api_key_no_authorization_is_sent(tmp_path: Path, openai_stub) -> None:
    text = SPEC.replace("MODALITIES", "[text]").replace('    api_key           = secret("vllm-api-key")\n', "")
    script = build(tmp_path, text)
    v.shellcheck(script, shell="sh").check()
    server = openai_stub("muse-spark-vision")
    proc = run(script, "127.0.0.1", SPARK_API_PORT=str(server.port))
    assert proc.returncode == 0, proc.stderr
    assert [r.auth_present for r in checks(server)] == [False, False]


def test_a_missing_address_is_a_clear_error(vision: Path) -> None:
    proc = run(vision, VLLM_API_KEY=KEY)
    assert proc.returncode == 2
    assert "pass the address of the API server" in proc.stderr
    assert "SPARK_API_ADDRESS" in proc.stderr


def test_a_missing_key_names_its_variable(vision: Path, openai_stub) -> None:
    server = openai_stub("muse-spark-vision", api_key=KEY)
    proc = run(vision, "127.0.0.1", SPARK_API_PORT=str(server.port))
    assert proc.returncode != 0
    assert "set VLLM_API_KEY (secret vllm-api-key), the API key" in proc.stderr
    assert server.records == []


def test_a_wrong_key_fails_with_the_status(vision: Path, openai_stub) -> None:
    server = openai_stub("muse-spark-vision", api_key=KEY)
    proc = run(vision, "127.0.0.1", VLLM_API_KEY="wrong", SPARK_API_PORT=str(server.port))
    assert proc.returncode == 1
    assert "smoke.sh: list models: HTTP 401" in proc.stderr


def test_a_model_that_is_not_served_fails(vision: Path, openai_stub) -> None:
    server = openai_stub("another-model", api_key=KEY)
    proc = run(vision, "127.0.0.1", VLLM_API_KEY=KEY, SPARK_API_PORT=str(server.port))
    assert proc.returncode == 1
    assert "list models: muse-spark-vision is not served at http://127.0.0.1:" in proc.stderr
    assert [r.path for r in checks(server)] == ["/v1/models"]


def test_a_deployment_refusing_images_fails_the_image_step(vision: Path, openai_stub) -> None:
    server = openai_stub("muse-spark-vision", api_key=KEY, modalities=("text",))
    proc = run(vision, "127.0.0.1", VLLM_API_KEY=KEY, SPARK_API_PORT=str(server.port))
    assert proc.returncode == 1
    assert "chat completion with an image: HTTP 400" in proc.stderr


def test_an_unreachable_endpoint_fails_once_the_ready_budget_is_spent(tmp_path: Path, openai_stub) -> None:
    # The script waits for /health as long as the deployment may take to come up (its ready
    # budget), then gives up with the address it waited for.
    text = SPEC.replace("MODALITIES", "[text]").replace("  serve {\n", "  serve {\n    ready_timeout = 3s\n")
    script = build(tmp_path, text)
    server = openai_stub("muse-spark-vision", api_key=KEY)
    port = server.port
    server.stop()
    started = time.monotonic()
    proc = run(script, "127.0.0.1", VLLM_API_KEY=KEY, SPARK_API_PORT=str(port))
    assert proc.returncode == 1
    assert f"health: http://127.0.0.1:{port}/health did not answer within 3s" in proc.stderr
    assert time.monotonic() - started < 30


def test_the_checks_start_once_health_answers(vision: Path, openai_stub) -> None:
    # A server that comes up after the script started: the first check waits for it.
    gone = openai_stub("muse-spark-vision", api_key=KEY)
    gone.stop()
    env = {**os.environ, "VLLM_API_KEY": KEY, "SPARK_API_PORT": str(gone.port)}
    late = subprocess.Popen(
        ["sh", str(vision), "127.0.0.1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(3)
    assert late.poll() is None  # still waiting for /health
    server = openai_stub("muse-spark-vision", api_key=KEY, port=gone.port)
    out, err = late.communicate(timeout=60)
    assert late.returncode == 0, err
    assert out.splitlines()[0] == "smoke.sh: health: ok"
    assert [r.path for r in checks(server)][:1] == ["/v1/models"]


# ---- the Kubernetes Job -------------------------------------------------------------------------

JOB_SPEC = SPEC.replace("MODALITIES", "[text, image]").replace(
    "  target smoke {}\n", '  target smoke {}\n  target kubernetes { namespace = "inference" }\n  target smoke-job {}\n'
)


def smoke_job(tmp_path: Path) -> tuple[Path, dict]:
    script = build(tmp_path, JOB_SPEC)
    path = script.parent / "smoke-job.yaml"
    (doc,) = yaml.safe_load_all(path.read_text())
    return path, doc


def test_the_smoke_job_validates_strictly_and_reads_the_deployments_secret(tmp_path: Path) -> None:
    path, job = smoke_job(tmp_path)
    v.kubernetes_validate(path).check()
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == "curlimages/curl:8.17.0"
    assert pod["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 0
    env = {e["name"]: e for e in container["env"]}
    assert env["SPARK_API_ADDRESS"]["value"] == "muse-smoke.inference.svc"  # the Service kubernetes.yaml writes
    assert env["SPARK_API_PORT"]["value"] == "8000"
    assert env["VLLM_API_KEY"]["valueFrom"] == {"secretKeyRef": {"name": "vllm-api-key", "key": "value"}}
    services = [d for d in yaml.safe_load_all((path.parent / "kubernetes.yaml").read_text()) if d["kind"] == "Service"]
    assert [(s["metadata"]["name"], s["metadata"]["namespace"]) for s in services] == [("muse-smoke", "inference")]


def test_the_smoke_jobs_command_runs_the_same_checks(tmp_path: Path, openai_stub) -> None:
    path, job = smoke_job(tmp_path)
    (container,) = job["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value", "") for e in container["env"]}
    # What the kubelet runs: `$$` back to `$`, then sh -c SCRIPT smoke.sh, the script a block of its lines.
    argv = [kubernetes_expand(arg, env) for arg in container["command"]]
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["smoke.sh"]
    assert argv[2] == (path.parent / "smoke.sh").read_text()  # the very script
    assert "        - |\n          #!/bin/sh\n" in path.read_text()  # a literal block, one line per line
    server = openai_stub("muse-spark-vision", api_key=KEY)
    base = {k: val for k, val in os.environ.items() if k not in ("VLLM_API_KEY", "SPARK_API_ADDRESS")}
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env={**base, **env, "SPARK_API_ADDRESS": "127.0.0.1", "SPARK_API_PORT": str(server.port), "VLLM_API_KEY": KEY},
    )
    assert proc.returncode == 0, proc.stderr
    assert [(r.path, r.auth_ok) for r in checks(server)] == [
        ("/v1/models", True),
        ("/v1/chat/completions", True),
        ("/v1/chat/completions", True),
    ]
    assert checks(server)[2].content_types == ["text", "image_url"]


# ---- the Slurm batch job ------------------------------------------------------------------------


def _sbatch(tmp_path: Path) -> Path:
    text = SPEC.replace("MODALITIES", "[text, image]").replace(
        "  target smoke {}\n", '  target slurm { partition = "gpu" }\n  target smoke-slurm {}\n'
    )
    return build(tmp_path, text).parent / "smoke.sbatch"


def test_smoke_sbatch_passes_shellcheck_and_asks_for_one_task(tmp_path: Path) -> None:
    script = _sbatch(tmp_path)
    v.shellcheck(script).check()
    text = script.read_text()
    for line in ("#SBATCH --job-name=muse-smoke-smoke", "#SBATCH --ntasks=1", "#SBATCH --partition=gpu"):
        assert line + "\n" in text


@pytest.mark.slurm
def test_smoke_sbatch_runs_on_slurm_against_the_endpoint(tmp_path: Path, openai_stub, spec_cluster) -> None:
    script = _sbatch(tmp_path)
    assert spec_cluster.test_only(str(script)).ok
    server = openai_stub("muse-spark-vision", api_key=KEY)
    env = {
        **{k: val for k, val in os.environ.items() if k not in ("VLLM_API_KEY", "SPARK_API_ADDRESS")},
        "VLLM_API_KEY": KEY,
        "SPARK_API_PORT": str(server.port),
        # A batch script runs on node1, this host: the endpoint is on loopback.
        "SPARK_API_ADDRESS": "127.0.0.1",
    }
    job = spec_cluster.run_job(script, env=env, timeout=120, cwd=tmp_path)
    output = job.stdout_path.read_text() if job.stdout_path else ""
    assert job.ok, (job, output)
    assert "smoke.sbatch: chat completion with an image: ok" in output
    assert [(r.method, r.path) for r in checks(server)] == [
        ("GET", "/v1/models"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/v1/chat/completions"),
    ]
    assert all(r.auth_ok for r in checks(server))
