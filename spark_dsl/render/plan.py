"""`spark plan` output: each value with its origin, the capacity arithmetic, and every launch."""

from __future__ import annotations

import json
from typing import Any

from spark_dsl.plan.model import CapacityEstimate, Plan, Planned
from spark_dsl.render.plan_settings import Sources, json_settings, text_rows
from spark_dsl.targets.shell_words import word
from spark_dsl.text_escape import json_document, visible
from spark_dsl.units import format_count

CAPACITY_CAVEAT = (
    "estimate ignores activation memory and CUDA graphs; a replica is one tensor-parallel group and "
    "experts sharded over data-parallel ranks are not counted, which errs on the safe side"
)


def plan_dict(planned: Planned, sources: Sources | None = None) -> dict[str, Any]:
    """The JSON of one plan; `sources` (every file the run read) gives profiles' lines and columns."""
    plan, launches = planned
    capacity = plan.capacity[0].as_dict() if plan.capacity else None
    out: dict[str, Any] = {
        "name": plan.name,
        "file": plan.deployment.source.name,
        "path": plan.path,
        "settings": json_settings(plan, sources),
        "capacity": capacity,
        "capacity_by_role": [c.as_dict() for c in plan.capacity],
        "launches": [launch.as_dict() for launch in launches],
        "notes": _notes(plan),
    }
    return out


def _notes(plan: Plan) -> list[str]:
    notes = [CAPACITY_CAVEAT]
    if any(pool.pp > 1 for pool in plan.pools):
        notes.append(
            "a pipeline replica counts the memory of all its stages together; vLLM splits the layers "
            "over the stages as evenly as it can, so one stage may hold a layer more than the others"
        )
    if plan.checkpoint is not None and not plan.checkpoint.confirmed:
        notes.append(
            f"checkpoint repository {plan.checkpoint.repository} is unconfirmed (no public id was found); "
            "set `runtime { model_path = ... }` to the one you serve"
        )
    if plan.accelerator.note:
        notes.append(plan.accelerator.note)
    if plan.accelerator.on_host:
        notes.append(
            "vLLM's CPU backend: the ranks of a node share runtime.host_memory evenly, and each rank's "
            "KV cache (--kv-cache-memory-bytes) is what its share leaves after its share of the weights; "
            "vLLM's processes need memory of their own beside it"
        )
    return notes


def _kv_line(est: CapacityEstimate) -> str:
    """Bytes per token of the layers that keep every token, then of each kind that keeps a
    bounded reservation per sequence (plan/capacity.py), with that reservation."""
    parts = [f"{est.kv_bytes_per_token:,} B/token (full layers)"]
    if est.sliding_bytes_per_token:
        parts.append(
            f"{est.sliding_bytes_per_token:,} B/token for {est.sliding_tokens:,} tokens (sliding-window layers)"
        )
    if est.chunked_bytes_per_token:
        parts.append(f"{est.chunked_bytes_per_token:,} B/token for {est.chunked_tokens:,} tokens (chunked layers)")
    return " + ".join(parts)


def render_text(plans: list[Planned], sources: Sources | None = None) -> str:
    out: list[str] = []
    for plan, launches in plans:
        out.append(f"deployment {plan.name} ({plan.deployment.source.name}): {plan.path.upper()} path")
        rows = text_rows(plan, sources)
        wk = max(len(k) for k, _, _ in rows)
        wv = max(len(v) for _, v, _ in rows)
        out.append("  settings:")
        out += [f"    {k.ljust(wk)}  {v.ljust(wv)}  {o}" for k, v, o in rows]
        for est in plan.capacity:
            role = "" if est.role == "server" else f" ({est.role} pool)"
            out.append(f"  capacity per replica{role}:")
            out.append(
                f"    memory      {est.replica_gpus} x {est.memory_per_gpu_gb:g} GB x {est.utilization:g} "
                f"= {est.memory_per_replica_gb:g} GB"
            )
            out.append(f"    weights     {est.weights_gb:g} GB ({plan.value('checkpoint')})")
            out.append(f"    draft       {est.draft_gb:g} GB")
            out.append(f"    headroom    {est.headroom_gb:g} GB")
            out.append(f"    KV cache    {_kv_line(est)}")
            out.append(
                f"    sequences   {est.sequences_fit} of {format_count(est.sequence_tokens)} tokens fit "
                f"({est.sequence_gb:g} GB each)"
            )
        for note in _notes(plan):
            out.append(f"  note: {note}")
        if not launches:
            out.append("  launches: none (the deployment has errors)")
        for launch in launches:
            out.append(f"  launch {launch.role} on node {launch.node_rank}:")
            for name, value in launch.env:
                out.append(f"    {name}={word(value)}")
            for name, ref in launch.secrets:
                out.append(f"    {name}=<{ref.kind} {ref.name}>")
            out.append("    " + " \\\n      ".join(_argv_lines(launch.argv)))
        out.append("")
    # Values and file names come from the spec: show their control characters, never act on them.
    return "\n".join(visible(line, keep_tabs=True) for line in "\n".join(out).split("\n"))


def _argv_lines(argv: tuple[str, ...]) -> list[str]:
    """One flag (with its value) per line, as bash takes it: run-time values as `"${SPARK_...}"`."""
    head = 3 if argv[:2] == ("vllm", "serve") else 1
    lines: list[str] = [" ".join(word(a) for a in argv[:head])]
    i = head
    while i < len(argv):
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            lines.append(f"{word(argv[i])} {word(argv[i + 1])}")
            i += 2
        else:
            lines.append(word(argv[i]))
            i += 1
    return lines


def render_json(plans: list[Planned], diagnostics_doc: dict[str, Any], sources: Sources | None = None) -> str:
    doc = {
        "version": 1,
        "deployments": [plan_dict(p, sources) for p in plans],
        "diagnostics": diagnostics_doc["diagnostics"],
        "summary": diagnostics_doc["summary"],
    }
    return json_document(json.dumps(doc, indent=1, ensure_ascii=False)) + "\n"
