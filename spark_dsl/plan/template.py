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


def placeholder(name: str) -> Template:
    """The placeholder `name` on its own, as the plan writes it: `${NAME}`."""
    return Template(f"${{{name}}}")
