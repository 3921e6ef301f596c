"""Help that converges: every fix of every diagnostic, applied alone, removes that diagnostic.

For every fixture (tests/fixtures/**) and every spec in specs/, each fix of each diagnostic is
applied on its own and the file is checked again: the diagnostic's code must be gone from that
place, and the fix must not bring an error the file did not have. Where a help line can be one
edit, the diagnostic must carry it as a fix; the codes whose help cannot be are listed with why.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from spark_dsl.diagnostics import Diagnostic, Fix, Severity
from spark_dsl.fixes import apply_edits
from spark_dsl.pipeline import RunResult, run
from spark_dsl.span import Location

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
# Folders whose files are checked with their own folder as the root (as test_check_fixtures does);
# the others import from sibling folders and are checked from their top folder.
FLAT = ("check", "codes", "rules")
PATHS = sorted(FIXTURES.rglob("*.spark")) + sorted((REPO / "specs").rglob("*.spark"))

# Diagnostics whose help cannot be one machine edit: code -> (why, words of the help it applies
# to, or a tuple of such words; "" for every help of the code). docs/fixes.md lists them too.
NO_SINGLE_EDIT: dict[str, tuple[str, str | tuple[str, ...]]] = {
    "SPK002": ("where the string should end is the author's choice", ""),
    "SPK003": ("where the block should close is the author's choice", ""),
    "SPK007": ("the file must be saved in another encoding", ""),
    "SPK008": ("flattening nested structure is a rewrite", ""),
    "SPK102": ("no fix picks the model or the accelerator (docs/fixes.md)", ("`model = ", "`accelerator = ")),
    "SPK103": ("no fix replaces the accelerator with another (docs/fixes.md)", "`accelerator` takes"),
    "SPK109": ("which of two deployments to rename, and to what, is the author's choice", ""),
    "SPK111": ("the imported file does not exist: the author must write it or fix the path", ""),
    "SPK112": ("the import leaves the root: moving the file or widening --root is the author's choice", ""),
    "SPK113": ("breaking an import cycle moves profiles between files", ""),
    "SPK114": ("which of two profiles to rename is the author's choice", ""),
    "SPK116": ("breaking an extends cycle is the author's choice", ""),
    "SPK117": ("the model must be declared first (`spark model import`); no fix picks another", ""),
    "SPK120": ("the import names something that is not a file", ""),
    "SPK124": ("merging profiles of a chain is a rewrite", ""),
    "SPK201": ("no fix replaces the accelerator with another (docs/fixes.md)", ""),
    "SPK202": ("NVFP4, the validated NVIDIA checkpoint, cannot run before Blackwell", "needs a Blackwell"),
    "SPK225": (
        "the model has no checkpoint the accelerator runs; no fix replaces the accelerator",
        "use an accelerator",
    ),
    "SPK229": ("fewer pipeline stages take fewer nodes, or another split: the author's choice", ""),
    "SPK234": ("the model has no checkpoint the CPU runs: its author must declare one", "declare a"),
    "SPK238": ("NIXL must be built into an image first, or the topology changes", ""),
    "SPK240": ("which CPUs the host has is the operator's to list", ""),
    "SPK241": ("which CPUs the host has, or whether to bind at all, is the operator's choice", ""),
    "SPK303": ("not even 1K tokens fit: the room must come from elsewhere", "add memory"),
    "SPK104": ("a unit with no near spelling: which unit was meant is the author's choice", "values take `"),
    "SPK508": ("how long the job may run is the operator's choice", ""),
    "SPK515": ("the model's Hub id, or where the serving machines keep the weights, is the author's to name", ""),
    "SPK516": ("the token's secret must be stored on the cluster first, under a name the operator picks", ""),
    "SPK547": ("the router image is built and pushed by the operator first", ""),
    "SPK548": ("whether the router's port is private is the operator's to make so", ""),
    "SPK560": ("which network joins the nodes (InfiniBand, RoCE, EFA or TCP) is the cluster's to name", ""),
    "SPK901": ("the secret must be stored outside the spec first", ""),
    "SPK908": ("the cache must move to a path without `,` and `:` on the cluster first", ""),
}


def without_fix_allowed(d: Diagnostic) -> bool:
    why = NO_SINGLE_EDIT.get(d.code)
    words = (why[1],) if why is not None and isinstance(why[1], str) else why[1] if why else ()
    return any(w in (d.help or "") for w in words)


def root_of(path: Path) -> Path:
    rel = path.relative_to(REPO)
    if rel.parts[:2] == ("tests", "fixtures") and rel.parts[2] in FLAT:
        return path.parent
    return REPO / Path(*rel.parts[: 3 if rel.parts[0] == "tests" else 1])


def place(result: RunResult, d: Diagnostic) -> Location:
    assert d.location is not None and d.location.file in result.sources, d
    return d.location


def shifted(offset: int, edits: list[tuple[int, int, int]]) -> int:
    """Where an offset lands after edits (start, end, new length); inside an edit, at its start."""
    out = offset
    for start, end, length in edits:
        if end <= offset:
            out += length - (end - start)
        elif start < offset:
            out -= offset - start
    return out


def apply(result: RunResult, fix: Fix) -> dict[Path, str]:
    by_file: dict[str, list] = {}
    for edit in fix.edits:
        by_file.setdefault(edit.location.file, []).append(edit)
    return {result.sources[f].path: apply_edits(result.sources[f].text, edits) for f, edits in by_file.items()}


def cases() -> list[tuple[Path, int]]:
    out = []
    for path in PATHS:
        result = run([path], root_of(path))
        out += [(path, i) for i, d in enumerate(result.diagnostics) if d.location is not None]
    return out


CASES = cases()


def _id(case: tuple[Path, int]) -> str:
    path, index = case
    return f"{path.relative_to(REPO)}#{index}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_every_fix_removes_its_diagnostic_and_brings_no_new_error(case: tuple[Path, int]) -> None:
    path, index = case
    root = root_of(path)
    before = run([path], root)
    d = before.diagnostics[index]
    where = place(before, d)
    if not d.fixes:
        assert without_fix_allowed(d), f"{d.code} at {where.file}: help {d.help!r} has no fix; add one, or say why not"
        return
    errors_before = Counter(x.code for x in before.diagnostics if x.severity is Severity.ERROR)
    for fix in d.fixes:
        after = run([path], root, apply(before, fix))
        edits = sorted(
            (e.location.span.start, e.location.span.end, len(e.text))
            for e in fix.edits
            if e.location.file == where.file
        )
        at = shifted(where.span.start, edits)
        # The same code may stay at that place only as another diagnostic that was there before.
        others = Counter(
            (x.message, shifted(x.location.span.start, edits))
            for x in before.diagnostics
            if x is not d and x.code == d.code and x.location is not None and x.location.file == where.file
        )
        left = Counter(
            (x.message, x.location.span.start)
            for x in after.diagnostics
            if x.code == d.code and x.location is not None and x.location.file == where.file
            and x.location.span.start == at
        )  # fmt: skip
        assert not (left - others), f"{fix.message!r} leaves {d.code}: {[x.message for x in after.diagnostics]}"
        errors_after = Counter(x.code for x in after.diagnostics if x.severity is Severity.ERROR)
        assert not (errors_after - errors_before), (
            f"{fix.message!r} for {d.code} brings errors the file did not have: "
            f"{[(x.code, x.message) for x in after.diagnostics if x.code in errors_after - errors_before]}"
        )


# Diagnostics about the deployment's name itself, or about a key it lacks, belong at its header.
ABOUT_THE_HEADER = {"SPK107", "SPK108", "SPK109"}


@pytest.mark.parametrize("path", PATHS, ids=lambda p: str(p.relative_to(REPO)))
def test_no_diagnostic_points_at_a_deployment_header(path: Path) -> None:
    result = run([path], root_of(path))
    headers = {
        (source.name, statement.name.span)
        for source in result.sources.values()
        if source.module is not None
        for statement in source.module.deployments
    }
    for d in result.diagnostics:
        if d.location is not None and d.code not in ABOUT_THE_HEADER:
            assert (d.location.file, d.location.span) not in headers, f"{d.code} points at the header: {d.message}"


def test_docs_list_every_help_that_has_no_single_edit() -> None:
    page = (REPO / "docs" / "fixes.md").read_text(encoding="utf-8")
    table = page[page.index("| code | why there is no single edit |") :].split("\n\n", 1)[0]
    listed = set(re.findall(r"SPK\d{3}", table))
    assert listed == set(NO_SINGLE_EDIT), "docs/fixes.md and NO_SINGLE_EDIT must name the same codes"
