"""`spark explain KEY`: a language key or block, an accelerator, a model or a checkpoint, explained
from the schema table and the catalog, the same sources the checker and `docs/keys.md` read.

A topic is a key by name (`max_model_len`, every block that has one) or by dotted path
(`serve.port`, `target.slurm.partition`), a block (`serve`, `target`, `target slurm`), a target
kind (`slurm`), an accelerator (`b200`), a model (`muse-spark-open`) or a checkpoint (`nvfp4`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct

from spark_dsl import catalog
from spark_dsl.keys_reference import launching, used_by, values_text
from spark_dsl.schema import BlockSpec, KeySpec, deployment_schema

if TYPE_CHECKING:
    from spark_dsl.diagnostics import DiagnosticSink
    from spark_dsl.loader import Loader
    from spark_dsl.model_schema import DeclaredModel
    from spark_dsl.values import Setting


class Topic(Struct, frozen=True):
    """One explained thing: a title, then (label, text) rows."""

    title: str
    rows: tuple[tuple[str, str], ...]
    # (fact, where it comes from), listed under the rows: a shipped model's sources.
    sources: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        width = max((len(label) for label, _ in self.rows), default=0)
        lines = [self.title, *(f"  {label + ':':<{width + 1}} {value}" for label, value in self.rows)]
        if self.sources:
            lines += ["  sources:", *(f"    {fact}: {source}" for fact, source in self.sources)]
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", *(f"- **{label}**: {value}" for label, value in self.rows)]
        if self.sources:
            lines += ["- **sources**:", *(f"  - {fact}: {source}" for fact, source in self.sources)]
        return "\n".join(lines) + "\n"


def _blocks(block: BlockSpec, path: str = "") -> Iterator[tuple[str, BlockSpec]]:
    """Every block with its dotted path (`serve`, `target.slurm`, `disaggregation.decode`)."""
    children = list(block.blocks.items()) + list((block.labels or {}).items())
    for name, child in children:
        child_path = f"{path}.{name}" if path else name
        yield child_path, child
        yield from _blocks(child, child_path)


def _keys() -> Iterator[tuple[str, KeySpec]]:
    schema = deployment_schema()
    for name, spec in schema.keys.items():
        yield name, spec
    for path, block in _blocks(schema):
        for name, spec in block.keys.items():
            yield f"{path}.{name}", spec


def _key_topic(path: str, spec: KeySpec) -> Topic:
    use = used_by(path)
    if use is None:
        targets = "—"
    elif not use.targets:
        targets = f"no output ({use.how})" if use.how else "no output"
    else:
        listed = "every target" if use.targets == launching() else ", ".join(use.targets)
        targets = f"{listed}: {use.how}" if use.how else listed
    rows = [("what", spec.doc), ("type", spec.kind.value)]
    values = values_text(spec)
    if values:
        rows.append(("values", values.replace("`", "")))
    rows += [("default", spec.default.replace("`", "") or "—"), ("changes", targets.replace("`", ""))]
    return Topic(f"key `{_written(path)}`", tuple(rows))


def _written(path: str) -> str:
    """A dotted path as a spec writes it: `target.slurm.time` is `target slurm { time }`."""
    parts = path.split(".")
    if len(parts) == 1:
        return path
    if parts[0] == "target" and len(parts) > 1:
        parts = [f"target {parts[1]}", *parts[2:]]
    return " { ".join(parts) + " }" * (len(parts) - 1)


def _block_topic(path: str, block: BlockSpec) -> Topic:
    rows = [("what", block.doc)]
    if block.labels is not None:
        rows.append(("kinds", ", ".join(block.labels)))
    names = [*block.keys, *block.blocks]
    if names:
        rows.append(("keys", ", ".join(names)))
    if block.map_of is not None:
        rows.append(("holds", f"NAME = value lines; values are {block.map_of.value}s"))
    return Topic(f"block `{_written(path)}`", tuple(rows))


def _accelerator_topic(acc: catalog.Accelerator) -> Topic:
    """The accelerator's own facts with their sources, what any model gets on it, and, in a row
    of its own, what the recipe's model gets: the recipe's defaults and validation are not every model's."""
    cat = catalog.load()
    fp4 = ", ".join(c.upper() for c in cat.fp4_checkpoints())
    # The weight formats gated by the accelerator's flag of the same name, as SPK225 reads them.
    fp8 = ", ".join(f.upper() for f in catalog.weight_formats() if f in catalog.Accelerator.__struct_fields__)
    rows = [
        ("name", acc.display_name),
        ("vendor", f"{acc.vendor.upper()} ({acc.generation})"),
        ("node", _node(acc)),
        (fp8, f"yes: {fp8} checkpoints run" if acc.fp8 else f"no: {fp8} checkpoints cannot run (SPK225)"),
        ("FP4", f"yes: {fp4} checkpoints run" if acc.fp4 else f"no: {fp4} checkpoints cannot run (SPK225)"),
    ]
    if acc.weight_formats is not None:
        rows.append(("weights", f"{', '.join(acc.weight_formats)} only (SPK234)"))
    if not acc.speculative_decoding:
        rows.append(("speculative", "no draft model runs here (SPK235)"))
    rows += [
        ("image", cat.image(acc.vendor)),
        ("other models", "its first checkpoint unless `checkpoint` says, parallel = tp (docs/models.md)"),
        (cat.recipe.model, _recipe_row(acc)),
    ]
    if acc.note:
        rows.append(("note", acc.note))
    return Topic(f"accelerator `{acc.id}`", tuple(rows), tuple(acc.sources.items()))


