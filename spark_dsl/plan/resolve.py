"""Resolves a deployment against the recipe: its path, defaults, `auto` and the AMD workload policy."""

from __future__ import annotations

from types import MappingProxyType

from msgspec.structs import replace

from spark_dsl import catalog
from spark_dsl.catalog import Model, PathDefaults
from spark_dsl.loader import ResolvedDeployment
from spark_dsl.model_schema import to_catalog_model
from spark_dsl.plan.capacity import estimate_all
from spark_dsl.plan.model import DEFAULT, RECIPE_DEFAULT, Block, Plan, Pool, Resolved
from spark_dsl.schema import deployment_schema
from spark_dsl.units import format_count
from spark_dsl.values import Parallel, Speculative, TypedBody, parse_parallel

# Keys a deployment body sets directly, resolved in this order.
_PASSTHROUGH = ("kv_cache_dtype", "max_num_seqs", "gpu_memory_utilization", "allow_unvalidated")


def parse_speculative(text: str) -> Speculative:
    if text == "dspark(adaptive)":
        return Speculative("dspark", adaptive=True)
    return Speculative(text)


def _explicit(body: TypedBody, key: str) -> Resolved | None:
    s = body.get(key)
    return None if s is None else Resolved.from_setting(s)


def band_of(concurrency: int) -> str:
    th = catalog.load().thresholds
    if concurrency < th.ep_from_concurrency:
        return "low"
    if concurrency <= th.dspark_until_concurrency:
        return "mid"
    return "high"


def workload_choice(
    checkpoint: str, concurrency: int | None, goal: str | None, long_context: bool, max_model_len: int | None
) -> tuple[Parallel, Speculative, str] | None:
    """The AMD policy's parallelism and draft, with the reason shown as their origin."""
    cat = catalog.load()
    if long_context:
        shown = format_count(max_model_len) if max_model_len else "long"
        return (
            Parallel(has_tp=True),
            Speculative("none"),
            f"workload policy: max_model_len {shown} -> long-context configuration",
        )
    if concurrency is not None:
        band, why = band_of(concurrency), f"concurrency {concurrency}"
    elif goal is not None:
        band, why = ("low" if goal == "latency" else "high"), f"goal {goal}"
    else:
        return None
    table = cat.recipe.workload_policy.get(checkpoint)
    if table is None:
        return None
    choice = table[band]
    parallel, speculative = parse_parallel(choice.parallel), parse_speculative(choice.speculative)
    return parallel, speculative, f"workload policy: {why} -> {parallel.spelled()}, {speculative.spelled()}"


