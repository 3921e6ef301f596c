"""Hints that used to lead in circles (issue 11), each applied as a user would apply it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from spark_dsl.diagnostics import Diagnostic, Edit, Severity
from spark_dsl.pipeline import RunResult, run

Project = Callable[[dict[str, str]], Path]

HEAD = "deployment d {\n  model       = muse-spark-open\n"


def check(project: Project, text: str) -> RunResult:
    folder = project({"a.spark": text})
    return run([folder / "a.spark"], folder)


def line_of(result: RunResult, d: Diagnostic) -> int:
    assert d.location is not None
    return result.sources[d.location.file].index.position(d.location.span.start)[0]


def apply_edits(text: str, edits: tuple[Edit, ...]) -> str:
    for edit in sorted(edits, key=lambda e: e.location.span.start, reverse=True):
        text = text[: edit.location.span.start] + edit.text + text[edit.location.span.end :]
    return text


def apply_first_fix(project: Project, result: RunResult, d: Diagnostic) -> RunResult:
    assert d.fixes, f"{d.code} has no fix: {d.help}"
    assert d.location is not None
    text = apply_edits(result.sources[d.location.file].text, d.fixes[0].edits)
    return check(project, text)


def errors(result: RunResult) -> list[str]:
    return [d.code for d in result.diagnostics if d.severity is Severity.ERROR]


PD_TWO_DECODE_NODES = (
    HEAD + "  accelerator = b200\n  disaggregation {\n    prefill {\n      nodes = 1\n    }\n"
    "    decode {\n      nodes = 2\n    }\n  }\n}\n"
)


def test_a_decode_pool_of_two_nodes_is_told_the_whole_parallelism_and_its_fix_is_clean(project: Project) -> None:
    result = check(project, PD_TWO_DECODE_NODES)
    (d,) = result.diagnostics
    assert d.code == "SPK217"
    # Not "use `dp(2)`", which as `parallel = dp(2)` means TP 1 and leads to "use `dp(16)`".
    assert "`parallel = dp(2) + tp + ep`" in (d.help or "")
    fixed = apply_first_fix(project, result, d)
    assert fixed.diagnostics == []
    text = fixed.sources[fixed.files[0].name].text
    assert "    decode {\n      nodes = 2\n      parallel = dp(2) + tp + ep\n    }" in text


def test_dp_alone_in_a_pool_is_told_to_keep_tp_and_every_fix_is_clean(project: Project) -> None:
    text = PD_TWO_DECODE_NODES.replace("      nodes = 2\n", "      nodes = 2\n      parallel = dp(2)\n")
    result = check(project, text)
    assert result.diagnostics, "`dp(2)` alone is TP 1 on eight-GPU nodes"
    for d in result.diagnostics:
        assert "dp(16)" not in (d.help or ""), d
        assert d.fixes, d
        assert errors(apply_first_fix(project, result, d)) == [], d


def test_spk213_and_spk304_ask_for_the_same_max_num_seqs(project: Project) -> None:
    result = check(project, HEAD + "  accelerator = mi355x\n  max_model_len = 1M\n  max_num_seqs = 32\n}\n")
    helps = {d.code: d.help or "" for d in result.diagnostics}
    assert set(helps) == {"SPK213", "SPK304"}
    assert "`max_num_seqs = 8`" in helps["SPK213"] and "`max_num_seqs = 8`" in helps["SPK304"]


def test_spk213_with_max_num_seqs_unset_adds_it(project: Project) -> None:
    result = check(project, HEAD + "  accelerator   = mi355x\n  max_model_len = 1M\n}\n")
    (d,) = result.diagnostics
    assert d.code == "SPK213"
    fixed = apply_first_fix(project, result, d)
    assert fixed.diagnostics == []
    assert "  max_model_len = 1M\n  max_num_seqs = 8\n}" in fixed.sources[fixed.files[0].name].text


def test_a_colon_after_a_key_is_told_to_be_an_equals_sign_with_a_safe_fix(project: Project) -> None:
    result = check(project, HEAD.replace("model       =", "model:") + "  accelerator = b200\n}\n")
    (d,) = result.diagnostics
    assert d.code == "SPK004"
    assert "=" in (d.help or "") and "quote" not in (d.help or "")
    (fix,) = d.fixes
    assert fix.safe
    assert apply_first_fix(project, result, d).diagnostics == []


def test_an_unvalidated_accelerator_is_told_its_validated_neighbour(project: Project) -> None:
    result = check(project, HEAD + "  accelerator = h200\n  checkpoint = mxfp4\n}\n")
    spk201 = next(d for d in result.diagnostics if d.code == "SPK201")
    assert "`accelerator = b200`" in (spk201.help or "")
    assert not spk201.fixes  # named in the help, never written by a fix (docs/fixes.md)


def test_the_checkpoint_nvidia_validates_is_not_suggested_where_it_cannot_run(project: Project) -> None:
    # H200 has no FP4: `checkpoint = nvfp4` there is an error, so it must not be the hint.
    text = HEAD + "  accelerator = h200\n  allow_unvalidated = true\n  checkpoint = mxfp4\n}\n"
    spk202 = next(d for d in check(project, text).diagnostics if d.code == "SPK202")
    assert "checkpoint = nvfp4" not in (spk202.help or "") and not spk202.fixes


def test_amd_prefill_decode_points_at_the_pools_not_at_the_header(project: Project) -> None:
    text = HEAD + "  accelerator = mi355x\n  disaggregation {\n    prefill { }\n    decode { }\n  }\n}\n"
    result = check(project, text)
    assert [d.code for d in result.diagnostics] == ["SPK205"]
    assert line_of(result, result.diagnostics[0]) == 4
    fixed = apply_first_fix(project, result, result.diagnostics[0])
    assert fixed.diagnostics == []


def test_weights_too_big_for_a_tp1_replica_point_at_the_parallelism(project: Project) -> None:
    text = HEAD + "  accelerator = b200\n  parallel    = dp(8)\n}\n"
    result = check(project, text)
    assert result.diagnostics
    for d in result.diagnostics:
        assert line_of(result, d) == 4, d  # `parallel`, not `deployment d {`
    spk301 = next(d for d in result.diagnostics if d.code == "SPK301")
    assert errors(apply_first_fix(project, result, spk301)) == []


def test_a_name_in_capitals_is_told_its_own_spelling_safely(project: Project) -> None:
    result = check(project, HEAD + "  accelerator = B200\n}\n")
    (d,) = result.diagnostics
    assert d.code == "SPK103" and "did you mean `b200`?" in d.message  # not the nearer-looking `h200`
    (fix,) = d.fixes
    assert fix.safe, "only the case changes: the same accelerator"
    assert apply_first_fix(project, result, d).diagnostics == []


def test_a_managed_flag_on_amd_is_not_sent_to_a_key_that_is_an_error_there(project: Project) -> None:
    args = '["--enable-prefix-caching", "--max-num-seqs", "4"]'
    text = HEAD + f"  accelerator = mi355x\n  serve {{\n    extra_args = {args}\n  }}\n}}\n"
    result = check(project, text)
    flags = {d.message.split("`")[1]: d for d in result.diagnostics if d.code == "SPK902"}
    assert set(flags) == {"--enable-prefix-caching", "--max-num-seqs"}
    prefix = flags["--enable-prefix-caching"]
    # Not "set `prefix_caching`": `prefix_caching = true` is SPK207 on AMD.
    assert prefix.help == "remove it: the AMD path runs with prefix caching off (SPK207)"
    assert "`max_num_seqs`" in (flags["--max-num-seqs"].help or "")
    # Each points at its own item of the list, and its fix removes it (with its value).
    assert line_of(result, prefix) == 5 and prefix.location is not None
    assert result.sources[prefix.location.file].text[prefix.location.span.start :].startswith('"--enable-prefix')
    fixed = apply_first_fix(project, result, flags["--max-num-seqs"])
    assert '["--enable-prefix-caching"]' in fixed.sources[fixed.files[0].name].text
    assert errors(apply_first_fix(project, fixed, fixed.diagnostics[0])) == []
