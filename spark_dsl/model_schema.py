"""A declared model's body (`model NAME { ... }`): its schema table, the facts it must give, and
the catalog `Model` the plan reads, so a declared model and a shipped one are the same shape.

The body's keys are typed and ranged by the type checker like a deployment's (SPK1xx); what the
table alone cannot say (a fact left out, facts that contradict each other) is SPK126 and SPK127
here. docs/models.md describes the block.
"""

from __future__ import annotations

from functools import cache
from math import gcd
from typing import TYPE_CHECKING

from msgspec import Struct

from spark_dsl import catalog
from spark_dsl.diagnostics import DiagnosticSink, Fix, replacement
from spark_dsl.schema import MODALITIES, BlockSpec, KeySpec, Kind, lookup_block
from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.values import TypedBody

if TYPE_CHECKING:
    from spark_dsl.loader import SourceFile

# Decimal gigabytes, as the catalog's `weights_gb`.
GB = 1_000_000_000
# vLLM's `--speculative-config` methods a draft may name (vLLM's SpeculativeConfig docs).
DRAFT_METHODS = ("eagle", "eagle3", "mtp", "medusa", "mlp_speculator", "draft_model", "dspark")
# Facts every declared model gives, with the example its help line writes.
REQUIRED = (
    ("layers", "32"),
    ("hidden_size", "4096"),
    ("query_heads", "32"),
    ("kv_heads", "8"),
    ("head_dim", "128"),
    ("max_context", "128k"),
)
CHECKPOINT_REQUIRED = (("repository", '"org/name"'), ("size", "16GB"))


def checkpoint_dtypes() -> tuple[str, ...]:
    """The weight formats a checkpoint may have: the catalog's `WeightFormat`, one list for
    shipped and declared models."""
    return catalog.weight_formats()


@cache
def fp4_dtypes() -> frozenset[str]:
    """The weight formats that need FP4 hardware: those of the shipped checkpoints marked `needs_fp4`."""
    cat = catalog.load()
    return frozenset(c.dtype for m in cat.models.values() for c in m.checkpoints.values() if c.needs_fp4)


# The attention kinds besides KV heads and sliding windows (docs/models.md, "KV cache").
ATTENTION_KEYS = (
    KeySpec(
        "chunked_attention_layers",
        Kind.INTEGER,
        "layers with chunked local attention (Llama 4; not a sliding window)",
        minimum=0,
        fallback=0,
    ),
    KeySpec("attention_chunk_size", Kind.COUNT, "tokens of one chunk of a chunked-attention layer", minimum=1),
    KeySpec("kv_lora_rank", Kind.INTEGER, "multi-head latent attention (MLA): width of the cached latent", minimum=1),
    KeySpec("qk_rope_head_dim", Kind.INTEGER, "MLA: rotary dimensions cached beside the latent", minimum=1),
    KeySpec("attention_sinks", Kind.BOOL, "learned attention sinks (weights; no KV-cache bytes)", fallback=False),
)


def _count(name: str, doc: str, minimum: int = 1, fallback: int | None = None) -> KeySpec:
    return KeySpec(name, Kind.INTEGER, doc, minimum=minimum, fallback=fallback, default="" if fallback else "required")