class PlanBuilder:
    """Builds one deployment's plan; reports nothing itself (rules do)."""

    def __init__(self, dep: ResolvedDeployment) -> None:
        self.dep = dep
        self.body = dep.body
        self.cat = catalog.load()

    def _model(self) -> Model | None:
        """The catalog model `model` names, or the declared one (docs/models.md) as the same shape."""
        declared = self.dep.model
        if declared is not None:
            typed = declared.typed
            return None if typed is None else to_catalog_model(declared.node.name.name, typed)
        return self.cat.models.get(self.body.value("model"))

    def build(self, forced_targets: tuple[str, ...] = ()) -> Plan | None:
        body = self.body
        model = self._model()
        accelerator = self.cat.accelerators.get(body.value("accelerator"))
        if model is None or accelerator is None:
            return None
        path = accelerator.vendor
        # A model outside the recipe gets none of the recipe's path defaults (`_generic`), and nor
        # does the recipe's model where the recipe has no path (vLLM's CPU backend).
        recipe = model.id == self.cat.recipe.model and self.cat.has_path(path)
        defaults = self.cat.path_defaults(path) if recipe else None
        settings: dict[str, Resolved] = {
            "model": Resolved.from_setting(body.get("model")),  # type: ignore[arg-type]
            "accelerator": Resolved.from_setting(body.get("accelerator")),  # type: ignore[arg-type]
        }
        settings["gpus"] = _explicit(body, "gpus") or Resolved(
            accelerator.gpus_per_node, f"{accelerator.display_name} default"
        )
        if defaults is None:
            self._generic(settings, model)
        else:
            self._recipe_path(settings, defaults, accelerator.validated)
        ckpt = settings.get("checkpoint")
        checkpoint = model.checkpoints.get(ckpt.value) if ckpt else None
        for key in _PASSTHROUGH:
            explicit = _explicit(body, key)
            if explicit is not None:
                settings[key] = explicit
        spec = Block(deployment_schema(), body)
        settings.setdefault("kv_cache_dtype", spec.resolved("kv_cache_dtype"))  # type: ignore[arg-type]

        workload = body.block("workload")
        concurrency = workload.value("concurrency") if workload else None
        goal = workload.value("goal") if workload else None
        if workload is not None:
            for key in ("concurrency", "goal"):
                s = workload.get(key)
                if s is not None:
                    settings[key] = Resolved.from_setting(s)

        if defaults is not None:
            self._parallel_and_draft(settings, path, defaults, concurrency, goal)
            self._attention(settings, path, defaults)
        pools, disaggregated = self._pools(settings)
        self._runtime(settings, accelerator.vendor, disaggregated)
        plan = Plan(
            name=self.dep.name,
            deployment=self.dep,
            path=path,
            model=model,
            accelerator=accelerator,
            checkpoint=checkpoint,
            settings=MappingProxyType(settings),
            spec=spec,
            pools=pools,
            disaggregated=disaggregated,
            forced_targets=forced_targets,
        )
        return replace(plan, capacity=estimate_all(plan))

    def _recipe_path(self, settings: dict[str, Resolved], defaults: PathDefaults, validated: bool) -> None:
        """The recipe model's settings the spec leaves out: its path's defaults."""
        body = self.body
        # Checkpoint: an accelerator outside the recipe gets no default.
        ckpt = _explicit(body, "checkpoint")
        if ckpt is None and validated:
            ckpt = Resolved(defaults.checkpoint, RECIPE_DEFAULT)
        if ckpt is not None:
            settings["checkpoint"] = ckpt
        for key in ("frontend", "max_model_len", "prefix_caching", "chunked_prefill", "model_runner"):
            explicit = _explicit(body, key)
            if explicit is not None:
                settings[key] = explicit
            elif getattr(defaults, key) is not None:
                settings[key] = Resolved(getattr(defaults, key), RECIPE_DEFAULT)
        modalities = _explicit(body, "modalities")
        settings["modalities"] = modalities or Resolved(defaults.modalities, RECIPE_DEFAULT)

    def _generic(self, settings: dict[str, Resolved], model: Model) -> None:
        """A model outside the recipe: what the spec writes, else the model's first checkpoint,
        TP over the node's GPUs, no draft, vLLM's own attention backend and defaults (docs/models.md)."""
        body = self.body
        first = next(iter(model.checkpoints), None)
        ckpt = _explicit(body, "checkpoint")
        if ckpt is None and first is not None:
            ckpt = Resolved(first, f"{DEFAULT}: the model's first checkpoint")
        if ckpt is not None:
            settings["checkpoint"] = ckpt
        for key in ("frontend", "max_model_len", "prefix_caching", "chunked_prefill", "model_runner", "attention"):
            explicit = _explicit(body, key)
            if explicit is not None:
                settings[key] = explicit
        settings["modalities"] = _explicit(body, "modalities") or Resolved(model.modalities, "the model's modalities")
        par = _explicit(body, "parallel")
        settings["parallel"] = (
            par if par is not None and not par.value.auto else Resolved(Parallel(has_tp=True), DEFAULT)
        )
        spec = _explicit(body, "speculative")
        settings["speculative"] = (
            spec if spec is not None and spec.value.mode != "auto" else Resolved(Speculative("none"), DEFAULT)
        )

    def _runtime(self, settings: dict[str, Resolved], vendor: str, disaggregated: bool) -> None:
        """The network fabric and, under P/D, the router's image: shown by `spark plan`."""
        runtime = self.body.block("runtime")
        fabric = runtime.get("fabric") if runtime else None
        if fabric is not None:
            settings["fabric"] = Resolved.from_setting(fabric)
        if disaggregated:
            chosen = runtime.get("router_image") if runtime else None
            image = runtime.get("image") if runtime else None
            settings["router_image"] = (
                Resolved.from_setting(chosen)
                if chosen is not None
                else Resolved(
                    image.value if image is not None else self.cat.image(vendor),
                    "default: the vLLM image (runtime.router_image picks one with vllm-router)",
                )
            )

    def _parallel_and_draft(
        self,
        settings: dict[str, Resolved],
        path: str,
        defaults: PathDefaults,
        concurrency: int | None,
        goal: str | None,
    ) -> None:
        par = _explicit(self.body, "parallel")
        spec = _explicit(self.body, "speculative")
        choice = None
        if self.cat.vendor(path).workload_policy and "checkpoint" in settings:
            limit = settings.get("max_model_len")
            long_context = limit is not None and limit.value > self.cat.thresholds.default_context
            choice = workload_choice(
                settings["checkpoint"].value, concurrency, goal, long_context, limit.value if limit else None
            )
        if par is None or par.value.auto:
            suffix = " (auto)" if par is not None else ""
            if choice is not None:
                settings["parallel"] = Resolved(choice[0], choice[2] + suffix)
            else:
                settings["parallel"] = Resolved(parse_parallel(defaults.parallel), RECIPE_DEFAULT + suffix)
        else:
            settings["parallel"] = par
        if spec is None or spec.value.mode == "auto":
            suffix = " (auto)" if spec is not None else ""
            if choice is not None:
                settings["speculative"] = Resolved(choice[1], choice[2] + suffix)
            else:
                settings["speculative"] = Resolved(parse_speculative(defaults.speculative), RECIPE_DEFAULT + suffix)
        else:
            settings["speculative"] = spec

    def _attention(self, settings: dict[str, Resolved], path: str, defaults: PathDefaults) -> None:
        explicit = _explicit(self.body, "attention")
        if explicit is not None:
            settings["attention"] = explicit
            return
        spec: Speculative = settings["speculative"].value
        if spec.mode == "dspark" and spec.adaptive and defaults.attention_with_adaptive_dspark:
            settings["attention"] = Resolved(
                defaults.attention_with_adaptive_dspark, RECIPE_DEFAULT + " (adaptive DSpark)"
            )
        elif defaults.attention is not None:
            settings["attention"] = Resolved(defaults.attention, RECIPE_DEFAULT)

    def _pools(self, settings: dict[str, Resolved]) -> tuple[tuple[Pool, ...], bool]:
        """The node pools, and whether they are a prefill/decode pair; records `nodes`."""
        gpus = settings["gpus"].value
        parallel = settings["parallel"]
        disagg = self.body.block("disaggregation")
        # The node counts a spec leaves out are the schema's (its `nodes` keys' fallback).
        spec = Block(deployment_schema(), self.body)
        nodes = _explicit(self.body, "nodes")
        if disagg is None:
            resolved = spec.resolved("nodes")
            assert resolved is not None  # `nodes` has a fallback
            settings["nodes"] = resolved
            return (_pool("server", resolved.value, 0, parallel, gpus, nodes),), False
        if nodes is not None:
            settings["nodes"] = nodes
        pools = []
        rank = 0
        for role in ("prefill", "decode"):
            block = disagg.block(role)
            pool_nodes = _explicit(block, "nodes") if block else None
            pool_parallel = (_explicit(block, "parallel") if block else None) or parallel
            count = spec.block("disaggregation").block(role).value("nodes")
            pools.append(_pool(role, count, rank, pool_parallel, gpus, pool_nodes))
            rank += count
        settings.setdefault("nodes", Resolved(rank, "sum of the disaggregation pools"))
        return tuple(pools), True


def _pool(
    role: str, nodes: int, first_rank: int, parallel: Resolved, gpus: int, nodes_setting: Resolved | None
) -> Pool:
    value: Parallel = parallel.value
    tp = value.tp if value.tp is not None else (gpus if value.has_tp else 1)
    return Pool(role, nodes, first_rank, tp, value.ep, value.dp, parallel, nodes_setting, value.pp or 1)


def build_plan(dep: ResolvedDeployment, forced_targets: tuple[str, ...] = ()) -> Plan | None:
    """The plan of a deployment whose body checked cleanly; None when model or accelerator is unknown.
    `forced_targets`: what `spark build -t` builds besides the declared targets."""
    return PlanBuilder(dep).build(forced_targets)
