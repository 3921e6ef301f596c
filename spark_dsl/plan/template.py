"""Compiler-written text that holds run-time placeholders (CLI.md), told apart from user text."""

from __future__ import annotations


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
# The placeholder of each pool's head address, by pool role.
POOL_ADDRESS = {"server": HEAD, "prefill": PREFILL, "decode": DECODE}


def placeholder(name: str) -> Template:
    """The placeholder `name` on its own, as the plan writes it: `${NAME}`."""
    return Template(f"${{{name}}}")
