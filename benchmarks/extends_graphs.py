"""Measures `spark check` on `extends` graphs that used to blow up: two diamond ladders and a long chain.

A diamond ladder is the shape that made resolution exponential. In the first, every rung
`p{i}` extends `a{i}` and `b{i}`, both of which extend the rung below, so the number of
paths from the top to `p0` doubles with every three profiles. The two-wide ladder is the
shape of the report (issue 9): `a{i}` and `b{i}` each extend both `a{i-1}` and `b{i-1}`,
so the paths double with every two profiles. A plain chain of profiles, each extending
the previous one, used to cost quadratic time and memory and then overflow Python's
stack. Each must check in under 1 s and 100 MB of peak memory.

Each measurement runs the real `spark check` in a fresh child process and reads its
peak resident memory with `resource.getrusage(RUSAGE_CHILDREN)` from a watcher process
of its own, so one measurement never inherits another's peak. Run:

    python benchmarks/extends_graphs.py [--ladder 40] [--chain 400] [--runs 3]

benchmarks/README.md has what each graph cost before resolution was memoised per profile,
and after.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import watched

LIMIT_SECONDS = 1.0
LIMIT_MB = 100.0
DEPLOYMENT = "deployment top extends {parent} {{\n  model       = muse-spark-open\n  accelerator = b200\n}}\n"


def diamond_ladder(profiles: int) -> str:
    """`p0`, then rungs of three profiles (`a{i}`, `b{i}` extend `p{i-1}`; `p{i}` extends both)."""
    rungs = max(0, (profiles - 1) // 3)
    lines = ["profile p0 {\n  gpus = 8\n}"]
    for i in range(1, rungs + 1):
        lines.append(f"profile a{i} extends p{i - 1} {{ }}")
        lines.append(f"profile b{i} extends p{i - 1} {{ }}")
        lines.append(f"profile p{i} extends a{i}, b{i} {{ }}")
    return "\n".join(lines) + "\n" + DEPLOYMENT.format(parent=f"p{rungs}")


def wide_ladder(profiles: int) -> str:
    """The shape of the report (issue 9): rungs of two profiles, `a{i}` and `b{i}` each extending both
    `a{i-1}` and `b{i-1}`, so the number of paths doubles with every two profiles."""
    rungs = max(1, profiles // 2)
    lines = ["profile a0 {\n  gpus = 8\n}", "profile b0 { }"]
    for i in range(1, rungs):
        lines.append(f"profile a{i} extends a{i - 1}, b{i - 1} {{ }}")
        lines.append(f"profile b{i} extends a{i - 1}, b{i - 1} {{ }}")
    return "\n".join(lines) + "\n" + DEPLOYMENT.format(parent=f"a{rungs - 1}, b{rungs - 1}")


def chain(profiles: int) -> str:
    """`c0 <- c1 <- ... <- c{n-1}`, each extending the one before."""
    lines = ["profile c0 {\n  gpus = 8\n}"]
    lines += [f"profile c{i} extends c{i - 1} {{ }}" for i in range(1, profiles)]
    return "\n".join(lines) + "\n" + DEPLOYMENT.format(parent=f"c{profiles - 1}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ladder", type=int, default=40, help="profiles in the diamond ladder")
    parser.add_argument("--chain", type=int, default=400, help="profiles in the chain")
    parser.add_argument("--runs", type=int, default=3, help="runs per graph (the slowest is reported)")
    args = parser.parse_args()
    graphs = {
        f"diamond ladder, {args.ladder} profiles": diamond_ladder(args.ladder),
        f"two-wide ladder, {args.ladder} profiles": wide_ladder(args.ladder),
        f"chain, {args.chain} profiles": chain(args.chain),
    }
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in graphs.items():
            path = Path(tmp) / "graph.spark"
            path.write_text(text, encoding="utf-8")
            runs = [watched.check(path) for _ in range(args.runs)]
            seconds = max(float(str(r["seconds"])) for r in runs)
            peak = max(float(str(r["peak_mb"])) for r in runs)
            ok = seconds < LIMIT_SECONDS and peak < LIMIT_MB and all(r["exit"] == 0 for r in runs)
            failed |= not ok
            print(
                f"{name:32} {len(text.encode()):>7,} bytes  slowest {seconds:6.2f} s  peak {peak:7.1f} MB  "
                f"exit {runs[-1]['exit']}  {'ok' if ok else 'OVER BUDGET'}  ({runs[-1]['summary'][0]})"
            )
    print(f"budget: each graph under {LIMIT_SECONDS:g} s and {LIMIT_MB:g} MB peak, exit 0")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
