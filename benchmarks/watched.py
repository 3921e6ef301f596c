"""One `spark check` in a child process, timed and weighed on its own: wall time, CPU time and peak RSS.

The check runs as a grandchild so `RUSAGE_CHILDREN` measures it alone (not this script, and not
the other shapes of the same benchmark run).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# Runs in a child: starts `spark check`, waits, and reports the grandchild's wall time and peak RSS.
_WATCHER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, timeout=600)
elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"seconds": elapsed, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
                  "exit": done.returncode,
                  "summary": done.stdout.decode("utf-8", "replace").strip().splitlines()[-1:]}))
"""


def check(path: Path, *extra: str) -> dict[str, object]:
    """`spark check PATH [EXTRA...]` from PATH's folder: seconds, cpu, peak_mb, exit and the summary line."""
    spark = [sys.executable, "-m", "spark_dsl", "check", path.name, *extra]
    out = subprocess.run(
        [sys.executable, "-c", _WATCHER, *spark], cwd=path.parent, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result