@cache
def model_schema() -> BlockSpec:
    """The body of `model NAME { }`."""
    dtypes = checkpoint_dtypes()
    checkpoint = BlockSpec(
        "checkpoint",
        "one checkpoint of the model; the label is its weight format",
        keys={
            k.name: k
            for k in (
                KeySpec("dtype", Kind.SYMBOL, "weight format", symbols=dtypes, default="the block's label"),
                KeySpec("repository", Kind.STRING, "Hugging Face repository of the weights", default="required"),
                KeySpec("size", Kind.SIZE, "bytes of the weights", default="required"),
            )
        },
    )
    draft = BlockSpec(
        "draft",
        "the speculative draft model",
        keys={
            k.name: k
            for k in (
                KeySpec("method", Kind.SYMBOL, "vLLM's speculative method", symbols=DRAFT_METHODS, default="required"),
                KeySpec("repository", Kind.STRING, "Hugging Face repository of the draft", default="required"),
                KeySpec("size", Kind.SIZE, "bytes of the draft's weights", default="required"),
                KeySpec("tokens", Kind.INTEGER, "speculative tokens per step", minimum=1, maximum=64, fallback=3),
            )
        },
    )
    keys = (
        KeySpec("display_name", Kind.STRING, "the name messages show", default="the model's name"),
        _count("layers", "decoder layers"),
        _count("hidden_size", "hidden size"),
        _count("query_heads", "attention (query) heads"),
        _count("kv_heads", "key/value heads"),
        _count("head_dim", "dimension of one head"),
        KeySpec("sliding_window_layers", Kind.INTEGER, "layers with a sliding window", minimum=0, fallback=0),
        KeySpec("sliding_window", Kind.COUNT, "tokens a sliding-window layer keeps", minimum=1),
        *ATTENTION_KEYS,
        KeySpec("experts", Kind.INTEGER, "routed experts (0: dense)", minimum=0, fallback=0),
        KeySpec("experts_per_token", Kind.INTEGER, "routed experts active per token", minimum=1),
        KeySpec("max_context", Kind.COUNT, "longest context the model supports", default="required", minimum=1),
        KeySpec("modalities", Kind.SYMBOL_LIST, "input modalities", symbols=MODALITIES, fallback=("text",)),
        KeySpec("parameters", Kind.COUNT, "parameters of the model (shown by `spark explain`)", minimum=1),
        KeySpec(
            "active_parameters", Kind.COUNT, "parameters a token uses (routed experts it skips left out)", minimum=1
        ),
    )
    return BlockSpec(
        "model",
        "a model declared in the language",
        keys={k.name: k for k in keys},
        blocks={
            "checkpoint": BlockSpec("checkpoint", checkpoint.doc, labels=dict.fromkeys(dtypes, checkpoint)),
            "draft": draft,
        },
    )


# The first part of a schema path inside a `model` body: not a name a block can have, so the
# editor's paths tell a model's body from a deployment's (`lookup`).
MODEL_ROOT = "@model"


def lookup(path: tuple[str, ...]) -> BlockSpec | None:
    """The schema of a nested body: in a model declaration when the path starts at MODEL_ROOT,
    else in a deployment (`schema.lookup_block`)."""
    if path[:1] != (MODEL_ROOT,):
        return lookup_block(path)
    spec: BlockSpec | None = model_schema()
    for part in path[1:]:
        if spec is None:
            return None
        spec = spec.labels.get(part) if spec.labels is not None else spec.blocks.get(part)
    return spec


class DeclaredModel(Struct):
    """A `model` declaration, its file, and its checked body (None until checked, or if it is not sound)."""

    node: ast.ModelDecl
    source: SourceFile
    typed: TypedBody | None = None
    checked: bool = False


