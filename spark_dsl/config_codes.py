"""Explain texts of the codes a project's configuration file can get (spark.toml, [tool.spark])."""

from __future__ import annotations

from spark_dsl.code_doc import CodeDoc

UNKNOWN_KEY = "SPK601"
BAD_VALUE = "SPK602"
NOT_TOML = "SPK603"

_BASIS = (
    "Issue 11 (the everyday CLI): configuration lives in `spark.toml` or `[tool.spark]`, and an "
    "unknown configuration key is an error with a did-you-mean, so a typo never silently turns a "
    "setting off. docs/configuration.md describes every key."
)

CONFIG_CODES = [
    CodeDoc(
        UNKNOWN_KEY,
        "error",
        "unknown configuration key",
        "`spark.toml` (or the `[tool.spark]` table of `pyproject.toml`) holds a key spark does not "
        "know. The diagnostic points at the key and suggests the nearest known key; the keys are "
        "`root`, `include`, `exclude`, `extend-exclude`, `select`, `ignore`, `per-path-ignores`, "
        "`warnings-as-errors` and `output`. The rest of the file still applies.",
        _BASIS,
        '# spark.toml\nignores = ["SPK302"]',
        '# spark.toml\nignore = ["SPK302"]',
    ),
    CodeDoc(
        BAD_VALUE,
        "error",
        "a configuration value spark cannot use",
        'A known configuration key has a value of the wrong type (`warnings-as-errors = "yes"`), a '
        'code that does not exist (`ignore = ["SPK7"]`: no code starts so), a code that names only errors in `ignore` '
        "or `per-path-ignores` (errors cannot be ignored: a spec with an error cannot be deployed), an "
        "empty or invalid glob (`[z-a]`: only that pattern is dropped), or a `root` that is not a folder "
        "holding the configuration file or that lies above the repository root (the nearest folder with "
        "`.git`; without one, the file's own folder). The key keeps its default; the rest of the file "
        "still applies.",
        _BASIS,
        '# spark.toml\nwarnings-as-errors = "yes"\nignore = ["SPK103"]',
        '# spark.toml\nwarnings-as-errors = true\nignore = ["SPK302"]',
    ),
    CodeDoc(
        NOT_TOML,
        "error",
        "a configuration file that is not TOML",
        "`spark.toml`, or a `pyproject.toml` with a `[tool.spark]` table, cannot be read, is not "
        "UTF-8, is not valid TOML, nests arrays or tables more than 64 levels deep, or is a symbolic "
        "link to a file outside the repository (never read, so never quoted). The diagnostic points "
        "where the TOML parser stopped; no setting of the file applies until it parses.",
        _BASIS,
        '# spark.toml\nignore = ["SPK302"',
        '# spark.toml\nignore = ["SPK302"]',
    ),
]