def _node(acc: catalog.Accelerator) -> str:
    if acc.memory_gb is None:  # vLLM's CPU backend: the ranks share the host's memory
        return f"{acc.gpus_per_node} rank by default (`gpus`), sharing the host memory `runtime.host_memory` gives"
    return f"{acc.gpus_per_node} GPUs with {acc.memory_gb:g} GB each"


def _recipe_row(acc: catalog.Accelerator) -> str:
    """What the recipe's model gets on the accelerator: its vendor path's defaults where the recipe
    validates it, else SPK201 and no default checkpoint (SPK118)."""
    if not catalog.load().has_path(acc.vendor):
        return "its recipe has no path here: an error unless `allow_unvalidated = true` (SPK201); a model's defaults"
    defaults = catalog.load().path_defaults(acc.vendor)
    parallel = defaults.parallel.replace("+", " + ")
    if acc.validated:
        return f"validated by its recipe: checkpoint = {defaults.checkpoint}, parallel = {parallel}"
    return (
        f"its recipe does not validate {acc.display_name.split()[-1]}: an error unless `allow_unvalidated = true` "
        f"(SPK201); no default checkpoint (SPK118); parallel = {parallel}"
    )


def _model_topic(model: catalog.Model) -> Topic:
    # Muse Spark Open's facts are the recipe's (the catalog cites no page for them).
    sources = tuple(model.sources.items()) or (("every fact", "the recipe (spark_dsl/catalog/models.yaml)"),)
    return Topic(f"model `{model.id}`", _model_rows(model), sources)


def _model_rows(model: catalog.Model) -> tuple[tuple[str, str], ...]:
    arch = model.architecture
    checkpoints = ", ".join(f"{c.id} ({c.weights_gb:g} GB)" for c in model.checkpoints.values())
    draft = model.draft
    window = (
        f"{arch.sliding_window:,} tokens on {arch.sliding_window_layers} of {arch.layers} layers"
        if arch.sliding_window_layers
        else "none"
    )
    rows = [("name", model.display_name)]
    # A declaration without `parameters` has 0 (`to_catalog_model`): no row makes one up.
    if model.total_params_b:
        rows.append(("parameters", f"{model.total_params_b:g}B total, {model.active_params_b:g}B active ({arch.kind})"))
    return (
        *rows,
        ("context", f"up to {model.max_context:,} tokens"),
        ("modalities", ", ".join(model.modalities)),
        ("layers", f"{arch.layers} layers, hidden size {arch.hidden_size:,}"),
        ("attention", _attention_row(arch)),
        ("sliding window", window),
        *_local_attention_rows(arch),
        (
            "experts",
            f"{arch.routed_experts} routed, {arch.experts_per_token} per token (SPK220)"
            if arch.routed_experts
            else "none (dense: no `ep`, SPK227)",
        ),
        ("checkpoints", checkpoints),
        ("draft", "none" if draft is None else f"{draft.name} ({draft.weights_gb:g} GB), {draft.repository}"),
    )


def _attention_row(arch: catalog.Architecture) -> str:
    if arch.mla:
        return (
            f"{arch.query_heads} query heads, multi-head latent attention: one latent of "
            f"{arch.kv_lora_rank} + {arch.qk_rope_head_dim} per token per layer, whole on every "
            "tensor-parallel rank; tensor parallelism must divide the query heads (SPK223)"
        )
    return (
        f"{arch.query_heads} query heads, {arch.kv_heads} KV heads of {arch.head_dim}: tensor "
        "parallelism must divide the query heads (SPK223) and divide or be a multiple of the KV "
        "heads (SPK219)"
    )


