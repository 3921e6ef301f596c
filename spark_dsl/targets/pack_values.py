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