class FactCheck:
    """SPK126 (a fact left out) and SPK127 (facts that contradict each other) for one declaration."""

    def __init__(self, decl: DeclaredModel, body: TypedBody, sink: DiagnosticSink) -> None:
        self.decl, self.body, self.sink = decl, body, sink
        self.sound = True

    def run(self) -> bool:
        node = self.decl.node
        for key, example in REQUIRED:
            self._required(self.body, key, example, node.body, f"model `{node.name.name}`", node.name.span)
        checkpoints = self.body.labelled("checkpoint")
        if not checkpoints and "checkpoint" not in self.body.invalid:
            self._contradiction(
                f"model `{node.name.name}` declares no checkpoint",
                node.name.span,
                f'add a block `checkpoint {checkpoint_dtypes()[0]} {{ repository = "org/name"  size = 16GB }}`: '
                "a deployment serves one of the model's checkpoints",
            )
        for label, ckpt in checkpoints.items():
            block = _block(node.body, "checkpoint", label)
            for key, example in CHECKPOINT_REQUIRED:
                label_span = block.label.span if block.label else block.kind.span
                self._required(ckpt, key, example, block.body, f"checkpoint `{label}`", label_span)
            dtype = ckpt.get("dtype")
            if dtype is not None and dtype.value != label:
                help = f"write `dtype = {label}` or leave it out: a checkpoint's label is its weight format"
                fix = replacement(help, self.decl.source.name, dtype.origin.span, label)
                self._contradiction(f"checkpoint `{label}` has dtype `{dtype.value}`", dtype.origin.span, help, fix)
        draft = self.body.block("draft")
        if draft is not None:
            block = _block(node.body, "draft", None)
            for key, example in (("method", "eagle3"), *CHECKPOINT_REQUIRED):
                self._required(draft, key, example, block.body, "the draft", block.kind.span)
        self._shape()
        return self.sound

    def _shape(self) -> None:
        """The architecture facts against each other."""
        v, invalid = self.body.value, self.body.invalid
        layers, sliding = v("layers"), v("sliding_window_layers", 0)
        if layers is not None and sliding > layers:
            message = f"`sliding_window_layers = {sliding}` exceeds the model's {layers} layers"
            self._fact("sliding_window_layers", message, f"write `sliding_window_layers = {layers}` at most", layers)
        if sliding > 0 and v("sliding_window") is None and "sliding_window" not in invalid:
            message = f"`sliding_window_layers = {sliding}` but no `sliding_window`"
            self._added("sliding_window_layers", message, "sliding_window", "4096", "the tokens such a layer keeps")
        self._local_attention()
        query, kv = v("query_heads"), v("kv_heads")
        if query is not None and kv is not None and (kv > query or query % kv):
            # The largest divisor of a head count up to a few thousand; past that (a hostile value,
            # up to 2**53) the greatest common divisor, found without factoring.
            small = range(1, min(kv, query) + 1) if query <= 4096 else ()
            fitting = max((d for d in small if not query % d), default=gcd(kv, query))
            message = f"`kv_heads = {kv}` does not divide `query_heads = {query}`"
            help = f"write `kv_heads = {fitting}` (a divisor of {query}) or the model's own value"
            self._fact("kv_heads", message, help, fitting)
        experts, per_token = v("experts", 0), v("experts_per_token")
        if experts > 0 and per_token is None and "experts_per_token" not in invalid:
            message = f"`experts = {experts}` but no `experts_per_token`"
            self._added("experts", message, "experts_per_token", str(min(8, experts)), "the experts each token uses")
        if per_token is not None and per_token > experts:
            message = f"`experts_per_token = {per_token}` exceeds `experts = {experts}`"
            if experts:
                self._fact("experts_per_token", message, f"write `experts_per_token = {experts}` at most", experts)
            else:
                self._removed("experts_per_token", message, "a dense model has no experts: remove it")

    def _local_attention(self) -> None:
        """Chunked layers with their chunk, within the layers the windows leave; the two facts of
        multi-head latent attention together."""
        v, invalid = self.body.value, self.body.invalid
        layers, sliding, chunked = v("layers"), v("sliding_window_layers", 0), v("chunked_attention_layers", 0)
        if layers is not None and chunked and sliding + chunked > layers:
            most = max(layers - sliding, 0)
            message = f"`chunked_attention_layers = {chunked}` + {sliding} windowed layers exceed {layers} layers"
            self._fact("chunked_attention_layers", message, f"write `chunked_attention_layers = {most}` at most", most)
        if chunked > 0 and v("attention_chunk_size") is None and "attention_chunk_size" not in invalid:
            message = f"`chunked_attention_layers = {chunked}` but no `attention_chunk_size`"
            self._added("chunked_attention_layers", message, "attention_chunk_size", "8192", "the tokens of a chunk")
        pairs = (("kv_lora_rank", "qk_rope_head_dim", "64"), ("qk_rope_head_dim", "kv_lora_rank", "512"))
        for given, missing, example in pairs:
            if v(given) is not None and v(missing) is None and missing not in invalid:
                message = f"`{given}` without `{missing}`: multi-head latent attention caches both"
                self._added(given, message, missing, example, "from the model's config.json")

    def _fact(self, key: str, message: str, help: str, value: int) -> None:
        """SPK127 at `key`'s value, fixed by writing `value` there."""
        origin = self.body.settings[key].origin
        fix = replacement(help, self.decl.source.name, origin.span, str(value))
        self._contradiction(message, origin.span, help, fix)

    def _added(self, key: str, message: str, missing: str, example: str, what: str) -> None:
        """SPK127 at `key`'s value, fixed by adding `missing = example` to the model."""
        from spark_dsl.edits import add_setting

        help = f"add `{missing} = {example}`, {what}"
        fix = add_setting(help, self.decl.source, self.decl.node.body, missing, example)
        self._contradiction(message, self.body.settings[key].origin.span, help, fix)

    def _removed(self, key: str, message: str, help: str) -> None:
        from spark_dsl.edits import remove_entry

        span = self.body.settings[key].origin.span
        self._contradiction(message, span, help, remove_entry(help, self.decl.source, span))

    def _contradiction(self, message: str, span: Span, help: str, fix: Fix | None = None) -> None:
        self.sound = False
        fixes = (fix,) if fix is not None else ()
        self.sink.error("SPK127", message, self.decl.source.name, span, help=help, fixes=fixes)

    def _required(self, body: TypedBody, key: str, example: str, node_body: ast.Body, what: str, span: Span) -> None:
        if body.get(key) is not None or key in body.invalid:
            return
        from spark_dsl.edits import add_setting

        self.sound = False
        self.sink.error(
            "SPK126",
            f"{what} has no `{key}`",
            self.decl.source.name,
            span,
            help=f"add `{key} = {example}` with the model's own value (its config.json has it)",
            fixes=(add_setting(f"add `{key} = {example}`", self.decl.source, node_body, key, example),),
        )


