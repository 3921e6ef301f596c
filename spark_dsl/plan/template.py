"""Compiler-written text that holds run-time placeholders (CLI.md), told apart from user text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class Template(str):
    """Text the compiler wrote that holds placeholders such as `${SPARK_HEAD_ADDRESS}`.

    Only a Template is ever filled (spark_dsl.targets.placeholders): the same characters in a
    user's value (`served_model_name = "${SPARK_HEAD_ADDRESS}"`) are that value, and reach the
    process literally. Text built around a placeholder must be wrapped again, since string
    operations return a plain str: `Template(f"http://{address}:8100")`.
    """

    __slots__ = ()


# The placeholder names (CLI.md), defined here once: the plan writes them, the targets fill them.
HEAD = "SPARK_HEAD_ADDRESS"
PREFILL = "SPARK_PREFILL_ADDRESS"
DECODE = "SPARK_DECODE_ADDRESS"
# The address of the node (or pod) a launch itself runs on: what it binds and advertises.
NODE_ADDRESS = "SPARK_NODE_ADDRESS"
# The network interface that holds that address (Gloo's and NCCL's socket interface).
NODE_INTERFACE = "SPARK_NODE_INTERFACE"
# The placeholder of each pool's head address, by pool role.
POOL_ADDRESS = {"server": HEAD, "prefill": PREFILL, "decode": DECODE}
# The values that tell a pool's nodes apart, each a whole argument: a node's rank in its pool (a
# pipeline's `--node-rank`) and a headless node's first data-parallel rank. The launches write
# them as placeholders, so every node of a pool shares one argv template; each launch carries its
# own values (`Launch.ranks`), which its `argv` holds, and a target that runs one template on every
# node (Kubernetes' LeaderWorkerSet workers) fills them itself.
NODE_RANK = "SPARK_NODE_RANK"
DP_START_RANK = "SPARK_DP_START_RANK"
RANKS = (NODE_RANK, DP_START_RANK)


def placeholder(name: str) -> Template:
    """The placeholder `name` on its own, as the plan writes it: `${NAME}`."""
    return Template(f"${{{name}}}")


def with_ranks(argv: Iterable[str], ranks: Mapping[str, str]) -> tuple[str, ...]:
    """`argv` with each rank placeholder the compiler wrote (a Template, never a user's text that
    reads the same) as its value in `ranks`."""
    values = {placeholder(name): value for name, value in ranks.items()}
    return tuple(values.get(arg, arg) if isinstance(arg, Template) else arg for arg in argv)
