"""Measures `spark check`: a cold run on one spec, and one process over a repo of 1,000 specs.

"Cold" means a fresh process after one warm-up run, with .pyc files present. Specs are
about 15 lines: one deployment, a `serve`, a `workload` and a target. Run:

    python benchmarks/check_speed.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """\
# Benchmark spec {i}
deployment muse-{i} {{
  model       = muse-spark-open
  accelerator = {acc}
  checkpoint  = {ckpt}
  parallel    = tp + ep
  max_model_len = {mml}
  serve {{
    port    = 8000
    api_key = secret("vllm-api-key")
  }}
  workload {{
    concurrency = 32
  }}
  target shell {{}}
}}
"""
ACCELERATORS = [
    ("b200", "nvfp4", "128K"),
    ("gb300", "nvfp4", "128K"),
    ("mi355x", "mxfp4", "32K"),
    ("mi350x", "mxfp4", "32K"),
]


def write_spec(path: Path, i: int) -> None:
    acc, ckpt, mml = ACCELERATORS[i % len(ACCELERATORS)]
    path.write_text(SPEC.format(i=i, acc=acc, ckpt=ckpt, mml=mml), encoding="utf-8")


def timed(cmd: list[str], cwd: Path, runs: int) -> list[float]:
    subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)  # warm-up: .pyc, Lark cache
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
        out.append(time.perf_counter() - start)
    return out


def report(name: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p90 = samples[int(0.9 * (len(samples) - 1))]
    print(
        f"{name:<38} median {statistics.median(samples) * 1000:7.1f} ms   p90 {p90 * 1000:7.1f} ms   (n={len(samples)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_spec(root / "one.spark", 0)
        repo = root / "repo"
        repo.mkdir()
        for i in range(1000):
            write_spec(repo / f"spec-{i:04d}.spark", i)
        py = sys.executable
        report("python -c pass (interpreter floor)", timed([py, "-c", "pass"], root, args.runs))
        report("cold check, one 15-line spec", timed([py, "-m", "spark_dsl", "check", "one.spark"], root, args.runs))
        report(
            "check 1,000 specs in one process",
            timed([py, "-m", "spark_dsl", "check", "repo"], root, max(3, args.runs // 4)),
        )
        warm_throughput(repo)


def warm_throughput(repo: Path) -> None:
    """Specs per second through the pipeline in a process that has already checked once."""
    from spark_dsl.pipeline import collect_paths, run

    paths = collect_paths([str(repo)], repo)
    run(paths[:10], repo)
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        result = run(paths, repo)
        rates.append(len(paths) / (time.perf_counter() - start))
    assert not result.diagnostics, "benchmark specs must check clean"
    median = statistics.median(rates)
    print(f"{'warm pipeline throughput':<38} median {median:7.0f} specs/s   best {max(rates):.0f} specs/s")


if __name__ == "__main__":
    main()