def _block(body: ast.Body, kind: str, label: str | None) -> ast.Block:
    return next(
        e
        for e in body.entries
        if isinstance(e, ast.Block) and e.kind.name == kind and (e.label.name if e.label else None) == label
    )


def to_catalog_model(name: str, body: TypedBody) -> catalog.Model:
    """The declared model as the catalog's `Model`: what the plan, rules and launches read."""
    v = body.value
    layers, sliding = v("layers"), v("sliding_window_layers", 0)
    experts = v("experts", 0)
    architecture = catalog.Architecture(
        kind="sparse-moe" if experts else "dense",
        layers=layers,
        hidden_size=v("hidden_size"),
        query_heads=v("query_heads"),
        kv_heads=v("kv_heads"),
        head_dim=v("head_dim"),
        full_attention_layers=layers - sliding - v("chunked_attention_layers", 0),
        sliding_window_layers=sliding,
        sliding_window=v("sliding_window", 0),
        routed_experts=experts,
        experts_per_token=v("experts_per_token", 0),
        kv_lora_rank=v("kv_lora_rank", 0),
        qk_rope_head_dim=v("qk_rope_head_dim", 0),
        chunked_attention_layers=v("chunked_attention_layers", 0),
        attention_chunk_size=v("attention_chunk_size", 0),
        attention_sinks=v("attention_sinks", False),
    )
    checkpoints = {
        label: catalog.Checkpoint(
            id=label,
            repository=ckpt.value("repository"),
            weights_gb=ckpt.value("size") / GB,
            # The spec names the repository it serves; nothing is left to confirm.
            confirmed=True,
            dtype=ckpt.value("dtype", label),
            needs_fp4=ckpt.value("dtype", label) in fp4_dtypes(),
        )
        for label, ckpt in body.labelled("checkpoint").items()
    }
    draft_body = body.block("draft")
    draft = None
    if draft_body is not None:
        draft = catalog.DraftModel(
            name=draft_body.value("repository").rsplit("/", 1)[-1],
            method=draft_body.value("method"),
            repository=draft_body.value("repository"),
            weights_gb=draft_body.value("size") / GB,
            num_speculative_tokens=draft_body.value("tokens", 3),
        )
    return catalog.Model(
        id=name,
        display_name=v("display_name", name),
        # The counts a declaration states (`spark model import` writes them), in billions as the
        # catalog's; 0 where it states none, which `spark explain` then does not show.
        total_params_b=v("parameters", 0) / GB,
        active_params_b=v("active_parameters", v("parameters", 0)) / GB,
        architecture=architecture,
        max_context=v("max_context"),
        modalities=tuple(v("modalities", ("text",))),
        checkpoints=checkpoints,
        draft=draft,
    )
