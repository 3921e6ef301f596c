"""The generated specs the speed benchmarks check and build: a project of N specs sharing one profile.

Each spec is a single-node deployment of about 20 lines that imports the team's profile, as the
specs in `specs/` do, and declares the four single-node targets (a shell script, Docker Compose,
Kubernetes and a vLLM config file), so a build writes four files per spec, three of them YAML.
The accelerators rotate over NVIDIA and AMD so the rules and emitters see both paths. Every spec
checks clean: a benchmark that measured error reporting would measure something else.
"""

from __future__ import annotations

from pathlib import Path

PROFILE = """\
# Settings every benchmark deployment shares.
profile team {
  serve {
    port    = 8000
    api_key = secret("vllm-api-key")
  }
  runtime {
    hf_token = secret("hf-token")
  }
}
"""

SPEC = """\
# Benchmark spec {i}
import "team.spark"

deployment muse-{i} extends team {{
  model         = muse-spark-open
  accelerator   = {acc}
  checkpoint    = {ckpt}
  parallel      = tp + ep
  max_model_len = {mml}
  workload {{
    concurrency = 32
  }}
  target shell {{}}
  target compose {{}}
  target kubernetes {{
    namespace = "inference"
  }}
  target vllm-config {{}}
}}
"""

ACCELERATORS = [
    ("b200", "nvfp4", "128K"),
    ("gb300", "nvfp4", "128K"),
    ("mi355x", "mxfp4", "32K"),
    ("mi350x", "mxfp4", "32K"),
]

# Files a build writes per spec (the four targets above).
FILES_PER_SPEC = 4


def spec_text(i: int) -> str:
    acc, ckpt, mml = ACCELERATORS[i % len(ACCELERATORS)]
    return SPEC.format(i=i, acc=acc, ckpt=ckpt, mml=mml)


def write_project(folder: Path, count: int) -> Path:
    """`count` specs and their profile in `folder/specs`, a project root of its own (spark.toml)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spark.toml").write_text("", encoding="utf-8")
    specs = folder / "specs"
    specs.mkdir(exist_ok=True)
    (specs / "team.spark").write_text(PROFILE, encoding="utf-8")
    for i in range(count):
        (specs / f"spec-{i:05d}.spark").write_text(spec_text(i), encoding="utf-8")
    return specs
