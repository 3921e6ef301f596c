"""Measures `spark check` on the densest specs the limits allow: each shape that once cost minutes
or gigabytes (issue 9), at or past the 100,000-token limit.

Each shape is the worst case of one stage: diagnostics on every line, thousands on one line,
unknown `extends` parents in a scope of thousands, distinct unknown vLLM options, and tokens of
megabytes. Every measurement runs the real `spark check` (text, then `--format json`) in a fresh
child process and reads its peak resident memory from a watcher process of its own. Run:

    python benchmarks/dense_specs.py [--runs 1]

Each must finish in under 10 s of CPU time (the CLI fuzz test's budget per run; CPU time, since
the wall clock on a machine busy with other work says more about the machine) and 500 MB.

benchmarks/README.md has what each shape cost before the token limit and the fixes, and after.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import watched

LIMIT_SECONDS = 10.0
LIMIT_MB = 500.0
HEAD = "deployment d {\n  model       = muse-spark-open\n  accelerator = b200\n  target shell {}\n"


def shapes() -> dict[str, str]:
    scope = [f"profile q{i} {{ }}" for i in range(12_000)]
    scope.append("profile p extends " + ",".join(f"z{i}" for i in range(24_000)) + " { }")
    return {
        "a=1 lines, at the limit": HEAD + "  a=1\n" * 33_327 + "}\n",
        "a=1 lines, 1 MiB": HEAD + "  a=1\n" * 200_000 + "}\n",
        "extends a,a,... on one line": "profile p extends " + ",".join(["a"] * 49_990) + " { }\n",
        "unknown parents, scope of 12,000": "\n".join(scope) + "\n",
        "distinct unknown options": HEAD
        + "  serve { extra_args = ["
        + ",".join(f'"--x{i}"' for i in range(49_980))
        + "] }\n}\n",
        "duplicates on one line": HEAD + "  serve { " + "port = 1 " * 33_000 + "}\n}\n",
        "9 MB string": HEAD + '  runtime { image = "' + "x" * 9_000_000 + '" }\n}\n',
        "8 MB quantity": HEAD + "  target slurm { time = " + "1h" * 4_000_000 + " }\n}\n",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs per shape and format (the slowest is reported)")
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in shapes().items():
            path = Path(tmp) / "dense.spark"
            path.write_text(text, encoding="utf-8")
            for form, extra in (("text", ()), ("json", ("--format", "json"))):
                runs = [watched.check(path, *extra) for _ in range(args.runs)]
                seconds = max(float(str(r["seconds"])) for r in runs)
                cpu = max(float(str(r["cpu"])) for r in runs)
                peak = max(float(str(r["peak_mb"])) for r in runs)
                ok = cpu < LIMIT_SECONDS and peak < LIMIT_MB and all(r["exit"] in (0, 1) for r in runs)
                failed |= not ok
                print(
                    f"{name:34} {form:4} {len(text.encode()):>10,} bytes  wall {seconds:6.2f} s  cpu {cpu:6.2f} s  "
                    f"peak {peak:7.1f} MB  exit {runs[-1]['exit']}  {'ok' if ok else 'OVER BUDGET'}"
                )
    print(f"budget: each under {LIMIT_SECONDS:g} s of CPU and {LIMIT_MB:g} MB peak, exit 0 or 1")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
