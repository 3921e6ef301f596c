"""Explain texts of the codes the build itself reports (not rules over a plan)."""

from __future__ import annotations

from spark_dsl.codes import CodeDoc

NOTHING_TO_BUILD = "SPK513"

BUILD_CODES = [
    CodeDoc(
        NOTHING_TO_BUILD,
        "info",
        "nothing to build for a deployment",
        "`spark build` found a deployment that declares no `target` block, and no `-t TARGET` "
        "was given, so it writes nothing for it.",
        "CLI.md: a deployment with nothing to build is reported as `info`; its outputs are "
        "the targets it declares or the ones named on the command line.",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n}",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n\n  target shell {}\n}",
    ),
]
