"""Explain text of SPK125, the ignore comment that silences nothing. Apart from `spark_dsl.ignores`
so the code registry can list it without importing the ignore logic, which looks codes up in the
registry (an import in a circle otherwise)."""

from __future__ import annotations

from spark_dsl.code_doc import CodeDoc

UNUSED_IGNORE = "SPK125"

CODES = [
    CodeDoc(
        UNUSED_IGNORE,
        "warning",
        "an ignore comment that silences nothing",
        "A `# spark: ignore[...]` comment names a code that is not a diagnostic code, an error "
        "code (errors are never silenced), or a warning that did not fire on the comment's line or "
        "the line below. The fix removes the code, and the whole comment when it named only that "
        "code. Not judged in profiles, in files the run only imports, in a deployment that has "
        "errors, or for codes only `spark build` reports.",
        "As ruff's RUF100: an ignore that does nothing hides nothing today but will hide the next, "
        "unrelated warning on that line, and a misspelt code silences nothing while looking as if it did.",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n"
        "  # spark: ignore[SPK402]\n  checkpoint  = nvfp4\n}",
        "deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n  checkpoint  = nvfp4\n}",
    )
]
