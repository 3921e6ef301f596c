"""`spark plan` lists every setting in effect with its origin: what the spec (or a profile) wrote, at
`file:line:column` in the text and the same place in JSON; what the recipe, vLLM or the schema
default to, named as such; the serve, runtime, weights, disaggregation and target settings too."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.pipeline import run
from spark_dsl.plan.in_effect import settings_in_effect
from spark_dsl.schema import deployment_schema

REPO = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^    (\S+)\s{2,}(.+?)\s{2,}(\S.*)$")


def rows(text: str) -> dict[str, tuple[str, str]]:
    """The settings rows of a text plan: key -> (value, origin)."""
    block = text.split("  settings:\n", 1)[1].split("\n  capacity", 1)[0]
    out = {}
    for line in block.splitlines():
        m = ROW.match(line)
        assert m, line
        out[m.group(1)] = (m.group(2), m.group(3))
    return out


def test_defaults_left_to_vllm_are_shown(spark: Callable[..., Any]) -> None:
    r = spark("plan", "specs/nvidia/b200-nvfp4.spark", cwd=REPO)
    assert r.returncode == 0, r.stderr
    shown = rows(r.stdout)
    assert shown["max_model_len"] == ("1M (1,048,576)", "vLLM default: the model's context length")
    assert shown["max_num_seqs"] == ("1K (1,024)", "vLLM default for NVIDIA B200")
    assert shown["gpu_memory_utilization"] == ("0.92", "vLLM default")
    assert shown["attention"] == ("auto", "vLLM default: vLLM picks the backend")
    assert shown["kv_cache_dtype"] == ("auto", "default")
    assert shown["allow_unvalidated"] == ("false", "default")


def test_serve_runtime_and_target_settings_are_shown_with_their_origin(spark: Callable[..., Any]) -> None:
    r = spark("plan", "specs/nvidia/b200-data-parallel-2-nodes.spark", cwd=REPO)
    assert r.returncode == 0, r.stderr
    shown = rows(r.stdout)
    assert shown["serve.port"] == ("8000", "profile team (specs/profiles/team.spark:5:15)")
    assert shown["serve.api_key"] == ('secret("vllm-api-key")', "profile team (specs/profiles/team.spark:6:15)")
    assert shown["runtime.shm_size"] == ("64GiB", "profile team (specs/profiles/team.spark:10:16)")
    assert shown["runtime.image"] == ("vllm/vllm-openai:v0.33.0", "recipe default (vLLM's image for nvidia)")
    assert shown["weights.download"] == ("false", "default")
    assert shown["target.slurm.time"] == ("12h", "user (specs/nvidia/b200-data-parallel-2-nodes.spark:24:17)")
    # The ready budget: 600 s + 543.6 GB (NVFP4 and its draft) read at 0.5 GB/s and fetched at 0.25 GB/s.
    assert shown["serve.ready_timeout"] == ("1h4m22s", "default: estimated from the checkpoint's size")
    assert shown["target.slurm.ready_timeout"] == ("1h4m22s", "default: the ready budget (serve.ready_timeout)")
    assert "VLLM_ENGINE_READY_TIMEOUT_S=3862" in (REPO / "targets/muse-b200-dp2/job.sbatch").read_text()
    assert shown["target.kubernetes.cpu"] == ("32", "default: 4 per GPU")
    assert shown["target.kubernetes.memory"] == ("192GiB", "default: 16GiB per GPU + runtime.shm_size")
    # What the committed Kubernetes output asks for is what the plan says.
    pods = (REPO / "targets/muse-b200-dp2/kubernetes.yaml").read_text()
    assert "cpu: 32" in pods and "memory: 192Gi" in pods
    assert f"ephemeral-storage: {shown['target.kubernetes.ephemeral_storage'][0].removesuffix('B')}" in pods


def test_json_origins_point_where_the_text_does(spark: Callable[..., Any]) -> None:
    """Every written value: the JSON's file, line and column are the text's, and the spec's text
    there is the value as written."""
    spec = "specs/nvidia/b200-prefill-decode.spark"
    text = rows(spark("plan", spec, cwd=REPO).stdout)
    (dep,) = json.loads(spark("plan", spec, "--format", "json", cwd=REPO).stdout)["deployments"]
    written = {k: s for k, s in dep["settings"].items() if "file" in s}
    assert {"model", "accelerator", "serve.port", "runtime.hf_token", "target.slurm.partition"} <= set(written)
    for key, setting in written.items():
        where = f"{setting['file']}:{setting['line']}:{setting['column']}"
        assert text[key][1] == f"{setting['origin']} ({where})"
        line = (REPO / setting["file"]).read_text().splitlines()[setting["line"] - 1]
        at = line[setting["column"] - 1 :]
        value = setting["value"]
        spelled = (
            f'secret("{value["secret"]}")'
            if isinstance(value, dict)
            else json.dumps(value)
            if isinstance(value, str) and at.startswith('"')
            else str(value)
        )
        assert at.startswith(spelled) or at.startswith(text[key][0]), (key, at)
    # Defaults carry no place.
    assert dep["settings"]["max_num_seqs"] == {"value": 1024, "origin": "vLLM default for NVIDIA B200"}


EVERY_BLOCK = """deployment every {
  model       = muse-spark-open
  accelerator = b200
  nodes       = 2
  parallel    = dp(2) + tp + ep
  serve {
    port              = 9000
    host              = "0.0.0.0"
    served_model_name = "muse"
    api_key           = secret("api-key")
    extra_args        = ["--enable-log-requests"]
    env {
      NCCL_DEBUG = "INFO"
    }
  }
  runtime {
    image       = "registry.example.com/vllm:1"
    model_path  = "/models/muse"
    hf_token    = secret("hf-token")
    model_cache = "/shared/hf"
    shm_size    = 32GiB
    fabric      = tcp
  }
  weights {
    download         = true
    download_timeout = 3h
  }
  target shell {}
  target slurm {
    partition = "gpu"
    account   = "team"
  }
  target kubernetes {
    model_cache = pvc("hf-cache")
    cache_size  = 2TiB
    labels {
      team = "inference"
    }
  }
}
"""


def test_every_written_key_of_every_block_is_listed(project: Callable[[dict[str, str]], Path]) -> None:
    root = project({"every.spark": EVERY_BLOCK})
    result = run([root / "every.spark"], root)
    assert not result.has_errors, [d.message for d in result.diagnostics]
    (plan,) = result.plans
    listed = {s.key: s for s in settings_in_effect(plan)}
    schema = deployment_schema()
    for block in ("serve", "runtime", "weights"):
        for key in plan.deployment.body.block(block).settings:
            name = "fabric" if (block, key) == ("runtime", "fabric") else f"{block}.{key}"
            assert listed[name].origin == "user", name
            assert listed[name].location is not None
    assert listed["serve.env.NCCL_DEBUG"].value == "INFO"
    assert listed["target.kubernetes.labels.team"].value == "inference"
    assert listed["target.kubernetes.cache_size"].value == 2 * 2**40
    # A claim spark creates: its storage class default now takes effect, and is listed.
    assert listed["target.kubernetes.storage_class"].described
    # Every key of each declared target that has a default is listed.
    for kind in ("slurm", "kubernetes"):
        for key, spec in (schema.blocks["target"].labels or {})[kind].keys.items():
            # The RDMA keys take effect only with an RDMA fabric, `hugepages` only with EFA; this is TCP.
            if spec.default and key not in ("rdma_resource", "rdma_devices", "hugepages"):
                assert f"target.{kind}.{key}" in listed, (kind, key)


@pytest.mark.parametrize(
    "spec", ["nvidia/b200-prefill-decode", "amd/mi355x-mxfp4-throughput", "nvidia/b200-data-parallel-2-nodes"]
)
def test_plan_text_snapshot(spark: Callable[..., Any], spec: str, snapshot: Any) -> None:
    r = spark("plan", f"specs/{spec}.spark", cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout == snapshot