def _local_attention_rows(arch: catalog.Architecture) -> tuple[tuple[str, str], ...]:
    """Chunked local attention and attention sinks, for the models that have them."""
    rows = []
    if arch.chunked_attention_layers:
        chunks = f"{arch.attention_chunk_size:,}-token chunks"
        rows.append(("chunked attention", f"{chunks} on {arch.chunked_attention_layers} of {arch.layers} layers"))
    if arch.attention_sinks:
        rows.append(("attention sinks", "one learned logit per query head per layer (no KV-cache bytes)"))
    return tuple(rows)


def _checkpoint_topic(name: str) -> Topic:
    cat = catalog.load()
    validated = [path.upper() for path, ids in cat.recipe.validated_checkpoints.items() if name in ids]
    rows: list[tuple[str, str]] = []
    for model in cat.models.values():
        ckpt = model.checkpoints.get(name)
        if ckpt is not None:
            converts = f", converted from {ckpt.converts_from} while loading" if ckpt.converts_from else ""
            rows.append((model.id, f"{ckpt.repository}, {ckpt.weights_gb:g} GB of weights{converts}"))
    rows.append(("validated on", ", ".join(validated) or "no path"))
    if cat.needs_fp4(name):
        rows.append(("needs", "an accelerator with FP4 (Blackwell)"))
    return Topic(f"checkpoint `{name}`", tuple(rows))


def find(name: str) -> list[Topic]:
    """Every topic the name stands for (a key name may be a key of several blocks)."""
    wanted = name.strip()
    spaced = wanted.replace(" ", ".")
    cat = catalog.load()
    found: list[Topic] = []
    found += [_key_topic(path, spec) for path, spec in _keys() if spaced in (path, path.rsplit(".", 1)[-1])]
    blocks = _blocks(deployment_schema())
    found += [_block_topic(path, block) for path, block in blocks if spaced in (path, path.rsplit(".", 1)[-1])]
    lowered = wanted.lower()
    if lowered in cat.accelerators:
        found.append(_accelerator_topic(cat.accelerators[lowered]))
    if lowered in cat.models:
        found.append(_model_topic(cat.models[lowered]))
    if any(lowered in m.checkpoints for m in cat.models.values()):
        found.append(_checkpoint_topic(lowered))
    return found


def names() -> list[str]:
    """Every name `find` knows, for did-you-mean."""
    cat = catalog.load()
    keys = [path for path, _ in _keys()] + [path.rsplit(".", 1)[-1] for path, _ in _keys()]
    blocks = [path for path, _ in _blocks(deployment_schema())]
    checkpoints = [c for m in cat.models.values() for c in m.checkpoints]
    return sorted(set(keys + blocks + list(cat.accelerators) + list(cat.models) + checkpoints))


class Declared(Struct):
    """The models declared in a run's `.spark` files and their imports, by name, each once."""

    models: dict[str, list[tuple[DeclaredModel, Loader]]]
    sink: DiagnosticSink

    def topics(self, name: str) -> list[Topic]:
        """Each model called `name`, with the file and line of every fact it writes."""
        return [_declared_topic(decl, loader, self.sink) for decl, loader in self.models.get(name, ())]


def declared(paths: tuple[str, ...], strict: bool = True) -> Declared:
    """The models declared under `paths` (files or folders, searched as `spark check` searches
    them). A path `spark check` would refuse is an ExplainUsageError when `strict`, else no model."""
    from spark_dsl.diagnostics import DiagnosticSink
    from spark_dsl.loader import Loader
    from spark_dsl.pipeline import UsageError, collect_paths
    from spark_dsl.project import Projects

    projects = Projects()
    sink = DiagnosticSink()
    try:
        files = collect_paths(list(paths), projects, [])
    except UsageError as err:
        if strict:
            raise ExplainUsageError(str(err)) from None
        return Declared({}, sink)
    loaders: dict[Path, Loader] = {}
    seen: dict[tuple[Path, int], tuple[DeclaredModel, Loader]] = {}
    for path in files:
        root = projects.of(path).root
        loader = loaders.get(root) or loaders.setdefault(root, Loader(root, sink, resolve=projects.resolved))
        source = loader.source(path)
        for decl in () if source is None else loader.model_scope(source).values():
            seen.setdefault((decl.source.path, decl.node.name.span.start), (decl, loader))
    models: dict[str, list[tuple[DeclaredModel, Loader]]] = {}
    for decl, loader in seen.values():
        models.setdefault(decl.node.name.name, []).append((decl, loader))
    return Declared(models, sink)


