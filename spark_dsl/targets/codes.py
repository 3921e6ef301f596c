"""Explain texts of the codes the build itself reports (not rules over a plan)."""

from __future__ import annotations

from spark_dsl.code_doc import CodeDoc

NOTHING_TO_BUILD = "SPK513"
NOT_OWNED = "SPK520"
UNTRUSTED_MANIFEST = "SPK521"
OUTPUT_UNWRITABLE = "SPK522"

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
    CodeDoc(
        NOT_OWNED,
        "error",
        "an output folder spark does not own",
        "`spark build` would replace or remove a deployment folder in the output folder that spark "
        "does not own: `manifest.json` does not list it (a person made it), its files are not the ones "
        "the manifest recorded (names and SHA-256: it was edited), or another spec that still exists "
        "wrote it. The build stops before touching anything and names the folder. `--take-over` lets "
        "the build replace or remove such folders (their contents are lost).",
        "Issue 9 (file-system safety): a build writes only what it owns; a deployment named `specs` "
        "built with `-o .` must never delete the user's `specs/` folder, and a hand edit is never "
        "overwritten silently.",
        "$ ls out/alpha\nnotes.txt\n$ spark build alpha.spark -o out\n"
        "error[SPK520]: cannot replace out/alpha/: out/manifest.json does not list it, so spark did not write it",
        "$ mv out/alpha ~/alpha-notes && spark build alpha.spark -o out\n"
        "# or, to let spark replace the folder and lose its contents:\n"
        "$ spark build alpha.spark -o out --take-over",
    ),
    CodeDoc(
        UNTRUSTED_MANIFEST,
        "error",
        "a manifest spark cannot trust",
        "The output folder's `manifest.json` is not one spark can read safely: not UTF-8 or not JSON, "
        "an unknown version, the wrong shape or types, a deployment listed twice, a name that is not a "
        "plain deployment name (`..`, an absolute path, a separator, an empty name), a file hash that is "
        "not a SHA-256, or a symbolic link instead of a file. Nothing is written or removed.",
        "Issue 9: the manifest is committed and edited by pull requests; its names decide which folders "
        "a build may remove, so an entry such as `../x` must never become a deletion.",
        '$ cat out/manifest.json\n{"version": 2, "deployments": [{"name": "../src", "source": null, '
        '"files": {}}]}\n$ spark build specs -o out\n'
        'error[SPK521]: out/manifest.json entry 1 has name "../src", which is not a deployment name',
        "$ git checkout out/manifest.json   # or: rm out/manifest.json\n$ spark build specs -o out",
    ),
    CodeDoc(
        OUTPUT_UNWRITABLE,
        "error",
        "an output path spark cannot write",
        "`spark build` cannot write its output: `-o` names a file, a deployment's place holds a "
        "symbolic link or a file (spark never follows or removes a link, even with `--take-over`), or "
        "the file system refuses (read-only, full, no permission). The build changes nothing: staged "
        "folders are removed and the previous outputs and manifest stay as they were.",
        "Issue 9: a failed build changes nothing, and nothing outside the output folder is ever touched.",
        "$ ln -s /srv/models out/alpha\n$ spark build alpha.spark -o out\n"
        "error[SPK522]: cannot replace out/alpha: it is a symbolic link (to '/srv/models'), "
        "and spark never follows or removes one",
        "$ rm out/alpha   # removes the link only\n$ spark build alpha.spark -o out",
    ),
]
