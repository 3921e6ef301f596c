"""The names a model goes by: a Hugging Face repository id, and the `model NAME` made from one.

Shared by `spark model import`, which writes the name, and SPK117's help, which says what that
command will write (spark_dsl/typecheck/model_ids.py), so the two never disagree.
"""

from __future__ import annotations

import re

# What `spark check` accepts as a model name (the grammar's NAME), and the words it reserves.
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
RESERVED = frozenset({"import", "profile", "deployment", "model", "extends", "true", "false"})
# A Hugging Face repository id as the cache folders spell it (`models--ORG--NAME`).
REPOSITORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def derived_name(text: str) -> str:
    """A model NAME from a repository's name: lower case, runs of other characters as one `-`."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    if not name:
        name = "imported"
    if not name[0].isalpha():
        name = "m-" + name
    return name + "-model" if name in RESERVED else name