def _default_search() -> tuple[tuple[str, ...], str]:
    """Where a declared model is looked for by default, and how the message names it: the current
    folder's project (spark.toml, [tool.spark] or .git above it), as `spark check` reads it. With
    no such marker, only the current folder's own specs (and their imports): such a folder may be
    a home folder or `/`, and a mistyped name must not read every spec below it."""
    from spark_dsl.files import display
    from spark_dsl.project import BY_OWN_FOLDER, Projects

    try:
        cwd = Path.cwd()
    except OSError:  # the current folder was removed: there is nothing of its own to read
        return (), ". (the current folder no longer exists)"
    project = Projects().of(cwd)
    if project.found_by != BY_OWN_FOLDER:
        root = display(project.root)
        return (root,), root
    own = tuple(sorted(p.name for p in cwd.glob("*.spark") if p.is_file()))
    return own, ". (no spark.toml, [tool.spark] or .git above it: its own files only)"


def _declared_topic(decl: DeclaredModel, loader: Loader, sink: DiagnosticSink) -> Topic:
    from spark_dsl.model_schema import to_catalog_model

    name, source = decl.node.name.name, decl.source
    where = f"{source.name}:{source.index.position(decl.node.name.span.start)[0]}"
    body = loader.checked_model(decl)
    if body is None:
        first = next((d for d in sink.items if d.location is not None and d.location.file == source.name), None)
        said = f", the first {first.code}: {first.message}" if first is not None else ""
        raise ExplainUsageError(f"model `{name}` ({where}) has errors{said} (`spark check {source.name}` lists them)")

    def line(setting: Setting) -> str:
        return f"{source.name}:{source.index.position(setting.origin.span.start)[0]}"

    sources = [(key, line(s)) for key, s in body.settings.items()]
    for (kind, label), block in body.blocks.items():
        prefix = f"checkpoints.{label}" if kind == "checkpoint" else kind
        sources += [(f"{prefix}.{key}", line(s)) for key, s in block.settings.items()]
    rows = (("declared", where), *_model_rows(to_catalog_model(name, body)))
    return Topic(f"model `{name}`", rows, tuple(sources))


def topics_footer() -> str:
    """The line under the code listing that says what else `spark explain` takes."""
    accelerator, model, checkpoint = catalog.load().examples()
    return (
        "spark explain CODE explains a code; spark explain NAME explains a key (max_model_len, serve.port), "
        f"a block (serve, target slurm), an accelerator ({accelerator}), a model ({model}) "
        f"or a checkpoint ({checkpoint})\n"
    )


class ExplainUsageError(Exception):
    """`spark explain` was given something it does not know: exit 2."""


def explain(topic: str | None, markdown: bool, list_codes: bool, specs: tuple[str, ...] = ()) -> str:
    """What `spark explain [TOPIC]` prints: every code, one code, or the topics a name stands for.

    A name no schema or catalog topic has is looked for among the models declared in the specs
    under `specs` (default: the current folder's project root); `specs` given, they are searched
    in any case."""
    import re
    from difflib import get_close_matches

    from spark_dsl.codes import close_codes, listing, lookup

    if topic is not None and list_codes:
        raise ExplainUsageError("give a code or name, or --list, not both")
    if topic is None:
        return listing() + "\n" + topics_footer()
    doc = lookup(topic)
    if doc is not None:
        return doc.markdown() if markdown else doc.text()
    if re.fullmatch(r"(?i)spk\d*", topic.strip()):
        close = close_codes(topic)
        hint = f"; close codes: {', '.join(close)}" if close else ""
        # Self-contained: an installed spark-dsl has no docs/ folder to point at.
        raise ExplainUsageError(f"unknown diagnostic code {topic!r}{hint} (`spark explain` lists every code)")
    found = find(topic)
    # The specs are read only when they are asked for, or the name is no shipped topic.
    where, shown = (specs, ", ".join(specs)) if specs else _default_search() if not found else ((), "")
    models = declared(where, strict=bool(specs)) if specs or (not found and where) else None
    if models is not None:
        found += models.topics(topic.strip())
    if not found:
        known = names() + sorted(models.models if models is not None else ())
        close = get_close_matches(topic.strip().lower(), known, n=3, cutoff=0.8)
        hint = f"; did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else ""
        raise ExplainUsageError(
            f"{topic!r} is not a diagnostic code, key, block, accelerator, model or checkpoint, "
            f"or a model declared in the specs under {shown}{hint} (`spark explain` lists every code)"
        )
    return "\n".join(t.markdown() if markdown else t.text() for t in found)
