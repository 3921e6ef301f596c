"""Rule behaviour beyond the fixtures: worked numbers, downgrades, origins, silencing, explain."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_dsl.codes import registry
from spark_dsl.diagnostics import Severity
from spark_dsl.pipeline import run

Project = Callable[[dict[str, str]], Path]


def check(project: Project, text: str, **files: str) -> Any:
    root = project({"a.spark": text, **files})
    return run([root / "a.spark"], root)


def by_code(result: Any) -> dict[str, Any]:
    return {d.code: d for d in result.diagnostics}


def test_bf16_on_eight_b200_fails_spk301_with_the_arithmetic(project: Project) -> None:
    # 1,640 GB of BF16 weights > 8 x 180 GB x 0.92 = 1,324.8 GB (hand-checked).
    result = check(project, "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n  checkpoint = bf16\n}\n")
    d = by_code(result)["SPK301"]
    assert d.severity is Severity.ERROR
    assert "1640 GB" in d.message and "8 x 180 GB x 0.92 = 1324.8 GB" in d.message
    assert "SPK302" not in by_code(result) and "SPK303" not in by_code(result)


def test_nvfp4_on_four_gb200_at_1m_warns_that_two_sequences_fit(project: Project) -> None:
    # 4 x 192 GB x 0.92 = 706.56 GB; minus 533 GB NVFP4 and 10.6 GB DSpark = 162.96 GB.
    # One 1,048,576-token BF16 sequence as vLLM reserves it: 65,536 B x 1,048,576 on the full layers +
    # 188,416 B x 34,832 on the sliding ones (window 2,048 - 1 + 2 x GB200's 16,384 batched tokens in
    # flight, in 16-token blocks, plus one: vllm/v1/kv_cache_interface.py:937-944) = 75.282 GB. A
    # second shares the tokens in flight (188,416 B x 2,064 windowed): 69.108 GB; 162.96 - 75.282 =
    # 87.678 GB holds one more, so 2 fit.
    result = check(
        project,
        "deployment d {\n  model = muse-spark-open\n  accelerator = gb200\n"
        "  checkpoint = nvfp4\n  max_model_len = 1M\n  max_num_seqs = 4\n}\n",
    )
    (d,) = result.diagnostics
    assert d.code == "SPK304" and d.severity is Severity.WARNING
    assert "only 2 full-length sequences fit" in d.message
    assert "set `max_num_seqs = 2`" in d.help
    (plan,) = result.plans
    est = plan.capacity[0]
    assert (est.memory_per_replica_gb, est.headroom_gb, est.sequence_gb, est.sequences_fit) == (
        706.56,
        162.96,
        75.282,
        2,
    )


def test_allow_unvalidated_downgrades_only_spk201_and_spk202(project: Project) -> None:
    base = "deployment d {\n  model = muse-spark-open\n  accelerator = h200\n  checkpoint = mxfp4\n%s}\n"
    strict = by_code(check(project, base % ""))
    assert strict["SPK201"].severity is Severity.ERROR and strict["SPK202"].severity is Severity.ERROR
    relaxed = by_code(check(project, base % "  allow_unvalidated = true\n"))
    assert relaxed["SPK201"].severity is Severity.WARNING and relaxed["SPK202"].severity is Severity.WARNING


def test_nvfp4_off_blackwell_stays_an_error(project: Project) -> None:
    result = check(
        project,
        "deployment d {\n  model = muse-spark-open\n  accelerator = h200\n"
        "  checkpoint = nvfp4\n  allow_unvalidated = true\n}\n",
    )
    codes = by_code(result)
    assert codes["SPK202"].severity is Severity.ERROR and "no FP4 support" in codes["SPK202"].message
    assert codes["SPK201"].severity is Severity.WARNING


def test_a_default_never_warns_against_itself(project: Project) -> None:
    # Concurrency 48 with MXFP4: the policy picks tp + ep + dspark; nothing to warn about.
    result = check(
        project,
        "deployment d {\n  model = muse-spark-open\n  accelerator = mi355x\n  workload { concurrency = 48 }\n}\n",
    )
    assert result.diagnostics == []
    (plan,) = result.plans
    assert plan.setting("parallel").value.spelled() == "tp + ep"
    assert plan.setting("parallel").origin == "workload policy: concurrency 48 -> tp + ep, dspark"


def test_a_value_from_a_profile_is_located_there_with_a_note_at_extends(project: Project) -> None:
    result = check(
        project,
        'import "amd.spark"\ndeployment d extends amd {\n  model = muse-spark-open\n  accelerator = mi355x\n}\n',
        **{"amd.spark": "profile amd {\n  prefix_caching = true\n}\n"},
    )
    (d,) = result.diagnostics
    assert d.code == "SPK207" and Path(d.location.file).name == "amd.spark"
    src = result.sources[d.location.file]
    assert src.index.position(d.location.span.start) == (2, 20)
    (note,) = d.notes
    assert "profile `amd`" in note.message and Path(note.location.file).name == "a.spark"
    assert result.sources[note.location.file].index.position(note.location.span.start) == (2, 22)


def test_ignore_comment_silences_a_warning_on_its_line_or_the_line_above(project: Project) -> None:
    text = (
        "deployment d {\n  model = muse-spark-open\n  accelerator = mi355x\n"
        "  # spark: ignore[SPK406]\n  frontend = rust\n  nodes = 2 # spark: ignore[SPK216]\n}\n"
    )
    # The error stays; the ignore that tried to silence it is itself reported (SPK125).
    assert [d.code for d in check(project, text).diagnostics] == ["SPK216", "SPK125"]


def test_deny_warnings_fails_the_run(spark: Callable[..., Any], project: Project) -> None:
    project({"a.spark": "deployment d {\n  model = muse-spark-open\n  accelerator = mi355x\n  frontend = rust\n}\n"})
    assert spark("check", "a.spark").returncode == 0
    assert spark("check", "a.spark", "--deny", "warnings").returncode == 1


def test_explain_prints_the_four_parts(spark: Callable[..., Any]) -> None:
    r = spark("explain", "SPK212")
    assert r.returncode == 0
    for heading in ("What it checks:", "Why:", "Failing example:", "Fix:"):
        assert heading in r.stdout
    assert "parallel      = tp + ep" in r.stdout


def test_explain_unknown_code_lists_close_codes(spark: Callable[..., Any]) -> None:
    r = spark("explain", "SPK299")
    assert r.returncode == 2
    # The nearest codes below, from the registry: a new SPK2xx rule changes them, not this test.
    nearest = sorted((code for code in registry() if code.startswith("SPK2")), reverse=True)[:3]
    assert f"close codes: {', '.join(nearest)}" in r.stderr


def test_plan_json_has_the_cli_shape(spark: Callable[..., Any]) -> None:
    repo = Path(__file__).resolve().parent.parent
    r = spark("plan", "examples/muse.spark", "--format", "json", "-d", "muse-b200", cwd=repo)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    (dep,) = doc["deployments"]
    assert dep["name"] == "muse-b200" and dep["path"] == "nvidia"
    assert dep["settings"]["prefix_caching"] == {"value": True, "origin": "recipe default"}
    assert dep["capacity"]["memory_per_replica_gb"] == 1324.8 and dep["capacity"]["headroom_gb"] == 781.2
    (launch,) = dep["launches"]
    assert launch["role"] == "server" and launch["node_rank"] == 0
    assert launch["argv"][:3] == ["vllm", "serve", "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"]
    # The ready budget: 600 s + (533 GB NVFP4 + 10.6 GB draft) at 0.5 GB/s to load and 0.25 GB/s to download.
    assert launch["env"] == {"VLLM_ENGINE_READY_TIMEOUT_S": "3862", "VLLM_USE_RUST_FRONTEND": "1"}
    assert launch["secret_env"] == {"VLLM_API_KEY": {"secret": "vllm-api-key"}}
    assert "vllm-api-key" not in " ".join(launch["argv"])
    assert doc["summary"]["errors"] == 0


def test_plan_with_errors_still_prints_and_exits_1(spark: Callable[..., Any], project: Project) -> None:
    project({"a.spark": "deployment d {\n  model = muse-spark-open\n  accelerator = mi355x\n  nodes = 2\n}\n"})
    r = spark("plan", "a.spark", "--format", "json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["deployments"][0]["launches"] == [] and doc["diagnostics"][0]["code"] == "SPK216"


def test_weights_that_fit_but_not_with_the_draft_still_fail(project: Project) -> None:
    # 4 x 192 GB x 0.7 = 537.6 GB holds the 533 GB of NVFP4, but not the 10.6 GB draft besides.
    result = check(
        project, "deployment d {\n  model = muse-spark-open\n  accelerator = gb200\n  gpu_memory_utilization = 0.7\n}\n"
    )
    codes = by_code(result)
    assert set(codes) == {"SPK302", "SPK303"} and codes["SPK303"].severity is Severity.ERROR
    assert "nothing is left after weights and draft model (543.6 GB of 537.6 GB)" in codes["SPK303"].message
    assert result.planned()[0].launches == ()


def test_extra_args_cannot_set_a_managed_flag_under_any_alias(project: Project) -> None:
    args = '["-sc", "{}", "--device-memory-utilization", "0.5", "--max_model_len=8", "--kv-transfer-config.kv_role=x"]'
    result = check(
        project,
        f"deployment d {{\n  model = muse-spark-open\n  accelerator = b200\n  serve {{ extra_args = {args} }}\n}}\n",
    )
    flagged = [d.message.split("`")[1] for d in result.diagnostics if d.code == "SPK902"]
    assert flagged == ["-sc", "--device-memory-utilization", "--max_model_len=8", "--kv-transfer-config.kv_role=x"]


def test_spk301_points_at_the_gpus_and_suggests_what_can_fit(project: Project) -> None:
    result = check(project, "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n  gpus = 2\n}\n")
    d = by_code(result)["SPK301"]
    assert result.sources[d.location.file].index.position(d.location.span.start) == (4, 10)
    assert d.help == "use all 8 GPUs of a node: `gpus = 8`"
    assert [e.text for f in d.fixes for e in f.edits] == ["8"]
    amd = check(
        project,
        "deployment d {\n  model = muse-spark-open\n  accelerator = mi300x\n  gpus = 4\n"
        "  checkpoint = bf16\n  allow_unvalidated = true\n}\n",
    )
    assert by_code(amd)["SPK301"].help == "use `checkpoint = mxfp4`, or accelerators with more memory"


def test_a_rejected_value_in_a_block_stops_the_rules_for_that_deployment(project: Project) -> None:
    result = check(
        project,
        "deployment d {\n  model = muse-spark-open\n  accelerator = mi355x\n"
        "  parallel = tp\n  workload { concurrency = 1.5K }\n}\n",
    )
    assert [d.code for d in result.diagnostics] == ["SPK105"]


def test_a_rule_about_one_targets_settings_finds_nothing_where_the_plan_does_not_build_it() -> None:
    """run_rules skips a rule tagged with a target (`@rule(..., target=...)`) for a plan that
    neither declares nor is forced to build that target: safe only while the rule finds nothing
    there. Every plan of the fixtures and specs (each code's failing one among them) proves it;
    and each tagged rule does fire on a plan that builds its target."""
    from spark_dsl.rules.table import all_rules

    repo = Path(__file__).resolve().parent.parent
    files = sorted((repo / "tests" / "fixtures").rglob("*.spark")) + sorted((repo / "specs").rglob("*.spark"))
    tagged = [r for r in all_rules() if r.target is not None]
    assert {r.target for r in tagged} == {"slurm", "compose", "kubernetes"} and len(tagged) >= 20
    fired: set[str] = set()
    plans = 0
    for path in files:
        for plan in run([path], path.parent).plans:
            plans += 1
            for rule_ in tagged:
                found = list(rule_.check(plan))
                if plan.builds(rule_.target):  # type: ignore[arg-type]
                    fired |= {rule_.code} if found else set()
                else:
                    assert found == [], (rule_.code, path.name, plan.name)
    assert plans > 250
    assert fired == {r.code for r in tagged}
