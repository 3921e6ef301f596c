"""Values the production pack's rules and its targets share (issue 16), in a leaf that imports nothing.

The rules (rules/production.py, rules/jobs.py) check by these values and the targets
(targets/bench.py, targets/kubernetes_scheduling.py) write by them, so a rule needs no target's
emitter to know them (.importlinter forbids the rules those imports).
"""

from __future__ import annotations

# Taint effects a toleration may name (core/v1 Toleration.effect); "" tolerates every effect.
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# vllm bench serve's own defaults (vllm/benchmarks/datasets/datasets.py, add_random_dataset_args):
# the request shape of the benchmark job when `workload` leaves a length unset.
INPUT_TOKENS = 1024
OUTPUT_TOKENS = 128

# vLLM 0.33.0's serve destinations whose flags, in `serve.extra_args`, change what the monitors scrape
# (rules/production.py, SPK537 and SPK538; the flags' spellings are read from spark_dsl/data/vllm_flags.json).
STATS_OFF = "disable_log_stats"
LB_MODES = {
    "data_parallel_hybrid_lb": "hybrid load balancing (an API server per node)",
    "data_parallel_external_lb": "external load balancing (an API server per rank)",
}
