"""The `#SBATCH` directives a spec may add (`target slurm { extra_directives = [...] }`).

SBATCH_OPTIONS is sbatch's own list of long options: those `sbatch --help` prints in Slurm 22.05.8
(the Slurm of the test cluster; the same names as the OPTIONS of sbatch(1),
https://slurm.schedmd.com/sbatch.html and man.archlinux.org/man/sbatch.1.en.txt), less the ones
that only make sense on a command line (help, usage, version, parsable, quiet, verbose, wait,
wrap). MANAGED are those `job.sbatch` writes itself or that would contradict it: a second
`--nodes` or `--time` would silently override the spec's (sbatch takes the last), `--output`
and `--error` move the log the job's messages go to, `--array` would start the deployment
several times, `--signal` is the drain's (`serve.drain`). An extra directive names one option of
the list, not managed, with an optional `=VALUE` free of whitespace, quotes, backslashes and
control characters: each is one `#SBATCH` line that sbatch reads word by word, with no shell to
unquote it.
"""

from __future__ import annotations

import re

from spark_dsl.patterns import lazy_regex

SBATCH_OPTIONS = frozenset(
    [
        "account",
        "array",
        "bb",
        "bbf",
        "begin",
        "chdir",
        "cluster-constraint",
        "clusters",
        "comment",
        "constraint",
        "container",
        "contiguous",
        "core-spec",
        "cores-per-socket",
        "cpu-freq",
        "cpus-per-gpu",
        "cpus-per-task",
        "deadline",
        "delay-boot",
        "dependency",
        "distribution",
        "error",
        "exclude",
        "exclusive",
        "export",
        "export-file",
        "extra-node-info",
        "get-user-env",
        "gid",
        "gpu-bind",
        "gpu-freq",
        "gpus",
        "gpus-per-node",
        "gpus-per-socket",
        "gpus-per-task",
        "gres",
        "gres-flags",
        "hold",
        "ignore-pbs",
        "input",
        "job-name",
        "licenses",
        "mail-type",
        "mail-user",
        "mcs-label",
        "mem",
        "mem-per-cpu",
        "mem-per-gpu",
        "mincpus",
        "nice",
        "no-kill",
        "no-requeue",
        "nodefile",
        "nodelist",
        "nodes",
        "ntasks",
        "ntasks-per-core",
        "ntasks-per-node",
        "ntasks-per-socket",
        "output",
        "overcommit",
        "oversubscribe",
        "partition",
        "power",
        "priority",
        "profile",
        "propagate",
        "qos",
        "reboot",
        "requeue",
        "reservation",
        "signal",
        "sockets-per-node",
        "spread-job",
        "switches",
        "thread-spec",
        "threads-per-core",
        "time",
        "time-min",
        "tmp",
        "uid",
        "use-min-nodes",
        "wckey",
    ]
)

# Written by job.sbatch from the spec (its own settings), or contradicting what it writes.
MANAGED = frozenset(
    [
        "job-name",
        "nodes",
        "ntasks",
        "ntasks-per-node",
        "gpus",
        "gpus-per-node",
        "gres",
        "exclusive",
        "time",
        "signal",
        "partition",
        "account",
        "qos",
        "output",
        "error",
        "constraint",
        "reservation",
        "exclude",
        "array",
    ]
)

_DIRECTIVE = lazy_regex(r"--([a-z][a-z0-9-]*)(?:=(.+))?", re.DOTALL)
_UNSAFE = lazy_regex(r"""[\s'"\\]""")


def option_name(text: str) -> str | None:
    """The option an extra directive names (`--mail-type=END` -> `mail-type`), None if not `--NAME[=VALUE]`."""
    m = _DIRECTIVE.fullmatch(text)
    return m.group(1) if m else None


def problem(text: str) -> str | None:
    """Why `text` cannot be an extra `#SBATCH` line, or None when it can."""
    m = _DIRECTIVE.fullmatch(text)
    if m is None:
        return "not `--option` or `--option=value`"
    name, value = m.group(1), m.group(2)
    if name not in SBATCH_OPTIONS:
        return f"`--{name}` is not an sbatch option"
    if name in MANAGED:
        return f"`--{name}` is written by spark from the spec"
    if value is not None and (_UNSAFE.search(value) or not value.isprintable()):
        return "its value has whitespace, a quote, a backslash or a control character"
    return None


def safe_value(text: str) -> bool:
    """A value for an `#SBATCH --key=VALUE` line: printable, no whitespace, quotes or backslashes."""
    return bool(text) and text.isprintable() and _UNSAFE.search(text) is None
